#pragma once

// Recorders observe states during a run and write outputs: CSV of chosen nodes and energies,
// VTK PolyData with a .pvd series for ParaView. Files are written whole (temporary name, then
// rename), so a run that stops never leaves a half-written file behind: end() completes what
// was recorded (a step that failed, an interrupt), abort() removes what is unfinished (an
// error while writing).

#include <cstdint>
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
  /// the controllers' values (StrainController::csv_row), when the run records them
  std::vector<Real> controller_values;
};

/// How far one of a recorder's files had been written at some step: its name relative to the
/// output folder and a count (bytes of a file, or frames of a series). A checkpoint keeps the
/// marks of its step, so that a run resumed into the same folder continues the files exactly
/// where that step left them.
struct OutputMark {
  std::string name;
  std::uint64_t count = 0;
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  /// the paths it will write in out_dir (for the run's check of them before the first step)
  virtual std::vector<std::string> outputs(const Model& m, const std::string& out_dir) const = 0;
  virtual void begin(const Model& m, const std::string& out_dir) = 0;
  /// instead of begin(): continues the files that an earlier run of the same scene left in
  /// out_dir (under their final or their temporary name), cut back to `marks` (a checkpoint's),
  /// and removes what that run wrote after them. Throws Error naming the file when one is
  /// missing, shorter than its mark, begins otherwise than this recorder's file would, or has
  /// no mark
  virtual void resume(const Model& m,
                      const std::string& out_dir,
                      const std::vector<OutputMark>& marks) = 0;
  virtual void record(const RecordFrame& f) = 0;
  /// how far its files have been written (after the last record)
  virtual std::vector<OutputMark> marks() const = 0;
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
/// controllers.csv: time, then one column per name in `columns` (StrainController::csv_columns:
/// per controller its RMS error, each spring's command and error), the values from
/// RecordFrame::controller_values
std::unique_ptr<Recorder> make_controller_csv_recorder(std::vector<std::string> columns);
/// frames/NAME_NNNNNN.vtp per record plus NAME.pvd (its lines written as the frames come, the
/// closing ones by end()): rods as polylines with radius, velocity,
/// curvature and twist as point data
std::unique_ptr<Recorder> make_vtk_recorder(const std::string& name);

/// `path` (a .usda file, USD ASCII; docs/usd.md) holding every record as time samples: one prim
/// per part under a root Xform named after the scene, rods as BasisCurves (linear, widths = 2 x
/// radius), shells as Mesh (vertex normals); points, velocities, extents and the primvars
/// speed, curvature, twist, twist_angle (rods) and bending_energy_density (shells, per face)
/// time-sampled. One time code per `frame_interval` [s] (the output cadence times dt);
/// metersPerUnit 1, upAxis Y where gravity acts mostly along y, else Z. The records are spooled
/// to PATH.samples.part and the text is written by end(), whole (PATH.part, renamed).
std::unique_ptr<Recorder> make_usd_recorder(const std::string& path, Real frame_interval);

/// What export_usd reads besides the run's frames.
struct UsdExportOptions {
  std::string out;    ///< the .usda to write; "" = NAME.usda beside the run's NAME.pvd
  std::string scene;  ///< the run's scene file: its parts' names and gravity; "" = none (parts
                      ///< named part_INDEX, up axis Z)
  char up_axis = 0;   ///< 'Y' or 'Z'; 0 = from the scene's gravity (Z without a scene)
};

struct UsdExportResult {
  std::string path;          ///< the file written
  std::uint64_t frames = 0;  ///< records (time samples) in it
};

/// Converts a run's VTK series (the .pvd in the folder `run`, or `run` itself when it names a
/// .pvd) into one .usda, as the recorder of make_usd_recorder would write it, with one time
/// code per median spacing of the frames' times. Throws InputError naming the file, line and
/// array for a folder without a series (no frames to export), a series that lists none, or a
/// frame that cannot be read or whose points and cells differ from the first's; Error when the
/// output cannot be written (then no unfinished file stays).
UsdExportResult export_usd(const std::string& run, const UsdExportOptions& opt = {});

}  // namespace slender
