#pragma once

// Backend comparison: one scene stepped on the CPU and on the CUDA backend from the same start,
// with per-phase times, Newton iterations, speed and the largest difference of the states
// (`slender compare`, the V8 parity test).

#include <memory>
#include <string>
#include <vector>

#include "slender/simulator.h"

namespace slender {

/// One backend's run of a comparison.
struct BackendRun {
  bool available = false;            ///< the backend could run here (else `error` says why)
  std::string error;                 ///< why it could not run, or why a step failed
  std::string solver;                ///< linear solver name
  long steps = 0;                    ///< steps completed
  bool ok = false;                   ///< every requested step converged
  double wall_seconds = 0;           ///< wall time of the stepping loop [s]
  PhaseTimes times;                  ///< per-phase times of the loop
  State state;                       ///< the state after the last completed step
  std::vector<int> step_iterations;  ///< Newton iterations of each completed step
};

struct CompareResult {
  int steps = 0;  ///< steps requested
  BackendRun cpu, cuda;
  /// largest |x_cuda - x_cpu| over the DOFs relative to the largest |x_cpu| (q, u); NaN when one
  /// of the runs is missing or stopped at a different step
  Real q_rel_diff = 0, u_rel_diff = 0;
  /// the velocities as one step's displacement: largest |u_cuda - u_cpu| dt relative to the
  /// largest |q_cpu|. Unlike u_rel_diff it stays meaningful for a body at rest, whose velocities
  /// are differences of converged positions over dt (roundoff: on S6 at E = 1e7 the CPU's own
  /// banded and Cholesky solves give velocities 10x apart relative to their size, 5e-13 by this
  /// measure). NaN as above
  Real u_step_rel_diff = 0;
  /// steps whose Newton iteration counts differ between the backends; -1 as NaN above
  int iteration_mismatches = 0;
};

/// Runs `steps` steps of the model's integrator on both backends (the CUDA run is skipped with
/// the reason when the backend cannot run here), from the model's initial state or from
/// `start` (for example a state a CPU run reached: the comparison then begins mid-run, in
/// contact). phase_timing splits the CUDA phases (it adds synchronizations).
CompareResult compare_backends(std::shared_ptr<const Model> model,
                               int steps,
                               LinearSolverKind solver = LinearSolverKind::kAuto,
                               bool phase_timing = true,
                               const State* start = nullptr);

/// The side-by-side table of a comparison.
std::string format_comparison(const CompareResult& r);

/// Largest |b - a| relative to the largest |a| (0 when both are zero).
Real max_relative_difference(const std::vector<Real>& a, const std::vector<Real>& b);

}  // namespace slender
