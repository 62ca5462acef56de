#pragma once

// seed 000, §3.3.1, eq. (17): hinge bending energy of a discrete shell,
//   E = 1/2 kb (phi - phi_bar)^2,
// phi the signed dihedral angle between the normals of the two triangles that share a hinge
// edge (Baraff and Witkin; Grinspun et al. for a non-zero natural angle phi_bar).
// Local DOFs (12): [x0, x1, x2, x3], node positions [m]. The hinge edge runs x0 -> x1; triangle
// A = (x0, x1, x2) and triangle B = (x1, x0, x3) are oriented alike, so a flat hinge has
//   n_A = (x1 - x0) x (x2 - x0) / |..| = n_B = (x0 - x1) x (x3 - x1) / |..|   and phi = 0.
//
// Sign: phi = atan2((n_A x n_B) . t, n_A . n_B) in (-pi, pi] with t = (x1 - x0) / |x1 - x0|,
// the angle by which n_A turns into n_B about t. It is positive where the hinge is a ridge seen
// from the side the normals point to (both wings fold away from their normals) and negative
// for a valley. Swapping x0 <-> x1 together with x2 <-> x3 leaves phi unchanged. atan2 wraps at
// phi = +-pi (a hinge folded flat onto itself), so the energy is smooth only away from there:
// the stencil is meant for |phi - phi_bar| < pi, and |phi| well below pi.
//
// Derivatives. With e = x1 - x0, a = x2 - x0, b = x3 - x1 and l = |e|, the unnormalised normals
// are m_A = e x a and m_B = b x e. Dropping their common positive factor 1 / (|m_A| |m_B|),
//   phi = atan2(S, C),   S = (m_A x m_B) . e / l = -l e . (a x b),   C = m_A . m_B,
// with S^2 + C^2 = R = |m_A|^2 |m_B|^2 and C = (e . a)(e . b) - (e . e)(a . b). Then
//   grad phi = (C grad S - S grad C) / R,
//   Hess phi = (C Hess S - S Hess C) / R
//            + ((S^2 - C^2) (grad S grad C^T + grad C grad S^T)
//               - 2 S C (grad S grad S^T - grad C grad C^T)) / R^2,
// exact in the reduced coordinates (e, a, b), which map linearly to the nodes. This agrees with
// the classic closed forms dphi/dx2 = -l m_A / |m_A|^2 and dphi/dx3 = -l m_B / |m_B|^2 (minus
// the normal over the height of the wing tip above the hinge line).

#include "slender/core/types.h"

