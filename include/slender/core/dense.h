#pragma once

// Dense Cholesky and LU with partial pivoting (host and device): the direct solve of the small
// coupled systems of a batch (shells, rod-shell structures: a few hundred free DOFs), one
// system per call, so that a batch factorizes its environments one per thread (CPU cores, or
// CUDA threads). Storage is row-major n x n, A(i, j) at A[i n + j]. Both factorizations are
// right-looking: every update is an axpy along a row (contiguous, independent multiply-adds),
// and every sum runs in a fixed order, so that the result does not depend on where or with how
// many threads it runs. Matrices and vectors are any pointer-like type: Real*, or Strided<Real>
// for a batch's interleaved storage (core/strided.h).
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

/// U^T U = A in place (upper triangle); false on a pivot at or below tiny * max A(i, i) (or
/// not finite): A is then partly overwritten
template <class P>
SLENDER_HD bool dense_cholesky_factor(P A, int n, Real tiny) {
  Real scale = 0;
  for (int i = 0; i < n; ++i) {
    const Real d = ::fabs(A[long(i) * n + i]);
    scale = d > scale ? d : scale;
  }
  const Real floor = tiny * scale;
  for (int k = 0; k < n; ++k) {
    const auto rk = A + long(k) * n;  // rk[j] = A(k, j)
    const Real d = rk[k];
    if (!(d > floor)) return false;
    const Real ukk = ::sqrt(d);
    rk[k] = ukk;
    const Real inv = 1 / ukk;
    for (int j = k + 1; j < n; ++j)
      rk[j] *= inv;
    // trailing update of the upper triangle: A(i, j) -= U(k, i) U(k, j), j >= i > k
    for (int i = k + 1; i < n; ++i) {
      const Real u = rk[i];
      if (u == 0) continue;
      const auto ri = A + long(i) * n;
      for (int j = i; j < n; ++j)
        ri[j] -= u * rk[j];
    }
  }
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

/// P A = L U in place with partial pivoting (the first row of largest |A(i, k)| at step k);
/// false on a pivot at or below tiny * max |A(i, j)| (or not finite)
template <class P>
SLENDER_HD bool dense_lu_factor(P A, int n, int* piv, Real tiny) {
  Real scale = 0;
  for (long i = 0; i < long(n) * n; ++i) {
    const Real a = ::fabs(A[i]);
    scale = a > scale ? a : scale;
  }
  const Real floor = tiny * scale;
  for (int k = 0; k < n; ++k) {
    int p = k;
    Real best = ::fabs(A[long(k) * n + k]);
    for (int i = k + 1; i < n; ++i) {
      const Real a = ::fabs(A[long(i) * n + k]);
      if (a > best) {
        best = a;
        p = i;
      }
    }
    piv[k] = p;
    if (!(best > floor)) return false;
    const auto rk = A + long(k) * n;
    if (p != k) {
      const auto rp = A + long(p) * n;
      for (int j = 0; j < n; ++j) {
        const Real t = rk[j];
        rk[j] = rp[j];
        rp[j] = t;
      }
    }
    const Real pk = rk[k];
    for (int i = k + 1; i < n; ++i) {
      const auto ri = A + long(i) * n;
      const Real l = ri[k] / pk;
      ri[k] = l;
      if (l == 0) continue;
      for (int j = k + 1; j < n; ++j)
        ri[j] -= l * rk[j];
    }
  }
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
