#pragma once

// Loops over (environment, item) pairs with a mask of environments: the engine's loops with
// several environments (engine/engine.h, batch_solve.h, step_eval.h). Host and device code.
// The engine's functors over its environment-major arrays (each environment's copy of an array
// after the other's) live in namespace env_major, here and in the engine's headers.

#include <algorithm>
#include <type_traits>
#include <utility>

#include "slender/core/hd.h"
#include "slender/core/parallel_for.h"
#include "slender/core/types.h"

namespace slender {
namespace env_major {

/// dst = src, one index each
struct Copy {
  Real* dst;
  const Real* src;
  SLENDER_HD void operator()(long i) const { dst[i] = src[i]; }
};

/// f(i) for environments whose flag is set: i in [0, nenv * per_env)
template <class F>
struct Masked {
  F f;
  const unsigned char* active;  // (nenv)
  long per_env;
  SLENDER_HD void operator()(long i) const {
    if (active[i / per_env]) f(i);
  }
};

/// whether F has at(e, k), its item k of environment e without the division of f(i)
template <class F, class = void>
struct HasAt : std::false_type {};
template <class F>
struct HasAt<F, std::void_t<decltype(std::declval<const F&>().at(0L, 0L))>> : std::true_type {};

/// The host's form of Masked<F>: one environment per index, skipped whole when its flag is not
/// set, its items in order (by at(e, k) where F has it)
template <class F>
struct EnvItems {
  Masked<F> m;
  void operator()(long e) const {
    if (!m.active[e]) return;
    if constexpr (HasAt<F>::value) {
      for (long k = 0; k < m.per_env; ++k)
        m.f.at(e, k);
    } else {
      for (long i = e * m.per_env, end = i + m.per_env; i < end; ++i)
        m.f(i);
    }
  }
};

/// A masked loop over nenv x m.per_env items on X, threaded (on the host) from `grain` items:
/// on an executor with host memory a loop over environments (an inactive one costs one test,
/// and no item divides its index), elsewhere one flat loop that reads the flag per item. Each
/// item does the same arithmetic either way.
template <class X, class F>
void each_masked(long n, const Masked<F>& m, long grain) {
  if constexpr (X::kHostMemory) {
    const long nenv = m.per_env > 0 ? n / m.per_env : 0;
    if (nenv >= 4) {
      X::for_each(nenv, EnvItems<F>{m}, std::max(1L, grain / m.per_env));
      return;
    }
  }
  X::for_each(n, m, grain);
}

/// the vectorized batch's loops: X::for_each, threaded on the host from kParallelGrainHeavy
/// items; a Masked functor over its mask's items (each_masked)
template <class X, class F>
void each_heavy(long n, const F& f) {
  X::for_each(n, f, kParallelGrainHeavy);
}
template <class X, class F>
void each_heavy(long n, const Masked<F>& f) {
  each_masked<X>(n, f, kParallelGrainHeavy);
}

}  // namespace env_major
}  // namespace slender
