#pragma once

// seed 000, eqs. (9)-(10): axial stretching of one rod edge,
//   E = 1/2 EA l_bar (l / l_bar - 1)^2,
// or (alpha != 0) the one-term Ogden law of seed 004, eq. 12 (neo-Hookean for alpha = 2).
// Local DOFs (6): [x0, x1], node positions [m]; the edge runs x0 -> x1.

#include <cmath>

#include "slender/core/types.h"

namespace slender {

struct RodStretch {
  static constexpr int kNodes = 2;
  static constexpr int kDofs = 6;
  struct Params {
    Real EA;         ///< axial stiffness [N] (at small strain)
    Real l_bar;      ///< rest length [m]
    Real alpha = 0;  ///< 0: Hookean; else the exponent of the one-term Ogden law (2: neo-Hookean)
  };
};

/// E(l) of one stretching stencil and dE/dl (f1, the tension), d2E/dl2 (f2): Hookean,
/// E = EA l_bar eps^2 / 2, or the incompressible one-term Ogden law in uniaxial stretch
/// lambda = l / l_bar, per rest length: W = 2 EA / (3 alpha^2) (lambda^alpha +
/// 2 lambda^(-alpha/2) - 3) (Bartholdt et al., seed 004, eq. 12, with EA their EA c_e), whose
/// small-strain stiffness is EA
SLENDER_HD inline Real rod_stretch_energy(Real l, const RodStretch::Params& p, Real& f1, Real& f2) {
  const Real eps = l / p.l_bar - 1;
  if (p.alpha == 0) {
    f1 = p.EA * eps;
    f2 = p.EA / p.l_bar;
    return Real(0.5) * p.EA * p.l_bar * eps * eps;
  }
  const Real lam = l / p.l_bar, C = 2 * p.EA / (3 * p.alpha * p.alpha);
  const Real la = ::pow(lam, p.alpha), lb = ::pow(lam, -p.alpha / 2);
  f1 = C * p.alpha * (la - lb) / lam;
  f2 = C * p.alpha * ((p.alpha - 1) * la + (p.alpha / 2 + 1) * lb) / (lam * lam * p.l_bar);
  return p.l_bar * C * (la + 2 * lb - 3);
}

/// The axial strain l / l_bar - 1 of one edge at the local DOFs x [-].
SLENDER_HD inline Real rod_stretch_strain(const Vec<6>& x, Real l_bar) {
  const Vec3 e = x.segment<3>(3) - x.segment<3>(0);
  return norm(e) / l_bar - 1;
}

/// Energy and, on request, gradient and Hessian of one stretching stencil.
SLENDER_HD inline void rod_stretch_eval(const Vec<6>& x,
                                        const RodStretch::Params& p,
                                        unsigned want,
                                        LocalEval<6>& out) {
  out.flags = 0;
  const Vec3 e = x.segment<3>(3) - x.segment<3>(0);
  const Real l = norm(e);
  // the energy E(l) and its derivatives f1 = dE/dl (the tension), f2 = d2E/dl2
  Real f1, f2;
  out.E = rod_stretch_energy(l, p, f1, f2);
  if (want == kEnergy) return;

  // zero-length edge: no direction; report instead of dividing by zero
  if (!(l > kTinyLength)) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }

  // dE/dx1 = f1 t, dE/dx0 = -dE/dx1
  const Vec3 t = e / l;
  const Vec3 g1 = f1 * t;
  out.g.set_segment(0, -g1);
  out.g.set_segment(3, g1);
  if (!(want & kHess)) return;

  // K = f2 t t^T + f1 / l (I - t t^T)
  const Real a = f2, b = f1 / l;
  Mat3 K;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      K(i, j) = (a - b) * t[i] * t[j] + (i == j ? b : 0);
  out.H.set_zero();
  out.H.add_block(0, 0, K);
  out.H.add_block(3, 3, K);
  out.H.add_block(0, 3, K, -1);
  out.H.add_block(3, 0, K, -1);
}

/// The divided difference D = (s1^p - s0^p) / (s1 - s0) of a power and dD/ds1, from s0 > 0 and
/// hs = s1 - s0 (given, so that a small step keeps its digits): with t = hs / s0,
/// D = s0^(p-1) q(t), q = ((1 + t)^p - 1) / t, and dD/ds1 = s0^(p-2) r(t),
/// r = (p (1 + t)^(p-1) - q) / t, their Taylor series below |t| = 1e-3 (truncated after t^3:
/// 1e-12 relative), else expm1 and log1p (round-off of eps / |t|, below 2e-13).
SLENDER_HD inline void pow_divided_difference(Real s0, Real hs, Real p, Real& D, Real& dD) {
  const Real t = hs / s0;
  Real q, r;
  if (::fabs(t) < Real(1e-3)) {
    const Real a1 = p - 1, a2 = p - 2, a3 = p - 3, a4 = p - 4;
    q = p * (1 + t * (a1 / 2 + t * (a1 * a2 / 6 + t * a1 * a2 * a3 / 24)));
    r = p * a1 * (Real(0.5) + t * (a2 / 3 + t * (a2 * a3 / 8 + t * a2 * a3 * a4 / 30)));
  } else {
    const Real lg = ::log1p(t);
    q = ::expm1(p * lg) / t;
    r = (p * ::exp((p - 1) * lg) - q) / t;
  }
  D = ::pow(s0, p - 1) * q;
  dD = ::pow(s0, p - 2) * r;
}

