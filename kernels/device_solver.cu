// DeviceSparseSolver: the band on the device for Jacobians that order into a narrow band (rods),
// else cuSOLVER csrchol (analysis once, factor per call) with a csrlsvqr fallback on the
// AMD-ordered matrix. The csrchol API is marked deprecated in CUDA 13 in favour of cuDSS (not
// shipped with the toolkit); it is what the backend's design names, so the deprecation notes are
// switched off here.
//
// The band (the CPU's kBanded, include/slender/core/banded.h, the same reverse Cuthill-McKee
// order and pivot floor) is solved in one of two ways, each on a single block, with one read of
// a flag per Newton iteration (the factorization's flag read with the solve's):
// - block cyclic reduction (slender/core/block_cyclic.h, the default, "cuda-block-cyclic"): the
//   band as block-tridiagonal in blocks of w rows, eliminated in log2(n / w) levels of parallel
//   passes, its blocks in global memory (any size). On an H200 it took S1's Newton iteration
//   from 0.84 to 0.55 ms and S7's from 1.44 to 0.69 ms
//   (bench/results/2026-11-30-block-cyclic-gpu-h200.md);
// - LU by columns (SLENDER_DEVICE_BAND=lu, "cuda-banded-lu"): one kernel fills the band from the
//   CSR values, one block factorizes it (a thread per entry of a column's trailing w x w block)
//   and one block solves (warp 0 running the columns), the rows they work on staged in shared
//   memory a window at a time (the whole band when it fits: a rod of about 1,300 free DOFs). Its
//   n columns are a chain of barriers: about 0.4 us each on an H200.
// Against csrchol's dozens of launches per call along a rod's elimination tree, a chain as long as
// the rod (bench/results/2026-11-26-gpu-first-light-h200.md: about 4 ms a Newton iteration on
// S1). A pivot too small for elimination without pivoting takes the sparse path, built then.

#define DISABLE_CUSOLVER_DEPRECATED

#include <cusolverSp.h>
#include <cusolverSp_LOWLEVEL_PREVIEW.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "device_buffer.cuh"
#include "device_solver.h"
#include "reduce.cuh"
#include "slender/core/banded.h"
#include "slender/core/block_cyclic.h"
#include "slender/core/strided.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/ordering.h"

namespace slender {

namespace {

void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) {
    throw Error(std::string("cuSOLVER error ") + std::to_string(int(s)) + " in " + what);
  }
}

// out[k] = in[map[k]]
struct Gather {
  const int* map;
  const Real* in;
  Real* out;
  __device__ void operator()(long k) const { out[k] = in[map[k]]; }
};

// out[map[k]] = in[k]
struct Scatter {
  const int* map;
  const Real* in;
  Real* out;
  __device__ void operator()(long k) const { out[map[k]] = in[k]; }
};

// m0: the largest |diagonal entry|
struct MaxDiag {
  const int* diag_slot;
  const Real* val;
  __device__ Red4 operator()(long i) const {
    const int s = diag_slot[i];
    return Red4{0, 0, 0, s >= 0 ? ::fabs(val[s]) : Real(0)};
  }
};

// s0: number of entries that are not finite
struct CountNonFinite {
  const Real* v;
  __device__ Red4 operator()(long i) const {
    return Red4{v[i] - v[i] == 0 ? Real(0) : Real(1), 0, 0, 0};
  }
};

// ---- the band ----

constexpr int kBandThreads = 128;      // the solve's block: all stage rows, warp 0 runs the columns
constexpr int kBandMaxThreads = 1024;  // the factorization's: a thread per trailing entry
constexpr int kBandWarp = 32;
constexpr Real kBandTiny = 1e-13;  // the pivot floor of the CPU's banded LU (linear_solver.cpp)

// band[t] = the CSR value whose entry lands at t, zero where none does
struct FillBand {
  const int* src;
  const Real* val;
  Real* band;
  __device__ void operator()(long t) const {
    const int s = src[t];
    band[t] = s >= 0 ? val[s] : Real(0);
  }
};

// dst[t] = src[t], t < count, by the whole block
__device__ void block_copy(Real* dst, const Real* src, long count) {
  for (long t = threadIdx.x; t < count; t += blockDim.x)
    dst[t] = src[t];
}

