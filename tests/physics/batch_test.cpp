// Batched environments on the CPU: a batch of B environments, each with its own actions and
// parameters, gives exactly the trajectories of B single simulators (V5 as a 44-environment
// batch against Coulomb's law too); an environment made to fail is flagged and rolled back
// while the others go on; parameter randomization equals building the model with the changed
// value.

#include "slender/batch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "physics_util.h"
#include "slender/builder.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;

// the V5 rod on the floor (N = 26, 1 kg, mu = 0.4), pushed by external forces
SceneSpec v5_scene(Real rho = 509.3, Real E = 1e5, Real mu = 0.4, Real k_ground = 0) {
  const Real r = 0.025;
  SceneBuilder b;
  const int mat = b.material("m", rho, E, 0.5);
  b.straight_rod("rod", vec3(0, 0, r), vec3(1, 0, r), 26, mat, SceneBuilder::circle(r));
  GroundSpec g;
  g.contact_distance = 5e-4;
  g.friction = mu;
  g.slip_velocity = 1e-3;
  g.stiffness = k_ground;  // 0: automatic, from the masses
  b.ground(g);
  b.gravity(vec3(0, 0, -kG));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-2;
  return b.build();
}

// the axial push F spread over the nodes by mass (nnode x 3)
std::vector<Real> axial_push(const Model& m, Real F) {
  std::vector<Real> f(3 * size_t(m.nnode), 0);
  const int n = m.nnode;
  for (int i = 0; i < n; ++i)
    f[3 * i] = F * ((i == 0 || i == n - 1) ? 0.5 / (n - 1) : 1.0 / (n - 1));
  return f;
}

TEST(Batch, V5As44EnvironmentsMatchesSingleRunsAndCoulomb) {
  const auto m = build_model(v5_scene());
  const int B = 44, steps = 150;
  const Real T = 1.5, mu = 0.4;
  BatchedSimulator batch(m, B);
  std::vector<Real> forces;
  std::vector<Real> F(B);
  for (int e = 0; e < B; ++e) {
    F[e] = -10.6 + e * (10.5 + 10.6) / 43;
    const std::vector<Real> f = axial_push(*m, F[e]);
    forces.insert(forces.end(), f.begin(), f.end());
  }
  batch.set_external_forces(forces.data());
  for (int k = 0; k < steps; ++k)
    for (StepStatus s : batch.step())
      ASSERT_EQ(s, StepStatus::kConverged) << "step " << k;
  Real mass = 0;
  for (Real w : m->node_mass)
    mass += w;
  int compared = 0;
  for (int e = 0; e < B; ++e) {
    const Real slide = std::fabs(F[e]) - mu * mass * kG;
    if (std::fabs(slide) < 1.0) continue;
    ++compared;
    Real kin = 0;
    const State& st = batch.state(e);
    for (int i = 0; i < m->ndof; ++i)
      kin += 0.5 * m->dof_mass[i] * st.u[i] * st.u[i];
    const Real theory = slide > 0 ? T * T * slide * slide / (2 * mass) : 0;
    if (theory == 0) {
      EXPECT_LT(kin, 0.5 * mass * 1e-6) << "F = " << F[e];
    } else {
      EXPECT_LT(std::fabs(kin / theory - 1), 0.02) << "F = " << F[e];
    }
  }
  EXPECT_GT(compared, 30);
  // three of the environments against single simulators: the same bits
  for (int e : {0, 17, 43}) {
    Simulator single(m);
    single.set_external_forces(axial_push(*m, F[e]));
    for (int k = 0; k < steps; ++k)
      ASSERT_TRUE(single.step().ok());
    EXPECT_EQ(single.state().q, batch.state(e).q) << "env " << e;
    EXPECT_EQ(single.state().u, batch.state(e).u) << "env " << e;
  }
}