/// The energy-momentum stretching force of the implicit midpoint rule over a step (Simo and
/// Tarnow's secant in s = l^2, which is quadratic in the positions): with x the stencil at the
/// step's midpoint and x0 at its start, the edge vectors e_m, e_0 and e_1 = 2 e_m - e_0 (the
/// end), s_k = |e_k|^2 and
///   psi = (E(l_1) - E(l_0)) / (s_1 - s_0),      dE/dx_1 = 2 psi e_m = -dE/dx_0,
/// whose work over the step, 2 psi e_m . (e_1 - e_0) = psi (s_1 - s_0), is the change of E
/// exactly, for either law, and which is central (momentum and angular momentum kept). The
/// pointwise midpoint force E'(l_m) e_m / l_m is not: stiff springs that rotate within a step
/// then feed energy into the motion (S3, the helix of DisMech, gained 40 % of its energy in
/// 9 s at dt = 6 ms and its Newton iteration failed). Both laws are sums of powers of s, so psi
/// and dpsi/ds_1 are sums of the powers' divided differences, exact for a step of any size:
/// Hookean E = EA / (2 l_bar) (s - 2 l_bar s^(1/2) + l_bar^2), Ogden
/// E = l_bar C (l_bar^-alpha s^(alpha/2) + 2 l_bar^(alpha/2) s^(-alpha/4) - 3).
/// H is the exact Jacobian, blocks +-(8 psi' e_m e_1^T + 2 psi I) (psi' = dpsi/ds_1): not
/// symmetric (the force is no potential's gradient), so a model with rod edges solves the
/// midpoint rule's Jacobian as a general one (banded LU, the rods' default, is unchanged; its
/// symmetric part alone made Newton fail on stiff helices). E is E(l_m), the energy at the
/// midpoint.
SLENDER_HD inline void rod_stretch_em_eval(const Vec<6>& x,
                                           const Vec<6>& x0,
                                           const RodStretch::Params& p,
                                           unsigned want,
                                           LocalEval<6>& out) {
  out.flags = 0;
  const Vec3 em = x.segment<3>(3) - x.segment<3>(0);
  const Vec3 e0 = x0.segment<3>(3) - x0.segment<3>(0);
  const Vec3 de = 2 * (em - e0);  // e_1 - e_0
  const Vec3 e1 = e0 + de;
  const Real s0 = dot(e0, e0), s1 = dot(e1, e1), hs = dot(de, e1 + e0);
  Real f1, f2;
  out.E = rod_stretch_energy(::sqrt(dot(em, em)), p, f1, f2);
  if (want == kEnergy) return;
  // a zero-length edge at either end: no secant; report instead of dividing by zero
  if (!(s0 > kTinyLength * kTinyLength) || !(s1 > kTinyLength * kTinyLength)) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  // psi and dpsi / ds_1 from the laws' powers of s
  Real psi, dpsi, D, dD;
  if (p.alpha == 0) {
    pow_divided_difference(s0, hs, Real(0.5), D, dD);
    psi = p.EA / (2 * p.l_bar) * (1 - 2 * p.l_bar * D);
    dpsi = -p.EA * dD;
  } else {
    const Real C = 2 * p.EA / (3 * p.alpha * p.alpha);
    const Real c1 = p.l_bar * C * ::pow(p.l_bar, -p.alpha);
    const Real c2 = 2 * p.l_bar * C * ::pow(p.l_bar, p.alpha / 2);
    pow_divided_difference(s0, hs, p.alpha / 2, D, dD);
    psi = c1 * D;
    dpsi = c1 * dD;
    pow_divided_difference(s0, hs, -p.alpha / 4, D, dD);
    psi += c2 * D;
    dpsi += c2 * dD;
  }
  const Vec3 g1 = (2 * psi) * em;
  out.g.set_segment(0, -g1);
  out.g.set_segment(3, g1);
  if (!(want & kHess)) return;

  // K = 8 psi' e_m e_1^T + 2 psi I, the block of dg/dx_1 in x_1
  Mat3 K;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      K(i, j) = 8 * dpsi * em[i] * e1[j] + (i == j ? 2 * psi : 0);
  out.H.set_zero();
  out.H.add_block(0, 0, K);
  out.H.add_block(3, 3, K);
  out.H.add_block(0, 3, K, -1);
  out.H.add_block(3, 0, K, -1);
}