// Banded LU in place on `band` (n rows of 2w + 1), each pivot then replaced by its reciprocal
// (the solve multiplies by it), by windows of `rows` rows (>= 2w + 1) staged in
// shared memory: the columns whose eliminations stay inside the window run there, the rows they
// finish go back, the w rows still open move to the window's start and the next rows are loaded
// behind them. Column k on the whole block: each thread takes entries (i, j) of the trailing
// w x w block, A(i, j) -= (A(i, k) / A(k, k)) A(k, j), and a thread per row stores the
// multipliers of column k - 1 (which column k neither reads nor writes), one barrier a column.
// Every entry gets band_lu_factor's updates in the same order, the division by the pivot taken
// as a product with its correctly rounded reciprocal (one per column, on every thread at once: a
// double division costs hundreds of cycles, and one lane dividing for every row made a column
// cost about 4 us on an H200; a thread per row dividing, 0.9 us).
// ok[0] = 1, or 0 at a pivot at or below kBandTiny * max |A(i, i)|.
__global__ void band_factor_kernel(int n, int w, int rows, Real* band, int* ok) {
  extern __shared__ Real stage[];
  __shared__ Real warp_max[kBandMaxThreads / kBandWarp];
  const long s = 2 * w + 1;
  const int tid = int(threadIdx.x), nt = int(blockDim.x);
  const int lane = tid % kBandWarp, warp = tid / kBandWarp, nwarps = nt / kBandWarp;
  Real m = 0;  // max |A(i, i)|: exact in any order
  for (long i = tid; i < n; i += nt)
    m = fmax(m, ::fabs(band[i * s + w]));
  for (int d = kBandWarp / 2; d > 0; d /= 2)
    m = fmax(m, __shfl_xor_sync(0xffffffffu, m, d));
  if (lane == 0) warp_max[warp] = m;
  long r0 = 0;
  long held = rows < n ? rows : n;  // the window: rows [r0, r0 + held)
  block_copy(stage, band, held * s);
  __syncthreads();
  Real floor = 0;
  for (int k = 0; k < nwarps; ++k)
    floor = fmax(floor, warp_max[k]);
  floor *= kBandTiny;
  // row i's entry in column j of the window: a[i * s + w + j - i] with a = stage - r0 s. With
  // w^2 threads or more, thread (r, c) keeps entry (k + 1 + r, k + 1 + c) of every column k.
  const bool mapped = w * w <= nt;
  const int my_r = mapped && w > 0 ? tid / w : 0, my_c = mapped && w > 0 ? tid % w : 0;
  Real rprev = 0;  // 1 / the pivot of the column before
  for (;;) {
    const bool last = r0 + held == n;
    const long kend = last ? n : r0 + held - w;  // the window's columns [r0, kend)
    Real* a = stage - r0 * s;
    for (long k = r0; k < kend; ++k) {
      const Real piv = a[k * s + w];
      if (!(::fabs(piv) > floor)) {  // (every thread reads the same pivot: all leave)
        if (tid == 0) ok[0] = 0;
        return;
      }
      const Real rp = __drcp_rn(piv);  // (correctly rounded, without a division's slow path)
      const int mk = int(k + w < n - 1 ? w : n - 1 - k);  // rows (and columns) below k
      if (k > r0) {  // the multipliers of column k - 1 (rows k .. k - 1 + w) and its 1 / pivot
        const int mp = int(k - 1 + w < n - 1 ? w : n - k);
        for (int t = tid; t < mp; t += nt)
          a[(k + t) * s + w - 1 - t] *= rprev;  // A(i, k - 1)
        if (tid == 0) a[(k - 1) * s + w] = rprev;
      }
      if (mapped) {
        if (my_r < mk && my_c < mk) {
          const long i = k + 1 + my_r;
          const Real l = a[i * s + w - 1 - my_r] * rp;  // A(i, k) / A(k, k)
          if (l != 0) a[i * s + w + my_c - my_r] -= l * a[k * s + w + 1 + my_c];
        }
      } else {
        for (int t = tid; t < mk * mk; t += nt) {
          const int r = t / mk, c = t % mk;
          const long i = k + 1 + r;
          const Real l = a[i * s + w - 1 - r] * rp;
          if (l != 0) a[i * s + w + c - r] -= l * a[k * s + w + 1 + c];
        }
      }
      rprev = rp;
      __syncthreads();
    }
    {  // the multipliers of the window's last column, and its 1 / pivot
      const long k = kend;
      const int mp = int(k - 1 + w < n - 1 ? w : n - k);
      for (int t = tid; t < mp; t += nt)
        a[(k + t) * s + w - 1 - t] *= rprev;
      if (tid == 0) a[(k - 1) * s + w] = rprev;
    }
    __syncthreads();
    block_copy(band + r0 * s, stage, (kend - r0) * s);  // rows [r0, kend) are final
    if (last) break;
    __syncthreads();
    const long keep = r0 + held - kend;  // w rows, moved down (kend - r0 >= w: no overlap)
    block_copy(stage, stage + (kend - r0) * s, keep * s);
    __syncthreads();  // (the rows loaded next land where the moved ones were read)
    r0 = kend;
    held = rows < n - r0 ? rows : n - r0;
    block_copy(stage + keep * s, band + (r0 + keep) * s, (held - keep) * s);
    __syncthreads();
  }
  if (tid == 0) ok[0] = 1;
}

