// A batch's memory estimated before it is allocated (issue 49, case 2): the estimate
// (BatchedSimulator::memory_estimate, engine/memory_tally.h) against the heap's real growth for
// both engines and the solvers behind them (the snake: banded LU in both; a plate: the dense
// Cholesky and the PCG of the vectorized engine, CHOLMOD or LDLT per environment); a batch of 10^6
// environments refused at once, with the numbers, under a limit and under the machine's own;
// the available memory read from its limits (host/runtime/memory_budget.h).

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "physics_util.h"
#include "runtime/memory_budget.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/config.h"
#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/linear_solver.h"

// a sanitizer's runtime reserves terabytes of address space: no RLIMIT_AS test under it
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLENDER_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SLENDER_TEST_SANITIZED 1
#endif
#endif

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::shared_ptr<const Model> snake() {
  return build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
}

// the bytes the heap hands out now (every arena)
double heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return double(mi.uordblks) + double(mi.hblkhd);
}

// whether mallinfo2 sees this process's allocations (a sanitizer's allocator replaces malloc)
bool heap_measurable() {
  const double h0 = heap_in_use();
  std::vector<char> v(size_t(8) << 20, 1);
  return heap_in_use() - h0 >= double(v.size());
}

// the heap's growth [bytes] from before the batch to a batch in use: built, every
// environment's parameters set, actions given, two steps, every observation read
double heap_growth(const std::shared_ptr<const Model>& m,
                   int nenv,
                   BatchEngine engine,
                   LinearSolverKind solver) {
  const double h0 = heap_in_use();
  BatchedSimulator b(m, nenv, m->scene.integrator, solver, engine);
  for (int e = 0; e < nenv; ++e) {
    EnvParams p;
    p.youngs_scale = 1 + 0.001 * e;
    b.set_params(e, p);
  }
  std::vector<Real> f(size_t(nenv) * 3 * m->nnode, 0.0);
  b.set_external_forces(f.data());
  if (m->nbend > 0) {
    std::vector<Real> k(size_t(nenv) * 2 * m->nbend, 0.01);
    b.set_natural_curvature(k.data());
  }
  for (int i = 0; i < 2; ++i)
    b.step();
  std::vector<Real> x(size_t(nenv) * 3 * m->nnode);
  b.positions(x.data());
  b.velocities(x.data());
  std::vector<Real> k(size_t(nenv) * 3 * m->nbend);
  b.curvatures(k.data());
  return heap_in_use() - h0;
}

// The estimate against the heap's growth, for the batch as a whole and per environment (the
// growth's slope from B0 to B1 environments). Tolerance: the estimate within 0.5x to 2x of the
// measured (the issue's). It counts what a batch in use allocates, some of which this use
// leaves unallocated (fixed targets, held DOFs, strains of other kinds, a pivoting fallback),
// and sizes the sparse factor from a symbolic Cholesky in AMD order, which CHOLMOD's supernodes
// (padding) and its own ordering move by some tens of percent; a dropped array of a size that
// matters (the Hessian pool, a band, a factor) would leave it far below.
TEST(BatchMemory, EstimateMatchesTheHeapsGrowth) {
  if (!heap_measurable()) GTEST_SKIP() << "mallinfo2 does not see this allocator";
  set_host_threads(1);  // (every allocation on this thread, the same at every run)
  struct Case {
    const char* name;
    std::shared_ptr<const Model> model;
    BatchEngine engine;
    int b0, b1;
    LinearSolverKind solver = LinearSolverKind::kAuto;
  };
  const auto sn = snake(), pl = test::clamped_plate(ShellBending::kHinge);
  const Case cases[] = {
      {"snake, vectorized (banded)", sn, BatchEngine::kVectorized, 32, 96},
      {"snake, per-environment (banded)", sn, BatchEngine::kPerEnvironment, 16, 48},
      {"plate, vectorized (dense)", pl, BatchEngine::kVectorized, 32, 96},
      {"plate, per-environment (sparse)", pl, BatchEngine::kPerEnvironment, 8, 24},
      {"plate, vectorized (pcg)", pl, BatchEngine::kVectorized, 32, 96, LinearSolverKind::kPcg}};
  for (const Case& c : cases) {
    const Model& m = *c.model;
    const BatchMemory e0 =
        BatchedSimulator::memory_estimate(m, c.b0, m.scene.integrator, c.solver, c.engine);
    const BatchMemory e1 =
        BatchedSimulator::memory_estimate(m, c.b1, m.scene.integrator, c.solver, c.engine);
    const double g0 = heap_growth(c.model, c.b0, c.engine, c.solver);
    const double g1 = heap_growth(c.model, c.b1, c.engine, c.solver);
    const double slope = (g1 - g0) / (c.b1 - c.b0);
    std::printf(
        "%s: %d environments estimated %.0f kB, measured %.0f kB (%.2fx); per environment "
        "%.1f kB, measured %.1f kB (%.2fx)\n",
        c.name, c.b1, e1.host(c.b1) / 1e3, g1 / 1e3, e1.host(c.b1) / g1, e1.host_per_env / 1e3,
        slope / 1e3, e1.host_per_env / slope);
    EXPECT_EQ(e0.host_per_env, e1.host_per_env) << c.name;
    EXPECT_GE(e1.host(c.b1), 0.5 * g1) << c.name;
    EXPECT_LE(e1.host(c.b1), 2.0 * g1) << c.name;
    EXPECT_GE(e1.host_per_env, 0.5 * slope) << c.name;
    EXPECT_LE(e1.host_per_env, 2.0 * slope) << c.name;
  }
  set_host_threads(0);
}

