// Feedback control on natural strains (seed 001 §IV-10, §VII; docs/control.md). The S-shape
// regulation of Fig. 12 (a-d): a simply supported beam is statically determinate, so its
// curvature is the natural one plus M / EI with M the moment of gravity alone; proportional
// control with feedforward leaves exactly the open-loop error / (1 + kp), and the integral takes
// it to zero, with the shape of the gravity-free target. The same for a hanging rod's stretch, a
// rod's twist and a plate's hinge. Anti-windup keeps a saturated integral bounded so that the
// loop recovers at once when the reference comes back into reach; a batch's per-environment
// controllers equal single simulators; the run loop writes controllers.csv.

#include "slender/control.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "error_util.h"
#include "physics_util.h"
#include "slender/checkpoint.h"
#include "slender/run.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

const std::string kSShape = std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/pi_s_shape.json";

SceneSpec s_shape(Real kp, Real ki, bool gravity = true) {
  SceneSpec sc = read_scene_file(kSShape);
  sc.controllers[0].kp = {kp};
  sc.controllers[0].ki = {ki};
  if (!gravity) sc.forces.gravity = vec3(0, 0, 0);
  return sc;
}

Real max_abs(const std::vector<Real>& v) {
  Real m = 0;
  for (Real x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

// r(t) - y(t) of every spring of controller 0 at the simulator's state (unfiltered)
std::vector<Real> tracking_error(const Simulator& sim) {
  const StrainController& c = *sim.controller();
  const std::vector<Real> bend = sim.strains(StrainKind::kBendTwist);
  const std::vector<Real> stretch = sim.strains(StrainKind::kStretch);
  const std::vector<Real> hinge = sim.strains(StrainKind::kHingeAngle);
  StrainReadings y{bend.data(), stretch.data(), hinge.data()};
  std::vector<Real> row;
  c.csv_row(0, sim.time(), y, row);
  const int n = c.springs(0);
  return std::vector<Real>(row.begin() + 1 + n, row.begin() + 1 + 2 * n);
}

TEST(Control, SShapeIntegralActionRemovesTheGravityError) {
  // open loop (the natural curvature the target) and proportional only: steady after 2 s (the
  // slowest mode decays as exp(-alpha t / 2), alpha = 10 / s); PI after the scene's 4 s
  Simulator open(build_model(s_shape(0, 0)));
  Simulator prop(build_model(s_shape(0.5, 0)));
  ASSERT_TRUE(test::run_steps(open, 200));
  ASSERT_TRUE(test::run_steps(prop, 200));
  const std::vector<Real> e_open = tracking_error(open), e_prop = tracking_error(prop);
  // gravity's moment over EI: up to q L^2 / (8 EI) = 0.49 / m at the middle
  EXPECT_GT(max_abs(e_open), 0.4);
  // the beam is statically determinate: e_P = e_open / (1 + kp), spring by spring, to the
  // change of gravity's moment with the slightly different sag (under 1 %)
  for (size_t k = 0; k < e_open.size(); ++k)
    EXPECT_NEAR(e_prop[k], e_open[k] / 1.5, 0.01 * max_abs(e_open)) << "spring " << k;

  Simulator pi(build_model(s_shape(0.5, 5)));
  ASSERT_TRUE(test::run_steps(pi, 400));
  // the integral mode decays at ki / (1 + kp) = 3.3 / s: exp(-3.3 x 3.5) of 0.5 / m is 5e-6
  const std::vector<Real> e_pi = tracking_error(pi);
  EXPECT_LT(max_abs(e_pi), 1e-5);
  EXPECT_LT(max_abs(pi.controller()->error(0)), 1e-5);
  // the integral holds what gravity takes: z = the open-loop error, to the change of gravity's
  // moment between the sagged open-loop shape and the target's (the roller end sits 3 % of
  // the sag elsewhere: 4 %)
  const std::vector<Real>& z = pi.controller()->integral(0);
  for (size_t k = 0; k < e_open.size(); ++k)
    EXPECT_NEAR(z[k], e_open[k], 0.04 * max_abs(e_open)) << "spring " << k;

  // the shape (Fig. 12 d): that of the gravity-free rod with the target as its natural
  // curvature, to the curvature error and the axial strain of gravity (1e-6)
  Simulator target(build_model(s_shape(0, 0, false)));
  ASSERT_TRUE(test::run_steps(target, 400));
  EXPECT_LT(max_abs(tracking_error(target)), 1e-7);
  Real sq = 0;
  for (int n = 0; n < pi.model().nnode; ++n) {
    const Vec3 d = test::node_position(pi.state(), n) - test::node_position(target.state(), n);
    sq += dot(d, d);
  }
  EXPECT_LT(std::sqrt(sq / pi.model().nnode), 2e-5);  // [m], of an amplitude of 0.1 m
}

// relative RMS tracking error rms(r - y) / rms(r) over the third second of the serpentine
Real serpentine_tracking_error(const SceneSpec& sc) {
  Simulator sim(build_model(sc));
  Real se = 0, sr = 0;
  for (int i = 0; i < 300; ++i) {
    EXPECT_TRUE(sim.step().ok()) << "step " << i;
    if (i < 200) continue;
    const std::vector<Real> e = tracking_error(sim);
    for (int k = 0; k < sim.controller()->springs(0); ++k) {
      const Real r = sim.controller()->reference_at(0, 0, k, sim.time());
      se += e[size_t(k)] * e[size_t(k)];
      sr += r * r;
    }
  }
  return std::sqrt(se / sr);
}

TEST(Control, SerpentineTrackingCutsTheLagOfTheMedium) {
  const SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/pi_serpentine.json");
  SceneSpec open = sc;
  open.controllers[0].kp = {0};
  open.controllers[0].ki = {0};
  open.controllers[0].spatial_smoothing = 0;
  const Real e_open = serpentine_tracking_error(open), e_pi = serpentine_tracking_error(sc);
  // the drag holds the curvature back by about a third of the wave (30.9 %); the scene's
  // per-spring PI with smoothing takes it to 12.5 % (docs/control.md)
  EXPECT_GT(e_open, 0.25);
  EXPECT_LT(e_pi, 0.15);
  EXPECT_LT(e_pi, 0.5 * e_open);
}

// a rod hanging from its top node, its stretch controlled to a contraction r = -5 %: an edge
// of natural stretch 1 + u under the tension T stretches to (1 + u)(1 + d) - 1, d = T / EA, so
// that open loop (u = r) leaves e_o = -(1 + r) d, P (u = r + kp e) e_o / (1 + kp (1 + d)), and
// PI none, with u = (1 + r) / (1 + d) - 1
std::shared_ptr<const Model> hanging_rod(Real kp, Real ki) {
  SceneBuilder b;
  const int mat = b.material("soft", 1000, 1e5, 0.5);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0, 0, -0.2), 11, mat, SceneBuilder::circle(0.005));
  b.fix_node(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.mass_damping(200);
  ControllerSpec c;
  c.reference.target = ActuationSpec::Target::kRodStretch;
  c.reference.part = rod;
  c.reference.amplitude = -0.05;
  c.kp = {kp};
  c.ki = {ki};
  b.controller(c);
  b.integrator().dt = 0.005;
  b.integrator().two_d = true;
  return build_model(b.build());
}

TEST(Control, StretchIntegralActionRemovesTheWeightError) {
  const Real r = -0.05, kp = 1;
  Simulator open(hanging_rod(0, 0)), prop(hanging_rod(kp, 0)), pi(hanging_rod(0.5, 50));
  ASSERT_TRUE(test::run_steps(open, 200));
  ASSERT_TRUE(test::run_steps(prop, 200));
  ASSERT_TRUE(test::run_steps(pi, 200));
  const std::vector<Real> e_open = tracking_error(open), e_prop = tracking_error(prop);
  // the top edge carries the weight of the lumped masses below it, rho A g (L - l / 2): d = rho
  // g (L - l / 2) / E (the overdamped axial motion has settled to 1e-9 after 1 s)
  EXPECT_NEAR(-e_open.front(), (1 + r) * 1000 * 9.81 * 0.19 / 1e5, 1e-8);
  const std::vector<Real>& u = pi.controller()->command(0);
  for (size_t k = 0; k < e_open.size(); ++k) {
    const Real d = -e_open[k] / (1 + r);
    EXPECT_NEAR(e_prop[k], e_open[k] / (1 + kp * (1 + d)), 1e-8) << "edge " << k;
    EXPECT_NEAR(u[k], (1 + r) / (1 + d) - 1, 1e-8) << "edge " << k;
  }
  EXPECT_LT(max_abs(tracking_error(pi)), 1e-8);
}

// the twist and hinge-angle loops: a rod clamped at one end twisted to 2 rad/m (no load: its
// twist follows the natural one within a step, the loop's poles those of the one-step delay),
// and a plate whose free half folds under gravity at the controlled centre-line hinges
TEST(Control, TwistAndHingeLoopsConverge) {
  {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e7, 0.5);
    const int rod =
        b.straight_rod("rod", vec3(0, 0, 0), vec3(0.2, 0, 0), 11, mat, SceneBuilder::circle(0.005));
    b.fix_edge(rod, 0);
    b.mass_damping(50);
    ControllerSpec c;
    c.reference.target = ActuationSpec::Target::kRodTwist;
    c.reference.part = rod;
    c.reference.amplitude = 2;  // [rad/m]
    c.kp = {0.5};
    c.ki = {20};
    b.controller(c);
    b.integrator().dt = 0.01;
    Simulator sim(build_model(b.build()));
    ASSERT_TRUE(test::run_steps(sim, 200));
    // from 2 rad/m to the noise of Newton's tolerance: a residual moment of 1e-8 N m on the
    // twist stiffness GJ / dl = 0.16 N m is 6e-8 rad, 3e-6 rad/m
    const std::vector<Real> bt = sim.strains(StrainKind::kBendTwist);
    for (int k = 0; k < sim.model().nbend; ++k)
      EXPECT_NEAR(bt[3 * size_t(k) + 2] / sim.model().bend_dl[size_t(k)], 2, 1e-5);
    EXPECT_LT(max_abs(tracking_error(sim)), 1e-5);
  }
  {
    // a plate, one half held, the other folding under gravity at the centre-line hinges
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e8, 0.3);
    const int s = b.rectangle_shell("plate", vec3(-0.05, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.02, 0),
                                    0.01, true, mat, 1e-3);
    b.membrane(s, MembraneModel::kSprings);
    const PartSpec& p = b.part(s);
    for (int i = 0; i < int(p.nodes.size()); ++i)
      if (p.nodes[i][0] < 1e-9) b.fix_node(s, i);
    b.gravity(vec3(0, 0, -9.81));
    b.mass_damping(50);
    ControllerSpec c;
    c.reference.target = ActuationSpec::Target::kHingeAngle;
    c.reference.part = s;
    c.reference.amplitude = 0.3;  // [rad]
    c.reference.select_normal = vec3(1, 0, 0);
    c.kp = {0.5};
    c.ki = {20};
    b.controller(c);
    b.integrator().dt = 0.01;
    SceneSpec sc = b.build();
    sc.controllers[0].kp = {0};
    sc.controllers[0].ki = {0};
    Simulator open(build_model(sc));
    Simulator sim(build_model(b.build()));
    ASSERT_TRUE(test::run_steps(open, 150));
    ASSERT_TRUE(test::run_steps(sim, 150));
    // gravity folds the free half by 0.013 rad more; the integral takes 99 % of it out in
    // 1.5 s (a slow twist of the flap, the two hinges' errors of opposite sign, sets the pace:
    // 5e-5 rad)
    const Real e_open = max_abs(tracking_error(open));
    EXPECT_GT(e_open, 0.01);
    EXPECT_LT(max_abs(tracking_error(sim)), 0.01 * e_open);
  }
}

