// The host executor's counts of what the CUDA executor would do (slender/backend.h,
// ExecutorCounts; issue 47, item 4): they are the same for the same steps; a rod's Newton
// iteration factorizes and solves once; a converged step of a fixed-pattern scene uploads its
// step inputs only, not the model or the plan again; and a Newton iteration's kernel launches
// and host reads stay within the bounds measured when these counts began (bench
// slender_executor_counts prints them): a change that adds launches or host round trips to the
// Newton loop fails here before a device run shows it. These count the host executor's own
// order (the predictor's sums read apart); the device's order, which reads them with the first
// direction's (one host read a step of S1), is counted in predictor_read_test.cpp.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "slender/backend.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/status.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// S1's counts when they began (slender_executor_counts on 2026-11-28: 0 uploads a step, 34
// launches and 4 host reads a Newton iteration at one iteration a step), with a little room;
// see the file's opening comment. Since 2026-11-30: 32 launches and 3 host reads (the
// degenerate stencils' count only where a step saw one), then 33 launches and 2 host reads (a
// Newton direction's slope read with its first trial's sums)
constexpr double kMaxUploadsPerStep = 2;
constexpr double kMaxLaunchesPerIteration = 36;
constexpr double kMaxHostReadsPerIteration = 2;

struct Counted {
  ExecutorCounts c;
  long newton = 0;
};

Counted count_steps(const std::shared_ptr<const Model>& m, int steps) {
  Simulator sim(m);
  for (int k = 0; k < 2; ++k)
    EXPECT_TRUE(sim.step().ok());
  reset_executor_counts();
  Counted r;
  for (int k = 0; k < steps; ++k) {
    const StepReport rep = sim.step();
    EXPECT_TRUE(rep.ok());
    r.newton += rep.iterations;
  }
  r.c = executor_counts();
  return r;
}

std::shared_ptr<const Model> s1() {
  return build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s1_cantilever_e1e5.json"));
}

TEST(ExecutorCounts, TheSameStepsCountTheSame) {
  const auto m = s1();
  const Counted a = count_steps(m, 5), b = count_steps(m, 5);
  EXPECT_GT(a.c.launches, 0);
  EXPECT_EQ(a.newton, b.newton);
  EXPECT_EQ(a.c.launches, b.c.launches);
  EXPECT_EQ(a.c.uploads, b.c.uploads);
  EXPECT_EQ(a.c.host_reads, b.c.host_reads);
  EXPECT_EQ(a.c.syncs, b.c.syncs);
  EXPECT_EQ(a.c.direct_calls, b.c.direct_calls);
}

TEST(ExecutorCounts, ARodsNewtonIterationStaysWithinItsMeasuredBounds) {
  const int steps = 10;
  const Counted r = count_steps(s1(), steps);
  ASSERT_GT(r.newton, 0);
  const double it = double(r.newton);
  // one factorization and one solve per Newton iteration
  EXPECT_EQ(r.c.direct_calls, 2 * r.newton);
  // the model, the plan and the state stay on the device: a step uploads its inputs (the
  // integrator's coefficients and the actuation of the step) and nothing that grows with it
  EXPECT_LE(double(r.c.uploads) / steps, kMaxUploadsPerStep);
  // the bounds of the counts' first measurement (slender_executor_counts): a change that adds
  // launches or host reads to the Newton loop must move them, and say why
  EXPECT_LE(double(r.c.launches) / it, kMaxLaunchesPerIteration);
  EXPECT_LE(double(r.c.host_reads) / it, kMaxHostReadsPerIteration);
  EXPECT_EQ(r.c.sorts, 0);  // (no contact)
}

// Once a scene's steps have sized its buffers, a step allocates none (what capturing a step in a
// CUDA graph needs; a cudaMalloc costs more than a launch, and a cudaFree waits for the device).
// The host's count follows DeviceBuffer's rule: a new allocation only beyond a buffer's capacity.
// A rod and the vectorized batch after two steps; a cloth landing on the ground and folding onto
// itself (cloth_drop: contact pairs from about step 370, their number changing every step, and
// with it the assembly plan), run again over the same contact phase from a saved state, every
// buffer as large as the first run made it. (Until DeviceBuffer kept its room when it shrank,
// each change of the plan freed and allocated the engine's pools again on the GPU.)
TEST(ExecutorCounts, AStepAllocatesNothingOnceItsBuffersAreSized) {
  EXPECT_EQ(count_steps(s1(), 5).c.allocations, 0);
  BatchedSimulator batch(s1(), 4, s1()->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  for (int k = 0; k < 2; ++k)
    batch.step();
  reset_executor_counts();
  for (int k = 0; k < 5; ++k)
    for (StepStatus st : batch.step())
      ASSERT_EQ(st, StepStatus::kConverged);
  EXPECT_EQ(executor_counts().allocations, 0);

  const auto cloth = build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/cloth_drop.json"));
  Simulator sim(cloth);
  constexpr int kFrom = 380, kTo = 470;
  State saved;
  for (int k = 1; k <= kTo; ++k) {
    ASSERT_TRUE(sim.step().ok()) << "step " << k;
    if (k == kFrom) saved = sim.state();
  }
  sim.set_state(saved);
  reset_executor_counts();
  for (int k = kFrom + 1; k <= kTo; ++k)
    ASSERT_TRUE(sim.step().ok()) << "step " << k;
  const ExecutorCounts c = executor_counts();
  EXPECT_GT(c.sorts, 0);  // (the pair finder ran)
  EXPECT_EQ(c.allocations, 0);
}

// The degenerate stencils are counted at a step's end only where the step's last evaluation saw
// one (its sums carry the flag: a host read less a step where none is). A rod folded back onto
// itself at one node (its bend-twist stencil there has no curvature binormal) counts one a
// step, on a Simulator and in each environment of the vectorized batch; a step of S1, with
// none, reads the host twice (the predictor's sums; the direction's slope with its trial's)
TEST(ExecutorCounts, DegenerateStencilsAreCountedWhereAStepSawOne) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r = b.polyline_rod(
      "r", {vec3(0, 0, 0), vec3(0.01, 0, 0), vec3(0.02, 0, 0), vec3(0.01, 0, 0), vec3(0, 0, 1e-3)},
      mat, SceneBuilder::circle(1e-4));
  b.fix_edge(r, 0);
  const auto folded = build_model(b.build());
  Simulator sim(folded);
  for (int k = 1; k <= 3; ++k) {
    ASSERT_TRUE(sim.step().ok());
    EXPECT_EQ(sim.state().warn_degenerate, k);
  }
  BatchedSimulator batch(folded, 2, folded->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  for (int k = 0; k < 3; ++k)
    for (StepStatus st : batch.step())
      ASSERT_EQ(st, StepStatus::kConverged);
  for (int e = 0; e < 2; ++e)
    EXPECT_EQ(batch.state(e).warn_degenerate, 3) << "environment " << e;
  const Counted c = count_steps(s1(), 4);
  EXPECT_EQ(c.newton, 4);
  EXPECT_EQ(c.c.host_reads, 2 * 4);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
