// The vectorized batch on the CUDA device against the same engine on the CPU (label gpu; every
// case skips without a device). The single-simulator CUDA backend's suite is
// tests/cpu/simulator_engine_test.cpp, which runs on the device where there is one and on the host
// executor everywhere.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_models.h"
#include "gpu_test_util.h"
#include "physics/modal_util.h"
#include "physics/physics_util.h"
#include "slender/batch.h"
#include "slender/compare.h"
#include "slender/core/error.h"
#include "slender/info.h"
#include "slender/simulator.h"
#include "slender/stencils/user_energy.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::shared_ptr<const Model> load(const std::string& path) {
  SceneSpec sc = read_scene_file(path);
  sc.backend = BackendKind::kCpu;
  return build_model(sc);
}
// the vectorized batch on the GPU against the same engine on the CPU (which equals single runs
// bit for bit, tests/physics/batch_test.cpp): 32 snakes with their own waves, 40 steps
TEST(CudaBatch, VectorizedSnakesMatchTheCpuEngine) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 32, nb = m->nbend;
  BatchedSimulator cpu(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCpu);
  BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCuda);
  std::vector<Real> kappa(2 * size_t(B) * nb, 0);
  for (int k = 0; k < 40; ++k) {
    const Real t = (k + 1) * m->scene.integrator.dt;
    for (int e = 0; e < B; ++e)
      for (int j = 0; j < nb; ++j)
        kappa[(size_t(e) * nb + j) * 2 + 1] = (0.02 + 0.001 * e) * std::sin(0.2 * j - 6 * t);
    cpu.set_natural_curvature(kappa.data());
    gpu.set_natural_curvature(kappa.data());
    const std::vector<StepStatus> a = cpu.step(), b = gpu.step();
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a[e], StepStatus::kConverged);
      ASSERT_EQ(b[e], StepStatus::kConverged) << "env " << e << " step " << k;
    }
  }
  // nvcc contracts a * b + c into fused multiply-adds: not the CPU's bits, but the same Newton
  // iterates to the solver's tolerance
  std::vector<Real> xa(size_t(B) * 3 * m->nnode), xb(xa.size());
  cpu.positions(xa.data());
  gpu.positions(xb.data());
  EXPECT_LE(max_relative_difference(xa, xb), 1e-9);
}

// every environment's energies (engine/engine_queries.h on the device) against the CPU
// engine's: an actuated limb in three environments of their own stiffness, the first reset to
// its start (each at its own time), within 1e-9 of the largest field
TEST(CudaBatch, EnergiesMatchTheCpuEngine) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/sma_limb.json");
  const int B = 3;
  BatchedSimulator cpu(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCpu);
  BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCuda);
  for (int e = 0; e < B; ++e) {
    EnvParams p;
    p.youngs_scale = 1 + 0.1 * e;
    p.density_scale = 1 - 0.1 * e;
    cpu.set_params(e, p);
    gpu.set_params(e, p);
  }
  for (int k = 0; k < 60; ++k) {
    const std::vector<StepStatus> a = cpu.step(), b = gpu.step();
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a[e], StepStatus::kConverged);
      ASSERT_EQ(b[e], StepStatus::kConverged) << "env " << e << " step " << k;
    }
  }
  cpu.reset({1, 0, 0});
  gpu.reset({1, 0, 0});
  const std::vector<Energies> ec = cpu.energies(), eg = gpu.energies();
  for (int e = 0; e < B; ++e) {
    const Real c[] = {ec[e].kinetic, ec[e].stretch, ec[e].bend,
                      ec[e].twist,   ec[e].gravity, ec[e].load};
    const Real g[] = {eg[e].kinetic, eg[e].stretch, eg[e].bend,
                      eg[e].twist,   eg[e].gravity, eg[e].load};
    Real scale = 0, diff = 0;
    for (int i = 0; i < 6; ++i) {
      scale = std::max(scale, std::fabs(c[i]));
      diff = std::max(diff, std::fabs(c[i] - g[i]));
    }
    EXPECT_LE(diff, 1e-9 * std::max(scale, Real(1e-30))) << "env " << e;
  }
}

