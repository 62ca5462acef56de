#pragma once

// The batched linear solve of the engine with B environments (engine/engine.h, kBatched): one
// call per Newton iteration solves J_e dx_e = f_e for every running environment e, each Jacobian
// gathered from that environment's local Hessians over the model's shared pattern (the sources
// of each slot summed in the plan's order, as the stepper assembles its CSR values), by
// the fastest exact method for the structure at hand:
// - kBanded: the free DOFs in reverse Cuthill-McKee order, banded LU without pivoting
//   (include/slender/core/banded.h), one environment per thread: rods (half-bandwidth ~10);
// - kDense: each Jacobian in a dense n x n matrix (n free DOFs <= kDenseMaxDofs, nenv n^2
//   doubles <= kDenseMaxBytes), factorized by a fused per-environment Cholesky (an environment
//   whose Jacobian is symmetric) or LU with partial pivoting (friction, drag, or a Cholesky that
//   meets a non-positive pivot; include/slender/core/dense.h): small coupled systems (shells and
//   rod-shell structures of a few hundred DOFs);
// - kPcg: conjugate gradients on every environment at once (BatchCgOn, engine/krylov.h, where
//   the stepper's Krylov solves are too), SpMV over the shared CSR pattern
//   with per-environment values, preconditioned by the inverses of each environment's 3 x 3
//   diagonal blocks (one aligned triple of global DOFs: a node's position; twists and xi DOFs in
//   triples of their own; include/slender/core/pcg.h), from dx = 0 until |f - J dx| <=
//   kKrylovRelTol |f| (residual recurrence in double); an environment stops iterating when it
//   converges (masked). Its scalars (r.z, alpha, beta, the running flags) live with the vectors,
//   and the host reads only how many environments still run (on the GPU every 8 iterations).
//   Needs symmetric Jacobians.
// The automatic choice: banded when the half-bandwidth is at most kBandedAutoMax, else dense
// up to kDenseAutoMaxDofs free DOFs (up to kDenseMaxDofs for a non-symmetric Jacobian, which
// PCG cannot take) when the matrices fit, else PCG. An environment whose solve fails (a band or
// dense pivot too small, CG that does not converge within its cap or meets a direction of
// non-positive curvature) is reported to the caller, which solves it by pivoting sparse LU on the
// host. Every sum runs in a fixed order: repeated runs give the same bits, on any number of
// threads.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "slender/core/banded.h"
#include "slender/core/dense.h"
#include "slender/core/env_switch.h"
#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/core/pcg.h"
#include "slender/core/reduce4.h"
#include "slender/core/status.h"
#include "slender/core/strided.h"
#include "slender/engine/env_loops.h"
#include "slender/engine/krylov.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/ordering.h"
#include "slender/model.h"

