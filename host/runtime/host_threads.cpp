// The host's thread pool (include/slender/core/parallel_for.h): the threads of the host's loops.
//
// Why not OpenMP teams: an OpenMP parallel loop ends at a barrier that every thread of the team
// must reach, so the caller waits for a thread that the operating system has not scheduled
// (another job holds its core) for up to a time slice; and libgomp's idle threads spin for
// milliseconds after each region (GOMP_SPINCOUNT), fixed when the runtime starts, which on a
// busy machine takes the core from the thread with the work. Measured on 2 cores with another job
// (bench/results/2026-11-28-threads-under-load-cpu-xeon-2c.md): S1 several times slower on 2
// threads than on 1. Here the caller works through the chunks itself and hands the rest out on
// demand: a pool thread joins when it runs, takes chunks while there are any, and the caller
// waits only for the chunks already taken. Idle pool threads spin for a few microseconds (back to
// back loops), then sleep on a condition variable.

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "slender/core/parallel_for.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SLENDER_CPU_RELAX() _mm_pause()
#else
#define SLENDER_CPU_RELAX() std::this_thread::yield()
#endif

namespace slender {

namespace {

constexpr int kMaxThreads = 1024;
// how long an idle thread (a pool thread between loops, the caller waiting for a chunk taken by
// another thread) spins before it sleeps
constexpr auto kSpin = std::chrono::microseconds(20);

std::atomic<int> g_threads_set{0};  // set_host_threads; 0: the default
std::atomic<long> g_pool_loops{0};  // loops handed to pool threads
std::atomic<long> g_backoffs{0};    // loops that did not pay (see Pool::run)
std::atomic<int> g_resets{0};       // set_host_threads calls: a new setting, measured afresh

// SLENDER_THREADS, read once: 0 where unset or empty
int env_threads() {
  static const int n = [] {
    const char* s = std::getenv("SLENDER_THREADS");
    if (!s || !*s) return 0;
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (*end != '\0' || v < 0 || v > kMaxThreads)
      throw std::invalid_argument(std::string("SLENDER_THREADS: '") + s +
                                  "' is not a thread count (a whole number from 1 to " +
                                  std::to_string(kMaxThreads) + ", or 0 for the default)");
    return int(v);
  }();
  return n;
}

[[maybe_unused]] int processors() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, int(std::thread::hardware_concurrency()));
}

// one loop's work, shared by the threads that take part (a thread that joins late holds it after
// the caller has returned, finds no chunk and lets go)
struct Job {
  detail::ChunkBody body = nullptr;
  const void* ctx = nullptr;
  long n = 0, chunk = 1, nchunk = 0;
  std::atomic<long> next{0};  // the next chunk to take
  std::atomic<long> done{0};  // chunks finished
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // the first exception (written by the thread that set `failed`)
  int seats = 0;             // pool threads that may still join (under Pool::m)

  // take and run chunks while there are any (counted in *ran); true if this thread finished the
  // last one
  bool work(int slot, long* ran = nullptr) {
    bool last = false;
    for (;;) {
      const long c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= nchunk) return last;
      if (ran) ++*ran;
      if (!failed.load(std::memory_order_relaxed)) {
        try {
          const long b = c * chunk;
          body(ctx, b, std::min(n, b + chunk), slot);
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == nchunk) last = true;
    }
  }
};

class Pool {
 public:
  void run(long n, long chunk, int threads, detail::ChunkBody body, const void* ctx) {
    // one loop at a time: a loop called from inside one, or from another thread while one runs,
    // runs on its caller alone
    bool idle = false;
    if (!busy_.compare_exchange_strong(idle, true, std::memory_order_acquire)) {
      body(ctx, 0, n, 0);
      return;
    }
    struct Release {
      std::atomic<bool>& b;
      ~Release() { b.store(false, std::memory_order_release); }
    } release{busy_};
    // (the members below are the busy holder's alone)
    if (const int r = g_resets.load(std::memory_order_relaxed); r != resets_seen_) {
      resets_seen_ = r;
      skip_ = backoff_ = 0;
    }
    if (skip_ > 0) {  // recent loops did not pay: on the caller alone for a while
      --skip_;
      body(ctx, 0, n, 0);
      return;
    }

    auto job = std::make_shared<Job>();
    job->body = body;
    job->ctx = ctx;
    job->n = n;
    job->chunk = chunk;
    job->nchunk = (n + chunk - 1) / chunk;
    const int helpers = int(std::min<long>(threads - 1, job->nchunk - 1));
    if (helpers > 0) {
      g_pool_loops.fetch_add(1, std::memory_order_relaxed);
      grow(helpers);
      {
        std::lock_guard<std::mutex> lk(m_);
        job->seats = helpers;
        job_ = job;
        gen_.fetch_add(1, std::memory_order_release);
      }
      cv_work_.notify_all();
    }
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    long mine = 0;
    job->work(0, &mine);
    const auto t1 = Clock::now();
    if (helpers > 0) {
      {
        // no pool thread joins from now on: they would find no chunk
        std::lock_guard<std::mutex> lk(m_);
        job->seats = 0;
        job_.reset();
      }
      // wait for the chunks other threads took
      const auto start = std::chrono::steady_clock::now();
      for (int k = 0; job->done.load(std::memory_order_acquire) < job->nchunk; ++k) {
        SLENDER_CPU_RELAX();
        if ((k & 63) == 63 && std::chrono::steady_clock::now() - start > kSpin) {
          std::unique_lock<std::mutex> lk(m_);
          cv_done_.wait(lk,
                        [&] { return job->done.load(std::memory_order_acquire) >= job->nchunk; });
          break;
        }
      }
      // Did the loop pay? The caller alone would have taken about its own chunks' time per
      // chunk times all the chunks. A loop that took longer (a pool thread the operating system
      // stopped while it held a chunk: other jobs want the cores) sends the next loops to the
      // caller alone, 16 of them and twice as many each time it happens again (up to 4,096),
      // then the pool is tried again; a loop that paid halves that count.
      if (mine > 0 && mine < job->nchunk) {
        const double alone =
            std::chrono::duration<double>(t1 - t0).count() * double(job->nchunk) / double(mine);
        if (std::chrono::duration<double>(Clock::now() - t0).count() > alone) {
          backoff_ = std::min(kMaxBackoff, std::max(kMinBackoff, 2 * backoff_));
          skip_ = backoff_;
          g_backoffs.fetch_add(1, std::memory_order_relaxed);
        } else {
          backoff_ /= 2;
        }
      }
    }
    if (job->error) std::rethrow_exception(job->error);
  }