// prescribed motion by the caller's targets in vectorized batches on the device: four
// environments of a cantilever whose clamped ends move on their own paths, against the CPU
// engine (the single-simulator case is in tests/cpu/simulator_engine_test.cpp)
TEST(CudaBatch, FixedTargetsMatchTheCpuEngine) {
  SLENDER_REQUIRE_GPU();
  const auto m = test::clamped_rod_for_targets(IntegratorKind::kImplicitMidpoint, true);
  const size_t nf = m->fixed_dof.size();
  const int B = 4;
  BatchedSimulator vcpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized, BackendKind::kCpu);
  BatchedSimulator vgpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized, BackendKind::kCuda);
  std::vector<Real> all(size_t(B) * nf);
  for (int s = 0; s < 40; ++s) {
    for (int e = 0; e < B; ++e) {
      const std::vector<Real> t = test::clamp_targets(*m, e, s);
      std::copy(t.begin(), t.end(), all.begin() + e * nf);
    }
    vcpu.set_fixed_targets(all.data());
    vgpu.set_fixed_targets(all.data());
    const std::vector<StepStatus> a = vcpu.step(), g = vgpu.step();
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a[e], StepStatus::kConverged);
      ASSERT_EQ(g[e], StepStatus::kConverged) << "env " << e << " step " << s;
    }
  }
  std::vector<Real> xa(size_t(B) * 3 * m->nnode), xb(xa.size());
  vcpu.positions(xa.data());
  vgpu.positions(xb.data());
  EXPECT_LE(max_relative_difference(xa, xb), 1e-9);
}

// reset on the device: the initial state and another environment's state copied into the
// masked environments (one upload, masked copies), then stepped, against the CPU engine
TEST(CudaBatch, ResetMatchesTheCpuEngine) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 16, nb = m->nbend;
  BatchedSimulator cpu(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCpu);
  BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCuda);
  std::vector<Real> kappa(2 * size_t(B) * nb, 0);
  for (int e = 0; e < B; ++e)
    for (int j = 0; j < nb; ++j)
      kappa[(size_t(e) * nb + j) * 2 + 1] = (0.02 + 0.002 * e) * std::sin(0.2 * j);
  std::vector<unsigned char> half(B, 0), odd(B, 0);
  for (int e = 0; e < B; ++e) {
    half[e] = e < B / 2;
    odd[e] = e % 2;
  }
  for (BatchedSimulator* b : {&cpu, &gpu}) {
    b->set_natural_curvature(kappa.data());
    for (int k = 0; k < 10; ++k)
      b->step();
    b->reset(half);
    const State s5 = b->state(5);
    b->reset(odd, s5);
    for (int k = 0; k < 10; ++k)
      for (StepStatus st : b->step())
        ASSERT_EQ(st, StepStatus::kConverged);
  }
  std::vector<Real> xa(size_t(B) * 3 * m->nnode), xb(xa.size());
  cpu.positions(xa.data());
  gpu.positions(xb.data());
  EXPECT_LE(max_relative_difference(xa, xb), 1e-9);
  std::vector<Real> ta(B), tb(B);
  cpu.times(ta.data());
  gpu.times(tb.data());
  EXPECT_EQ(ta, tb);
  // the curvatures observed on the device (one loop, one download)
  std::vector<Real> ca(3 * size_t(B) * nb), cb(ca.size());
  cpu.curvatures(ca.data());
  gpu.curvatures(cb.data());
  EXPECT_LE(max_relative_difference(ca, cb), 1e-9);
}

