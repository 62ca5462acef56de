#pragma once

// The integrators' per-DOF arithmetic (host and device), shared by the CPU and CUDA backends.
//
// Every integrator is written as one nonlinear problem in an unknown configuration y:
//   f(y) = c_m M (y - q_hat) + grad E(y) - F(y, u(y)) = 0,   u(y) = u_hat + c_u (y - q_hat)
// with, for a step of size dt from (q_n, u_n, a_n):
//   implicit Euler   y = q_n+1    c_m = 1/dt^2       c_u = 1/dt       q_hat = q_n + dt u_n
//   implicit midpoint y = q_n+1/2 c_m = 4/dt^2       c_u = 2/dt       q_hat = q_n + dt/2 u_n
//   Newmark-beta     y = q_n+1    c_m = 1/(b dt^2)   c_u = g/(b dt)   q_hat = q_n + dt u_n
//                                                                     + dt^2 (1/2 - b) a_n
//   static           y = q_n+1    c_m = 0            c_u = 0          loads ramp with time
// The Jacobian is c_m M + H - dF/dq - c_u dF/du, assembled on the free DOFs. Fixed DOFs stay
// where they are, or follow a prescribed motion: y puts them on their path (its end, or for the
// midpoint rule the mean of both ends), and they move at their mean velocity over the step.

#include <algorithm>
#include <cmath>

#include "slender/core/spec.h"
#include "slender/core/types.h"