/// The derivative of rod_stretch_em_eval's gradient by the step's start x0 at a fixed midpoint x
/// (the adjoint's term, engine/adjoint.h): g_1 = 2 psi(s_0, s_1) e_m with e_1 = 2 e_m - e_0, so
/// dg_1/de_0 = 2 e_m (2 psi_0 e_0 - 2 psi_1 e_1)^T, psi_k = dpsi/ds_k (the divided difference
/// is symmetric in its ends: psi_0 is psi_1 with the ends swapped), and e_0 = x0_b - x0_a. D is
/// dg/dx0 (6 x 6, row: the gradient's entry); false (D zero) where rod_stretch_em_eval reports a
/// degenerate edge.
SLENDER_HD inline bool rod_stretch_em_start_derivative(const Vec<6>& x,
                                                       const Vec<6>& x0,
                                                       const RodStretch::Params& p,
                                                       Mat<6, 6>& D) {
  D.set_zero();
  const Vec3 em = x.segment<3>(3) - x.segment<3>(0);
  const Vec3 e0 = x0.segment<3>(3) - x0.segment<3>(0);
  const Vec3 de = 2 * (em - e0);
  const Vec3 e1 = e0 + de;
  const Real s0 = dot(e0, e0), s1 = dot(e1, e1), hs = dot(de, e1 + e0);
  if (!(s0 > kTinyLength * kTinyLength) || !(s1 > kTinyLength * kTinyLength)) return false;
  // dpsi/ds_1 from s_0 and dpsi/ds_0 from s_1 (the same sums of the powers' divided differences)
  auto dpsi_far = [&](Real sa, Real h) {  // (h: the far end's s less sa)
    Real Dd, dD;
    if (p.alpha == 0) {
      pow_divided_difference(sa, h, Real(0.5), Dd, dD);
      return -p.EA * dD;
    }
    const Real C = 2 * p.EA / (3 * p.alpha * p.alpha);
    const Real c1 = p.l_bar * C * ::pow(p.l_bar, -p.alpha);
    const Real c2 = 2 * p.l_bar * C * ::pow(p.l_bar, p.alpha / 2);
    pow_divided_difference(sa, h, p.alpha / 2, Dd, dD);
    Real r = c1 * dD;
    pow_divided_difference(sa, h, -p.alpha / 4, Dd, dD);
    return r + c2 * dD;
  };
  const Real psi1 = dpsi_far(s0, hs), psi0 = dpsi_far(s1, -hs);
  const Vec3 c = 2 * psi0 * e0 - 2 * psi1 * e1;  // dpsi/de_0
  // dg_1/de_0 = 2 e_m c^T; g = (-g_1, g_1), e_0 = x0_b - x0_a
  Mat3 K;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      K(i, j) = 2 * em[i] * c[j];
  D.add_block(3, 3, K);
  D.add_block(3, 0, K, -1);
  D.add_block(0, 3, K, -1);
  D.add_block(0, 0, K);
  return true;
}

/// dg/dl_bar of one stretching stencil at x: the derivative of its force by its natural length
/// (the adjoint's term for the natural stretch, an action). Both laws are l_bar W(l / l_bar), so
/// the tension's derivative is df1/dl_bar = -(l / l_bar) f2; with x0 (not null) the midpoint
/// rule's secant (rod_stretch_em_eval), whose psi's derivative is, per law's power sums,
/// -EA / (2 l_bar^2) (Hookean) or C ((1 - alpha) l_bar^-alpha D(alpha/2) + (2 + alpha)
/// l_bar^(alpha/2) D(-alpha/4)) (Ogden). False (dg zero) for a zero-length or degenerate edge.
SLENDER_HD inline bool rod_stretch_natural_length_derivative(const Vec<6>& x,
                                                             const Vec<6>* x0,
                                                             const RodStretch::Params& p,
                                                             Vec<6>& dg) {
  dg.set_zero();
  const Vec3 em = x.segment<3>(3) - x.segment<3>(0);
  Vec3 g1;
  if (!x0) {
    const Real l = norm(em);
    if (!(l > kTinyLength)) return false;
    Real f1, f2;
    rod_stretch_energy(l, p, f1, f2);
    g1 = (-(l / p.l_bar) * f2 / l) * em;
  } else {
    const Vec3 e0 = x0->segment<3>(3) - x0->segment<3>(0);
    const Vec3 de = 2 * (em - e0);
    const Vec3 e1 = e0 + de;
    const Real s0 = dot(e0, e0), s1 = dot(e1, e1), hs = dot(de, e1 + e0);
    if (!(s0 > kTinyLength * kTinyLength) || !(s1 > kTinyLength * kTinyLength)) return false;
    Real dpsi;
    if (p.alpha == 0) {
      dpsi = -p.EA / (2 * p.l_bar * p.l_bar);
    } else {
      const Real C = 2 * p.EA / (3 * p.alpha * p.alpha);
      Real D1, D2, dD;
      pow_divided_difference(s0, hs, p.alpha / 2, D1, dD);
      pow_divided_difference(s0, hs, -p.alpha / 4, D2, dD);
      dpsi = C * ((1 - p.alpha) * ::pow(p.l_bar, -p.alpha) * D1 +
                  (2 + p.alpha) * ::pow(p.l_bar, p.alpha / 2) * D2);
    }
    g1 = (2 * dpsi) * em;
  }
  dg.set_segment(0, -g1);
  dg.set_segment(3, g1);
  return true;
}

}  // namespace slender
