#pragma once

// Rayleigh stiffness damping (Huang et al., seed 003, eq. 1): F = -beta K u per elastic
// stencil, K the stencil's Hessian of the elastic energy at the step's start (kept, so that the
// force is linear in the velocity and its Jacobian exact) and u = u_hat + c_u (q - q_hat) the
// integrator's velocity of the iterate q. It has an incremental potential,
//   phi(q) = beta [ u_hat . K q + c_u / 2 (q - q_hat) . K (q - q_hat) ],
// whose gradient is beta K u and Hessian beta c_u K, so the line search keeps measuring the
// potential and the Jacobian stays symmetric. The potential, gradient and Hessian are added to
// the stencil's own entries of the pools (after the elastic evaluation). A rigid translation
// (K u = 0) is not damped. Host and device code: one stencil per index.

#include "slender/stencils/bindings.h"
#include "slender/stencils/part_scale.h"

namespace slender {

template <class B>
struct StiffnessDamping {
  static constexpr int D = B::kDofs;
  ModelView m;
  const Real* beta;   // per node: its part's beta [s] (the stencil takes its first node's)
  const Real* y;      // the iterate (ndof)
  const Real* q_hat;  // the integrator's predictor (ndof)
  const Real* u_hat;  // the integrator's velocity offset (ndof)
  Real c_u;           // d u / d q
  const Real* K;      // this family's Hessians at the step's start (n x D x D)
  Real* E;            // this family's energies at y (n)
  Real* g;            // ... gradients (n x D)
  Real* H;            // ... Hessians (n x D x D); null: no Jacobian wanted
  SLENDER_HD void operator()(long k) const {
    int idx[D];
    const Real b = beta[stencil_part_node<B>(m, k, idx)];
    if (b == 0) return;
    const Real* Kk = K + k * D * D;
    Real dq[D], u[D];
    for (int i = 0; i < D; ++i) {
      dq[i] = y[idx[i]] - q_hat[idx[i]];
      u[i] = u_hat[idx[i]] + c_u * dq[i];
    }
    Real e = 0;
    for (int i = 0; i < D; ++i) {
      Real Ku = 0, Kdq = 0, Ky = 0;
      for (int j = 0; j < D; ++j) {
        const Real kij = Kk[i * D + j];
        Ku += kij * u[j];
        Kdq += kij * dq[j];
        Ky += kij * y[idx[j]];
      }
      g[k * D + i] += b * Ku;
      e += u_hat[idx[i]] * Ky + Real(0.5) * c_u * dq[i] * Kdq;
    }
    E[k] += b * e;
    if (H) {
      Real* Hk = H + k * D * D;
      for (int i = 0; i < D * D; ++i)
        Hk[i] += b * c_u * Kk[i];
    }
  }
};

}  // namespace slender
