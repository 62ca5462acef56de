// The vectorized batch's step inputs on the device against the CPU's vectorized batch (to 1e-9
// of the motion), the checks the CPU suites make on the CPU backend alone
// (tests/physics/batch_actuation_test.cpp, load_action_test.cpp, control_test.cpp):
// - the scene's actuation at each environment's time (Engine::actuate: an SMA limb, a mid-edge
//   PneuNet, a manta ray's hinge angles, the DisMech manipulator's per-spring series), each
//   environment with its own stiffness;
// - loads as actions per environment (set_load_values: Bartholdt's pressure chambers, the tendon
//   finger's tensions);
// - PI control on natural strains (StrainController: the S-shape, an environment with its own
//   gains and one with its own reference), on the batch and on a Simulator;
// - added mass and a follower pressure on an open shell, on a Simulator;
// - a checkpoint with a controller's state, written and read on CUDA.
// The CPU half runs first; without a device the cases skip after it.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "physics/physics_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/checkpoint.h"
#include "slender/compare.h"
#include "slender/control.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::shared_ptr<const Model> app_scene(const std::string& name) {
  return build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name + ".json"));
}

// max |a - b| over the positions, relative to b's motion from q0
Real motion_difference(const std::vector<Real>& a,
                       const std::vector<Real>& b,
                       const std::vector<Real>& q0,
                       int nx) {
  Real d = 0, s = 0;
  for (int i = 0; i < nx; ++i) {
    d = std::max(d, std::fabs(a[size_t(i)] - b[size_t(i)]));
    s = std::max(s, std::fabs(b[size_t(i)] - q0[size_t(i)]));
  }
  return s > 0 ? d / s : d;
}

// B environments stepped `steps` times on each backend by `setup` and then `step`; their states
// compared to 1e-9 of the motion
template <class Setup>
void compare_backends(const std::shared_ptr<const Model>& m, int B, int steps, Setup setup) {
  const bool gpu = test::cuda_device_present();
  std::vector<std::vector<Real>> q[2];
  for (int dev = 0; dev < (gpu ? 2 : 1); ++dev) {
    BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kVectorized, dev ? BackendKind::kCuda : BackendKind::kCpu);
    setup(batch);
    for (int k = 0; k < steps; ++k)
      for (StepStatus s : batch.step())
        ASSERT_EQ(s, StepStatus::kConverged) << (dev ? "cuda" : "cpu") << " step " << k;
    for (int e = 0; e < B; ++e)
      q[dev].push_back(batch.state(e).q);
  }
  if (!gpu) return;
  const std::vector<Real> q0 = initial_state(*m).q;
  for (int e = 0; e < B; ++e)
    EXPECT_LT(motion_difference(q[1][size_t(e)], q[0][size_t(e)], q0, 3 * m->nnode), 1e-9)
        << "environment " << e;
}

TEST(CudaBatch, SceneActuationMatchesTheCpuBatch) {
  struct Case {
    const char* name;
    int steps;
  };
  for (const Case& c : {Case{"sma_limb", 100}, Case{"pneunet_curl", 30}, Case{"manta_ray", 30},
                        Case{"dismech_manipulator", 100}}) {
    SCOPED_TRACE(c.name);
    const auto m = app_scene(c.name);
    ASSERT_FALSE(m->actuated.empty());
    compare_backends(m, 3, c.steps, [](BatchedSimulator& b) {
      const Real scale[3] = {1.0, 1.15, 0.85};
      for (int e = 0; e < 3; ++e) {
        EnvParams p;
        p.youngs_scale = scale[e];
        b.set_params(e, p);
      }
    });
  }
  if (!test::cuda_device_present()) GTEST_SKIP() << "no CUDA device (the CPU half ran)";
}

TEST(CudaBatch, LoadValuesPerEnvironmentMatchTheCpuBatch) {
  {
    SCOPED_TRACE("pressure chambers");
    // one chamber at 60 kPa, all three, two at other pressures
    const std::vector<std::array<Real, 3>> p = {
        {60e3, 0, 0}, {0, 0, 60e3}, {60e3, 60e3, 60e3}, {30e3, 0, 20e3}};
    compare_backends(app_scene("bartholdt_actuator"), int(p.size()), 20, [&](BatchedSimulator& b) {
      for (int c = 0; c < 3; ++c) {
        std::vector<Real> v;
        for (const auto& e : p)
          v.push_back(e[size_t(c)]);
        b.set_load_values("pressure_chambers", c, v.data());
      }
    });
  }
  {
    SCOPED_TRACE("tendons");
    SceneSpec sc =
        read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/tendon_finger.json");
    sc.forces.gravity = vec3(0, 0, 0);
    // (flexor, extensor) [N]
    const std::vector<std::array<Real, 2>> t = {{2, 0}, {0, 2}, {1.5, 1.5}, {-3, 0}};
    compare_backends(build_model(sc), int(t.size()), 15, [&](BatchedSimulator& b) {
      for (int c = 0; c < 2; ++c) {
        std::vector<Real> v;
        for (const auto& e : t)
          v.push_back(e[size_t(c)]);
        b.set_load_values("tendons", c, v.data());
      }
    });
  }
  if (!test::cuda_device_present()) GTEST_SKIP() << "no CUDA device (the CPU half ran)";
}

