// Inexact Newton (NewtonSpec::inexact, the scene's integrator.newton.inexact; issue 48): with an
// iterative linear solver each Newton direction is solved only to Eisenstat and Walker's forcing
// tolerance (newton_forcing, core/newton.h) instead of 1e-12. The rule itself; the steps it
// converges to, against the exact solves' (the same Newton tolerances hold, so the states agree
// to what those tolerances allow), in fewer Krylov iterations, on a Simulator with contact and
// in the vectorized batch; the direct solvers untouched, bit for bit; the scene's field.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/core/newton.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// the rule: the first direction at kForcingFirst; then 0.9 (r / r_prev)^2; within a decade of
// the step's convergence after the direction, a tenth of the way to it; never below
// kKrylovRelTol nor above kForcingMax
TEST(InexactNewton, ForcingFollowsEisenstatWalkerWithTheStepsTarget) {
  const Real far = 1e-20;  // a target far below every norm here
  EXPECT_EQ(newton_forcing(1, 0, far), kForcingFirst);
  EXPECT_DOUBLE_EQ(newton_forcing(1e-2, 1e-1, far), 0.9 * 1e-2);  // (r / r_prev)^2 = 1e-2
  // a slow iteration after a loose one: 0.9 (0.5)^2 = 0.225, at most kForcingMax
  EXPECT_EQ(newton_forcing(0.5, 1, far), kForcingMax);
  // a fast iteration: 0.9 (1e-3)^2, whatever the last forcing was
  EXPECT_DOUBLE_EQ(newton_forcing(1e-3, 1, far), 0.9e-6);
  // near the target: 9e-3 x 1e-6 lies within a decade of 1e-8: solve to a tenth of it
  EXPECT_DOUBLE_EQ(newton_forcing(1e-6, 1e-5, 1e-8), 0.1 * 1e-8 / 1e-6);
  // just above the target: no further than converging needs
  EXPECT_DOUBLE_EQ(newton_forcing(2e-8, 1e-4, 1e-8), 0.05);
  // the bounds
  EXPECT_EQ(newton_forcing(1e-10, 1, 1e-30), kKrylovRelTol);
  EXPECT_EQ(newton_forcing(1e-9, 1e-8, 1e-8), kForcingMax);
  // a norm that is not finite: the first direction's value (the step fails on it anyway)
  EXPECT_EQ(newton_forcing(INFINITY, 1, far), kForcingFirst);
}

struct Rollout {
  std::vector<Real> q;
  long krylov = 0, newton = 0, fallbacks = 0;
};

Rollout run(std::shared_ptr<const Model> m, LinearSolverKind kind, bool inexact, int steps) {
  IntegratorSpec spec = m->scene.integrator;
  spec.newton.inexact = inexact;
  Simulator sim(m, spec, kind);
  Rollout out;
  for (int s = 0; s < steps; ++s) {
    const StepReport rep = sim.step();
    EXPECT_TRUE(rep.ok()) << "step " << s << ": status " << int(rep.status);
    out.newton += rep.iterations;
  }
  out.q = sim.state().q;
  out.krylov = sim.phase_times().linear_iters;
  out.fallbacks = sim.state().warn_linear_fallback;
  return out;
}

// plate_contact.json (a rod and a tile fall onto a clamped plate, landing at about step 20:
// shell-shell and rod-shell contact) over 40 steps with block-Jacobi CG, exact and inexact,
// against the direct solver's steps. Every step converges to the scene's Newton tolerances, but
// the exact solves' last iteration lands far below them (Newton converges quadratically) where
// the inexact ones stop just under them: the states differ from the direct ones by what the
// tolerances allow, measured 6.2e-8 (a rod's twist angle, after the landing at step 22; the
// exact CG 1e-15 relative), bounded here at 1e-6 in m and rad. The Krylov iterations: measured
// 0.45 of the exact solves' (bounded at 0.6)
TEST(InexactNewton, ContactStepsConvergeAsTheExactOnesInFewerKrylovIterations) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/plate_contact.json");
  sc.backend = BackendKind::kCpu;
  const auto m = build_model(sc);
  const int steps = 40;
  const Rollout direct = run(m, LinearSolverKind::kAuto, false, steps);
  const Rollout exact = run(m, LinearSolverKind::kPcg, false, steps);
  const Rollout inexact = run(m, LinearSolverKind::kPcg, true, steps);
  const Real d_exact = max_relative_difference(direct.q, exact.q);
  const Real d_inexact = test::max_abs_diff(direct.q, inexact.q);  // [m, rad]
  std::printf(
      "plate_contact, %d steps: exact CG %ld Krylov iterations in %ld Newton iterations "
      "(%.2e relative from direct), inexact %ld in %ld (%.2e m or rad), %.2f of the "
      "exact's\n",
      steps, exact.krylov, exact.newton, d_exact, inexact.krylov, inexact.newton, d_inexact,
      double(inexact.krylov) / double(exact.krylov));
  EXPECT_LT(d_exact, 1e-10);
  EXPECT_LT(d_inexact, 1e-6);
  ASSERT_GT(exact.krylov, 100);
  EXPECT_LT(double(inexact.krylov), 0.6 * double(exact.krylov));
}

