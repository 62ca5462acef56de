// The free-DOF Jacobian's CSR pattern and the gather lists that assemble it: built once per
// model, so that each Newton iteration only evaluates stencils and sums fixed source lists.

#include <algorithm>

#include "model/model_internal.h"

namespace slender {

namespace {

struct Contribution {
  long key;  // row * nfree + col (slots) or row (gradients)
  int src;   // index into the local pool
};

// appends one family's contributions; `pool_h` and `pool_g` are the family's pool offsets
template <class B>
void collect(const Model& m,
             const ModelView& mv,
             long pool_h,
             long pool_g,
             std::vector<Contribution>& hs,
             std::vector<Contribution>& gs) {
  constexpr int D = B::kDofs;
  const long n = B::count(mv);
  const long nfree = m.plan.nfree;
  int dofs[D];
  for (long k = 0; k < n; ++k) {
    B::dofs(mv, k, dofs);
    for (int a = 0; a < D; ++a) {
      const int ra = m.plan.dof_free[dofs[a]];
      if (ra < 0) continue;
      gs.push_back({ra, int(pool_g + k * D + a)});
      for (int b = 0; b < D; ++b) {
        const int rb = m.plan.dof_free[dofs[b]];
        if (rb < 0) continue;
        hs.push_back({ra * nfree + rb, int(pool_h + k * D * D + a * D + b)});
      }
    }
  }
}

}  // namespace

void build_assembly_plan(Model& m) {
  AssemblyPlan& p = m.plan;
  p.dof_free.assign(m.ndof, -1);
  p.free_dof.clear();
  for (int i = 0; i < m.ndof; ++i) {
    if (m.dof_fixed[i]) continue;
    p.dof_free[i] = int(p.free_dof.size());
    p.free_dof.push_back(i);
  }
  p.nfree = int(p.free_dof.size());
  const long nfree = p.nfree;

  // pool layout: stretch stencils, then bend-twist stencils
  const ModelView mv = host_view(m);
  p.stretch_h_off = 0;
  p.stretch_g_off = 0;
  p.bend_h_off = long(m.nedge) * 36;
  p.bend_g_off = long(m.nedge) * 6;
  p.hess_pool = p.bend_h_off + long(m.nbend) * 121;
  p.grad_pool = p.bend_g_off + long(m.nbend) * 11;

  std::vector<Contribution> hs, gs;
  collect<RodStretchBinding>(m, mv, p.stretch_h_off, p.stretch_g_off, hs, gs);
  collect<RodBendTwistBinding>(m, mv, p.bend_h_off, p.bend_g_off, hs, gs);
  // every free DOF has a diagonal slot (inertia and damping land there)
  for (long r = 0; r < nfree; ++r)
    hs.push_back({r * nfree + r, -1});

  // stable sort keeps the generation order within a slot: a fixed summation order
  auto by_key = [](const Contribution& a, const Contribution& b) { return a.key < b.key; };
  std::stable_sort(hs.begin(), hs.end(), by_key);
  std::stable_sort(gs.begin(), gs.end(), by_key);

  p.row_ptr.assign(nfree + 1, 0);
  p.col.clear();
  p.slot_src_adr.assign(1, 0);
  p.slot_src.clear();
  for (size_t i = 0; i < hs.size(); ++i) {
    if (i == 0 || hs[i].key != hs[i - 1].key) {
      if (i > 0) p.slot_src_adr.push_back(int(p.slot_src.size()));
      const long row = hs[i].key / nfree;
      p.col.push_back(int(hs[i].key % nfree));
      p.row_ptr[row + 1]++;
    }
    if (hs[i].src >= 0) p.slot_src.push_back(hs[i].src);
  }
  p.slot_src_adr.push_back(int(p.slot_src.size()));
  for (long r = 0; r < nfree; ++r)
    p.row_ptr[r + 1] += p.row_ptr[r];

  p.diag_slot.assign(nfree, -1);
  for (long r = 0; r < nfree; ++r) {
    const auto b = p.col.begin() + p.row_ptr[r], e = p.col.begin() + p.row_ptr[r + 1];
    p.diag_slot[r] = int(std::lower_bound(b, e, int(r)) - p.col.begin());
  }

  p.row_src_adr.assign(nfree + 1, 0);
  p.row_src.clear();
  for (const Contribution& c : gs) {
    p.row_src_adr[c.key + 1]++;
    p.row_src.push_back(c.src);
  }
  for (long r = 0; r < nfree; ++r)
    p.row_src_adr[r + 1] += p.row_src_adr[r];
}

}  // namespace slender
