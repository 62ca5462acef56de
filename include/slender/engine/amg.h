#pragma once

// Smoothed-aggregation algebraic multigrid (SA-AMG): the multilevel preconditioner of the
// iterative path's "amg" kind (engine/system_solve.h), for the Jacobians whose block-Jacobi CG
// needs iterations that grow like the square root of the unknowns (a shell's bending: S9,
// issue 21; bench/results/2026-11-27-s9-preconditioner-study-cpu-xeon-2c.md).
//
// The hierarchy is built on the host (build_amg, host/solvers/amg.cpp), from the Jacobian's CSR
// (the static and contact parts merged) and the engine's blocks (a node's free rows):
// - strength: blocks I and J are strongly coupled where |A_IJ|_F > theta sqrt(|A_II|_F |A_JJ|_F);
// - aggregation: greedy, over the strong graph (a seed and its free strong neighbours; the rest
//   join the aggregate they are most strongly coupled to);
// - the tentative prolongator: per aggregate, an orthonormal basis of the near-null space
//   restricted to its rows (a QR factorization; dependent columns dropped). The near-null space
//   is the caller's: the engine gives the rigid motions of the current configuration (three
//   translations and three rotations of the node positions), which an elastic body's stiffness
//   leaves free or nearly so (a shell's bending); R of the QR carries it to the coarse level;
// - the prolongator, smoothed by one damped block-Jacobi step: P = (I - w D^-1 A) P0 with
//   w = 4 / (3 rho), rho the spectral radius of D^-1 A (power iteration);
// - the coarse matrix P^T A P (Galerkin), whose blocks are the aggregates' (up to k rows); the
//   next level is built on it, until at most kAmgCoarsest rows remain (or coarsening stalls),
//   which are inverted densely.
// The cycle (AmgOn<X>::apply) is a V-cycle with one damped block-Jacobi sweep before and after
// each coarse correction (w_s = 4 / (3 rho) on every level). It is symmetric, so that CG may
// use it; BiCGSTAB uses it as well. The cycle runs on the executor's loops (CSR products,
// block products, a dense product on the coarsest level): the same code on the CPU and the GPU.
// Its transfer and coarse matrices hold float values (CsrSpmvOf<float>: half the bytes of their
// values, the sums in Real); the smoothers, the coarsest inverse and the finest matrix stay Real.
// The engine reuses a hierarchy for later matrices (kAmgReuse, kAmgStale): the finest level's
// matrix and smoother are always the current ones, so that a stale hierarchy costs iterations,
// never accuracy (CG stops on the true tolerance).

#include <memory>
#include <string>
#include <vector>

#include "slender/core/dense.h"
#include "slender/core/hd.h"
#include "slender/core/pcg.h"
#include "slender/core/reduce4.h"
#include "slender/core/types.h"
#include "slender/engine/krylov.h"

