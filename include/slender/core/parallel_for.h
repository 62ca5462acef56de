#pragma once

// The loop layer: a functor body written once, run by a threaded host loop here and by a CUDA
// kernel in the CUDA backend (kernels/launch.cuh), so that CI tests the code the GPU runs.
//
// Host threads (host/runtime/host_threads.cpp): the library's own pool, not OpenMP teams. A loop
// takes one thread per `grain` items, up to host_threads(), so a small system runs on the
// calling thread alone and opens no parallel region. The caller always works too, and the items
// are handed out in chunks as threads ask for them: a pool thread that the operating system has
// not scheduled yet (another job holds its core) holds no work, and the caller does not wait for
// it. Idle pool threads sleep after a few microseconds (no long active spin, which on a busy
// machine steals the core from the caller). A loop that took longer than its caller alone would
// have (a pool thread stopped while it held a chunk) sends the next loops to the caller alone
// for a while (16 loops, doubling while it happens again, up to 4,096). Every item writes its own
// outputs, so the results are the same bits whatever the number of threads.

namespace slender {

/// Where a parallel_for runs.
enum class Exec { kHost, kCuda };

/// Cheap work items (a few flops: assembly sums, per-DOF terms): one thread per this many.
/// A parallel region costs microseconds, and far more on a loaded machine.
constexpr long kParallelGrain = 1L << 15;
/// Items of about 0.1 microsecond (a stretching stencil).
constexpr long kParallelGrainMedium = 4096;
/// Items of about a microsecond (a bend-twist Hessian).
constexpr long kParallelGrainHeavy = 512;

/// The most threads the host's loops use (>= 1; the caller's included): set_host_threads(n) if
/// set, else the environment variable SLENDER_THREADS if set, else OpenMP's thread count
/// (OMP_NUM_THREADS, or the processors this process may run on). Throws std::invalid_argument
/// naming SLENDER_THREADS if it is not a whole number from 1 to 1024.
int host_threads();
/// At most n threads in the host's loops from now on (n >= 1); n = 0: back to the default
/// (SLENDER_THREADS, OpenMP's). Also caps the threads of CHOLMOD's OpenMP loops and of the
/// BLAS under it (OpenBLAS) when they run. Throws std::invalid_argument for n < 0.
void set_host_threads(int n);

/// The threads a loop of n items with this grain uses: min(host_threads(), n / grain), at least 1
int host_threads_for(long n, long grain);

namespace detail {
/// a chunk of a loop: items [begin, end); slot: 0 (the caller) to threads - 1, distinct among
/// the chunks that run at the same time
using ChunkBody = void (*)(const void* ctx, long begin, long end, int slot);
/// body over [0, n) in chunks of `chunk` items on at most `threads` threads, the caller one of
/// them; returns when every chunk has run, rethrowing the first exception a chunk threw. Runs
/// on the caller alone when called from inside another such loop or while another thread's
/// loop holds the pool.
void run_host_chunks(long n, long chunk, int threads, ChunkBody body, const void* ctx);
/// the chunk size for n items on `threads` threads: about 8 chunks a thread, at least grain / 8
long host_chunk(long n, long grain, int threads);
/// the loops handed to the pool's threads so far, in this process (for tests and benches)
long host_pool_loops();
/// the loops on the pool that took longer than their caller alone would have, so far (each sends
/// the next loops to their callers alone for a while; for tests and benches)
long host_pool_backoffs();
/// the CPU time the pool's threads have taken so far, in seconds (for tests and benches)
double host_pool_cpu_seconds();
}  // namespace detail

/// Run f(i) for i in [0, n) on the host, on host_threads_for(n, grain) threads.
template <class F>
void parallel_for_host(long n, const F& f, long grain = kParallelGrain) {
  const int threads = n >= 2 * grain ? host_threads_for(n, grain) : 1;
  if (threads <= 1) {
    for (long i = 0; i < n; ++i)
      f(i);
    return;
  }
  detail::run_host_chunks(
      n, detail::host_chunk(n, grain, threads), threads,
      [](const void* ctx, long begin, long end, int) {
        const F& g = *static_cast<const F*>(ctx);
        for (long i = begin; i < end; ++i)
          g(i);
      },
      &f);
}

/// Run f(begin, end, slot) over [0, n) in chunks on the host (threads as parallel_for_host, and
/// at most max_threads; slot: 0 to max_threads - 1, distinct among the chunks running at the
/// same time, for per-thread scratch)
template <class F>
void parallel_chunks_host(long n, const F& f, long grain, int max_threads) {
  int threads = n >= 2 * grain ? host_threads_for(n, grain) : 1;
  if (threads > max_threads) threads = max_threads;
  if (threads <= 1) {
    if (n > 0) f(0L, n, 0);
    return;
  }
  detail::run_host_chunks(
      n, detail::host_chunk(n, grain, threads), threads,
      [](const void* ctx, long begin, long end, int slot) {
        (*static_cast<const F*>(ctx))(begin, end, slot);
      },
      &f);
}

}  // namespace slender