// the factorizations on a warp per environment (lanes cooperating over each column) and on a
// thread per environment give the same bits (SLENDER_BATCH_LANES picks the form): the banded LU
// (snake with waves), the dense Cholesky (a mid-edge plate with a rod) and the dense LU (the
// same with drag). The banded LU on warps is the one in global memory: SLENDER_BATCH_STAGED=0,
// since at this B the default stages it in shared memory (StagedBandSolveGivesTheSameBits
// compares that form). SLENDER_TEST_MAX_STEPS caps the steps here and there (the sanitizers).
TEST(CudaBatch, FactorizationsOnWarpsAndOnThreadsGiveTheSameBits) {
  SLENDER_REQUIRE_GPU();
  // steps: a dense factorization (n about 250) on one thread per environment takes about a
  // second on an H200, so the plates take a few steps (the first GPU run's 20 outran 240 s)
  struct Case {
    const char* name;
    std::shared_ptr<const Model> m;
    const char* solver;
    int steps;
  };
  const Case cases[] = {
      {"snake", load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"), "banded-lu", 20},
      {"plate", build_model(test::midedge_plate_with_rod(false, true)), "dense-cholesky", 3},
      {"plate-drag", build_model(test::midedge_plate_with_rod(true, true)), "dense-lu", 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Model& m = *c.m;
    const int B = 48, nb = m.nbend;
    const bool waves = std::string(c.name) == "snake";
    std::vector<Real> x[2];
    for (int lanes = 0; lanes < 2; ++lanes) {
      setenv("SLENDER_BATCH_LANES", lanes ? "1" : "0", 1);
      setenv("SLENDER_BATCH_STAGED", "0", 1);
      BatchedSimulator gpu(c.m, B, m.scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kVectorized, BackendKind::kCuda);
      unsetenv("SLENDER_BATCH_LANES");
      unsetenv("SLENDER_BATCH_STAGED");
      EXPECT_EQ(gpu.solver_name(), std::string(c.solver) + (lanes ? "-lanes" : ""));
      for (int e = 0; e < B; ++e) {
        EnvParams p;
        p.youngs_scale = 1 + 0.02 * e;
        gpu.set_params(e, p);
      }
      std::vector<Real> kappa(2 * size_t(B) * nb, 0);
      const auto t0 = std::chrono::steady_clock::now();
      const int steps = test::capped_steps(c.steps);
      for (int k = 0; k < steps; ++k) {
        if (waves) {
          for (int e = 0; e < B; ++e)
            for (int j = 0; j < nb; ++j)
              kappa[(size_t(e) * nb + j) * 2 + 1] =
                  (0.02 + 0.001 * e) * std::sin(0.2 * j - 0.1 * k);
          gpu.set_natural_curvature(kappa.data());
        }
        for (StepStatus st : gpu.step())
          ASSERT_EQ(st, StepStatus::kConverged);
      }
      x[lanes].resize(size_t(B) * 3 * m.nnode);
      gpu.positions(x[lanes].data());
      std::printf("%s, %s: %d steps in %.2f s\n", c.name, gpu.solver_name().c_str(), steps,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    EXPECT_EQ(x[0], x[1]);
  }
}

// the staged banded solve (SLENDER_BATCH_STAGED=1: the gather and the factorization in one
// pass in a warp's shared memory) gives the bits of the banded LU on warps and on threads; the
// snake with waves of a different amplitude in each environment
TEST(CudaBatch, StagedBandSolveGivesTheSameBits) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 96, nb = m->nbend, steps = test::capped_steps(20);
  const char* forms[3][3] = {
      {"0", "0", "banded-lu"}, {"1", "0", "banded-lu-lanes"}, {"1", "1", "banded-lu-lanes-staged"}};
  std::vector<Real> x[3];
  for (int f = 0; f < 3; ++f) {
    setenv("SLENDER_BATCH_LANES", forms[f][0], 1);
    setenv("SLENDER_BATCH_STAGED", forms[f][1], 1);
    BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized, BackendKind::kCuda);
    unsetenv("SLENDER_BATCH_LANES");
    unsetenv("SLENDER_BATCH_STAGED");
    EXPECT_EQ(gpu.solver_name(), forms[f][2]);
    std::vector<Real> kappa(2 * size_t(B) * nb, 0);
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps; ++k) {
      for (int e = 0; e < B; ++e)
        for (int j = 0; j < nb; ++j)
          kappa[(size_t(e) * nb + j) * 2 + 1] =
              (0.10 + 0.0005 * e) * std::sin(2 * M_PI * (0.019 * j + 0.019 * k));
      gpu.set_natural_curvature(kappa.data());
      for (StepStatus st : gpu.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    }
    x[f].resize(size_t(B) * 3 * m->nnode);
    gpu.positions(x[f].data());
    std::printf("snake, %s: %d steps in %.2f s\n", gpu.solver_name().c_str(), steps,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  EXPECT_EQ(x[0], x[1]);
  EXPECT_EQ(x[1], x[2]);
}

// actions from device memory (ArrayPlace::kEngine: a torch tensor's pointer, here cudaMalloc's)
// give the bits of the same actions from the host; a NaN in one is an error naming its
// environment, and the batch goes on with the actions it had
TEST(CudaBatch, ActionsFromDeviceMemoryEqualActionsFromTheHost) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 32, nb = m->nbend;
  const size_t n = 2 * size_t(B) * nb;
  Real* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(Real)), cudaSuccess);
  std::vector<Real> x[2];
  for (int from_device = 0; from_device < 2; ++from_device) {
    BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized, BackendKind::kCuda);
    std::vector<Real> kappa(n, 0);
    for (int k = 0; k < 10; ++k) {
      for (int e = 0; e < B; ++e)
        for (int j = 0; j < nb; ++j)
          kappa[(size_t(e) * nb + j) * 2 + 1] = (0.1 + 0.001 * e) * std::sin(0.12 * j - 0.1 * k);
      if (from_device) {
        ASSERT_EQ(cudaMemcpy(dev, kappa.data(), n * sizeof(Real), cudaMemcpyHostToDevice),
                  cudaSuccess);
        gpu.set_natural_curvature(dev, BatchedSimulator::ArrayPlace::kEngine);
      } else {
        gpu.set_natural_curvature(kappa.data());
      }
      for (StepStatus st : gpu.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    }
    if (from_device) {  // a NaN in environment 7: refused, the last actions stay
      std::vector<Real> bad(n, 0.05);
      bad[(7 * size_t(nb) + 3) * 2] = std::nan("");
      ASSERT_EQ(cudaMemcpy(dev, bad.data(), n * sizeof(Real), cudaMemcpyHostToDevice), cudaSuccess);
      try {
        gpu.set_natural_curvature(dev, BatchedSimulator::ArrayPlace::kEngine);
        ADD_FAILURE() << "a NaN action was taken";
      } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("environment 7"), std::string::npos) << err.what();
      }
    }
    for (StepStatus st : gpu.step())  // (both with the last good actions)
      ASSERT_EQ(st, StepStatus::kConverged);
    x[from_device].resize(size_t(B) * 3 * m->nnode);
    gpu.positions(x[from_device].data());
  }
  cudaFree(dev);
  EXPECT_EQ(x[0], x[1]);
}