// a cantilever bent by per-environment natural curvature: each environment equals a single
// simulator whose actuation callback sets the same curvature
TEST(Batch, NaturalCurvatureActionsMatchSingleRuns) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0);
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  const int B = 5;
  std::vector<Real> kappa(2 * size_t(B) * m->nbend);
  for (int e = 0; e < B; ++e)
    for (int k = 0; k < m->nbend; ++k)
      kappa[(size_t(e) * m->nbend + k) * 2 + 1] = 0.02 * (e + 1) * std::sin(0.3 * k);
  BatchedSimulator batch(m, B);
  batch.set_natural_curvature(kappa.data());
  for (int k = 0; k < 40; ++k)
    batch.step();
  std::vector<Real> curv(3 * size_t(B) * m->nbend);
  batch.curvatures(curv.data());
  for (int e = 0; e < B; ++e) {
    EXPECT_EQ(batch.reports()[e].status, StepStatus::kConverged);
    Simulator single(m);
    single.set_actuation([&, e](Real, NaturalShape& s) {
      for (int k = 0; k < 2 * m->nbend; ++k)
        s.bend_kappa_bar[k] = kappa[2 * size_t(e) * m->nbend + k];
    });
    for (int k = 0; k < 40; ++k)
      ASSERT_TRUE(single.step().ok());
    EXPECT_EQ(single.state().q, batch.state(e).q) << "env " << e;
    const std::vector<Real> sc = single.bend_strains();
    for (size_t i = 0; i < sc.size(); ++i)
      EXPECT_EQ(sc[i], curv[e * sc.size() + i]);
  }
  // the environments bent differently
  EXPECT_NE(batch.state(0).q, batch.state(4).q);
}

// a mid-edge strip clamped at one end, each environment driven to its own natural curvature
// (BatchedSimulator::set_natural_midedge_curvature, constant): each equals a single simulator
// whose actuation callback sets the same values, on both engines (the vectorized one against
// singles on the banded LU it picks itself)
TEST(Batch, MidEdgeCurvatureActionsMatchSingleRuns) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const int s = b.rectangle_shell("strip", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.01, 0), 5e-3,
                                  true, mat, 1e-3, ShellBending::kMidEdge);
  std::vector<int> row;
  for (int i = 0; i < int(b.part(s).nodes.size()); ++i)
    if (b.part(s).nodes[i][0] <= 1e-12) row.push_back(i);
  b.fix_shell_edges(s, row);
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 2e-3;
  const auto m = build_model(b.build());
  const int B = 3;
  const std::vector<Real> unit = midedge_curvature_components(*m, vec3(1, 0, 0));
  ASSERT_EQ(unit.size(), 3 * size_t(m->nmid));
  std::vector<Real> c(size_t(B) * unit.size());
  for (int e = 0; e < B; ++e)
    for (size_t i = 0; i < unit.size(); ++i)
      c[e * unit.size() + i] = (e - 1) * 5.0 * unit[i];  // -5, 0 and 5 1/m
  for (BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    const bool vec = engine == BatchEngine::kVectorized;
    SCOPED_TRACE(vec ? "vectorized" : "per-environment");
    BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto, engine);
    batch.set_natural_midedge_curvature(c.data());
    for (int k = 0; k < 5; ++k)
      for (StepStatus st : batch.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    for (int e = 0; e < B; ++e) {
      Simulator single(m, m->scene.integrator,
                       vec ? LinearSolverKind::kBanded : LinearSolverKind::kAuto);
      single.set_actuation([&, e](Real, NaturalShape& sh) {
        for (size_t i = 0; i < unit.size(); ++i)
          sh.mid_kappa_bar[i] = c[e * unit.size() + i];
      });
      for (int k = 0; k < 5; ++k)
        ASSERT_TRUE(single.step().ok());
      EXPECT_EQ(single.state().q, batch.state(e).q) << "env " << e;
    }
    // the environments curled differently: the tips of -5 and 5 1/m on either side
    const int tip = m->nnode - 1;
    EXPECT_GT(batch.state(0).q[3 * tip + 2], 1e-4);
    EXPECT_EQ(batch.state(1).q[3 * tip + 2], 0);
    EXPECT_LT(batch.state(2).q[3 * tip + 2], -1e-4);
    // a value that is not finite is refused
    std::vector<Real> bad = c;
    bad[4] = NAN;
    EXPECT_THROW(batch.set_natural_midedge_curvature(bad.data()), Error);
  }
}