// out[order[i]] = (LU)^-1 rhs[order]: the forward and backward sweeps by columns on warp 0
// (band_forward_column, band_backward_column with the reciprocal pivots the factorization left on
// the diagonal) over windows of `rows` rows staged in shared memory by the block; x in shared
// memory after the window when x_shared, else in xg; the block scatters the solution at the end
// (a lane storing it column by column would wait for each order[i]). ok[1] = 1 if the solution is
// finite, 0 if not, 2 without a solve where the factorization failed (ok[0], which the host reads
// only here: one read of a flag per Newton iteration).
__global__ void band_solve_kernel(int n,
                                  int w,
                                  int rows,
                                  bool x_shared,
                                  const Real* band,
                                  const int* order,
                                  const Real* rhs,
                                  Real* out,
                                  Real* xg,
                                  int* ok) {
  extern __shared__ Real stage[];
  if (ok[0] != 1) {  // the factorization's pivot too small (every thread reads the same flag)
    if (threadIdx.x == 0) ok[1] = 2;
    return;
  }
  const long s = 2 * w + 1;
  const int lane = int(threadIdx.x) % kBandWarp, warp = int(threadIdx.x) / kBandWarp;
  Real* x = x_shared ? stage + long(rows) * s : xg;
  for (long i = threadIdx.x; i < n; i += blockDim.x)
    x[i] = rhs[order[i]];
  // forward: column k reads rows k + 1 .. k + w
  for (long r0 = 0;;) {
    const long held = rows < n - r0 ? rows : n - r0;
    block_copy(stage, band + r0 * s, held * s);
    __syncthreads();
    const bool last = r0 + held == n;
    const long kend = last ? n - 1 : r0 + held - w;
    if (warp == 0) {
      const Window<const Real> b{stage, r0 * s};
      for (long k = r0; k < kend; ++k) {
        band_forward_column(b, n, w, int(k), x, lane, kBandWarp);
        __syncwarp();
      }
    }
    __syncthreads();
    if (last) break;
    r0 = kend;
  }
  // backward: column i reads rows i - w .. i (the diagonal holds 1 / U(i, i)); lane 0 stores
  // x[i] once every lane has read it
  for (long r1 = n;;) {
    const long held = rows < r1 ? rows : r1, r0 = r1 - held;
    block_copy(stage, band + r0 * s, held * s);
    __syncthreads();
    const long ilo = r0 == 0 ? 0 : r0 + w;
    if (warp == 0) {
      const Window<const Real> b{stage, r0 * s};
      for (long i = r1 - 1; i >= ilo; --i) {
        const Real xi = band_backward_column(b, w, int(i), x, lane, kBandWarp, b[i * s + w]);
        __syncwarp();
        if (lane == 0) x[i] = xi;
      }
    }
    __syncthreads();
    if (r0 == 0) break;
    r1 = ilo;
  }
  // the solution back in the caller's order, and whether all of it is finite
  bool finite = true;
  for (long i = threadIdx.x; i < n; i += blockDim.x) {
    const Real v = x[i];
    out[order[i]] = v;
    finite = finite && isfinite(v);
  }
  finite = __syncthreads_and(finite);
  if (threadIdx.x == 0) ok[1] = finite ? 1 : 0;
}

// ---- block cyclic reduction (slender/core/block_cyclic.h): the band in about 3 log2(n / w)
// barriers of one block instead of the LU's n columns ----

constexpr int kBcrThreads = 1024;

// D -> D^-1 by Gauss-Jordan on the 32 lanes of a warp (bcr_invert's steps, a barrier between
// them); false, on every lane, at a pivot at or below floor
__device__ bool bcr_warp_invert(Real* a, int b, int live, Real floor, int lane) {
  for (int k = 0; k < b; ++k) {
    const Real p = bcr_gj_pivot(a, b, k, live, floor);
    if (p == 0) return false;
    __syncwarp();  // (every lane has read the pivot before row k changes)
    bcr_gj_scale(a, b, k, bcr_reciprocal(p), lane, kBandWarp);
    __syncwarp();
    for (int i = lane; i < b; i += kBandWarp)
      bcr_gj_eliminate(a, b, k, i);
    __syncwarp();
  }
  return true;
}

// Which entries of the blocks (or of a block row's vector) a thread takes: with b^2 <= threads,
// thread t keeps entry (r, c) = ((t mod b^2) / b, t mod b) and takes it in blocks g, g + groups,
// ... with g = t / b^2 (the threads past groups b^2 idle), so the passes' loops hold no division
// by b; else every thread walks flat item numbers.
struct BcrThread {
  int groups = 0, g = 0, r = 0, c = 0;  // the blocks' mapping (groups 0: flat items)
  int vgroups = 0, vg = 0, vr = 0;  // the vectors': entry vr of block rows vg, vg + vgroups, ...
  __device__ BcrThread(const BcrDims& d, int tid, int nt) {
    const int bb = d.b * d.b;
    if (bb <= nt) {
      groups = nt / bb;
      g = tid / bb;
      r = tid % bb / d.b;
      c = tid % d.b;
    }
    if (d.b <= nt) {
      vgroups = nt / d.b;
      vg = tid / d.b;
      vr = tid % d.b;
    }
  }
};

