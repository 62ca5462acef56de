#pragma once

// The Krylov solves over an executor X, in one place. One system's (engine/system_solve.h,
// KrylovOn): preconditioned CG for symmetric Jacobians and preconditioned BiCGSTAB for the
// others, one system at a time. The batched ones (engine/batch_solve.h, BatchCgOn): block
// Jacobi CG on every environment's system at once, each stopping on its own. The
// caller gives the matrix and the preconditioner as callables (y = A x, out = P^-1 in) on X's
// memory. The scalars of the iteration stay in X's memory (reduction slots); the host reads the
// state every kKrylovCheck iterations, so that a device solve syncs rarely. The tolerances and
// the iteration cap are those of the CPU's (core/pcg.h: kKrylovRelTol, krylov_max_iterations).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

#include "slender/core/hd.h"
#include "slender/core/parallel_for.h"
#include "slender/core/pcg.h"
#include "slender/core/reduce4.h"
#include "slender/core/types.h"
#include "slender/engine/env_loops.h"

namespace slender {

namespace stepper {

// workspace entries of a reduction (the CUDA executor's partial results per block)
constexpr int kReducePartials = 192;

// s0: a . b, s1: number of entries of a that are not finite, m0: max |a|
struct DotMax {
  const Real* a;
  const Real* b;
  SLENDER_HD Red4 operator()(long i) const {
    return Red4{a[i] * b[i], a[i] - a[i] == 0 ? Real(0) : Real(1), 0, ::fabs(a[i])};
  }
};

// ---- PCG update functors (scalars read from reduction slots in device memory) ----------------

// x += alpha p, r -= alpha Ap with alpha = rz / pAp; flags a non-positive curvature; nothing
// once the iteration has converged (`done`), so that the iterate is the one the CPU stops at
struct PcgUpdateX {
  const Red4* rz;
  const Red4* pAp;
  const Red4* done;
  Red4* bad;
  const Real* p;
  const Real* Ap;
  Real* x;
  Real* r;
  SLENDER_HD void operator()(long i) const {
    if (done->s0 != 0) return;
    Real alpha = 0;
    if (rz->s0 != 0) {
      if (pAp->s0 > 0) {
        alpha = rz->s0 / pAp->s0;
      } else if (i == 0) {
        bad->s0 = 1;
      }
    }
    x[i] += alpha * p[i];
    r[i] -= alpha * Ap[i];
  }
};

// p = z + beta p with beta = rz_new / rz_old (nothing once converged); the two are sums of
// reduction slots (cg: each slot's s0; cg_fused: rz_new the s1 of the residual's slot)
struct PcgUpdateP {
  const Real* rz_new;
  const Real* rz_old;
  const Red4* done;
  const Real* z;
  Real* p;
  SLENDER_HD void operator()(long i) const {
    if (done->s0 != 0) return;
    const Real beta = *rz_old != 0 ? *rz_new / *rz_old : Real(0);
    p[i] = z[i] + beta * p[i];
  }
};

// done = 1 once |r|^2 <= stop (one thread)
struct PcgMarkDone {
  const Red4* rr;
  Red4* done;
  Real stop;
  SLENDER_HD void operator()(long) const {
    if (rr->s0 <= stop) done->s0 = 1;
  }
};

// ---- the fused CG iteration (cg_fused: block Jacobi, the matrix given by its rows) ----------
// Each functor is one map_reduce4 (executor.h) of cg's loop: the same values in the same order,
// so the same bits, in fewer passes (the device: one kernel and the reduction's second pass).

// s0: r . r, s1: r . z (cg's |r|^2 and the r . z of its direction update, in one slot)
struct RrRz {
  const Real* r;
  const Real* z;
  SLENDER_HD Red4 operator()(long i) const { return Red4{r[i] * r[i], r[i] * z[i], 0, 0}; }
};

// map: Ap = J p at row i (Rows: SystemRowsOf); value: p . Ap as DotMax{p, Ap}
template <class Rows>
struct CgProduct {
  Rows rows;
  const Real* p;
  Real* Ap;
  SLENDER_HD void map(long i) const { Ap[i] = rows(p, i); }
  SLENDER_HD Red4 operator()(long i) const { return DotMax{p, Ap}(i); }
};

// map: PcgUpdateX at row i (x += alpha p; r_out = r_in - alpha Ap, r_in kept once converged)
// and z = P^-1 r_out there (block Jacobi, core/pcg.h), each of the block's rows of r_out formed
// again where z needs it, so that no row reads another's output; value: RrRz of r_out and z.
// alpha = rz / pAp with rz the s1 of `rr_rz`, which this pass's reduction replaces: its index 0
// first keeps that rz in `rz_old` (s0) for the direction's update
template <class V>
struct CgUpdatePrecondition {
  const Red4* rr_rz;
  const Red4* pAp;
  const Red4* done;
  Red4* bad;
  Red4* rz_old;
  const int* row_block;  // (n) the block of each row
  const int* block_row;  // (nblock + 1)
  const V* inv;          // (nblock x 9)
  const Real* p;
  const Real* Ap;
  Real* x;
  const Real* r_in;
  Real* r_out;
  Real* z;
  SLENDER_HD void map(long i) const {
    const Real rz = rr_rz->s1;
    if (i == 0) rz_old->s0 = rz;
    const bool run = done->s0 == 0;
    Real alpha = 0;
    if (run) {
      if (rz != 0) {
        if (pAp->s0 > 0) {
          alpha = rz / pAp->s0;
        } else if (i == 0) {
          bad->s0 = 1;
        }
      }
      x[i] += alpha * p[i];
    }
    const auto r = [&](long j) { return run ? r_in[j] - alpha * Ap[j] : r_in[j]; };
    r_out[i] = r(i);
    z[i] = block_jacobi_row(block_row, inv, row_block[i], i, r);
  }
  SLENDER_HD Red4 operator()(long i) const { return RrRz{r_out, z}(i); }
};

// ---- BiCGSTAB update functors (non-symmetric Jacobians: friction, drag) ---------------------
// Preconditioned BiCGSTAB (van der Vorst) with the scalars in reduction slots: `rr` holds
// |r|^2 (s0) and rhat . r (s1) of the last residual; `rv` rhat . v (s0) and |v|^2 (s1); `state`
// holds rho, alpha and omega of the last iteration (s0, s1, s2) and this iteration's rho (m0);
// `rhat2` |rhat|^2 (s0). `done` holds converged (s0) and idle (s1): nothing moves once either
// is set. A breakdown (rhat . v or the next rho zero, or below kBicgBreakdown of the product of
// the norms, or omega zero) sets `bad` and idles the iteration with x and r as they were after
// the last whole update; the host then restarts from the true residual (bicgstab_solve).

/// |rhat . v| or |rhat . r| at or below this fraction of |rhat| |v| or |rhat| |r|: a (near)
/// breakdown, after which the iteration would divide by roundoff
constexpr Real kBicgBreakdown = 1e-10;

SLENDER_HD inline bool bicg_idle(const Red4* done) { return done->s0 != 0 || done->s1 != 0; }

// s0: a . b, s1: c . d
struct TwoDots {
  const Real* a;
  const Real* b;
  const Real* c;
  const Real* d;
  SLENDER_HD Red4 operator()(long i) const { return Red4{a[i] * b[i], c[i] * d[i], 0, 0}; }
};

// one thread: *slot = value
struct SetSlot {
  Red4* slot;
  Red4 value;
  SLENDER_HD void operator()(long) const { *slot = value; }
};

// one thread: *to = *from
struct CopySlot {
  const Red4* from;
  Red4* to;
  SLENDER_HD void operator()(long) const { *to = *from; }
};

// one thread at an iteration's start: this iteration's rho = rhat . r
struct BicgBegin {
  const Red4* rr;
  const Red4* done;
  Red4* state;
  SLENDER_HD void operator()(long) const {
    if (!bicg_idle(done)) state->m0 = rr->s1;
  }
};

// p = r + beta (p - omega v), beta = (rho / rho_last) (alpha / omega)
struct BicgUpdateP {
  const Red4* state;
  const Red4* done;
  const Real* r;
  const Real* v;
  Real* p;
  SLENDER_HD void operator()(long i) const {
    if (bicg_idle(done)) return;
    const Red4 st = *state;
    const Real beta = st.s0 != 0 && st.s2 != 0 ? (st.m0 / st.s0) * (st.s1 / st.s2) : Real(0);
    p[i] = r[i] + beta * (p[i] - st.s2 * v[i]);
  }
};

// one thread, after rv: a breakdown of rhat . v stops the iteration before alpha = rho /
// (rhat . v) would be applied
struct BicgCheckRv {
  const Red4* rv;
  const Red4* rhat2;
  Red4* done;
  Red4* bad;
  SLENDER_HD void operator()(long) const {
    if (bicg_idle(done)) return;
    const Real a = rv->s0 < 0 ? -rv->s0 : rv->s0;
    if (!(a > kBicgBreakdown * ::sqrt(rhat2->s0 * rv->s1))) {
      *bad = Red4{1, 1, 0, 0};
      done->s1 = 1;
    }
  }
};

// s = r - alpha v and x += alpha y, alpha = rho / (rhat . v)
struct BicgUpdateS {
  const Red4* state;
  const Red4* rv;
  const Red4* done;
  const Real* r;
  const Real* v;
  const Real* y;
  Real* s;
  Real* x;
  SLENDER_HD void operator()(long i) const {
    if (bicg_idle(done)) return;
    const Real alpha = state->m0 / rv->s0;
    s[i] = r[i] - alpha * v[i];
    x[i] += alpha * y[i];
  }
};

// x += omega z and r = s - omega t, omega = (t . s) / (t . t)
struct BicgUpdateX {
  const Red4* ts;
  const Red4* done;
  const Real* s;
  const Real* z;
  const Real* t;
  Real* x;
  Real* r;
  SLENDER_HD void operator()(long i) const {
    if (bicg_idle(done)) return;
    const Real omega = ts->s1 > 0 ? ts->s0 / ts->s1 : Real(0);
    x[i] += omega * z[i];
    r[i] = s[i] - omega * t[i];
  }
};

// one thread at an iteration's end, after rr: done once |r|^2 <= stop; else the state for the
// next iteration, or `bad` and idle on a breakdown of omega or of the next rho
struct BicgEnd {
  const Red4* rr;
  const Red4* rv;
  const Red4* ts;
  const Red4* rhat2;
  Red4* state;
  Red4* done;
  Red4* bad;
  Real stop;
  SLENDER_HD void operator()(long) const {
    if (bicg_idle(done)) return;
    if (rr->s0 <= stop) {
      done->s0 = 1;
      return;
    }
    const Real omega = ts->s1 > 0 ? ts->s0 / ts->s1 : Real(0);
    const Real rho = rr->s1 < 0 ? -rr->s1 : rr->s1;
    // which breakdown (bits in bad->s1: 1 rhat . v, 2 omega, 4 the next rho), for the trace
    const Real why =
        (omega == 0 ? 2 : 0) + (rho > kBicgBreakdown * ::sqrt(rhat2->s0 * rr->s0) ? 0 : 4);
    if (why != 0) {
      *bad = Red4{1, why, 0, 0};
      done->s1 = 1;
      return;
    }
    state->s1 = state->m0 / rv->s0;
    state->s0 = state->m0;
    state->s2 = omega;
  }
};

// r = b - t (the true residual for a restart, t = J x)
struct Residual {
  const Real* b;
  const Real* t;
  Real* r;
  SLENDER_HD void operator()(long i) const { r[i] = b[i] - t[i]; }
};

/// The Krylov solver's workspace and its counters on X
template <class X>
class KrylovOn {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;

