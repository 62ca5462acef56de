#pragma once

// The run loop shared by the `slender` program and the tests: sets up the recorders named by the
// scene's output spec, steps a Simulator to the end time (halving dt on failure when the
// integrator is adaptive) and returns a summary.

#include <csignal>
#include <ostream>
#include <string>
#include <vector>

#include "slender/checkpoint.h"
#include "slender/simulator.h"

namespace slender {

/// Overrides of the scene's integrator and output settings; negative or empty = the scene's.
struct RunOptions {
  std::string out_dir;        ///< "" = scene's output.dir
  Real duration = -1;         ///< simulated time to run [s]; < 0: scene's integrator.duration
  Real dt = -1;               ///< nominal step [s]; < 0: scene's integrator.dt
  int every = -1;             ///< record every n-th step; < 0: scene's output.every; 0: only the
                              ///< first and the last state
  bool progress = true;       ///< progress bar on stderr (long runs only)
  bool write_outputs = true;  ///< false: no folder, no files
  /// a .usda file (docs/usd.md) to write the records into, at the VTK frames' cadence; "" = none.
  /// The path is taken as given (relative to the working directory, not to the output folder)
  std::string usd_path;
  /// set (by a signal handler: the `slender` program's SIGINT and SIGTERM) to stop the run
  /// after the step in progress; null: never
  const volatile std::sig_atomic_t* interrupt = nullptr;
  /// > 0: write a checkpoint (checkpoint.h) to checkpoint_path every n-th step, atomically
  long checkpoint_every = 0;
  std::string checkpoint_path;
  /// a run continued from a checkpoint: its cursor (load_checkpoint), so that the steps, the
  /// adaptive step size, the end time and the recording cadence go on as before; null: a new run
  const RunCursor* resume = nullptr;
};

struct RunResult {
  bool ok = false;           ///< the end time was reached
  bool interrupted = false;  ///< RunOptions::interrupt stopped it (the outputs complete)
  long steps = 0;  ///< successful steps (shortened and halved ones included; a resumed run counts
                   ///< on from its checkpoint)
  Real sim_time = 0;                 ///< simulated time at the end [s]
  double wall_seconds = 0;           ///< wall time of the loop, recording included [s]
  long newton_iters = 0;             ///< Newton iterations, failed attempts included
  long steps_without_iteration = 0;  ///< successful steps whose predictor already converged
  int dt_halvings = 0;               ///< times an adaptive run halved dt
  std::string message;               ///< the summary line, or why the run stopped
  std::vector<std::string> files;    ///< paths written (CSV files, the .pvd series, the .usda)
};

/// Runs `sim` for `duration` of simulated time from its current state. The state at the start
/// is recorded as well as every `every`-th step and the last state. A step that fails stops the
/// run (ok = false, the state left at the last good step and the files written so far
/// complete) unless the integrator is adaptive: then dt is halved, down to min_dt, and doubled
/// back after 4 good steps in a row. `log` receives notes made during the run (dt changes,
/// warning counters); the summary is returned in RunResult::message. An interrupt stops it
/// after the step in progress, with the outputs recorded so far complete (interrupted = true).
/// Before the first step every output path is checked (a name too long for the file system, a
/// folder where a file goes, a folder that cannot be written). Throws InputError for bad
/// options (dt <= 0) and Error when an output file cannot be written; then no unfinished file
/// is left behind (the files completed before stay).
RunResult run_simulation(Simulator& sim, const RunOptions& opt, std::ostream& log);

}  // namespace slender
