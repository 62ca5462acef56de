#pragma once

// The contact part of the Newton system, assembled on an executor without the host: the contact
// families' gradients and Hessians (the last two families of the pools, edge-edge then
// vertex-triangle) gathered into the free-DOF residual and into a CSR matrix J_c of their own,
// so that J = J_static + J_c. The static plan (the model's, fixed) never changes; a new set of
// contact pairs only rebuilds J_c's pattern, by sorts and scans on the executor: a stencil's
// 12 x 12 Hessian is 16 blocks of 3 x 3, one per pair of its nodes, and the blocks are sorted by
// their node pairs (16 keys a stencil, where a key per entry took 144), each block of J_c then
// laid out as the free rows and columns of its two nodes. The iterative
// paths apply J_static and J_c apart; the direct path merges the two patterns on the executor
// (merge: each entry's static slot and J_c entry) and assembles one matrix for the direct
// solver, whose symbolic analysis alone needs the merged pattern on the host.
//
// Determinism: each free row's gradient sources and each J_c entry's Hessian sources are summed
// in ascending pool order (sorted keys with the source index in their low bits, or a stable
// sort), so two runs agree bit for bit. The residual and the merged matrix add the contact
// sources one by one after the static ones, the sums of one plan holding both in one list
// (static sources first); J_c's own values (the iterative paths) start from zero.

#include <climits>
#include <cstdint>
#include <vector>

#include "slender/core/error.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender::contact {

