#pragma once

// Banded LU without pivoting (host and device): the direct solve for systems whose DOFs can be
// ordered into a narrow band, as a rod's can (node by node, each twist between its nodes:
// half-bandwidth about 10). Storage is row-major with 2w + 1 entries per row: A(i, j), |i - j| <=
// w, at band[i (2w + 1) + (j - i + w)]. The factorization overwrites the band with L (unit lower,
// below the diagonal) and U. No pivoting: the Jacobians of implicit steps are dominated by their
// mass terms; a pivot below `tiny` relative to the largest diagonal entry fails the
// factorization (the caller falls back to a pivoting solver). One system per call, so that a
// batch factorizes its environments one per thread (CPU cores, or CUDA threads). The band and
// the vector are any pointer-like type: Real*, or Strided<Real> for a batch's interleaved
// storage (core/strided.h).

#include "slender/core/strided.h"
#include "slender/core/types.h"

namespace slender {

/// The pivot floor of band_lu_factor: tiny * max |A(i, i)|.
template <class P>
SLENDER_HD Real band_lu_floor(P band, int n, int w, Real tiny) {
  const int s = 2 * w + 1;
  Real scale = 0;
  for (int i = 0; i < n; ++i) {
    const Real d = ::fabs(band[i * s + w]);
    scale = d > scale ? d : scale;
  }
  return tiny * scale;
}

/// Whether A(k, k) can be column k's pivot: above the floor (NaN is not; an infinite pivot is,
/// and the solve's result then fails the caller's finiteness check).
template <class P>
SLENDER_HD bool band_lu_pivot_ok(P band, int w, int k, Real floor) {
  return ::fabs(band[k * (2 * w + 1) + w]) > floor;
}

/// Column k's elimination, shared by nlanes cooperating threads: lane takes the columns
/// j = k + 1 + lane, k + 1 + lane + nlanes, ... of the rows below k, A(i, j) -= l_i A(k, j) with
/// l_i = A(i, k) / A(k, k). A(i, k) is only read: band_lu_multipliers stores l_i after every
/// lane is done (each element gets the same operations, in the same order over k, for any
/// nlanes).
template <class P>
SLENDER_HD void band_lu_eliminate(P band, int n, int w, int k, int lane, int nlanes) {
  const int s = 2 * w + 1;
  const Real piv = band[k * s + w];
  const int last = k + w < n - 1 ? k + w : n - 1;
  const auto rk = band + k * s + w - k;  // rk[j] = A(k, j)
  for (int i = k + 1; i <= last; ++i) {
    const auto ri = band + i * s + w - i;  // ri[j] = A(i, j)
    const Real l = ri[k] / piv;
    if (l == 0) continue;
    for (int j = k + 1 + lane; j <= last; j += nlanes)
      ri[j] -= l * rk[j];
  }
}

/// Column k's multipliers into L: A(i, k) /= A(k, k) below the diagonal (one thread, once every
/// lane has eliminated column k; it touches nothing a later column's elimination reads).
template <class P>
SLENDER_HD void band_lu_multipliers(P band, int n, int w, int k) {
  const int s = 2 * w + 1;
  const Real piv = band[k * s + w];
  const int last = k + w < n - 1 ? k + w : n - 1;
  for (int i = k + 1; i <= last; ++i) {
    const auto ri = band + i * s + w - i;
    ri[k] = ri[k] / piv;
  }
}

/// LU in place; false on a pivot at or below tiny * max |A(i, i)| (or not finite). One thread:
/// the cooperative form runs band_lu_eliminate on every lane and band_lu_multipliers on one,
/// with a barrier between columns.
template <class P>
SLENDER_HD bool band_lu_factor(P band, int n, int w, Real tiny) {
  const Real floor = band_lu_floor(band, n, w, tiny);
  for (int k = 0; k < n; ++k) {
    if (!band_lu_pivot_ok(band, w, k, floor)) return false;
    band_lu_eliminate(band, n, w, k, 0, 1);
    band_lu_multipliers(band, n, w, k);
  }
  return true;
}

/// x <- (LU)^-1 x with the factors of band_lu_factor
template <class P, class PX>
SLENDER_HD void band_lu_solve(P band, int n, int w, PX x) {
  const int s = 2 * w + 1;
  for (int i = 0; i < n; ++i) {
    const auto ri = band + i * s + w - i;
    const int first = i - w > 0 ? i - w : 0;
    Real v = x[i];
    for (int k = first; k < i; ++k)
      v -= ri[k] * x[k];
    x[i] = v;
  }
  for (int i = n - 1; i >= 0; --i) {
    const auto ri = band + i * s + w - i;
    const int last = i + w < n - 1 ? i + w : n - 1;
    Real v = x[i];
    for (int j = i + 1; j <= last; ++j)
      v -= ri[j] * x[j];
    x[i] = v / ri[i];
  }
}

/// The forward sweep of band_lu_solve by columns, on a group of lanes (what one GPU warp runs for
/// a single system, kernels/device_solver.cu): once x[k] is final, lane t < w takes row
/// i = k + 1 + t, x[i] -= L(i, k) x[k], then a barrier before column k + 1 (lane takes t = lane,
/// lane + nlanes, ... when the band is wider than the group). Each x[i] gets the same operations in
/// the same order (k ascending) as band_lu_solve's row-by-row sweep. band_lower_of(w, t) is the
/// offset of L(k + 1 + t, k) from row k + 1 + t's start.
SLENDER_HD inline int band_lower_of(int w, int t) { return w - 1 - t; }
template <class P, class PX>
SLENDER_HD void band_forward_column(P band, int n, int w, int k, PX x, int lane, int nlanes) {
  const Real xk = x[k];
  for (int t = lane; t < w && k + 1 + t < n; t += nlanes) {
    const int i = k + 1 + t;
    x[i] -= band[i * (2 * w + 1) + band_lower_of(w, t)] * xk;
  }
}

/// The backward sweep by columns: x[i] = x[i] / U(i, i), taken as x[i] inv_diag with inv_diag
/// = 1 / U(i, i) (the GPU's factorization leaves the reciprocal of each pivot on the diagonal, so
/// that no division lies on the sweep's critical path), once every row below has given its share;
/// then lane t < w takes row j = i - 1 - t, x[j] -= U(j, i) x[i], and a barrier before column
/// i - 1 (the rows' shares arrive in descending column order, not band_lu_solve's ascending one:
/// equal to rounding). band_upper_of(w, t) is the offset of U(i - 1 - t, i) from row i - 1 - t's
/// start. Returns x[i] (which the caller stores once every lane has read x[i]).
SLENDER_HD inline int band_upper_of(int w, int t) { return w + 1 + t; }
template <class P, class PX>
SLENDER_HD Real
band_backward_column(P band, int w, int i, PX x, int lane, int nlanes, Real inv_diag) {
  const int s = 2 * w + 1;
  const Real xi = x[i] * inv_diag;
  for (int t = lane; t < w && i - 1 - t >= 0; t += nlanes) {
    const int j = i - 1 - t;
    x[j] -= band[j * s + band_upper_of(w, t)] * xi;
  }
  return xi;
}

}  // namespace slender
