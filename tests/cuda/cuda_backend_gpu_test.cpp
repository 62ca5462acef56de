// The CUDA backend against the CPU backend (label gpu; every case skips without a device).
// V8: every scene of apps/scenes and bench/scenes, 50 steps on both backends from the same
// start, states within 1e-9 relative (the largest DOF difference over the largest DOF value);
// determinism (two device runs bit-identical); the device PCG and cuSOLVER paths give the same
// Newton iterates; a failed device step leaves the state as it was.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu_models.h"
#include "gpu_test_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/simulator.h"

namespace slender {
namespace {

std::vector<std::string> all_scenes() {
  std::vector<std::string> out;
  for (const char* dir : {"/apps/scenes", "/bench/scenes"}) {
    for (const auto& e : std::filesystem::directory_iterator(std::string(SLENDER_SOURCE_DIR) + dir))
      if (e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::shared_ptr<const Model> load(const std::string& path) {
  SceneSpec sc = read_scene_file(path);
  sc.backend = BackendKind::kCpu;
  return build_model(sc);
}

TEST(CudaBackendV8, EverySceneMatchesTheCpuOver50Steps) {
  SLENDER_REQUIRE_GPU();
  constexpr Real kTol = 1e-9;
  for (const std::string& path : all_scenes()) {
    SCOPED_TRACE(path);
    const auto model = load(path);
    const CompareResult r = compare_backends(model, 50, LinearSolverKind::kAuto, false);
    ASSERT_TRUE(r.cuda.available) << r.cuda.error;
    EXPECT_EQ(r.cpu.steps, r.cuda.steps) << r.cpu.error << " / " << r.cuda.error;
    EXPECT_EQ(r.cpu.ok, r.cuda.ok) << r.cpu.error << " / " << r.cuda.error;
    EXPECT_LE(r.q_rel_diff, kTol);
    EXPECT_LE(r.u_rel_diff, kTol);
    std::printf("V8 %-40s steps %3ld  newton cpu %5ld cuda %5ld  dq %.2e du %.2e  (%s)\n",
                std::filesystem::path(path).filename().c_str(), r.cuda.steps,
                r.cpu.times.newton_iters, r.cuda.times.newton_iters, r.q_rel_diff, r.u_rel_diff,
                r.cuda.solver.c_str());
  }
}

// a scene with contact, friction and the ground: two device runs give the same bits
TEST(CudaBackend, TwoRunsAreBitIdentical) {
  SLENDER_REQUIRE_GPU();
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/gripper.json");
  std::vector<Real> q[2], u[2];
  for (int run = 0; run < 2; ++run) {
    Simulator sim(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    for (int k = 0; k < 20; ++k)
      ASSERT_TRUE(sim.step().ok()) << "step " << k;
    q[run] = sim.state().q;
    u[run] = sim.state().u;
  }
  EXPECT_EQ(q[0], q[1]);
  EXPECT_EQ(u[0], u[1]);
}

// phase timing only adds synchronizations: the same states
TEST(CudaBackend, PhaseTimingDoesNotChangeResults) {
  SLENDER_REQUIRE_GPU();
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s3_helix_e1e7.json");
  std::vector<Real> q[2];
  for (int run = 0; run < 2; ++run) {
    Simulator sim(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    sim.set_phase_timing(run == 1);
    for (int k = 0; k < 10; ++k)
      ASSERT_TRUE(sim.step().ok());
    q[run] = sim.state().q;
    if (run == 1) {
      EXPECT_GT(sim.phase_times().assemble, 0);
    }
  }
  EXPECT_EQ(q[0], q[1]);
}

// the device PCG reaches the same Newton iterates as the direct solve, to solver tolerance
TEST(CudaBackend, PcgAndCholeskyGiveTheSameNewtonIterates) {
  SLENDER_REQUIRE_GPU();
  for (const char* name :
       {"/bench/scenes/s1_cantilever_e1e5.json", "/apps/scenes/parachute.json"}) {
    SCOPED_TRACE(name);
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + name);
    if (model->nonsymmetric()) continue;  // CG needs a symmetric Jacobian
    Simulator direct(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    Simulator pcg(model, model->scene.integrator, LinearSolverKind::kPcg, BackendKind::kCuda);
    EXPECT_EQ(pcg.linear_solver_name(), "cuda-pcg");
    for (int k = 0; k < 10; ++k) {
      const StepReport a = direct.step(), b = pcg.step();
      ASSERT_TRUE(a.ok() && b.ok()) << "step " << k;
      EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
    }
    EXPECT_LE(max_relative_difference(direct.state().q, pcg.state().q), 1e-9);
  }
}

// a step that cannot converge leaves the device state exactly as it was, as on the CPU
TEST(CudaBackend, FailedStepLeavesTheStateUntouched) {
  SLENDER_REQUIRE_GPU();
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s3_helix_e1e7.json");
  IntegratorSpec spec = model->scene.integrator;
  spec.newton.max_iters = 1;
  spec.newton.abs_tol = 0;
  spec.newton.rel_tol = 0;
  spec.newton.step_tol = 0;
  Simulator gpu(model, spec, LinearSolverKind::kAuto, BackendKind::kCuda);
  Simulator cpu(model, spec);
  const State before = gpu.state();
  const StepReport rg = gpu.step(), rc = cpu.step();
  EXPECT_FALSE(rg.ok());
  EXPECT_EQ(rg.status, rc.status);
  EXPECT_EQ(gpu.state().q, before.q);
  EXPECT_EQ(gpu.state().u, before.u);
  EXPECT_EQ(gpu.state().edge_d1, before.edge_d1);
  EXPECT_EQ(gpu.state().time, before.time);
}

// set_state on the device and the energies computed from the downloaded state
TEST(CudaBackend, SetStateRoundTripsAndQueriesSeeTheDeviceState) {
  SLENDER_REQUIRE_GPU();
  const auto model =
      load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s1_cantilever_e1e5.json");
  Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  Simulator cpu(model);
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(gpu.step().ok());
    ASSERT_TRUE(cpu.step().ok());
  }
  const Energies eg = gpu.energies(), ec = cpu.energies();
  EXPECT_NEAR(eg.total(), ec.total(), 1e-9 * std::max(1.0, std::fabs(ec.total())));
  gpu.set_state(cpu.state());
  EXPECT_EQ(gpu.state().q, cpu.state().q);
  ASSERT_TRUE(gpu.step().ok());
  ASSERT_TRUE(cpu.step().ok());
  EXPECT_LE(max_relative_difference(cpu.state().q, gpu.state().q), 1e-12);
}

// per-simulator parameters on the device (set_params) against the CPU backend with the same
// parameters: a rod dropped on the ground with friction (the friction change turns the solve
// non-symmetric), and the rod-shell contact scene (contact found on the device) stiffened
TEST(CudaBackend, ParametersMatchTheCpu) {
  SLENDER_REQUIRE_GPU();
  struct Case {
    const char* scene;
    int steps;
    EnvParams p;
  };
  EnvParams drop;
  drop.youngs_scale = 0.5;
  drop.density_scale = 2;
  drop.ground_friction = 0.6;
  drop.override_gravity = true;
  drop.gravity = Vec3{{0.5, 0, -5}};
  drop.mass_damping = 0.3;
  EnvParams plate;
  plate.youngs_scale = 2;
  plate.density_scale = 0.8;
  for (const Case& c : {Case{"rod_drop.json", 60, drop}, Case{"plate_contact.json", 60, plate}}) {
    SCOPED_TRACE(c.scene);
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + c.scene);
    Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    Simulator cpu(model);
    gpu.set_params(c.p);
    cpu.set_params(c.p);
    for (int k = 0; k < c.steps; ++k) {
      const StepReport rg = gpu.step(), rc = cpu.step();
      ASSERT_EQ(rg.ok(), rc.ok()) << "step " << k;
      ASSERT_EQ(rg.iterations, rc.iterations) << "step " << k;
    }
    EXPECT_LE(max_relative_difference(cpu.state().q, gpu.state().q), 1e-9);
    EXPECT_LE(max_relative_difference(cpu.state().u, gpu.state().u), 1e-9);
  }
}

// the PCG path with contact assembles the contact part on the device (J = J_static + J_c, no
// host plan): the rod-shell / shell-shell scene with PCG forced (120 steps: the plate catches the
// rod and the tile), against the CPU's direct solve; PCG stops at 1e-12 relative, so the states
// agree to 1e-8
TEST(CudaBackend, PcgWithDeviceContactAssemblyMatchesTheCpu) {
  SLENDER_REQUIRE_GPU();
  {
    const char* scene = "plate_contact.json";
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + scene);
    Simulator gpu(model, model->scene.integrator, LinearSolverKind::kPcg, BackendKind::kCuda);
    Simulator cpu(model);
    EXPECT_EQ(gpu.linear_solver_name(), "cuda-pcg");
    for (int k = 0; k < 120; ++k) {
      const StepReport rg = gpu.step(), rc = cpu.step();
      ASSERT_TRUE(rg.ok() && rc.ok()) << "step " << k;
      EXPECT_EQ(rg.iterations, rc.iterations) << "step " << k;
    }
    EXPECT_LE(max_relative_difference(cpu.state().q, gpu.state().q), 1e-8);
    EXPECT_LE(max_relative_difference(cpu.state().u, gpu.state().u), 1e-7);
  }
}

// host evaluations between device steps (residual() with another dt finds its own pairs on the
// host; reactions()) leave the device's steps as they were: the same states as a CPU run that
// makes the same calls (direct path) and as the PCG path's
TEST(CudaBackend, HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone) {
  SLENDER_REQUIRE_GPU();
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/plate_contact.json");
  const Real dt = model->scene.integrator.dt;
  for (LinearSolverKind kind : {LinearSolverKind::kAuto, LinearSolverKind::kPcg}) {
    Simulator gpu(model, model->scene.integrator, kind, BackendKind::kCuda);
    Simulator cpu(model);
    std::vector<Real> f, fc;
    for (int k = 0; k < 120; ++k) {
      if (k % 10 == 5) {
        gpu.residual(5 * dt, gpu.state().q, f, nullptr);
        cpu.residual(5 * dt, cpu.state().q, fc, nullptr);
        EXPECT_LE(max_relative_difference(fc, f), 1e-8) << "step " << k;
        const std::vector<Real> rg = gpu.reactions(), rc = cpu.reactions();
        EXPECT_LE(max_relative_difference(rc, rg), 1e-8) << "step " << k;
      }
      ASSERT_TRUE(gpu.step().ok()) << "step " << k;
      ASSERT_TRUE(cpu.step().ok()) << "step " << k;
    }
    EXPECT_LE(max_relative_difference(cpu.state().q, gpu.state().q), 1e-8);
  }
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

// prescribed motion by the caller's targets on the device: a cantilever whose clamped end moves
// up and down and turns, single simulators on both backends and vectorized batches (four
// environments with their own paths) on both backends; the scene's own motions run in V8
// (rod_twist.json)
TEST(CudaBackend, FixedTargetsMatchTheCpu) {
  SLENDER_REQUIRE_GPU();
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  b.integrator().dt = 2e-3;
  const auto m = build_model(b.build());
  const size_t nf = m->fixed_dof.size();
  const int B = 4, steps = 40;
  auto targets = [&](int e, int s) {
    std::vector<Real> out(nf);
    const Real t = (s + 1) * m->scene.integrator.dt;
    for (size_t j = 0; j < nf; ++j) {
      const int dof = m->fixed_dof[j];
      const bool node = dof < 3 * m->nnode;
      out[j] = (node ? m->node_x0[size_t(dof)] : 0) +
               (node && dof % 3 == 2 ? 0.01 * (e + 1) * std::sin(40 * t) : 0) +
               (node ? 0 : 0.5 * e * t);
    }
    return out;
  };
  Simulator cpu(m), gpu(m, m->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  BatchedSimulator vcpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized, BackendKind::kCpu);
  BatchedSimulator vgpu(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized, BackendKind::kCuda);
  std::vector<Real> all(size_t(B) * nf);
  for (int s = 0; s < steps; ++s) {
    cpu.set_fixed_targets(targets(1, s));
    gpu.set_fixed_targets(targets(1, s));
    ASSERT_TRUE(cpu.step().ok());
    ASSERT_TRUE(gpu.step().ok()) << "step " << s;
    for (int e = 0; e < B; ++e) {
      const std::vector<Real> t = targets(e, s);
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
  EXPECT_LE(max_relative_difference(cpu.state().q, gpu.state().q), 1e-9);
  EXPECT_LE(max_relative_difference(cpu.state().u, gpu.state().u), 1e-7);
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
// same with drag)
TEST(CudaBatch, FactorizationsOnWarpsAndOnThreadsGiveTheSameBits) {
  SLENDER_REQUIRE_GPU();
  struct Case {
    const char* name;
    std::shared_ptr<const Model> m;
    const char* solver;
  };
  const Case cases[] = {
      {"snake", load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"), "banded-lu"},
      {"plate", build_model(test::midedge_plate_with_rod(false, true)), "dense-cholesky"},
      {"plate-drag", build_model(test::midedge_plate_with_rod(true, true)), "dense-lu"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Model& m = *c.m;
    const int B = 48, nb = m.nbend;
    const bool waves = std::string(c.name) == "snake";
    std::vector<Real> x[2];
    for (int lanes = 0; lanes < 2; ++lanes) {
      setenv("SLENDER_BATCH_LANES", lanes ? "1" : "0", 1);
      BatchedSimulator gpu(c.m, B, m.scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kVectorized, BackendKind::kCuda);
      unsetenv("SLENDER_BATCH_LANES");
      EXPECT_EQ(gpu.solver_name(), std::string(c.solver) + (lanes ? "-lanes" : ""));
      for (int e = 0; e < B; ++e) {
        EnvParams p;
        p.youngs_scale = 1 + 0.02 * e;
        gpu.set_params(e, p);
      }
      std::vector<Real> kappa(2 * size_t(B) * nb, 0);
      for (int k = 0; k < 20; ++k) {
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
    }
    EXPECT_EQ(x[0], x[1]);
  }
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

}  // namespace
}  // namespace slender