  KrylovOn() {
    partial_.resize(kReducePartials);
    slots_.resize(kNumSlots);
  }

  /// the iterations of every solve so far
  long iterations() const { return iterations_; }
  /// the relative residual the next solves stop at, |b - A x| <= rel_tol |b| (inexact Newton's
  /// forcing, core/newton.h); kKrylovRelTol unless set
  void set_rel_tol(Real t) { rel_tol_ = t; }
  Real rel_tol() const { return rel_tol_; }
  /// the reduction results the constructor allocates (memory estimates, engine/memory_tally.h)
  static constexpr long workspace_reductions() { return kReducePartials + kNumSlots; }

  /// the last solve's residual relative to its right-hand side, |r| / |b| (the iteration's own
  /// residual, as its stopping test reads it; not a number where it is not finite)
  Real last_relative_residual() {
    const Red4 rr = read_slot(kSlotRr), bb = read_slot(kSlotBB);
    if (!std::isfinite(bb.s0)) return std::numeric_limits<Real>::quiet_NaN();  // (no iteration)
    return bb.s0 > 0 ? std::sqrt(rr.s0 / bb.s0) : Real(0);
  }

  // SLENDER_KRYLOV_TRACE=1: a line on stderr for each Krylov solve that gives up (a diagnosis
  // aid for the device, where a debugger is not at hand)
  static bool trace() {
    static const bool on = [] {
      const char* v = std::getenv("SLENDER_KRYLOV_TRACE");
      return v != nullptr && *v != '\0' && *v != '0';
    }();
    return on;
  }
  /// a line on stderr: why the last solve of n unknowns (`symmetric`: CG) gave up
  void trace_failure(bool symmetric, int n, long iterations) {
    Red4 h[3];  // rr, bad, done
    X::to_host(h, slot(kSlotRr), 3);
    const Red4 bb = read_slot(kSlotBB), rv = read_slot(kSlotBiRv), ts = read_slot(kSlotBiTs);
    std::fprintf(stderr,
                 "krylov: %s gave up after %ld of %d iterations: |r|^2 %.3e, |b|^2 %.3e (stop "
                 "at %.3e), breakdown %g (why %g: 1 rhat.v, 2 omega, 4 rho), done %g; "
                 "rhat.r %.3e, rhat.v %.3e, t.s %.3e, t.t %.3e\n",
                 symmetric ? "CG" : "BiCGSTAB", iterations, krylov_max_iterations(n), h[0].s0,
                 bb.s0, rel_tol_ * rel_tol_ * bb.s0, h[1].s0, h[1].s1, h[2].s0, h[0].s1, rv.s0,
                 ts.s0, ts.s1);
  }

