// The free-DOF Jacobian's CSR pattern and the gather lists that assemble it: built once per
// model, so that each Newton iteration only evaluates stencils and sums fixed source lists.

#include <algorithm>
#include <climits>

#include "model/model_internal.h"
#include "runtime/memory_budget.h"
#include "slender/core/error.h"
#include "slender/stencils/user_energy.h"

namespace slender {

namespace {

// lays out n stencils of D DOFs each (D <= kUserEnergyMaxDofs) in the pools (their offsets
// h_off, g_off, e_off, the pools' lengths) and gives each of their contributions to the free
// DOFs, in generation order: on_grad(row, src) for each local gradient entry, on_hess(row, col,
// src) for each local Hessian entry; dofs_of(k, out): stencil k's global DOFs
template <class K, class H, class G>
void stencil_contributions(AssemblyPlan& p,
                           long n,
                           int D,
                           const K& dofs_of,
                           long& h_off,
                           long& g_off,
                           long& e_off,
                           const H& on_hess,
                           const G& on_grad) {
  const long pool_h = p.hess_pool, pool_g = p.grad_pool;
  h_off = pool_h;
  g_off = pool_g;
  e_off = p.energy_pool;
  p.hess_pool += n * D * D;
  p.grad_pool += n * D;
  p.energy_pool += n;
  // the plan's sources are 32-bit indices into the pools
  SLENDER_CHECK(p.hess_pool <= INT_MAX, "assembly plan: ", p.hess_pool,
                " local Hessian entries, more than 32-bit indices reach (too many stencils or "
                "contact pairs for one system)");
  int dofs[kUserEnergyMaxDofs];
  for (long k = 0; k < n; ++k) {
    dofs_of(k, dofs);
    for (int a = 0; a < D; ++a) {
      const int ra = p.dof_free[dofs[a]];
      if (ra < 0) continue;
      on_grad(ra, int(pool_g + k * D + a));
      for (int b = 0; b < D; ++b) {
        const int rb = p.dof_free[dofs[b]];
        if (rb >= 0) on_hess(ra, rb, int(pool_h + k * D * D + a * D + b));
      }
    }
  }
}

// one family's stencils (stencil_contributions at its offsets)
template <class B, class H, class G>
void family_contributions(
    AssemblyPlan& p, const ModelView& mv, Family f, const H& on_hess, const G& on_grad) {
  static_assert(B::kDofs <= kUserEnergyMaxDofs, "a family's stencil has more DOFs than the bound");
  stencil_contributions(
      p, B::count(mv), B::kDofs, [&](long k, int* out) { B::dofs(mv, k, out); }, p.h_off[f],
      p.g_off[f], p.e_off[f], on_hess, on_grad);
}

// the model's user energies' stencils, after the families that keep their layout
template <class H, class G>
void user_contributions(
    AssemblyPlan& p, const Model& m, const ModelView& mv, const H& on_hess, const G& on_grad) {
  const size_t n = m.user_energies.size();
  p.user_h_off.assign(n, 0);
  p.user_g_off.assign(n, 0);
  p.user_e_off.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const UserEnergy& u = *m.user_energies[i];
    stencil_contributions(
        p, u.count(mv), u.dofs_per_stencil(), [&](long k, int* out) { u.dofs(mv, k, out); },
        p.user_h_off[i], p.user_g_off[i], p.user_e_off[i], on_hess, on_grad);
  }
}

}  // namespace

void build_assembly_plan(Model& m) { build_assembly_plan(m, host_view(m), m.plan); }