// One pass over blocks q < count: f(q, r, c) for every entry of each
template <class F>
__device__ void bcr_blocks_pass(const BcrDims& d, const BcrThread& th, int count, F f) {
  if (th.groups > 0) {
    if (th.g < th.groups)
      for (int q = th.g; q < count; q += th.groups)
        f(q, th.r, th.c);
  } else {
    const long bb = bcr_block_count(d);
    for (long item = threadIdx.x; item < long(count) * bb; item += blockDim.x)
      f(int(item / bb), int(item % bb) / d.b, int(item % bb) % d.b);
  }
}
// One pass over block rows q < count of a vector: f(q, r) for every entry of each
template <class F>
__device__ void bcr_vector_pass(const BcrDims& d, const BcrThread& th, int count, F f) {
  if (th.vgroups > 0) {
    if (th.vg < th.vgroups)
      for (int q = th.vg; q < count; q += th.vgroups)
        f(q, th.vr);
  } else {
    for (long item = threadIdx.x; item < long(count) * d.b; item += blockDim.x)
      f(int(item / d.b), int(item % d.b));
  }
}

// The blocks filled from the CSR values (src: bcr_band_source composed with the band's map to
// CSR slots), the pivot floor from their diagonal, then every level: a warp per eliminated
// row's inversion (the block staged in the warp's share of shared memory when `stage`), the
// multipliers, the kept rows' updates, a barrier after each; row 0 last.
// ok[0] = 1, or 0 at a pivot at or below kBandTiny * max |A(i, i)|.
__global__ void __launch_bounds__(kBcrThreads)
    bcr_factor_kernel(BcrDims d, bool stage, const int* src, const Real* val, Real* ws, int* ok) {
  extern __shared__ Real inv_stage[];
  __shared__ Real warp_max[kBcrThreads / kBandWarp];
  const int tid = int(threadIdx.x), nt = int(blockDim.x);
  const int lane = tid % kBandWarp, warp = tid / kBandWarp, nwarps = nt / kBandWarp;
  const int bb = d.b * d.b;
  const BcrThread th(d, tid, nt);
  Real m = 0;
  // position t = q b^2 + rc of the L, D, U blocks of row q / 3 (bcr_band_source's numbering)
  bcr_blocks_pass(d, th, 3 * d.nb, [&](int q, int r, int c) {
    const int row = q / 3, slot = q - 3 * row;
    const long t = long(q) * bb + r * d.b + c;
    const int s = src[t];
    const Real v = s >= 0 ? val[s] : s == -2 ? Real(1) : Real(0);
    bcr_block(ws, d, row, slot)[r * d.b + c] = v;
    if (slot == kBcrD && r == c && row * d.b + r < d.n) m = fmax(m, ::fabs(v));
  });
  for (int k = kBandWarp / 2; k > 0; k /= 2)
    m = fmax(m, __shfl_xor_sync(0xffffffffu, m, k));
  if (lane == 0) warp_max[warp] = m;
  __syncthreads();
  Real floor = 0;
  for (int k = 0; k < nwarps; ++k)
    floor = fmax(floor, warp_max[k]);
  floor *= kBandTiny;
  Real* mine = inv_stage + long(warp) * bb;
  auto invert = [&](int o) {  // on one warp
    Real* a = bcr_block(ws, d, o, kBcrD);
    if (!stage) return bcr_warp_invert(a, d.b, bcr_live_rows(d, o), floor, lane);
    for (int i = lane; i < bb; i += kBandWarp)
      mine[i] = a[i];
    __syncwarp();
    const bool good = bcr_warp_invert(mine, d.b, bcr_live_rows(d, o), floor, lane);
    for (int i = lane; i < bb; i += kBandWarp)
      a[i] = mine[i];
    __syncwarp();  // (before the next block's entries land where these were read)
    return good;
  };
  for (int l = 0; l < d.levels; ++l) {
    const int ne = bcr_eliminated_count(d, l), nk = bcr_kept_count(d, l);
    bool bad = false;
    for (int e = warp; e < ne && !bad; e += nwarps)
      bad = !invert(bcr_eliminated_row(l, e));
    if (__syncthreads_or(bad)) {
      if (tid == 0) ok[0] = 0;
      return;
    }
    bcr_blocks_pass(d, th, 2 * ne,
                    [&](int q, int r, int c) { bcr_multiplier_entry(ws, d, l, q, r, c); });
    __syncthreads();
    bcr_blocks_pass(d, th, 3 * nk,
                    [&](int q, int r, int c) { bcr_update_entry(ws, d, l, q, r, c); });
    __syncthreads();
  }
  const bool bad = warp == 0 && !invert(0);
  if (__syncthreads_or(bad)) {
    if (tid == 0) ok[0] = 0;
    return;
  }
  if (tid == 0) ok[0] = 1;
}