// a hanging cantilever whose edges each environment contracts or stretches by its own natural
// stretch (BatchedSimulator::set_natural_stretch, a different factor per edge): each environment
// equals a single simulator given the same factors by Simulator::set_natural_stretch, on both
// engines (the vectorized one against singles on the banded LU it picks itself); a factor that
// is not positive or not finite is refused
TEST(Batch, NaturalStretchActionsMatchSingleRuns) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  const int B = 3;
  const size_t ne = size_t(m->nedge);
  std::vector<Real> s(size_t(B) * ne);
  for (int e = 0; e < B; ++e)
    for (size_t k = 0; k < ne; ++k)
      s[e * ne + k] = 1 + 0.1 * (e - 1) * (0.5 + 0.5 * std::sin(0.7 * Real(k)));
  for (BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    const bool vec = engine == BatchEngine::kVectorized;
    SCOPED_TRACE(vec ? "vectorized" : "per-environment");
    BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto, engine);
    batch.set_natural_stretch(s.data());
    for (int k = 0; k < 6; ++k)
      for (StepStatus st : batch.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    for (int e = 0; e < B; ++e) {
      Simulator single(m, m->scene.integrator,
                       vec ? LinearSolverKind::kBanded : LinearSolverKind::kAuto);
      single.set_natural_stretch(std::vector<Real>(s.begin() + e * ne, s.begin() + (e + 1) * ne));
      for (int k = 0; k < 6; ++k)
        ASSERT_TRUE(single.step().ok());
      EXPECT_EQ(single.state().q, batch.state(e).q) << "env " << e;
    }
    // the tip: pulled in by the contracted rod, out by the stretched one
    const int tip = m->nnode - 1;
    EXPECT_LT(batch.state(0).q[3 * tip], batch.state(1).q[3 * tip] - 1e-3);
    EXPECT_GT(batch.state(2).q[3 * tip], batch.state(1).q[3 * tip] + 1e-3);
    std::vector<Real> bad = s;
    bad[4] = 0;
    EXPECT_THROW(batch.set_natural_stretch(bad.data()), Error);
    bad[4] = NAN;
    EXPECT_THROW(batch.set_natural_stretch(bad.data()), Error);
    // cleared: back to the rest lengths (environment 1's, whose factors were all 1)
    batch.clear_actions();
    batch.reset();
    for (int k = 0; k < 6; ++k)
      batch.step();
    EXPECT_EQ(batch.state(0).q, batch.state(1).q);
  }
}

// issue 18, fault 3: an action cleared and a reset leave no trace (the per-environment engine
// kept the last natural curvatures once its callback stopped setting them), and a non-finite
// action is refused before it can fail every later step; on both engines
TEST(Batch, ClearedActionsAndResetsLeaveNoTraceAndNaNActionsAreRefused) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  const int B = 2;
  std::vector<Real> kappa(2 * size_t(B) * m->nbend, 0.05);
  for (BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    SCOPED_TRACE(engine == BatchEngine::kVectorized ? "vectorized" : "per-environment");
    BatchedSimulator fresh(m, B, m->scene.integrator, LinearSolverKind::kAuto, engine),
        used(m, B, m->scene.integrator, LinearSolverKind::kAuto, engine);
    used.set_natural_curvature(kappa.data());
    for (int k = 0; k < 10; ++k)
      used.step();
    EXPECT_NE(used.state(0).q, fresh.state(0).q);
    used.clear_actions();
    used.reset();
    for (int k = 0; k < 20; ++k) {
      used.step();
      fresh.step();
    }
    for (int e = 0; e < B; ++e)
      EXPECT_EQ(used.state(e).q, fresh.state(e).q) << "env " << e;
    std::vector<Real> bad = kappa;
    bad[3] = NAN;
    EXPECT_THROW(used.set_natural_curvature(bad.data()), Error);
    std::vector<Real> force(3 * size_t(B) * m->nnode, 0);
    force[5] = INFINITY;
    EXPECT_THROW(used.set_external_forces(force.data()), Error);
    for (StepStatus st : used.step())
      EXPECT_EQ(st, StepStatus::kConverged);
  }
}