namespace slender {

/// the most environments for which an executor with cooperating lanes (the GPU: a warp) runs
/// the dense factorizations with a group of lanes per environment rather than a thread. Measured
/// on an H200 (bench/results/2026-11-26-gpu-first-light-h200.md): the mid-edge plate (dense) 15x
/// faster on warps at 256 environments and 3.4x at 4096; so up to the largest batch measured,
/// 16384. SLENDER_BATCH_LANES=0 or 1 overrides
constexpr int kLanesMaxEnvs = 16384;
/// the same for the banded factorization. Measured on an H200 with the one engine
/// (bench/results/2026-11-27-s8-s9-gpu-h200.md, S8, each form alone on the GPU): warps
/// 1.58x faster than a thread each at 1024 environments and 1.14x at 4096, threads 1.15x faster
/// at 16384; the switch lies between 4096 and 16384, at 8192
constexpr int kBandLanesMaxEnvs = 8192;
/// the most environments for which the banded solve on lanes runs staged
/// (env_major::BandGatherSolve: the gather and the factorization in one pass, the band in the
/// executor's staging area, on the GPU shared memory) rather than through a band in global memory.
/// Measured on an H200 (the same file): staged 1.11x faster at 1 environment, 1.05x at 64 and 1.09x
/// at 1024, 0.94x at 4096 and 0.93x at 16384; the switch lies between 1024 and 4096, at 2048.
/// SLENDER_BATCH_STAGED=0 or 1 overrides
constexpr int kStagedMaxEnvs = 2048;

inline bool vec_use_staged(int nenv) {
  return env_switch("SLENDER_BATCH_STAGED", nenv <= kStagedMaxEnvs);
}

inline bool vec_use_lanes(int lanes, int nenv, int max_envs = kLanesMaxEnvs) {
  return lanes > 1 && env_switch("SLENDER_BATCH_LANES", nenv <= max_envs);
}

/// the largest free-DOF count the dense solver takes (n^3 / 3 flops per environment and Newton
/// iteration: 0.36 Gflop at the cap)
constexpr int kDenseMaxDofs = 1024;
/// the largest free-DOF count for which kAuto takes the dense solver when PCG could run (a
/// symmetric Jacobian): the crossover measured on the CPU
/// (bench/results/2026-11-22-s8-batch-cpu-xeon-2c.md) lies between a 216-DOF plate (dense 1.5x
/// faster than PCG) and a 424-DOF plate (PCG 1.5x faster); a non-symmetric Jacobian takes dense up
/// to kDenseMaxDofs
constexpr int kDenseAutoMaxDofs = 300;
/// the most memory the dense matrices of a batch may take (nenv n^2 doubles) [bytes]
constexpr double kDenseMaxBytes = 4.0 * 1024 * 1024 * 1024;
/// the widest half-bandwidth the banded solver takes when asked for
constexpr int kBandedMaxWidth = 64;
/// relative pivot floor of the banded and dense factorizations
constexpr Real kVecPivotTiny = 1e-13;

enum class VecSolver { kBanded, kDense, kPcg };

/// bytes of the dense matrices of nenv environments of n free DOFs
inline double dense_bytes(int nenv, int n) { return double(nenv) * double(n) * n * sizeof(Real); }

/// The solver of a batch for the requested kind (kAuto: banded when w <= kBandedAutoMax, else
/// dense when n <= kDenseAutoMaxDofs, or n <= kDenseMaxDofs and the Jacobian is not symmetric,
/// and the matrices fit in kDenseMaxBytes, else PCG); throws slender::Error saying why when the
/// request cannot be served.
inline VecSolver choose_vector_solver(
    LinearSolverKind requested, int n, int w, int nenv, bool symmetric) {
  const bool dense_fits = n <= kDenseMaxDofs && dense_bytes(nenv, n) <= kDenseMaxBytes;
  switch (requested) {
    case LinearSolverKind::kAuto:
      if (w <= cpu::kBandedAutoMax) return VecSolver::kBanded;
      if (dense_fits && (n <= kDenseAutoMaxDofs || !symmetric)) return VecSolver::kDense;
      SLENDER_CHECK(symmetric,
                    "the vectorized batch has no solver for this model: its Jacobian is not "
                    "symmetric (friction or drag), too wide for a band (half-bandwidth ",
                    w, ") and too large for the dense solver (", n, " free DOFs, ", nenv,
                    " environments); use the per-environment batch");
      return VecSolver::kPcg;
    case LinearSolverKind::kBanded:
      SLENDER_CHECK(w <= kBandedMaxWidth,
                    "the model's Jacobian does not order into a narrow band (half-bandwidth ", w,
                    ", the banded solver takes up to ", kBandedMaxWidth,
                    "); use the dense or pcg solver, or auto");
      return VecSolver::kBanded;
    case LinearSolverKind::kDense:
      SLENDER_CHECK(n <= kDenseMaxDofs, "the dense solver takes up to ", kDenseMaxDofs,
                    " free DOFs; this model has ", n, " (use pcg, or auto)");
      SLENDER_CHECK(dense_bytes(nenv, n) <= kDenseMaxBytes, "the dense matrices of ", nenv,
                    " environments of ", n, " free DOFs need ", dense_bytes(nenv, n) / (1 << 30),
                    " GiB, more than the cap of ", kDenseMaxBytes / (1 << 30),
                    " GiB (fewer environments, or the pcg solver)");
      return VecSolver::kDense;
    case LinearSolverKind::kPcg:
      SLENDER_CHECK(symmetric,
                    "the pcg solver needs a symmetric Jacobian; this model's is not (friction, "
                    "drag or anisotropic RFT): use dense or banded, or auto");
      return VecSolver::kPcg;
    default:
      SLENDER_CHECK(false,
                    "the vectorized batch solves by banded LU, dense Cholesky/LU or PCG (solver "
                    "auto, banded, dense or pcg); the sparse direct solvers, amg, pcg-mixed "
                    "and matrix-free are the per-environment engine's");
  }
  return VecSolver::kBanded;
}

namespace env_major {

/// out[i] = 0
struct Zero {
  Real* out;
  SLENDER_HD void operator()(long i) const { out[i] = 0; }
};

/// out = 0 for the entries of active environments: nenv x per_env entries, environment-major
/// or interleaved (as GatherJacobian)
struct ZeroActive {
  Real* out;
  const unsigned char* active;  // (nenv)
  long per_env;
  int nenv;
  bool interleave;
  SLENDER_HD void operator()(long i) const {
    if (active[interleave ? i % nenv : i / per_env]) out[i] = 0;
  }
};

/// dst[e][k] = src[k]: one state array into every environment (i = e len + k)
struct Broadcast {
  Real* dst;
  const Real* src;
  long len;
  SLENDER_HD void operator()(long i) const { dst[i] = src[i % len]; }
};

/// out[e][pos[slot]] = Jacobian entry of the slot (Hessian sources, then on diagonal slots the
/// per-DOF term: the stepper's order); pos null = the slot itself (CSR values). Entries
/// of out that no slot reaches are zero beforehand. Environment-major (entry k of environment e
/// at e stride + k) or, with `interleave`, interleaved (at k nenv + e).
struct GatherJacobian {
  int nnz, ndof, nenv;
  bool interleave;
  long hess_pool, stride;
  const int* slot_src_adr;
  const int* slot_src;
  const int* slot_dof;  // the DOF of a diagonal slot, -1 elsewhere (nnz)
  const int* pos;       // (nnz) or null
  const Real* h_pool;   // (nenv x hess_pool)
  const Real* dof_J;    // (nenv x ndof)
  Real* out;            // (nenv x stride)
  // DOFs an environment holds though the pattern has them (another environment's are free):
  // their rows and columns are the identity's, set by a pass after the sums (HoldSlots; null:
  // none is held, and the gather is what it was before DOFs could be held)
  const unsigned char* fixed = nullptr;  // (nenv x ndof)
  const int* slot_row_dof = nullptr;     // the DOF of each slot's row (nnz)
  const int* slot_col_dof = nullptr;     // the DOF of each slot's column (nnz)
  /// whether environment e holds the slot's row or column DOF (then its entry is the
  /// identity's: `v`); fixed must be set
  SLENDER_HD bool held(long e, long slot, Real& v) const {
    const unsigned char* fe = fixed + e * ndof;
    const int r = slot_row_dof[slot], c = slot_col_dof[slot];
    v = r == c ? Real(1) : Real(0);
    return fe[r] || fe[c];
  }
  /// environment e's Jacobian entry of the slot (the staged band solve sums it the same way)
  SLENDER_HD Real slot_sum(long e, long slot) const {
    const Real* h = h_pool + e * hess_pool;
    Real s = 0;
    for (int j = slot_src_adr[slot]; j < slot_src_adr[slot + 1]; ++j)
      s += h[slot_src[j]];
    if (slot_dof[slot] >= 0) s += dof_J[e * ndof + slot_dof[slot]];
    return s;
  }
  SLENDER_HD void at(long e, long slot) const {
    const long k = pos ? pos[slot] : slot;
    out[interleave ? k * nenv + e : e * stride + k] = slot_sum(e, slot);
  }
  SLENDER_HD void operator()(long i) const { at(i / nnz, i % nnz); }
};

/// the identity's entries in the rows and columns of the DOFs each environment holds (after
/// GatherJacobian's sums into the same out; g.fixed set): one (environment, slot) per index
struct HoldSlots {
  GatherJacobian g;
  SLENDER_HD void at(long e, long slot) const {
    Real v;
    if (!g.held(e, slot, v)) return;
    const long k = g.pos ? g.pos[slot] : slot;
    g.out[g.interleave ? k * g.nenv + e : e * g.stride + k] = v;
  }
  SLENDER_HD void operator()(long i) const { at(i / g.nnz, i % g.nnz); }
};

/// f[e][r] = 0 where environment e holds free row r's DOF (the residual of a DOF that the
/// pattern has but the environment holds: GatherJacobian's identity row)
struct ZeroHeld {
  int nfree, ndof;
  const int* free_dof;         // (nfree)
  const unsigned char* fixed;  // (nenv x ndof)
  Real* f;                     // (nenv x nfree)
  SLENDER_HD void at(long e, long r) const {
    if (fixed[e * ndof + free_dof[r]]) f[e * nfree + r] = 0;
  }
  SLENDER_HD void operator()(long i) const { at(i / nfree, i % nfree); }
};

/// A column-stepped solve (BandSolve, DenseSolve) of environment e on one thread: begin, every
/// column's phases in order, then finish (or fail at a column without a pivot). The executors'
/// for_each_env_columns runs the same steps on a group of lanes with a barrier after each phase.
template <class F>
SLENDER_HD void run_columns_on_one_thread(const F& f, long e) {
  if (!f.wanted(e)) return;
  const Real floor = f.begin(e);
  const int n = f.columns(), phases = f.phases();
  for (int k = 0; k < n; ++k)
    for (int ph = 0; ph < phases; ++ph)
      if (!f.column(e, k, ph, floor, 0, 1)) {
        f.fail(e);
        return;
      }
  f.finish(e);
}

/// banded LU and solve of one environment per index: dx[e] = J_e^-1 f[e]; ok[e] = 0 when a
/// pivot is too small or the result is not finite. The bands and the scratch vectors are
/// environment-major or, with `interleave`, interleaved (entry k of environment e at k nenv + e:
/// a warp's threads read consecutive addresses). The factorization also runs column by column
/// on nlanes cooperating threads per environment (an executor's for_each_env_columns: begin,
/// then for each column k = 0 .. n-1 its phases on every lane with a barrier after each, then
/// finish on one lane), with the same bits as one thread.
struct BandSolve {
  int n, w, nenv;
  bool interleave;
  long band_size;
  const unsigned char* active;
  const int* order;   // original free row of each band row (n)
  Real* band;         // (nenv x band_size)
  Real* x;            // scratch (nenv x n)
  const Real* f;      // (nenv x n)
  Real* dx;           // (nenv x n)
  unsigned char* ok;  // (nenv)

