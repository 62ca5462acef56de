#pragma once

// seed 000 §5.4, eq. (29) and Appendix B: quadratic aerodynamic drag on one shell triangle.
// Each node a = 0, 1, 2 of the triangle receives
//   F_a = -rho_med C_D A_bar / 6 sgn(s_a) s_a^2 n = -c s_a |s_a| n,   s_a = u_a . n,
// with n the unit normal of the current triangle, A_bar its rest area and c = rho_med C_D A_bar / 6
// (the 1/2 of dynamic pressure times a third of the area per node). A node's drag is the sum of
// these over the triangles sharing it; the assembly makes that sum, one stencil per triangle.
// The velocity is the integrator's affine map of the unknown positions,
//   u_a = u_hat_a + c_u (x_a - q_hat_a),   du_a/dx_b = c_u delta_ab I.
// Local DOFs (9): [x0, x1, x2], current node positions [m]; n points along
// N = (x1 - x0) x (x2 - x0). Flipping the orientation flips n and every s_a, so F is unchanged.
//
// Outputs, for a force without a potential:
// - g = -F (9 entries), so that it enters the Newton residual r = ... + g like an energy
//   gradient does (force = -g);
// - H = dg/dx (9 x 9), this term's block of the residual Jacobian. Unlike an energy Hessian it
//   is NOT symmetric (LocalEval documents H as symmetric; this stencil is the exception): the
//   assembly must store all of it and never mirror one triangle;
// - E = 0 always: drag is dissipative, and a merit function gets nothing from it.
//
// Jacobian (eq. 29 rewritten with sgn(s) s^2 = s |s|, whose derivative 2 |s| is continuous at
// s = 0, so the force is C1 in s and H has no jump when a node's normal velocity changes sign):
//   dg_a/dx_b = c [2 |s_a| n (c_u delta_ab n + Dn_b^T u_a)^T + s_a |s_a| Dn_b],
//   Dn_b = dn/dx_b = (I - n n^T) [d_b]x / |N|,   d_b = x_{b+2} - x_{b+1} (indices mod 3),
// d_b being the edge opposite node b, run in the orientation's order (Appendix B), and
// Dn_b^T u_a = w_a x d_b with w_a = (I - n n^T) u_a / |N|.

#include "slender/core/types.h"

namespace slender {

struct ShellDrag {
  static constexpr int kNodes = 3;
  static constexpr int kDofs = 9;
  /// below this sine of the angle at x0 the computed normal has lost its digits (its relative
  /// rounding error is about machine epsilon / sine), and the triangle counts as collapsed
  static constexpr Real kTinySine = 1e-12;
  struct Params {
    Vec3 u_hat[3];  ///< velocity offsets of the integrator, per node [m/s]
    Vec3 q_hat[3];  ///< position offsets of the integrator, per node [m]
    Real c_u;       ///< du/dx of the integrator [1/s]
    Real rho_med;   ///< density of the surrounding fluid [kg/m^3]
    Real C_D;       ///< drag coefficient [-]
    Real A_bar;     ///< rest area of the triangle [m^2]
  };
};

/// Negated drag forces (g) and, on request, their Jacobian (H, not symmetric) of one triangle.
/// E is always 0. A collapsed triangle (no normal) gets zero g and H and the kDegenerate flag.
SLENDER_HD inline void shell_drag_eval(const Vec<9>& x,
                                       const ShellDrag::Params& p,
                                       unsigned want,
                                       LocalEval<9>& out) {
  out.flags = 0;
  out.E = 0;
  if (want == kEnergy) return;

  // normal of the current triangle; coincident or collinear nodes have none
  const Vec3 xs[3] = {x.segment<3>(0), x.segment<3>(3), x.segment<3>(6)};
  const Vec3 e1 = xs[1] - xs[0], e2 = xs[2] - xs[0];
  const Vec3 N = cross(e1, e2);
  const Real nN = norm(N);
  if (!(nN > ShellDrag::kTinySine * norm(e1) * norm(e2))) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  const Vec3 n = N / nN;
  const Real c = p.rho_med * p.C_D * p.A_bar / 6;

  // g_a = -F_a = c s_a |s_a| n
  Vec3 u[3];
  Real s[3];
  for (int a = 0; a < 3; ++a) {
    u[a] = p.u_hat[a] + p.c_u * (xs[a] - p.q_hat[a]);
    s[a] = dot(u[a], n);
    out.g.set_segment(3 * a, (c * s[a] * ::fabs(s[a])) * n);
  }
  if (!(want & kHess)) return;

  // Dn_b = (I - n n^T) [d_b]x / |N|, d_b the edge opposite node b
  const Mat3 P = Mat3::identity() - outer(n, n);
  Vec3 d[3];
  Mat3 Dn[3];
  for (int b = 0; b < 3; ++b) {
    d[b] = xs[(b + 2) % 3] - xs[(b + 1) % 3];
    Dn[b] = (1 / nN) * (P * skew(d[b]));
  }

  // dg_a/dx_b = c [2 |s_a| n (ds_a/dx_b)^T + s_a |s_a| Dn_b], ds_a/dx_b = c_u delta_ab n + w_a x
  // d_b
  out.H.set_zero();
  for (int a = 0; a < 3; ++a) {
    const Real abs_s = ::fabs(s[a]);
    const Vec3 w = (P * u[a]) / nN;
    for (int b = 0; b < 3; ++b) {
      Vec3 ds = cross(w, d[b]);
      if (a == b) ds += p.c_u * n;
      out.H.add_block(3 * a, 3 * b, outer(n, ds), 2 * c * abs_s);
      out.H.add_block(3 * a, 3 * b, Dn[b], c * s[a] * abs_s);
    }
  }
}

}  // namespace slender