// one environment pushed so hard that its residual overflows: flagged, rolled
// back to its state before the step; the others are untouched by it
TEST(Batch, FailedEnvironmentIsFlaggedAndRolledBack) {
  const auto m = build_model(v5_scene());
  IntegratorSpec spec = m->scene.integrator;
  const int B = 4;
  BatchedSimulator batch(m, B, spec);
  std::vector<Real> forces;
  for (int e = 0; e < B; ++e) {
    const std::vector<Real> f = axial_push(*m, e == 2 ? 1e300 : 5.0 * e);
    forces.insert(forces.end(), f.begin(), f.end());
  }
  batch.set_external_forces(forces.data());
  const State before = batch.state(2);
  const std::vector<StepStatus> st = batch.step();
  EXPECT_NE(st[2], StepStatus::kConverged);
  EXPECT_EQ(batch.state(2).q, before.q);
  EXPECT_EQ(batch.state(2).time, before.time);
  for (int e : {0, 1, 3}) {
    EXPECT_EQ(st[e], StepStatus::kConverged) << e;
    Simulator single(m, spec);
    single.set_external_forces(axial_push(*m, 5.0 * e));
    ASSERT_TRUE(single.step().ok());
    EXPECT_EQ(single.state().q, batch.state(e).q) << e;
  }
  // reset brings the failed one back to the start, and it steps again with a sane force
  batch.reset({0, 0, 1, 0});
  EXPECT_EQ(batch.state(2).q, before.q);
  forces.assign(forces.size(), 0);
  batch.set_external_forces(forces.data());
  EXPECT_EQ(batch.step()[2], StepStatus::kConverged);
  std::vector<unsigned char> contact(size_t(B) * m->nnode);
  batch.ground_contacts(contact.data());
  for (unsigned char c : contact)
    EXPECT_EQ(c, 1);  // the rod lies on the floor
}