  SLENDER_HD Strided<Real> band_s(long e) const { return Strided<Real>{band + e, nenv}; }
  SLENDER_HD Real* band_p(long e) const { return band + e * band_size; }

  SLENDER_HD bool wanted(long e) const { return active[e] != 0; }
  SLENDER_HD int columns() const { return n; }
  SLENDER_HD int phases() const { return 1; }
  /// the pivot floor
  SLENDER_HD Real begin(long e) const {
    return interleave ? band_lu_floor(band_s(e), n, w, kVecPivotTiny)
                      : band_lu_floor(band_p(e), n, w, kVecPivotTiny);
  }
  /// column k on `lane` of nlanes: false (on every lane alike) when its pivot is too small; lane
  /// 0 first stores column k - 1's multipliers (every lane has eliminated it)
  SLENDER_HD bool column(long e, int k, int, Real floor, int lane, int nlanes) const {
    if (interleave) return column_of(band_s(e), k, floor, lane, nlanes);
    return column_of(band_p(e), k, floor, lane, nlanes);
  }
  template <class P>
  SLENDER_HD bool column_of(P b, int k, Real floor, int lane, int nlanes) const {
    if (!band_lu_pivot_ok(b, w, k, floor)) return false;
    if (lane == 0 && k > 0) band_lu_multipliers(b, n, w, k - 1);
    band_lu_eliminate(b, n, w, k, lane, nlanes);
    return true;
  }
  SLENDER_HD void fail(long e) const { ok[e] = 0; }
  /// the last multipliers and the solve (one lane)
  SLENDER_HD void finish(long e) const {
    if (interleave) {
      finish_of(e, band_s(e), Strided<Real>{x + e, nenv});
    } else {
      finish_of(e, band_p(e), x + e * n);
    }
  }
  template <class P>
  SLENDER_HD void finish_of(long e, P b, P xe) const {
    if (n > 0) band_lu_multipliers(b, n, w, n - 1);
    for (int k = 0; k < n; ++k)
      xe[k] = f[e * n + order[k]];
    band_lu_solve(b, n, w, xe);
    bool finite = true;
    for (int k = 0; k < n; ++k) {
      dx[e * n + order[k]] = xe[k];
      finite = finite && is_finite(xe[k]);
    }
    ok[e] = finite ? 1 : 0;
  }
  /// one thread per environment
  SLENDER_HD void operator()(long e) const { run_columns_on_one_thread(*this, e); }
};

/// The banded solve of one environment in one pass on a staging area of stage_size() Reals
/// (an executor's for_each_env_columns_staged; on the GPU, a warp's shared memory): the stage
/// phases zero the staged band and sum every slot of the Jacobian from the pools into it
/// (GatherJacobian's sums, in its order), then BandSolve's columns and finish run on the staged
/// band, with the solve's scratch vector after it. The band never goes through global memory,
/// and the bits are those of gather + BandSolve (environment-major).
struct BandGatherSolve {
  BandSolve solve;        // interleave false; its band and x unused (the staged ones instead)
  GatherJacobian gather;  // interleave false; pos: the band positions; out unused