  // preconditioned BiCGSTAB from x = 0 to |b - J x| <= rel_tol |b|, for non-symmetric
  // Jacobians; the scalars stay in device memory (krylov_check reads the state). A breakdown
  // idles the iteration; at the next check the host restarts it from the true residual b - J x
  // with the shadow residual rhat = r (at most kBicgRestarts times, within max_iter in all)
  static constexpr int kBicgRestarts = 10;
  template <class Apply, class Precondition>
  bool bicgstab(int n,
                const Real* b,
                Real* x,
                const Apply& apply_matrix,
                const Precondition& precondition,
                long& restarts_out) {
    resize(n);
    const int max_iter = krylov_max_iterations(n);
    for (Buffer<Real>* v : {&rhat_, &bs_, &bt_})
      v->resize(size_t(n));
    Real* r = pr_.data();
    Real* p = pp_.data();
    Real* v = pAp_.data();
    Real* yz = pz_.data();  // y, then z (y is spent before z is formed)
    Real* sv = bs_.data();
    Real* t = bt_.data();
    Real stop = 0;
    const Krylov start = krylov_start(n, b, x, stop);
    if (start != Krylov::kGoOn) return start == Krylov::kConverged;
    // a (re)start: r = b - J x (b itself while x = 0), rhat = r, p = v = 0, the scalars of
    // "iteration 0", the flags cleared
    auto begin = [&](bool from_x) {
      if (from_x) {
        apply_matrix(x, t);
        X::for_each(n, Residual{b, t, r});
      } else {
        X::copy(r, b, size_t(n));
      }
      X::copy(rhat_.data(), r, size_t(n));
      X::fill_zero(p, size_t(n));
      X::fill_zero(v, size_t(n));
      X::fill_zero(slot(kSlotBad), 2);                                // bad, done
      X::for_each(1, SetSlot{slot(kSlotBiState), Red4{1, 1, 1, 0}});  // rho, alpha, omega
      X::reduce4(n, TwoDots{r, r, rhat_.data(), r}, partial_.data(), slot(kSlotRr));
      X::for_each(1, CopySlot{slot(kSlotRr), slot(kSlotBiRhat)});  // |rhat|^2 = |r|^2 here
    };
    begin(false);
    int restarts = 0;
    for (int it = 1; it <= max_iter; ++it) {
      X::for_each(1, BicgBegin{slot(kSlotRr), slot(kSlotDone), slot(kSlotBiState)});
      X::for_each(n, BicgUpdateP{slot(kSlotBiState), slot(kSlotDone), r, v, p});
      precondition(p, yz);
      apply_matrix(yz, v);
      X::reduce4(n, TwoDots{rhat_.data(), v, v, v}, partial_.data(), slot(kSlotBiRv));
      X::for_each(1,
                  BicgCheckRv{slot(kSlotBiRv), slot(kSlotBiRhat), slot(kSlotDone), slot(kSlotBad)});
      X::for_each(
          n, BicgUpdateS{slot(kSlotBiState), slot(kSlotBiRv), slot(kSlotDone), r, v, yz, sv, x});
      precondition(sv, yz);
      apply_matrix(yz, t);
      X::reduce4(n, TwoDots{t, sv, t, t}, partial_.data(), slot(kSlotBiTs));
      X::for_each(n, BicgUpdateX{slot(kSlotBiTs), slot(kSlotDone), sv, yz, t, x, r});
      X::reduce4(n, TwoDots{r, r, rhat_.data(), r}, partial_.data(), slot(kSlotRr));
      X::for_each(1, BicgEnd{slot(kSlotRr), slot(kSlotBiRv), slot(kSlotBiTs), slot(kSlotBiRhat),
                             slot(kSlotBiState), slot(kSlotDone), slot(kSlotBad), stop});
      const Krylov verdict = krylov_check(it, max_iter);
      if (verdict == Krylov::kConverged) return true;
      if (verdict == Krylov::kGoOn) continue;
      // a breakdown (or a residual that is not finite: then the restart's is not either)
      if (restarts == kBicgRestarts || it == max_iter) return false;
      ++restarts;
      ++restarts_out;
      if (trace()) trace_restart(it);
      begin(true);
      const Red4 rr = read_slot(kSlotRr);
      if (!std::isfinite(rr.s0)) return false;
      if (rr.s0 <= stop) return true;
    }
    return false;
  }

