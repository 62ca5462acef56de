#pragma once

// The loop layer: a functor body written once, run by a threaded host loop here and by a CUDA
// kernel in the CUDA backend (kernels/launch.cuh), so that CI tests the code the GPU runs.

namespace slender {

/// Where a parallel_for runs.
enum class Exec { kHost, kCuda };

/// Work items below this count run on one thread: thread start-up costs more than they do.
constexpr long kParallelGrain = 2048;

/// Run f(i) for i in [0, n) on the host, threaded with OpenMP when it pays.
template <class F>
void parallel_for_host(long n, const F& f) {
#if defined(_OPENMP)
  if (n >= kParallelGrain) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      f(i);
    return;
  }
#endif
  for (long i = 0; i < n; ++i)
    f(i);
}

}  // namespace slender
