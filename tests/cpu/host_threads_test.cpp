// The host's threads (include/slender/core/parallel_for.h, host/runtime/host_threads.cpp): the
// thread count chosen from the work, a small system on one thread, every item run once whatever
// the threads, the same bits on one and on two threads, and idle pool threads that sleep (no
// long active spin). Speed under load is measured in bench/threads_under_load.sh.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "slender/builder.h"
#include "slender/core/parallel_for.h"
#include "slender/scene.h"
#include "slender/simulator.h"
#include "slender/state.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// sets the host's threads for a scope, then back to the default
struct Threads {
  explicit Threads(int n) { set_host_threads(n); }
  ~Threads() { set_host_threads(0); }
};

TEST(HostThreads, CountChosenByTheWork) {
  const Threads two(2);
  EXPECT_EQ(host_threads(), 2);
  // one thread per grain of items: below two grains, the caller alone
  EXPECT_EQ(host_threads_for(0, kParallelGrain), 1);
  EXPECT_EQ(host_threads_for(2 * kParallelGrain - 1, kParallelGrain), 1);
  EXPECT_EQ(host_threads_for(2 * kParallelGrain, kParallelGrain), 2);
  EXPECT_EQ(host_threads_for(100 * kParallelGrainHeavy, kParallelGrainHeavy), 2);
  {
    const Threads one(1);
    EXPECT_EQ(host_threads_for(100 * kParallelGrain, kParallelGrain), 1);
  }
  EXPECT_THROW(set_host_threads(-1), std::invalid_argument);
}

TEST(HostThreads, EveryItemOnceAndExceptionsReachTheCaller) {
  const Threads two(2);
  const long n = 40 * kParallelGrainHeavy + 7;  // not a whole number of chunks
  std::vector<int> hits(size_t(n), 0);
  const long before = detail::host_pool_loops();
  parallel_for_host(
      n, [&](long i) { ++hits[size_t(i)]; }, kParallelGrainHeavy);
  EXPECT_EQ(detail::host_pool_loops(), before + 1);  // the pool ran it
  for (long i = 0; i < n; ++i)
    ASSERT_EQ(hits[size_t(i)], 1) << "item " << i;
  // a loop inside a loop runs on its caller, and completes
  std::atomic<long> inner{0};
  parallel_for_host(
      64,
      [&](long) {
        parallel_for_host(
            64, [&](long) { ++inner; }, 1);
      },
      1);
  EXPECT_EQ(inner.load(), 64 * 64);
  // the first exception of a chunk is rethrown on the caller, after every chunk has ended
  EXPECT_THROW(parallel_for_host(
                   n,
                   [&](long i) {
                     if (i == n - 1) throw std::runtime_error("item");
                   },
                   kParallelGrainHeavy),
               std::runtime_error);
  // and the pool still works
  std::atomic<long> sum{0};
  parallel_for_host(
      n, [&](long i) { sum += i; }, kParallelGrainHeavy);
  EXPECT_EQ(sum.load(), n * (n - 1) / 2);
}

TEST(HostThreads, IdlePoolThreadsSleep) {
  const Threads two(2);
  std::atomic<long> sum{0};
  parallel_for_host(
      1L << 16, [&](long i) { sum += i & 1; }, 1024);
  ASSERT_EQ(sum.load(), 1L << 15);
  // the pool threads spin for microseconds after a loop, then sleep: over 50 ms of the caller's
  // sleep they take far less than 5 ms of CPU (an OpenMP team waiting actively, as libgomp's
  // does by default, takes milliseconds after each loop on each of its threads)
  const double cpu0 = detail::host_pool_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(detail::host_pool_cpu_seconds() - cpu0, 5e-3);
}

TEST(HostThreads, ALoopThatDidNotPaySendsTheNextToTheCaller) {
  const Threads two(2);  // (a new setting: no back-off from earlier loops)
  // a pool thread's chunks take 50 ms, the caller's 1 ms: the loop ends later than the caller
  // alone would have (16 chunks, 16 to 32 ms)
  std::atomic<int> helped{0};
  const long backoffs = detail::host_pool_backoffs();
  parallel_chunks_host(
      16,
      [&](long, long, int slot) {
        if (slot != 0) ++helped;
        std::this_thread::sleep_for(std::chrono::milliseconds(slot == 0 ? 1 : 50));
      },
      1, 2);
  if (helped.load() == 0) GTEST_SKIP() << "the pool thread did not join (a loaded machine)";
  EXPECT_EQ(detail::host_pool_backoffs(), backoffs + 1);
  // the next loop runs on the caller alone
  const long loops = detail::host_pool_loops();
  std::atomic<long> sum{0};
  parallel_for_host(
      64, [&](long i) { sum += i; }, 1);
  EXPECT_EQ(sum.load(), 64 * 63 / 2);
  EXPECT_EQ(detail::host_pool_loops(), loops);
}

std::shared_ptr<const Model> load(const std::string& path) {
  SceneSpec sc = read_scene_file(path);
  sc.backend = BackendKind::kCpu;
  return build_model(sc);
}

TEST(HostThreads, SmallSystemOpensNoParallelLoop) {
  // S1, the 201-node cantilever (803 DOF): every loop of its steps runs on the calling thread
  const auto model =
      load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s1_cantilever_e1e5.json");
  const Threads two(2);
  Simulator sim(model);
  const long before = detail::host_pool_loops();
  for (int k = 0; k < 3; ++k)
    ASSERT_TRUE(sim.step().ok());
  EXPECT_EQ(detail::host_pool_loops(), before);
}

TEST(HostThreads, SameBitsOnOneAndTwoThreads) {
  // a rod of 1,201 nodes: its stretching and bend-twist loops (1,200 and 1,199 stencils, one
  // thread per 512) run on two threads
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 1201, mat, SceneBuilder::circle(0.005));
  b.fix_edge(r, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  const auto model = build_model(b.spec());
  std::vector<std::vector<Real>> q;
  for (int threads : {1, 2}) {
    const Threads t(threads);
    Simulator sim(model);
    const long before = detail::host_pool_loops();
    for (int k = 0; k < 2; ++k)
      ASSERT_TRUE(sim.step().ok());
    if (threads == 1) {
      EXPECT_EQ(detail::host_pool_loops(), before);
    } else {
      EXPECT_GT(detail::host_pool_loops(), before);
    }
    q.push_back(sim.state().q);
  }
  EXPECT_EQ(q[0], q[1]);
  EXPECT_NE(q[0], initial_state(*model).q);  // (the rod moved)
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
