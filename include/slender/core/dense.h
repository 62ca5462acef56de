#pragma once

// Dense Cholesky and LU with partial pivoting (host and device): the direct solve of the small
// coupled systems of a batch (shells, rod-shell structures: a few hundred free DOFs), one
// system per call, so that a batch factorizes its environments one per thread (CPU cores, or
// CUDA threads), or in cooperative steps on a group of lanes per system (a GPU warp: the lanes
// split each column's work, with a barrier between steps, and give the same bits). Storage is
// row-major n x n, A(i, j) at A[i n + j]. Both factorizations are right-looking: every update is an
// axpy along a row (contiguous, independent multiply-adds), and every sum runs in a fixed order, so
// that the result does not depend on where or with how many threads it runs. Matrices and vectors
// are any pointer-like type: Real*, or Strided<Real> for a batch's interleaved storage
// (core/strided.h).
//
// - Cholesky A = U^T U (U = L^T upper triangular, in the upper triangle; only the upper
//   triangle of A is read): symmetric positive definite systems;
// - LU P A = L U (L unit lower, U upper, in place; piv[k] the row swapped with row k at step
//   k): any nonsingular system (the non-symmetric Jacobians of friction and drag, or a
//   symmetric one that is not positive definite).
// A pivot at or below tiny times the matrix's scale fails the factorization (the caller falls
// back to a sparse pivoting solver and reports it).

#include "slender/core/strided.h"
#include "slender/core/types.h"

