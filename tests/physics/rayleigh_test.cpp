// Rayleigh damping F = -(alpha M + beta K) u (issue 17, item 1; Huang et al., seed 003, eq. 1):
// a cantilever's first two modes (the discrete beam's, from its K and M) decay at
// zeta = alpha / (2 omega) + beta omega / 2, measured from the logarithmic decrement of its tip
// (the implicit midpoint rule adds no damping of its own);
// beta leaves a rigid translation undamped; the Jacobian of the stiffness term is exact (central
// differences of the residual); a part's own beta overrides the scene's; the scene format and
// the vectorized batch say what they do not take.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "error_util.h"
#include "modal_util.h"
#include "physics_util.h"
#include "slender/batch.h"
#include "slender/compare.h"
#include "slender/core/error.h"
#include "slender/info.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using namespace test::beam;  // kLength, kRadius, kE, kRho, kEdges, kTip

SceneBuilder cantilever(Real alpha, Real beta, Real dt) {
  SceneBuilder b = test::beam::clamped(dt);
  b.mass_damping(alpha);
  b.stiffness_damping(beta);
  return b;
}

test::Mode discrete_mode(const SceneBuilder& b, int i) { return test::discrete_mode(b, i, kTip); }

// the tip's free vibration from a mode's shape as initial velocity (1 mm/s at the tip; a tip
// amplitude of about 0.06 mm in the first mode), its decay between t0 and t1
test::Decay measure(const SceneBuilder& b, const test::Mode& mode, Real t0, Real t1) {
  return test::measure_decay(b, mode, kTip, t0, t1);
}

TEST(Rayleigh, FirstTwoModesDecayAtTheDampingRatioOfAlphaAndBeta) {
  const Real dt = 1e-3;
  struct Case {
    const char* name;
    Real alpha, beta;
  };
  for (const int i : {1, 2}) {
    // omega_1 about 17.6 rad/s (a period of 0.36 s), omega_2 about 6.2 omega_1
    const test::Mode mode = discrete_mode(cantilever(0, 0, dt), i);
    const Real w = mode.omega;
    // zeta_i = 0.01 from each alone, and both together (0.02); from t0 on, what the mode
    // shape held of the other modes no longer biases the peaks
    const Case cases[] = {{"alpha", 2 * 0.01 * w, 0},
                          {"beta", 0, 2 * 0.01 / w},
                          {"alpha + beta", 2 * 0.01 * w, 2 * 0.01 / w}};
    const Real t0 = i == 1 ? 1.0 : 0.1, t1 = i == 1 ? 4.0 : 0.8;
    for (const Case& c : cases) {
      const test::Decay d = measure(cantilever(c.alpha, c.beta, dt), mode, t0, t1);
      const Real zeta = c.alpha / (2 * d.omega) + c.beta * d.omega / 2;
      std::printf("mode %d, %-13s omega %.4f rad/s, zeta measured %.5f, theory %.5f (%d peaks)\n",
                  i, c.name, d.omega, d.zeta, zeta, d.peaks);
      ASSERT_GE(d.peaks, 6) << c.name;
      EXPECT_NEAR(d.zeta, zeta, 0.02 * zeta) << "mode " << i << ", " << c.name;
      EXPECT_NEAR(d.omega, w, 0.002 * w) << c.name;  // the simulated mode is the discrete one
    }
    // undamped: the midpoint rule keeps the amplitude (zeta below 1e-6)
    const test::Decay free = measure(cantilever(0, 0, dt), mode, t0, t1);
    std::printf("mode %d, undamped: zeta measured %.2e\n", i, free.zeta);
    EXPECT_LT(std::fabs(free.zeta), 1e-6);
  }
}