// the rods' natural stretch from device memory gives the bits of the same action from the host
// (and contracts the snake); a factor of 0 in one environment is refused on the device, naming it
TEST(CudaBatch, NaturalStretchFromDeviceMemoryEqualsTheHost) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 8, ne = m->nedge;
  const size_t n = size_t(B) * ne;
  std::vector<Real> s(n);
  for (int e = 0; e < B; ++e)
    for (int j = 0; j < ne; ++j)
      s[size_t(e) * ne + j] = 1 - 0.01 * e * (1 + std::sin(0.2 * j));
  Real* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(Real)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev, s.data(), n * sizeof(Real), cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<Real> x[2];
  for (int from_device = 0; from_device < 2; ++from_device) {
    BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized, BackendKind::kCuda);
    if (from_device)
      gpu.set_natural_stretch(dev, BatchedSimulator::ArrayPlace::kEngine);
    else
      gpu.set_natural_stretch(s.data());
    for (int k = 0; k < 10; ++k)
      for (StepStatus st : gpu.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    x[from_device].resize(size_t(B) * 3 * m->nnode);
    gpu.positions(x[from_device].data());
    if (from_device) {
      std::vector<Real> bad = s;
      bad[2 * size_t(ne) + 5] = 0;
      ASSERT_EQ(cudaMemcpy(dev, bad.data(), n * sizeof(Real), cudaMemcpyHostToDevice), cudaSuccess);
      try {
        gpu.set_natural_stretch(dev, BatchedSimulator::ArrayPlace::kEngine);
        ADD_FAILURE() << "a zero natural stretch was taken";
      } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("environment 2 are not positive"), std::string::npos)
            << err.what();
      }
    }
  }
  cudaFree(dev);
  EXPECT_EQ(x[0], x[1]);
  const size_t env = 3 * size_t(m->nnode);  // the environments differ: 0 and B - 1
  EXPECT_FALSE(std::equal(x[0].begin(), x[0].begin() + env, x[0].begin() + (B - 1) * env));
}

