// The engine (include/slender/engine/simulator_engine_on.h) on its two executors. The CUDA one (the
// CUDA backend; skipped where no device is visible) against the host one (the CPU backend): V8,
// every scene of apps/scenes and bench/scenes, 50 steps on both backends from the same start,
// states within 1e-9 relative: q as the largest DOF difference over the largest |q|, and u as
// one step's displacement (u dt) over the largest |q| (compare.h: velocities of a body at rest
// are roundoff over dt, and relative to their own size even the CPU's two direct solvers
// disagree on them by 10x on S6 at E = 1e7); parameters, prescribed motion and dashpots against
// the CPU. On both executors (in the CUDA one's place on a machine without a GPU the host
// executor on guarded memory, tests/guarded_executor.h: the CUDA executor's choices and memory
// contract, kHostMemory false and X's memory unreadable on the host outside its calls, so that
// the CUDA backend's front-end path and the engine's device paths run too; the same bits as the
// CPU backend, and V8 on every scene over 15 steps): determinism (two runs bit-identical); the
// iterative path (CG, BiCGSTAB, the contact part assembled on the executor) gives the direct path's
// Newton iterates; a failed step leaves the state as it was; fallbacks are counted.
// SLENDER_TEST_MAX_STEPS caps the step counts (for the sanitizers).

#include "slender/engine/simulator_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "guarded_executor.h"
#include "physics/physics_util.h"
#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/engine/amg.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

enum class Executor { kGuarded, kCuda };

// BackendKind::kCuda makes the executor's stepper: the guarded one is put in the CUDA one's place
// for the test's duration
class SimulatorEngine : public ::testing::TestWithParam<Executor> {
 protected:
  void SetUp() override {
    if (GetParam() == Executor::kCuda) {
      if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    } else {
      previous_ = set_simulator_engine_maker(&make_guarded_simulator_engine);
      replaced_ = true;
    }
  }
  void TearDown() override {
    if (replaced_) set_simulator_engine_maker(previous_);
  }
  std::string pcg_name() const { return GetParam() == Executor::kCuda ? "cuda-pcg" : "pcg"; }
  std::string bicgstab_name() const {
    return GetParam() == Executor::kCuda ? "cuda-bicgstab" : "bicgstab";
  }
  // the guarded engine runs the CPU backend's arithmetic: its results are the CPU's bit for bit
  bool against_itself() const { return GetParam() == Executor::kGuarded; }

 private:
  SimulatorEngineMaker previous_ = nullptr;
  bool replaced_ = false;
};

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

// SLENDER_TEST_MAX_STEPS caps every case's step count (test::capped_steps): the checks that
// something happened over the full run, a dashpot or a fallback, are then left out
bool capped() { return test::steps_capped(); }
int steps(int n) { return test::capped_steps(n); }

TEST_P(SimulatorEngine, EverySceneMatchesTheCpuOver50Steps) {
  constexpr Real kTol = 1e-9;
  // (on guarded memory, whose bits are the CPU's, 15 steps reach every scene's code paths)
  const int n = against_itself() ? std::min(steps(50), 15) : steps(50);
  for (const std::string& path : all_scenes()) {
    SCOPED_TRACE(path);
    const auto model = load(path);
    const CompareResult r = compare_backends(model, n, LinearSolverKind::kAuto, false);
    ASSERT_TRUE(r.cuda.available) << r.cuda.error;
    EXPECT_EQ(r.cpu.steps, r.cuda.steps) << r.cpu.error << " / " << r.cuda.error;
    EXPECT_EQ(r.cpu.ok, r.cuda.ok) << r.cpu.error << " / " << r.cuda.error;
    EXPECT_LE(r.q_rel_diff, kTol);
    EXPECT_LE(r.u_step_rel_diff, kTol);
    std::printf("V8 %-40s steps %3ld  newton cpu %5ld dev %5ld  dq %.2e du %.2e du.dt %.2e (%s)\n",
                std::filesystem::path(path).filename().c_str(), r.cuda.steps,
                r.cpu.times.newton_iters, r.cuda.times.newton_iters, r.q_rel_diff, r.u_rel_diff,
                r.u_step_rel_diff, r.cuda.solver.c_str());
  }
}