namespace slender {

struct ShellHinge {
  static constexpr int kNodes = 4;
  static constexpr int kDofs = 12;
  struct Params {
    Real kb;       ///< bending stiffness [N m]
    Real phi_bar;  ///< natural dihedral angle [rad], same sign convention as phi
  };
};

namespace detail {

// reduced coordinates of a hinge: the edge e = x1 - x0 and the wing edges a = x2 - x0 and
// b = x3 - x1 (the ones that enter m_A = e x a and m_B = b x e)
struct HingeEdges {
  Vec3 e, a, b, mA, mB;
  Real l;
};

SLENDER_HD inline HingeEdges hinge_edges(const Vec<12>& x) {
  HingeEdges h;
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3);
  h.e = x1 - x0;
  h.a = x.segment<3>(6) - x0;
  h.b = x.segment<3>(9) - x1;
  h.mA = cross(h.e, h.a);
  h.mB = cross(h.b, h.e);
  h.l = norm(h.e);
  return h;
}

// a zero-length hinge or a wing whose tip lies on the hinge line (zero area, or a sine of the
// angle between hinge and wing edge below 1e-12) has no normal
SLENDER_HD inline bool hinge_degenerate(const HingeEdges& h) {
  return !(h.l > kTinyLength && norm(h.mA) > Real(1e-12) * h.l * norm(h.a) &&
           norm(h.mB) > Real(1e-12) * h.l * norm(h.b));
}

SLENDER_HD inline void add_scaled_identity(Mat<9, 9>& H, int i, int j, Real s) {
  for (int k = 0; k < 3; ++k)
    H(i + k, j + k) += s;
}

// H += w Hess S, S = -l T with the triple product T = e . (a x b); blocks ordered (e, a, b)
SLENDER_HD inline void hinge_add_hess_s(
    Mat<9, 9>& H, const HingeEdges& h, Real T, const Vec<9>& gl, const Vec<9>& gT, Real w) {
  // -T Hess l, Hess l = (I - t t^T) / l in the e block
  const Vec3 t = h.e / h.l;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      H(i, j) -= w * T / h.l * ((i == j ? 1 : 0) - t[i] * t[j]);
  // -(grad l grad T^T + grad T grad l^T)
  add_sym_outer(H, gl, gT, -w);
  // -l Hess T; Hess T has blocks (e,a) = -[b]x, (e,b) = [a]x, (a,b) = -[e]x and their transposes
  const Real s = w * h.l;
  const Mat3 Ka = skew(h.a), Kb = skew(h.b), Ke = skew(h.e);
  H.add_block(0, 3, Kb, s);
  H.add_block(3, 0, Kb, -s);
  H.add_block(0, 6, Ka, -s);
  H.add_block(6, 0, Ka, s);
  H.add_block(3, 6, Ke, s);
  H.add_block(6, 3, Ke, -s);
}

// H += w Hess C, C = p q - s r with p = e . a, q = e . b, r = a . b, s = e . e
SLENDER_HD inline void hinge_add_hess_c(Mat<9, 9>& H, const HingeEdges& h, Real w) {
  const Real p = dot(h.e, h.a), q = dot(h.e, h.b), r = dot(h.a, h.b), s = dot(h.e, h.e);
  Vec<9> gp = Vec<9>::zero(), gq = Vec<9>::zero(), gr = Vec<9>::zero(), gs = Vec<9>::zero();
  gp.set_segment(0, h.a);
  gp.set_segment(3, h.e);
  gq.set_segment(0, h.b);
  gq.set_segment(6, h.e);
  gr.set_segment(3, h.b);
  gr.set_segment(6, h.a);
  gs.set_segment(0, 2 * h.e);
  // products of first derivatives
  add_sym_outer(H, gp, gq, w);
  add_sym_outer(H, gr, gs, -w);
  // second derivatives of p, q, r, s are constant identity blocks
  add_scaled_identity(H, 0, 3, w * q);
  add_scaled_identity(H, 3, 0, w * q);
  add_scaled_identity(H, 0, 6, w * p);
  add_scaled_identity(H, 6, 0, w * p);
  add_scaled_identity(H, 0, 0, -2 * w * r);
  add_scaled_identity(H, 3, 6, -w * s);
  add_scaled_identity(H, 6, 3, -w * s);
}

// coefficient of node n in reduced vector k: e = x1 - x0, a = x2 - x0, b = x3 - x1
SLENDER_HD inline Real hinge_map(int k, int n) {
  const Real m[3][4] = {{-1, 1, 0, 0}, {-1, 0, 1, 0}, {0, -1, 0, 1}};
  return m[k][n];
}

// expand a reduced (e, a, b) gradient to the 12 local DOFs
SLENDER_HD inline void hinge_expand_grad(const Vec<9>& gr, Vec<12>& g) {
  for (int n = 0; n < 4; ++n)
    for (int i = 0; i < 3; ++i) {
      Real v = 0;
      for (int k = 0; k < 3; ++k)
        v += hinge_map(k, n) * gr[3 * k + i];
      g[3 * n + i] = v;
    }
}

// expand a reduced Hessian: H_x = M^T H_r M with x0 = -e - a, x1 = e - b, x2 = a, x3 = b (the
// nodes' coefficients). Each entry sums the at most four reduced entries its two nodes enter, in
// the order (e, a, b) of the row node, then of the column node: the order of the sum over all
// of M's entries that skips the zeros, written out (a loop over M's entries was half of a
// shell scene's stencil time)
SLENDER_HD inline void hinge_expand_hess(const Mat<9, 9>& Hr, Mat<12, 12>& H) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Real EE = Hr(i, j), EA = Hr(i, 3 + j), EB = Hr(i, 6 + j);
      const Real AE = Hr(3 + i, j), AA = Hr(3 + i, 3 + j), AB = Hr(3 + i, 6 + j);
      const Real BE = Hr(6 + i, j), BA = Hr(6 + i, 3 + j), BB = Hr(6 + i, 6 + j);
      H(i, j) = EE + EA + AE + AA;
      H(i, 3 + j) = -EE + EB - AE + AB;
      H(i, 6 + j) = -EA - AA;
      H(i, 9 + j) = -EB - AB;
      H(3 + i, j) = -EE - EA + BE + BA;
      H(3 + i, 3 + j) = EE - EB - BE + BB;
      H(3 + i, 6 + j) = EA - BA;
      H(3 + i, 9 + j) = EB - BB;
      H(6 + i, j) = -AE - AA;
      H(6 + i, 3 + j) = AE - AB;
      H(6 + i, 6 + j) = AA;
      H(6 + i, 9 + j) = AB;
      H(9 + i, j) = -BE - BA;
      H(9 + i, 3 + j) = BE - BB;
      H(9 + i, 6 + j) = BA;
      H(9 + i, 9 + j) = BB;
    }
}

}  // namespace detail