namespace cj {

/// the 12 DOFs of contact stencil k (edge pairs first, then vertex-triangle pairs)
SLENDER_HD inline void contact_dofs(const ModelView& v, long k, int* d) {
  if (k < v.npair) {
    ContactEdgeEdgeBinding::dofs(v, k, d);
  } else {
    ContactPointTriangleBinding::dofs(v, k - v.npair, d);
  }
}

/// gradient slot s (12 per stencil): key (free row, s), kNoKey for a fixed DOF
struct EmitGradient {
  ModelView v;
  const int* free_of_dof;
  std::uint64_t* key;
  SLENDER_HD void operator()(long s) const {
    int d[12];
    contact_dofs(v, s / 12, d);
    const int r = free_of_dof[d[s % 12]];
    key[s] = r < 0 ? pipe::kNoKey : (std::uint64_t(r) << 32) | std::uint64_t(s);
  }
};

/// node block s of the Hessians (16 per stencil: its local nodes a = s % 16 / 4 and b = s % 4,
/// each a 3 x 3 block of the stencil's 12 x 12): key (node of a, node of b) where both nodes
/// have a free DOF, value s. Sorted stably, each run is one block of J_c with its sources in
/// pool order (a stencil's blocks before the next stencil's)
struct EmitBlock {
  ModelView v;
  const int* free_of_dof;
  std::uint64_t* key;
  int* src;
  SLENDER_HD void operator()(long s) const {
    int d[12];
    contact_dofs(v, s / 16, d);
    const int a = int(s % 16) / 4, b = int(s % 4);
    auto any_free = [&](int l) {
      return free_of_dof[d[3 * l]] >= 0 || free_of_dof[d[3 * l + 1]] >= 0 ||
             free_of_dof[d[3 * l + 2]] >= 0;
    };
    key[s] = any_free(a) && any_free(b)
                 ? (std::uint64_t(d[3 * a] / 3) << 32) | std::uint64_t(d[3 * b] / 3)
                 : pipe::kNoKey;
    src[s] = int(s);
  }
};

/// adr[r] = first sorted gradient key of free row r (r = nfree: the number of valid keys)
struct RowStarts {
  const std::uint64_t* key;
  long n;
  int* adr;
  SLENDER_HD void operator()(long r) const {
    adr[r] = int(sorted_lower_bound(key, n, std::uint64_t(r) << 32));
  }
};

/// f[r] += the row's contact gradient sources one by one, in pool order (the sum a plan with
/// the static and contact sources in one list makes)
struct AddResidual {
  const int* adr;
  const std::uint64_t* key;
  const Real* g;  // the contact part of the gradient pool
  Real* f;
  SLENDER_HD void operator()(long r) const {
    Real s = f[r];
    for (int i = adr[r]; i < adr[r + 1]; ++i)
      s += g[key[i] & 0xffffffffULL];
    f[r] = s;
  }
};

/// for the first key of each run: the block's first source and its node pair
struct BlockStarts {
  const std::uint64_t* key;
  const int* flag;
  const int* pos;
  int* start;           // (nblock + 1)
  std::uint64_t* node;  // (nblock)
  SLENDER_HD void operator()(long i) const {
    if (!flag[i]) return;
    start[pos[i]] = int(i);
    node[pos[i]] = key[i];
  }
};

/// start[nblock] = the number of valid (sorted) keys
struct BlockEnd {
  const std::uint64_t* key;
  long n;
  long nblock;
  int* start;
  SLENDER_HD void operator()(long) const {
    start[nblock] = int(sorted_lower_bound(key, n, pipe::kNoKey));
  }
};

/// visit(u, j, c) for each entry of the row of node n's DOFs, columns ascending: block u of the
/// node's row of blocks (the blocks' node pairs ascending), its column node's DOF j, free as
/// column c
template <class V>
SLENDER_HD void each_block_column(
    const int* free_of_dof, const std::uint64_t* node, long nblock, int n, const V& visit) {
  for (long u = sorted_lower_bound(node, nblock, std::uint64_t(n) << 32);
       u < nblock && pipe::key_hi(node[u]) == n; ++u)
    for (int j = 0; j < 3; ++j) {
      const int c = free_of_dof[3 * pipe::key_lo(node[u]) + j];
      if (c >= 0) visit(u, j, c);
    }
}

/// count[r] = the entries of free row r: the free columns of the blocks of its node
struct RowCounts {
  const int* free_dof;
  const int* free_of_dof;
  const std::uint64_t* node;
  long nblock;
  int* count;
  SLENDER_HD void operator()(long r) const {
    int c = 0;
    each_block_column(free_of_dof, node, nblock, free_dof[r] / 3, [&](long, int, int) { ++c; });
    count[r] = c;
  }
};

/// row r's entries (from row_ptr[r], columns ascending): each one's column, block and place in
/// the block (3 i + j)
struct RowEntries {
  const int* free_dof;
  const int* free_of_dof;
  const std::uint64_t* node;
  long nblock;
  const int* row_ptr;
  int* col;
  int* block;
  int* ij;
  SLENDER_HD void operator()(long r) const {
    const int dof = free_dof[r], i = dof % 3;
    int e = row_ptr[r];
    each_block_column(free_of_dof, node, nblock, dof / 3, [&](long u, int j, int c) {
      col[e] = c;
      block[e] = int(u);
      ij[e] = 3 * i + j;
      ++e;
    });
  }
};

/// an entry of J_c: its block's sources at its place (i, j), added to s one by one in pool
/// order (the contact part of the Hessian pool h: stencil k's entry (3 a + i, 3 b + j) at
/// 144 k + 12 (3 a + i) + 3 b + j)
struct ContactEntries {
  const int* start;  // each block's first source (nblock + 1)
  const int* src;    // the blocks' sources, s = 16 k + 4 a + b
  const int* block;  // each entry's block and place
  const int* ij;
  SLENDER_HD Real add(long e, const Real* h, Real s) const {
    const int u = block[e], i = ij[e] / 3, j = ij[e] % 3;
    for (int t = start[u]; t < start[u + 1]; ++t) {
      const long k = src[t] / 16;
      const int a = src[t] % 16 / 4, b = src[t] % 4;
      s += h[144 * k + 12 * (3 * a + i) + 3 * b + j];
    }
    return s;
  }
};

/// val[e] = the entry's Hessian sources summed in pool order
struct EntryValues {
  ContactEntries c;
  const Real* h;  // the contact part of the Hessian pool
  Real* val;
  SLENDER_HD void operator()(long e) const { val[e] = c.add(e, h, Real(0)); }
};

/// row r of J_static + J_c, two CSR matrices of one size: visit(c, i, j) for each column c of
/// the union of the row's two column lists (each sorted), ascending, with its entry in each
/// (-1: none)
struct MergedRow {
  const int* srow;  // J_static's row pointers and columns
  const int* scol;
  const int* crow;  // J_c's
  const int* ccol;
  template <class V>
  SLENDER_HD void each(long r, const V& visit) const {
    int i = srow[r], j = crow[r];
    const int ie = srow[r + 1], je = crow[r + 1];
    while (i < ie || j < je) {
      const bool take_s = j == je || (i < ie && scol[i] <= ccol[j]);
      const bool take_c = i == ie || (j < je && ccol[j] <= scol[i]);
      visit(take_s ? scol[i] : ccol[j], take_s ? i : -1, take_c ? j : -1);
      i += take_s;
      j += take_c;
    }
  }
};

/// count[r] = the entries of row r of J_static + J_c
struct MergeCount {
  MergedRow row;
  int* count;  // (nfree)
  SLENDER_HD void operator()(long r) const {
    int n = 0;
    row.each(r, [&](int, int, int) { ++n; });
    count[r] = n;
  }
};

/// row r of J_static + J_c: each entry's column, its static slot and its J_c entry (-1: none),
/// and the row's diagonal entry
struct MergeFill {
  MergedRow row;
  const int* mrow;  // (nfree + 1) from MergeCount's scan
  int* mcol;
  int* mstatic;
  int* mcontact;
  int* mdiag;  // (nfree)
  SLENDER_HD void operator()(long r) const {
    int m = mrow[r];
    row.each(r, [&](int c, int i, int j) {
      mcol[m] = c;
      mstatic[m] = i;
      mcontact[m] = j;
      if (c == int(r)) mdiag[r] = m;
      ++m;
    });
  }
};

/// row_ptr[n] = total (the last of a scan's row pointers)
struct SetLast {
  int* row_ptr;
  long n;
  long total;
  SLENDER_HD void operator()(long) const { row_ptr[n] = int(total); }
};

/// the value of entry m of J_static + J_c: its static slot's Hessian sources, then its J_c
/// entry's, summed one by one in pool order (the bits of a plan with both in one list)
struct MergedValues {
  const int* mstatic;
  const int* mcontact;
  const int* slot_src_adr;  // the static plan's
  const int* slot_src;
  ContactEntries c;  // J_c's
  const Real* h;     // the Hessian pool
  const Real* hc;    // its contact part
  Real* val;
  SLENDER_HD void operator()(long m) const {
    Real s = 0;
    const int a = mstatic[m], b = mcontact[m];
    if (a >= 0)
      for (int i = slot_src_adr[a]; i < slot_src_adr[a + 1]; ++i)
        s += h[slot_src[i]];
    if (b >= 0) s = c.add(b, hc, s);
    val[m] = s;
  }
};

}  // namespace cj