// randomized parameters equal a model built with the changed values (to round-off; the ground
// stiffness is set, since the automatic one follows the model's masses)
TEST(Batch, ParametersEqualChangedModels) {
  const Real k = 2000;
  const auto base = build_model(v5_scene(509.3, 1e5, 0.4, k));
  struct Case {
    EnvParams p;
    SceneSpec scene;
  };
  std::vector<Case> cases;
  {
    EnvParams p;
    p.youngs_scale = 3;
    cases.push_back({p, v5_scene(509.3, 3e5, 0.4, k)});
  }
  {
    EnvParams p;
    p.density_scale = 2;
    cases.push_back({p, v5_scene(2 * 509.3, 1e5, 0.4, k)});
  }
  {
    EnvParams p;
    p.ground_friction = 0.1;
    cases.push_back({p, v5_scene(509.3, 1e5, 0.1, k)});
  }
  {
    EnvParams p;
    p.override_gravity = true;
    p.gravity = vec3(0, 0, -3.7);
    SceneSpec sc = v5_scene(509.3, 1e5, 0.4, k);
    sc.forces.gravity = vec3(0, 0, -3.7);
    cases.push_back({p, sc});
  }
  BatchedSimulator batch(base, int(cases.size()));
  std::vector<Real> forces;
  for (size_t e = 0; e < cases.size(); ++e) {
    batch.set_params(int(e), cases[e].p);
    const std::vector<Real> f = axial_push(*base, 6.0);
    forces.insert(forces.end(), f.begin(), f.end());
  }
  batch.set_external_forces(forces.data());
  for (int k = 0; k < 30; ++k)
    for (StepStatus s : batch.step())
      ASSERT_EQ(s, StepStatus::kConverged);
  for (size_t e = 0; e < cases.size(); ++e) {
    const auto m = build_model(cases[e].scene);
    Simulator single(m);
    single.set_external_forces(axial_push(*m, 6.0));
    for (int k = 0; k < 30; ++k)
      ASSERT_TRUE(single.step().ok());
    Real scale = 0, diff = 0;
    for (int i = 0; i < m->ndof; ++i) {
      scale = std::max(scale, std::fabs(single.state().q[i]));
      diff = std::max(diff, std::fabs(single.state().q[i] - batch.state(int(e)).q[i]));
    }
    EXPECT_LT(diff, 1e-9 * scale) << "case " << e;
  }
  EXPECT_THROW(batch.set_params(0, EnvParams{-1}), Error);
  EXPECT_THROW(batch.set_params(9, EnvParams{}), Error);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// ---- the vectorized engine (one masked Newton iteration over all environments) -------------

// V5 as 44 environments on the vectorized engine: the same bits as single simulators with the
// banded solver (the same per-environment arithmetic in the same order)
TEST(VectorBatch, V5MatchesSingleBandedRunsBitForBit) {
  const auto m = build_model(v5_scene());
  const int B = 44, steps = 60;
  BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  EXPECT_EQ(batch.engine(), BatchEngine::kVectorized);
  std::vector<Real> forces, F(B);
  for (int e = 0; e < B; ++e) {
    F[e] = -10.6 + e * (10.5 + 10.6) / 43;
    const std::vector<Real> f = axial_push(*m, F[e]);
    forces.insert(forces.end(), f.begin(), f.end());
  }
  batch.set_external_forces(forces.data());
  for (int k = 0; k < steps; ++k)
    for (StepStatus s : batch.step())
      ASSERT_EQ(s, StepStatus::kConverged) << "step " << k;
  for (int e : {0, 5, 21, 43}) {
    Simulator single(m, m->scene.integrator, LinearSolverKind::kBanded);
    single.set_external_forces(axial_push(*m, F[e]));
    for (int k = 0; k < steps; ++k)
      ASSERT_TRUE(single.step().ok());
    const State& st = batch.state(e);
    EXPECT_EQ(single.state().q, st.q) << "env " << e;
    EXPECT_EQ(single.state().u, st.u) << "env " << e;
    EXPECT_EQ(single.state().edge_d1, st.edge_d1) << "env " << e;
    EXPECT_EQ(single.state().time, st.time);
  }
  std::vector<Real> x(size_t(B) * 3 * m->nnode);
  batch.positions(x.data());
  EXPECT_EQ(x[3 * m->nnode * 43], batch.state(43).q[0]);
}

// the RFT snake with per-environment travelling waves, implicit Euler and Newmark
TEST(VectorBatch, SnakeWavesMatchSingleRuns) {
  const auto base =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  for (IntegratorKind kind : {IntegratorKind::kImplicitEuler, IntegratorKind::kNewmark}) {
    IntegratorSpec spec = base->scene.integrator;
    spec.kind = kind;
    // Newmark with numerical damping (gamma 0.6): the undamped rule gains energy in this
    // whipping snake (docs/numerics.md: the midpoint rule's instability)
    spec.gamma = 0.6;
    spec.beta = 0.3025;
    const int B = 6, steps = 30;
    BatchedSimulator batch(base, B, spec, LinearSolverKind::kAuto, BatchEngine::kVectorized);
    const int nb = base->nbend;
    auto wave = [&](int e, Real t, std::vector<Real>& k) {
      for (int j = 0; j < nb; ++j)
        k[(size_t(e) * nb + j) * 2 + 1] = (0.02 + 0.006 * e) * std::sin(0.2 * j - 6 * t);
    };
    std::vector<Real> kappa(2 * size_t(B) * nb, 0);
    std::vector<std::unique_ptr<Simulator>> singles;
    for (int e = 0; e < B; ++e)
      singles.push_back(std::make_unique<Simulator>(base, spec, LinearSolverKind::kBanded));
    for (int k = 0; k < steps; ++k) {
      const Real t = (k + 1) * spec.dt;
      for (int e = 0; e < B; ++e)
        wave(e, t, kappa);
      batch.set_natural_curvature(kappa.data());
      const std::vector<StepStatus>& st = batch.step();
      for (int e = 0; e < B; ++e)
        ASSERT_EQ(st[e], StepStatus::kConverged)
            << "env " << e << " step " << k << " kind " << int(kind) << " iterations "
            << batch.reports()[e].iterations;
      for (int e = 0; e < B; ++e) {
        singles[e]->set_actuation([&, e](Real, NaturalShape& sh) {
          for (int j = 0; j < 2 * nb; ++j)
            sh.bend_kappa_bar[j] = kappa[2 * size_t(e) * nb + j];
        });
        ASSERT_TRUE(singles[e]->step().ok());
      }
    }
    for (int e = 0; e < B; ++e)
      EXPECT_EQ(singles[e]->state().q, batch.state(e).q) << "env " << e;
    // and the per-environment engine agrees with both
    EXPECT_NE(batch.state(0).q, batch.state(5).q);
  }
}

// one environment made to fail is flagged and keeps its state; the others converge as alone
TEST(VectorBatch, FailedEnvironmentIsRolledBackOthersGoOn) {
  const auto m = build_model(v5_scene());
  const int B = 4;
  BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  std::vector<Real> forces;
  for (int e = 0; e < B; ++e) {
    const std::vector<Real> f = axial_push(*m, e == 1 ? 1e300 : 4.0 * e);
    forces.insert(forces.end(), f.begin(), f.end());
  }
  batch.set_external_forces(forces.data());
  const State before = batch.state(1);
  const std::vector<StepStatus> st = batch.step();
  EXPECT_NE(st[1], StepStatus::kConverged);
  EXPECT_EQ(batch.state(1).q, before.q);
  EXPECT_EQ(batch.state(1).time, before.time);
  for (int e : {0, 2, 3}) {
    ASSERT_EQ(st[e], StepStatus::kConverged);
    Simulator single(m, m->scene.integrator, LinearSolverKind::kBanded);
    single.set_external_forces(axial_push(*m, 4.0 * e));
    ASSERT_TRUE(single.step().ok());
    EXPECT_EQ(single.state().q, batch.state(e).q) << e;
  }
  batch.reset({0, 1, 0, 0});
  EXPECT_EQ(batch.state(1).q, before.q);
}

// hard pushes and a long step: bands without usable pivots fall back to pivoting LU, some
// environments fail by iterations; every environment's status, iterations and state equal a
// single banded run's (which falls back the same way)
TEST(VectorBatch, FallbacksAndFailuresMatchSingleRuns) {
  SceneSpec sc = v5_scene();
  sc.integrator.dt = 0.1;
  // the ground as stiff as the automatic rule made it before 2026-11 (ten times the heaviest
  // node's m / dt^2), which with these pushes leaves bands without usable pivots
  Real heaviest = 0;
  const auto plain = build_model(sc);  // (named: a temporary's member would dangle in the loop)
  for (Real w : plain->node_mass)
    heaviest = std::max(heaviest, w);
  sc.forces.ground.stiffness = 10 * heaviest / (sc.integrator.dt * sc.integrator.dt);
  const auto m = build_model(sc);
  const int B = 12, steps = 4;
  // uneven pushes along and across the floor, up to tens of kN: the rod is flung and bent
  auto load = [&](int e) {
    std::vector<Real> f(3 * size_t(m->nnode), 0);
    const Real F = 9000.0 * (e - 5), Fz = 150000.0 * (e % 4);
    for (int i = 0; i < m->nnode; ++i) {
      f[3 * i] = F / m->nnode * (1 + 0.3 * std::sin(i));
      f[3 * i + 2] = Fz / m->nnode * std::cos(0.7 * i);
    }
    return f;
  };
  BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  std::vector<Real> forces;
  std::vector<std::unique_ptr<Simulator>> singles;
  for (int e = 0; e < B; ++e) {
    const std::vector<Real> f = load(e);
    forces.insert(forces.end(), f.begin(), f.end());
    singles.push_back(
        std::make_unique<Simulator>(m, m->scene.integrator, LinearSolverKind::kBanded));
    singles[e]->set_external_forces(f);
  }
  batch.set_external_forces(forces.data());
  int failed = 0;
  for (int k = 0; k < steps; ++k) {
    const std::vector<StepStatus> st = batch.step();
    for (int e = 0; e < B; ++e) {
      const StepReport r = singles[e]->step();
      EXPECT_EQ(st[e], r.status) << "env " << e << " step " << k;
      EXPECT_EQ(batch.reports()[e].iterations, r.iterations) << "env " << e << " step " << k;
      EXPECT_EQ(batch.state(e).q, singles[e]->state().q) << "env " << e << " step " << k;
      failed += !r.ok();
    }
  }
  long fallbacks = 0;
  for (const auto& s : singles)
    fallbacks += s->state().warn_linear_fallback;
  std::printf("fallbacks in the single runs: %ld, failed env-steps: %d\n", fallbacks, failed);
  EXPECT_GT(fallbacks, 0);  // the case exercises the fallback
}

// what the vectorized engine does not take (contact between bodies, static load stepping) is
// refused with a message that names the per-environment engine; shells and
// per-environment ground friction it takes (tests/physics/batch_solver_test.cpp)
TEST(VectorBatch, UnsupportedModelsAndOptionsAreClearErrors) {
  auto refused = [](const SceneSpec& sc, IntegratorKind kind) {
    const auto m = build_model(sc);
    IntegratorSpec spec = m->scene.integrator;
    spec.kind = kind;
    try {
      BatchedSimulator batch(m, 2, spec, LinearSolverKind::kAuto, BatchEngine::kVectorized);
      ADD_FAILURE() << "the vectorized engine took it";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("per-environment"), std::string::npos) << e.what();
    }
  };
  // contact between bodies
  SceneSpec contact = v5_scene();
  contact.contact.enabled = true;
  refused(contact, IntegratorKind::kImplicitEuler);
  // (actuation from the scene it takes: tests/physics/batch_actuation_test.cpp)
  // static load stepping
  refused(v5_scene(), IntegratorKind::kStatic);
  // shells and per-environment friction are taken
  SceneBuilder sb;
  const int smat = sb.material("m", 1000, 1e6, 0.3);
  sb.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), 0.02, true, smat,
                     1e-3);
  sb.membrane(int(sb.spec().parts.size()) - 1, MembraneModel::kSprings);
  const auto shells = build_model(sb.build());
  BatchedSimulator plates(shells, 2, shells->scene.integrator, LinearSolverKind::kAuto,
                          BatchEngine::kVectorized);
  EXPECT_EQ(plates.engine(), BatchEngine::kVectorized);
  const auto m = build_model(v5_scene());
  BatchedSimulator batch(m, 2, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  EnvParams friction;
  friction.ground_friction = 0.2;
  batch.set_params(0, friction);
  EXPECT_EQ(batch.params(0).ground_friction, 0.2);
  friction.ground_friction = NAN;
  EXPECT_THROW(batch.set_params(1, friction), Error);
}