  // preconditioned CG from x = 0 to |b - A x| <= rel_tol |b| (as the CPU's); the step
  // length and direction update read their scalars from device memory (krylov_check reads the
  // state)
  template <class Apply, class Precondition>
  bool cg(
      int n, const Real* b, Real* x, const Apply& apply_matrix, const Precondition& precondition) {
    Real stop = 0;
    const Krylov start = cg_start(n, b, x, precondition, stop);
    if (start != Krylov::kGoOn) return start == Krylov::kConverged;
    const int max_iter = krylov_max_iterations(n);
    Slot rz_cur = kSlotRzA, rz_next = kSlotRzB;
    X::reduce4(n, DotMax{pr_.data(), pz_.data()}, partial_.data(), slot(rz_cur));
    for (int it = 1; it <= max_iter; ++it) {
      apply_matrix(pp_.data(), pAp_.data());
      X::reduce4(n, DotMax{pp_.data(), pAp_.data()}, partial_.data(), slot(kSlotPAp));
      X::for_each(n, PcgUpdateX{slot(rz_cur), slot(kSlotPAp), slot(kSlotDone), slot(kSlotBad),
                                pp_.data(), pAp_.data(), x, pr_.data()});
      X::reduce4(n, DotMax{pr_.data(), pr_.data()}, partial_.data(), slot(kSlotRr));
      X::for_each(1, PcgMarkDone{slot(kSlotRr), slot(kSlotDone), stop});
      const Krylov verdict = krylov_check(it, max_iter);
      if (verdict != Krylov::kGoOn) return verdict == Krylov::kConverged;
      precondition(pr_.data(), pz_.data());
      X::reduce4(n, DotMax{pr_.data(), pz_.data()}, partial_.data(), slot(rz_next));
      X::for_each(n, PcgUpdateP{&slot(rz_next)->s0, &slot(rz_cur)->s0, slot(kSlotDone), pz_.data(),
                                pp_.data()});
      std::swap(rz_cur, rz_next);
    }
    return false;
  }

