#pragma once

// Newton's iterations of one implicit step, written once for the stepper of both backends
// (engine/stepper.h, host code: each executor supplies its own solve, evaluation and storage). The
// vectorized batch (include/slender/engine/batch_newton.h) runs the same rules per environment,
// masked.

#include <chrono>
#include <cmath>

#include "slender/core/integrator.h"
#include "slender/core/status.h"

namespace slender {

/// A Newton direction dx = J^-1 f: whether it was found (a failed factorization or solve, or a
/// non-finite dx, fails the step), slope = dx . f (-d phi / d alpha at alpha = 0) and max |dx|.
struct NewtonDirection {
  bool solved = false;
  Real slope = 0;
  Real dx_max = 0;
};

/// Newton's iterations from the predictor, whose residual norm r0 the caller has evaluated:
///   direction() -> NewtonDirection (factorize and solve at the current iterate);
///   trial(alpha) -> the residual norm of the iterate moved by alpha dx (evaluated there);
///   phi() -> the incremental potential of the last evaluation (the current iterate's before
///            the line search);
///   accept() -> the last trial becomes the iterate.
/// Convergence: newton_converged on the residual, or a step max |alpha dx| <= step_tol (alpha is
/// a power of two, so alpha max |dx| is exact). Fills rep (residual0, iterations, residual and,
/// when it fails, status), counts line searches without sufficient decrease in ls_warnings, adds
/// the line search's time and the iterations to `times`. Returns whether the iterate converged:
/// the caller then finalizes the step, else leaves its state as it was.
template <class Direction, class Trial, class Potential, class Accept>
bool newton_iterations(const NewtonSpec& ns,
                       bool friction,
                       Real r0,
                       StepReport& rep,
                       PhaseTimes& times,
                       long& ls_warnings,
                       Direction&& direction,
                       Trial&& trial,
                       Potential&& phi,
                       Accept&& accept) {
  using Clock = std::chrono::steady_clock;
  rep.residual0 = r0;
  Real r = r0;
  int it = 0;
  bool ok = false;
  while (true) {
    if (!std::isfinite(r)) {
      rep.status = StepStatus::kNonFinite;
      break;
    }
    if (newton_converged(ns, r, r0, it)) {
      ok = true;
      break;
    }
    if (it >= ns.max_iters) {
      rep.status = StepStatus::kMaxIters;
      break;
    }
    const NewtonDirection d = direction();
    if (!d.solved) {
      rep.status = StepStatus::kLinearSolveFailed;
      break;
    }
    ++it;

    // backtracking line search: a step is accepted when it decreases either the incremental
    // potential (Armijo; its gradient is the residual up to the frames' transport, and it copes
    // with stiff stretching far from the solution) or the residual norm (which Newton's method
    // decreases near the solution, where the transport makes the potential's minimum and the
    // residual's root differ slightly). Friction has no potential: with it, a lower potential is
    // no sign of progress (Newton then cycles at a finite residual), so only the residual counts.
    const auto t0 = Clock::now();
    const bool on_potential = d.slope > 0 && !friction;
    const LineSearchOutcome search =
        backtracking_line_search(ns, on_potential, phi(), d.slope, r, r0, it, trial, phi);
    times.line_search += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!search.accepted) {
      // no sufficient decrease: the best trial was taken again, if any was finite
      ++ls_warnings;
      if (!search.finite) {
        rep.status = StepStatus::kNonFinite;
        break;
      }
      rep.status = StepStatus::kLineSearchFailed;
    }
    accept();
    r = search.r;
    // converged on the step size
    if (std::isfinite(r) && search.alpha * d.dx_max <= ns.step_tol) {
      ok = true;
      break;
    }
  }
  rep.iterations = it;
  rep.residual = r;
  times.newton_iters += it;
  if (!ok && rep.status == StepStatus::kConverged) rep.status = StepStatus::kMaxIters;
  if (ok) rep.status = StepStatus::kConverged;
  return ok;
}

}  // namespace slender