namespace slender {

/// at most this many rows on the coarsest level, which is inverted densely
constexpr int kAmgCoarsest = 400;
/// at most this many levels (the finest included)
constexpr int kAmgMaxLevels = 12;

/// the engine's reuse of a hierarchy: built for one Newton matrix, it preconditions the next
/// ones (with the finest level's smoother and matrix always the current ones) until a solve
/// takes more than kAmgStale times the iterations of the first one after the build, plus 10, a
/// solve fails, the plan changes, or kAmgReuse solves have used it
constexpr int kAmgReuse = 20;
/// the same with the Galerkin refresh (AmgOn::refresh), which keeps a hierarchy's coarse
/// matrices those of the current one: on S9's 20k cloth one build then served 350 solves at the
/// iterations of a fresh one (bench/results/2026-11-30-rest-neighbour-table-xeon-2c.md)
constexpr int kAmgReuseRefreshed = 200;
constexpr Real kAmgStale = 1.5;

struct AmgOptions {
  Real theta = 0.05;  // strength of connection (the same on every level)
  int coarsest = kAmgCoarsest;
  int max_levels = kAmgMaxLevels;
  bool trace = false;  // a line on stderr for each level built
};

/// a CSR matrix on the host
struct AmgCsr {
  int nrow = 0, ncol = 0;
  std::vector<int> row_ptr{0}, col;
  std::vector<Real> val;
  long nnz() const { return long(col.size()); }
};

/// a A + b B for two CSR matrices of one shape with sorted rows (the result's rows sorted too);
/// entries that sum to exactly zero are dropped, unless keep_zeros (then the pattern is the union
/// of the two patterns)
AmgCsr csr_add(const AmgCsr& A, Real a, const AmgCsr& B, Real b, bool keep_zeros = false);

/// one level of the hierarchy on the host: its matrix (empty on the finest level, whose matrix
/// is the caller's), its blocks and their smoother (w_s D^-1, bs x bs per block, row-major),
/// and the prolongation to it from the next coarser level (P) with its transpose (R)
struct AmgLevelHost {
  AmgCsr A, P, R;
  /// the pattern of this level's matrix times P (the coarse matrix is R times it): the
  /// executor's Galerkin refresh (AmgOn::refresh) fills it again for a new matrix
  std::vector<int> AP_row_ptr, AP_col;
  std::vector<int> block_row;
  int bs = 3;  // the largest block's rows (3 on the finest level)
  std::vector<Real> smoother;
  Real rho = 0;  // the estimate of rho(D^-1 A)
};

struct AmgHierarchyHost {
  std::vector<AmgLevelHost> levels;  // finest first; the last one is the coarsest
  std::vector<Real> coarse_inverse;  // (n x n, row-major) of the coarsest level's matrix
  /// multiply-adds of one cycle and of one product with the finest matrix
  double cycle_madds = 0;
  int rows(size_t l) const { return int(levels[l].block_row.back()); }
};

/// Builds the hierarchy for A (n x n CSR, sorted columns), its blocks (block_row: nblock + 1
/// row offsets, each block at most 3 rows) and its near-null space (near_null: n x k,
/// row-major). False, with the reason in `why`, where a diagonal block is not positive
/// definite, a value is not finite or the coarsest matrix is singular.
bool build_amg(const AmgCsr& A,
               const std::vector<int>& block_row,
               const std::vector<Real>& near_null,
               int k,
               const AmgOptions& options,
               AmgHierarchyHost& out,
               std::string& why);

/// The dense inverse (n x n, row-major) of a coarsest level's matrix A, as build_amg takes it;
/// false, with the reason in `why`, where A is singular
bool amg_dense_inverse(const AmgCsr& A, std::vector<Real>& out, std::string& why);

/// The engine's near-null space for build_amg (B: nfree x k, row-major; returns k): on each free
/// row whose DOF is a node position (free_dof[r] < y.size(), y the positions, three DOFs a
/// node), the three translations and the three rotations about the origin of the configuration
/// y; on the other rows (twists, mid-edge DOFs) a seventh, constant column, where there are
/// such rows (k = 7; else k = 6).
int rigid_near_null(const std::vector<int>& free_dof,
                    const std::vector<Real>& y,
                    std::vector<Real>& B);

// ---- the cycle's loop bodies -------------------------------------------------------------

/// t = r - t (after t = A z: the residual)
struct ResidualFrom {
  const Real* r;
  Real* t;
  SLENDER_HD void operator()(long i) const { t[i] = r[i] - t[i]; }
};

/// z = S t (kAdd: z += S t) for one block per index (S: bs x bs row-major blocks)
template <bool kAdd>
struct BlockSmoothOf {
  const int* block_row;
  int bs;
  const Real* inv;
  const Real* t;
  Real* z;
  SLENDER_HD void operator()(long b) const {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    const Real* S = inv + long(bs) * bs * b;
    for (int i = 0; i < m; ++i) {
      Real s = 0;
      for (int j = 0; j < m; ++j)
        s += S[i * bs + j] * t[r0 + j];
      if (kAdd) {
        z[r0 + i] += s;
      } else {
        z[r0 + i] = s;
      }
    }
  }
};
using BlockSmooth = BlockSmoothOf<false>;
using BlockSmoothAdd = BlockSmoothOf<true>;

/// y = s x
struct ScaledCopy {
  const Real* x;
  Real s;
  Real* y;
  SLENDER_HD void operator()(long i) const { y[i] = s * x[i]; }
};

/// y = M x for a dense n x n row-major M, one row per index
struct DenseRowProduct {
  int n;
  const Real* M;
  const Real* x;
  Real* y;
  SLENDER_HD void operator()(long r) const {
    Real s = 0;
    const Real* row = M + r * long(n);
    for (int j = 0; j < n; ++j)
      s += row[j] * x[j];
    y[r] = s;
  }
};

/// C = A B into C's given pattern (each row's columns sorted, holding every product's column),
/// one row of C per index: the row set to zero, then each product added at its column, found by
/// bisection. The Galerkin refresh's two products (A P, then R (A P)) with the patterns of the
/// build.
template <class TA, class TB, class TC>
struct CsrProductInPattern {
  const int* a_row;
  const int* a_col;
  const TA* a_val;
  const int* b_row;
  const int* b_col;
  const TB* b_val;
  const int* c_row;
  const int* c_col;
  TC* c_val;
  SLENDER_HD void operator()(long i) const {
    const int c0 = c_row[i], c1 = c_row[i + 1];
    for (int e = c0; e < c1; ++e)
      c_val[e] = TC(0);
    for (int ea = a_row[i]; ea < a_row[i + 1]; ++ea) {
      const int k = a_col[ea];
      const Real a = Real(a_val[ea]);
      for (int eb = b_row[k]; eb < b_row[k + 1]; ++eb) {
        const long at = c0 + sorted_lower_bound(c_col + c0, long(c1 - c0), b_col[eb]);
        c_val[at] = TC(Real(c_val[at]) + a * Real(b_val[eb]));
      }
    }
  }
};

/// the largest block of a coarse level (the near-null space's columns: at most 7)
constexpr int kAmgMaxBlock = 8;

/// A coarse level's smoother from its matrix: each block's inverse (bs x bs, row-major) times w,
/// the symmetric part of the block inverted by Cholesky (as build_amg's); ok[b] = 0 where the
/// block is not positive definite
struct AmgBlockSmoother {
  const int* row;
  const int* col;
  const float* val;
  const int* block_row;
  int bs;
  Real w;
  Real* smoother;
  unsigned char* ok;
  SLENDER_HD void operator()(long b) const {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    Real a[kAmgMaxBlock * kAmgMaxBlock];
    for (int i = 0; i < m * m; ++i)
      a[i] = 0;
    for (int i = 0; i < m; ++i)
      for (int e = row[r0 + i]; e < row[r0 + i + 1]; ++e) {
        const int c = col[e] - r0;
        if (c >= 0 && c < m) a[i * m + c] += Real(val[e]);
      }
    // the symmetric part (in the upper triangle, which the factorization reads), factored and
    // inverted column by column (core/dense.h; a pivot at or below 0 fails)
    for (int i = 0; i < m; ++i)
      for (int j = i + 1; j < m; ++j)
        a[i * m + j] = Real(0.5) * (a[i * m + j] + a[j * m + i]);
    if (!dense_cholesky_factor(a, m, Real(0))) {
      ok[b] = 0;
      return;
    }
    Real* S = smoother + long(bs) * bs * b;
    for (int c = 0; c < m; ++c) {
      Real x[kAmgMaxBlock];
      for (int i = 0; i < m; ++i)
        x[i] = i == c ? Real(1) : Real(0);
      dense_cholesky_solve(a, m, x);
      for (int i = 0; i < m; ++i)
        S[i * bs + c] = w * x[i];
    }
    ok[b] = 1;
  }
};

namespace stepper {

/// The hierarchy on executor X and its V-cycle. `set` takes a hierarchy built on the host;
/// `apply` needs the finest level's matrix product from the caller (the Jacobian there is the
/// engine's own: the static pattern and the contact part).
template <class X>
class AmgOn {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;