  // cg with block Jacobi in fewer passes: the matrix product with p . Ap, and the update of x
  // and r with the preconditioner and both dot products (CgProduct, CgUpdatePrecondition:
  // six launches an iteration where cg takes eleven, five vector passes fewer). The same
  // iterates, bit for bit, as cg with BlockJacobiApplyOf. rows: SystemRowsOf (row i of A x);
  // row_block, block_row, inv: the blocks (core/pcg.h); precondition: out = P^-1 in, for the
  // first residual
  template <class Rows, class V, class Precondition>
  bool cg_fused(int n,
                const Real* b,
                Real* x,
                const Rows& rows,
                const int* row_block,
                const int* block_row,
                const V* inv,
                const Precondition& precondition) {
    if (pr2_.size() != size_t(n)) pr2_.resize(size_t(n));
    Real stop = 0;
    const Krylov start = cg_start(n, b, x, precondition, stop);
    if (start != Krylov::kGoOn) return start == Krylov::kConverged;
    const int max_iter = krylov_max_iterations(n);
    X::reduce4(n, RrRz{pr_.data(), pz_.data()}, partial_.data(), slot(kSlotRr));
    Real* r_in = pr_.data();
    Real* r_out = pr2_.data();
    for (int it = 1; it <= max_iter; ++it) {
      X::map_reduce4(n, CgProduct<Rows>{rows, pp_.data(), pAp_.data()}, partial_.data(),
                     slot(kSlotPAp));
      X::map_reduce4(
          n,
          CgUpdatePrecondition<V>{slot(kSlotRr), slot(kSlotPAp), slot(kSlotDone), slot(kSlotBad),
                                  slot(kSlotRzA), row_block, block_row, inv, pp_.data(),
                                  pAp_.data(), x, r_in, r_out, pz_.data()},
          partial_.data(), slot(kSlotRr));
      X::for_each(1, PcgMarkDone{slot(kSlotRr), slot(kSlotDone), stop});
      const Krylov verdict = krylov_check(it, max_iter);
      if (verdict != Krylov::kGoOn) return verdict == Krylov::kConverged;
      X::for_each(n, PcgUpdateP{&slot(kSlotRr)->s1, &slot(kSlotRzA)->s0, slot(kSlotDone),
                                pz_.data(), pp_.data()});
      std::swap(r_in, r_out);
    }
    return false;
  }

 private:
  enum class Krylov { kGoOn, kConverged, kFailed };
  // the host reads the iteration's state every kKrylovCheck iterations (and at the last)
  static constexpr int kKrylovCheck = 8;

  // CG's start (cg, cg_fused): krylov_start, then r = b, z = P^-1 r and p = z
  template <class Precondition>
  Krylov cg_start(int n, const Real* b, Real* x, const Precondition& precondition, Real& stop) {
    resize(n);
    const Krylov start = krylov_start(n, b, x, stop);
    if (start != Krylov::kGoOn) return start;
    X::copy(pr_.data(), b, size_t(n));
    precondition(pr_.data(), pz_.data());
    X::copy(pp_.data(), pz_.data(), size_t(n));
    return start;
  }

  // x = 0, the flags cleared and, in `stop`, the bound on |r|^2 (rel_tol^2 |b|^2);
  // kConverged when b = 0 (x = 0 solves it), kFailed when b is not finite
  Krylov krylov_start(int n, const Real* b, Real* x, Real& stop) {
    X::reduce4(n, DotMax{b, b}, partial_.data(), slot(kSlotBB));
    const Real bb = read_slot(kSlotBB).s0;
    X::fill_zero(x, size_t(n));
    if (bb == 0) return Krylov::kConverged;
    if (!std::isfinite(bb)) return Krylov::kFailed;
    stop = rel_tol_ * rel_tol_ * bb;
    X::fill_zero(slot(kSlotBad), 2);  // bad, done
    return Krylov::kGoOn;
  }

  // after iteration `it` (counted): at the check points the host reads |r|^2, bad and done
  // (adjacent slots): converged once done, failed on a breakdown or a residual that is not finite
  Krylov krylov_check(int it, int max_iter) {
    ++iterations_;
    if (it % kKrylovCheck != 0 && it != max_iter) return Krylov::kGoOn;
    Red4 h[3];  // rr, bad, done
    X::to_host(h, slot(kSlotRr), 3);
    if (h[2].s0 != 0) return Krylov::kConverged;
    if (h[1].s0 != 0 || !std::isfinite(h[0].s0)) return Krylov::kFailed;
    return Krylov::kGoOn;
  }

  void trace_restart(int it) {
    Red4 h[2];  // bad, done
    X::to_host(h, slot(kSlotBad), 2);
    std::fprintf(stderr,
                 "krylov: BiCGSTAB restarts after iteration %d (why %g: 1 rhat.v, 2 omega, "
                 "4 rho)\n",
                 it, h[0].s1);
  }
  // reduction result slots (kSlotRr, kSlotBad and kSlotDone adjacent: read together)
  enum Slot {
    kSlotRzA,
    kSlotRzB,
    kSlotPAp,
    kSlotRr,
    kSlotBad,
    kSlotDone,
    kSlotBB,
    kSlotBiState,
    kSlotBiRv,
    kSlotBiTs,
    kSlotBiRhat,
    kNumSlots
  };
  Red4* slot(Slot s) { return slots_.data() + s; }
  Red4 read_slot(Slot s) {
    Red4 h{};
    X::to_host(&h, slots_.data() + s, 1);
    return h;
  }
  void resize(int n) {
    for (Buffer<Real>* v : {&pr_, &pz_, &pp_, &pAp_})
      if (v->size() != size_t(n)) v->resize(size_t(n));
  }

