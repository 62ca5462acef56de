#pragma once

// Per-DOF terms of the Newton residual: inertia of the integrator and the external forces that
// act on one DOF at a time (seed 000 §5):
//   gravity and buoyancy    F = (m - rho_med V) g               (§5.1)
//   viscous drag            F = -eta dl u,   dF/du = -eta dl I  (eqs. 27-28)
//   mass-proportional damping F = -alpha m u
// With the integrator's u(q) = u_hat + c_u (q - q_hat) and inertia c_m m (q - q_hat), the
// residual of one DOF is  r = c_m m (q - q_hat) - F_time - F(q)  and its diagonal Jacobian
//   J = c_m m + c_u (eta dl + alpha m).
// The residual is the derivative of the per-DOF incremental potential
//   phi = 1/2 c_m m (q - q_hat)^2 - (m g + F_time) q + D (u_hat q + 1/2 c_u (q - q_hat)^2),
// D = eta dl + alpha m, which the line search uses as its merit function.

#include "slender/core/types.h"

namespace slender {

struct DofTermParams {
  Real mass;     ///< lumped mass (or rotational inertia for a twist DOF)
  Real weight;   ///< the mass gravity acts on: m - rho_med V with buoyancy (seed 000 §5.1)
  Real gravity;  ///< this component of g [m/s^2], 0 for twists
  Real drag;     ///< eta * Voronoi length for positions, 0 for twists [N s/m]
  Real damping;  ///< alpha [1/s]
  Real c_m;      ///< inertia coefficient of the integrator [1/s^2]
  Real c_u;      ///< d u / d q of the integrator [1/s]
};

/// Residual and diagonal Jacobian of one DOF's inertia and external forces.
SLENDER_HD inline void dof_terms_eval(Real q,
                                      Real q_hat,
                                      Real u_hat,
                                      Real f_time,
                                      const DofTermParams& p,
                                      Real& r,
                                      Real& J,
                                      Real& phi) {
  const Real dq = q - q_hat;
  const Real D = p.drag + p.damping * p.mass;
  const Real u = u_hat + p.c_u * dq;
  const Real f = p.weight * p.gravity - D * u + f_time;
  r = p.c_m * p.mass * dq - f;
  J = p.c_m * p.mass + p.c_u * D;
  phi = Real(0.5) * p.c_m * p.mass * dq * dq - (p.weight * p.gravity + f_time) * q +
        D * (u_hat * q + Real(0.5) * p.c_u * dq * dq);
}

}  // namespace slender