TEST(Rayleigh, BetaLeavesARigidTranslationUndamped) {
  for (const Real alpha : {Real(0), Real(0.5)}) {
    SceneBuilder b = cantilever(alpha, 0.05, 1e-3);
    b.spec().fixed_edges.clear();
    b.spec().fixed_nodes.clear();
    const auto model = build_model(b.build());
    Simulator sim(model);
    State s = sim.state();
    for (int i = 0; i < model->nnode; ++i)
      s.u[3 * i + 2] = 0.1;
    sim.set_state(s);
    ASSERT_TRUE(test::run_steps(sim, 100));
    Real worst = 0;
    for (int i = 0; i < model->nnode; ++i)
      worst = std::max(worst, std::fabs(sim.state().u[3 * i + 2] - 0.1));
    if (alpha == 0) {
      EXPECT_LT(worst, 1e-12) << "beta alone damps a rigid translation";
    } else {
      // alpha damps it: u = 0.1 ((1 - alpha dt / 2) / (1 + alpha dt / 2))^100 (midpoint rule)
      const Real r = (1 - alpha * 1e-3 / 2) / (1 + alpha * 1e-3 / 2);
      EXPECT_NEAR(sim.state().u[2], 0.1 * std::pow(r, 100), 1e-12);
    }
  }
}

TEST(Rayleigh, StiffnessTermJacobianMatchesCentralDifferences) {
  for (const IntegratorKind kind : {IntegratorKind::kImplicitEuler, IntegratorKind::kNewmark}) {
    SceneBuilder b = cantilever(0, 0.01, 2e-3);
    b.integrator().kind = kind;
    b.gravity(vec3(0, 0, -9.8));
    const auto model = build_model(b.build());
    Simulator sim(model);
    for (int k = 0; k < 10; ++k)
      ASSERT_TRUE(sim.step().ok());  // bent and moving
    const Real rel = test::residual_fd_error(sim, 2e-3, [](Real) { return Real(1e-7); });
    std::printf("stiffness damping (%s): |J - J_fd| / |J_fd| = %.3e\n", integrator_name(kind), rel);
    EXPECT_LT(rel, test::kFdRelTol);
  }
}

// apps/scenes/rayleigh_beams.json: rods, a hinge plate and (here) a mid-edge plate, their
// stiffness damping's Jacobian against central differences; then the scene's two beams over
// 1 s: the damped one has settled, the plain one still swings
TEST(Rayleigh, TheScenesBeamsAndPlates) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rayleigh_beams.json");
  // the tips' z: the damped beam's, the plain one's
  test::expect_damped_beside_plain(sc, 2, 3 * 20 + 2, 3 * 41 + 2, 0.7, 1.0, 5e-3);
}

// beta sets how much a body rebounds (Huang et al., seed 003, Supplementary Fig. 3): a ring of
// soft rod (radius 5 cm, E = 10 MPa) dropped from 5 cm onto the ground, implicit midpoint. The
// recovery factor e = sqrt(rebound / drop) of its centre's height above its resting height
// falls as beta grows; without beta the bounce is elastic (e within 1 % of 1). Prints the
// table of e against beta that docs/scene_format.md quotes.
TEST(Rayleigh, ARingsReboundFallsAsBetaGrows) {
  constexpr int kNodes = 40;
  constexpr Real kR = 0.05, kDrop = 0.05, kRod = 3e-3, kT = 0.5;
  auto recovery = [&](Real beta) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e7, 0.5);
    std::vector<Vec3> x;
    for (int i = 0; i < kNodes; ++i) {
      const Real a = 2 * kPi * i / kNodes;
      x.push_back(vec3(kR * std::cos(a), 0, kR + kDrop + kR * std::sin(a)));
    }
    b.polyline_rod("ring", x, mat, SceneBuilder::circle(kRod), /*closed=*/true);
    b.gravity(vec3(0, 0, -9.81));
    b.stiffness_damping(beta);
    GroundSpec g;
    g.enabled = true;
    b.ground(g);
    b.integrator().kind = IntegratorKind::kImplicitMidpoint;
    b.integrator().dt = 2e-4;
    b.integrator().duration = kT;
    const auto m = build_model(b.build());
    Simulator sim(m);
    auto centre = [&] {
      Real z = 0;
      for (int i = 0; i < kNodes; ++i)
        z += sim.state().q[3 * i + 2];
      return z / kNodes;
    };
    const Real z0 = centre();
    Real apex = -1, last = z0;
    bool rising = false;
    while (sim.time() < kT - 1e-9) {
      EXPECT_TRUE(sim.step().ok());
      const Real z = centre();
      rising = rising || z > last;  // after the first impact
      if (rising) apex = std::max(apex, z);
      last = z;
    }
    const Real rest = kR + kRod;  // the centre's height resting on the ground
    return std::sqrt(std::max(Real(0), apex - rest) / (z0 - rest));
  };
  Real previous = 2;
  std::printf("| beta [s] | recovery factor e |\n| --- | --- |\n");
  for (const Real beta : {0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2}) {
    const Real e = recovery(beta);
    std::printf("| %g | %.3f |\n", beta, e);
    if (beta == 0) {
      EXPECT_NEAR(e, 1, 0.01);
    }
    EXPECT_LT(e, previous) << "beta " << beta;
    previous = e;
  }
  EXPECT_LT(previous, 0.9);  // beta = 0.01 s takes a fifth of the bounce
}

