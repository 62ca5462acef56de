// Backend selection and the comparison tool where no GPU is present (CI): asking for CUDA gives
// a clear error, the comparison still runs the CPU side and says why CUDA did not run. On a
// machine with a device these cases skip; tests/cuda/cuda_backend_gpu_test.cpp covers it.

#include "slender/backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/core/error.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::shared_ptr<const Model> small_rod(BackendKind backend = BackendKind::kCpu) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 11, mat, SceneBuilder::circle(0.002));
  b.fix_edge(r, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  b.spec().backend = backend;
  return build_model(b.spec());
}

bool no_device() { return cuda_device_count() == 0; }

TEST(CudaBackend, AskingWithoutADeviceIsAClearError) {
  if (!no_device()) GTEST_SKIP() << "a CUDA device is present";
  const auto model = small_rod();
  try {
    Simulator sim(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    FAIL() << "the CUDA simulator was built without a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA backend was asked for"), std::string::npos)
        << e.what();
  }
}

TEST(CudaBackend, SceneBackendIsHonouredBySimulatorOfModel) {
  if (!no_device()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(Simulator sim(small_rod(BackendKind::kCuda)), Error);
  Simulator cpu(small_rod(BackendKind::kCpu));
  EXPECT_EQ(cpu.backend(), BackendKind::kCpu);
}

TEST(CompareBackends, CpuSideRunsAndTheMissingBackendIsNamed) {
  if (!no_device()) GTEST_SKIP() << "a CUDA device is present";
  const auto model = small_rod();
  const CompareResult r = compare_backends(model, 5);
  ASSERT_TRUE(r.cpu.available) << r.cpu.error;
  EXPECT_TRUE(r.cpu.ok);
  EXPECT_EQ(r.cpu.steps, 5);
  EXPECT_GT(r.cpu.times.newton_iters, 0);
  // the CPU side is an ordinary run: the same state as five steps of a Simulator
  Simulator sim(model);
  for (int k = 0; k < 5; ++k)
    ASSERT_TRUE(sim.step().ok());
  EXPECT_EQ(r.cpu.state.q, sim.state().q);
  EXPECT_EQ(r.cpu.state.u, sim.state().u);
  EXPECT_FALSE(r.cuda.available);
  EXPECT_FALSE(r.cuda.ok);
  EXPECT_FALSE(r.cuda.error.empty());
  EXPECT_TRUE(std::isnan(r.q_rel_diff));
  const std::string table = format_comparison(r);
  EXPECT_NE(table.find("Newton iterations"), std::string::npos) << table;
  EXPECT_NE(table.find("cuda: "), std::string::npos) << table;
}

// from a given state (a run's middle): the CPU side continues from it, as a Simulator given that
// state does, and counts each step's Newton iterations
TEST(CompareBackends, FromAGivenState) {
  if (!no_device()) GTEST_SKIP() << "a CUDA device is present";
  const auto model = small_rod();
  Simulator first(model);
  for (int k = 0; k < 4; ++k)
    ASSERT_TRUE(first.step().ok());
  const State start = first.state();
  const CompareResult r = compare_backends(model, 3, LinearSolverKind::kAuto, false, &start);
  ASSERT_TRUE(r.cpu.ok) << r.cpu.error;
  Simulator sim(model);
  sim.set_state(start);
  std::vector<int> iters;
  for (int k = 0; k < 3; ++k) {
    const StepReport rep = sim.step();
    ASSERT_TRUE(rep.ok());
    iters.push_back(rep.iterations);
  }
  EXPECT_EQ(r.cpu.state.q, sim.state().q);
  EXPECT_EQ(r.cpu.step_iterations, iters);
  EXPECT_NE(r.cpu.state.q, first.state().q);  // it moved on from the start
  EXPECT_EQ(r.iteration_mismatches, -1);      // (no CUDA run to compare)
}

TEST(CompareBackends, BadStepCountIsAnError) {
  EXPECT_THROW(compare_backends(small_rod(), 0), Error);
}

TEST(CompareBackends, MaxRelativeDifference) {
  EXPECT_EQ(max_relative_difference({1, -2, 0}, {1, -2, 0}), 0);
  EXPECT_DOUBLE_EQ(max_relative_difference({1, -4, 0}, {1, -4, 1e-3}), 1e-3 / 4);
  EXPECT_TRUE(std::isnan(max_relative_difference({1, 2}, {1, NAN})));
  EXPECT_TRUE(std::isnan(max_relative_difference({1, 2}, {1})));
  EXPECT_TRUE(std::isinf(max_relative_difference({0, 0}, {0, 1})));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
