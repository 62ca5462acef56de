// Boundary conditions that change during a run (the scene's boundary.events, Simulator and
// BatchedSimulator fix / release calls): a gripper that lets go leaves the rod with the velocity
// it had and its momentum changes from then on by gravity alone; a node fixed mid-run stays
// where it was fixed to the bit; the scene's events and the same calls give the same bits; a
// detour through another set of held DOFs (another pattern and ordering) and back changes
// nothing; per-environment fixes and releases in a batch equal single runs; bad calls are
// errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/batch.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::shared_ptr<const Model> scene(const std::string& name,
                                   const std::function<void(SceneSpec&)>& edit = {}) {
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name);
  sc.backend = BackendKind::kCpu;
  if (edit) edit(sc);
  return build_model(sc);
}

// total momentum of the nodes, sum m u [kg m/s]
Vec3 momentum(const Model& m, const State& s) {
  Vec3 p{{0, 0, 0}};
  for (int n = 0; n < m.nnode; ++n)
    for (int c = 0; c < 3; ++c)
      p[c] += m.node_mass[n] * s.u[3 * size_t(n) + c];
  return p;
}

Real total_mass(const Model& m) {
  Real M = 0;
  for (int n = 0; n < m.nnode; ++n)
    M += m.node_mass[n];
  return M;
}

// gripper_release.json: the gripper swings the held end up along its ramp (0.4 m/s up, 0.267
// m/s along x) and lets go at t = 0.15 s. The release changes no bit of the state; the released
// nodes start from the ramp's velocity; from then on the momentum changes by M g dt per step
// only. Implicit Euler: sum_i m_i (u_i' - u_i) = dt (sum_i F_i - sum_i dE/dx_i + sum_i f_i),
// where the elastic forces sum to zero to round-off and f is the residual left by Newton, so
// the bound per component is the sum over steps of dt sqrt(nnode) |f|, plus round-off
TEST(BoundaryEvents, ReleasedRodKeepsItsVelocityAndOnlyGravityChangesItsMomentum) {
  const auto m = scene("gripper_release.json");
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  ASSERT_TRUE(test::run_steps(sim, 150));
  EXPECT_EQ(sim.dof_fixed()[0], 1);
  const State before = sim.state();
  // the ramp's velocity over the last step (the motion's own: (x1 - x0) / dt)
  EXPECT_NEAR(before.u[0], 0.04 / 0.15, 1e-9);
  EXPECT_NEAR(before.u[2], 0.06 / 0.15, 1e-9);
  const Vec3 g = m->gravity;
  const Real M = total_mass(*m);
  Vec3 p = momentum(*m, before);
  Real bound = 0;
  for (int k = 0; k < 60; ++k) {
    const StepReport r = sim.step();
    ASSERT_TRUE(r.ok()) << "step " << k;
    bound += dt * std::sqrt(Real(m->nnode)) * r.residual;
    if (k == 0) {
      // the released end moved on at its own velocity (no stop, no kick): node 0's velocity
      // after the first free step is the ramp's plus what gravity and the rod's pull gave it
      // in one step, far from the zero a held node keeps
      EXPECT_EQ(sim.dof_fixed()[0], 0);
      EXPECT_GT(sim.state().u[2], 0.3);
      EXPECT_EQ(sim.state().events_done, 1);
    }
    for (int c = 0; c < 3; ++c)
      p[c] += M * g[c] * dt;
  }
  const Vec3 p_end = momentum(*m, sim.state());
  std::printf(
      "momentum 60 steps after the release: (%.17g, %.17g) [kg m/s], ballistic (%.17g, "
      "%.17g), Newton's bound %.3g\n",
      p_end[0], p_end[2], p[0], p[2], bound);
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(p_end[c], p[c], bound + 1e-13 * (std::fabs(p[c]) + M))
        << "component " << c << " (Newton's bound " << bound << ")";
  // the rod was thrown up: its momentum pointed up at the release
  EXPECT_GT(momentum(*m, before)[2], 0.0);
}

