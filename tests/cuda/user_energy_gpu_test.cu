// Energies from the caller's code (stencils/user_energy.h) on the CUDA backend: this file is
// compiled by nvcc, as a user's file would be, so the adaptors launch their own kernels. A
// ribbon with Sadowsky's energy and a spring across it (LocalStencilEnergy, whose stencils are
// copied to the device) against the CPU backend: the state within 1e-9 relative after 40 steps
// and the same Newton iteration counts. Skipped without a device.

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
  SLENDER_REQUIRE_GPU();
  const int nodes = 31;
  SceneBuilder b;
  const int mat = b.material("m", 1200, 2e6, 0.5);
  const int rod = b.straight_rod("ribbon", vec3(0, 0, 0), vec3(0.15, 0, 0), nodes, mat,
                                 SceneBuilder::rectangle(4e-3, 4e-4));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, -3, -9.81));
  b.integrator().dt = 2e-3;
  const auto base = build_model(b.build());
  const int n0 = 4, n1 = nodes - 1;
  const std::vector<std::array<int, 6>> dofs = {
      {3 * n0, 3 * n0 + 1, 3 * n0 + 2, 3 * n1, 3 * n1 + 1, 3 * n1 + 2}};
  const auto model =
      with_energies(base, {std::make_shared<BendTwistStrainEnergy<examples::SadowskyRibbon>>(
                               "Sadowsky", examples::SadowskyRibbon{1e-6}),
                           std::make_shared<LocalStencilEnergy<NodeSpring>>(
                               "spring", dofs, std::vector<NodeSpring::Params>{{2.0}})});
  Simulator cpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCpu);
  Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int s = 0; s < 40; ++s) {
    const StepReport rc = cpu.step(), rg = gpu.step();
    ASSERT_TRUE(rc.ok() && rg.ok()) << "step " << s;
    EXPECT_EQ(rc.iterations, rg.iterations) << "step " << s;
  }
  const std::vector<Real>& qc = cpu.state().q;
  const std::vector<Real>& qg = gpu.state().q;
  const Real d = test::max_abs_diff(qc, qg), m = test::max_abs(qc);
  std::printf("user energies on CUDA: |q_gpu - q_cpu| / |q| = %.2e\n", d / m);
  EXPECT_LT(d / m, 1e-9);
  EXPECT_NEAR(gpu.energies().user, cpu.energies().user, 1e-9 * std::abs(cpu.energies().user));
}

}  // namespace
}  // namespace slender
