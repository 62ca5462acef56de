#pragma once

// The Krylov solves of the stepper (engine/stepper.h) over an executor X: preconditioned CG for
// symmetric Jacobians and preconditioned BiCGSTAB for the others, one system at a time. The
// caller gives the matrix and the preconditioner as callables (y = A x, out = P^-1 in) on X's
// memory. The scalars of the iteration stay in X's memory (reduction slots); the host reads the
// state every kKrylovCheck iterations, so that a device solve syncs rarely. The tolerances and
// the iteration cap are those of the CPU's (core/pcg.h: kKrylovRelTol, krylov_max_iterations).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "slender/core/hd.h"
#include "slender/core/pcg.h"
#include "slender/core/reduce4.h"
#include "slender/core/types.h"

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

// p = z + beta p with beta = rz_new / rz_old (nothing once converged)
struct PcgUpdateP {
  const Red4* rz_new;
  const Red4* rz_old;
  const Red4* done;
  const Real* z;
  Real* p;
  SLENDER_HD void operator()(long i) const {
    if (done->s0 != 0) return;
    const Real beta = rz_old->s0 != 0 ? rz_new->s0 / rz_old->s0 : Real(0);
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
                 bb.s0, kKrylovRelTol * kKrylovRelTol * bb.s0, h[1].s0, h[1].s1, h[2].s0, h[0].s1,
                 rv.s0, ts.s0, ts.s1);
  }

  // preconditioned BiCGSTAB from x = 0 to |b - J x| <= kKrylovRelTol |b|, for non-symmetric
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

  // preconditioned CG from x = 0 to |b - A x| <= kKrylovRelTol |b| (as the CPU's); the step
  // length and direction update read their scalars from device memory (krylov_check reads the
  // state)
  template <class Apply, class Precondition>
  bool cg(
      int n, const Real* b, Real* x, const Apply& apply_matrix, const Precondition& precondition) {
    resize(n);
    const int max_iter = krylov_max_iterations(n);
    Real stop = 0;
    const Krylov start = krylov_start(n, b, x, stop);
    if (start != Krylov::kGoOn) return start == Krylov::kConverged;
    X::copy(pr_.data(), b, size_t(n));
    precondition(pr_.data(), pz_.data());
    X::copy(pp_.data(), pz_.data(), size_t(n));
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
      X::for_each(n,
                  PcgUpdateP{slot(rz_next), slot(rz_cur), slot(kSlotDone), pz_.data(), pp_.data()});
      std::swap(rz_cur, rz_next);
    }
    return false;
  }

 private:
  enum class Krylov { kGoOn, kConverged, kFailed };
  // the host reads the iteration's state every kKrylovCheck iterations (and at the last)
  static constexpr int kKrylovCheck = 8;

  // x = 0, the flags cleared and, in `stop`, the bound on |r|^2 (kKrylovRelTol^2 |b|^2);
  // kConverged when b = 0 (x = 0 solves it), kFailed when b is not finite
  Krylov krylov_start(int n, const Real* b, Real* x, Real& stop) {
    X::reduce4(n, DotMax{b, b}, partial_.data(), slot(kSlotBB));
    const Real bb = read_slot(kSlotBB).s0;
    X::fill_zero(x, size_t(n));
    if (bb == 0) return Krylov::kConverged;
    if (!std::isfinite(bb)) return Krylov::kFailed;
    stop = kKrylovRelTol * kKrylovRelTol * bb;
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
  Buffer<Red4> partial_, slots_;
  Buffer<Real> pr_, pz_, pp_, pAp_;
  Buffer<Real> rhat_, bs_, bt_;  // BiCGSTAB's shadow residual, s and t
};

}  // namespace stepper

}  // namespace slender
