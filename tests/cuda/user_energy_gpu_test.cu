// Energies from the caller's code (stencils/user_energy.h) on the CUDA backend: this file is
// compiled by nvcc, as a user's file would be, so the adaptors launch their own kernels. A
// ribbon with Sadowsky's energy and a spring across it (LocalStencilEnergy, whose stencils are
// copied to the device) against the CPU backend: the state within 1e-9 relative after 40 steps
// and the same Newton iteration counts. The CPU half runs without a device too.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "../../apps/examples/sadowsky_ribbon.h"
#include "gpu_test_util.h"
#include "physics/node_spring.h"
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "slender/stencils/user_energy.h"
#include "test_util.h"

namespace slender {
namespace {

using test::NodeSpring;

TEST(CudaUserEnergy, SadowskyRibbonAndASpringMatchTheCpu) {
  const int nodes = 31;
  SceneBuilder b;
  const int mat = b.material("m", 1200, 2e6, 0.5);
  const int rod = b.straight_rod("ribbon", vec3(0, 0, 0), vec3(0.15, 0, 0), nodes, mat,
                                 SceneBuilder::rectangle(4e-3, 4e-4));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, -3, -9.81));
  b.integrator().dt = 2e-3;
  const auto base = build_model(b.build());
  // a soft spring, pulling a quarter of the ribbon's weight at the start: a hundred times the
  // weight (2 N/m) buckled the ribbon into twist near zero curvature, where Sadowsky's energy has
  // no twist stiffness, and Newton's iterations stalled on the CPU as on the GPU
  const int n0 = 4, n1 = nodes - 1;
  const std::vector<std::array<int, 6>> dofs = {
      {3 * n0, 3 * n0 + 1, 3 * n0 + 2, 3 * n1, 3 * n1 + 1, 3 * n1 + 2}};
  const auto model =
      with_energies(base, {std::make_shared<BendTwistStrainEnergy<examples::SadowskyRibbon>>(
                               "Sadowsky", examples::SadowskyRibbon{1e-6}),
                           std::make_shared<LocalStencilEnergy<NodeSpring>>(
                               "spring", dofs, std::vector<NodeSpring::Params>{{0.005}})});
  // the CPU first, with or without a device (CI checks that the set-up converges)
  Simulator cpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCpu);
  std::vector<int> iterations;
  for (int s = 0; s < 40; ++s) {
    const StepReport rc = cpu.step();
    ASSERT_TRUE(rc.ok()) << "CPU, step " << s << ": " << to_string(rc.status);
    iterations.push_back(rc.iterations);
  }
  if (!test::cuda_device_present()) GTEST_SKIP() << "no CUDA device (the CPU half ran)";
  Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int s = 0; s < 40; ++s) {
    const StepReport rg = gpu.step();
    ASSERT_TRUE(rg.ok()) << "CUDA, step " << s << ": " << to_string(rg.status);
    EXPECT_EQ(rg.iterations, iterations[size_t(s)]) << "step " << s;
  }
  const std::vector<Real>& qc = cpu.state().q;
  const std::vector<Real>& qg = gpu.state().q;
  const Real d = test::max_abs_diff(qc, qg), m = test::max_abs(qc);
  std::printf("user energies on CUDA: |q_gpu - q_cpu| / |q| = %.2e\n", d / m);
  EXPECT_LT(d / m, 1e-9);
  EXPECT_NEAR(gpu.energies().user, cpu.energies().user, 1e-9 * std::abs(cpu.energies().user));
}

// A band whose pivot is too small on the device, where its solve's status is read with the
// Newton direction's slope (DeviceSparseSolver::solve_deferred; the engine evaluates the iterate
// again and takes solve_after_pivot's sparse path): a spring of 1e25 N/m from a held node (a
// second, clamped rod's) to the free node where it starts puts every other pivot below the
// band's floor (1e-13 of the largest diagonal entry). The same Newton iterations and fallbacks as
// the CPU, whose band falls back at once, and the state within 1e-9 relative after 6 steps.
TEST(CudaUserEnergy, ABandsPivotTooSmallFallsBackAsOnTheCpu) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 12, mat, SceneBuilder::circle(1e-3));
  b.fix_edge(rod, 0);
  const int n1 = 6;  // (the anchor's first node is node 12, at node 6)
  const Real x1 = 0.2 * n1 / 11;
  const int anchor = b.straight_rod("anchor", vec3(x1, 0, 0), vec3(x1, 0, -0.01), 2, mat,
                                    SceneBuilder::circle(1e-3));
  b.fix_edge(anchor, 0);
  b.gravity(vec3(0, 0, -9.81));
  const std::vector<std::array<int, 6>> dofs = {{36, 37, 38, 3 * n1, 3 * n1 + 1, 3 * n1 + 2}};
  const auto model = with_energies(build_model(b.build()),
                                   {std::make_shared<LocalStencilEnergy<NodeSpring>>(
                                       "stiff", dofs, std::vector<NodeSpring::Params>{{1e25}})});
  Simulator cpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCpu);
  ASSERT_EQ(cpu.linear_solver_name(), "banded-lu");
  std::vector<int> iterations;
  for (int s = 0; s < 6; ++s) {
    const StepReport rc = cpu.step();
    ASSERT_TRUE(rc.ok()) << "CPU, step " << s << ": " << to_string(rc.status);
    ASSERT_GT(rc.iterations, 0);
    iterations.push_back(rc.iterations);
  }
  long its = 0;
  for (int i : iterations)
    its += i;
  EXPECT_EQ(cpu.state().warn_linear_fallback, its);  // (every iteration's band fell back)
  if (!test::cuda_device_present()) GTEST_SKIP() << "no CUDA device (the CPU half ran)";
  Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int s = 0; s < 6; ++s) {
    const StepReport rg = gpu.step();
    ASSERT_TRUE(rg.ok()) << "CUDA, step " << s << ": " << to_string(rg.status);
    EXPECT_EQ(rg.iterations, iterations[size_t(s)]) << "step " << s;
  }
  EXPECT_EQ(gpu.state().warn_linear_fallback, its);
  const Real d = test::max_abs_diff(cpu.state().q, gpu.state().q), m = test::max_abs(cpu.state().q);
  EXPECT_LT(d / m, 1e-9);
}

}  // namespace
}  // namespace slender