// the same release by Simulator::release_dofs at the same time: the same bits as the scene's
// event; and releasing DOFs changes no bit of the state
TEST(BoundaryEvents, SceneEventsAndCallsGiveTheSameBits) {
  const auto with_event = scene("gripper_release.json");
  const auto without = scene("gripper_release.json", [](SceneSpec& sc) { sc.events.clear(); });
  Simulator a(with_event), b(without);
  ASSERT_TRUE(test::run_steps(a, 150));
  ASSERT_TRUE(test::run_steps(b, 150));
  const State before = b.state();
  std::vector<int> dofs;
  for (int d : {0, 1, 2, 3, 4, 5, 3 * without->nnode})  // nodes 0, 1 and edge 0's twist
    dofs.push_back(d);
  b.release_dofs(dofs);
  EXPECT_EQ(b.state().q, before.q);
  EXPECT_EQ(b.state().u, before.u);
  EXPECT_EQ(b.state().a, before.a);
  ASSERT_TRUE(test::run_steps(a, 40));
  ASSERT_TRUE(test::run_steps(b, 40));
  EXPECT_EQ(a.state().q, b.state().q);
  EXPECT_EQ(a.state().u, b.state().u);
  EXPECT_EQ(a.dof_fixed(), b.dof_fixed());
}

// rod_pin.json: the middle node falls freely until t = 0.1 s, is caught there and holds that
// position to the bit while the rod drapes over it
TEST(BoundaryEvents, NodeFixedMidRunStaysWhereItWasFixed) {
  const auto m = scene("rod_pin.json");
  Simulator sim(m);
  const int pin = m->resolve_node(NodeRef{0, 30, {}});
  ASSERT_TRUE(test::run_steps(sim, 100));
  const Vec3 caught = test::node_position(sim.state(), pin);
  // a rigid, level fall so far: implicit Euler with mass damping alpha, u' = (u - g dt) / (1 +
  // alpha dt), z' = z + dt u'
  Real z = 0, w = 0;
  for (int k = 0; k < 100; ++k) {
    w = (w - 9.81 * 1e-3) / (1 + 0.5 * 1e-3);
    z += 1e-3 * w;
  }
  EXPECT_NEAR(caught[2], z, 1e-9);
  EXPECT_EQ(sim.dof_fixed()[3 * pin + 2], 0);
  ASSERT_TRUE(test::run_steps(sim, 1));
  EXPECT_EQ(sim.dof_fixed()[3 * pin + 2], 1);
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(test::run_steps(sim, 50));
    const Vec3 x = test::node_position(sim.state(), pin);
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(x[c], caught[c]) << "coordinate " << c << " after " << 50 * (k + 1) << " steps";
      EXPECT_EQ(sim.state().u[3 * size_t(pin) + c], 0.0);
    }
  }
  // the ends fell on below the pin: the rod drapes over it
  EXPECT_LT(test::node_position(sim.state(), 0)[2], caught[2] - 0.05);
  EXPECT_LT(test::node_position(sim.state(), m->nnode - 1)[2], caught[2] - 0.05);
}

// a detour through another set of held DOFs and back: a node at rest fixed at t = 0 (nothing
// moves), a residual evaluated with that set (the engine takes its smaller pattern and
// ordering), the node released again: the run is the run without the detour, bit for bit
TEST(BoundaryEvents, ADetourThroughAnotherPatternAndBackChangesNothing) {
  SceneBuilder b;
  const int mat = b.material("m", 1200, 5e6, 0.4);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 21, mat, SceneBuilder::circle(0.002));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  for (const LinearSolverKind kind : {LinearSolverKind::kBanded, LinearSolverKind::kAuto}) {
    Simulator plain(m, m->scene.integrator, kind), detour(m, m->scene.integrator, kind);
    detour.fix_nodes({10, 15});
    std::vector<Real> f, J;
    detour.residual(1e-3, detour.state().q, f, &J);
    EXPECT_EQ(int(f.size()), m->plan.nfree - 6);
    detour.release_nodes({10, 15});
    std::vector<Real> f0, J0;
    plain.residual(1e-3, plain.state().q, f0, &J0);
    detour.residual(1e-3, detour.state().q, f, &J);
    EXPECT_EQ(f, f0);
    EXPECT_EQ(J, J0);
    ASSERT_TRUE(test::run_steps(plain, 30));
    ASSERT_TRUE(test::run_steps(detour, 30));
    EXPECT_EQ(plain.state().q, detour.state().q);
    EXPECT_EQ(plain.state().u, detour.state().u);
  }
}