// out[order[i]] = A^-1 rhs[order] with bcr_factor_kernel's blocks: the right-hand side into the
// blocks' order (in shared memory with its scratch when `stage`: each pass then reads the vector
// at shared memory's latency, the blocks from global memory), the forward levels, row 0, the
// backward levels (residual, then D^-1), a barrier after each pass; ok[1] as band_solve_kernel's
__global__ void __launch_bounds__(kBcrThreads) bcr_solve_kernel(
    BcrDims d, bool stage, const int* order, const Real* rhs, Real* out, Real* ws, int* ok) {
  extern __shared__ Real vec_stage[];
  const int tid = int(threadIdx.x), nt = int(blockDim.x);
  if (ok[0] != 1) {  // the factorization's pivot too small (every thread reads the same flag)
    if (tid == 0) ok[1] = 2;
    return;
  }
  const BcrThread th(d, tid, nt);
  // the right-hand side and the scratch in shared memory when `stage` (2 nb b reals fit)
  Real* f = stage ? vec_stage : bcr_vector(ws, d);
  Real* scratch = stage ? vec_stage + long(d.nb) * d.b : bcr_scratch(ws, d);
  for (long i = tid; i < long(d.nb) * d.b; i += nt)
    f[i] = i < d.n ? rhs[order[i]] : Real(0);
  __syncthreads();
  for (int l = 0; l < d.levels; ++l) {
    bcr_vector_pass(d, th, bcr_kept_count(d, l),
                    [&](int k, int r) { bcr_forward_entry(ws, f, d, l, k, r); });
    __syncthreads();
  }
  for (int l = d.levels; l >= 0; --l) {
    const int h = 1 << l, ne = l == d.levels ? 1 : bcr_eliminated_count(d, l);
    auto row = [&](int e) { return l == d.levels ? 0 : bcr_eliminated_row(l, e); };
    bcr_vector_pass(d, th, ne,
                    [&](int e, int r) { bcr_residual_item(ws, f, scratch, d, row(e), h, r); });
    __syncthreads();
    bcr_vector_pass(d, th, ne, [&](int e, int r) { bcr_back_item(ws, f, scratch, d, row(e), r); });
    __syncthreads();
  }
  bool finite = true;
  for (long i = tid; i < d.n; i += nt) {
    const Real v = f[i];
    out[order[i]] = v;
    finite = finite && isfinite(v);
  }
  finite = __syncthreads_and(finite);
  if (tid == 0) ok[1] = finite ? 1 : 0;
}

}  // namespace

struct DeviceSparseSolver::Impl {
  int n = 0, nnz = 0;
  long fill = -1;  // (counted when the sparse path is built)
  bool symmetric = true;
  bool fallback = false;
  bool use_qr = false;  // the sparse path's factorization is QR's (in each solve)
  Real max_diag = 0;
  std::vector<int> host_row_ptr, host_col;  // the pattern, for a sparse path built later
  // the sparse path (built at construction, or when a band pivot is too small)
  bool sparse_built = false;
  DeviceBuffer<int> row_ptr, col, slot_map, order, diag_slot;
  DeviceBuffer<Real> val, b, x;
  DeviceBuffer<Red4> partial, out;
  cusolverSpHandle_t handle = nullptr;
  cusparseMatDescr_t descr = nullptr;
  csrcholInfo_t chol = nullptr;
  DeviceBuffer<char> work;
  bool have_work = false;
  // the band
  bool banded = false;
  bool band_ready = false;  // the last factorization is the band's
  int w = 0, rows = 0;      // half-bandwidth, rows staged at a time
  int factor_threads = 0;   // w^2 rounded up to warps, 32 to 1024
  bool x_shared = false;
  size_t factor_smem = 0, solve_smem = 0;
  DeviceBuffer<int> band_src, band_order, flag;
  DeviceBuffer<Real> band, band_x;
  // the band by block cyclic reduction (the default; SLENDER_DEVICE_BAND=lu: the LU kernels)
  bool cyclic = false;
  BcrDims bcr;
  bool bcr_stage = false;  // each warp's inversions in shared memory (b^2 per warp fits)
  size_t bcr_smem = 0;
  bool bcr_vec_stage = false;  // the solve's vector and scratch in shared memory (2 nb b fit)
  size_t bcr_vec_smem = 0;
  DeviceBuffer<int> bcr_src;
  DeviceBuffer<Real> bcr_ws;