  /// (refreshable: the patterns of A P kept for refresh, which then may run; their values, as
  /// many as A P has, take memory of the order of the finest matrix's)
  void set(const AmgHierarchyHost& h, bool refreshable = false) {
    refreshable_ = refreshable;
    const size_t L = h.levels.size();
    levels_.resize(L);
    for (size_t l = 0; l < L; ++l) {
      const AmgLevelHost& s = h.levels[l];
      Level& d = levels_[l];
      d.n = h.rows(l);
      d.nblock = long(s.block_row.size()) - 1;
      d.bs = s.bs;
      d.block_row.upload(s.block_row);
      d.smoother.upload(s.smoother);
      d.w = s.rho > 0 ? Real(4) / (Real(3) * s.rho) : Real(0);
      upload(s.A, d.A);
      upload(s.P, d.P);
      upload(s.R, d.R);
      if (refreshable) {
        d.ap_row.upload(s.AP_row_ptr);
        d.ap_col.upload(s.AP_col);
        d.ap_val.resize(s.AP_col.size());
      } else {
        d.ap_row.resize(0), d.ap_col.resize(0), d.ap_val.resize(0);
      }
      d.r.resize(size_t(d.n));
      d.z.resize(size_t(d.n));
      d.t.resize(size_t(d.n));
    }
    coarse_inverse_.upload(h.coarse_inverse);
    // the coarsest level's pattern on the host, for refresh's dense inverse
    coarsest_ = L > 1 ? h.levels[L - 1].A : AmgCsr{};
  }
  /// The Galerkin refresh (of a hierarchy set refreshable): the hierarchy for a new finest matrix
  /// (n x n CSR in X's memory, of the pattern the hierarchy was built on or within it), its
  /// aggregates and prolongators kept. Each coarse matrix becomes R (A P) again from the level
  /// above (the products on the executor, into the patterns of the build), each coarse smoother the
  /// new blocks' inverses with the damping of the build, and the coarsest inverse is taken again
  /// (on the host: its matrix is at most a few hundred rows). The finest smoother is the caller's
  /// (refresh_finest). False where a block is not positive definite or the coarsest matrix is
  /// singular (the caller builds again).
  bool refresh(const int* row, const int* col, const Real* val) {
    const size_t L = levels_.size();
    if (L < 2) return true;
    if (!refreshable_) return false;
    for (const Level& v : levels_)
      if (v.bs > kAmgMaxBlock) return false;
    for (size_t l = 0; l + 1 < L; ++l) {
      Level& F = levels_[l];
      Level& C = levels_[l + 1];
      if (l == 0) {
        X::for_each(F.n, CsrProductInPattern<Real, float, Real>{
                             row, col, val, F.P.row_ptr.data(), F.P.col.data(), F.P.val.data(),
                             F.ap_row.data(), F.ap_col.data(), F.ap_val.data()});
      } else {
        X::for_each(F.n, CsrProductInPattern<float, float, Real>{
                             F.A.row_ptr.data(), F.A.col.data(), F.A.val.data(), F.P.row_ptr.data(),
                             F.P.col.data(), F.P.val.data(), F.ap_row.data(), F.ap_col.data(),
                             F.ap_val.data()});
      }
      X::for_each(C.n, CsrProductInPattern<float, Real, float>{
                           F.R.row_ptr.data(), F.R.col.data(), F.R.val.data(), F.ap_row.data(),
                           F.ap_col.data(), F.ap_val.data(), C.A.row_ptr.data(), C.A.col.data(),
                           C.A.val.data()});
      if (l + 2 < L) {
        ok_.resize(size_t(C.nblock));
        X::for_each(C.nblock,
                    AmgBlockSmoother{C.A.row_ptr.data(), C.A.col.data(), C.A.val.data(),
                                     C.block_row.data(), C.bs, C.w, C.smoother.data(), ok_.data()});
        Red4 bad{};
        X::env_reduce(1, C.nblock, env_major::CountZeros{C.nblock, ok_.data()}, &bad, scratch_);
        if (bad.s0 != 0) return false;
      }
    }
    // the coarsest inverse, on the host
    Level& K = levels_[L - 1];
    std::vector<float> v(coarsest_.col.size());
    X::to_host(v.data(), K.A.val.data(), v.size());
    coarsest_.val.assign(v.begin(), v.end());
    std::vector<Real> inv;
    std::string why;
    if (!amg_dense_inverse(coarsest_, inv, why)) return false;
    coarse_inverse_.upload(inv);
    return true;
  }
  bool ready() const { return !levels_.empty(); }
  /// the finest level's smoother from the current matrix's block inverses (3 x 3 each), with
  /// the hierarchy's damping: the coarse levels stay as they were built
  void refresh_finest(const Real* block_inverse) {
    if (levels_.size() < 2) return;
    Level& L = levels_[0];
    X::for_each(9 * L.nblock, ScaledCopy{block_inverse, L.w, L.smoother.data()});
  }
  int levels() const { return int(levels_.size()); }
  /// level l's matrix (l >= 1: its values as held, in single precision) and smoother, copied to
  /// the host (checks)
  AmgCsr level_matrix(size_t l) const {
    const Level& v = levels_[l];
    AmgCsr out;
    out.nrow = out.ncol = v.n;
    out.row_ptr.resize(size_t(v.n) + 1);
    out.col.resize(v.A.col.size());
    std::vector<float> f(v.A.val.size());
    X::to_host(out.row_ptr.data(), v.A.row_ptr.data(), out.row_ptr.size());
    X::to_host(out.col.data(), v.A.col.data(), out.col.size());
    X::to_host(f.data(), v.A.val.data(), f.size());
    out.val.assign(f.begin(), f.end());
    return out;
  }
  std::vector<Real> level_smoother(size_t l) const {
    std::vector<Real> out(levels_[l].smoother.size());
    X::to_host(out.data(), levels_[l].smoother.data(), out.size());
    return out;
  }