namespace {

// free DOF numbering (fixed: the held DOFs, ndof; null: the model's)
void number_free_dofs(const Model& m, AssemblyPlan& p, const unsigned char* fixed) {
  if (!fixed) fixed = m.dof_fixed.data();
  p.dof_free.assign(m.ndof, -1);
  p.free_dof.clear();
  for (int i = 0; i < m.ndof; ++i) {
    if (fixed[i]) continue;
    p.dof_free[i] = int(p.free_dof.size());
    p.free_dof.push_back(i);
  }
  p.nfree = int(p.free_dof.size());
}

// ---- the whole plan at once, in row buckets ----
// The plan of sorting every contribution by (row, column) stably (the order of generation
// within a slot, the summation order), built with a fraction of the memory: each row's
// Hessian contributions are placed in a bucket of their own in generation order (a column and
// a source each, in two arrays), sorted stably by column within the row, and read off in place:
// the sources' array becomes the plan's gather list (less the diagonal's placeholders), the
// columns' the CSR pattern. The model's plan on a million nodes needed 4 to 5 times the model's
// memory while it was built with the global sort (16-byte keyed entries, a second array of them
// to sort into, and the growth of both), twice with 8-byte (column, source) entries beside the
// gather list they were copied into (issue 49).

struct Entry {
  int col, src;
};

// one pass over every family's stencils in generation order, the free DOFs' diagonal after the
// families before the contact pairs (a view's pairs: the reference the engine's merged contact
// part is checked against, engine/contact_jacobian.h): on_hess(row, col, src) and
// on_grad(row, src); the pools' layout is set on the way
template <class H, class G>
void each_contribution(
    AssemblyPlan& p, const Model& m, const ModelView& mv, const H& on_hess, const G& on_grad) {
  p.hess_pool = p.grad_pool = p.energy_pool = 0;
  auto family = [&](auto binding, Family f) {
    family_contributions<decltype(binding)>(p, mv, f, on_hess, on_grad);
  };
  for_each_family([&](auto binding, Family f, long) {
    if (f < kFamPairsBegin) family(binding, f);
  });
  user_contributions(p, m, mv, on_hess, on_grad);
  for (int r = 0; r < p.nfree; ++r)
    on_hess(r, r, -1);  // every diagonal slot exists (inertia and damping land there)
  for_each_family([&](auto binding, Family f, long) {
    if (f >= kFamPairsBegin) family(binding, f);
  });
}

// a stable sort by column of one row's entries, columns in col[0, n) and sources in src[0, n)
// (insertion sort for the short rows of rods and shells, the library's stable sort for a hub's
// long ones, through `buf`)
void sort_row(int* col, int* src, long n, std::vector<Entry>& buf) {
  if (n <= 48) {
    for (long i = 1; i < n; ++i) {
      const int c = col[i], s = src[i];
      long j = i;
      for (; j > 0 && col[j - 1] > c; --j) {
        col[j] = col[j - 1];
        src[j] = src[j - 1];
      }
      col[j] = c;
      src[j] = s;
    }
    return;
  }
  buf.resize(size_t(n));
  for (long i = 0; i < n; ++i)
    buf[size_t(i)] = {col[i], src[i]};
  std::stable_sort(buf.begin(), buf.end(),
                   [](const Entry& x, const Entry& y) { return x.col < y.col; });
  for (long i = 0; i < n; ++i)
    col[i] = buf[size_t(i)].col, src[i] = buf[size_t(i)].src;
}

}  // namespace