// the S-shape beam (21 nodes) whose reference asks for 4 / m until t = 1 s, then 1 / m, its
// command limited to [-2, 2] / m (or, for the baseline, not limited)
SceneSpec saturated(AntiWindup aw, Real limit) {
  SceneSpec sc = read_scene_file(kSShape);
  sc.output.csv_nodes.clear();
  sc.parts[0].nodes.clear();
  sc.parts[0].edges.clear();
  for (int i = 0; i < 21; ++i)
    sc.parts[0].nodes.push_back(vec3(i / 20.0, 0, 0));
  for (int i = 0; i < 20; ++i)
    sc.parts[0].edges.push_back({i, i + 1});
  ControllerSpec& c = sc.controllers[0];
  c.kp = {0.5};
  c.ki = {5};
  c.command_min = -limit;
  c.command_max = limit;
  c.rate_limit = 0;
  c.reference.ramp_in = 0;
  c.reference.time.kind = TimeFunction::Kind::kTable;  // s(t) sin(2 pi x / L)
  c.reference.time.table = {{0, 1}, {1, 1}, {1.01, 0.25}, {10, 0.25}};
  c.reference.phase_per_length = 0;
  c.profile.clear();
  for (int k = 1; k < 20; ++k)
    c.profile.push_back(std::sin(2 * 3.14159265358979 * k / 20.0));
  c.anti_windup = aw;
  validate_scene(sc);
  return sc;
}

