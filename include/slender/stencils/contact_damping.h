#pragma once

// Normal dissipation of contact (the ground and contact between bodies), set by a coefficient
// of restitution e in [0, 1]: a dashpot along the contact normal,
//   F = -c (w . u) w,   c = 2 zeta sqrt(2 k_c m_eff) sigma,
// with w = grad Delta over the stencil's node positions (the unit normal for a node on a plane),
// u their velocities, sigma in [0, 1] the contact's activation (the logistic of its force ramp:
// 1 in deep contact, 0 away from it), m_eff = 1 / sum_a |w_a|^2 / m_a the mass that moves along
// Delta (the node's mass against the ground, the pair's reduced mass between bodies) and 2 k_c
// the stiffness of deep contact. A deep contact is then a spring-dashpot of damping ratio zeta,
// whose coefficient of restitution is e = exp(-pi zeta / sqrt(1 - zeta^2)):
//   zeta = -ln e / sqrt(pi^2 + ln^2 e)   (e = 1: zeta = 0, no damping; e = 0: zeta = 1, critical).
// w, sigma and m_eff are taken at the step's start, x_lag = q_hat - u_hat / c_u (q_n for implicit
// Euler and the midpoint rule, q_n + dt/2 u_n for Newmark), so that within a step the force is
// linear in the positions through u = u_hat + c_u (x - q_hat): it has the potential
//   E_d = c (w . u)^2 / (2 c_u),   g = c (w . u) w,   H = c c_u w w^T,
// symmetric positive semi-definite, which keeps the Newton Jacobian symmetric and the line
// search's merit consistent with the residual. The lag delays the damping by one step at the
// onset of contact; a contact resolved in time (several steps per impact, omega dt well below
// 1, omega = sqrt(2 k_c / m_eff)) rebounds with e, and refining dt converges to it
// (tests/physics/restitution_test.cpp).

#include <cmath>

#include "slender/core/types.h"

namespace slender {

/// the damping ratio zeta of a spring-dashpot whose coefficient of restitution is e
SLENDER_HD inline Real contact_damping_ratio(Real e) {
  if (!(e < 1)) return 0;
  if (!(e > 0)) return 1;
  const Real l = ::log(e);
  return -l / ::sqrt(kPi * kPi + l * l);
}

/// the logistic function of z, without overflow
SLENDER_HD inline Real contact_logistic(Real z) {
  const Real t = ::exp(-::fabs(z));
  return z > 0 ? 1 / (1 + t) : t / (1 + t);
}

/// adds the lagged dashpot's potential, gradient and (on request) Hessian: c its coefficient
/// (sigma included), w = grad Delta at the step's start, u the current velocities, c_u = du/dx >= 0
/// (0: the adjoint's view of a held velocity, neither Jacobian nor potential)
template <int N>
SLENDER_HD inline void add_contact_damping(
    const Vec<N>& w, Real c, const Vec<N>& u, Real c_u, unsigned want, LocalEval<N>& out) {
  Real vn = 0;
  for (int i = 0; i < N; ++i)
    vn += w[i] * u[i];
  if (c_u > 0) out.E += Real(0.5) * c * vn * vn / c_u;  // (0: the adjoint's view, no potential)
  if (want == kEnergy) return;
  for (int i = 0; i < N; ++i)
    out.g[i] += c * vn * w[i];
  if (!(want & kHess)) return;
  const Real h = c * c_u;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      out.H(i, j) += h * w[i] * w[j];
}

}  // namespace slender
