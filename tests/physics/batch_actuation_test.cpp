// The scene's actuation on the vectorized batch (issue 54, item 1): the engine computes it at
// each environment's own time with the one function the Simulator uses (apply_scene_actuation),
// so that an actuated scene in a vectorized batch, each environment with its own stiffness,
// follows single Simulators of the same parameters (to 1e-9 of the motion: the batched solves'
// arithmetic differs from the single solvers' where they are not banded). A natural-shape
// action replaces the actuation of its kind; a scene with actuation and feedback controllers
// is refused by name.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::shared_ptr<const Model> scene(const char* name) {
  return build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name + ".json"));
}

// max |a - b| over max |b - q0| (the motion), over the positions (the first n entries)
Real motion_difference(const std::vector<Real>& a,
                       const std::vector<Real>& b,
                       const std::vector<Real>& q0,
                       int n) {
  auto positions = [n](const std::vector<Real>& v) {
    return std::vector<Real>(v.begin(), v.begin() + n);
  };
  return test::max_abs_diff(positions(a), positions(b)) /
         test::max_abs_diff(positions(b), positions(q0));
}

TEST(VectorBatchActuation, ActuatedScenesEqualSingleRunsPerEnvironment) {
  struct Case {
    const char* name;
    int steps;
  };
  // a rod's SMA curvature, a mid-edge PneuNet's curvature, a manta ray's hinge angles, the
  // DisMech manipulator's per-spring series (2D)
  for (const Case& c : {Case{"sma_limb", 300}, Case{"pneunet_curl", 40}, Case{"manta_ray", 40},
                        Case{"dismech_manipulator", 300}}) {
    SCOPED_TRACE(c.name);
    const auto m = scene(c.name);
    ASSERT_FALSE(m->actuated.empty());
    const int B = 3;
    const Real scale[B] = {1.0, 1.15, 0.85};
    BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kVectorized);
    ASSERT_EQ(batch.engine(), BatchEngine::kVectorized);
    for (int e = 0; e < B; ++e) {
      EnvParams p;
      p.youngs_scale = scale[e];
      batch.set_params(e, p);
    }
    for (int k = 0; k < c.steps; ++k)
      for (StepStatus s : batch.step())
        ASSERT_EQ(s, StepStatus::kConverged) << "step " << k;
    const std::vector<Real> q0 = initial_state(*m).q;
    const int nx = 3 * m->nnode;
    for (int e = 0; e < B; ++e) {
      Simulator single(m, m->scene.integrator, LinearSolverKind::kAuto);
      EnvParams p;
      p.youngs_scale = scale[e];
      single.set_params(p);
      for (int k = 0; k < c.steps; ++k)
        ASSERT_TRUE(single.step().ok()) << "env " << e << " step " << k;
      const State& st = batch.state(e);
      EXPECT_EQ(st.time, single.state().time);
      const Real d = motion_difference(st.q, single.state().q, q0, nx);
      std::printf("%s env %d: batch vs single %.2e of the motion\n", c.name, e, d);
      EXPECT_LT(d, 1e-9) << "env " << e;
    }
  }
}

// an action replaces the scene's actuation of its kind (the limb's curvature held at rest: it
// does not curl), and clearing the actions brings the actuation back (the same bits as a
// batch that never had them)
TEST(VectorBatchActuation, ActionsReplaceTheActuationOfTheirKindUntilCleared) {
  const auto m = scene("sma_limb");
  const int B = 2, steps = 300, nx = 3 * m->nnode;
  BatchedSimulator driven(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                          BatchEngine::kVectorized);
  BatchedSimulator held(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                        BatchEngine::kVectorized);
  std::vector<Real> rest;
  for (int e = 0; e < B; ++e)
    rest.insert(rest.end(), m->bend_kappa_bar.begin(), m->bend_kappa_bar.end());
  held.set_natural_curvature(rest.data());
  for (int k = 0; k < steps; ++k) {
    driven.step();
    held.step();
  }
  const std::vector<Real> q0 = initial_state(*m).q;
  EXPECT_GT(motion_difference(held.state(0).q, driven.state(0).q, q0, nx), 0.1)
      << "the action did not replace the actuation";
  Simulator still(m, m->scene.integrator, LinearSolverKind::kAuto);
  still.set_actuation([&](Real, NaturalShape& s) {
    std::copy(m->bend_kappa_bar.begin(), m->bend_kappa_bar.end(), s.bend_kappa_bar);
  });
  for (int k = 0; k < steps; ++k)
    ASSERT_TRUE(still.step().ok());
  for (int i = 0; i < nx; ++i)  // (the limb at rest does not move: compared in metres)
    ASSERT_NEAR(held.state(1).q[size_t(i)], still.state().q[size_t(i)], 1e-12) << "DOF " << i;
  // cleared: the actuation again, from the state reached
  held.clear_actions();
  BatchedSimulator again(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  for (int e = 0; e < B; ++e)
    again.set_state(e, held.state(e));
  for (int k = 0; k < 50; ++k) {
    held.step();
    again.step();
  }
  EXPECT_EQ(held.state(0).q, again.state(0).q);
}

TEST(VectorBatchActuation, ActuationWithControllersNeedsThePerEnvironmentBatch) {
  const auto m = scene("sma_limb");
  BatchedSimulator batch(m, 2, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  ControllerSpec c;
  c.reference = m->scene.actuation[0];
  test::expect_error([&] { batch.set_controllers({c}); },
                     "the vectorized batch runs a scene's actuation or its feedback controllers, "
                     "not both");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