// The case: 10^6 environments under an 8 GiB limit were an abort (per environment) or
// a MemoryError after 29 s (vectorized); now a MemoryLimitError at once, nothing allocated, with
// the estimate, the memory available and the most environments that fit.
TEST(BatchMemory, AMillionEnvironmentsAreRefusedAtOnce) {
  const auto m = snake();
  const test::ScopedEnv limit("SLENDER_MEMORY_LIMIT", "8G");
  const double eight = 8.0 * (1 << 30);
  for (BatchEngine engine : {BatchEngine::kVectorized, BatchEngine::kPerEnvironment}) {
    const int n = 1000000;
    const BatchMemory need = BatchedSimulator::memory_estimate(*m, n, m->scene.integrator,
                                                               LinearSolverKind::kAuto, engine);
    ASSERT_GT(need.host(n), eight);
    const long fit = long(std::floor((eight - need.host_fixed) / need.host_per_env));
    const double h0 = heap_in_use();
    const auto t0 = std::chrono::steady_clock::now();
    try {
      BatchedSimulator b(m, n, m->scene.integrator, LinearSolverKind::kAuto, engine);
      FAIL() << "a batch of 10^6 environments was built under an 8 GiB limit";
    } catch (const MemoryLimitError& e) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::string msg = e.what();
      std::printf("refused in %.3f s: %s\n", s, msg.c_str());
      EXPECT_LT(s, 1.0);
      EXPECT_LT(heap_in_use() - h0, 1e6);  // nothing of the batch's size was allocated
      EXPECT_EQ(e.field(), "nenv");
      EXPECT_EQ(e.needed_bytes(), need.host(n));
      EXPECT_EQ(e.available_bytes(), eight);
      EXPECT_NE(msg.find("nenv: a batch of 1000000 environments"), std::string::npos) << msg;
      EXPECT_NE(msg.find("needs about " + format_bytes(need.host(n))), std::string::npos) << msg;
      EXPECT_NE(msg.find(format_bytes(need.host_per_env) + " per environment"), std::string::npos)
          << msg;
      EXPECT_NE(msg.find("but 8.0 GiB of memory is available (SLENDER_MEMORY_LIMIT)"),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("at most " + std::to_string(fit) + " environments fit"), std::string::npos)
          << msg;
    }
  }
}

