#pragma once

// The contact sub-pairs of one step as flat lists (what the pair finder, contact_pipeline.h,
// produces on every executor), and the reach of a step.

#include <vector>

#include "slender/core/hd.h"
#include "slender/model.h"

namespace slender::contact {

/// The sub-pairs of one step, flat: the broad phase's candidate elements expanded into the
/// pairs the IMC stencils evaluate, with their contact distances and friction coefficients.
/// - rod edge pairs: where both edges stretch (a rod-shell joint's augmented edges are triangle
///   edges, which the triangles' pairs cover) and they are not neighbours along one rod closer
///   than their contact distance plus the tolerance;
/// - a rod edge and a triangle: the edge's end nodes against the triangle (vertex-triangle) and
///   the edge against the triangle's edges (edge-edge);
/// - two triangles: each one's vertices against the other and their edges pairwise. Each
///   sub-pair once (a vertex-triangle pair keeps the part of the first element pair that brought
///   it, in candidate order): a sum of smooth pair energies, with none of the kinks of a minimum
///   over sub-pairs, which stall Newton's method;
/// - the candidates' boxes cover each element over the step (element_step_box), so that
///   elements moving together gain no candidates however fast they move;
/// - a sub-pair whose distance at the step's start is at least its contact distance plus the
///   tolerance plus how much closer its nodes may come in the step (subpair_approach) has no
///   energy (the IMC cut-off) and cannot reach it: left out; so are a shell's neighbours in its
///   rest shape (pipe::Geometry::rest_neighbours_vt).
/// Order (the assembly plan depends on it): edge pairs are the rod pairs in candidate order, then
/// the rod-shell edge pairs sorted by (rod edge, shell edge), then the shell edge pairs sorted by
/// (lower, higher shell edge); vertex-triangle pairs are sorted by (vertex, triangle).
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
/// at x + sweep u, grown by `grow` on every side; NaN where a node's position or its end of the
/// step is NaN (a NaN velocity, or an infinite one in a step of size 0), so that the finder's
/// count of non-finite boxes sees it. A shell falling or a rod moving as a whole
/// sweeps its box along its motion only, so neighbours that move with it gain no candidates.
/// One implementation for the pair finder and its reference (bit for bit).
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
        l = e < l || e != e ? e : l;
        h = e > h || e != e ? e : h;
      }
      lo[d] = a == 0 ? l : (l < lo[d] || l != l ? l : lo[d]);
      hi[d] = a == 0 ? h : (h > hi[d] || h != h ? h : hi[d]);
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