  SLENDER_HD bool wanted(long e) const { return solve.wanted(e); }
  SLENDER_HD long stage_size() const { return solve.band_size + solve.n; }
  SLENDER_HD int stage_phases() const { return gather.fixed ? 3 : 2; }
  /// phase 0: the band zero; phase 1: every slot's entry in its place (each lane its own
  /// slots); phase 2 (where the environments hold DOFs of the pattern): the identity's entries
  /// in their rows and columns
  SLENDER_HD void stage(long e, Real* s, int phase, int lane, int nlanes) const {
    if (phase == 0) {
      for (long i = lane; i < solve.band_size; i += nlanes)
        s[i] = 0;
    } else if (phase == 1) {
      for (long slot = lane; slot < gather.nnz; slot += nlanes)
        s[gather.pos[slot]] = gather.slot_sum(e, slot);
    } else {
      Real v;
      for (long slot = lane; slot < gather.nnz; slot += nlanes)
        if (gather.held(e, slot, v)) s[gather.pos[slot]] = v;
    }
  }
  SLENDER_HD Real begin_staged(const Real* s) const {
    return band_lu_floor(s, solve.n, solve.w, kVecPivotTiny);
  }
  SLENDER_HD int columns() const { return solve.n; }
  SLENDER_HD int phases() const { return 1; }
  SLENDER_HD bool column_staged(Real* s, int k, int, Real floor, int lane, int nlanes) const {
    return solve.column_of(s, k, floor, lane, nlanes);
  }
  SLENDER_HD void fail(long e) const { solve.fail(e); }
  /// the last multipliers and the solve (one lane)
  SLENDER_HD void finish_staged(long e, Real* s) const {
    solve.finish_of(e, s, s + solve.band_size);
  }
};

/// dense Cholesky (environments flagged in `cholesky`) or pivoting LU and solve of one
/// environment per index: dx[e] = J_e^-1 f[e]; ok[e] = 0 when a pivot is too small or the result
/// is not finite. Matrices environment-major or, with `interleave`, interleaved. Also in
/// cooperative steps (for_each_env_columns, as BandSolve): three phases per column (a
/// Cholesky's third is empty).
struct DenseSolve {
  int n, nenv;
  bool interleave;
  const unsigned char* active;    // (nenv)
  const unsigned char* cholesky;  // (nenv)
  Real* A;                        // (nenv x n x n)
  int* piv;                       // (nenv x n)
  const Real* f;                  // (nenv x n)
  Real* dx;                       // (nenv x n)
  unsigned char* ok;              // (nenv)

