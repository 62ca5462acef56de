#pragma once

// The contact sub-pairs of one step as flat lists (what the host's finder, host/contact/pairs.h,
// and the executor's pipeline, contact_pipeline.h, both produce, in the same order), and the
// reach of a step (host/contact/pairs.cpp).

#include <vector>

#include "slender/core/hd.h"
#include "slender/model.h"

namespace slender::contact {

/// The sub-pairs of one step, flat.
struct ContactPairLists {
  std::vector<int> ee_node;  ///< edge pairs: nodes a0, a1, b0, b1 (nee x 4)
  std::vector<Real> ee_d;    ///< their contact distance [m] (nee)
  std::vector<Real> ee_mu;   ///< their friction coefficient (nee)
  std::vector<int> pt_node;  ///< vertex-triangle pairs: p, t0, t1, t2 (npt x 4)
  std::vector<Real> pt_d;    ///< (npt)
  std::vector<Real> pt_mu;   ///< (npt)
  int nee() const { return int(ee_d.size()); }
  int npt() const { return int(pt_d.size()); }
};

/// How much of a step's motion the pair search covers: each node's displacement in a step of
/// size dt is taken as up to kStepSweep dt u (the velocity may grow within the step).
constexpr Real kStepSweep = 2;

/// The box of an element's k nodes (ids nd) over one step: the nodes at x and, where u is given,
/// at x + sweep u, grown by `grow` on every side. A shell falling or a rod moving as a whole
/// sweeps its box along its motion only, so neighbours that move with it gain no candidates.
/// One implementation for the host broad phase and the executor's pipeline (bit for bit).
SLENDER_HD inline void element_step_box(const Real* x,
                                        const Real* u,
                                        Real sweep,
                                        const int* nd,
                                        int k,
                                        Real grow,
                                        Real lo[3],
                                        Real hi[3]) {
  for (int a = 0; a < k; ++a) {
    const long i = 3L * nd[a];
    for (int d = 0; d < 3; ++d) {
      const Real p = x[i + d];
      Real l = p, h = p;
      if (u) {
        const Real e = p + sweep * u[i + d];
        l = e < l ? e : l;
        h = e > h ? e : h;
      }
      lo[d] = a == 0 ? l : (l < lo[d] ? l : lo[d]);
      hi[d] = a == 0 ? h : (h > hi[d] ? h : hi[d]);
    }
  }
  for (int d = 0; d < 3; ++d) {
    lo[d] -= grow;
    hi[d] += grow;
  }
}

/// [m] how much closer than now the four nodes nd of a sub-pair (point-triangle or edge-edge)
/// may come in a step of size dt: kStepSweep dt times the largest relative speed of two of them.
/// The distance between the two primitives changes by at most the largest relative
/// displacement of two of their nodes (a common motion changes nothing).
SLENDER_HD inline Real subpair_approach(const Real* u, const int* nd, Real dt) {
  Real w2 = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      Real s = 0;
      for (int d = 0; d < 3; ++d) {
        const Real r = u[3L * nd[a] + d] - u[3L * nd[b] + d];
        s += r * r;
      }
      w2 = s > w2 ? s : w2;
    }
  return kStepSweep * dt * ::sqrt(w2);
}

}  // namespace slender::contact