// a scene with contact, friction and the ground: two device runs give the same bits
TEST_P(SimulatorEngine, TwoRunsAreBitIdentical) {
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/gripper.json");
  std::vector<Real> q[2], u[2];
  for (int run = 0; run < 2; ++run) {
    Simulator sim(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    for (int k = 0; k < steps(20); ++k)
      ASSERT_TRUE(sim.step().ok()) << "step " << k;
    q[run] = sim.state().q;
    u[run] = sim.state().u;
  }
  EXPECT_EQ(q[0], q[1]);
  EXPECT_EQ(u[0], u[1]);
}

// phase timing only adds synchronizations: the same states
TEST_P(SimulatorEngine, PhaseTimingDoesNotChangeResults) {
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s3_helix_e1e7.json");
  std::vector<Real> q[2];
  for (int run = 0; run < 2; ++run) {
    Simulator sim(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    sim.set_phase_timing(run == 1);
    for (int k = 0; k < steps(10); ++k)
      ASSERT_TRUE(sim.step().ok());
    q[run] = sim.state().q;
    if (run == 1) {
      EXPECT_GT(sim.phase_times().assemble, 0);
    }
  }
  EXPECT_EQ(q[0], q[1]);
}

// the device PCG reaches the same Newton iterates as the direct solve, to solver tolerance
TEST_P(SimulatorEngine, PcgAndCholeskyGiveTheSameNewtonIterates) {
  for (const char* name :
       {"/bench/scenes/s1_cantilever_e1e5.json", "/apps/scenes/parachute.json"}) {
    SCOPED_TRACE(name);
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + name);
    if (model->nonsymmetric()) continue;  // CG needs a symmetric Jacobian
    // (and so the pointwise stretching of S1's midpoint rule: its energy-momentum form is not)
    IntegratorSpec spec = model->scene.integrator;
    spec.energy_consistent = false;
    Simulator direct(model, spec, LinearSolverKind::kAuto, BackendKind::kCuda);
    Simulator pcg(model, spec, LinearSolverKind::kPcg, BackendKind::kCuda);
    EXPECT_EQ(pcg.linear_solver_name(), pcg_name());
    for (int k = 0; k < steps(10); ++k) {
      const StepReport a = direct.step(), b = pcg.step();
      ASSERT_TRUE(a.ok() && b.ok()) << "step " << k;
      EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
    }
    EXPECT_LE(max_relative_difference(direct.state().q, pcg.state().q), 1e-9);
  }
}

// the multigrid-preconditioned CG (its V-cycle on the executor, its hierarchy built on the host
// from the executor's matrix: two levels on the cloth's 630 free DOFs) reaches the direct
// solve's Newton iterates, to solver tolerance
TEST_P(SimulatorEngine, AmgAndCholeskyGiveTheSameNewtonIterates) {
  for (const char* name : {"/apps/scenes/cloth_drop.json", "/apps/scenes/parachute.json"}) {
    SCOPED_TRACE(name);
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + name);
    if (model->nonsymmetric()) continue;  // CG needs a symmetric Jacobian
    ASSERT_GT(model->plan.nfree, kAmgCoarsest);
    Simulator direct(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    Simulator amg(model, model->scene.integrator, LinearSolverKind::kAmg, BackendKind::kCuda);
    EXPECT_EQ(amg.linear_solver_name(), pcg_name() + "-amg");
    for (int k = 0; k < steps(10); ++k) {
      const StepReport a = direct.step(), b = amg.step();
      ASSERT_TRUE(a.ok() && b.ok()) << "step " << k;
      EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
    }
    EXPECT_LE(max_relative_difference(direct.state().q, amg.state().q), 1e-9);
    EXPECT_EQ(amg.state().warn_linear_fallback, 0);
  }
}

// a step that cannot converge leaves the device state exactly as it was, as on the CPU
TEST_P(SimulatorEngine, FailedStepLeavesTheStateUntouched) {
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
TEST_P(SimulatorEngine, SetStateRoundTripsAndQueriesSeeTheDeviceState) {
  const auto model =
      load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s1_cantilever_e1e5.json");
  Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  Simulator cpu(model);
  for (int k = 0; k < steps(3); ++k) {
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

// The queries of the state (engine/engine_queries.h: energies, reactions, the shells' bending
// energy density, Newmark's initial acceleration), each a reduction on the executor, against
// the CPU backend: on the CUDA executor within 1e-9 of the largest value, on the host executor
// (the CUDA backend's front-end path) bit for bit. Scenes: an actuated limb with twist (the
// bend-twist split), a cloth (hinges, membranes), a pinned rod (reactions against gravity),
// Newmark's helix (its initial acceleration), the gripper (contact between bodies in the
// reactions), the balloon (a pressure's potential)
TEST_P(SimulatorEngine, QueriesMatchTheCpu) {
  for (const char* name : {"/apps/scenes/sma_limb.json", "/apps/scenes/cloth_drop.json",
                           "/apps/scenes/rod_pin.json", "/bench/scenes/s3_helix_e1e7_newmark.json",
                           "/apps/scenes/gripper.json", "/apps/scenes/balloon_inflate.json"}) {
    SCOPED_TRACE(name);
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + name);
    Simulator gpu(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    Simulator cpu(model);
    auto same = [&](const std::vector<Real>& a, const std::vector<Real>& b, const char* what) {
      ASSERT_EQ(a.size(), b.size()) << what;
      if (against_itself()) {
        EXPECT_EQ(a, b) << what;
      } else {
        Real scale = 0, diff = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          scale = std::max(scale, std::fabs(b[i]));
          diff = std::max(diff, std::fabs(a[i] - b[i]));
        }
        // (values below 1e-20 are the rounding of a zero: a flat shell's bending density at
        // rest came out 6e-34 on an H200)
        EXPECT_LE(diff, 1e-9 * scale + 1e-20) << what;
      }
    };
    auto fields = [](const Energies& e) {
      return std::vector<Real>{e.kinetic, e.stretch, e.bend, e.twist, e.gravity, e.user, e.load};
    };
    const int n = std::min(steps(4), 4);
    for (int k = 0; k <= n; ++k) {
      SCOPED_TRACE("after " + std::to_string(2 * k) + " steps");
      same(gpu.state().a, cpu.state().a, "a");
      same(fields(gpu.energies()), fields(cpu.energies()), "energies");
      same(gpu.reactions(), cpu.reactions(), "reactions");
      same(gpu.shell_bending_energy_density(), cpu.shell_bending_energy_density(), "density");
      if (k == n) break;
      for (int s = 0; s < 2; ++s) {
        ASSERT_TRUE(gpu.step().ok());
        ASSERT_TRUE(cpu.step().ok());
      }
    }
  }
}

// per-simulator parameters on the device (set_params) against the CPU backend with the same
// parameters: a rod dropped on the ground with friction (the friction change turns the solve
// non-symmetric), and the rod-shell contact scene (contact found on the device) stiffened
TEST_P(SimulatorEngine, ParametersMatchTheCpu) {
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
    for (int k = 0; k < steps(c.steps); ++k) {
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
TEST_P(SimulatorEngine, PcgWithDeviceContactAssemblyMatchesTheCpu) {
  {
    const char* scene = "plate_contact.json";
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + scene);
    Simulator gpu(model, model->scene.integrator, LinearSolverKind::kPcg, BackendKind::kCuda);
    Simulator cpu(model);
    EXPECT_EQ(gpu.linear_solver_name(), pcg_name());
    for (int k = 0; k < steps(120); ++k) {
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
TEST_P(SimulatorEngine, HostEvaluationsBetweenStepsLeaveTheDeviceStepsAlone) {
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/plate_contact.json");
  const Real dt = model->scene.integrator.dt;
  for (LinearSolverKind kind : {LinearSolverKind::kAuto, LinearSolverKind::kPcg}) {
    Simulator gpu(model, model->scene.integrator, kind, BackendKind::kCuda);
    Simulator cpu(model);
    std::vector<Real> f, fc;
    for (int k = 0; k < steps(120); ++k) {
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

// prescribed motion by the caller's targets on the stepper: a cantilever whose clamped end
// moves up and down and turns, against the CPU backend; the scene's own motions run in V8
// (rod_twist.json)
TEST_P(SimulatorEngine, FixedTargetsMatchTheCpu) {
  const auto m = test::clamped_rod_for_targets(IntegratorKind::kImplicitMidpoint, true);
  Simulator cpu(m), dev(m, m->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
  for (int s = 0; s < steps(40); ++s) {
    cpu.set_fixed_targets(test::clamp_targets(*m, 1, s));
    dev.set_fixed_targets(test::clamp_targets(*m, 1, s));
    ASSERT_TRUE(cpu.step().ok());
    ASSERT_TRUE(dev.step().ok()) << "step " << s;
  }
  EXPECT_LE(max_relative_difference(cpu.state().q, dev.state().q), 1e-9);
  EXPECT_LE(max_relative_difference(cpu.state().u, dev.state().u), 1e-7);
}

// CG that does not converge falls back to the direct path and is counted as a linear fallback
// on both: the twisted rod with PCG forced, where CG needs more than n iterations for 1e-12 in
// every Newton iteration, and the direct path (the merged one once contact sets in) takes over.
// Before, the CPU counted only fallbacks at the factorization, not those in the solve, and the
// stepper only those with contact.
TEST_P(SimulatorEngine, LinearFallbacksAreCountedAsOnTheCpu) {
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rod_twist.json");
  ASSERT_FALSE(model->nonsymmetric());
  Simulator dev(model, model->scene.integrator, LinearSolverKind::kPcg, BackendKind::kCuda);
  Simulator cpu(model, model->scene.integrator, LinearSolverKind::kPcg);
  for (int k = 0; k < steps(25); ++k) {
    const StepReport a = dev.step(), b = cpu.step();
    ASSERT_TRUE(a.ok() && b.ok()) << "step " << k;
    EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
  }
  if (!capped()) {
    EXPECT_GT(cpu.state().warn_linear_fallback, 0);
  }
  EXPECT_EQ(dev.state().warn_linear_fallback, cpu.state().warn_linear_fallback);
  EXPECT_LE(max_relative_difference(cpu.state().q, dev.state().q), 1e-9);
  // the CG iterations are counted in the phase times, alike (within 5 %: a device's sums may
  // end a solve an iteration sooner or later)
  const double it_cpu = double(cpu.phase_times().linear_iters);
  EXPECT_GT(it_cpu, 0);
  EXPECT_NEAR(double(dev.phase_times().linear_iters), it_cpu, 0.05 * it_cpu);
}

// non-symmetric Jacobians (ground friction, aerodynamic drag, contact friction) on the iterative
// path take preconditioned BiCGSTAB: the same Newton iterates as the CPU's sparse LU. The rod on
// the ground and the parachute converge without a fallback; the gripper (contact friction, J_c
// assembled on the executor) falls back to the merged direct solve where BiCGSTAB breaks down
TEST_P(SimulatorEngine, NonSymmetricJacobiansTakeBicgstab) {
  struct Case {
    const char* scene;
    int steps;
    bool no_fallback;
  };
  for (const Case& c : {Case{"rod_drop.json", 60, true}, Case{"parachute.json", 60, true},
                        Case{"gripper.json", 30, false}}) {
    SCOPED_TRACE(c.scene);
    const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + c.scene);
    ASSERT_TRUE(model->nonsymmetric());
    Simulator dev(model, model->scene.integrator, LinearSolverKind::kPcg, BackendKind::kCuda);
    Simulator cpu(model);
    EXPECT_EQ(dev.linear_solver_name(), bicgstab_name());
    for (int k = 0; k < steps(c.steps); ++k) {
      const StepReport a = dev.step(), b = cpu.step();
      ASSERT_TRUE(a.ok() && b.ok()) << "step " << k;
      EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
    }
    if (c.no_fallback) {
      EXPECT_EQ(dev.state().warn_linear_fallback, 0);
    }
    EXPECT_LE(max_relative_difference(cpu.state().q, dev.state().q), 1e-9);
    EXPECT_LE(max_relative_difference(cpu.state().u, dev.state().u), 1e-7);
  }
}

// ground friction switched on by set_params on the iterative path with contact assembled on the
// executor (the cloth with self-contact): BiCGSTAB from then on (this used to be an error)
TEST_P(SimulatorEngine, FrictionSwitchedOnTurnsTheIterativePathToBicgstab) {
  const auto model = load(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/cloth_drop.json");
  ASSERT_FALSE(model->nonsymmetric());
  Simulator dev(model, model->scene.integrator, LinearSolverKind::kPcg, BackendKind::kCuda);
  Simulator cpu(model);
  EXPECT_EQ(dev.linear_solver_name(), pcg_name());
  EnvParams p;
  p.ground_friction = 0.5;
  dev.set_params(p);
  cpu.set_params(p);
  EXPECT_EQ(dev.linear_solver_name(), bicgstab_name());
  for (int k = 0; k < steps(40); ++k) {
    const StepReport a = dev.step(), b = cpu.step();
    ASSERT_TRUE(a.ok() && b.ok()) << "step " << k;
    EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
  }
  EXPECT_LE(max_relative_difference(cpu.state().q, dev.state().q), 1e-9);
}

// the normal dashpots (contact_damping.h, restitution < 1) on the executor: the contact pairs'
// (rod-shell and shell-shell, with each node's mass) on plate_contact, and the ground's (with the
// automatic per-node stiffness k_per_kg) on spider_incline; 60 steps against the CPU backend to
// V8's 1e-9, and against the same scene without dashpots to show that they acted (> 1e-6)
TEST_P(SimulatorEngine, DashpotsMatchTheCpu) {
  for (const char* name : {"plate_contact.json", "spider_incline.json"}) {
    SCOPED_TRACE(name);
    SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name);
    sc.backend = BackendKind::kCpu;
    const auto elastic = build_model(sc);
    sc.contact.restitution = 0.3;
    sc.forces.ground.restitution = 0.3;
    const auto model = build_model(sc);
    Simulator dev(model, model->scene.integrator, LinearSolverKind::kAuto, BackendKind::kCuda);
    Simulator cpu(model), cpu_elastic(elastic);
    for (int k = 0; k < steps(60); ++k) {
      const StepReport rd = dev.step(), rc = cpu.step();
      ASSERT_TRUE(rd.ok() && rc.ok() && cpu_elastic.step().ok()) << "step " << k;
      EXPECT_EQ(rd.iterations, rc.iterations) << "step " << k;
    }
    const Real dt = model->scene.integrator.dt;
    // u as one step's displacement over the largest |q| (as V8: compare.h)
    Real du = 0, qmax = 0;
    for (size_t i = 0; i < cpu.state().u.size(); ++i) {
      du = std::max(du, std::abs(cpu.state().u[i] - dev.state().u[i]));
      qmax = std::max(qmax, std::abs(cpu.state().q[i]));
    }
    EXPECT_LE(max_relative_difference(cpu.state().q, dev.state().q), 1e-9);
    EXPECT_LE(du * dt, 1e-9 * qmax);
    if (!capped()) {
      EXPECT_GT(max_relative_difference(cpu_elastic.state().q, cpu.state().q), 1e-6);
    }
  }
}

// the engine hands the solve to the executor's solvers: on CUDA the band by block cyclic
// reduction on the device where the CPU takes the band (kAuto and kBanded on a rod), else
// cuSOLVER; on the host, the kind the caller asked for (kAuto: banded LU on a rod)
TEST_P(SimulatorEngine, SolverNamesTellTheExecutor) {
  const auto model =
      load(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s1_cantilever_e1e5.json");
  struct Case {
    LinearSolverKind kind;
    const char* host;
    const char* cuda;
  };
  // (S1's midpoint rule with pointwise stretching, whose Jacobian is symmetric)
  IntegratorSpec spec = model->scene.integrator;
  spec.energy_consistent = false;
  for (const Case& c : {Case{LinearSolverKind::kAuto, "banded-lu", "cuda-block-cyclic"},
                        Case{LinearSolverKind::kBanded, "banded-lu", "cuda-block-cyclic"},
                        Case{LinearSolverKind::kSparseLu, "sparse-lu", "cusolver-qr"},
                        Case{LinearSolverKind::kEigenLdlt, "eigen-ldlt", "cusolver-chol"},
                        Case{LinearSolverKind::kPcg, "pcg", "cuda-pcg"},
                        Case{LinearSolverKind::kAmg, "pcg-amg", "cuda-pcg-amg"}}) {
    Simulator sim(model, spec, c.kind, BackendKind::kCuda);
    EXPECT_EQ(sim.linear_solver_name(), GetParam() == Executor::kCuda ? c.cuda : c.host);
    ASSERT_TRUE(sim.step().ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Executors,
                         SimulatorEngine,
                         ::testing::Values(Executor::kGuarded, Executor::kCuda),
                         [](const ::testing::TestParamInfo<Executor>& i) {
                           return i.param == Executor::kGuarded ? "Guarded" : "Cuda";
                         });

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