// Issue 49, case 9: a model whose arrays would not fit is refused before they are allocated, with
// the numbers: its assembly plan while the model is built (an upper bound: the entries while
// they are sorted, a column, a slot and a source per entry), and its simulator's state,
// Jacobian and factorization (Simulator::memory_estimate) before the simulator is made
TEST(ModelMemory, AModelThatWouldNotFitIsRefusedBeforeItsArrays) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  b.straight_rod("rod", vec3(0, 0, 0), vec3(1, 0, 0), 4000, mat, SceneBuilder::circle(1e-3));
  const SceneSpec sc = b.build();
  const auto m = build_model(sc);
  const double model = double(m->memory_bytes());
  const double sim = Simulator::memory_estimate(*m, m->scene.integrator, LinearSolverKind::kAuto);
  std::printf("a rod of 4000 edges: model %s, simulator %s\n", format_bytes(model).c_str(),
              format_bytes(sim).c_str());
  ASSERT_GT(model, double(1 << 20));  // large enough to be checked
  {
    const test::ScopedEnv limit("SLENDER_MEMORY_LIMIT", "1M");
    try {
      build_model(sc);
      FAIL() << "a model whose plan needs more than 1 MiB was built under a 1 MiB limit";
    } catch (const MemoryLimitError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(e.field(), "model");
      EXPECT_NE(msg.find("the Jacobian's assembly plan of"), std::string::npos) << msg;
      EXPECT_NE(msg.find("but 1.0 MiB of memory is available (SLENDER_MEMORY_LIMIT)"),
                std::string::npos)
          << msg;
    }
  }
  // room for the model's plan, not for its simulator, nor for the matrix-free solver's, which
  // auto takes where that fits (MatrixFree.AutoTakesItWhereTheAssembledJacobianWouldNotFit)
  const double free =
      Simulator::memory_estimate(*m, m->scene.integrator, LinearSolverKind::kMatrixFree);
  const std::string room = std::to_string(long(std::min(sim, free) / 2));
  const test::ScopedEnv limit("SLENDER_MEMORY_LIMIT", room.c_str());
  const double h0 = heap_in_use();
  try {
    Simulator s(m);
    FAIL() << "a simulator of " << format_bytes(sim) << " was made under " << room << " bytes";
  } catch (const MemoryLimitError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("a simulator of"), std::string::npos) << msg;
    EXPECT_EQ(e.needed_bytes(), sim);
    if (free < sim) {
      EXPECT_NE(msg.find("the matrix-free solver (--solver matrix-free) would need"),
                std::string::npos)
          << msg;
    }
    if (heap_measurable()) {
      EXPECT_LT(heap_in_use() - h0, 0.1 * sim);  // nothing of its size was allocated
    }
  }
}

// Issue 49, case 9: the direct solver holds the Jacobian's values and pattern at their size
// (what LinearSolver::memory_bytes counts for them: a value and a row index per nonzero, a column
// pointer per column), not the arrays grown entry by entry of an assignment from the plan's CSR
// (1.7 times the values and indices of a large network's Jacobian, kept while it runs). Before the
// first factorization a sparse direct solver holds nothing else: its heap growth is that size
// within 5% and 64 KiB (the solver objects, the allocator's headers)
TEST(ModelMemory, TheDirectSolverHoldsTheJacobianAtItsSize) {
  if (!heap_measurable()) GTEST_SKIP() << "mallinfo2 does not see this allocator";
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  b.straight_rod("rod", vec3(0, 0, 0), vec3(1, 0, 0), 4000, mat, SceneBuilder::circle(1e-3));
  const auto m = build_model(b.build());
  const AssemblyPlan& p = m->plan;
  const double exact = double(p.nnz()) * double(sizeof(Real) + sizeof(int)) +
                       double(p.nfree + 1) * double(sizeof(int));
  ASSERT_GT(exact, double(1 << 20));  // large enough to be measured
  std::vector<LinearSolverKind> kinds = {LinearSolverKind::kEigenLdlt, LinearSolverKind::kSparseLu};
#ifdef SLENDER_HAVE_CHOLMOD
  kinds.push_back(LinearSolverKind::kCholmod);
#endif
  for (LinearSolverKind kind : kinds) {
    const double h0 = heap_in_use();
    const cpu::LinearSolver s(p, kind);
    const double grown = heap_in_use() - h0;
    EXPECT_LE(grown, 1.05 * exact + 65536.0) << int(kind);
    EXPECT_GE(grown, exact) << int(kind);
  }
}