  // the CPU time the pool's threads have taken, in seconds
  double cpu_seconds() {
    std::lock_guard<std::mutex> lk(m_);
    double s = 0;
    for (pthread_t t : threads_) {
      clockid_t c;
      timespec ts{};
      if (pthread_getcpuclockid(t, &c) == 0 && clock_gettime(c, &ts) == 0)
        s += double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    }
    return s;
  }

 private:
  // start pool threads up to n (never fewer: they sleep when not needed)
  void grow(int n) {
    std::lock_guard<std::mutex> lk(m_);
    while (int(threads_.size()) < n) {
      const int slot = int(threads_.size()) + 1;
      std::thread t([this, slot] { loop(slot); });
      pthread_setname_np(t.native_handle(), "slender-pool");
      threads_.push_back(t.native_handle());
      t.detach();  // the pool lives as long as the process (so does the thread's handle)
    }
  }

  void loop(int slot) {
    std::uint64_t seen = gen_.load(std::memory_order_acquire);
    for (;;) {
      // a few microseconds of spinning catch loops that follow each other closely
      const auto start = std::chrono::steady_clock::now();
      for (int k = 0; gen_.load(std::memory_order_acquire) == seen; ++k) {
        SLENDER_CPU_RELAX();
        if ((k & 63) == 63 && std::chrono::steady_clock::now() - start > kSpin) break;
      }
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_work_.wait(lk, [&] { return gen_.load(std::memory_order_relaxed) != seen; });
        seen = gen_.load(std::memory_order_relaxed);
        if (job_ && job_->seats > 0) {
          --job_->seats;
          job = job_;
        }
      }
      if (job && job->work(slot)) {
        { std::lock_guard<std::mutex> lk(m_); }  // (the caller is waiting or checks `done`)
        cv_done_.notify_all();
      }
    }
  }

  static constexpr int kMinBackoff = 16, kMaxBackoff = 4096;
  std::atomic<bool> busy_{false};
  int skip_ = 0, backoff_ = 0, resets_seen_ = 0;
  std::atomic<std::uint64_t> gen_{0};  // counts the loops handed to the pool
  std::mutex m_;
  std::condition_variable cv_work_, cv_done_;
  std::shared_ptr<Job> job_;  // the loop pool threads may join (under m_)
  std::vector<pthread_t> threads_;
};

// the process's pool, never destroyed (its threads sleep until the process ends); a child of
// fork() has none of the parent's threads and starts a new pool
std::atomic<Pool*> g_pool{nullptr};
std::once_flag g_atfork;

Pool& pool() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  if (p) return *p;
  std::call_once(g_atfork, [] {
    pthread_atfork(nullptr, nullptr, [] { g_pool.store(nullptr, std::memory_order_release); });
  });
  auto* fresh = new Pool;
  Pool* expected = nullptr;
  if (g_pool.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *expected;
}

}  // namespace

int host_threads() {
  if (const int n = g_threads_set.load(std::memory_order_relaxed); n > 0) return n;
  if (const int n = env_threads(); n > 0) return n;
#if defined(_OPENMP)
  return std::max(1, std::min(kMaxThreads, omp_get_max_threads()));
#else
  // without OpenMP: OMP_NUM_THREADS's first number still sets the default
  static const int n = [] {
    if (const char* s = std::getenv("OMP_NUM_THREADS")) {
      const long v = std::strtol(s, nullptr, 10);
      if (v >= 1) return int(std::min<long>(kMaxThreads, v));
    }
    return std::min(kMaxThreads, processors());
  }();
  return n;
#endif
}

void set_host_threads(int n) {
  if (n < 0 || n > kMaxThreads)
    throw std::invalid_argument("set_host_threads: " + std::to_string(n) +
                                " is not a thread count (1 to " + std::to_string(kMaxThreads) +
                                ", or 0 for the default)");
  g_threads_set.store(n, std::memory_order_relaxed);
  g_resets.fetch_add(1, std::memory_order_relaxed);
}

int host_threads_for(long n, long grain) {
  const long by_work = n / std::max(1L, grain);
  return int(std::max(1L, std::min<long>(host_threads(), by_work)));
}

namespace detail {

long host_pool_loops() { return g_pool_loops.load(std::memory_order_relaxed); }

long host_pool_backoffs() { return g_backoffs.load(std::memory_order_relaxed); }

double host_pool_cpu_seconds() { return pool().cpu_seconds(); }

long host_chunk(long n, long grain, int threads) {
  const long per = (n + 8L * threads - 1) / (8L * threads);
  return std::max({1L, grain / 8, per});
}

void run_host_chunks(long n, long chunk, int threads, ChunkBody body, const void* ctx) {
  if (n <= 0) return;
  if (threads <= 1 || chunk >= n) {
    body(ctx, 0, n, 0);
    return;
  }
  pool().run(n, std::max(1L, chunk), threads, body, ctx);
}

}  // namespace detail

}  // namespace slender
