#pragma once

// seed 000 §4, eqs. (21)-(22), and seed 001 §III-B: the implicit contact model's (IMC) penalty
// energy of one contact pair, a function of the pair's distance Delta (contact_distance.h):
//   E(Delta) = k_c s^2,   s = softplus(z) / K1,   z = K1 (d - Delta),   K1 = 15 / delta,
// for Delta < d + delta, and E = 0 for Delta >= d + delta. d is the contact distance (2 r0
// rod-rod, r0 + h/2 rod-shell, h shell-shell), delta the tolerance and k_c [N/m] the stiffness
// (E [J], s [m]). With sigma the logistic function of z, by the chain rule (eq. 22),
//   E'  = dE/dDelta     = -2 k_c s sigma,
//   E'' = d2E/dDelta2   = 2 k_c (sigma^2 + K1 s sigma (1 - sigma)),
//   g = E' grad Delta,   H = E'' grad Delta grad Delta^T + E' Hess Delta,
// exact wherever Delta is smooth, i.e. within one closest-feature type of the pair (across a
// type change Delta and g are continuous and H jumps with Hess Delta).
//
// Eq. (21) and its junctions. Eq. (21) is piecewise: (d - Delta)^2 for Delta <= d - delta,
// (softplus(z) / K1)^2 between, 0 for Delta >= d + delta. Its pieces do NOT meet exactly:
// - at Delta = d - delta (z = 15) softplus(15) / K1 = delta (1 + 2.04e-8), so the quadratic
//   piece and the softplus piece differ by 4.1e-8 (relative) in E, 2.9e-7 in E' and 4.0e-6 in
//   E''. We therefore use the softplus form everywhere below d + delta: it is C-infinity there,
//   and below d - delta it differs from (d - Delta)^2 by at most that 4.1e-8 relative (s exceeds
//   d - Delta by log1p(exp(-z)) / K1 <= 2.04e-8 delta, decaying like exp(-z)), which is well
//   within the accuracy the model claims.
// - at Delta = d + delta (z = -15) the softplus form has not yet vanished: E = 4.2e-16 k_c
//   delta^2, E' = -1.25e-14 k_c delta and E'' = 3.7e-13 k_c drop to 0. These jumps are at the
//   rounding level of E, E' and E'' at the scale of contact (k_c delta^2, 2 k_c delta, 2 k_c),
//   so E is continuous and C1 to machine precision. The cut-off is kept, as in eq. (21),
//   because it makes far pairs cost nothing: they return zeros before any derivative work.
// The softplus and logistic are evaluated stably from t = exp(-|z|) in [0, 1] (no overflow).
//
// Stencils (local DOFs, node positions [m], as contact_distance.h):
//   imc_edge_edge_eval      (12): [a0, a1, b0, b1]
//   imc_point_triangle_eval (12): [p, t0, t1, t2]
//   imc_edge_triangle_eval  (15): [a0, a1, t0, t1, t2]
// Flags (out.flags) pass on the distance's bits: kDegenerate (a degenerate primitive fell back
// to a lower-dimensional feature; the derivatives are those of the fallback), kContactTouching
// (Delta <= kTinyLength: the pair has no direction, g = H = 0 although E' != 0; kDegenerate is
// set as well, since the derivatives are then not those of E) and kContactCrossing (edge-
// triangle only: the edge pierces the triangle, the true distance is 0 but Delta is the positive
// sub-pair minimum, so the penalty may push the wrong way; the caller must treat it). The flags
// are reported also for pairs out of range, which matters for kContactCrossing.

#include "slender/core/types.h"
#include "slender/stencils/contact_distance.h"