  SLENDER_HD Strided<Real> mat_s(long e) const { return Strided<Real>{A + e, nenv}; }
  SLENDER_HD Real* mat_p(long e) const { return A + e * long(n) * n; }

  SLENDER_HD bool wanted(long e) const { return active[e] != 0; }
  SLENDER_HD int columns() const { return n; }
  SLENDER_HD int phases() const { return 3; }
  /// the pivot floor
  SLENDER_HD Real begin(long e) const {
    if (interleave) return begin_of(e, mat_s(e));
    return begin_of(e, mat_p(e));
  }
  template <class P>
  SLENDER_HD Real begin_of(long e, P a) const {
    return cholesky[e] ? dense_cholesky_floor(a, n, kVecPivotTiny)
                       : dense_lu_floor(a, n, kVecPivotTiny);
  }
  /// one phase of column k on `lane` of nlanes; false (on every lane alike, in phase 0) when
  /// the column has no pivot
  SLENDER_HD bool column(long e, int k, int phase, Real floor, int lane, int nlanes) const {
    if (interleave) return column_of(e, mat_s(e), k, phase, floor, lane, nlanes);
    return column_of(e, mat_p(e), k, phase, floor, lane, nlanes);
  }
  template <class P>
  SLENDER_HD bool column_of(long e, P a, int k, int phase, Real floor, int lane, int nlanes) const {
    if (cholesky[e]) {
      if (phase == 0) return dense_cholesky_row(a, n, k, floor, lane, nlanes);
      if (phase == 1) dense_cholesky_update(a, n, k, lane, nlanes);
      return true;
    }
    int* pe = piv + e * n;
    if (phase == 0) return dense_lu_pivot(a, n, pe, k, floor, lane);
    if (phase == 1) {
      dense_lu_swap(a, n, pe, k, lane, nlanes);
    } else {
      dense_lu_eliminate(a, n, k, lane, nlanes);
    }
    return true;
  }
  SLENDER_HD void fail(long e) const { ok[e] = 0; }
  /// the last column's stores and the solve (one lane)
  SLENDER_HD void finish(long e) const {
    if (interleave) {
      finish_of(e, mat_s(e));
    } else {
      finish_of(e, mat_p(e));
    }
  }
  template <class P>
  SLENDER_HD void finish_of(long e, P a) const {
    const bool chol = cholesky[e] != 0;
    if (n > 0) {
      if (chol) {
        dense_cholesky_diag(a, n, n - 1);
      } else {
        dense_lu_multipliers(a, n, n - 1);
      }
    }
    Real* x = dx + e * n;
    for (int k = 0; k < n; ++k)
      x[k] = f[e * n + k];
    if (chol) {
      dense_cholesky_solve(a, n, x);
    } else {
      dense_lu_solve(a, n, piv + e * n, x);
    }
    bool finite = true;
    for (int k = 0; k < n; ++k)
      finite = finite && is_finite(x[k]);
    ok[e] = finite ? 1 : 0;
  }
  /// one thread per environment
  SLENDER_HD void operator()(long e) const { run_columns_on_one_thread(*this, e); }
};

}  // namespace env_major

/// Outcome counters of the batched solves of one step.
struct VecSolveStats {
  long pcg_iterations = 0;  // CG iterations summed over the environments
  long lu_after_chol = 0;   // dense Cholesky factorizations that gave way to LU
};

/// The batched linear solve over an executor X (the engine's).
template <class X>
class VectorLinearSolve {
 public:
  // the engine's loops (env_major::each_heavy: on the host threaded from kParallelGrainHeavy items)
  template <class F>
  static void each(long n, const F& f) {
    env_major::each_heavy<X>(n, f);
  }
  template <class T>
  using Buffer = typename X::template Buffer<T>;
  /// band and dense matrices interleaved across environments (the GPU's coalesced layout) or
  /// environment-major (a CPU core's cache)
  static constexpr bool kInterleave = X::kInterleaved;