TEST(CudaBatch, StrainControllerMatchesTheCpuBatch) {
  const auto m = app_scene("pi_s_shape");
  const int n = m->nbend;
  ASSERT_GT(n, 0);
  // environment 1 its own gains (per spring), environment 2 its own reference (a flatter S)
  std::vector<Real> kp1(size_t(n), 0.3);
  for (int k = 1; k < n; k += 2)
    kp1[size_t(k)] = 0.4;
  const std::vector<Real> ki1 = {2};
  compare_backends(m, 3, 60, [&](BatchedSimulator& b) {
    StrainController& c = *b.controller();
    c.set_gains(0, 1, kp1, ki1);
    std::vector<Real> flat(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k)
      flat[size_t(k)] = 0.5 * c.reference_at(0, 0, k, 1.0);
    c.set_reference(0, 2, flat.data());
  });
  // and on a Simulator: the scene's 400 steps, the controller's strain error within 1e-5 of the
  // CPU's
  const bool gpu = test::cuda_device_present();
  if (!gpu) GTEST_SKIP() << "no CUDA device (the CPU half ran)";
  Simulator cpu(m), dev(m, m->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int k = 0; k < 400; ++k) {
    ASSERT_TRUE(cpu.step().ok()) << "cpu step " << k;
    ASSERT_TRUE(dev.step().ok()) << "cuda step " << k;
  }
  const std::vector<Real>& uc = cpu.controller()->command(0);
  const std::vector<Real>& ud = dev.controller()->command(0);
  ASSERT_EQ(uc.size(), ud.size());
  EXPECT_LT(test::max_abs_diff(uc, ud), 1e-5 * std::max(Real(1), test::max_abs(uc)));
  const std::vector<Real> q0 = initial_state(*m).q;
  EXPECT_LT(motion_difference(dev.state().q, cpu.state().q, q0, 3 * m->nnode), 1e-9);
}

// Terms no example scene uses yet, on a Simulator against the CPU backend (V8's measure, 1e-9
// after 50 steps): a rod in water with added mass (the device's per-DOF inertia), and a follower
// pressure on an open hinge plate (a non-symmetric load, its normals turning with the plate)
TEST(CudaSimulator, AddedMassAndAFollowerPressureMatchTheCpu) {
  std::vector<std::pair<const char*, std::shared_ptr<const Model>>> models;
  {
    SceneBuilder b;
    const int mat = b.material("m", 2000, 1e7, 0.5);
    const int rod = b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, -0.05), 21, mat,
                                   SceneBuilder::circle(1e-3));
    b.fix_node(rod, 0).gravity(vec3(0, 0, -9.81)).buoyancy(1000).added_mass(1);
    b.integrator().dt = 1e-3;
    models.emplace_back("added mass", build_model(b.build()));
    ASSERT_GT(models.back().second->node_added_mass[1], 0);
  }
  models.emplace_back("follower pressure", build_model(test::follower_pressure_plate().build()));
  std::string skipped;
  for (const auto& [name, m] : models) {
    SCOPED_TRACE(name);
    const CompareResult r = compare_backends(m, 50, LinearSolverKind::kAuto, false);
    ASSERT_TRUE(r.cpu.ok) << r.cpu.error;
    EXPECT_EQ(r.cpu.steps, 50);
    if (!r.cuda.available) {
      skipped = r.cuda.error;
      continue;
    }
    EXPECT_TRUE(r.cuda.ok) << r.cuda.error;
    EXPECT_LE(r.q_rel_diff, 1e-9);
    EXPECT_LE(r.u_step_rel_diff, 1e-9);
  }
  if (!skipped.empty()) GTEST_SKIP() << skipped << " (the CPU runs converged)";
}

// A checkpoint (format 5: the state and the controllers' state) of a PI-controlled Simulator on
// CUDA: 20 steps, saved, loaded into a new CUDA Simulator and 20 more give the bits of 40
// uninterrupted steps (device runs are bit-identical), the controllers' integrals and commands
// included
TEST(CudaSimulator, ACheckpointWithAControllerResumesInTheSameBits) {
  const auto m = app_scene("pi_s_shape");
  ASSERT_FALSE(m->scene.controllers.empty());
  if (!test::cuda_device_present()) GTEST_SKIP() << "no CUDA device";
  auto cuda = [&]() {
    return std::make_unique<Simulator>(m, m->scene.integrator, LinearSolverKind::kAuto,
                                       BackendKind::kCuda);
  };
  const auto whole = cuda(), first = cuda(), resumed = cuda();
  for (int k = 0; k < 40; ++k)
    ASSERT_TRUE(whole->step().ok()) << "step " << k;
  for (int k = 0; k < 20; ++k)
    ASSERT_TRUE(first->step().ok()) << "step " << k;
  const std::string path = ::testing::TempDir() + "/cuda_pi.slck";
  save_checkpoint(*first, path);
  load_checkpoint(*resumed, path);
  EXPECT_EQ(resumed->state().q, first->state().q);
  for (int k = 20; k < 40; ++k)
    ASSERT_TRUE(resumed->step().ok()) << "step " << k;
  EXPECT_EQ(resumed->state().q, whole->state().q);
  EXPECT_EQ(resumed->state().u, whole->state().u);
  EXPECT_EQ(resumed->controller()->integral(0), whole->controller()->integral(0));
  EXPECT_EQ(resumed->controller()->command(0), whole->controller()->command(0));
  std::remove(path.c_str());
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