struct WindupRun {
  Real z_max = 0;           // the largest integral term over the run [1/m]
  Real recovered_at = 1e9;  // the time after 1 s from which the error stays below 0.02 / m
};

WindupRun run_saturated(AntiWindup aw, Real limit = 2) {
  Simulator sim(build_model(saturated(aw, limit)));
  WindupRun r;
  for (int i = 0; i < 250; ++i) {
    EXPECT_TRUE(sim.step().ok());
    r.z_max = std::max(r.z_max, max_abs(sim.controller()->integral(0)));
    const bool small = max_abs(tracking_error(sim)) < 0.02;
    if (sim.time() > 1 + 1e-9 && small && r.recovered_at > 1e8) r.recovered_at = sim.time();
    if (!small) r.recovered_at = 1e9;
  }
  return r;
}

TEST(Control, AntiWindupBoundsTheIntegralAndRecoversAtOnce) {
  const WindupRun free = run_saturated(AntiWindup::kBackCalculation, 8);
  const WindupRun none = run_saturated(AntiWindup::kNone);
  const WindupRun clamp = run_saturated(AntiWindup::kClamp);
  const WindupRun back = run_saturated(AntiWindup::kBackCalculation);
  // unlimited, the loop settles 0.86 s after the drop (the integral's rate ki / (1 + kp))
  EXPECT_LT(free.recovered_at, 2.0);
  // without anti-windup the integral runs on at ki e, 5 x (4 - 2) / m per second at the
  // middle, for the second of saturation, and has not unwound 1.5 s after the drop
  EXPECT_GT(none.z_max, 5);
  EXPECT_GT(none.recovered_at, 2.5);
  // with either it stays at the size of the gravity error (under 1 / m), and the loop recovers
  // as the unlimited one does, within a step or two
  for (const WindupRun* r : {&clamp, &back}) {
    EXPECT_LT(r->z_max, 1);
    EXPECT_LT(r->recovered_at, free.recovered_at + 0.03);
  }
}