  /// z = M^-1 r (one V-cycle); `finest(x, y)`: y = A x with the finest level's matrix
  template <class Finest>
  void apply(const Real* r, Real* z, const Finest& finest) {
    cycle(0, r, z, finest);
  }

 private:
  struct DeviceCsr {
    int nrow = 0;
    Buffer<int> row_ptr, col;
    Buffer<float> val;
  };
  struct Level {
    int n = 0;
    long nblock = 0;
    int bs = 3;
    Real w = 0;  // the smoother's damping
    DeviceCsr A, P, R;
    Buffer<int> ap_row, ap_col;  // the pattern of A P (refresh)
    Buffer<Real> ap_val;
    Buffer<int> block_row;
    Buffer<Real> smoother;
    Buffer<Real> r, z, t;  // this level's right-hand side, correction and residual
  };

  static void upload(const AmgCsr& s, DeviceCsr& d) {
    d.nrow = s.nrow;
    d.row_ptr.upload(s.row_ptr);
    d.col.upload(s.col);
    d.val.upload(std::vector<float>(s.val.begin(), s.val.end()));
  }
  static void multiply(const DeviceCsr& M, const Real* x, Real* y) {
    X::for_each(M.nrow, CsrSpmvOf<float>{M.row_ptr.data(), M.col.data(), M.val.data(), x, y});
  }
  static void multiply_add(const DeviceCsr& M, const Real* x, Real* y) {
    X::for_each(M.nrow, CsrSpmvAddOf<float>{M.row_ptr.data(), M.col.data(), M.val.data(), x, y});
  }