// At the edge: a batch whose estimate is the limit is built, one environment more is refused;
// without the override, the machine's own limit refuses 10^6 environments where they do not fit
TEST(BatchMemory, TheLimitIsTheEdgeAndTheMachinesOwnLimitRefusesToo) {
  const auto m = snake();
  const BatchMemory need = BatchedSimulator::memory_estimate(
      *m, 4, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized);
  {
    const test::ScopedEnv limit("SLENDER_MEMORY_LIMIT",
                                std::to_string(long(need.host(4)) + 1).c_str());
    BatchedSimulator fits(m, 4, m->scene.integrator, LinearSolverKind::kAuto,
                          BatchEngine::kVectorized);
    EXPECT_EQ(fits.step().size(), 4u);
    EXPECT_THROW(BatchedSimulator(m, 5, m->scene.integrator, LinearSolverKind::kAuto,
                                  BatchEngine::kVectorized),
                 MemoryLimitError);
  }
  const BatchMemory big = BatchedSimulator::memory_estimate(
      *m, 1000000, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kPerEnvironment);
  const AvailableMemory a = available_memory();
  if (big.host(1e6) <= double(a.bytes)) GTEST_SKIP() << "10^6 snakes fit on this machine";
  const auto t0 = std::chrono::steady_clock::now();
  try {
    BatchedSimulator b(m, 1000000);
    FAIL() << "built";
  } catch (const MemoryLimitError& e) {
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
    EXPECT_NE(std::string(e.what()).find("(" + a.limit + ")"), std::string::npos) << e.what();
  }
}

// MemAvailable bounds the answer; SLENDER_MEMORY_LIMIT replaces it (with its suffixes) and a
// bad value is an InputError naming it; RLIMIT_AS, set in a child process, is seen
TEST(BatchMemory, AvailableMemoryReadsItsLimits) {
  std::ifstream mi("/proc/meminfo");
  std::string key;
  double kb = 0, mem_available = -1;
  std::string unit;
  while (mi >> key >> kb) {
    std::getline(mi, unit);
    if (key == "MemAvailable:") mem_available = kb * 1024;
  }
  const AvailableMemory a = available_memory();
  EXPECT_GT(a.bytes, 0u);
  EXPECT_FALSE(a.limit.empty());
  // (MemAvailable moves between the two reads: a margin of 64 MiB)
  if (mem_available > 0) {
    EXPECT_LE(double(a.bytes), mem_available + 64.0 * (1 << 20));
  }
  {
    const test::ScopedEnv e("SLENDER_MEMORY_LIMIT", "1.5G");
    EXPECT_EQ(available_memory_bytes(), 3ull << 29);
    EXPECT_EQ(available_memory().limit, "SLENDER_MEMORY_LIMIT");
  }
  for (const char* v : {"512MiB", "512M", "512m", "536870912"}) {
    const test::ScopedEnv e("SLENDER_MEMORY_LIMIT", v);
    EXPECT_EQ(available_memory_bytes(), 512ull << 20) << v;
  }
  for (const char* v : {"lots", "8X", "-1G", "8 G"}) {
    const test::ScopedEnv e("SLENDER_MEMORY_LIMIT", v);
    try {
      available_memory();
      ADD_FAILURE() << v << " taken";
    } catch (const InputError& err) {
      EXPECT_EQ(err.field(), "SLENDER_MEMORY_LIMIT");
      EXPECT_NE(std::string(err.what()).find(v), std::string::npos) << err.what();
    }
  }
  EXPECT_EQ(format_bytes(96), "96 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(25.3 * (1 << 30)), "25.3 GiB");
#ifndef SLENDER_TEST_SANITIZED
  // a child process limits its address space to what it uses and 256 MiB more
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ifstream statm("/proc/self/statm");
    unsigned long pages = 0;
    statm >> pages;
    rlimit r{};
    r.rlim_cur = r.rlim_max = pages * sysconf(_SC_PAGESIZE) + (256ul << 20);
    if (setrlimit(RLIMIT_AS, &r) != 0) _exit(2);
    const AvailableMemory c = available_memory();
    const bool ok = c.bytes <= (256ull << 20) && c.bytes > (200ull << 20) &&
                    c.limit.find("RLIMIT_AS") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
