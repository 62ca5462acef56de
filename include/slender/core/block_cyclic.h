#pragma once

// Block cyclic reduction (host and device): the direct solve of a banded system in a number of
// parallel passes that grows with log n, for one GPU block solving one rod's Jacobian (the band's
// LU, core/banded.h, runs its n columns one after another: on a GPU each column is a barrier and
// the columns' chain is the solve's time).
//
// A band of half-bandwidth w is block tridiagonal in blocks of b = max(w, 1) rows: block row I
// holds L_I = A(I, I - 1), D_I = A(I, I) and U_I = A(I, I + 1), nb = ceil(n / b) of them, the
// last padded with identity rows. Level l (stride h = 2^l) eliminates the active rows at odd
// multiples of h from their neighbours I - h and I + h, the rows at even multiples:
//   x_o = D_o^-1 (f_o - L_o x_{o-h} - U_o x_{o+h})
// which leaves, for a kept row p, with Mr = L_p D_{p-h}^-1 (stored at row p - h) and
// Ml = U_p D_{p+h}^-1 (stored at row p + h):
//   D_p -= Mr U_{p-h} + Ml L_{p+h},  L_p = -Mr L_{p-h},  U_p = -Ml U_{p+h},
//   f_p -= Mr f_{p-h} + Ml f_{p+h}.
// After ceil(log2 nb) levels row 0 is alone and solved; the eliminated rows then follow level by
// level in reverse. It is Gaussian elimination in an odd-even (nested dissection) order of the
// blocks, without pivoting, as band_lu_factor is: for the symmetric positive definite Jacobians
// of implicit steps each D is a Schur complement, positive definite too. Each D is inverted
// explicitly (Gauss-Jordan, the pivots on its diagonal, no pivoting), a pivot at or below `floor`
// (band_lu_floor's tiny * max |A(i, i)|) failing the factorization as the band's does.
//
// Each pass is a loop over independent items (a block row, or an entry of one); the host runs
// them in order, a GPU block runs them on its threads with a barrier between passes
// (kernels/device_solver.cu: each thread keeps one entry (r, c) of the blocks and takes it in
// every block of a pass, so that no thread divides by b in the passes' loops). The work is about 8
// n b^2 multiply-adds against the band's n w^2, in about 3 log2(n / b) barriers (plus 3b barriers
// of one warp per level) against the band's n.
//
// Storage (`ws`, bcr_workspace_size reals): per block row five b x b blocks, row-major: L, D
// (D^-1 once the row is eliminated), U, Ml, Mr; then the right-hand side in blocks (nb b, the
// solution on return), then nb b reals of scratch.

#include "slender/core/types.h"