/// J_c and the contact residual over executor X (engine/executor.h; what ContactPipeline uses).
template <class X>
class ContactJacobian {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;

  /// `plan`: the static plan whose free rows J_c uses (the model's)
  ContactJacobian(const AssemblyPlan& plan, int ndof) : nfree_(plan.nfree) {
    std::vector<int> free_of_dof(size_t(ndof), -1);
    for (int r = 0; r < plan.nfree; ++r)
      free_of_dof[size_t(plan.free_dof[r])] = r;
    free_of_dof_.upload(free_of_dof);
    free_dof_.upload(plan.free_dof);
    row_ptr_.resize(size_t(nfree_) + 1);
    gadr_.resize(size_t(nfree_) + 1);
  }

  /// the pattern for the pairs of view `v` (executor pointers; npair edge pairs, npt
  /// vertex-triangle pairs)
  void build(const ModelView& v) {
    const long nst = long(v.npair) + v.npt;
    SLENDER_CHECK(144 * nst < INT_MAX, "contact: ", nst, " pairs, too many for one matrix");
    const long ng = 12 * nst, nb = 16 * nst;
    ng_ = ng;
    fit(gkey_, ng), fit(bkey_, nb), fit(bsrc_, nb), fit(flag_, nb), fit(pos_, nb);
    if (ng > 0) {
      each(ng, cj::EmitGradient{v, free_of_dof_.data(), gkey_.data()});
      x_.sort_keys(gkey_.data(), ng);
    }
    each(long(nfree_) + 1, cj::RowStarts{gkey_.data(), ng, gadr_.data()});
    // the blocks: 3 x 3 node blocks of the stencils' Hessians, sorted by their node pairs
    nblock_ = 0;
    if (nb > 0) {
      each(nb, cj::EmitBlock{v, free_of_dof_.data(), bkey_.data(), bsrc_.data()});
      x_.sort_pairs(bkey_.data(), bsrc_.data(), nb);
      each(nb, pipe::FirstOfRun{bkey_.data(), flag_.data()});
      nblock_ = x_.exclusive_scan(flag_.data(), pos_.data(), nb);
    }
    fit(bstart_, nblock_ + 1), fit(bnode_, nblock_);
    if (nblock_ > 0) {
      each(nb,
           cj::BlockStarts{bkey_.data(), flag_.data(), pos_.data(), bstart_.data(), bnode_.data()});
      each(1, cj::BlockEnd{bkey_.data(), nb, nblock_, bstart_.data()});
    }
    // the entries: each free row's free columns of its node's blocks
    fit(count_, nfree_);
    each(nfree_, cj::RowCounts{free_dof_.data(), free_of_dof_.data(), bnode_.data(), nblock_,
                               count_.data()});
    nnz_ = x_.exclusive_scan(count_.data(), row_ptr_.data(), nfree_);
    SLENDER_CHECK(nnz_ < INT_MAX, "contact: ", nnz_, " Jacobian entries, too many for one matrix");
    each(1, cj::SetLast{row_ptr_.data(), nfree_, nnz_});
    fit(col_, nnz_), fit(eblock_, nnz_), fit(eij_, nnz_), fit(val_, nnz_);
    if (nnz_ > 0)
      each(nfree_, cj::RowEntries{free_dof_.data(), free_of_dof_.data(), bnode_.data(), nblock_,
                                  row_ptr_.data(), col_.data(), eblock_.data(), eij_.data()});
  }