// randomized parameters on the vectorized engine equal the per-environment engine's, bit for
// bit (the same products in the same order)
TEST(VectorBatch, ParametersMatchThePerEnvironmentEngine) {
  const auto m = build_model(v5_scene(509.3, 1e5, 0.4, 2000));
  const int B = 5;
  BatchedSimulator per(m, B);
  BatchedSimulator vec(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                       BatchEngine::kVectorized);
  std::vector<EnvParams> ps(B);
  ps[1].youngs_scale = 3;
  ps[2].density_scale = 1.7;
  ps[3].override_gravity = true;
  ps[3].gravity = vec3(0.5, 0, -3.7);
  ps[4].mass_damping = 0.8;
  ps[4].youngs_scale = 0.5;
  std::vector<Real> forces;
  for (int e = 0; e < B; ++e) {
    per.set_params(e, ps[e]);
    vec.set_params(e, ps[e]);
    const std::vector<Real> f = axial_push(*m, 3.0 + e);
    forces.insert(forces.end(), f.begin(), f.end());
  }
  EXPECT_EQ(vec.params(1).youngs_scale, 3);
  per.set_external_forces(forces.data());
  vec.set_external_forces(forces.data());
  for (int k = 0; k < 25; ++k) {
    const std::vector<StepStatus> a = per.step(), b = vec.step();
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a[e], StepStatus::kConverged);
      ASSERT_EQ(b[e], StepStatus::kConverged);
    }
  }
  for (int e = 0; e < B; ++e)
    EXPECT_EQ(per.state(e).q, vec.state(e).q) << "env " << e;
  EXPECT_NE(vec.state(0).q, vec.state(3).q);
}