// the direct solvers are exact: the field changes nothing, bit for bit (and the Simulator says
// inexact Newton is not in effect there)
TEST(InexactNewton, DirectSolversAreUntouched) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/plate_contact.json");
  sc.backend = BackendKind::kCpu;
  const auto m = build_model(sc);
  IntegratorSpec spec = m->scene.integrator;
  spec.newton.inexact = true;
  EXPECT_FALSE(Simulator(m, spec, LinearSolverKind::kAuto).inexact_newton());  // (it says so)
  EXPECT_TRUE(Simulator(m, spec, LinearSolverKind::kPcg).inexact_newton());
  const Rollout a = run(m, LinearSolverKind::kAuto, false, 25);
  const Rollout b = run(m, LinearSolverKind::kAuto, true, 25);
  ASSERT_EQ(a.q.size(), b.q.size());
  EXPECT_EQ(std::memcmp(a.q.data(), b.q.data(), a.q.size() * sizeof(Real)), 0);
  EXPECT_EQ(a.newton, b.newton);
}

// the vectorized batch's CG (one tolerance per environment): a sagging plate whose environments
// have their own moduli, exact and inexact, against the dense Cholesky's steps: every
// environment within 1e-7 relative (measured 2e-9), in fewer CG iterations
TEST(InexactNewton, TheVectorizedBatchSolvesEachEnvironmentToItsOwnForcing) {
  const auto m = test::clamped_plate(ShellBending::kMidEdge);
  const int B = 4, steps = 20;
  auto batch = [&](LinearSolverKind kind, bool inexact) {
    IntegratorSpec spec = m->scene.integrator;
    spec.newton.inexact = inexact;
    auto out = std::make_unique<BatchedSimulator>(m, B, spec, kind, BatchEngine::kVectorized);
    for (int e = 0; e < B; ++e) {
      EnvParams p;
      p.youngs_scale = 0.5 + 0.75 * e;
      out->set_params(e, p);
    }
    return out;
  };
  auto dense = batch(LinearSolverKind::kDense, false);
  auto exact = batch(LinearSolverKind::kPcg, false);
  auto inexact = batch(LinearSolverKind::kPcg, true);
  for (int k = 0; k < steps; ++k)
    for (BatchedSimulator* bs : {dense.get(), exact.get(), inexact.get()})
      for (StepStatus st : bs->step())
        ASSERT_EQ(st, StepStatus::kConverged) << "step " << k;
  Real worst = 0;
  for (int e = 0; e < B; ++e) {
    const Real d = max_relative_difference(dense->state(e).q, inexact->state(e).q);
    EXPECT_LT(d, 1e-7) << "environment " << e;
    worst = std::max(worst, d);
  }
  const long ce = exact->phase_times().linear_iters, ci = inexact->phase_times().linear_iters;
  std::printf(
      "mid-edge plate, %d environments, %d steps: CG %ld exact, %ld inexact (%.2f); "
      "inexact within %.2e of dense\n",
      B, steps, ce, ci, double(ci) / double(ce), worst);
  ASSERT_GT(ce, 0);
  EXPECT_LT(ci, ce);
}

// the scene's field: read, and a value that is not a boolean refused naming it
TEST(InexactNewton, TheScenesFieldIsReadAndCheckedForItsType) {
  const std::string scene = R"({
    "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.5}],
    "rods": [{"name": "r", "material": "m", "radius": 0.005,
              "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.3, 0, 0],
                        "nodes": 11}}],
    "integrator": {"type": "implicit_euler", "dt": 0.001, "duration": 0.01,
                   "newton": {"inexact": INEXACT}}
  })";
  auto with = [&](const std::string& v) {
    std::string t = scene;
    t.replace(t.find("INEXACT"), 7, v);
    return read_scene_text(t, "inexact.json", ".");
  };
  EXPECT_TRUE(with("true").integrator.newton.inexact);
  EXPECT_FALSE(with("false").integrator.newton.inexact);
  try {
    with("1");
    ADD_FAILURE() << "a number was taken for inexact";
  } catch (const std::exception& e) {  // (file, line and field)
    EXPECT_NE(std::string(e.what()).find("inexact.json:7: integrator.newton.inexact"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