// Huang et al.'s own set-up (seed 003, Supplementary Fig. 3): the star-shaped rolling robot of
// apps/scenes/rolling_robot_drop.json (seven curled limbs joined at the centre) dropped from
// 1 cm. The rebound of its centre after the first impact (the apex above its starting height
// over the ground, against the drop) falls as beta grows up to 0.01 s. Beyond, it rises again:
// a beta far above the impact's time scale resists the deformation itself, so the body meets
// the ground nearly rigid and the ground's elastic contact gives the energy back (the damping
// dissipates most when beta omega is about 1 for the modes the impact excites). Prints the
// table that docs/scene_format.md quotes.
TEST(Rayleigh, HuangsRollingRobotReboundsLessAsBetaGrows) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rolling_robot_drop.json");
  sc.integrator.dt = 2e-4;
  sc.integrator.duration = 0.2;
  const Real drop = 0.01;
  auto rebound = [&](Real beta) {
    sc.parts[0].stiffness_damping = beta;
    Simulator sim(build_model(sc));
    const Real z0 = sim.state().q[2], rest = z0 - drop;  // node 0: the centre
    Real apex = -1, last = z0;
    bool rising = false;
    while (sim.time() < sc.integrator.duration - 1e-9) {
      EXPECT_TRUE(sim.step().ok());
      const Real z = sim.state().q[2];
      rising = rising || z > last;  // after the first impact
      if (rising) apex = std::max(apex, z);
      last = z;
    }
    return (apex - rest) / drop;
  };
  Real previous = 2;
  std::printf("| beta [s] | rebound / drop |\n| --- | --- |\n");
  for (const Real beta : {0.0, 1e-3, 3e-3, 1e-2}) {
    const Real r = rebound(beta);
    std::printf("| %g | %.3f |\n", beta, r);
    EXPECT_LT(r, previous) << "beta " << beta;
    previous = r;
  }
  EXPECT_LT(previous, 0.93);
  const Real stiff = rebound(0.1);
  std::printf("| 0.1 | %.3f |\n", stiff);
  EXPECT_GT(stiff, previous);  // the turn described above
}

