#pragma once

// Block-Jacobi preconditioned conjugate gradients on the free-DOF Jacobian's CSR pattern: the
// loop bodies (host and device). The preconditioner inverts the diagonal blocks of the rows that
// belong to one aligned triple of global DOFs (a node's free position components; the twist and
// xi DOFs after the positions fall into triples of their own, which is just as valid a block
// diagonal). A symmetric positive definite matrix has SPD diagonal blocks, so the preconditioner
// is SPD whenever CG applies at all.

#include <vector>

#include "slender/core/types.h"

namespace slender {

/// The Krylov solves' relative residual, |b - A x| <= kKrylovRelTol |b|: CG on the CPU and on
/// the device, BiCGSTAB on the device, the vectorized batch's CG. Tight enough that Newton takes
/// the iterations of a direct solve.
constexpr Real kKrylovRelTol = 1e-12;

/// The CPU's and the device stepper's iteration cap for n unknowns: n, at least 100 and at most
/// 5000 (the vectorized batch allows more: vec_pcg_max_iters).
inline int krylov_max_iterations(int n) { return n < 100 ? 100 : (n > 5000 ? 5000 : n); }

/// row r of A times x (A's values of type V: Real, or float where a preconditioner's matrices
/// are kept in single precision; the sum is in Real)
template <class V>
SLENDER_HD inline Real csr_row_dot(
    const int* row_ptr, const int* col, const V* val, const Real* x, long r) {
  Real s = 0;
  for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j)
    s += Real(val[j]) * x[col[j]];
  return s;
}

/// row r of A x with each row's columns in runs of consecutive columns (run_ptr: the row's runs,
/// run_col: a run's first column, run_len: its length, at most 255): the same products, summed
/// in the same order, as csr_row_dot, with a column index read a run where it read one an entry
template <class V>
SLENDER_HD inline Real run_row_dot(const int* row_ptr,
                                   const int* run_ptr,
                                   const int* run_col,
                                   const unsigned char* run_len,
                                   const V* val,
                                   const Real* x,
                                   long r) {
  Real s = 0;
  int j = row_ptr[r];
  for (int k = run_ptr[r]; k < run_ptr[r + 1]; ++k) {
    const Real* xc = x + run_col[k];
    const int m = run_len[k];
    for (int c = 0; c < m; ++c)
      s += Real(val[j + c]) * xc[c];
    j += m;
  }
  return s;
}

/// A CSR pattern's columns as runs (run_row_dot): host-side construction
struct ColumnRuns {
  std::vector<int> run_ptr{0}, run_col;
  std::vector<unsigned char> run_len;
  ColumnRuns() = default;
  ColumnRuns(const std::vector<int>& row_ptr, const std::vector<int>& col) {
    run_ptr.reserve(row_ptr.size());
    each_entry(
        row_ptr, col,
        [&](int j, bool opens) {
          if (opens) {
            run_col.push_back(col[size_t(j)]);
            run_len.push_back(1);
          } else {
            ++run_len.back();
          }
        },
        [&] { run_ptr.push_back(int(run_col.size())); });
  }
  /// the number of runs the pattern makes, without making them (memory estimates)
  static long count(const std::vector<int>& row_ptr, const std::vector<int>& col) {
    long k = 0;
    each_entry(
        row_ptr, col, [&](int, bool opens) { k += opens ? 1 : 0; }, [] {});
    return k;
  }

 private:
  // entry(j, opens) for every entry in order, `opens` where it starts a run (a row's first
  // entry, a gap in the columns, or a run already 255 long); row_end() after each row
  template <class Entry, class RowEnd>
  static void each_entry(const std::vector<int>& row_ptr,
                         const std::vector<int>& col,
                         const Entry& entry,
                         const RowEnd& row_end) {
    for (size_t r = 0; r + 1 < row_ptr.size(); ++r) {
      int len = 0;
      for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j) {
        const bool opens = len == 0 || col[size_t(j)] != col[size_t(j) - 1] + 1 || len == 255;
        len = opens ? 1 : len + 1;
        entry(j, opens);
      }
      row_end();
    }
  }
};

/// y = A x for one CSR row per index.
template <class V>
struct CsrSpmvOf {
  const int* row_ptr;  // (n + 1)
  const int* col;      // (nnz)
  const V* val;        // (nnz)
  const Real* x;       // (n)
  Real* y;             // (n)
  SLENDER_HD void operator()(long r) const { y[r] = csr_row_dot(row_ptr, col, val, x, r); }
};
using CsrSpmv = CsrSpmvOf<Real>;

/// y += A x for one CSR row per index (a second matrix of a sum A1 + A2).
template <class V>
struct CsrSpmvAddOf {
  const int* row_ptr;
  const int* col;
  const V* val;
  const Real* x;
  Real* y;
  SLENDER_HD void operator()(long r) const { y[r] += csr_row_dot(row_ptr, col, val, x, r); }
};
using CsrSpmvAdd = CsrSpmvAddOf<Real>;

/// a[i][c] += the CSR entries of rows r0 .. r0 + m - 1 in columns r0 .. r0 + m - 1
SLENDER_HD inline void add_diagonal_block(
    const int* row_ptr, const int* col, const Real* val, int r0, int m, Real a[3][3]) {
  for (int i = 0; i < m; ++i)
    for (int j = row_ptr[r0 + i]; j < row_ptr[r0 + i + 1]; ++j) {
      const int c = col[j] - r0;
      if (c >= 0 && c < m) a[i][c] += val[j];
    }
}

