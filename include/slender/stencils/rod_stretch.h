#pragma once

// seed 000, eqs. (9)-(10): axial stretching of one rod edge,
//   E = 1/2 EA l_bar (l / l_bar - 1)^2.
// Local DOFs (6): [x0, x1], node positions [m]; the edge runs x0 -> x1.

#include "slender/core/types.h"

namespace slender {

struct RodStretch {
  static constexpr int kNodes = 2;
  static constexpr int kDofs = 6;
  struct Params {
    Real EA;     ///< axial stiffness [N]
    Real l_bar;  ///< rest length [m]
  };
};

/// Energy and, on request, gradient and Hessian of one stretching stencil.
SLENDER_HD inline void rod_stretch_eval(const Vec<6>& x,
                                        const RodStretch::Params& p,
                                        unsigned want,
                                        LocalEval<6>& out) {
  out.flags = 0;
  const Vec3 e = x.segment<3>(3) - x.segment<3>(0);
  const Real l = norm(e);
  const Real eps = l / p.l_bar - 1;
  out.E = Real(0.5) * p.EA * p.l_bar * eps * eps;
  if (want == kEnergy) return;

  // zero-length edge: no direction; report instead of dividing by zero
  if (!(l > kTinyLength)) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }

  // dE/dx1 = EA eps t, dE/dx0 = -dE/dx1
  const Vec3 t = e / l;
  const Vec3 g1 = (p.EA * eps) * t;
  out.g.set_segment(0, -g1);
  out.g.set_segment(3, g1);
  if (!(want & kHess)) return;

  // K = EA / l_bar t t^T + EA eps / l (I - t t^T)
  const Real a = p.EA / p.l_bar, b = p.EA * eps / l;
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
