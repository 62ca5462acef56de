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
  const Real eps = l / p.l_bar - 1;
  // the energy E(l) and its derivatives f1 = dE/dl (the tension), f2 = d2E/dl2
  Real f1, f2;
  if (p.alpha == 0) {
    // Hookean: E = EA l_bar eps^2 / 2
    out.E = Real(0.5) * p.EA * p.l_bar * eps * eps;
    f1 = p.EA * eps;
    f2 = p.EA / p.l_bar;
  } else {
    // the incompressible one-term Ogden law in uniaxial stretch lambda = l / l_bar, per rest
    // length: W = 2 EA / (3 alpha^2) (lambda^alpha + 2 lambda^(-alpha/2) - 3) (Bartholdt et al.,
    // seed 004, eq. 12, with EA their EA c_e), whose small-strain stiffness is EA
    const Real lam = l / p.l_bar, C = 2 * p.EA / (3 * p.alpha * p.alpha);
    const Real la = ::pow(lam, p.alpha), lb = ::pow(lam, -p.alpha / 2);
    out.E = p.l_bar * C * (la + 2 * lb - 3);
    f1 = C * p.alpha * (la - lb) / lam;
    f2 = C * p.alpha * ((p.alpha - 1) * la + (p.alpha / 2 + 1) * lb) / (lam * lam * p.l_bar);
  }
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

}  // namespace slender