// a batch whose environments fix and release their own DOFs (either engine) against single
// simulators doing the same: env 0 does nothing, env 1 pins its middle node at step 10, env 2
// lets go of its clamp at step 5 (the pattern grows to every DOF some environment leaves free;
// envs 0 and 1 hold some of it) and clamps it again at step 25 (back to the model's pattern).
// The per-environment engine and any environment whose held DOFs are the pattern's match bit
// for bit; an environment holding DOFs of the pattern (identity rows, another band ordering)
// matches to round-off
TEST(BoundaryEvents, PerEnvironmentFixAndReleaseInABatchEqualsSingleRuns) {
  SceneBuilder b;
  const int mat = b.material("m", 1200, 5e6, 0.4);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0.05), 21, mat, SceneBuilder::circle(0.002));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  const std::vector<int> clamp = {0, 1, 2, 3, 4, 5, 3 * m->nnode};
  const int steps = 40;
  auto act = [&](auto&& fix, auto&& release, int e, int k) {
    if (e == 1 && k == 10) fix(std::vector<int>{30, 31, 32});
    if (e == 2 && k == 5) release(clamp);
    if (e == 2 && k == 25) fix(clamp);
  };
  std::vector<State> single(3);
  for (int e = 0; e < 3; ++e) {
    Simulator s(m, m->scene.integrator, LinearSolverKind::kBanded);
    for (int k = 0; k < steps; ++k) {
      act([&](const std::vector<int>& d) { s.fix_dofs(d); },
          [&](const std::vector<int>& d) { s.release_dofs(d); }, e, k);
      ASSERT_TRUE(s.step().ok()) << "env " << e << " step " << k;
    }
    single[size_t(e)] = s.state();
  }
  // the environments differ
  EXPECT_NE(single[0].q, single[1].q);
  EXPECT_NE(single[0].q, single[2].q);
  // the vectorized engine's banded, dense and pcg solves (the identity rows through each);
  // pcg to its own tolerance (CG to 1e-12 relative on the same systems)
  struct Case {
    BatchEngine engine;
    LinearSolverKind solver;
    Real tol;
  };
  for (const Case& c : {Case{BatchEngine::kPerEnvironment, LinearSolverKind::kBanded, 0},
                        Case{BatchEngine::kVectorized, LinearSolverKind::kBanded, 1e-12},
                        Case{BatchEngine::kVectorized, LinearSolverKind::kDense, 1e-12},
                        Case{BatchEngine::kVectorized, LinearSolverKind::kPcg, 1e-10}}) {
    const BatchEngine engine = c.engine;
    BatchedSimulator batch(m, 3, m->scene.integrator, c.solver, engine);
    for (int k = 0; k < steps; ++k) {
      for (int e = 0; e < 3; ++e)
        act([&](const std::vector<int>& d) { batch.fix_dofs(e, d); },
            [&](const std::vector<int>& d) { batch.release_dofs(e, d); }, e, k);
      for (StepStatus st : batch.step())
        ASSERT_EQ(st, StepStatus::kConverged) << "step " << k;
    }
    for (int e = 0; e < 3; ++e) {
      const State& s = batch.state(e);
      EXPECT_EQ(s.dof_fixed, single[size_t(e)].dof_fixed) << "env " << e;
      if (engine == BatchEngine::kPerEnvironment) {
        EXPECT_EQ(s.q, single[size_t(e)].q) << "env " << e;
        EXPECT_EQ(s.u, single[size_t(e)].u) << "env " << e;
        continue;
      }
      // env 2 holds the pattern's DOFs throughout (the pattern of every DOF some environment
      // leaves free is its own, then the model's): the same bits with the banded solve
      if (e == 2 && c.solver == LinearSolverKind::kBanded) {
        EXPECT_EQ(s.q, single[2].q);
      }
      // the others: relative to the state's size
      Real diff = 0, ref = 0;
      for (size_t i = 0; i < s.q.size(); ++i) {
        diff = std::max(diff, std::fabs(s.q[i] - single[size_t(e)].q[i]));
        ref = std::max(ref, std::fabs(single[size_t(e)].q[i]));
      }
      EXPECT_LE(diff, c.tol * ref) << "env " << e << ", " << batch.solver_name();
      std::printf("%s, env %d: max |q - q_single| / max |q| = %.2g\n", batch.solver_name().c_str(),
                  e, diff / ref);
    }
  }
}