/// Signed dihedral angle phi of a hinge [rad], in (-pi, pi]; 0 for a degenerate hinge.
SLENDER_HD inline Real shell_hinge_angle(const Vec<12>& x) {
  const detail::HingeEdges h = detail::hinge_edges(x);
  if (detail::hinge_degenerate(h)) return 0;
  return ::atan2(dot(cross(h.mA, h.mB), h.e) / h.l, dot(h.mA, h.mB));
}

/// Energy and, on request, gradient and Hessian of one hinge bending stencil. A degenerate
/// hinge (zero-length edge, zero-area wing) gives zeros and the kDegenerate flag.
SLENDER_HD inline void shell_hinge_eval(const Vec<12>& x,
                                        const ShellHinge::Params& p,
                                        unsigned want,
                                        LocalEval<12>& out) {
  out.flags = 0;
  const detail::HingeEdges h = detail::hinge_edges(x);
  if (detail::hinge_degenerate(h)) {
    out.E = 0;
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }

  // phi = atan2(S, C); S from the normals rather than the triple product, for accuracy
  const Real S = dot(cross(h.mA, h.mB), h.e) / h.l;
  const Real C = dot(h.mA, h.mB);
  const Real dphi = ::atan2(S, C) - p.phi_bar;
  out.E = Real(0.5) * p.kb * dphi * dphi;
  if (want == kEnergy) return;

  // first derivatives in (e, a, b): T = e . (a x b), S = -l T, l = |e|
  const Real T = -S / h.l;
  Vec<9> gl = Vec<9>::zero(), gT, gS, gC;
  gl.set_segment(0, h.e / h.l);
  gT.set_segment(0, cross(h.a, h.b));
  gT.set_segment(3, cross(h.b, h.e));
  gT.set_segment(6, cross(h.e, h.a));
  gS = (-T) * gl - h.l * gT;
  // C = m_A . m_B = e . (a x m_B) + e . (m_A x b) = a . (m_B x e) = b . (e x m_A)
  gC.set_segment(0, cross(h.a, h.mB) + cross(h.mA, h.b));
  gC.set_segment(3, cross(h.mB, h.e));
  gC.set_segment(6, cross(h.e, h.mA));

  const Real R = S * S + C * C;
  const Vec<9> gphi = (C / R) * gS - (S / R) * gC;
  detail::hinge_expand_grad((p.kb * dphi) * gphi, out.g);
  if (!(want & kHess)) return;

  // kb (grad phi grad phi^T + dphi Hess phi), Hess phi from the atan2 form in the header
  const Real w = p.kb * dphi;
  Mat<9, 9> Hr = Mat<9, 9>::zero();
  detail::hinge_add_hess_s(Hr, h, T, gl, gT, w * C / R);
  detail::hinge_add_hess_c(Hr, h, -w * S / R);
  const Real R2 = R * R;
  add_sym_outer(Hr, gS, gC, w * (S * S - C * C) / R2);
  add_outer(Hr, gS, -2 * w * S * C / R2);
  add_outer(Hr, gC, 2 * w * S * C / R2);
  add_outer(Hr, gphi, p.kb);
  detail::hinge_expand_hess(Hr, out.H);
}

/// The gradient of the hinge's angle phi (zeros for a degenerate hinge): the stencil's gradient
/// with kb = 1 and phi_bar = phi - 1, since E is quadratic in phi - phi_bar.
SLENDER_HD inline void shell_hinge_angle_grad(const Vec<12>& x, Vec<12>& g) {
  LocalEval<12> r;
  shell_hinge_eval(x, ShellHinge::Params{1, shell_hinge_angle(x) - 1}, kGrad, r);
  g = r.g;
}

}  // namespace slender
