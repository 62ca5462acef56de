#pragma once

// Resistive force theory (RFT) on one rod edge: the anisotropic drag of a slender body in a
// viscous or granular medium (Gray & Hancock; the usual model of snake and worm locomotion).
// A rod element of rest length l_bar moving with velocity v and tangent t feels
//   F = -l_bar [c_t (v . t) t + c_n (v - (v . t) t)] = -l_bar [c_n v + (c_t - c_n) (v . t) t],
// with c_t, c_n the tangential and normal drag coefficients per unit length [N s / m^2]. A
// snake moves forward when c_n > c_t. Here v = (u0 + u1) / 2 is the mean of the edge's node
// velocities, t = (x1 - x0) / l the current unit tangent, and each node receives F / 2.
// The velocity is the integrator's affine map of the unknown positions,
//   u_a = u_hat_a + c_u (x_a - q_hat_a),   dv/dx_b = c_u / 2 I.
// Local DOFs (6): [x0, x1], current node positions [m].
//
// Outputs, for a force without a potential (as the shell drag stencil):
// - g = -F split over the nodes (6 entries): g_a = l_bar / 2 [c_n v + k w t], k = c_t - c_n,
//   w = v . t;
// - H = dg/dx (6 x 6, NOT symmetric when c_t != c_n):
//   dg_a/dx_b = l_bar / 2 [c_n c_u / 2 I + k (c_u / 2 t t^T + s_b / l t (P v)^T + s_b w / l P)]
//   with P = I - t t^T, s_0 = -1, s_1 = +1 (dt/dx_b = s_b P / l);
// - E = 0: dissipative.

#include "slender/core/types.h"

namespace slender {

struct RodRft {
  static constexpr int kNodes = 2;
  static constexpr int kDofs = 6;
  struct Params {
    Vec3 u_hat[2];  ///< velocity offsets of the integrator, per node [m/s]
    Vec3 q_hat[2];  ///< position offsets of the integrator, per node [m]
    Real c_u;       ///< du/dx of the integrator [1/s]
    Real c_t, c_n;  ///< tangential and normal drag per unit length [N s/m^2]
    Real l_bar;     ///< rest length [m]
  };
};

/// Negated RFT forces (g) and, on request, their Jacobian (H, not symmetric) of one edge. E is
/// always 0. A zero-length edge (no tangent) gets zero g and H and the kDegenerate flag.
SLENDER_HD inline void rod_rft_eval(const Vec<6>& x,
                                    const RodRft::Params& p,
                                    unsigned want,
                                    LocalEval<6>& out) {
  out.flags = 0;
  out.E = 0;
  if (want == kEnergy) return;
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3);
  const Vec3 e = x1 - x0;
  const Real l = norm(e);
  if (!(l > 0)) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  const Vec3 t = e / l;
  const Vec3 u0 = p.u_hat[0] + p.c_u * (x0 - p.q_hat[0]);
  const Vec3 u1 = p.u_hat[1] + p.c_u * (x1 - p.q_hat[1]);
  const Vec3 v = 0.5 * (u0 + u1);
  const Real w = dot(v, t), k = p.c_t - p.c_n, h = 0.5 * p.l_bar;
  const Vec3 ga = h * (p.c_n * v + (k * w) * t);
  out.g.set_segment(0, ga);
  out.g.set_segment(3, ga);
  if (!(want & kHess)) return;
  const Mat3 P = Mat3::identity() - outer(t, t);
  const Vec3 Pv = P * v;
  out.H.set_zero();
  for (int b = 0; b < 2; ++b) {
    const Real s = b == 0 ? -1 : 1;
    Mat3 B = (0.5 * p.c_n * p.c_u) * Mat3::identity();
    B += (0.5 * k * p.c_u) * outer(t, t);
    B += (k * s / l) * outer(t, Pv);
    B += (k * s * w / l) * P;
    for (int a = 0; a < 2; ++a)
      out.H.add_block(3 * a, 3 * b, B, h);
  }
}

}  // namespace slender