namespace slender {

/// x <- U^-1 x, U the upper triangle of A (the back substitution of both factorizations)
template <class P, class PX>
SLENDER_HD void dense_upper_solve(P A, int n, PX x) {
  for (int i = n - 1; i >= 0; --i) {
    const auto ri = A + long(i) * n;
    Real v = x[i];
    for (int j = i + 1; j < n; ++j)
      v -= ri[j] * x[j];
    x[i] = v / ri[i];
  }
}

// ---- Cholesky, in steps a group of cooperating lanes can share (a GPU warp per system): per
// column k, phase 0 (dense_cholesky_row) and phase 1 (dense_cholesky_update) with a barrier
// after each; the lanes split the columns j = k + 1 + lane, k + 1 + lane + nlanes, ... Each
// element gets the same operations in the same order for any number of lanes.

/// The pivot floor: tiny * max A(i, i).
template <class P>
SLENDER_HD Real dense_cholesky_floor(P A, int n, Real tiny) {
  Real scale = 0;
  for (int i = 0; i < n; ++i) {
    const Real d = ::fabs(A[long(i) * n + i]);
    scale = d > scale ? d : scale;
  }
  return tiny * scale;
}

/// U(k-1, k-1) = sqrt(A(k-1, k-1)), stored one column late (one lane; nothing else reads it then)
template <class P>
SLENDER_HD void dense_cholesky_diag(P A, int n, int k) {
  A[long(k) * n + k] = ::sqrt(A[long(k) * n + k]);
}

/// Phase 0 of column k: false (on every lane alike) when A(k, k) is no pivot; lane 0 first
/// stores column k - 1's diagonal; the lane's share of row k scaled by 1 / sqrt(A(k, k)).
template <class P>
SLENDER_HD bool dense_cholesky_row(P A, int n, int k, Real floor, int lane, int nlanes) {
  const auto rk = A + long(k) * n;  // rk[j] = A(k, j)
  const Real d = rk[k];
  if (!(d > floor)) return false;
  if (lane == 0 && k > 0) dense_cholesky_diag(A, n, k - 1);
  const Real inv = 1 / ::sqrt(d);
  for (int j = k + 1 + lane; j < n; j += nlanes)
    rk[j] *= inv;
  return true;
}

/// Phase 1 of column k: the lane's columns of the trailing upper triangle,
/// A(i, j) -= U(k, i) U(k, j) for k < i <= j, row by row (an axpy along each row: contiguous on
/// one thread, consecutive addresses across the lanes)
template <class P>
SLENDER_HD void dense_cholesky_update(P A, int n, int k, int lane, int nlanes) {
  const auto rk = A + long(k) * n;
  for (int i = k + 1; i < n; ++i) {
    const Real u = rk[i];
    if (u == 0) continue;
    const auto ri = A + long(i) * n;
    // the lane's first column at or right of the diagonal
    int j = k + 1 + lane;
    if (j < i) j += (i - j + nlanes - 1) / nlanes * nlanes;
    for (; j < n; j += nlanes)
      ri[j] -= u * rk[j];
  }
}

/// U^T U = A in place (upper triangle); false on a pivot at or below tiny * max A(i, i) (or
/// not finite): A is then partly overwritten. One thread: the steps above with one lane.
template <class P>
SLENDER_HD bool dense_cholesky_factor(P A, int n, Real tiny) {
  const Real floor = dense_cholesky_floor(A, n, tiny);
  for (int k = 0; k < n; ++k) {
    if (!dense_cholesky_row(A, n, k, floor, 0, 1)) return false;
    dense_cholesky_update(A, n, k, 0, 1);
  }
  if (n > 0) dense_cholesky_diag(A, n, n - 1);
  return true;
}

/// x <- A^-1 x with the factor of dense_cholesky_factor
template <class P, class PX>
SLENDER_HD void dense_cholesky_solve(P A, int n, PX x) {
  // U^T y = x, column by column of U^T (rows of U)
  for (int k = 0; k < n; ++k) {
    const auto rk = A + long(k) * n;
    const Real yk = x[k] / rk[k];
    x[k] = yk;
    if (yk == 0) continue;
    for (int j = k + 1; j < n; ++j)
      x[j] -= rk[j] * yk;
  }
  dense_upper_solve(A, n, x);
}

// ---- LU with partial pivoting in cooperative steps: per column k, phase 0 (dense_lu_pivot:
// the pivot row, found alike by every lane), phase 1 (dense_lu_swap: the lanes' columns of the
// row swap), phase 2 (dense_lu_eliminate: the lanes' columns of the elimination), a barrier after
// each; the multipliers of column k are stored by lane 0 in column k + 1's phase 0.

/// The pivot floor: tiny * max |A(i, j)|.
template <class P>
SLENDER_HD Real dense_lu_floor(P A, int n, Real tiny) {
  Real scale = 0;
  for (long i = 0; i < long(n) * n; ++i) {
    const Real a = ::fabs(A[i]);
    scale = a > scale ? a : scale;
  }
  return tiny * scale;
}

/// Column k's multipliers into L: A(i, k) /= A(k, k) below the diagonal (one lane).
template <class P>
SLENDER_HD void dense_lu_multipliers(P A, int n, int k) {
  const Real pk = A[long(k) * n + k];
  for (int i = k + 1; i < n; ++i)
    A[long(i) * n + k] = A[long(i) * n + k] / pk;
}

/// Phase 0 of column k: lane 0 stores column k - 1's multipliers (nothing here reads them) and
/// piv[k], the first row of largest |A(i, k)|, i >= k (every lane finds it alike); false when
/// that is no pivot.
template <class P>
SLENDER_HD bool dense_lu_pivot(P A, int n, int* piv, int k, Real floor, int lane) {
  if (lane == 0 && k > 0) dense_lu_multipliers(A, n, k - 1);
  int p = k;
  Real best = ::fabs(A[long(k) * n + k]);
  for (int i = k + 1; i < n; ++i) {
    const Real a = ::fabs(A[long(i) * n + k]);
    if (a > best) {
      best = a;
      p = i;
    }
  }
  if (lane == 0) piv[k] = p;
  return best > floor;
}

/// Phase 1 of column k: the lane's columns j = lane, lane + nlanes, ... of the swap of rows k and
/// piv[k].
template <class P>
SLENDER_HD void dense_lu_swap(P A, int n, const int* piv, int k, int lane, int nlanes) {
  const int p = piv[k];
  if (p == k) return;
  const auto rk = A + long(k) * n;
  const auto rp = A + long(p) * n;
  for (int j = lane; j < n; j += nlanes) {
    const Real t = rk[j];
    rk[j] = rp[j];
    rp[j] = t;
  }
}

/// Phase 2 of column k: the lane's columns j = k + 1 + lane, ... of A(i, j) -= l_i A(k, j),
/// l_i = A(i, k) / A(k, k) read (dense_lu_multipliers stores them a phase later).
template <class P>
SLENDER_HD void dense_lu_eliminate(P A, int n, int k, int lane, int nlanes) {
  const auto rk = A + long(k) * n;
  const Real pk = rk[k];
  for (int i = k + 1; i < n; ++i) {
    const auto ri = A + long(i) * n;
    const Real l = ri[k] / pk;
    if (l == 0) continue;
    for (int j = k + 1 + lane; j < n; j += nlanes)
      ri[j] -= l * rk[j];
  }
}

/// P A = L U in place with partial pivoting (the first row of largest |A(i, k)| at step k);
/// false on a pivot at or below tiny * max |A(i, j)| (or not finite). One thread: the steps
/// above with one lane.
template <class P>
SLENDER_HD bool dense_lu_factor(P A, int n, int* piv, Real tiny) {
  const Real floor = dense_lu_floor(A, n, tiny);
  for (int k = 0; k < n; ++k) {
    if (!dense_lu_pivot(A, n, piv, k, floor, 0)) return false;
    dense_lu_swap(A, n, piv, k, 0, 1);
    dense_lu_eliminate(A, n, k, 0, 1);
  }
  if (n > 0) dense_lu_multipliers(A, n, n - 1);
  return true;
}

/// x <- A^-1 x with the factors of dense_lu_factor
template <class P, class PX>
SLENDER_HD void dense_lu_solve(P A, int n, const int* piv, PX x) {
  for (int k = 0; k < n; ++k) {
    const int p = piv[k];
    if (p != k) {
      const Real t = x[k];
      x[k] = x[p];
      x[p] = t;
    }
  }
  // L y = P x (unit diagonal)
  for (int i = 1; i < n; ++i) {
    const auto ri = A + long(i) * n;
    Real v = x[i];
    for (int k = 0; k < i; ++k)
      v -= ri[k] * x[k];
    x[i] = v;
  }
  dense_upper_solve(A, n, x);
}

}  // namespace slender