TEST(Control, BatchEnvironmentsEqualSingleRuns) {
  const auto m = build_model(s_shape(0.5, 5));
  const int nenv = 3, steps = 60, n = m->nbend;
  // environment 1 its own gains (per spring), environment 2 its own reference (a flatter S,
  // held)
  const std::vector<Real> ki1 = {2};
  std::vector<Real> kp1(size_t(n), 0.3);
  for (int k = 1; k < n; k += 2)
    kp1[size_t(k)] = 0.4;
  std::vector<Real> flat(static_cast<size_t>(n));
  std::vector<std::unique_ptr<Simulator>> single;
  for (int e = 0; e < nenv; ++e) {
    single.push_back(std::make_unique<Simulator>(m));
    StrainController& c = *single.back()->controller();
    if (e == 0)
      for (int k = 0; k < n; ++k)
        flat[size_t(k)] = 0.5 * c.reference_at(0, 0, k, 1.0);
    if (e == 1) c.set_gains(0, 0, kp1, ki1);
    if (e == 2) c.set_reference(0, 0, flat.data());
    ASSERT_TRUE(test::run_steps(*single.back(), steps));
  }
  // three distinct runs
  EXPECT_NE(single[0]->state().q, single[1]->state().q);
  EXPECT_NE(single[0]->state().q, single[2]->state().q);
  for (BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    SCOPED_TRACE(engine == BatchEngine::kVectorized ? "vectorized" : "per environment");
    BatchedSimulator batch(m, nenv, m->scene.integrator, LinearSolverKind::kAuto, engine);
    StrainController& c = *batch.controller();
    EXPECT_EQ(c.nenv(), nenv);
    c.set_gains(0, 1, kp1, ki1);
    c.set_reference(0, 2, flat.data());
    for (int i = 0; i < steps; ++i)
      for (StepStatus st : batch.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    for (int e = 0; e < nenv; ++e) {
      const std::vector<Real>& q1 = single[size_t(e)]->state().q;
      const std::vector<Real>& qb = batch.state(e).q;
      // the per-environment engine steps each environment with a Simulator: the same bits; the
      // vectorized engine solves the same Newton steps with a batched banded LU (round-off)
      const Real tol = engine == BatchEngine::kPerEnvironment ? 0 : 1e-10;
      for (size_t i = 0; i < q1.size(); ++i)
        ASSERT_NEAR(qb[i], q1[i], tol) << "environment " << e << ", DOF " << i;
      const std::vector<Real>& u1 = single[size_t(e)]->controller()->command(0);
      for (int k = 0; k < n; ++k)
        ASSERT_NEAR(c.command(0)[size_t(e * n + k)], u1[size_t(k)], tol * 1e3);
    }
  }
  // gains of another size than 1 or the springs', or negative, are refused
  EXPECT_THROW(single[0]->controller()->set_gains(0, 0, {0.1, 0.2}, ki1), Error);
  EXPECT_THROW(single[0]->controller()->set_gains(0, 0, {-1}, ki1), Error);
}

// `slender run`'s loop writes controllers.csv: per controller the RMS error, each spring's
// command and its error at the recorded state. A run with checkpoints, resumed into its own
// folder from one, writes the uninterrupted run's controllers.csv byte for byte (the
// controllers' state is in the checkpoint, and the file continues from its mark)
TEST(Control, RunWritesTheControllersCsv) {
  const std::string dir = ::testing::TempDir() + "/slender_control_run";
  const auto m = build_model(s_shape(0.5, 5));
  Simulator sim(m);
  RunOptions o;
  o.out_dir = dir;
  o.duration = 0.5;
  o.progress = false;
  std::ostringstream log;
  const RunResult r = run_simulation(sim, o, log);
  ASSERT_TRUE(r.ok) << r.message;
  std::ifstream f(dir + "/controllers.csv");
  ASSERT_TRUE(f.good());
  std::string head, line, last;
  std::getline(f, head);
  const int n = m->nbend;
  EXPECT_EQ(head.rfind("time,shape_error_rms,shape_command_0,", 0), 0u) << head;
  EXPECT_NE(head.find(",shape_error_" + std::to_string(n - 1)), std::string::npos);
  int rows = 0;
  while (std::getline(f, line)) {
    last = line;
    ++rows;
  }
  EXPECT_EQ(rows, 1 + 50 / m->scene.output.every);
  std::vector<Real> v;
  std::stringstream ss(last);
  for (std::string cell; std::getline(ss, cell, ',');)
    v.push_back(std::stod(cell));
  ASSERT_EQ(int(v.size()), 2 + 2 * n);
  EXPECT_DOUBLE_EQ(v[0], sim.time());
  const std::vector<Real> e = tracking_error(sim);
  Real sq = 0;
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(v[size_t(2 + k)], sim.controller()->command(0)[size_t(k)]);
    EXPECT_EQ(v[size_t(2 + n + k)], e[size_t(k)]);
    sq += e[size_t(k)] * e[size_t(k)];
  }
  EXPECT_NEAR(v[1], std::sqrt(sq / n), 1e-15);

  const auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string dir2 = dir + "_resumed";
  Simulator first(m);
  RunOptions cp = o;
  cp.out_dir = dir2;
  cp.checkpoint_every = 20;
  cp.checkpoint_path = dir2 + "/ck.slck";
  cp.duration = 0.35;  // stopped after step 35: the last checkpoint at step 20
  ASSERT_TRUE(run_simulation(first, cp, log).ok);
  Simulator resumed(m);
  RunCursor c = load_checkpoint(resumed, cp.checkpoint_path);
  ASSERT_EQ(c.steps, 20);
  c.t_end = o.duration;  // (as `slender run --resume --duration`: on to the whole run's end)
  RunOptions rest = o;
  rest.out_dir = dir2;
  rest.resume = &c;
  ASSERT_TRUE(run_simulation(resumed, rest, log).ok) << log.str();
  EXPECT_EQ(resumed.state().q, sim.state().q);
  EXPECT_EQ(bytes(dir2 + "/controllers.csv"), bytes(dir + "/controllers.csv"));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
