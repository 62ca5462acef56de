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

// The parts of one hinge's gradient and reduced Hessian (9 x 9 in e, a, b). The Hessian is
// made entry by entry, each entry the same sum in the same order as the matrices it was once
// assembled from (w_S Hess S, w_C Hess C and the outer products of grad S, grad C and
// grad phi), so that its bits are theirs. On the device the gradient and the Hessian are calls
// of their own over these parts and the entries are made in rolled loops: the parts stay in the
// thread's local memory and the registers hold one entry's working set (issue 48: the hinge
// kernel spilled 2,644 bytes when it held the matrices whole). The library's GCC build unrolls
// and inlines them whole (hd.h).
struct HingeParts {
  Real v[9];     // e, a, b
  Real t[3];     // e / l
  Real l, T;     // |e|, e . (a x b)
  Real gl[9];    // grad l
  Real gT[9];    // grad T
  Real gS[9];    // grad S
  Real gC[9];    // grad C
  Real gphi[9];  // grad phi
  // grad p, q, r, s of C = p q - s r (p = e . a, q = e . b, r = a . b, s = e . e)
  Real gp[9], gq[9], gr[9], gs[9];
  Real p, q, r, s;
  Real wS, wC;         // the weights of Hess S and Hess C: kb dphi C / R, -kb dphi S / R
  Real cSC, cSS, cCC;  // those of grad S grad C^T (symmetrized), grad S grad S^T, grad C grad C^T
  Real kb;             // that of grad phi grad phi^T
};