// the vectorized batch's Rayleigh stiffness damping, part alphas and per-part modulus factors on
// the device against the CPU's vectorized batch (which equals the per-environment engine bit for
// bit), 1e-9
TEST(CudaBatch, DampingPerPartMatchesTheCpuEngine) {
  const bool gpu = test::cuda_device_present();  // (the CPU half runs without one)
  for (const char* key : {"stiffness_proportional", "mass_proportional"}) {
    SCOPED_TRACE(key);
    const bool beta = std::string(key) == "stiffness_proportional";
    const auto m = build_model(read_scene_text(
        test::two_rods_with_damping(key, beta ? "0.003" : "30", beta ? "0.001" : "0"), "d.json",
        ""));
    const int B = 4;
    std::vector<Real> x[2];
    for (int dev = 0; dev < (gpu ? 2 : 1); ++dev) {
      BatchedSimulator b(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized, dev ? BackendKind::kCuda : BackendKind::kCpu);
      EnvParams p;
      p.youngs_scale = 1.5;
      b.set_params(1, p);
      const std::vector<Real> factors = {1, 1, 2, 0.5, 1, 3, 0.7, 1};  // (B x 2 parts)
      b.set_part_youngs_scale(factors.data());
      std::vector<Real> f(size_t(B) * 3 * m->nnode, 0);
      for (int e = 0; e < B; ++e)
        for (int tip : {10, 21})
          f[(size_t(e) * m->nnode + tip) * 3 + 2] = -0.01;
      b.set_external_forces(f.data());
      for (int k = 0; k < 40; ++k) {
        if (k == 10) b.clear_actions();
        for (StepStatus st : b.step())
          ASSERT_EQ(st, StepStatus::kConverged);
      }
      x[dev].resize(size_t(B) * 3 * m->nnode);
      b.positions(x[dev].data());
    }
    if (gpu) {
      EXPECT_LE(max_relative_difference(x[0], x[1]), 1e-9);
    }
  }
  if (!gpu) GTEST_SKIP() << "no CUDA device (the CPU half ran and converged)";
}

// the vectorized batch's Kelvin-Voigt damping on the device against the CPU's vectorized batch
// (which equals the per-environment engine bit for bit), 1e-9: two rods with their own eta under
// implicit Euler (z = y) and the midpoint rule (z and its frames of their own) at 1 ms, as in
// the CPU's test (at the scene's 10 ms the midpoint rule's Newton iterations on these thin rods
// do not converge, on the CPU either), and the scene's fingers and hinge flap (midpoint, its
// own step)
TEST(CudaBatch, KelvinVoigtMatchesTheCpuEngine) {
  const bool gpu = test::cuda_device_present();  // (the CPU half runs without one)
  const auto rods = build_model(
      read_scene_text(test::two_rods_with_damping("kelvin_voigt", "3e4", "1e4"), "kv.json", ""));
  const auto beams = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/viscoelastic_beams.json");
  struct Case {
    std::shared_ptr<const Model> m;
    IntegratorKind kind;
    std::vector<int> pushed;
  };
  const Case cases[] = {{rods, IntegratorKind::kImplicitEuler, {10, 21}},
                        {rods, IntegratorKind::kImplicitMidpoint, {10, 21}},
                        {beams, IntegratorKind::kImplicitMidpoint, {20, 41, beams->nnode - 1}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(integrator_name(c.kind)) + ", " + std::to_string(c.m->nnode) +
                 " nodes");
    ASSERT_TRUE(c.m->kelvin_voigt);
    IntegratorSpec spec = c.m->scene.integrator;
    if (c.m == rods && c.kind != IntegratorKind::kImplicitEuler) spec.dt = 1e-3;
    spec.kind = c.kind;
    const int B = 3;
    std::vector<Real> x[2];
    for (int dev = 0; dev < (gpu ? 2 : 1); ++dev) {
      BatchedSimulator b(c.m, B, spec, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                         dev ? BackendKind::kCuda : BackendKind::kCpu);
      EnvParams p;
      p.youngs_scale = 1.5;
      b.set_params(1, p);
      std::vector<Real> f(size_t(B) * 3 * c.m->nnode, 0);
      for (int e = 0; e < B; ++e)
        for (const int n : c.pushed)
          f[(size_t(e) * c.m->nnode + n) * 3 + 2] = -5e-3 * (e + 1);
      b.set_external_forces(f.data());
      for (int k = 0; k < 30; ++k) {
        if (k == 10) b.clear_actions();
        for (StepStatus st : b.step())
          ASSERT_EQ(st, StepStatus::kConverged);
      }
      x[dev].resize(size_t(B) * 3 * c.m->nnode);
      b.positions(x[dev].data());
    }
    if (gpu) {
      EXPECT_LE(max_relative_difference(x[0], x[1]), 1e-9);
    }
  }
  if (!gpu) GTEST_SKIP() << "no CUDA device (the CPU half ran and converged)";
}

