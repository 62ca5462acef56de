#pragma once

// Newton's iterations of one implicit step for B >= 1 environments, written once: a state
// machine per environment (iterating, converged, failed), masked, which the engine
// (engine/engine.h) drives with B = 1 for a Simulator and with B environments for the vectorized
// batch. The engine supplies the Newton directions, evaluations and storage; the rules here
// (convergence, the backtracking line search, failure) are the same for every environment, so a
// batch reproduces single runs.

#include <chrono>
#include <cmath>
#include <vector>

#include "slender/core/integrator.h"
#include "slender/core/pcg.h"
#include "slender/core/status.h"

namespace slender {

/// A Newton direction dx = J^-1 f: whether it was found (a failed factorization or solve, or a
/// non-finite dx, fails the step), slope = dx . f (-d phi / d alpha at alpha = 0) and max |dx|.
struct NewtonDirection {
  bool solved = false;
  Real slope = 0;
  Real dx_max = 0;
};

/// An environment mask: mask[e] != 0 for the environments a call is about.
using EnvMask = std::vector<unsigned char>;

/// Inexact Newton (NewtonSpec::inexact): the relative residual eta, |f - J dx| <= eta |f|, to
/// which an iterative solver takes the Newton direction at the residual norm r. Eisenstat and
/// Walker's second choice (SIAM J. Sci. Comput. 17, 1996): eta = 0.9 (r / r_prev)^2 after an
/// iteration that took the norm from r_prev to r; the first direction of a step (r_prev <= 0) at
/// kForcingFirst. Where eta r lies within a decade of the norm at which the step converges
/// (target: newton_bound, core/integrator.h), a tenth of target / r, so that this direction ends
/// the step, and never less than that (solving further is wasted). Within [kKrylovRelTol,
/// kForcingMax]. (Their safeguard against a forcing that falls too fast, 0.9 eta_prev^2, acts
/// only above a last forcing of 1/3, which kForcingMax rules out.) The
/// constants as measured on S9's cloth (bench/results/2026-11-30-inexact-newton-epyc-2c.md):
/// a first direction at 1e-2 took the 20k cloth three iterations a step where 1e-3 took two.
constexpr Real kForcingFirst = 1e-3;
constexpr Real kForcingMax = 0.1;
inline Real newton_forcing(Real r, Real r_prev, Real target) {
  Real eta = kForcingFirst;
  if (r_prev > 0 && std::isfinite(r) && std::isfinite(r_prev)) {
    const Real q = r / r_prev;
    eta = Real(0.9) * q * q;
  }
  if (r > 0 && target > 0) {
    // within a decade of convergence after this direction: solve to converge with it (an
    // iteration less); never further than that (solving past it is wasted)
    const Real finish = Real(0.1) * target / r;
    eta = eta * r < 10 * target ? finish : std::fmax(eta, finish);
  }
  return std::fmax(std::fmin(eta, kForcingMax), kKrylovRelTol);
}

/// Newton's iterations of every environment in `want` from its predictor, whose residual norm
/// r[e] and incremental potential phi[e] the caller has evaluated. The caller's operations, each
/// on a mask of environments (the others must be left alone):
///   direction(running, d, r_new, phi_new): the Newton direction of each running environment at
///     its current iterate into d[e] (factorize and solve); true where it also took the full
///     step's trial (alpha 1) of every running environment into r_new and phi_new (the trial of
///     an environment whose direction failed is ignored; the line search then starts from it),
///     false where it took none. The iterates are the same either way: an executor whose
///     reductions the host reads across a bus reads a direction's and its trial's in one
///     transfer where they took two (engine/engine_newton.h);
///   trial(mask, alpha, r_new, phi_new): evaluates each masked environment's iterate moved by
///     alpha[e] dx, into r_new[e] and phi_new[e] (the residual norm and the potential);
///   accept(mask): the last trial of each masked environment becomes its iterate.
/// The backtracking line search halves alpha from 1 (up to 10 halvings; one trial without a line
/// search) until line_search_accepts (core/integrator.h): a sufficient decrease of the potential
/// (Armijo, only when the direction descends it and no_potential[e] is 0: friction or a force
/// without potential make a lower potential no sign of progress, and Newton then cycles at a
/// finite residual) or of the residual norm (which Newton decreases near the solution, where the
/// frames' transport makes the potential's minimum and the residual's root differ slightly).
/// Without sufficient decrease the best finite trial is evaluated again and taken (the last
/// evaluation is always the step taken; a line-search warning), and none finite fails the step.
/// Convergence: newton_converged on the residual, or a step max |alpha dx| <= step_tol (alpha is
/// a power of two, so alpha max |dx| is exact).
/// Fills reps[e] of every wanted environment (residual0, iterations, residual, status), counts
/// line searches without sufficient decrease in ls_warnings[e], adds the line searches' wall
/// time to line_search_seconds. Returns the mask of the environments that converged: the caller
/// finalizes their steps and leaves the others' states as they were.
template <class Direction, class Trial, class Accept>
EnvMask newton_iterations(const NewtonSpec& ns,
                          const EnvMask& want,
                          const EnvMask& no_potential,
                          std::vector<Real>& r,
                          std::vector<Real>& phi,
                          StepReport* reps,
                          long* ls_warnings,
                          Real& line_search_seconds,
                          Direction&& direction,
                          Trial&& trial,
                          Accept&& accept) {
  using Clock = std::chrono::steady_clock;
  enum Phase : unsigned char { kRunning, kDone, kFailed };
  const int B = int(want.size());
  const std::vector<Real> r0 = r;
  std::vector<unsigned char> phase(B, kDone);
  std::vector<int> it(B, 0);
  for (int e = 0; e < B; ++e)
    if (want[e]) {
      phase[e] = kRunning;
      reps[e].residual0 = r[e];
    }
  auto fail = [&](int e, StepStatus s) {
    reps[e].status = s;
    phase[e] = kFailed;
  };
  std::vector<NewtonDirection> d(B);
  EnvMask running(B), searching(B), mask(B);
  std::vector<Real> alpha(B, 1), best_alpha(B), best_r(B), phi0(B), r_new(B), phi_new(B);
  const int max_halvings = ns.line_search ? 10 : 0;
  while (true) {
    bool any = false;
    for (int e = 0; e < B; ++e) {
      if (phase[e] != kRunning) continue;
      if (!std::isfinite(r[e])) {
        fail(e, StepStatus::kNonFinite);
      } else if (newton_converged(ns, r[e], r0[e], it[e])) {
        phase[e] = kDone;
      } else if (it[e] >= ns.max_iters) {
        fail(e, StepStatus::kMaxIters);
      } else {
        any = true;
      }
    }
    if (!any) break;
    for (int e = 0; e < B; ++e)
      running[e] = phase[e] == kRunning;
    const bool fused = direction(running, d, r_new, phi_new);
    for (int e = 0; e < B; ++e) {
      if (!running[e]) continue;
      if (!d[e].solved) {
        fail(e, StepStatus::kLinearSolveFailed);
        running[e] = 0;
        continue;
      }
      ++it[e];
      phi0[e] = phi[e];
      alpha[e] = 1;
      best_alpha[e] = 1;
      best_r[e] = INFINITY;
      searching[e] = 1;
    }

    // backtracking line search, every environment at its own step length
    const auto t0 = Clock::now();
    for (int h = 0; h <= max_halvings; ++h) {
      bool any_trial = false, any_accepted = false;
      for (int e = 0; e < B; ++e) {
        mask[e] = running[e] && searching[e] == 1;
        any_trial = any_trial || mask[e];
      }
      if (!any_trial) break;
      if (!fused || h > 0) trial(mask, alpha, r_new, phi_new);
      for (int e = 0; e < B; ++e) {
        if (!mask[e]) continue;
        if (std::isfinite(r_new[e]) && r_new[e] < best_r[e]) {
          best_r[e] = r_new[e];
          best_alpha[e] = alpha[e];
        }
        const bool on_potential = d[e].slope > 0 && !no_potential[e];
        if (!ns.line_search ||
            line_search_accepts(ns, on_potential, phi_new[e], phi0[e], d[e].slope, alpha[e],
                                r_new[e], r[e], r0[e], it[e])) {
          searching[e] = 0;
          r[e] = r_new[e];
          phi[e] = phi_new[e];
          any_accepted = true;
        } else {
          mask[e] = 0;  // not accepted
          if (h < max_halvings) {
            alpha[e] *= 0.5;
          } else {
            searching[e] = 2;  // no sufficient decrease
          }
        }
      }
      if (any_accepted) accept(mask);  // the accepted trials become the iterates
    }
    // no sufficient decrease: the best trial, if any was finite, evaluated again and taken
    bool any_redo = false;
    for (int e = 0; e < B; ++e) {
      mask[e] = 0;
      if (!running[e] || searching[e] != 2) continue;
      searching[e] = 0;
      ++ls_warnings[e];
      if (!std::isfinite(best_r[e])) {
        fail(e, StepStatus::kNonFinite);
        running[e] = 0;
        continue;
      }
      alpha[e] = best_alpha[e];
      reps[e].status = StepStatus::kLineSearchFailed;
      mask[e] = 1;
      any_redo = true;
    }
    if (any_redo) {
      trial(mask, alpha, r_new, phi_new);
      for (int e = 0; e < B; ++e)
        if (mask[e]) {
          r[e] = r_new[e];
          phi[e] = phi_new[e];
        }
      accept(mask);
    }
    line_search_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    // converged on the step size
    for (int e = 0; e < B; ++e)
      if (running[e] && std::isfinite(r[e]) && alpha[e] * d[e].dx_max <= ns.step_tol)
        phase[e] = kDone;
  }
  EnvMask done(B, 0);
  for (int e = 0; e < B; ++e) {
    if (!want[e]) continue;
    reps[e].iterations = it[e];
    reps[e].residual = r[e];
    if (phase[e] == kDone) {
      reps[e].status = StepStatus::kConverged;
      done[e] = 1;
    }
  }
  return done;
}

}  // namespace slender