  /// the solver for `plan` (ndof DOFs) and nenv environments; symmetric: whether the model's
  /// Jacobian is (without per-environment friction)
  VectorLinearSolve(
      const AssemblyPlan& plan, int ndof, int nenv, LinearSolverKind requested, bool symmetric)
      : n_(plan.nfree), nnz_(plan.nnz()), ndof_(ndof), nenv_(nenv), hess_pool_(plan.hess_pool) {
    if (n_ > 0) layout_ = band_layout(n_, plan.row_ptr, plan.col);
    kind_ = choose_vector_solver(requested, n_, layout_.w, nenv, symmetric);
    // the DOF of each diagonal slot, whose per-DOF term the gather adds; the DOFs of each
    // slot's row and column (for environments that hold some of the pattern's DOFs)
    std::vector<int> slot_dof(plan.col.size(), -1), row_dof(plan.col.size()),
        col_dof(plan.col.size());
    for (int r = 0; r < n_; ++r) {
      slot_dof[plan.diag_slot[r]] = plan.free_dof[r];
      for (int s = plan.row_ptr[r]; s < plan.row_ptr[r + 1]; ++s) {
        row_dof[s] = plan.free_dof[r];
        col_dof[s] = plan.free_dof[plan.col[s]];
      }
    }
    up(plan.slot_src_adr, slot_src_adr_);
    up(plan.slot_src, slot_src_);
    up(slot_dof, slot_dof_);
    up(row_dof, slot_row_dof_);
    up(col_dof, slot_col_dof_);
    const size_t B = size_t(nenv);
    ok_.resize(B);
    mask_.resize(B);
    mask_h_.assign(B, 0);
    chol_h_.assign(B, symmetric ? 1 : 0);
    switch (kind_) {
      case VecSolver::kBanded:
        lanes_ = vec_use_lanes(X::kLanes, nenv, kBandLanesMaxEnvs);
        if constexpr (X::kStagedColumns)
          staged_ = lanes_ && vec_use_staged(nenv) &&
                    (layout_.band_size + long(n_)) * long(sizeof(Real)) <= X::staged_capacity();
        up(layout_.order, order_);
        up(layout_.band_pos, pos_);
        if (!staged_) {  // (staged, the band and the scratch live in the staging area)
          band_.resize(B * size_t(layout_.band_size));
          x_.resize(B * size_t(n_));
        }
        break;
      case VecSolver::kDense: {
        lanes_ = vec_use_lanes(X::kLanes, nenv);
        std::vector<int> pos(plan.col.size());
        for (int r = 0; r < n_; ++r)
          for (int s = plan.row_ptr[r]; s < plan.row_ptr[r + 1]; ++s)
            pos[s] = r * n_ + plan.col[s];
        up(pos, pos_);
        dense_.resize(B * size_t(n_) * size_t(n_));
        piv_.resize(B * size_t(n_));
        X::upload(chol_, chol_h_.data(), B);
        break;
      }
      case VecSolver::kPcg:
        cg_.setup(plan.row_ptr, plan.col, plan.free_dof, nenv);
        break;
    }
  }

  VecSolver kind() const { return kind_; }
  /// each environment's relative residual for the next pcg solves (inexact Newton's forcing,
  /// core/newton.h), or kKrylovRelTol (empty); the other kinds solve directly
  void set_krylov_tol(const std::vector<Real>& t) {
    if (kind_ == VecSolver::kPcg) cg_.set_rel_tol(t);
  }
  int half_bandwidth() const { return layout_.w; }

