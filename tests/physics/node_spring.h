#pragma once

// A user stencil for the tests of energies from the caller's code (stencils/user_energy.h):
// a zero-length linear spring of stiffness k between two nodes, E = k/2 |x1 - x0|^2, as a
// LocalStencilEnergy stencil (host and device code).

#include "slender/core/types.h"

namespace slender::test {

struct NodeSpring {
  static constexpr int kDofs = 6;
  struct Params {
    Real k;
  };
  SLENDER_HD static void eval(const Vec<6>& x, const Params& p, unsigned want, LocalEval<6>& r) {
    r.E = 0;
    for (int i = 0; i < 3; ++i) {
      const Real d = x[3 + i] - x[i];
      r.E += Real(0.5) * p.k * d * d;
      if (want & kGrad) {
        r.g[i] = -p.k * d;
        r.g[3 + i] = p.k * d;
      }
    }
    if (!(want & kHess)) return;
    r.H.set_zero();
    for (int i = 0; i < 3; ++i) {
      r.H(i, i) = r.H(3 + i, 3 + i) = p.k;
      r.H(i, 3 + i) = r.H(3 + i, i) = -p.k;
    }
  }
};

}  // namespace slender::test