// a part's own alpha: two equal cantilevers, one with alpha = 2 zeta omega_1 (zeta = 0.01), the
// other undamped, in one scene: each tip decays at its own part's rate (2 %)
TEST(Rayleigh, APartsOwnAlphaDampsOnlyThatPart) {
  const Real dt = 1e-3;
  const test::Mode mode = discrete_mode(cantilever(0, 0, dt), 1);
  const Real alpha = 2 * 0.01 * mode.omega;
  SceneBuilder b = cantilever(0, 0, dt);
  const Real dl = kLength / (kEdges - 0.5);
  const int rod = b.straight_rod("other", vec3(-dl / 2, 0.05, 0), vec3(kLength, 0.05, 0),
                                 kEdges + 1, 0, SceneBuilder::circle(kRadius));
  b.fix_edge(rod, 0);
  b.part(0).mass_damping = alpha;
  const auto m = build_model(b.build());
  EXPECT_TRUE(m->mass_damping_per_part);
  Simulator sim(m);
  State st = sim.state();
  const int n = kEdges + 1;
  for (int i = 0; i < n; ++i) {
    st.u[3 * i + 2] = 1e-3 * mode.shape[3 * i + 2];
    st.u[3 * (n + i) + 2] = 1e-3 * mode.shape[3 * i + 2];
  }
  sim.set_state(st);
  std::vector<Real> peaks[2];
  std::vector<Real> z[2];
  while (sim.time() < 3.0) {
    ASSERT_TRUE(sim.step().ok());
    for (int k = 0; k < 2; ++k) {
      z[k].push_back(sim.state().q[3 * (k * n + n - 1) + 2]);
      const size_t j = z[k].size();
      if (j >= 3 && sim.time() > 0.5 && z[k][j - 2] > z[k][j - 3] && z[k][j - 2] >= z[k][j - 1])
        peaks[k].push_back(z[k][j - 2]);
    }
  }
  Real zeta[2];
  for (int k = 0; k < 2; ++k) {
    ASSERT_GE(peaks[k].size(), 5u);
    const Real delta = std::log(peaks[k].front() / peaks[k].back()) / Real(peaks[k].size() - 1);
    zeta[k] = delta / std::sqrt(4 * kPi * kPi + delta * delta);
  }
  std::printf("part alpha: zeta %.5f (damped part, theory 0.01), %.2e (undamped part)\n", zeta[0],
              zeta[1]);
  EXPECT_NEAR(zeta[0], 0.01, 2e-4);
  EXPECT_LT(std::fabs(zeta[1]), 1e-5);
}

// the vectorized batch runs a part's own alpha as the per-environment batch does, bit for bit:
// two rods, one with its own alpha, swinging from the same start; environment 1 overrides alpha
// for every part through set_params, environment 2 sets other parameters and keeps the parts'
TEST(Rayleigh, TheVectorizedBatchRunsAPartsOwnAlpha) {
  const auto m = build_model(read_scene_text(
      test::two_rods_with_damping("mass_proportional", "30", "0"), "alpha.json", ""));
  ASSERT_TRUE(m->mass_damping_per_part);
  const int B = 3;
  BatchedSimulator per_env(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kPerEnvironment);
  BatchedSimulator vec(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                       BatchEngine::kVectorized);
  EnvParams p1, p2;
  p1.mass_damping = 5;
  p2.density_scale = 1.5;
  for (BatchedSimulator* b : {&per_env, &vec}) {
    b->set_params(1, p1);
    b->set_params(2, p2);
    std::vector<Real> f(size_t(B) * 3 * m->nnode, 0);
    for (int e = 0; e < B; ++e)  // both tips pushed down for the first steps
      for (int tip : {10, 21})
        f[(size_t(e) * m->nnode + tip) * 3 + 2] = -0.01;
    b->set_external_forces(f.data());
    for (int k = 0; k < 60; ++k) {
      if (k == 10) b->clear_actions();
      for (StepStatus st : b->step())
        ASSERT_EQ(st, StepStatus::kConverged);
    }
  }
  std::vector<Real> xa(size_t(B) * 3 * m->nnode), xb(xa.size()), va(xa.size()), vb(xa.size());
  per_env.positions(xa.data());
  vec.positions(xb.data());
  per_env.velocities(va.data());
  vec.velocities(vb.data());
  EXPECT_EQ(xa, xb);
  EXPECT_EQ(va, vb);
  // the part's alpha acted: the damped rod's tip moves less than the plain one's in env 0
  const size_t n3 = 3 * size_t(m->nnode);
  EXPECT_LT(std::fabs(vb[3 * 10 + 2]) * 3, std::fabs(vb[3 * 21 + 2]) + 1e-12);
  // and environment 1's own alpha replaced both parts': its rods move alike
  EXPECT_NEAR(vb[n3 + 3 * 10 + 2], vb[n3 + 3 * 21 + 2],
              1e-9 + 1e-6 * std::fabs(vb[n3 + 3 * 21 + 2]));
}