  /// "banded-lu", "dense-cholesky", "dense-lu" (or "dense-cholesky+lu" when the environments
  /// differ) or "pcg"
  std::string name() const {
    if (kind_ == VecSolver::kBanded)
      return staged_ ? "banded-lu-lanes-staged" : lanes_ ? "banded-lu-lanes" : "banded-lu";
    if (kind_ == VecSolver::kPcg) return "pcg";
    bool chol = false, lu = false;
    for (unsigned char c : chol_h_)
      (c ? chol : lu) = true;
    const std::string base = chol && lu ? "dense-cholesky+lu"
                             : chol     ? "dense-cholesky"
                                        : "dense-lu";
    return lanes_ ? base + "-lanes" : base;
  }

  /// each environment's held DOFs (nenv x ndof, on the executor) where some environment holds
  /// a DOF of the pattern: its rows and columns are the identity's; null: none does
  void set_fixed(const unsigned char* fixed) { fixed_ = fixed; }

  /// environment e's Jacobian is not symmetric (its own ground friction): LU from now on; the
  /// pcg solver cannot take it (throws)
  void set_nonsymmetric(int e) {
    SLENDER_CHECK(kind_ != VecSolver::kPcg,
                  "a per-environment ground friction makes the Jacobian non-symmetric; the pcg "
                  "solver of this batch needs a symmetric one (use dense or banded)");
    if (!chol_h_[e]) return;
    chol_h_[e] = 0;
    if (kind_ == VecSolver::kDense) X::upload(chol_, chol_h_.data(), size_t(nenv_));
  }

  /// dx[e] = J_e^-1 f[e] for the environments with active_h[e] (active: the same flags on the
  /// executor); ok_h[e] = 1 where solved, 0 where the caller must fall back; fallback_h[e] = 1
  /// where this solve fell back internally (a Cholesky that gave way to LU). With `defer_ok`
  /// the banded solve leaves its flags on the executor (ok_flags(), for the caller's next
  /// reduction to read: one host transfer fewer) and returns false; true when ok_h is filled.
  bool solve(const std::vector<unsigned char>& active_h,
             const unsigned char* active,
             const Real* h_pool,
             const Real* dof_J,
             const Real* f,
             Real* dx,
             std::vector<unsigned char>& ok_h,
             std::vector<unsigned char>& fallback_h,
             VecSolveStats& stats,
             bool defer_ok = false) {
    const int B = nenv_;
    ok_h.assign(B, 0);
    fallback_h.assign(B, 0);
    if (n_ == 0) {
      for (int e = 0; e < B; ++e)
        ok_h[e] = active_h[e];
      return true;
    }
    switch (kind_) {
      case VecSolver::kBanded: {
        const env_major::BandSolve bs{n_,
                                      layout_.w,
                                      B,
                                      mat_interleave(),
                                      layout_.band_size,
                                      active,
                                      order_.data(),
                                      band_.data(),
                                      x_.data(),
                                      f,
                                      dx,
                                      ok_.data()};
        if constexpr (X::kStagedColumns) {
          if (staged_) {
            X::for_each_env_columns_staged(
                B, env_major::BandGatherSolve{bs, gatherer(false, layout_.band_size, pos_.data(),
                                                           h_pool, dof_J, nullptr)});
          }
        }
        if (!staged_) {
          gather(active, band_, layout_.band_size, h_pool, dof_J);
          factorize(bs);
        }
        if (defer_ok) return false;
        X::download_at(ok_, 0, ok_h.data(), ok_h.size());
        break;
      }
      case VecSolver::kDense:
        dense_solve(active_h, active, h_pool, dof_J, f, dx, ok_h, fallback_h, stats);
        break;
      case VecSolver::kPcg:
        gather(active, cg_.values(), nnz_, h_pool, dof_J);
        cg_.solve(active, f, dx, ok_, mask_, ok_h, stats.pcg_iterations);
        break;
    }
    for (int e = 0; e < B; ++e)
      ok_h[e] = active_h[e] && ok_h[e];
    return true;
  }

  /// the last solve's per-environment flags on the executor (1: solved)
  const unsigned char* ok_flags() const { return ok_.data(); }

 private:
  template <class T>
  void up(const std::vector<T>& h, Buffer<T>& d) {
    X::upload(d, h.data(), h.size());
  }

  // the band and dense matrices' layout: interleaved on an executor that asks for it, unless
  // lanes cooperate on one environment's matrix (they read along its rows: environment-major)
  bool mat_interleave() const { return kInterleave && !lanes_; }

  // one factorization and solve per active environment: on a group of cooperating lanes each,
  // or on a thread each
  template <class F>
  void factorize(const F& f) {
    if constexpr (X::kLanes > 1) {
      if (lanes_) return X::for_each_env_columns(nenv_, f);
    }
    X::for_each_env(nenv_, f);
  }