  long iterations_ = 0;
  Real rel_tol_ = kKrylovRelTol;
  Buffer<Red4> partial_, slots_;
  Buffer<Real> pr_, pz_, pp_, pAp_;
  Buffer<Real> pr2_;             // cg_fused's second residual (r_in and r_out alternate)
  Buffer<Real> rhat_, bs_, bt_;  // BiCGSTAB's shadow residual, s and t
};

}  // namespace stepper

// ---- the vectorized batch's CG: every environment at once ----

namespace env_major {

/// y[e] = J_e x[e] over the shared CSR pattern: one (environment, row) per index
struct EnvSpmv {
  int n, nnz;
  const int* row_ptr;  // (n + 1)
  const int* col;      // (nnz)
  const Real* val;     // (nenv x nnz)
  const Real* x;       // (nenv x n)
  Real* y;             // (nenv x n)
  SLENDER_HD void operator()(long i) const {
    const long e = i / n, r = i % n;
    CsrSpmv{row_ptr, col, val + e * nnz, x + e * n, y + e * n}(r);
  }
};

/// each environment's block-Jacobi inverses: one (environment, block) per index
struct EnvBlockSetup {
  long nblock;
  int nnz;
  const int* row_ptr;
  const int* col;
  const Real* val;       // (nenv x nnz)
  const int* block_row;  // (nblock + 1)
  Real* inv;             // (nenv x nblock x 9)
  unsigned char* ok;     // (nenv x nblock)
  SLENDER_HD void operator()(long i) const {
    const long e = i / nblock, b = i % nblock;
    BlockJacobiSetup{
        row_ptr, col, val + e * nnz, block_row, inv + 9 * e * nblock, ok + e * nblock}(b);
  }
};

/// z[e] = P_e^-1 r[e]: one (environment, block) per index
struct EnvBlockApply {
  long nblock;
  int n;
  const int* block_row;
  const Real* inv;  // (nenv x nblock x 9)
  const Real* r;    // (nenv x n)
  Real* z;          // (nenv x n)
  SLENDER_HD void operator()(long i) const {
    const long e = i / nblock, b = i % nblock;
    BlockJacobiApply{block_row, inv + 9 * e * nblock, r + e * n, z + e * n}(b);
  }
};

/// CG's start: x = 0, r = f
struct CgStart {
  const Real* f;
  Real* x;
  Real* r;
  SLENDER_HD void operator()(long i) const {
    x[i] = 0;
    r[i] = f[i];
  }
};

/// x += alpha[e] p, r -= alpha[e] Ap
struct CgUpdate {
  int n;
  const Real* alpha;  // (nenv)
  const Real* p;
  const Real* Ap;
  Real* x;
  Real* r;
  SLENDER_HD void operator()(long i) const {
    const Real a = alpha[i / n];
    x[i] += a * p[i];
    r[i] -= a * Ap[i];
  }
};

/// p = z + beta[e] p
struct CgDirection {
  int n;
  const Real* beta;  // (nenv)
  const Real* z;
  Real* p;
  SLENDER_HD void operator()(long i) const { p[i] = z[i] + beta[i / n] * p[i]; }
};

/// per environment: s0 a . b, s1 c . d (c null: 0)
struct Dots {
  int n;
  const Real* a;
  const Real* b;
  const Real* c;
  const Real* d;
  SLENDER_HD Red4 operator()(long e, long i) const {
    const long k = e * n + i;
    return Red4{a[k] * b[k], c ? c[k] * d[k] : Real(0), 0, 0};
  }
};

/// CG's per-environment start (one environment per index), from bad (s0: diagonal blocks that
/// are not positive definite) and d0 (s0 = f . f, s1 = r . z): an environment iterates (run) when
/// it is active, its blocks are fine and f != 0; f = 0 is solved (dx = 0). ok = 0 elsewhere, until
/// CG converges.
struct CgInit {
  Real rel_tol;
  const Real* rel_tol_env;  // per environment (inexact Newton's forcing), or null: rel_tol
  const unsigned char* active;
  const Red4* bad;
  const Red4* d0;
  unsigned char* run;
  unsigned char* ok;
  Real* rz;
  Real* stop;
  int* iters;
  SLENDER_HD void operator()(long e) const {
    const bool go = active[e] && bad[e].s0 == 0;
    ok[e] = go && d0[e].s0 == 0 ? 1 : 0;
    run[e] = go && d0[e].s0 != 0 ? 1 : 0;
    rz[e] = d0[e].s1;
    const Real t = rel_tol_env ? rel_tol_env[e] : rel_tol;
    stop[e] = t * t * d0[e].s0;
    iters[e] = 0;
  }
};

/// CG's step length alpha = r.z / p.Ap from pAp (s0) for the running environments; one whose
/// p.Ap is not positive (not positive definite along p) stops, unsolved: the caller falls back
struct CgAlpha {
  const Red4* pAp;
  const Real* rz;
  unsigned char* run;
  Real* alpha;
  SLENDER_HD void operator()(long e) const {
    if (!run[e]) return;
    if (!(pAp[e].s0 > 0)) {
      run[e] = 0;
      return;
    }
    alpha[e] = rz[e] / pAp[e].s0;
  }
};

/// after an update, from rr (s0 = r . r, s1 = r . z): a running environment counts the iteration
/// and stops when converged (ok) or broken down (not finite); the others take beta = r.z_new /
/// r.z_old (in `beta`) and keep the new r.z
struct CgBeta {
  const Red4* rr;
  const Real* stop;
  unsigned char* run;
  unsigned char* ok;
  Real* rz;
  Real* beta;
  int* iters;
  SLENDER_HD void operator()(long e) const {
    if (!run[e]) return;
    ++iters[e];
    const Real r2 = rr[e].s0;
    if (!is_finite(r2) || r2 <= stop[e]) {
      ok[e] = is_finite(r2) ? 1 : 0;
      run[e] = 0;
      return;
    }
    beta[e] = rr[e].s1 / rz[e];
    rz[e] = rr[e].s1;
  }
};

/// s0 the number of set flags (one reduction "environment" of len flags)
struct CountSet {
  const unsigned char* flags;
  SLENDER_HD Red4 operator()(long, long i) const {
    return Red4{flags[i] ? Real(1) : Real(0), 0, 0, 0};
  }
};

/// per environment: s0 the number of flags equal to 0
struct CountZeros {
  long len;
  const unsigned char* flags;  // (nenv x len)
  SLENDER_HD Red4 operator()(long e, long i) const {
    return Red4{flags[e * len + i] ? Real(0) : Real(1), 0, 0, 0};
  }
};

}  // namespace env_major

/// PCG's iteration cap for n unknowns: 2 n, at least 200 and at most 5000 (in exact arithmetic
/// CG ends within n iterations; round-off on the shells' ill-conditioned systems takes more:
/// up to 78 on a 175-DOF plate at kKrylovRelTol)
inline int vec_pcg_max_iters(int n) { return std::max(200, std::min(2 * n, 5000)); }

/// Preconditioned CG on nenv systems at once, the vectorized batch's linear solve (kPcg;
/// engine/batch_solve.h): one free-DOF CSR pattern, each environment's own values and
/// block-Jacobi preconditioner, each environment stopping on its own (the CPU's
/// LinearSolver::pcg_solve, step for step). The per-environment scalars (r.z, alpha, beta, the
/// running flags) stay on the executor; the host reads how many environments still run every
/// X::kPcgCheckEvery iterations (environments that stopped in between take no more updates).
template <class X>
class BatchCgOn {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;