TEST(Rayleigh, APartsOwnBetaOverridesTheScenes) {
  SceneBuilder b = cantilever(0, 0.02, 1e-3);
  b.part(0).stiffness_damping = 0;  // this part undamped
  const auto model = build_model(b.build());
  EXPECT_FALSE(model->stiffness_damping);
  SceneBuilder c = cantilever(0, 0, 1e-3);
  c.part(0).stiffness_damping = 0.02;
  const auto damped = build_model(c.build());
  EXPECT_TRUE(damped->stiffness_damping);
  for (const Real beta : damped->node_stiffness_damping)
    EXPECT_EQ(beta, 0.02);
}

TEST(Rayleigh, SceneFormatAndTheVectorizedBatch) {
  const std::string scene = test::two_rods_with_damping("stiffness_proportional", "0.003", "0.001");
  const auto m = build_model(read_scene_text(scene, "r.json", ""));
  EXPECT_EQ(m->node_stiffness_damping.front(), 0.003);
  EXPECT_EQ(m->node_stiffness_damping.back(), 0.001);
  EXPECT_EQ(m->mass_damping, 0);
  // a negative beta, an unknown key: errors naming the field
  std::string bad = scene;
  bad.replace(bad.find("0.003"), 5, "-1");
  EXPECT_EQ(test::catch_input_error([&] { read_scene_text(bad, "r.json", ""); }).field(),
            "rods[0].damping.stiffness_proportional");
  bad = scene;
  bad.replace(bad.find("\"stiffness_proportional\": 0.003"), 30, "\"stiffness\": 0.003");
  const InputError unknown = test::catch_input_error([&] { read_scene_text(bad, "r.json", ""); });
  EXPECT_NE(std::string(unknown.what()).find("unknown field"), std::string::npos) << unknown.what();
}

// the vectorized batch runs beta as the per-environment batch does, bit for bit: two rods with
// their own betas, pushed and let go; environments with their own Young's modulus (the kept K
// scales with it), density and alpha
TEST(Rayleigh, TheVectorizedBatchRunsBeta) {
  const auto m = build_model(read_scene_text(
      test::two_rods_with_damping("stiffness_proportional", "0.003", "0.001"), "beta.json", ""));
  const auto undamped = build_model(read_scene_text(
      test::two_rods_with_damping("stiffness_proportional", "0", "0"), "none.json", ""));
  ASSERT_TRUE(m->stiffness_damping);
  ASSERT_FALSE(undamped->stiffness_damping);
  const int B = 3;
  EnvParams p1, p2;
  p1.youngs_scale = 2;
  p2.density_scale = 0.5;
  p2.mass_damping = 1;
  std::vector<Real> f(size_t(B) * 3 * m->nnode, 0);
  for (int e = 0; e < B; ++e)  // both tips pushed down for the first steps
    for (int tip : {10, 21})
      f[(size_t(e) * m->nnode + tip) * 3 + 2] = -0.01;
  auto run = [&](const std::shared_ptr<const Model>& model, BatchEngine engine,
                 std::vector<Real>& x, std::vector<Real>& v) {
    BatchedSimulator b(model, B, model->scene.integrator, LinearSolverKind::kAuto, engine);
    b.set_params(1, p1);
    b.set_params(2, p2);
    b.set_external_forces(f.data());
    for (int k = 0; k < 60; ++k) {
      if (k == 10) b.clear_actions();
      for (StepStatus st : b.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    }
    x.resize(size_t(B) * 3 * model->nnode);
    v.resize(x.size());
    b.positions(x.data());
    b.velocities(v.data());
  };
  std::vector<Real> xa, va, xb, vb, xc, vc;
  run(m, BatchEngine::kPerEnvironment, xa, va);
  run(m, BatchEngine::kVectorized, xb, vb);
  run(undamped, BatchEngine::kVectorized, xc, vc);
  EXPECT_EQ(xa, xb);
  EXPECT_EQ(va, vb);
  // beta acted: the damped batch's velocities differ from the undamped one's
  const Real changed = max_relative_difference(vc, vb);
  std::printf("vectorized batch with beta: velocities %.3e (relative) from the undamped run\n",
              changed);
  EXPECT_GT(changed, 1e-3);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