namespace slender {

/// Parameters of one IMC contact pair.
struct ImcParams {
  Real k_c;    ///< contact stiffness [N/m]: E = k_c s^2, s the smoothed penetration [m]
  Real d;      ///< contact distance [m]: 2 r0 rod-rod, r0 + h/2 rod-shell, h shell-shell
  Real delta;  ///< contact distance tolerance [m], > 0; K1 = 15 / delta
};

/// The IMC energy as a function of the distance Delta [m], with dE/dDelta and d2E/dDelta2 on
/// request (non-null pointers). Zero for Delta >= d + delta; a NaN Delta gives NaN.
SLENDER_HD inline Real imc_energy(Real Delta,
                                  const ImcParams& p,
                                  Real* dE = nullptr,
                                  Real* d2E = nullptr) {
  if (Delta >= p.d + p.delta) {
    if (dE) *dE = 0;
    if (d2E) *d2E = 0;
    return 0;
  }
  // stable softplus and logistic of z, t = exp(-|z|) in (0, 1]
  const Real K1 = 15 / p.delta;
  const Real z = K1 * (p.d - Delta);
  const Real t = ::exp(-::fabs(z));
  const Real sp = (z > 0 ? z : 0) + ::log1p(t);
  const Real sig = z > 0 ? 1 / (1 + t) : t / (1 + t);
  const Real s = sp / K1;
  if (dE) *dE = -2 * p.k_c * s * sig;
  // sigma (1 - sigma) = t / (1 + t)^2; t = 0 only when z overflowed, where sp may be inf
  if (d2E) *d2E = 2 * p.k_c * (sig * sig + (t > 0 ? sp * t / ((1 + t) * (1 + t)) : 0));
  return p.k_c * s * s;
}

namespace detail {

// the pair is out of range: E = 0 and zero derivatives, no derivative work; else false
template <int N>
SLENDER_HD inline bool imc_out_of_range(const ContactDistance& cd,
                                        const ImcParams& p,
                                        unsigned want,
                                        LocalEval<N>& out) {
  out.flags = cd.flags;
  if (!(cd.delta >= p.d + p.delta)) return false;
  out.E = 0;
  if (want != kEnergy) out.g.set_zero();
  if (want & kHess) out.H.set_zero();
  return true;
}

// E, g = E' grad Delta and H = E'' grad Delta grad Delta^T + E' Hess Delta (upper triangle
// mirrored, so that H is symmetric to the bit)
template <int N>
SLENDER_HD inline void imc_compose(const ContactDistance& cd,
                                   const ImcParams& p,
                                   unsigned want,
                                   const Vec<N>& gD,
                                   const Mat<N, N>& HD,
                                   LocalEval<N>& out) {
  Real e1, e2;
  out.E = imc_energy(cd.delta, p, &e1, &e2);
  out.flags = cd.flags;
  // touching: the distance has no gradient, so neither has E here
  if (cd.flags & kContactTouching) out.flags |= kDegenerate;
  if (want == kEnergy) return;
  out.g = e1 * gD;
  if (!(want & kHess)) return;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) {
      const Real v = e2 * gD[i] * gD[j] + e1 * HD(i, j);
      out.H(i, j) = v;
      out.H(j, i) = v;
    }
}

// the distance's want for the derivatives of E: the Hessian needs grad Delta too
SLENDER_HD inline unsigned imc_distance_want(unsigned want) {
  return want & kHess ? kGradHess : want;
}

}  // namespace detail

/// IMC energy and, on request, gradient and Hessian (12 x 12, symmetric) of an edge-edge pair,
/// local DOFs [a0, a1, b0, b1]. info, if given, receives the pair's closest features and Delta.
SLENDER_HD inline void imc_edge_edge_eval(const Vec<12>& x,
                                          const ImcParams& p,
                                          unsigned want,
                                          LocalEval<12>& out,
                                          ContactDistance* info = nullptr) {
  ContactDistance cd;
  edge_edge_distance(x, kEnergy, cd, nullptr, nullptr);
  if (info) *info = cd;
  if (detail::imc_out_of_range(cd, p, want, out)) return;
  Vec<12> gD = Vec<12>::zero();
  Mat<12, 12> HD;
  if (want != kEnergy) edge_edge_distance(x, detail::imc_distance_want(want), cd, &gD, &HD);
  detail::imc_compose(cd, p, want, gD, HD, out);
}

/// IMC energy and, on request, gradient and Hessian (12 x 12, symmetric) of a point-triangle
/// pair, local DOFs [p, t0, t1, t2]. info, if given, receives the closest features and Delta.
SLENDER_HD inline void imc_point_triangle_eval(const Vec<12>& x,
                                               const ImcParams& p,
                                               unsigned want,
                                               LocalEval<12>& out,
                                               ContactDistance* info = nullptr) {
  ContactDistance cd;
  point_triangle_distance(x, kEnergy, cd, nullptr, nullptr);
  if (info) *info = cd;
  if (detail::imc_out_of_range(cd, p, want, out)) return;
  Vec<12> gD = Vec<12>::zero();
  Mat<12, 12> HD;
  if (want != kEnergy) point_triangle_distance(x, detail::imc_distance_want(want), cd, &gD, &HD);
  detail::imc_compose(cd, p, want, gD, HD, out);
}

/// IMC energy and, on request, gradient and Hessian (15 x 15, symmetric) of an edge-triangle
/// pair, local DOFs [a0, a1, t0, t1, t2]. info, if given, receives the closest features and
/// Delta (w[0..4]). Check kContactCrossing in out.flags: a piercing edge is not repelled.
SLENDER_HD inline void imc_edge_triangle_eval(const Vec<15>& x,
                                              const ImcParams& p,
                                              unsigned want,
                                              LocalEval<15>& out,
                                              ContactDistance* info = nullptr) {
  ContactDistance cd;
  int pair;
  edge_triangle_distance(x, kEnergy, cd, pair, nullptr, nullptr);
  if (info) *info = cd;
  if (detail::imc_out_of_range(cd, p, want, out)) return;
  Vec<15> gD = Vec<15>::zero();
  Mat<15, 15> HD;
  if (want != kEnergy) {
    edge_triangle_distance(x, detail::imc_distance_want(want), cd, pair, &gD, &HD);
  }
  detail::imc_compose(cd, p, want, gD, HD, out);
}

}  // namespace slender