void build_assembly_plan(const Model& m,
                         const ModelView& mv,
                         AssemblyPlan& p,
                         const unsigned char* fixed) {
  number_free_dofs(m, p, fixed);
  const int nfree = p.nfree;
  // pass 1: each row's counts
  std::vector<long> hadr(size_t(nfree) + 1, 0);
  p.row_src_adr.assign(size_t(nfree) + 1, 0);
  each_contribution(
      p, m, mv, [&](int r, int, int) { ++hadr[size_t(r) + 1]; },
      [&](int r, int) { ++p.row_src_adr[size_t(r) + 1]; });
  for (int r = 0; r < nfree; ++r) {
    hadr[size_t(r) + 1] += hadr[size_t(r)];
    p.row_src_adr[size_t(r) + 1] += p.row_src_adr[size_t(r)];
  }
  SLENDER_CHECK(p.row_src_adr[size_t(nfree)] <= INT_MAX,
                "assembly plan: too many gradient sources for 32-bit indices");
  // a plan that would not fit is refused before its entries are allocated (issue 49): a column
  // and a source per entry while they are sorted, and at most a column and a slot per entry
  // after (plans under a MiB are not checked)
  const double entries = double(hadr[size_t(nfree)]);
  const double plan_bytes =
      entries * double(4 * sizeof(int)) + double(p.row_src_adr[size_t(nfree)]) * sizeof(int);
  if (plan_bytes >= double(1 << 20)) {
    require_memory(
        "model",
        "the Jacobian's assembly plan of '" + m.scene.name + "' (" + std::to_string(long(entries)) +
            " local Hessian entries over " + std::to_string(nfree) + " free DOFs)",
        plan_bytes,
        "at most; the model's other arrays hold " + format_bytes(double(m.memory_bytes())));
  }
  // pass 2: the entries into their rows, in generation order: columns and sources
  std::vector<int> ecol(static_cast<size_t>(hadr[size_t(nfree)]));
  std::vector<int> esrc(ecol.size());
  p.row_src.assign(size_t(p.row_src_adr[size_t(nfree)]), 0);
  {
    std::vector<long> hnext(hadr.begin(), hadr.end() - 1);
    std::vector<int> gnext(p.row_src_adr.begin(), p.row_src_adr.end() - 1);
    each_contribution(
        p, m, mv,
        [&](int r, int c, int src) {
          const size_t k = size_t(hnext[size_t(r)]++);
          ecol[k] = c;
          esrc[k] = src;
        },
        [&](int r, int src) { p.row_src[size_t(gnext[size_t(r)]++)] = src; });
  }
  // each row sorted by column, stably; then the slots (distinct columns) counted
  long nnz = 0, nsrc = 0;
  {
    std::vector<Entry> buf;
    for (int r = 0; r < nfree; ++r) {
      const long b = hadr[size_t(r)], e = hadr[size_t(r) + 1];
      sort_row(ecol.data() + b, esrc.data() + b, e - b, buf);
      for (long i = b; i < e; ++i) {
        if (i == b || ecol[size_t(i)] != ecol[size_t(i) - 1]) ++nnz;
        if (esrc[size_t(i)] >= 0) ++nsrc;
      }
    }
  }
  SLENDER_CHECK(nnz <= INT_MAX && nsrc <= INT_MAX,
                "assembly plan: more Jacobian entries than 32-bit indices reach");
  // read off in place: each slot's column to the front of ecol, each source (but the diagonal's
  // placeholders) to the front of esrc; neither write passes the entry being read
  p.row_ptr.assign(size_t(nfree) + 1, 0);
  p.slot_src_adr.assign(size_t(nnz) + 1, 0);
  p.diag_slot.assign(size_t(nfree), -1);
  long slot = 0, ns = 0;
  for (int r = 0; r < nfree; ++r) {
    const long b = hadr[size_t(r)], e = hadr[size_t(r) + 1];
    int last = -1;
    for (long i = b; i < e; ++i) {
      const int c = ecol[size_t(i)], src = esrc[size_t(i)];
      if (i == b || c != last) {
        if (c == r) p.diag_slot[size_t(r)] = int(slot);
        p.slot_src_adr[size_t(slot)] = int(ns);
        ecol[size_t(slot++)] = c;
        last = c;
      }
      if (src >= 0) esrc[size_t(ns++)] = src;
    }
    p.row_ptr[size_t(r) + 1] = int(slot);
  }
  p.slot_src_adr[size_t(nnz)] = int(ns);
  p.col.assign(ecol.begin(), ecol.begin() + nnz);
  std::vector<int>().swap(ecol);
  // the sources stay where they are: their array holds the diagonal's nfree placeholders more
  // than it needs (a copy to the exact size would be the largest array twice)
  esrc.resize(size_t(nsrc));
  p.slot_src = std::move(esrc);
}

}  // namespace slender
