#pragma once

// The model's arrays as the stencils and the engine read them (implemented in
// host/model/frames.cpp).

#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// Counts and host pointers of a Model's arrays.
ModelView host_view(const Model& m);

/// The view of copies of a Model's arrays (an executor's: the CUDA backend's DeviceModel, the
/// tests' guarded memory): counts and scalars as host_view's, each array's pointer up(array)
/// (up: a copy of a std::vector<T>, null for an empty one), the family tables' too, and no
/// contact pairs (a simulator sets them each step).
template <class Up>
ModelView copied_view(const Model& m, Up&& up) {
  ModelView v = host_view(m);
#define SLENDER_COPIED_POINTER(type, name, count, width, doc) v.name = up(m.name);
  SLENDER_VIEW_ARRAYS(SLENDER_COPIED_POINTER)
#undef SLENDER_COPIED_POINTER
  for (int f = 0; f < kMaxFamilies; ++f) {
    const FamilyTable& t = m.tables[size_t(f)];
    v.table[f] = FamilyTableView{t.rows, t.ni, t.nr, up(t.i), up(t.r)};
  }
  v.npair = 0;
  v.pair_node = nullptr;
  v.pair_d = nullptr;
  v.npt = 0;
  v.pt_node = nullptr;
  v.pt_d = nullptr;
  v.pair_mu = nullptr;
  v.pt_mu = nullptr;
  return v;
}

}  // namespace slender
