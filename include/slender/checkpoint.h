#pragma once

// Checkpoints: a simulator's whole state in a versioned binary file, written atomically (a
// temporary name, then a rename), from which a run continues bit for bit as if it had not
// stopped. The file holds every array of the State (the one list, stencils/model_arrays.h: DOFs,
// velocities, accelerations, reference frames, reference twists, mid-edge frame vectors), its
// time, step and warning counters, the run loop's cursor (the step count and the adaptive step
// size), the scene's fingerprint (checkpoint_fingerprint) and a checksum of all of it: a damaged
// file, a file of another model or of other settings (gravity, friction, integrator, dt,
// actuation, ...) and a cursor outside the run are refused, what differs named. The feedback
// controllers' state (filters, integrals, commands: control.h) is in the file too. What the
// caller set from code (set_params, callbacks, fixed targets, external forces, load values,
// controller gains and references) is the caller's to set again; the scene's actuation and
// motions are functions of time and need nothing.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "slender/batch.h"
#include "slender/record.h"
#include "slender/simulator.h"

namespace slender {

/// The run loop's position (run.h): what makes a resumed run take the same steps.
struct RunCursor {
  long steps = 0;       ///< the run's successful steps so far (the recording cadence counts them)
  Real h_cur = 0;       ///< the adaptive step size in use (0: the nominal dt)
  int good_in_row = 0;  ///< good steps since h_cur last changed
  Real t_end = -1;      ///< the run's end time [s] (< 0: unknown)
  /// how far the run had written each output file at this step (empty: no outputs), so that a
  /// run resumed into the same folder continues them (record.h)
  std::vector<OutputMark> outputs;
};

/// A 64-bit fingerprint of every array and count of the model (FNV-1a over their bytes).
std::uint64_t model_fingerprint(const Model& m);

/// What determines a trajectory besides the state, in named parts, each a 64-bit FNV-1a hash:
/// the model's arrays (model_fingerprint), gravity, damping, buoyancy and drag, the ground, its
/// friction, contact, its friction, the loads and time functions, motions, boundary events,
/// actuation, the integrator (kind, Newmark's beta and gamma, adaptivity, Newton's settings),
/// dt, the number of user energies (their code cannot be hashed).
struct SceneFingerprint {
  std::vector<std::pair<std::string, std::uint64_t>> parts;
};
/// The fingerprint of `m` stepped with `integrator` (a Simulator's integrator()).
SceneFingerprint scene_fingerprint(const Model& m, const IntegratorSpec& integrator);

/// Writes the simulator's state, its controllers' state and `cursor` to `path` (atomically:
/// path.part, then renamed).
/// fingerprint: scene_fingerprint(sim.model(), sim.integrator()) (which reads every array of
/// the model: a caller that writes many checkpoints computes it once); null: computed here.
/// Throws Error when the file cannot be written.
void save_checkpoint(const Simulator& sim,
                     const std::string& path,
                     const RunCursor& cursor = {},
                     const SceneFingerprint* fingerprint = nullptr);

/// Reads `path` into the simulator (its state and its controllers' state: a file of format 4,
/// or written without controllers, leaves the controllers as they are) and returns the run
/// cursor. Throws InputError
/// naming the file when it is not a regular file or a checkpoint, is of another format version
/// (formats 1 and 2, without checksum and fingerprint, are refused; 3 to 5 are read), holds the
/// state of other controllers than the simulator's (names or springs), is cut short or damaged
/// (its checksum), was written for another model or other settings (the parts of the
/// fingerprint that differ named), holds a value that is not finite, or a cursor outside the
/// run: the time negative or not finite; a run's end time (t_end >= 0) not finite, before the
/// time or more than 1e9 steps of dt after it; the step size outside [min_dt, dt].
RunCursor load_checkpoint(Simulator& sim, const std::string& path);

/// One environment of a batch (either engine): its state and its controllers' state to `path`,
/// in the same format (a file a Simulator of the same model reads, and the other way round; the
/// run cursor is empty). Actions, parameters and callbacks are the caller's to set again. Throws
/// Error for an environment out of range or a file that cannot be written.
void save_checkpoint(const BatchedSimulator& batch,
                     int env,
                     const std::string& path,
                     const SceneFingerprint* fingerprint = nullptr);
/// Reads `path` into environment env of the batch (the others untouched); errors as for the
/// Simulator's.
void load_checkpoint(BatchedSimulator& batch, int env, const std::string& path);

}  // namespace slender