// entry (i, j) of the reduced Hessian: w_S Hess S, S = -l T (blocks ordered e, a, b; Hess l =
// (I - t t^T) / l in the e block; Hess T has blocks (e, a) = -[b]x, (e, b) = [a]x, (a, b) =
// -[e]x and their transposes); then w_C Hess C (the products of p's, q's, r's and s's first
// derivatives and their constant identity blocks); then the outer products
SLENDER_HD SLENDER_ENTRY_INLINE Real hinge_hess_entry(const HingeParts& h, int i, int j) {
  const int bi = i / 3, bj = j / 3, r = i % 3, c = j % 3;
  Real H = 0;
  // w_S Hess S
  if (bi == 0 && bj == 0) H -= h.wS * h.T / h.l * ((r == c ? 1 : 0) - h.t[r] * h.t[c]);
  H += -h.wS * (h.gl[i] * h.gT[j] + h.gT[i] * h.gl[j]);
  if (bi != bj) {
    // -l Hess T: (e, a) s [b]x, (a, e) -s [b]x, (e, b) -s [a]x, (b, e) s [a]x, (a, b) s [e]x,
    // (b, a) -s [e]x with s = w_S l: the skew matrix of the third vector
    const Real s = h.wS * h.l;
    const bool plus = (bi == 0 && bj == 1) || (bi == 2 && bj == 0) || (bi == 1 && bj == 2);
    H += (plus ? s : -s) * skew_entry(h.v + 3 * (3 - bi - bj), r, c);
  }
  // w_C Hess C
  H += h.wC * (h.gp[i] * h.gq[j] + h.gq[i] * h.gp[j]);
  H += -h.wC * (h.gr[i] * h.gs[j] + h.gs[i] * h.gr[j]);
  if (r == c) {
    if ((bi == 0 && bj == 1) || (bi == 1 && bj == 0)) H += h.wC * h.q;
    if ((bi == 0 && bj == 2) || (bi == 2 && bj == 0)) H += h.wC * h.p;
    if (bi == 0 && bj == 0) H += -2 * h.wC * h.r;
    if ((bi == 1 && bj == 2) || (bi == 2 && bj == 1)) H += -h.wC * h.s;
  }
  // the outer products
  H += h.cSC * (h.gS[i] * h.gC[j] + h.gC[i] * h.gS[j]);
  H += h.cSS * h.gS[i] * h.gS[j];
  H += h.cCC * h.gC[i] * h.gC[j];
  H += h.kb * h.gphi[i] * h.gphi[j];
  return H;
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
  SLENDER_ROLL_ON_DEVICE
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

// the gradients of l, T, S, C, phi and of C's products into the parts, and the stencil's
// gradient kb dphi grad phi; out of line on the device. (phi = atan2(S, C); T = e . (a x b),
// S = -l T; C = m_A . m_B = e . (a x m_B) + e . (m_A x b) = a . (m_B x e) = b . (e x m_A).)
SLENDER_HD inline SLENDER_OUTLINED_ON_DEVICE void hinge_grad(
    HingeParts& h, const Vec3& mA, const Vec3& mB, Real S, Real C, Real dphi, Vec<12>& g) {
  const Vec3 e = vec3(h.v[0], h.v[1], h.v[2]), a = vec3(h.v[3], h.v[4], h.v[5]),
             b = vec3(h.v[6], h.v[7], h.v[8]);
  const Real l = h.l, T = h.T;
  Vec<9> gl = Vec<9>::zero(), gT, gS, gC;
  const Vec3 t = e / l;
  gl.set_segment(0, t);
  gT.set_segment(0, cross(a, b));
  gT.set_segment(3, cross(b, e));
  gT.set_segment(6, cross(e, a));
  gS = (-T) * gl - l * gT;
  gC.set_segment(0, cross(a, mB) + cross(mA, b));
  gC.set_segment(3, cross(mB, e));
  gC.set_segment(6, cross(e, mA));
  const Real R = S * S + C * C;
  const Vec<9> gphi = (C / R) * gS - (S / R) * gC;
  hinge_expand_grad((h.kb * dphi) * gphi, g);
  for (int i = 0; i < 3; ++i)
    h.t[i] = t[i];
  for (int i = 0; i < 9; ++i) {
    h.gl[i] = gl[i];
    h.gT[i] = gT[i];
    h.gS[i] = gS[i];
    h.gC[i] = gC[i];
    h.gphi[i] = gphi[i];
  }
  // kb (grad phi grad phi^T + dphi Hess phi), Hess phi from the atan2 form in the header
  const Real w = h.kb * dphi;
  h.wS = w * C / R;
  h.wC = -w * S / R;
  const Real R2 = R * R;
  h.cSC = w * (S * S - C * C) / R2;
  h.cSS = -2 * w * S * C / R2;
  h.cCC = 2 * w * S * C / R2;
}

// the reduced Hessian entry by entry (hinge_hess_entry) and the stencil's Hessian; out of line
// on the device
SLENDER_HD inline SLENDER_OUTLINED_ON_DEVICE void hinge_hess(HingeParts& h, Mat<12, 12>& H) {
  const Vec3 e = vec3(h.v[0], h.v[1], h.v[2]), a = vec3(h.v[3], h.v[4], h.v[5]),
             b = vec3(h.v[6], h.v[7], h.v[8]);
  h.p = dot(e, a);
  h.q = dot(e, b);
  h.r = dot(a, b);
  h.s = dot(e, e);
  Vec<9> gp = Vec<9>::zero(), gq = Vec<9>::zero(), gr = Vec<9>::zero(), gs = Vec<9>::zero();
  gp.set_segment(0, a);
  gp.set_segment(3, e);
  gq.set_segment(0, b);
  gq.set_segment(6, e);
  gr.set_segment(3, b);
  gr.set_segment(6, a);
  gs.set_segment(0, 2 * e);
  for (int i = 0; i < 9; ++i) {
    h.gp[i] = gp[i];
    h.gq[i] = gq[i];
    h.gr[i] = gr[i];
    h.gs[i] = gs[i];
  }
  Mat<9, 9> Hr;
  fill_by_entry(Hr, [&](int i, int j) { return hinge_hess_entry(h, i, j); });
  hinge_expand_hess(Hr, H);
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

  // first derivatives in (e, a, b): T = e . (a x b), S = -l T, l = |e| (the rest from the
  // stencil's parts, detail::HingeParts, out of line on the device)
  detail::HingeParts hp;
  for (int i = 0; i < 3; ++i) {
    hp.v[i] = h.e[i];
    hp.v[3 + i] = h.a[i];
    hp.v[6 + i] = h.b[i];
  }
  hp.l = h.l;
  hp.T = -S / h.l;
  hp.kb = p.kb;
  detail::hinge_grad(hp, h.mA, h.mB, S, C, dphi, out.g);
  if (!(want & kHess)) return;
  detail::hinge_hess(hp, out.H);
}

/// The gradient of the hinge's angle phi (zeros for a degenerate hinge): the stencil's gradient
/// with kb = 1 and phi_bar = phi - 1, since E is quadratic in phi - phi_bar.
SLENDER_HD inline void shell_hinge_angle_grad(const Vec<12>& x, Vec<12>& g) {
  LocalEval<12> r;
  shell_hinge_eval(x, ShellHinge::Params{1, shell_hinge_angle(x) - 1}, kGrad, r);
  g = r.g;
}

}  // namespace slender