namespace slender {

struct BcrDims {
  int n = 0;       // rows
  int b = 1;       // block size: the half-bandwidth, at least 1
  int nb = 0;      // block rows
  int levels = 0;  // ceil(log2 nb): the elimination levels before row 0 is alone
};

SLENDER_HD inline BcrDims bcr_dims(int n, int w) {
  BcrDims d;
  d.n = n;
  d.b = w > 1 ? w : 1;
  d.nb = (n + d.b - 1) / d.b;
  while ((1L << d.levels) < long(d.nb))
    ++d.levels;
  return d;
}

enum BcrSlot : int { kBcrL = 0, kBcrD = 1, kBcrU = 2, kBcrMl = 3, kBcrMr = 4 };
constexpr int kBcrSlots = 5;

SLENDER_HD inline long bcr_block_count(const BcrDims& d) { return long(d.b) * d.b; }
SLENDER_HD inline long bcr_vector_offset(const BcrDims& d) {
  return kBcrSlots * bcr_block_count(d) * d.nb;
}
SLENDER_HD inline long bcr_workspace_size(const BcrDims& d) {
  return bcr_vector_offset(d) + 2L * d.nb * d.b;
}
SLENDER_HD inline Real* bcr_block(Real* ws, const BcrDims& d, int row, int slot) {
  return ws + (long(row) * kBcrSlots + slot) * bcr_block_count(d);
}
SLENDER_HD inline Real* bcr_vector(Real* ws, const BcrDims& d) { return ws + bcr_vector_offset(d); }
SLENDER_HD inline Real* bcr_scratch(Real* ws, const BcrDims& d) {
  return ws + bcr_vector_offset(d) + long(d.nb) * d.b;
}

/// The rows level l eliminates, (2e + 1) 2^l for e < count, and those it keeps, 2k 2^l.
SLENDER_HD inline int bcr_eliminated_count(const BcrDims& d, int l) {
  const long h = 1L << l;
  return long(d.nb) > h ? int((d.nb - 1 - h) / (2 * h) + 1) : 0;
}
SLENDER_HD inline int bcr_eliminated_row(int l, int e) { return (2 * e + 1) << l; }
SLENDER_HD inline int bcr_kept_count(const BcrDims& d, int l) {
  return int((long(d.nb) - 1) / (2L << l) + 1);
}
SLENDER_HD inline int bcr_kept_row(int l, int k) { return (2 * k) << l; }
/// Rows of block row `row` that are the system's (the rest pad the last block).
SLENDER_HD inline int bcr_live_rows(const BcrDims& d, int row) {
  const int left = d.n - row * d.b;
  return left < d.b ? left : d.b;
}

/// The blocks' entries from the band (band_layout's storage, 2w + 1 per row): position t of the
/// three blocks L, D, U of every block row, t < 3 b^2 nb, taken from the band's entry
/// bcr_band_source(t), -1 for a zero, -2 for a padding row's 1 on the diagonal. (Kept as a map on
/// the device, so that the values come straight from the Jacobian's CSR.)
SLENDER_HD inline long bcr_band_source(const BcrDims& d, int w, long t) {
  const long bb = bcr_block_count(d);
  const long row = t / (3 * bb), rem = t % (3 * bb);
  const int slot = int(rem / bb), rc = int(rem % bb), r = rc / d.b, c = rc % d.b;
  const long i = row * d.b + r, j = (row + slot - 1) * d.b + c;
  if (i >= d.n || j >= d.n || j < 0) return i >= d.n && i == j ? -2 : -1;
  const long off = j - i;
  if (off < -w || off > w) return -1;
  return i * (2L * w + 1) + w + off;
}
/// Where position t of bcr_band_source lands in ws.
SLENDER_HD inline long bcr_fill_target(const BcrDims& d, long t) {
  const long bb = bcr_block_count(d);
  return (t / (3 * bb)) * kBcrSlots * bb + t % (3 * bb);
}

/// 1 / p: correctly rounded on both sides (the device without a division's slow path).
SLENDER_HD inline Real bcr_reciprocal(Real p) {
#ifdef __CUDA_ARCH__
  return __drcp_rn(p);
#else
  return Real(1) / p;
#endif
}

// Gauss-Jordan in place on a b x b block (D -> D^-1), column k at a time: every lane reads the
// pivot D(k, k) (bcr_gj_pivot), then the lanes scale row k (bcr_gj_scale), then each lane
// eliminates column k from its rows i != k (bcr_gj_eliminate), a barrier between the three.

/// The pivot of column k, or 0 where it is at or below floor (not finite included) on a live row.
SLENDER_HD inline Real bcr_gj_pivot(const Real* a, int b, int k, int live, Real floor) {
  const Real p = a[k * b + k];
  return k >= live || ::fabs(p) > floor ? p : Real(0);
}
SLENDER_HD inline void bcr_gj_scale(Real* a, int b, int k, Real rp, int lane, int nlanes) {
  for (int j = lane; j < b; j += nlanes)
    a[k * b + j] = j == k ? rp : a[k * b + j] * rp;
}
SLENDER_HD inline void bcr_gj_eliminate(Real* a, int b, int k, int i) {
  if (i == k) return;
  const Real f = a[i * b + k];
  if (f == 0) return;
  for (int j = 0; j < b; ++j)
    a[i * b + j] = (j == k ? Real(0) : a[i * b + j]) - f * a[k * b + j];
}
/// The whole inversion on one thread; false on a pivot at or below floor.
SLENDER_HD inline bool bcr_invert(Real* a, int b, int live, Real floor) {
  for (int k = 0; k < b; ++k) {
    const Real p = bcr_gj_pivot(a, b, k, live, floor);
    if (p == 0) return false;
    bcr_gj_scale(a, b, k, bcr_reciprocal(p), 0, 1);
    for (int i = 0; i < b; ++i)
      bcr_gj_eliminate(a, b, k, i);
  }
  return true;
}

/// c(r, col) of X Y for b x b row-major blocks
SLENDER_HD inline Real bcr_product_entry(const Real* x, const Real* y, int b, int r, int col) {
  Real v = 0;
  for (int t = 0; t < b; ++t)
    v += x[r * b + t] * y[t * b + col];
  return v;
}

/// Level l's multipliers, entry (r, c) of q < 2 bcr_eliminated_count(l), eliminated row
/// e = q / 2: of Mr = L_{o+h} D_o^-1 (q even, where row o + h exists) or of Ml = U_{o-h} D_o^-1
/// (q odd). Every D_o of the level already inverted.
SLENDER_HD inline void bcr_multiplier_entry(
    Real* ws, const BcrDims& d, int l, int q, int r, int c) {
  const int o = bcr_eliminated_row(l, q >> 1), h = 1 << l, rc = r * d.b + c;
  const Real* dinv = bcr_block(ws, d, o, kBcrD);
  if ((q & 1) == 0) {
    if (o + h >= d.nb) return;
    bcr_block(ws, d, o, kBcrMr)[rc] =
        bcr_product_entry(bcr_block(ws, d, o + h, kBcrL), dinv, d.b, r, c);
  } else {
    bcr_block(ws, d, o, kBcrMl)[rc] =
        bcr_product_entry(bcr_block(ws, d, o - h, kBcrU), dinv, d.b, r, c);
  }
}

/// Level l's updates of the kept rows, entry (r, c) of q < 3 bcr_kept_count(l), kept row p of
/// k = q / 3: of D_p (q % 3 == 0), L_p (1) or U_p (2), from the multipliers of its eliminated
/// neighbours p - h and p + h.
SLENDER_HD inline void bcr_update_entry(Real* ws, const BcrDims& d, int l, int q, int r, int c) {
  const int k = q / 3, which = q - 3 * k, rc = r * d.b + c;
  const int p = bcr_kept_row(l, k), h = 1 << l;
  const bool left = p - h >= 0, right = p + h < d.nb;
  if (which == 0) {
    Real* dp = bcr_block(ws, d, p, kBcrD);
    Real v = dp[rc];
    if (left)
      v -= bcr_product_entry(bcr_block(ws, d, p - h, kBcrMr), bcr_block(ws, d, p - h, kBcrU), d.b,
                             r, c);
    if (right)
      v -= bcr_product_entry(bcr_block(ws, d, p + h, kBcrMl), bcr_block(ws, d, p + h, kBcrL), d.b,
                             r, c);
    dp[rc] = v;
  } else if (which == 1) {
    if (left)
      bcr_block(ws, d, p, kBcrL)[rc] = -bcr_product_entry(
          bcr_block(ws, d, p - h, kBcrMr), bcr_block(ws, d, p - h, kBcrL), d.b, r, c);
  } else if (right) {
    bcr_block(ws, d, p, kBcrU)[rc] = -bcr_product_entry(bcr_block(ws, d, p + h, kBcrMl),
                                                        bcr_block(ws, d, p + h, kBcrU), d.b, r, c);
  }
}

/// The same passes by a flat item number: item = q b^2 + r b + c.
SLENDER_HD inline void bcr_multiplier_item(Real* ws, const BcrDims& d, int l, long item) {
  const long bb = bcr_block_count(d);
  const int rc = int(item % bb);
  bcr_multiplier_entry(ws, d, l, int(item / bb), rc / d.b, rc % d.b);
}
SLENDER_HD inline void bcr_update_item(Real* ws, const BcrDims& d, int l, long item) {
  const long bb = bcr_block_count(d);
  const int rc = int(item % bb);
  bcr_update_entry(ws, d, l, int(item / bb), rc / d.b, rc % d.b);
}

/// The forward pass of level l on the right-hand side f (nb b: bcr_vector(ws), or a copy of it
/// elsewhere, a GPU block's shared memory), entry r of kept row p of k:
/// f_p -= Mr f_{p-h} + Ml f_{p+h}.
SLENDER_HD inline void bcr_forward_entry(Real* ws, Real* f, const BcrDims& d, int l, int k, int r) {
  const int p = bcr_kept_row(l, k), h = 1 << l;
  Real v = f[long(p) * d.b + r];
  if (p - h >= 0) {
    const Real* m = bcr_block(ws, d, p - h, kBcrMr) + r * d.b;
    const Real* g = f + long(p - h) * d.b;
    for (int t = 0; t < d.b; ++t)
      v -= m[t] * g[t];
  }
  if (p + h < d.nb) {
    const Real* m = bcr_block(ws, d, p + h, kBcrMl) + r * d.b;
    const Real* g = f + long(p + h) * d.b;
    for (int t = 0; t < d.b; ++t)
      v -= m[t] * g[t];
  }
  f[long(p) * d.b + r] = v;
}
/// item = k b + r
SLENDER_HD inline void bcr_forward_item(Real* ws, Real* f, const BcrDims& d, int l, long item) {
  bcr_forward_entry(ws, f, d, l, int(item / d.b), int(item % d.b));
}

/// The backward pass of eliminated row o (stride h; row 0 with h = 2^levels, no neighbours):
/// first the residual, entry r: scratch_o = f_o - L_o x_{o-h} - U_o x_{o+h}
/// (bcr_residual_item), then entry r of x_o = D_o^-1 scratch_o (bcr_back_item), a barrier
/// between the two.
SLENDER_HD inline void bcr_residual_item(
    Real* ws, const Real* f, Real* scratch, const BcrDims& d, int o, int h, int r) {
  Real v = f[long(o) * d.b + r];
  if (o - h >= 0) {
    const Real* m = bcr_block(ws, d, o, kBcrL) + r * d.b;
    const Real* x = f + long(o - h) * d.b;
    for (int t = 0; t < d.b; ++t)
      v -= m[t] * x[t];
  }
  if (o + h < d.nb) {
    const Real* m = bcr_block(ws, d, o, kBcrU) + r * d.b;
    const Real* x = f + long(o + h) * d.b;
    for (int t = 0; t < d.b; ++t)
      v -= m[t] * x[t];
  }
  scratch[long(o) * d.b + r] = v;
}
SLENDER_HD inline void bcr_back_item(
    Real* ws, Real* f, const Real* scratch, const BcrDims& d, int o, int r) {
  const Real* m = bcr_block(ws, d, o, kBcrD) + r * d.b;
  const Real* s = scratch + long(o) * d.b;
  Real v = 0;
  for (int t = 0; t < d.b; ++t)
    v += m[t] * s[t];
  f[long(o) * d.b + r] = v;
}

/// max |A(i, i)| over the system's rows, from the D blocks as filled
SLENDER_HD inline Real bcr_diagonal_max(const Real* ws, const BcrDims& d) {
  Real m = 0;
  for (int i = 0; i < d.n; ++i) {
    const Real v = ::fabs(
        ws[(long(i / d.b) * kBcrSlots + kBcrD) * bcr_block_count(d) + long(i % d.b) * (d.b + 1)]);
    m = v > m ? v : m;
  }
  return m;
}

/// The factorization on one thread, in the passes' order; false on a pivot at or below floor.
inline bool bcr_factor(Real* ws, const BcrDims& d, Real floor) {
  const long bb = bcr_block_count(d);
  for (int l = 0; l < d.levels; ++l) {
    const int ne = bcr_eliminated_count(d, l), nk = bcr_kept_count(d, l);
    for (int e = 0; e < ne; ++e) {
      const int o = bcr_eliminated_row(l, e);
      if (!bcr_invert(bcr_block(ws, d, o, kBcrD), d.b, bcr_live_rows(d, o), floor)) return false;
    }
    for (long item = 0; item < ne * 2 * bb; ++item)
      bcr_multiplier_item(ws, d, l, item);
    for (long item = 0; item < nk * 3 * bb; ++item)
      bcr_update_item(ws, d, l, item);
  }
  return d.nb == 0 || bcr_invert(bcr_block(ws, d, 0, kBcrD), d.b, bcr_live_rows(d, 0), floor);
}

/// The solve on one thread: bcr_vector(ws) holds the right-hand side in block order (padding
/// rows 0) and holds the solution on return.
inline void bcr_solve(Real* ws, const BcrDims& d) {
  Real* f = bcr_vector(ws, d);
  Real* scratch = bcr_scratch(ws, d);
  for (int l = 0; l < d.levels; ++l)
    for (long item = 0; item < long(bcr_kept_count(d, l)) * d.b; ++item)
      bcr_forward_item(ws, f, d, l, item);
  for (int l = d.levels; l >= 0; --l) {
    const int h = 1 << l, ne = l == d.levels ? (d.nb > 0 ? 1 : 0) : bcr_eliminated_count(d, l);
    for (int e = 0; e < ne; ++e) {
      const int o = l == d.levels ? 0 : bcr_eliminated_row(l, e);
      for (int r = 0; r < d.b; ++r)
        bcr_residual_item(ws, f, scratch, d, o, h, r);
    }
    for (int e = 0; e < ne; ++e) {
      const int o = l == d.levels ? 0 : bcr_eliminated_row(l, e);
      for (int r = 0; r < d.b; ++r)
        bcr_back_item(ws, f, scratch, d, o, r);
    }
  }
}

}  // namespace slender
