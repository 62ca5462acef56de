#pragma once

// The loop layer: a functor body written once, run by a threaded host loop here and by a CUDA
// kernel in the CUDA backend (kernels/launch.cuh), so that CI tests the code the GPU runs.

namespace slender {

/// Where a parallel_for runs.
enum class Exec { kHost, kCuda };

/// Cheap work items (a few flops: assembly sums, per-DOF terms) run on one thread below this
/// count: a parallel region costs microseconds, and far more on a loaded machine.
constexpr long kParallelGrain = 1L << 15;
/// Items of about 0.1 microsecond (a stretching stencil).
constexpr long kParallelGrainMedium = 4096;
/// Items of about a microsecond (a bend-twist Hessian).
constexpr long kParallelGrainHeavy = 512;

/// Run f(i) for i in [0, n) on the host, threaded with OpenMP when n >= grain.
template <class F>
void parallel_for_host(long n, const F& f, long grain = kParallelGrain) {
#if defined(_OPENMP)
  if (n >= grain) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      f(i);
    return;
  }
#else
  (void)grain;
#endif
  for (long i = 0; i < n; ++i)
    f(i);
}

}  // namespace slender