  template <class Finest>
  void level_product(size_t l, const Real* x, Real* y, const Finest& finest) {
    if (l == 0) {
      finest(x, y);
    } else {
      multiply(levels_[l].A, x, y);
    }
  }

  template <class Finest>
  void cycle(size_t l, const Real* r, Real* z, const Finest& finest) {
    Level& L = levels_[l];
    if (l + 1 == levels_.size()) {
      X::for_each(L.n, DenseRowProduct{L.n, coarse_inverse_.data(), r, z});
      return;
    }
    Level& C = levels_[l + 1];
    Real* t = L.t.data();
    // pre-smoothing from zero: z = S r
    X::for_each(L.nblock, BlockSmooth{L.block_row.data(), L.bs, L.smoother.data(), r, z});
    // the coarse correction of the residual
    level_product(l, z, t, finest);
    X::for_each(L.n, ResidualFrom{r, t});
    multiply(L.R, t, C.r.data());
    cycle(l + 1, C.r.data(), C.z.data(), finest);
    multiply_add(L.P, C.z.data(), z);
    // post-smoothing: z += S (r - A z)
    level_product(l, z, t, finest);
    X::for_each(L.n, ResidualFrom{r, t});
    X::for_each(L.nblock, BlockSmoothAdd{L.block_row.data(), L.bs, L.smoother.data(), t, z});
  }

  std::vector<Level> levels_;
  Buffer<Real> coarse_inverse_;
  bool refreshable_ = false;
  AmgCsr coarsest_;           // the coarsest level's pattern (host), for refresh
  Buffer<unsigned char> ok_;  // refresh's block flags
  Buffer<Red4> scratch_;      // its reduction's workspace
};

}  // namespace stepper

}  // namespace slender