// issue 53: the mid-edge shells' natural curvature as an action on the device against the CPU's
// vectorized batch, 1e-9: the PneuNet-like finger (apps/scenes/pneunet_curl.json, without its
// scene actuation), each environment raising its own curvature over the first steps (from the
// host, then from device memory); its clamped edges keep their frames (sedge_frame_fixed)
TEST(CudaBatch, MidEdgeCurvatureActionsMatchTheCpuEngine) {
  SLENDER_REQUIRE_GPU();
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/pneunet_curl.json");
  sc.backend = BackendKind::kCpu;
  sc.actuation.clear();
  const auto m = build_model(sc);
  const std::vector<Real> unit = midedge_curvature_components(*m, vec3(1, 0, 0));
  const int B = 3;
  const size_t n = size_t(B) * unit.size();
  Real* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(Real)), cudaSuccess);
  std::vector<Real> x[2];
  for (int on_gpu = 0; on_gpu < 2; ++on_gpu) {
    BatchedSimulator b(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       on_gpu ? BackendKind::kCuda : BackendKind::kCpu);
    std::vector<Real> c(n);
    for (int k = 0; k < 20; ++k) {
      const Real ramp = std::min(Real(1), Real(k + 1) / 10);
      for (int e = 0; e < B; ++e)
        for (size_t i = 0; i < unit.size(); ++i)
          c[e * unit.size() + i] = -10.0 * e * ramp * unit[i];
      if (on_gpu && k >= 10) {  // the second half from device memory
        ASSERT_EQ(cudaMemcpy(dev, c.data(), n * sizeof(Real), cudaMemcpyHostToDevice), cudaSuccess);
        b.set_natural_midedge_curvature(dev, BatchedSimulator::ArrayPlace::kEngine);
      } else {
        b.set_natural_midedge_curvature(c.data());
      }
      for (StepStatus st : b.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    }
    x[on_gpu].resize(size_t(B) * 3 * m->nnode);
    b.positions(x[on_gpu].data());
  }
  cudaFree(dev);
  // the fingers curled apart: environment 2's tip well above environment 0's
  const size_t tip = 3 * size_t(m->nnode - 1) + 2;
  EXPECT_GT(x[0][2 * 3 * size_t(m->nnode) + tip], x[0][tip] + 0.02);
  EXPECT_LE(max_relative_difference(x[0], x[1]), 1e-9);
}

TEST(CudaBatch, TwoVectorizedRunsAreBitIdentical) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 64, nb = m->nbend;
  std::vector<Real> x[2];
  for (int run = 0; run < 2; ++run) {
    BatchedSimulator gpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized, BackendKind::kCuda);
    std::vector<Real> kappa(2 * size_t(B) * nb, 0);
    for (int k = 0; k < 20; ++k) {
      for (int e = 0; e < B; ++e)
        for (int j = 0; j < nb; ++j)
          kappa[(size_t(e) * nb + j) * 2 + 1] = 0.02 * std::sin(0.2 * j - 0.06 * k * (1 + e));
      gpu.set_natural_curvature(kappa.data());
      gpu.step();
    }
    x[run].resize(size_t(B) * 3 * m->nnode);
    gpu.positions(x[run].data());
  }
  EXPECT_EQ(x[0], x[1]);
}