  /// the pattern (n free rows: row_ptr, col) for nenv environments; the preconditioner's blocks
  /// are the consecutive free rows within one aligned triple of global DOFs (free_dof: each free
  /// row's DOF), as the CPU's
  void setup(const std::vector<int>& row_ptr,
             const std::vector<int>& col,
             const std::vector<int>& free_dof,
             int nenv) {
    nenv_ = nenv;
    n_ = int(row_ptr.size()) - 1;
    nnz_ = int(col.size());
    X::upload(row_ptr_, row_ptr.data(), row_ptr.size());
    X::upload(col_, col.data(), col.size());
    std::vector<int> block_row{0};
    for (int r = 1; r < n_; ++r)
      if (free_dof[r] / 3 != free_dof[r - 1] / 3) block_row.push_back(r);
    block_row.push_back(n_);
    nblock_ = long(block_row.size()) - 1;
    X::upload(block_row_, block_row.data(), block_row.size());
    const size_t B = size_t(nenv);
    val_.resize(B * size_t(nnz_));
    inv_.resize(B * 9 * size_t(nblock_));
    block_ok_.resize(B * size_t(nblock_));
    for (Buffer<Real>* b : {&r_, &z_, &p_, &Ap_})
      b->resize(B * size_t(n_));
    for (Buffer<Real>* b : {&rz_, &stop_, &coef_})
      b->resize(B);
    iters_.resize(B);
  }

  /// every environment's matrix values (nenv x nnz), which the caller gathers before a solve
  Buffer<Real>& values() { return val_; }

  /// each environment's relative residual for the next solves (inexact Newton's forcing,
  /// core/newton.h; nenv values, uploaded), or kKrylovRelTol for all (empty)
  void set_rel_tol(const std::vector<Real>& t) {
    tol_set_ = !t.empty();
    if (tol_set_) X::upload(tol_, t.data(), t.size());
  }