  /// f += the contact gradients (g: the gradient pool from the contact families' offset)
  void add_residual(const Real* g, Real* f) const {
    if (ng_ > 0) each(nfree_, cj::AddResidual{gadr_.data(), gkey_.data(), g, f});
  }
  /// J_c's values from the Hessian pool (h: from the contact families' offset)
  void assemble(const Real* h) {
    if (nnz_ > 0) each(nnz_, cj::EntryValues{entries(), h, val_.data()});
  }

  /// J_static + J_c as one CSR on the executor (the direct path): the union of the static
  /// plan's pattern (its row pointers and columns on X) and J_c's, row by row
  void merge(const int* static_row_ptr, const int* static_col) {
    fit(count_, nfree_), fit(mrow_ptr_, long(nfree_) + 1), fit(mdiag_, nfree_);
    const cj::MergedRow row{static_row_ptr, static_col, row_ptr_.data(), col_.data()};
    each(nfree_, cj::MergeCount{row, count_.data()});
    mnnz_ = x_.exclusive_scan(count_.data(), mrow_ptr_.data(), nfree_);
    SLENDER_CHECK(mnnz_ < INT_MAX, "contact: ", mnnz_,
                  " Jacobian entries, too many for one matrix");
    each(1, cj::SetLast{mrow_ptr_.data(), nfree_, mnnz_});
    fit(mcol_, mnnz_), fit(mstatic_, mnnz_), fit(mcontact_, mnnz_);
    each(nfree_, cj::MergeFill{row, mrow_ptr_.data(), mcol_.data(), mstatic_.data(),
                               mcontact_.data(), mdiag_.data()});
  }
  /// the merged matrix's values (val: merged_nnz) from the Hessian pool h (the static plan's
  /// gather lists slot_src_adr, slot_src on X) and its contact part hc, without the per-DOF
  /// diagonal (at merged_diag)
  void assemble_merged(const int* slot_src_adr,
                       const int* slot_src,
                       const Real* h,
                       const Real* hc,
                       Real* val) const {
    each(mnnz_, cj::MergedValues{mstatic_.data(), mcontact_.data(), slot_src_adr, slot_src,
                                 entries(), h, hc, val});
  }
  long merged_nnz() const { return mnnz_; }
  const int* merged_row_ptr() const { return mrow_ptr_.data(); }
  const int* merged_col() const { return mcol_.data(); }
  const int* merged_diag() const { return mdiag_.data(); }

  int nfree() const { return nfree_; }
  long nnz() const { return nnz_; }
  const int* row_ptr() const { return row_ptr_.data(); }
  const int* col() const { return col_.data(); }
  const Real* val() const { return val_.data(); }
  Real* val() { return val_.data(); }

 private:
  template <class T>
  static void fit(Buffer<T>& b, long n) {
    if (long(b.size()) < n) b.resize(size_t(n + n / 4 + 1));
  }

  mutable X x_;
  template <class F>
  static void each(long n, const F& f) {
    X::for_each(n, f, kParallelGrainMedium);
  }
  cj::ContactEntries entries() const {
    return cj::ContactEntries{bstart_.data(), bsrc_.data(), eblock_.data(), eij_.data()};
  }

  int nfree_ = 0;
  long ng_ = 0, nblock_ = 0, nnz_ = 0, mnnz_ = 0;
  // (count_: each row's entries before a scan, of J_c's rows and then of the merged ones)
  Buffer<int> free_of_dof_, free_dof_, gadr_, flag_, pos_, row_ptr_, count_, col_;
  // the node blocks: each sorted key's source, each block's first source; each entry's block
  // and place in it
  Buffer<int> bsrc_, bstart_, eblock_, eij_;
  // the merged matrix (merge): row pointers, columns, each entry's static slot and J_c entry,
  // each row's diagonal entry
  Buffer<int> mrow_ptr_, mcol_, mstatic_, mcontact_, mdiag_;
  Buffer<std::uint64_t> gkey_, bkey_, bnode_;  // gradient keys; blocks' keys, node pairs
  Buffer<Real> val_;
};

}  // namespace slender::contact