// an energy created in a file the host compiler built cannot run on the device: the step on
// CUDA is an error that names it and says why, and the state stays as it was
TEST(CudaUserEnergy, AnEnergyBuiltForTheHostIsRefusedOnTheDevice) {
  SLENDER_REQUIRE_GPU();
  SceneBuilder b;
  const int mat = b.material("m", 1200, 2e6, 0.5);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), 11, mat, SceneBuilder::circle(1e-3));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  const auto model =
      with_energies(build_model(b.build()),
                    {std::make_shared<BendTwistStrainEnergy<RodElasticStrainEnergy>>("host only")});
  Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  const std::vector<Real> q0 = gpu.state().q;
  try {
    gpu.step();
    ADD_FAILURE() << "the step ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("energy 'host only'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nvcc"), std::string::npos) << e.what();
  }
  EXPECT_EQ(gpu.state().q, q0);
}

// held DOFs per environment on the device (issue 53): a cantilever whose environments fix and
// release their own DOFs (env 1 pins its middle at step 5, env 2 lets go of its clamp at step
// 8 and clamps it again at step 20, every environment catches node 15 by the scene's event at
// t = 0.012 s), the vectorized batch on the GPU against the same engine on the CPU (which
// matches single runs, tests/physics/boundary_events_test.cpp); then every strain kind of a
// mid-edge plate with a rod, the device's reduction against the CPU's
TEST(CudaBatch, HeldDofsPerEnvironmentAndStrainsMatchTheCpuEngine) {
  SLENDER_REQUIRE_GPU();
  SceneBuilder b;
  const int mat = b.material("m", 1200, 5e6, 0.4);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0.05), 21, mat, SceneBuilder::circle(0.002));
  b.fix_edge(rod, 0);
  BoundaryEvent ev;
  ev.time = 0.012;
  ev.select.nodes.push_back(NodeRef{rod, 15, {}});
  b.event(ev);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  const std::vector<int> clamp = {0, 1, 2, 3, 4, 5, 3 * m->nnode};
  const int B = 3;
  BatchedSimulator vcpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized, BackendKind::kCpu);
  BatchedSimulator vgpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized, BackendKind::kCuda);
  for (int k = 0; k < 30; ++k) {
    for (BatchedSimulator* bs : {&vcpu, &vgpu}) {
      if (k == 5) bs->fix_dofs(1, {30, 31, 32});
      if (k == 8) bs->release_dofs(2, clamp);
      if (k == 20) bs->fix_dofs(2, clamp);
    }
    const std::vector<StepStatus> a = vcpu.step(), g = vgpu.step();
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a[e], StepStatus::kConverged);
      ASSERT_EQ(g[e], StepStatus::kConverged) << "env " << e << " step " << k;
    }
  }
  for (int e = 0; e < B; ++e)
    EXPECT_EQ(vcpu.dof_fixed(e), vgpu.dof_fixed(e)) << "env " << e;
  std::vector<Real> xa(size_t(B) * 3 * m->nnode), xb(xa.size());
  vcpu.positions(xa.data());
  vgpu.positions(xb.data());
  EXPECT_LE(max_relative_difference(xa, xb), 1e-9);
  // one Simulator on the device: env 2's release and clamp again (a new plan, the device
  // solver's analysis again, then the model's plan back) against the CPU's
  Simulator scpu(m, m->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCpu);
  Simulator sgpu(m, m->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int k = 0; k < 30; ++k) {
    for (Simulator* s : {&scpu, &sgpu}) {
      if (k == 8) s->release_dofs(clamp);
      if (k == 20) s->fix_dofs(clamp);
    }
    ASSERT_TRUE(scpu.step().ok());
    ASSERT_TRUE(sgpu.step().ok()) << "step " << k;
  }
  EXPECT_EQ(scpu.dof_fixed(), sgpu.dof_fixed());
  EXPECT_LE(max_relative_difference(scpu.state().q, sgpu.state().q), 1e-9);
  // strains on the device: a mid-edge plate with a rod after a few steps, one environment
  const auto pm = build_model(test::midedge_plate_with_rod(false, true));
  Simulator cpu(pm, pm->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCpu);
  Simulator gpu(pm, pm->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int k = 0; k < 5; ++k) {
    ASSERT_TRUE(cpu.step().ok());
    ASSERT_TRUE(gpu.step().ok());
  }
  for (const StrainKind kind : {StrainKind::kStretch, StrainKind::kBendTwist,
                                StrainKind::kHingeAngle, StrainKind::kShapeOperator}) {
    const std::vector<Real> sa = cpu.strains(kind), sg = gpu.strains(kind);
    ASSERT_EQ(sa.size(), sg.size());
    if (!sa.empty()) {
      EXPECT_LE(max_relative_difference(sa, sg), 1e-9) << int(kind);
    }
  }
}