  /// dx[e] = J_e^-1 f[e] for the environments with active[e] (on X). ok[e] (on X, and ok_h on
  /// the host) = 1 where CG converged, 0 where the caller must fall back; `run` (nenv, on X) holds
  /// the running flags; the iterations taken are added to `iterations`
  void solve(const unsigned char* active,
             const Real* f,
             Real* dx,
             Buffer<unsigned char>& ok,
             Buffer<unsigned char>& run,
             std::vector<unsigned char>& ok_h,
             long& iterations) {
    const int B = nenv_, n = n_;
    const long Bn = long(B) * n, Bb = long(B) * nblock_;
    unsigned char* const flags = run.data();
    if (start(active, f, dx, ok.data(), flags)) {
      const int max_iter = vec_pcg_max_iters(n);
      for (int it = 1; it <= max_iter; ++it) {
        each(Bn, env_major::Masked<env_major::EnvSpmv>{
                     env_major::EnvSpmv{n, nnz_, row_ptr_.data(), col_.data(), val_.data(),
                                        p_.data(), Ap_.data()},
                     flags, n});
        X::env_reduce_to(B, n, env_major::Dots{n, p_.data(), Ap_.data(), nullptr, nullptr}, red_);
        each(B, env_major::CgAlpha{red_.data(), rz_.data(), flags, coef_.data()});
        each(Bn, env_major::Masked<env_major::CgUpdate>{
                     env_major::CgUpdate{n, coef_.data(), p_.data(), Ap_.data(), dx, r_.data()},
                     flags, n});
        each(Bb, env_major::Masked<env_major::EnvBlockApply>{
                     env_major::EnvBlockApply{nblock_, n, block_row_.data(), inv_.data(), r_.data(),
                                              z_.data()},
                     flags, nblock_});
        X::env_reduce_to(B, n, env_major::Dots{n, r_.data(), r_.data(), r_.data(), z_.data()},
                         red_);
        each(B, env_major::CgBeta{red_.data(), stop_.data(), flags, ok.data(), rz_.data(),
                                  coef_.data(), iters_.data()});
        if ((it % X::kPcgCheckEvery == 0 || it == max_iter) && running(flags) == 0) break;
        each(Bn, env_major::Masked<env_major::CgDirection>{
                     env_major::CgDirection{n, coef_.data(), z_.data(), p_.data()}, flags, n});
      }
      // environments still running at the cap did not converge: their ok stays 0
      std::vector<int> iters(B);
      X::download_at(iters_, 0, iters.data(), iters.size());
      for (int e = 0; e < B; ++e)
        iterations += iters[e];
    }
    X::download_at(ok, 0, ok_h.data(), ok_h.size());
  }

 private:
  // the batch's loops (env_major::each_heavy)
  template <class F>
  static void each(long n, const F& f) {
    env_major::each_heavy<X>(n, f);
  }

  // how many environments CG still runs on (a host read)
  long running(const unsigned char* run) {
    Red4 c;
    X::env_reduce(1, nenv_, env_major::CountSet{run}, &c, count_);
    return long(c.s0);
  }

  // CG's start for the active environments (their values gathered): block inverses, x = 0,
  // r = f, z = P^-1 r, p = z; `run` the environments that iterate (false when none does). A
  // diagonal block that is not positive definite keeps an environment out (the caller falls
  // back), as does a zero right-hand side (dx = 0, solved).
  bool start(
      const unsigned char* active, const Real* f, Real* dx, unsigned char* ok, unsigned char* run) {
    const int B = nenv_, n = n_;
    const long Bn = long(B) * n, Bb = long(B) * nblock_;
    each(Bb, env_major::Masked<env_major::EnvBlockSetup>{
                 env_major::EnvBlockSetup{nblock_, nnz_, row_ptr_.data(), col_.data(), val_.data(),
                                          block_row_.data(), inv_.data(), block_ok_.data()},
                 active, nblock_});
    X::env_reduce_to(B, nblock_, env_major::CountZeros{nblock_, block_ok_.data()}, bad_);
    each(Bn,
         env_major::Masked<env_major::CgStart>{env_major::CgStart{f, dx, r_.data()}, active, n});
    each(Bb, env_major::Masked<env_major::EnvBlockApply>{
                 env_major::EnvBlockApply{nblock_, n, block_row_.data(), inv_.data(), r_.data(),
                                          z_.data()},
                 active, nblock_});
    X::env_reduce_to(B, n, env_major::Dots{n, f, f, r_.data(), z_.data()}, red_);
    each(B, env_major::CgInit{kKrylovRelTol, tol_set_ ? tol_.data() : nullptr, active, bad_.data(),
                              red_.data(), run, ok, rz_.data(), stop_.data(), iters_.data()});
    if (running(run) == 0) return false;
    each(Bn, env_major::Masked<env_major::Copy>{env_major::Copy{p_.data(), z_.data()}, run, n});
    return true;
  }

  int nenv_ = 0, n_ = 0, nnz_ = 0;
  long nblock_ = 0;
  Buffer<int> row_ptr_, col_, block_row_;
  Buffer<Real> val_, inv_, r_, z_, p_, Ap_;
  Buffer<unsigned char> block_ok_;
  // CG's per-environment scalars: r.z, the stopping threshold, alpha or beta, iterations taken;
  // per-environment reductions and the running count
  Buffer<Real> rz_, stop_, coef_;
  Buffer<Real> tol_;  // set_rel_tol's, where tol_set_
  bool tol_set_ = false;
  Buffer<int> iters_;
  Buffer<Red4> red_, bad_, count_;
};

}  // namespace slender
