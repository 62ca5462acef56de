#pragma once

// Checkpoints: a simulator's whole state in a versioned binary file, written atomically (a
// temporary name, then a rename), from which a run continues bit for bit as if it had not
// stopped. The file holds every array of the State (the one list, stencils/model_arrays.h: DOFs,
// velocities, accelerations, reference frames, reference twists, mid-edge frame vectors), its
// time, step and warning counters, the run loop's cursor (the step count and the adaptive step
// size), and a fingerprint of the model's arrays: a file from another model is refused. What the
// caller set from code (set_params, callbacks, fixed targets, external forces) is the caller's
// to set again; the scene's actuation and motions are functions of time and need nothing.

#include <cstdint>
#include <string>

#include "slender/batch.h"
#include "slender/simulator.h"

namespace slender {

/// The run loop's position (run.h): what makes a resumed run take the same steps.
struct RunCursor {
  long steps = 0;       ///< the run's successful steps so far (the recording cadence counts them)
  Real h_cur = 0;       ///< the adaptive step size in use (0: the nominal dt)
  int good_in_row = 0;  ///< good steps since h_cur last changed
  Real t_end = -1;      ///< the run's end time [s] (< 0: unknown)
};

/// A 64-bit fingerprint of every array and count of the model (FNV-1a over their bytes).
std::uint64_t model_fingerprint(const Model& m);

/// Writes the simulator's state and `cursor` to `path` (atomically: path.part, then renamed).
/// fingerprint: the model's (model_fingerprint, which reads every array of the model: a caller
/// that writes many checkpoints computes it once); 0: computed here. Throws Error when the file
/// cannot be written.
void save_checkpoint(const Simulator& sim,
                     const std::string& path,
                     const RunCursor& cursor = {},
                     std::uint64_t fingerprint = 0);

/// Reads `path` into the simulator (its state) and returns the run cursor. Throws InputError
/// naming the file when it is not a checkpoint, is of another version, is cut short, or was
/// written for another model.
RunCursor load_checkpoint(Simulator& sim, const std::string& path);

/// One environment of a batch (either engine): its state to `path`, in the same format (a file
/// a Simulator of the same model reads, and the other way round; the run cursor is empty).
/// Actions, parameters and callbacks are the caller's to set again. Throws Error for an
/// environment out of range or a file that cannot be written.
void save_checkpoint(const BatchedSimulator& batch,
                     int env,
                     const std::string& path,
                     std::uint64_t fingerprint = 0);
/// Reads `path` into environment env of the batch (the others untouched); errors as for the
/// Simulator's.
void load_checkpoint(BatchedSimulator& batch, int env, const std::string& path);

}  // namespace slender
