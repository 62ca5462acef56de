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

// lays out one family in the pools and appends its contributions
template <class B>
void collect(AssemblyPlan& p,
             const ModelView& mv,
             Family f,
             std::vector<Contribution>& hs,
             std::vector<Contribution>& gs) {
  constexpr int D = B::kDofs;
  const long n = B::count(mv);
  const long pool_h = p.hess_pool, pool_g = p.grad_pool;
  p.h_off[f] = pool_h;
  p.g_off[f] = pool_g;
  p.e_off[f] = p.energy_pool;
  p.hess_pool += n * D * D;
  p.grad_pool += n * D;
  p.energy_pool += n;
  const long nfree = p.nfree;
  int dofs[D];
  for (long k = 0; k < n; ++k) {
    B::dofs(mv, k, dofs);
    for (int a = 0; a < D; ++a) {
      const int ra = p.dof_free[dofs[a]];
      if (ra < 0) continue;
      gs.push_back({ra, int(pool_g + k * D + a)});
      for (int b = 0; b < D; ++b) {
        const int rb = p.dof_free[dofs[b]];
        if (rb < 0) continue;
        hs.push_back({ra * nfree + rb, int(pool_h + k * D * D + a * D + b)});
      }
    }
  }
}

}  // namespace

void build_assembly_plan(Model& m) { build_assembly_plan(m, host_view(m), m.plan); }

void build_assembly_plan(const Model& m, const ModelView& mv, AssemblyPlan& p) {
  p.dof_free.assign(m.ndof, -1);
  p.free_dof.clear();
  for (int i = 0; i < m.ndof; ++i) {
    if (m.dof_fixed[i]) continue;
    p.dof_free[i] = int(p.free_dof.size());
    p.free_dof.push_back(i);
  }
  p.nfree = int(p.free_dof.size());
  const long nfree = p.nfree;

  // pool layout: the families in their enum order
  p.hess_pool = p.grad_pool = p.energy_pool = 0;
  std::vector<Contribution> hs, gs;
  collect<RodStretchBinding>(p, mv, kFamStretch, hs, gs);
  collect<RodBendTwistBinding>(p, mv, kFamBendTwist, hs, gs);
  collect<ShellStretchBinding>(p, mv, kFamShellStretch, hs, gs);
  collect<ShellHingeBinding>(p, mv, kFamHinge, hs, gs);
  collect<ShellMidEdgeBinding>(p, mv, kFamMidEdge, hs, gs);
  collect<ShellDragBinding>(p, mv, kFamDrag, hs, gs);
  collect<GroundBinding>(p, mv, kFamGround, hs, gs);
  collect<ContactEdgeEdgeBinding>(p, mv, kFamContact, hs, gs);
  collect<ContactPointTriangleBinding>(p, mv, kFamContactPointTri, hs, gs);
  collect<RodRftBinding>(p, mv, kFamRft, hs, gs);
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
