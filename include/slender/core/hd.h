#pragma once

// SLENDER_HD marks functions that run on both the host and the device. Under nvcc they become
// __host__ __device__; in a host-only build the macro is empty.
#if defined(__CUDACC__)
#define SLENDER_HD __host__ __device__
#define SLENDER_DEVICE_CODE 1
#else
#define SLENDER_HD
#endif

// SLENDER_INLINE marks a small helper of a hot stencil that the compiler must inline wherever
// it is called (GCC and Clang otherwise stop inlining once a translation unit grows, and an
// outlined helper costs a stencil a few percent); nvcc takes the same attribute.
#if defined(__GNUC__) || defined(__clang__)
#define SLENDER_INLINE inline __attribute__((always_inline))
#else
#define SLENDER_INLINE inline
#endif

// SLENDER_ENTRY_INLINE marks the entry functions a large stencil's Hessian is built from, one
// call an entry (`fill_by_entry`). The device and the library's GCC build
// (SLENDER_UNROLL_STENCILS) must inline them; elsewhere (clang, the test suites, the sanitized
// build) they are plain `inline`: forcing them there costs compile time and gains nothing.
#if defined(__CUDACC__) || \
    (defined(SLENDER_UNROLL_STENCILS) && defined(__GNUC__) && !defined(__clang__))
#define SLENDER_ENTRY_INLINE inline __attribute__((always_inline))
#else
#define SLENDER_ENTRY_INLINE inline
#endif

// SLENDER_ROLL_ON_DEVICE before a loop keeps it rolled in device code (`#pragma unroll 1`): a
// large stencil's parts, indexed by the loop's counter, then stay in the thread's local memory
// where an unrolled loop would hold them in registers.
// SLENDER_OUTLINED_ON_DEVICE keeps a function out of line in CUDA code (`__noinline__`): a call
// bounds the registers live across it, where a large stencil's phases inlined into one kernel
// would hold all of their values at once.
// On the host, where the library asks for it (SLENDER_UNROLL_STENCILS: libslender_host's GCC
// build, whose engine runs the stencils), GCC unrolls such a loop whole (up to 16 iterations, so
// that the branches on its counter fold) and inlines such a function (a call costs a stencil a
// tenth of its time). Elsewhere (the suites, clang's sanitized build) the compiler decides: the
// forced form would double a sanitized translation unit's compile time.
#if defined(__CUDA_ARCH__)
#define SLENDER_ROLL_ON_DEVICE _Pragma("unroll 1")
#elif defined(SLENDER_UNROLL_STENCILS) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__CUDACC__)
#define SLENDER_ROLL_ON_DEVICE _Pragma("GCC unroll 16")
#else
#define SLENDER_ROLL_ON_DEVICE
#endif
#if defined(__CUDACC__)
#define SLENDER_OUTLINED_ON_DEVICE __noinline__
#elif defined(SLENDER_UNROLL_STENCILS) && defined(__GNUC__) && !defined(__clang__)
#define SLENDER_OUTLINED_ON_DEVICE __attribute__((always_inline))
#else
#define SLENDER_OUTLINED_ON_DEVICE
#endif

#include <cmath>

namespace slender {

using Real = double;

// Stencils call the C math functions by their global names (::sqrt, ::atan2, ...), which
// nvcc provides in device code too; no wrappers of the same names here, so that user code with
// `using namespace slender` sees no ambiguity.
SLENDER_HD inline Real clamp(Real x, Real lo, Real hi) { return x < lo ? lo : (x > hi ? hi : x); }
SLENDER_HD inline bool is_finite(Real x) { return x - x == 0; }

constexpr Real kPi = 3.14159265358979323846;

/// the first index of the sorted key[0, n) at or above `bound` (bisection, host and device)
template <class K>
SLENDER_HD long sorted_lower_bound(const K* key, long n, K bound) {
  long lo = 0, hi = n;
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (key[mid] < bound) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace slender