  // the handles are the Impl's, so that a constructor that throws half-way releases them
  ~Impl() {
    if (chol) cusolverSpDestroyCsrcholInfo(chol);
    if (descr) cusparseDestroyMatDescr(descr);
    if (handle) cusolverSpDestroy(handle);
  }

  template <class F>
  Red4 reduce(long count, const F& f) {
    reduce4_async(count, f, partial.data(), out.data());
    Red4 h{};
    SLENDER_CUDA_CHECK(cudaMemcpy(&h, out.data(), sizeof(Red4), cudaMemcpyDeviceToHost));
    return h;
  }
  int read_flag(int i) {
    int h = 0;
    SLENDER_CUDA_CHECK(cudaMemcpy(&h, flag.data() + i, sizeof(int), cudaMemcpyDeviceToHost));
    return h;
  }
  const Real* band_values = nullptr;  // the values of the band's last factorization
  bool deferred = false;              // the band's status left for the caller (solve_deferred)

  void launch_band_solve(const Real* d_b, Real* d_x);
  void build_sparse();
  bool try_band(const BandLayout& layout);
  bool sparse_factorize(const Real* d_val);
  bool sparse_solve(const Real* d_b, Real* d_x);
};

// the sparse path: AMD order, csrchol's analysis (symmetric), QR's descriptor
void DeviceSparseSolver::Impl::build_sparse() {
  if (sparse_built) return;
  sparse_built = true;
  const PermutedPattern p = fill_reducing_pattern(n, host_row_ptr, host_col);
  fill = cholesky_fill(n, p.row_ptr, p.col);
  row_ptr.upload(p.row_ptr);
  col.upload(p.col);
  slot_map.upload(p.slot_map);
  order.upload(p.order);
  diag_slot.upload(p.diag_slot);
  val.resize(size_t(nnz));
  b.resize(size_t(n));
  x.resize(size_t(n));
  partial.resize(kReduceBlocks);
  out.resize(1);
  check(cusolverSpCreate(&handle), "cusolverSpCreate");
  if (cusparseCreateMatDescr(&descr) != CUSPARSE_STATUS_SUCCESS) {
    throw Error("cuSPARSE: cannot create a matrix descriptor");
  }
  if (cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL) != CUSPARSE_STATUS_SUCCESS ||
      cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO) != CUSPARSE_STATUS_SUCCESS) {
    throw Error("cuSPARSE: cannot set up the matrix descriptor");
  }
  if (symmetric && n > 0) {
    // symbolic analysis once per pattern
    check(cusolverSpCreateCsrcholInfo(&chol), "cusolverSpCreateCsrcholInfo");
    check(cusolverSpXcsrcholAnalysis(handle, n, nnz, descr, row_ptr.data(), col.data(), chol),
          "cusolverSpXcsrcholAnalysis");
  }
}