// issue 49, item 2 on the device: the vectorized batch's GPU memory estimated
// (BatchedSimulator::memory_estimate's device figures) within 0.5x to 2x of the drop of the
// device's free memory for 4096 snakes in use (the tolerance of the host's test,
// tests/physics/batch_memory_test.cpp; the libraries' handles and workspaces, a few tens of MiB,
// sit beside a batch of about 1 GiB), and a batch of more environments than the free memory
// holds refused within a second, naming the GPU (the host's limit lifted so that the device's
// decides)
TEST(CudaBatch, DeviceMemoryIsEstimatedAndABatchTooLargeIsRefused) {
  SLENDER_REQUIRE_GPU();
  const auto m = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json");
  const int B = 4096;
  const BatchMemory need =
      BatchedSimulator::memory_estimate(*m, B, m->scene.integrator, LinearSolverKind::kAuto,
                                        BatchEngine::kVectorized, BackendKind::kCuda);
  ASSERT_GT(need.device_per_env, 0);
  size_t free0 = 0, total = 0, free1 = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  {
    BatchedSimulator b(m, B, m->scene.integrator, LinearSolverKind::kAuto, BatchEngine::kVectorized,
                       BackendKind::kCuda);
    for (int e = 0; e < B; ++e) {
      EnvParams p;
      p.youngs_scale = 1 + 1e-4 * e;
      b.set_params(e, p);
    }
    std::vector<Real> f(size_t(B) * 3 * m->nnode, 0.0), k(size_t(B) * 3 * m->nbend);
    b.set_external_forces(f.data());
    for (int i = 0; i < 2; ++i)
      b.step();
    b.positions(f.data());
    b.curvatures(k.data());
    ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
    const double used = double(free0) - double(free1);
    std::printf(
        "%d snakes on the GPU: estimated %.1f MB, the free memory fell by %.1f MB (%.2fx)\n", B,
        need.device(B) / 1e6, used / 1e6, need.device(B) / used);
    EXPECT_GE(need.device(B), 0.5 * used);
    EXPECT_LE(need.device(B), 2.0 * used);
  }
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  const double n = std::min(2e9, 1.5 * double(free1) / need.device_per_env + 1000);
  setenv("SLENDER_MEMORY_LIMIT", "1000T", 1);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    BatchedSimulator b(m, int(n), m->scene.integrator, LinearSolverKind::kAuto,
                       BatchEngine::kVectorized, BackendKind::kCuda);
    ADD_FAILURE() << "a batch larger than the GPU's free memory was built";
  } catch (const MemoryLimitError& e) {
    const std::string msg = e.what();
    std::printf("refused: %s\n", msg.c_str());
    EXPECT_NE(msg.find("on the GPU needs about"), std::string::npos) << msg;
    EXPECT_NE(msg.find("free on the CUDA device"), std::string::npos) << msg;
    EXPECT_NE(msg.find("environments fit"), std::string::npos) << msg;
  }
  unsetenv("SLENDER_MEMORY_LIMIT");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