// reset with a mask: the masked environments take the initial state, or another environment's
// state (one upload, masked copies on the executor); the others keep theirs. Both engines give
// the same bits, and an environment reset to environment 0's state then steps as 0 does.
TEST(VectorBatch, ResetCopiesAStateIntoTheMaskedEnvironments) {
  const auto m =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  const int B = 5, nb = m->nbend;
  BatchedSimulator vec(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                       BatchEngine::kVectorized);
  BatchedSimulator per(m, B);
  std::vector<Real> kappa(2 * size_t(B) * nb, 0);
  for (int e = 0; e < B; ++e)
    for (int j = 0; j < nb; ++j)
      kappa[(size_t(e) * nb + j) * 2 + 1] = (0.02 + 0.005 * e) * std::sin(0.2 * j);
  for (BatchedSimulator* b : {&vec, &per}) {
    b->set_natural_curvature(kappa.data());
    for (int k = 0; k < 8; ++k)
      b->step();
  }
  const State s3 = vec.state(3), s4 = vec.state(4);
  const State initial = Simulator(m).state();
  vec.reset({0, 1, 0, 0, 0});
  per.reset({0, 1, 0, 0, 0});
  EXPECT_EQ(vec.state(1).q, initial.q);
  EXPECT_EQ(vec.state(1).edge_d1, initial.edge_d1);
  EXPECT_EQ(vec.state(1).time, 0);
  EXPECT_EQ(vec.state(3).q, s3.q);  // untouched
  const State s0 = vec.state(0);
  vec.reset({0, 0, 1, 0, 1}, s0);
  per.reset({0, 0, 1, 0, 1}, per.state(0));
  EXPECT_EQ(vec.state(4).q, s0.q);
  EXPECT_EQ(vec.state(4).u, s0.u);
  EXPECT_EQ(vec.state(4).bend_ref_twist, s0.bend_ref_twist);
  EXPECT_EQ(vec.state(4).time, s0.time);
  EXPECT_NE(vec.state(4).q, s4.q);
  // environments 2 and 4 now follow environment 0's actions from its state
  for (int e : {2, 4})
    for (int j = 0; j < 2 * nb; ++j)
      kappa[size_t(e) * 2 * nb + j] = kappa[size_t(j)];
  for (BatchedSimulator* b : {&vec, &per}) {
    b->set_natural_curvature(kappa.data());
    for (int k = 0; k < 5; ++k)
      for (StepStatus st : b->step())
        ASSERT_EQ(st, StepStatus::kConverged);
  }
  EXPECT_EQ(vec.state(2).q, vec.state(0).q);
  EXPECT_EQ(vec.state(4).q, vec.state(0).q);
  for (int e = 0; e < B; ++e)
    EXPECT_EQ(vec.state(e).q, per.state(e).q) << "env " << e;
  // the observed curvatures, all environments at once on the vectorized engine's executor: the
  // per-environment engine's (Simulator::bend_strains) bit for bit
  std::vector<Real> cv(3 * size_t(B) * nb), cp(cv.size());
  vec.curvatures(cv.data());
  per.curvatures(cp.data());
  EXPECT_EQ(cv, cp);
  EXPECT_GT(std::fabs(cv[3 * size_t(nb) * 4 + 3 * 50 + 1]), 1e-3);  // env 4 bent
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