// a kernel's dynamic shared memory: above the default 48 KiB the kernel asks for its share
template <class Kernel>
void allow_shared_memory(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    SLENDER_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// the band's arrays: block cyclic reduction's blocks (any size: they live in global memory, each
// warp's inversion and the solve's vector staged in shared memory where they fit), or the LU's
// band and windows, if a window of at least 2w + 1 rows fits in a block's shared memory
// (SLENDER_BAND_STAGE_BYTES caps it: tests make the windows small)
bool DeviceSparseSolver::Impl::try_band(const BandLayout& layout) {
  int dev = 0, optin = 0;
  SLENDER_CUDA_CHECK(cudaGetDevice(&dev));
  SLENDER_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const long cap_all = long(optin) - 1024;  // (the kernels' static shared memory)
  // the CSR slot of each band position (-1: a zero)
  std::vector<int> slot_of(size_t(layout.band_size), -1);
  for (size_t k = 0; k < layout.band_pos.size(); ++k)
    slot_of[size_t(layout.band_pos[k])] = int(k);
  const char* choice = std::getenv("SLENDER_DEVICE_BAND");
  cyclic = !choice || std::string(choice) != "lu";
  if (cyclic) {
    bcr = bcr_dims(n, layout.w);
    const long count = 3 * bcr_block_count(bcr) * bcr.nb;
    std::vector<int> src(static_cast<size_t>(count));
    for (long t = 0; t < count; ++t) {
      const long p = bcr_band_source(bcr, layout.w, t);
      src[size_t(t)] = p >= 0 ? slot_of[size_t(p)] : int(p);
    }
    bcr_src.upload(src);
    bcr_ws.resize(size_t(bcr_workspace_size(bcr)));
    const long inversions =
        long(kBcrThreads / kBandWarp) * bcr_block_count(bcr) * long(sizeof(Real));
    bcr_stage = inversions <= cap_all;
    bcr_smem = bcr_stage ? size_t(inversions) : 0;
    allow_shared_memory(bcr_factor_kernel, bcr_smem);
    const long vec = 2L * bcr.nb * bcr.b * long(sizeof(Real));
    bcr_vec_stage = vec <= cap_all;
    bcr_vec_smem = bcr_vec_stage ? size_t(vec) : 0;
    allow_shared_memory(bcr_solve_kernel, bcr_vec_smem);
  } else {
    long cap = cap_all;
    if (const char* e = std::getenv("SLENDER_BAND_STAGE_BYTES")) cap = std::min(cap, std::atol(e));
    const long s = 2L * layout.w + 1, row_bytes = s * long(sizeof(Real));
    const long x_bytes = long(n) * long(sizeof(Real));
    // x in shared memory when it takes at most a quarter of the capacity (the rest for rows)
    x_shared = x_bytes <= cap / 4;
    // one window size for both kernels: the solve's, whose x may take part of the capacity
    const long window = std::min<long>(n, (cap - (x_shared ? x_bytes : 0)) / row_bytes);
    if (window < std::min<long>(n, s)) return false;
    rows = int(window);
    factor_smem = size_t(rows) * size_t(row_bytes);
    solve_smem = factor_smem + (x_shared ? size_t(x_bytes) : 0);
    allow_shared_memory(band_factor_kernel, factor_smem);
    allow_shared_memory(band_solve_kernel, solve_smem);
    factor_threads = std::clamp((layout.w * layout.w + kBandWarp - 1) / kBandWarp * kBandWarp,
                                kBandWarp, kBandMaxThreads);
    band_src.upload(slot_of);
    band.resize(size_t(layout.band_size));
    if (!x_shared) band_x.resize(size_t(n));
  }
  w = layout.w;
  band_order.upload(layout.order);
  flag.resize(2);  // the factorization's, the solve's
  return true;
}

DeviceSparseSolver::DeviceSparseSolver(int n,
                                       const std::vector<int>& row_ptr,
                                       const std::vector<int>& col,
                                       bool symmetric,
                                       LinearSolverKind kind)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = n;
  s.nnz = int(col.size());
  s.symmetric = symmetric;
  s.host_row_ptr = row_ptr;
  s.host_col = col;
  // the CPU's rule (cpu::LinearSolver): kAuto takes the band when it is at most kBandedAutoMax
  // wide, kBanded whatever its width (here: if a window of it fits)
  if ((kind == LinearSolverKind::kAuto || kind == LinearSolverKind::kBanded) && n > 1) {
    const BandLayout layout = band_layout(n, row_ptr, col);
    if (kind == LinearSolverKind::kBanded || layout.w <= cpu::kBandedAutoMax)
      s.banded = s.try_band(layout);
  }
  if (!s.banded) s.build_sparse();
}

DeviceSparseSolver::~DeviceSparseSolver() = default;

bool DeviceSparseSolver::Impl::sparse_factorize(const Real* d_val) {
  build_sparse();
  parallel_for_cuda(nnz, Gather{slot_map.data(), d_val, val.data()});
  // the scale of the matrix, for scale-free singularity tolerances
  max_diag = reduce(n, MaxDiag{diag_slot.data(), val.data()}).m0;
  if (chol) {
    if (!have_work) {
      size_t internal = 0, workspace = 0;
      check(cusolverSpDcsrcholBufferInfo(handle, n, nnz, descr, val.data(), row_ptr.data(),
                                         col.data(), chol, &internal, &workspace),
            "cusolverSpDcsrcholBufferInfo");
      work.resize(workspace > 0 ? workspace : 1);
      have_work = true;
    }
    // the low-level csrchol API is not documented: a matrix that is not positive definite may
    // show as a zero-pivot status of the factorization, as a pivot at or below the tolerance,
    // or (a negative pivot's square root) as a solution that is not finite, which solve() takes
    // to QR too
    const cusolverStatus_t st = cusolverSpDcsrcholFactor(
        handle, n, nnz, descr, val.data(), row_ptr.data(), col.data(), chol, work.data());
    if (st != CUSOLVER_STATUS_ZERO_PIVOT) {
      check(st, "cusolverSpDcsrcholFactor");
      int pivot = -1;
      // L(j, j) at or below the tolerance: a pivot below 1e-14 of the largest diagonal entry,
      // not positive definite (numerically)
      const Real tol = 1e-7 * std::sqrt(max_diag);
      check(cusolverSpDcsrcholZeroPivot(handle, chol, tol, &pivot), "cusolverSpDcsrcholZeroPivot");
      if (pivot < 0) {
        use_qr = false;
        return true;
      }
    }
  }
  // QR factorizes inside each solve (csrlsvqr has no separate factorization)
  use_qr = true;
  fallback = fallback || symmetric;
  return max_diag > 0;
}