// the scene's events fire at each environment's own time in the vectorized batch: env 1, reset
// at step 8, catches its rod 8 steps after env 0 (in between, env 0 holds a DOF of the pattern:
// round-off)
TEST(BoundaryEvents, VectorizedBatchEventsFollowEachEnvironmentsTime) {
  const auto m = scene("rod_pin.json", [](SceneSpec& sc) {
    sc.events[0].time = 0.01;  // caught after 10 steps
  });
  Simulator s0(m, m->scene.integrator, LinearSolverKind::kBanded),
      s1(m, m->scene.integrator, LinearSolverKind::kBanded);
  ASSERT_TRUE(test::run_steps(s0, 24));
  ASSERT_TRUE(test::run_steps(s1, 16));
  BatchedSimulator batch(m, 2, m->scene.integrator, LinearSolverKind::kBanded,
                         BatchEngine::kVectorized);
  for (int k = 0; k < 24; ++k) {
    if (k == 8) batch.reset({0, 1});
    for (StepStatus st : batch.step())
      ASSERT_EQ(st, StepStatus::kConverged) << "step " << k;
  }
  const int pin = m->resolve_node(NodeRef{0, 30, {}});
  EXPECT_EQ(batch.state(0).events_done, 1);
  EXPECT_EQ(batch.state(1).events_done, 1);
  EXPECT_EQ(batch.dof_fixed(1)[3 * pin], 1);
  for (int e = 0; e < 2; ++e) {
    const State& want = e == 0 ? s0.state() : s1.state();
    Real diff = 0, ref = 0;
    for (size_t i = 0; i < want.q.size(); ++i) {
      diff = std::max(diff, std::fabs(batch.state(e).q[i] - want.q[i]));
      ref = std::max(ref, std::fabs(want.q[i]));
    }
    EXPECT_LE(diff, 1e-12 * ref) << "env " << e;
  }
}

// a scene with contact between bodies (rod_twist.json): the contact part the engine assembles,
// merged with the plan into one matrix (the direct solvers) or beside it (pcg), follows a new
// set of held DOFs; the caught node holds to the bit and both agree
TEST(BoundaryEvents, ContactPlansFollowTheHeldDofs) {
  const auto m = scene("rod_twist.json");
  std::vector<State> end;
  // (CG falls back to the direct solver at times on this scene: no warning-free steps asked)
  auto steps = [](Simulator& sim, int n) {
    for (int k = 0; k < n; ++k)
      ASSERT_TRUE(sim.step().ok()) << "step " << k;
  };
  for (const LinearSolverKind kind : {LinearSolverKind::kAuto, LinearSolverKind::kPcg}) {
    Simulator sim(m, m->scene.integrator, kind);
    steps(sim, 5);
    sim.fix_nodes({40});
    const Vec3 held = test::node_position(sim.state(), 40);
    steps(sim, 10);
    const Vec3 x = test::node_position(sim.state(), 40);
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(x[c], held[c]);
    end.push_back(sim.state());
  }
  Real diff = 0, ref = 0;
  for (size_t i = 0; i < end[0].q.size(); ++i) {
    diff = std::max(diff, std::fabs(end[0].q[i] - end[1].q[i]));
    ref = std::max(ref, std::fabs(end[0].q[i]));
  }
  EXPECT_LE(diff, 1e-8 * ref);  // (CG's tolerance)
}

// bad calls: a DOF out of range, releasing a clamp at a node or the plane of two_d; nothing
// changes
TEST(BoundaryEvents, BadFixAndReleaseCallsAreErrors) {
  SceneBuilder b;
  const int mat = b.material("m", 1200, 5e6, 0.4);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 11, mat, SceneBuilder::circle(0.002));
  b.clamp(rod, 0);
  const auto m = build_model(b.build());
  Simulator sim(m);
  const std::vector<unsigned char> before = sim.dof_fixed();
  auto fails = [&](auto&& call, const std::string& what) {
    try {
      call();
      ADD_FAILURE() << "no error: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    EXPECT_EQ(sim.dof_fixed(), before);
  };
  fails([&] { sim.fix_dofs({3, m->ndof}); }, "out of range");
  fails([&] { sim.release_dofs({-1}); }, "out of range");
  fails([&] { sim.fix_nodes({m->nnode}); }, "out of range");
  fails([&] { sim.release_nodes({0}); }, "a clamp at a node");
  BatchedSimulator batch(m, 2, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  fails([&] { batch.release_dofs(1, {0}); }, "a clamp at a node");
  fails([&] { batch.fix_dofs(2, {0}); }, "environment 2");
  SceneBuilder p;
  const int mp = p.material("m", 1200, 5e6, 0.4);
  p.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 5, mp, SceneBuilder::circle(0.002));
  p.fix_node(0, 0);
  p.integrator().two_d = true;
  Simulator flat(build_model(p.build()));
  try {
    flat.release_dofs({1});
    ADD_FAILURE() << "two_d's y was released";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two_d"), std::string::npos) << e.what();
  }
  flat.release_dofs({0, 2});  // x and z of node 0 may go
  EXPECT_EQ(flat.dof_fixed()[0], 0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