namespace slender {

/// Integrator coefficients of one step.
struct StepCoeffs {
  Real c_m = 0, c_u = 0;
  Real t_eval = 0;       ///< time at which loads and actuation are evaluated [s]
  Real load_factor = 1;  ///< static mode ramps loads; 1 otherwise
};

/// The load factor at time t: static mode ramps the loads linearly to full at the end of the
/// run (each step is a load step); 1 otherwise.
inline Real load_factor_at(const IntegratorSpec& spec, Real t) {
  if (spec.kind != IntegratorKind::kStatic) return 1;
  return spec.duration > 0 ? std::min(Real(1), t / spec.duration) : 1;
}

/// The coefficients of a step of size dt that starts at `time`.
inline StepCoeffs step_coeffs(const IntegratorSpec& spec, Real time, Real dt) {
  StepCoeffs c;
  c.t_eval = time + dt;
  const Real b = spec.beta, gm = spec.gamma;
  switch (spec.kind) {
    case IntegratorKind::kImplicitEuler:
      c.c_m = 1 / (dt * dt);
      c.c_u = 1 / dt;
      break;
    case IntegratorKind::kImplicitMidpoint:
      c.c_m = 4 / (dt * dt);
      c.c_u = 2 / dt;
      c.t_eval = time + 0.5 * dt;
      break;
    case IntegratorKind::kNewmark:
      c.c_m = 1 / (b * dt * dt);
      c.c_u = gm / (b * dt);
      break;
    case IntegratorKind::kStatic:
      c.load_factor = load_factor_at(spec, c.t_eval);
      break;
  }
  return c;
}

/// The energy-consistent contact forces of a step (stencils/contact_discrete_gradient.h): the
/// contact stencils are evaluated at the step's midpoint x0 + hm (y - x0) with the secant over
/// the step (a = 2) and the step's mean velocity, and the residual weighs them by w. The midpoint
/// rule: y is the midpoint (hm = 1) and u(y) the mean velocity; its forces act over the whole
/// step (w = 1). Newmark: y is the end (hm = 1/2) and the mean velocity (y - x0) / dt =
/// cu (x - x0), cu = 1 / (hm dt); the contact acts as a constant force over the step, its
/// impulse, which enters q with dt^2 / 2 and u with dt and is kept out of the stored acceleration,
/// so that the residual c_m M (y - q_hat) + w F has w = 1 / (2 beta). With beta = 1/4 and
/// gamma = 1/2 the contact's work over the step is then exactly the secant's. a = 0 (off) for
/// implicit Euler, which dissipates, for Newmark with other parameters (its dissipative form,
/// gamma > 1/2, keeps the pointwise forces: the impulse form changed how friction holds a
/// rolling ring there, and its numerical damping takes energy out of most impacts, though not
/// all: pointwise, a rod on a plate gained 42 % at dt = 5 ms), for static steps, and when the
/// spec says so.
struct ContactStepCoeffs {
  Real a = 0, w = 1, hm = 1;
  Real cu = 0;  // Newmark's: 1 / (hm dt)
};
inline ContactStepCoeffs contact_step_coeffs(const IntegratorSpec& spec, Real dt) {
  ContactStepCoeffs c;
  if (!spec.energy_consistent) return c;
  if (spec.kind == IntegratorKind::kImplicitMidpoint) {
    c.a = 2;
  } else if (spec.kind == IntegratorKind::kNewmark && spec.beta == 0.25 && spec.gamma == 0.5) {
    c.a = 2;
    c.w = 1 / (2 * spec.beta);
    c.hm = 0.5;
    c.cu = 1 / (c.hm * dt);
  }
  return c;
}
/// whether the step's rod stretching forces are energy-momentum secants (the midpoint rule with
/// energy-consistent forces; stencils/rod_stretch.h), whose Jacobian is not symmetric
inline bool stretch_secant_on(const IntegratorSpec& spec) {
  return spec.energy_consistent && spec.kind == IntegratorKind::kImplicitMidpoint;
}

/// The residual norm at or below which a step that has iterated has converged: abs_tol, or
/// rel_tol times the first iteration's norm r0, whichever is larger (inexact Newton aims at it).
inline Real newton_bound(const NewtonSpec& n, Real r0) {
  return std::max(n.abs_tol, n.rel_tol * r0);
}

/// Newton's convergence test on the free-DOF residual norm r (r0: the first iteration's).
inline bool newton_converged(const NewtonSpec& n, Real r, Real r0, int iters) {
  return r <= n.abs_tol || (iters > 0 && r <= newton_bound(n, r0));
}

/// The backtracking line search's acceptance of a trial at step length alpha: a sufficient
/// decrease of the incremental potential (Armijo, its round-off allowed for; only when the
/// direction descends it and no friction acts) or of the residual norm, or convergence.
/// slope = -d phi / d alpha at alpha = 0; r the residual norm at the step's start.
inline bool line_search_accepts(const NewtonSpec& n,
                                bool on_potential,
                                Real phi,
                                Real phi0,
                                Real slope,
                                Real alpha,
                                Real r_new,
                                Real r,
                                Real r0,
                                int iters) {
  if (!(std::isfinite(r_new) && std::isfinite(phi))) return false;
  return (on_potential && phi <= phi0 - 1e-4 * alpha * slope + 1e-13 * std::fabs(phi0)) ||
         r_new <= (1 - 1e-4 * alpha) * r || newton_converged(n, r_new, r0, iters);
}

/// The predictor q_hat, u_hat of one DOF per index; fixed DOFs stay where they are. With
/// stride = ndof the arrays hold several environments (env-major) and `fixed` is the model's,
/// or each environment's own with fixed_per_env.
struct Predict {
  IntegratorKind kind;
  Real dt, beta, gamma;
  const Real* q;               // (ndof)
  const Real* u;               // (ndof)
  const Real* a;               // (ndof)
  const unsigned char* fixed;  // (ndof)
  Real* q_hat;                 // (ndof)
  Real* u_hat;                 // (ndof)
  long stride = 0;             // ndof for env-major arrays, 0 for one environment
  // prescribed motion (null: none): a fixed DOF k with motion_slot[k] >= 0 moves to
  // target[e target_stride + motion_slot[k]] by the end of the step (e: the environment)
  const int* motion_slot = nullptr;  // (ndof)
  const Real* target = nullptr;      // (nenv x target_stride)
  long target_stride = 0;
  // `fixed` per environment (nenv x ndof, env-major as q) rather than the model's (ndof)
  bool fixed_per_env = false;
  SLENDER_HD void operator()(long i) const {
    const long k = stride ? i % stride : i;
    Real qh = q[i], uh = u[i];
    switch (kind) {
      case IntegratorKind::kImplicitEuler:
        qh = q[i] + dt * u[i];
        break;
      case IntegratorKind::kImplicitMidpoint:
        qh = q[i] + 0.5 * dt * u[i];
        break;
      case IntegratorKind::kNewmark:
        qh = q[i] + dt * u[i] + dt * dt * (0.5 - beta) * a[i];
        uh = u[i] + dt * (1 - gamma) * a[i];
        break;
      case IntegratorKind::kStatic:
        uh = 0;
        break;
    }
    if (fixed[fixed_per_env ? i : k]) {
      qh = q[i];
      uh = 0;
      if (motion_slot && motion_slot[k] >= 0) {
        // the DOF's own path: y (the step's end, or its midpoint) on it, at its mean velocity
        const Real x1 = target[(stride ? i / stride : 0) * target_stride + motion_slot[k]];
        qh = kind == IntegratorKind::kImplicitMidpoint ? 0.5 * (q[i] + x1) : x1;
        uh = kind == IntegratorKind::kStatic ? Real(0) : (x1 - q[i]) / dt;
      }
    }
    q_hat[i] = qh;
    u_hat[i] = uh;
  }
};

/// The converged y becomes the new q, u, a of one DOF per index (stride as for Predict).
struct FinalizeStep {
  IntegratorKind kind;
  Real dt, c_m, c_u;
  const Real* y;               // (ndof)
  const Real* q_hat;           // (ndof)
  const Real* u_hat;           // (ndof)
  const Real* mass;            // (ndof)
  const unsigned char* fixed;  // (ndof)
  Real* q;                     // (ndof)
  Real* u;                     // (ndof)
  Real* a;                     // (ndof)
  long stride = 0;             // ndof for env-major arrays, 0 for one environment
  // prescribed motion, as for Predict
  const int* motion_slot = nullptr;  // (ndof)
  const Real* target = nullptr;      // (nenv x target_stride)
  long target_stride = 0;
  // Newmark's energy-consistent contact (contact_step_coeffs): the residual's secant normal
  // forces w F_secant of each DOF (layout as q; null: none), which the stored acceleration
  // takes back out (a_n+1 = c_m (y - q_hat) + w F / m) and the velocity adds as the contact's
  // impulse (u_n+1 = u_hat + c_u (y - q_hat) + dt (gamma - 2 beta) w F / m)
  const Real* contact_force = nullptr;
  Real contact_u = 0;  // dt (gamma - 2 beta)
  // each environment's density scale at env[5 e] (DofTerms' env), or null: the masses as given
  const Real* env = nullptr;
  bool fixed_per_env = false;  // as for Predict
  SLENDER_HD void operator()(long i) const {
    const long k = stride ? i % stride : i;
    const Real un = u[i];
    Real qn = q[i], un1 = un, an1 = a[i];
    switch (kind) {
      case IntegratorKind::kImplicitEuler:
        un1 = (y[i] - qn) / dt;
        an1 = (un1 - un) / dt;
        qn = y[i];
        break;
      case IntegratorKind::kImplicitMidpoint:
        if (mass[k] == 0) {
          // a massless DOF (mid-edge xi) is in equilibrium at the midpoint: keep that value
          // rather than extrapolating it
          un1 = (y[i] - qn) / dt;
          an1 = 0;
          qn = y[i];
        } else {
          const Real u_mid = u_hat[i] + c_u * (y[i] - q_hat[i]);
          un1 = 2 * u_mid - un;
          an1 = (un1 - un) / dt;
          qn = 2 * y[i] - qn;
        }
        break;
      case IntegratorKind::kNewmark:
        an1 = (y[i] - q_hat[i]) * c_m;
        un1 = u_hat[i] + c_u * (y[i] - q_hat[i]);
        if (contact_force && mass[k] > 0) {
          const Real fc =
              contact_force[i] / (env ? env[5 * (stride ? i / stride : 0)] * mass[k] : mass[k]);
          an1 += fc;
          un1 += contact_u * fc;
        }
        qn = y[i];
        break;
      case IntegratorKind::kStatic:
        un1 = 0;
        an1 = 0;
        qn = y[i];
        break;
    }
    if (fixed[fixed_per_env ? i : k]) {
      un1 = an1 = 0;
      if (motion_slot && motion_slot[k] >= 0) {
        const Real x1 = target[(stride ? i / stride : 0) * target_stride + motion_slot[k]];
        if (kind != IntegratorKind::kStatic) un1 = (x1 - q[i]) / dt;
        qn = x1;
      }
    }
    q[i] = qn;
    u[i] = un1;
    a[i] = an1;
  }
};

}  // namespace slender
