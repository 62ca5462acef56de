#pragma once

// The contact part of the Newton system, assembled on an executor without the host: the contact
// families' gradients and Hessians (the last two families of the pools, edge-edge then
// vertex-triangle) gathered into the free-DOF residual and into a CSR matrix J_c of their own,
// so that J = J_static + J_c. The static plan (the model's, fixed) never changes; a new set of
// contact pairs only rebuilds J_c's pattern, by sorts and scans on the executor. The CUDA
// backend's PCG path uses it for large meshes with self-contact (S9), where a merged plan built
// on the host for every new pattern would cost more than the step.
//
// Determinism: each free row's gradient sources and each J_c entry's Hessian sources are summed
// in ascending pool order (sorted keys with the source index in their low bits, or a stable
// sort), so two runs agree bit for bit. The sums differ from the merged plan's only in rounding
// (the merged plan adds static and contact sources in one sum).

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

/// Hessian slot s (144 per stencil, row-major): key (row, column), value s
struct EmitHessian {
  ModelView v;
  const int* free_of_dof;
  std::uint64_t* key;
  int* src;
  SLENDER_HD void operator()(long s) const {
    int d[12];
    contact_dofs(v, s / 144, d);
    const int a = int(s % 144) / 12, b = int(s % 12);
    const int ra = free_of_dof[d[a]], rb = free_of_dof[d[b]];
    key[s] = ra < 0 || rb < 0 ? pipe::kNoKey : (std::uint64_t(ra) << 32) | std::uint64_t(rb);
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

/// f[r] += the row's contact gradient sources, in pool order
struct AddResidual {
  const int* adr;
  const std::uint64_t* key;
  const Real* g;  // the contact part of the gradient pool
  Real* f;
  SLENDER_HD void operator()(long r) const {
    Real s = 0;
    for (int i = adr[r]; i < adr[r + 1]; ++i)
      s += g[key[i] & 0xffffffffULL];
    f[r] += s;
  }
};

/// for the first key of each run: the entry's first source, its row and column
struct EntryStarts {
  const std::uint64_t* key;
  const int* flag;
  const int* pos;
  int* start;  // (nnz + 1)
  int* row;    // (nnz)
  int* col;    // (nnz)
  SLENDER_HD void operator()(long i) const {
    if (!flag[i]) return;
    const int p = pos[i];
    start[p] = int(i);
    row[p] = pipe::key_hi(key[i]);
    col[p] = pipe::key_lo(key[i]);
  }
};

/// start[nnz] = the number of valid (sorted) keys
struct EntryEnd {
  const std::uint64_t* key;
  long n;
  long nnz;
  int* start;
  SLENDER_HD void operator()(long) const {
    start[nnz] = int(sorted_lower_bound(key, n, pipe::kNoKey));
  }
};

/// row_ptr[r] = first entry of row r (rows of the entries ascending)
struct RowPointers {
  const int* row;
  long nnz;
  int* row_ptr;
  SLENDER_HD void operator()(long r) const {
    row_ptr[r] = int(sorted_lower_bound(row, nnz, int(r)));
  }
};

/// val[e] = the entry's Hessian sources summed in pool order
struct EntryValues {
  const int* start;
  const int* src;
  const Real* h;  // the contact part of the Hessian pool
  Real* val;
  SLENDER_HD void operator()(long e) const {
    Real s = 0;
    for (int i = start[e]; i < start[e + 1]; ++i)
      s += h[src[i]];
    val[e] = s;
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
    row_ptr_.resize(size_t(nfree_) + 1);
    gadr_.resize(size_t(nfree_) + 1);
  }

  /// the pattern for the pairs of view `v` (executor pointers; npair edge pairs, npt
  /// vertex-triangle pairs)
  void build(const ModelView& v) {
    const long nst = long(v.npair) + v.npt;
    SLENDER_CHECK(144 * nst < INT_MAX, "contact: ", nst, " pairs, too many for one matrix");
    const long ng = 12 * nst, nh = 144 * nst;
    ng_ = ng;
    fit(gkey_, ng), fit(hkey_, nh), fit(hsrc_, nh), fit(flag_, nh), fit(pos_, nh);
    if (ng > 0) {
      each(ng, cj::EmitGradient{v, free_of_dof_.data(), gkey_.data()});
      x_.sort_keys(gkey_.data(), ng);
    }
    each(long(nfree_) + 1, cj::RowStarts{gkey_.data(), ng, gadr_.data()});
    nnz_ = 0;
    if (nh > 0) {
      each(nh, cj::EmitHessian{v, free_of_dof_.data(), hkey_.data(), hsrc_.data()});
      x_.sort_pairs(hkey_.data(), hsrc_.data(), nh);
      each(nh, pipe::FirstOfRun{hkey_.data(), flag_.data()});
      nnz_ = x_.exclusive_scan(flag_.data(), pos_.data(), nh);
    }
    fit(start_, nnz_ + 1), fit(row_, nnz_), fit(col_, nnz_), fit(val_, nnz_);
    if (nnz_ > 0) {
      each(nh, cj::EntryStarts{hkey_.data(), flag_.data(), pos_.data(), start_.data(), row_.data(),
                               col_.data()});
      each(1, cj::EntryEnd{hkey_.data(), nh, nnz_, start_.data()});
    }
    each(long(nfree_) + 1, cj::RowPointers{row_.data(), nnz_, row_ptr_.data()});
  }

  /// f += the contact gradients (g: the gradient pool from the contact families' offset)
  void add_residual(const Real* g, Real* f) const {
    if (ng_ > 0) each(nfree_, cj::AddResidual{gadr_.data(), gkey_.data(), g, f});
  }
  /// J_c's values from the Hessian pool (h: from the contact families' offset)
  void assemble(const Real* h) {
    if (nnz_ > 0) each(nnz_, cj::EntryValues{start_.data(), hsrc_.data(), h, val_.data()});
  }

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
  int nfree_ = 0;
  long ng_ = 0, nnz_ = 0;
  Buffer<int> free_of_dof_, gadr_, hsrc_, flag_, pos_, start_, row_, col_, row_ptr_;
  Buffer<std::uint64_t> gkey_, hkey_;
  Buffer<Real> val_;
};

}  // namespace slender::contact
