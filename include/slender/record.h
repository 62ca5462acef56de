#pragma once

// Recorders observe states during a run and write outputs: CSV of chosen nodes and energies,
// VTK PolyData with a .pvd series for ParaView. Files are written whole (temporary name, then
// rename), so a run that stops never leaves a half-written file behind: end() completes what
// was recorded (a step that failed, an interrupt), abort() removes what is unfinished (an
// error while writing).

#include <memory>
#include <string>
#include <vector>

#include "slender/simulator.h"

namespace slender {

/// What a recorder sees at one recorded step.
struct RecordFrame {
  long step = 0;
  Real time = 0;
  const Model* model = nullptr;
  const State* state = nullptr;
  Energies energies;
  std::vector<Real> bend_strains;          ///< (nbend x 3): kappa1, kappa2, tau
  std::vector<Real> shell_energy_density;  ///< bending energy per area (ntri) [J/m^2]
  int newton_iters = 0;                    ///< of the step that led here
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  /// the paths it will write in out_dir (for the run's check of them before the first step)
  virtual std::vector<std::string> outputs(const Model& m, const std::string& out_dir) const = 0;
  virtual void begin(const Model& m, const std::string& out_dir) = 0;
  virtual void record(const RecordFrame& f) = 0;
  /// closes files; returns the paths written, for the summary
  virtual std::vector<std::string> end() = 0;
  /// after an error: closes and removes every unfinished (temporary) file; never throws
  virtual void abort() noexcept = 0;
};

/// nodes.csv: time, then x, y, z, vx, vy, vz of each chosen global node, in columns
/// LABEL_x, ..., LABEL_vz (labels: one per node, as the run names them, PART_nINDEX; empty:
/// nGLOBAL)
std::unique_ptr<Recorder> make_node_csv_recorder(std::vector<int> nodes,
                                                 std::vector<std::string> labels = {});
/// energies.csv: time, kinetic, stretch, bend, twist, gravity, total, newton_iters
std::unique_ptr<Recorder> make_energy_csv_recorder();
/// frames/NAME_NNNNNN.vtp per record plus NAME.pvd: rods as polylines with radius, velocity,
/// curvature and twist as point data
std::unique_ptr<Recorder> make_vtk_recorder(const std::string& name);

}  // namespace slender