/// out (3 x 3, row-major, unused entries 0) = the inverse of the m x m block a's symmetric part,
/// by Cholesky; false when it is not positive definite
SLENDER_HD inline bool invert_spd_block(const Real a[3][3], int m, Real* out) {
  // Cholesky a = L L^T of the symmetric part, then inv = L^-T L^-1
  Real L[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  bool ok = true;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j <= i; ++j) {
      Real s = Real(0.5) * (a[i][j] + a[j][i]);
      for (int k = 0; k < j; ++k)
        s -= L[i][k] * L[j][k];
      if (i == j) {
        if (!(s > 0)) {
          ok = false;
          s = 1;
        }
        L[i][i] = ::sqrt(s);
      } else {
        L[i][j] = s / L[j][j];
      }
    }
  Real Li[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};  // L^-1, lower triangular
  for (int i = 0; i < m; ++i) {
    Li[i][i] = 1 / L[i][i];
    for (int j = 0; j < i; ++j) {
      Real s = 0;
      for (int k = j; k < i; ++k)
        s -= L[i][k] * Li[k][j];
      Li[i][j] = s / L[i][i];
    }
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Real s = 0;
      for (int k = 0; k < m; ++k)
        s += Li[k][i] * Li[k][j];
      out[3 * i + j] = i < m && j < m ? s : 0;
    }
  return ok;
}

/// Inverts one diagonal block (size 1 to 3, rows block_row[b] .. block_row[b + 1] - 1) into
/// inv (3 x 3 per block, row-major, unused entries 0) by Cholesky; ok[b] = 0 when the block is
/// not positive definite.
struct BlockJacobiSetup {
  const int* row_ptr;
  const int* col;
  const Real* val;
  const int* block_row;  // (nblock + 1)
  Real* inv;             // (nblock x 9)
  unsigned char* ok;     // (nblock)
  SLENDER_HD void operator()(long b) const {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    Real a[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    add_diagonal_block(row_ptr, col, val, r0, m, a);
    ok[b] = invert_spd_block(a, m, inv + 9 * b) ? 1 : 0;
  }
};

/// BlockJacobiSetup of the sum of two CSR matrices of one size (the static Jacobian and the
/// contact part, engine/contact_jacobian.h)
struct BlockJacobiSetupSum {
  const int* row_ptr;
  const int* col;
  const Real* val;
  const int* row_ptr2;
  const int* col2;
  const Real* val2;
  const int* block_row;
  Real* inv;
  unsigned char* ok;
  SLENDER_HD void operator()(long b) const {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    Real a[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    add_diagonal_block(row_ptr, col, val, r0, m, a);
    add_diagonal_block(row_ptr2, col2, val2, r0, m, a);
    ok[b] = invert_spd_block(a, m, inv + 9 * b) ? 1 : 0;
  }
};

/// z = P^-1 r for one block per index.
template <class V>
struct BlockJacobiApplyOf {
  const int* block_row;
  const V* inv;  // (Real, or float where the blocks are kept in single precision)
  const Real* r;
  Real* z;
  SLENDER_HD void operator()(long b) const {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    const V* B = inv + 9 * b;
    for (int i = 0; i < m; ++i) {
      Real s = 0;
      for (int j = 0; j < m; ++j)
        s += Real(B[3 * i + j]) * r[r0 + j];
      z[r0 + i] = s;
    }
  }
};
using BlockJacobiApply = BlockJacobiApplyOf<Real>;

/// row r of J x for the iterative path's matrix: the model's CSR with its columns in runs
/// (run_row_dot) and, where contact adds a part, the pairs' CSR (c_val null: none); values of
/// type V (Real, or float for kPcgMixed). The same bits as CsrSpmvOf followed by CsrSpmvAddOf.
template <class V>
struct SystemRowsOf {
  const int* row_ptr;
  const int* run_ptr;
  const int* run_col;
  const unsigned char* run_len;
  const V* val;
  const int* c_row_ptr;
  const int* c_col;
  const V* c_val;
  SLENDER_HD Real operator()(const Real* x, long r) const {
    Real y = run_row_dot(row_ptr, run_ptr, run_col, run_len, val, x, r);
    if (c_val) y += csr_row_dot(c_row_ptr, c_col, c_val, x, r);
    return y;
  }
};

/// y = J x (SystemRowsOf) for one row per index
template <class V>
struct SystemSpmvOf {
  SystemRowsOf<V> rows;
  const Real* x;
  Real* y;
  SLENDER_HD void operator()(long r) const { y[r] = rows(x, r); }
};

/// row i of z = P^-1 r (block Jacobi, the block b that holds row i) with r's entries given by
/// rj(j): the same sum, in the same order, as BlockJacobiApplyOf's at that row
template <class V, class R>
SLENDER_HD inline Real block_jacobi_row(
    const int* block_row, const V* inv, int b, long i, const R& rj) {
  const int r0 = block_row[b], m = block_row[b + 1] - r0;
  const V* B = inv + 9 * b + 3 * (i - r0);
  Real s = 0;
  for (int j = 0; j < m; ++j)
    s += Real(B[j]) * rj(r0 + j);
  return s;
}

/// to[i] = from[i] in single precision, one entry per index
struct ToSingle {
  const Real* from;
  float* to;
  SLENDER_HD void operator()(long i) const { to[i] = float(from[i]); }
};

}  // namespace slender
