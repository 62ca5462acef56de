#pragma once

// A part's Young's modulus in time (PartSpec::youngs_time, E(t) = E (1 + s(t))): every elastic
// stencil's energy, gradient and Hessian times its part's scale. Host and device code: one
// stencil per index.

#include "slender/stencils/bindings.h"

namespace slender {

/// The node whose part an elastic stencil takes (its part's modulus scale, its Rayleigh beta):
/// the node of its first DOF, a position DOF. Fills idx with the stencil's DOFs.
template <class B>
SLENDER_HD inline int stencil_part_node(const ModelView& m, long k, int* idx) {
  B::dofs(m, k, idx);
  return idx[0] / 3;
}

/// A part's Young's modulus scale in time (PartSpec::youngs_time): the energy, gradient and
/// Hessian of each elastic stencil times its part's scale (the part of its first node).
template <class B>
struct ScaleByPart {
  static constexpr int D = B::kDofs;
  ModelView m;
  const int* node_part;    // (nnode)
  const Real* part_scale;  // (npart)
  Real* E;                 // this family's energies (n); null: none
  Real* g;                 // ... gradients (n x D); null: none
  Real* H;                 // ... Hessians (n x D x D); null: none
  SLENDER_HD void operator()(long k) const {
    int idx[D];
    const Real s = part_scale[node_part[stencil_part_node<B>(m, k, idx)]];
    if (s == 1) return;
    if (E) E[k] *= s;
    if (g)
      for (int i = 0; i < D; ++i)
        g[k * D + i] *= s;
    if (H)
      for (int i = 0; i < D * D; ++i)
        H[k * D * D + i] *= s;
  }
};

}  // namespace slender