  // every active environment's Jacobian into out (nenv x stride): zeros, then the slots
  void gather(const unsigned char* active,
              Buffer<Real>& out,
              long stride,
              const Real* h_pool,
              const Real* dof_J) {
    // band and dense matrices (interleaved on an executor that asks for it); CSR values
    const bool matrices = pos_.size() > 0;
    const bool interleave = matrices && mat_interleave();
    if (interleave)  // the entries no slot reaches are zero
      each(long(nenv_) * stride,
           env_major::ZeroActive{out.data(), active, stride, nenv_, interleave});
    else if (matrices)
      each(long(nenv_) * stride,
           env_major::Masked<env_major::Zero>{env_major::Zero{out.data()}, active, stride});
    const env_major::GatherJacobian g =
        gatherer(interleave, stride, matrices ? pos_.data() : nullptr, h_pool, dof_J, out.data());
    each(long(nenv_) * nnz_, env_major::Masked<env_major::GatherJacobian>{g, active, nnz_});
    // the identity's rows and columns where an environment holds a DOF of the pattern
    if (fixed_)
      each(long(nenv_) * nnz_,
           env_major::Masked<env_major::HoldSlots>{env_major::HoldSlots{g}, active, nnz_});
  }

  // the gather of every environment's Jacobian entries (GatherJacobian) into out
  env_major::GatherJacobian gatherer(bool interleave,
                                     long stride,
                                     const int* pos,
                                     const Real* h_pool,
                                     const Real* dof_J,
                                     Real* out) const {
    env_major::GatherJacobian g{nnz_,
                                ndof_,
                                nenv_,
                                interleave,
                                hess_pool_,
                                stride,
                                slot_src_adr_.data(),
                                slot_src_.data(),
                                slot_dof_.data(),
                                pos,
                                h_pool,
                                dof_J,
                                out};
    if (fixed_) {
      g.fixed = fixed_;
      g.slot_row_dof = slot_row_dof_.data();
      g.slot_col_dof = slot_col_dof_.data();
    }
    return g;
  }

  void dense_solve(const std::vector<unsigned char>& active_h,
                   const unsigned char* active,
                   const Real* h_pool,
                   const Real* dof_J,
                   const Real* f,
                   Real* dx,
                   std::vector<unsigned char>& ok_h,
                   std::vector<unsigned char>& fallback_h,
                   VecSolveStats& stats) {
    const int B = nenv_;
    const long nn = long(n_) * n_;
    gather(active, dense_, nn, h_pool, dof_J);
    factorize(env_major::DenseSolve{n_, B, mat_interleave(), active, chol_.data(), dense_.data(),
                                    piv_.data(), f, dx, ok_.data()});
    X::download_at(ok_, 0, ok_h.data(), ok_h.size());
    // a Cholesky that met a non-positive pivot: that environment again by pivoting LU (the
    // matrix gathered anew: the failed factorization overwrote it)
    bool retry = false;
    for (int e = 0; e < B; ++e) {
      mask_h_[e] = active_h[e] && !ok_h[e] && chol_h_[e] ? 1 : 0;
      retry = retry || mask_h_[e];
    }
    if (!retry) return;
    X::upload(mask_, mask_h_.data(), size_t(B));
    std::vector<unsigned char> no_chol(B, 0);
    X::upload(lu_only_, no_chol.data(), size_t(B));
    gather(mask_.data(), dense_, nn, h_pool, dof_J);
    factorize(env_major::DenseSolve{n_, B, mat_interleave(), mask_.data(), lu_only_.data(),
                                    dense_.data(), piv_.data(), f, dx, ok_.data()});
    std::vector<unsigned char> ok2(B);
    X::download_at(ok_, 0, ok2.data(), ok2.size());
    for (int e = 0; e < B; ++e)
      if (mask_h_[e]) {
        ok_h[e] = ok2[e];
        fallback_h[e] = 1;
        ++stats.lu_after_chol;
      }
  }

  int n_, nnz_, ndof_, nenv_;
  long hess_pool_;
  VecSolver kind_ = VecSolver::kBanded;
  bool lanes_ = false;   // banded or dense factorizations on groups of cooperating lanes
  bool staged_ = false;  // the banded one staged (env_major::BandGatherSolve)
  BandLayout layout_;
  Buffer<int> slot_src_adr_, slot_src_, slot_dof_, pos_, slot_row_dof_, slot_col_dof_;
  const unsigned char* fixed_ = nullptr;  // set_fixed's
  Buffer<unsigned char> ok_, mask_, chol_, lu_only_;
  std::vector<unsigned char> mask_h_, chol_h_;
  // banded
  Buffer<int> order_;
  Buffer<Real> band_, x_;
  // dense
  Buffer<Real> dense_;
  Buffer<int> piv_;
  // pcg (engine/krylov.h)
  BatchCgOn<X> cg_;
};

}  // namespace slender