bool DeviceSparseSolver::Impl::sparse_solve(const Real* d_b, Real* d_x) {
  parallel_for_cuda(n, Gather{order.data(), d_b, b.data()});
  if (chol && !use_qr) {
    check(cusolverSpDcsrcholSolve(handle, n, b.data(), x.data(), chol, work.data()),
          "cusolverSpDcsrcholSolve");
    parallel_for_cuda(n, Scatter{order.data(), x.data(), d_x});
    if (reduce(n, CountNonFinite{d_x}).s0 == 0) return true;
    // a negative pivot the zero-pivot test let through: QR, as for one it reports
    use_qr = fallback = true;
  }
  int singular = -1;
  // the ordering is already applied (csrlsvqr's reorder argument has no effect)
  check(cusolverSpDcsrlsvqr(handle, n, nnz, descr, val.data(), row_ptr.data(), col.data(), b.data(),
                            1e-14 * max_diag, 0, x.data(), &singular),
        "cusolverSpDcsrlsvqr");
  if (singular >= 0) return false;
  parallel_for_cuda(n, Scatter{order.data(), x.data(), d_x});
  return reduce(n, CountNonFinite{d_x}).s0 == 0;
}

bool DeviceSparseSolver::factorize(const Real* d_val) {
  Impl& s = *impl_;
  s.fallback = false;
  s.band_ready = false;
  if (s.n == 0) return true;
  if (s.banded) {
    // its flag is read with the solve's (solve() takes the sparse path if a pivot was too small)
    if (s.cyclic) {
      bcr_factor_kernel<<<1, kBcrThreads, s.bcr_smem>>>(s.bcr, s.bcr_stage, s.bcr_src.data(), d_val,
                                                        s.bcr_ws.data(), s.flag.data());
    } else {
      parallel_for_cuda(long(s.band.size()), FillBand{s.band_src.data(), d_val, s.band.data()});
      band_factor_kernel<<<1, s.factor_threads, s.factor_smem>>>(s.n, s.w, s.rows, s.band.data(),
                                                                 s.flag.data());
    }
    SLENDER_CUDA_LAUNCHED();
    s.band_ready = true;
    s.band_values = d_val;
    return true;
  }
  return s.sparse_factorize(d_val);
}

void DeviceSparseSolver::Impl::launch_band_solve(const Real* d_b, Real* d_x) {
  if (cyclic) {
    bcr_solve_kernel<<<1, kBcrThreads, bcr_vec_smem>>>(bcr, bcr_vec_stage, band_order.data(), d_b,
                                                       d_x, bcr_ws.data(), flag.data());
  } else {
    band_solve_kernel<<<1, kBandThreads, solve_smem>>>(
        n, w, rows, x_shared, band.data(), band_order.data(), d_b, d_x, band_x.data(), flag.data());
  }
  SLENDER_CUDA_LAUNCHED();
}

bool DeviceSparseSolver::solve(const Real* d_b, Real* d_x) {
  Impl& s = *impl_;
  if (s.n == 0) return true;
  if (s.band_ready) {
    s.launch_band_solve(d_b, d_x);
    const int f = s.read_flag(1);
    if (f != 2) return f == 1;
    // a pivot too small for elimination without pivoting: the sparse path for these values
    return solve_after_pivot(d_b, d_x);
  }
  return s.sparse_solve(d_b, d_x);
}

void DeviceSparseSolver::set_deferred(bool on) { impl_->deferred = on; }

bool DeviceSparseSolver::solve_deferred(const Real* d_b, Real* d_x, const int*& status) {
  Impl& s = *impl_;
  status = nullptr;
  if (!s.deferred || s.n == 0 || !s.band_ready) return solve(d_b, d_x);
  s.launch_band_solve(d_b, d_x);
  status = s.flag.data() + 1;
  return true;
}

bool DeviceSparseSolver::solve_after_pivot(const Real* d_b, Real* d_x) {
  Impl& s = *impl_;
  s.band_ready = false;
  s.fallback = true;
  return s.sparse_factorize(s.band_values) && s.sparse_solve(d_b, d_x);
}

bool DeviceSparseSolver::used_fallback() const { return impl_->fallback; }
long DeviceSparseSolver::factor_nonzeros() const {
  const Impl& s = *impl_;
  if (s.banded && s.cyclic) return kBcrSlots * bcr_block_count(s.bcr) * s.bcr.nb;
  return s.banded ? long(s.band.size()) : s.fill;
}
bool DeviceSparseSolver::banded() const { return impl_->banded; }
const char* DeviceSparseSolver::band_name() const {
  return impl_->cyclic ? "cuda-block-cyclic" : "cuda-banded-lu";
}

}  // namespace slender
