// Shape-memory-alloy actuation (issue 17, item 4, first part): the "sma" time function is
// Huang et al.'s eq. 7 (seed 003: a linear fall of the natural curvature to n times its value
// over t0, then a logistic recovery), repeated every period; a single curled limb
// (apps/scenes/sma_limb.json: 30 mm, 120 /m at rest) driven by it straightens and recovers,
// its curvature following n..1 times the rest curvature; bad parameters are named.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "error_util.h"
#include "physics_util.h"
#include "slender/batch.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// eq. 7 as the ratio kappa(t) / kappa0
Real eq7(Real t, Real n, Real tau, Real t_bar, Real t0) {
  return t < t0 ? (n - 1) * t / t0 + 1 : (1 - n) / (1 + std::exp(-tau * (t - t_bar))) + n;
}

TEST(Sma, TheTimeFunctionIsEquationSevenLessOne) {
  TimeFunction f;
  f.kind = TimeFunction::Kind::kSma;
  f.sma_n = 0.1;
  f.sma_tau = 8;
  f.sma_t_bar = 1.2;
  f.sma_t0 = 0.25;
  f.sma_start = 0.5;
  f.sma_period = 3;
  EXPECT_EQ(eval_time_function(f, 0.2), 0);  // before the start
  for (const Real t : {0.0, 0.1, 0.249, 0.25, 0.6, 1.2, 2.0, 2.99}) {
    const Real want = eq7(t, 0.1, 8, 1.2, 0.25) - 1;
    EXPECT_NEAR(eval_time_function(f, 0.5 + t), want, 1e-14) << t;
    EXPECT_NEAR(eval_time_function(f, 0.5 + 3 + t), want, 1e-12) << t;  // the next cycle
  }
  EXPECT_NEAR(eval_time_function(f, 0.5 + 0.25 - 1e-12), 0.1 - 1, 1e-9);  // n at t0
}

// the mean material curvature kappa1 of the limb's bend stencils
Real mean_kappa1(const Simulator& sim) {
  const std::vector<Real> k = sim.bend_strains();
  Real s = 0;
  const int n = int(k.size() / 3);
  for (int i = 0; i < n; ++i)
    s += k[3 * i];
  return s / n;
}

TEST(Sma, ALimbStraightensAndRecoversFollowingEquationSeven) {
  const auto m =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/sma_limb.json"));
  Simulator sim(m);
  const Real k0 = mean_kappa1(sim);
  EXPECT_GT(k0, 0);
  // the limb follows its natural curvature with a lag of a few ms (mass damping 120 /s against
  // a first bending frequency of about 250 rad/s): within 2 % of k0 away from the fast ramp
  for (const Real t : {0.5, 0.8, 1.0, 1.2, 1.5, 2.0, 2.9, 3.5, 4.2}) {
    while (sim.time() < t - 1e-9)
      ASSERT_TRUE(sim.step().ok());
    const Real want = k0 * eq7(std::fmod(t, 3.0), 0.1, 8, 1.2, 0.25);
    const Real got = mean_kappa1(sim);
    std::printf("t = %.2f s: kappa1 %.5f, eq. 7 %.5f (%.2f %% of kappa0)\n", t, got, want,
                100 * (got - want) / k0);
    EXPECT_NEAR(got, want, 0.02 * k0) << "t = " << t;
  }
}

// ---- a part's Young's modulus in time ------------------------------------------------------

constexpr Real kLength = 0.1, kRadius = 1e-3, kE = 1e7;

SceneBuilder cantilever(const TimeFunction* youngs) {
  const Real dl = kLength / 19.5;
  SceneBuilder b;
  const int mat = b.material("m", 1000, kE, 0.5);
  const int rod = b.straight_rod("beam", vec3(-dl / 2, 0, 0), vec3(kLength, 0, 0), 21, mat,
                                 SceneBuilder::circle(kRadius));
  b.fix_edge(rod, 0);
  if (youngs) {
    b.part(rod).youngs_in_time = true;
    b.part(rod).youngs_time = *youngs;
  }
  return b;
}

TimeFunction table(std::vector<std::array<Real, 2>> rows) {
  TimeFunction f;
  f.kind = TimeFunction::Kind::kTable;
  f.table = std::move(rows);
  return f;
}

// twice the modulus, half the static deflection (a small tip load: linear to 1e-4)
TEST(YoungsInTime, TwiceTheModulusHalvesTheStaticDeflection) {
  const TimeFunction twice = table({{0, 1}});
  Real tip[2];
  for (int k = 0; k < 2; ++k) {
    SceneBuilder b = cantilever(k ? &twice : nullptr);
    b.point_load(0, -1, vec3(0, 0, -1e-5));  // a tip deflection of 0.4 % of the length
    b.integrator().newton.abs_tol = 1e-14;
    const test::StaticSolve s = test::static_solve(b, 1);
    tip[k] = s.sim->state().q[3 * 20 + 2];
  }
  EXPECT_NEAR(tip[1] / tip[0], 0.5, 1e-4);
}

// the modulus doubles within 20 ms (at t = 1.5 s) during a free vibration (implicit midpoint): the
// frequency rises by sqrt(2), and the mechanical energy changes only by the work of the modulus'
// change, sum over steps of U0 (s(t_n+1) - s(t_n)) with U0 the elastic energy at unit scale (2 %)
TEST(YoungsInTime, AStiffeningBeamKeepsItsEnergyBalanceAndRisesInFrequency) {
  const TimeFunction stiffen = table({{0, 0}, {1.5, 0}, {1.52, 1}});
  SceneBuilder b = cantilever(&stiffen);
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  b.integrator().dt = 5e-4;
  const auto m = build_model(b.build());
  Simulator sim(m);
  State st = sim.state();
  for (int i = 0; i < m->nnode; ++i) {
    const Real x = std::max(Real(0), st.q[3 * i]) / kLength;
    st.u[3 * i + 2] = 1e-2 * x * x;
  }
  sim.set_state(st);
  auto elastic = [&] {
    const Energies e = sim.energies();
    return e.stretch + e.bend + e.twist;
  };
  const Real E0 = sim.energies().total();
  Real work = 0, s_prev = eval_time_function(stiffen, 0), u_prev = elastic();
  std::vector<Real> up_cross;  // times the tip's z crosses 0 upwards
  Real z_prev = 0;
  while (sim.time() < 3.0 - 1e-9) {
    ASSERT_TRUE(sim.step().ok());
    const Real s = eval_time_function(stiffen, sim.time());
    const Real u = elastic();
    // U0 at both ends of the step (unit scale), averaged: the work of the modulus' change
    work += Real(0.5) * (u_prev / (1 + s_prev) + u / (1 + s)) * (s - s_prev);
    s_prev = s;
    u_prev = u;
    const Real z = sim.state().q[3 * 20 + 2];
    if (z_prev < 0 && z >= 0) up_cross.push_back(sim.time() - z / (z - z_prev) * 5e-4);
    z_prev = z;
  }
  const Real dE = sim.energies().total() - E0;
  std::printf("energy change %.6e J, work of the modulus' change %.6e J\n", dE, work);
  EXPECT_GT(std::fabs(work), 0.05 * E0);
  EXPECT_NEAR(dE, work, 1e-3 * std::fabs(work));
  // periods before (t < 1.5 s) and after (t > 1.55 s) the change
  Real before = 0, after = 0;
  int nb = 0, na = 0;
  for (size_t i = 1; i < up_cross.size(); ++i) {
    const Real T = up_cross[i] - up_cross[i - 1];
    if (up_cross[i] < 1.5) before += T, ++nb;
    if (up_cross[i - 1] > 1.55) after += T, ++na;
  }
  ASSERT_GE(nb, 2);
  ASSERT_GE(na, 2);
  std::printf("period %.5f s before, %.5f s after: ratio %.4f (sqrt 2 = 1.4142)\n", before / nb,
              after / na, (before / nb) / (after / na));
  EXPECT_NEAR((before / nb) / (after / na), std::sqrt(2.0), 0.01);
}

// the scaled stencils' Jacobian against central differences of the residual (with Rayleigh
// damping on top, whose K follows the modulus)
TEST(YoungsInTime, JacobianMatchesCentralDifferences) {
  const TimeFunction ramp = table({{0, 0}, {0.1, 0.7}});
  SceneBuilder b = cantilever(&ramp);
  b.gravity(vec3(0, 0, -9.8));
  b.stiffness_damping(2e-3);
  b.integrator().dt = 2e-3;
  Simulator sim(build_model(b.build()));
  for (int k = 0; k < 20; ++k)
    ASSERT_TRUE(sim.step().ok());
  const Real rel = test::residual_fd_error(sim, 2e-3, [](Real) { return Real(1e-7); });
  std::printf("modulus in time: |J - J_fd| / |J_fd| = %.3e\n", rel);
  EXPECT_LT(rel, test::kFdRelTol);
}

TEST(YoungsInTime, ANonPositiveModulusStopsTheRunNamingThePart) {
  const TimeFunction bad = table({{0, 0}, {0.01, -2}});
  SceneBuilder b = cantilever(&bad);
  b.integrator().dt = 1e-3;
  Simulator sim(build_model(b.build()));
  test::expect_error(
      [&] {
        for (int k = 0; k < 20; ++k)
          sim.step();
      },
      "part 'beam'");
}

TEST(YoungsInTime, TheSceneKeyAndTheVectorizedBatch) {
  const std::string scene = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 1e-3, "youngs_modulus": YM,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 5}}],
  "boundary": {"fixed_edges": [{"part": "r", "edges": [0]}]}
})";
  auto with = [&](const std::string& ym) {
    std::string s = scene;
    s.replace(s.find("YM"), 2, ym);
    return s;
  };
  const auto m = build_model(read_scene_text(
      with(R"({"time": {"type": "sine", "frequency": 1, "amplitude": 0.5}})"), "y.json", ""));
  ASSERT_EQ(m->youngs_time_part, std::vector<int>{0});
  EXPECT_NEAR(part_youngs_scales(*m, 0.25)[0], 1.5, 1e-12);
  for (const auto& [ym, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"tim": {"type": "constant"}})", "rods[0].youngs_modulus.tim"},
           {R"({"time": {"type": "ramp"}})", "rods[0].youngs_modulus.time.duration"}}) {
    const std::string& given = ym;  // (a structured binding is not captured before C++20)
    const InputError e =
        test::catch_input_error([&] { build_model(read_scene_text(with(given), "y.json", "")); });
    EXPECT_EQ(e.field(), field) << ym << ": " << e.what();
  }
}

// A part's modulus times a factor from code (Simulator::set_part_youngs_scale, the batch's
// per-environment action): two cantilevers under gravity, the second's factor 3, step for step
// as a scene whose second material has three times the modulus (1e-9 relative: the scaling
// rounds differently); in a per-environment batch, each environment its own factors, and
// clear_actions goes back to 1; bad factors and the vectorized batch are refused.
SceneBuilder two_cantilevers(Real E2) {
  SceneBuilder b;
  const int m1 = b.material("m1", 1000, 1e7, 0.5);
  const int m2 = b.material("m2", 1000, E2, 0.5);
  for (int k = 0; k < 2; ++k) {
    const int rod = b.straight_rod(k ? "b" : "a", vec3(0, 0.05 * k, 0), vec3(0.1, 0.05 * k, 0), 11,
                                   k ? m2 : m1, SceneBuilder::circle(1e-3));
    b.fix_edge(rod, 0);
  }
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().dt = 1e-3;
  return b;
}

Real max_rel_diff(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    n = std::max(n, std::fabs(b[i]));
  }
  return d / n;
}

TEST(YoungsPerPart, ACallersFactorIsThePartsModulus) {
  Simulator scaled(build_model(two_cantilevers(1e7).build()));
  Simulator stiff(build_model(two_cantilevers(3e7).build()));
  Simulator plain(build_model(two_cantilevers(1e7).build()));
  scaled.set_part_youngs_scale({1, 3});
  ASSERT_TRUE(test::run_steps(scaled, 50));
  ASSERT_TRUE(test::run_steps(stiff, 50));
  ASSERT_TRUE(test::run_steps(plain, 50));
  const Real d = max_rel_diff(scaled.state().q, stiff.state().q);
  std::printf("factor 3 against a modulus 3 times: largest difference %.2e of the largest q\n", d);
  EXPECT_LT(d, 1e-9);
  EXPECT_GT(max_rel_diff(plain.state().q, stiff.state().q), 1e-6);  // the factor did something
  // the energies see it too
  EXPECT_NEAR(scaled.energies().bend, stiff.energies().bend, 1e-9 * stiff.energies().bend);
  // bad factors: a wrong count, zero, NaN
  test::expect_error([&] { scaled.set_part_youngs_scale({1}); }, "2 values");
  test::expect_error([&] { scaled.set_part_youngs_scale({1, 0}); }, "positive");
  test::expect_error([&] { scaled.set_part_youngs_scale({NAN, 1}); }, "positive");
}

TEST(YoungsPerPart, EachEnvironmentOfABatchItsOwnFactors) {
  const auto model = build_model(two_cantilevers(1e7).build());
  BatchedSimulator batch(model, 2);
  const std::vector<Real> factors = {1, 1, 1, 3};  // env 0: none; env 1: part b three times
  batch.set_part_youngs_scale(factors.data());
  Simulator plain(model), scaled(model);
  scaled.set_part_youngs_scale({1, 3});
  for (int k = 0; k < 30; ++k) {
    batch.step();
    ASSERT_TRUE(plain.step().ok());
    ASSERT_TRUE(scaled.step().ok());
  }
  EXPECT_EQ(batch.state(0).q, plain.state().q);
  EXPECT_EQ(batch.state(1).q, scaled.state().q);
  // clear_actions: back to the scene's moduli
  batch.clear_actions();
  scaled.set_part_youngs_scale({});
  for (int k = 0; k < 10; ++k) {
    batch.step();
    ASSERT_TRUE(scaled.step().ok());
  }
  EXPECT_EQ(batch.state(1).q, scaled.state().q);
  const std::vector<Real> bad = {1, 1, 1, -2};
  test::expect_error([&] { batch.set_part_youngs_scale(bad.data()); }, "positive");
}

// the vectorized batch runs parts' moduli in time and the caller's factors as the
// per-environment batch does, bit for bit: two cantilevers under gravity, part a's modulus
// ramping in time, each environment its own factors (and one its own Young's modulus scale);
// then clear_actions back to the moduli in time alone
TEST(YoungsPerPart, TheVectorizedBatchRunsPartModuliAndFactors) {
  SceneBuilder b = two_cantilevers(1e7);
  b.part(0).youngs_in_time = true;
  b.part(0).youngs_time = table({{0, 1}, {0.02, 2}});  // (table rows: time, value)
  const auto model = build_model(b.build());
  ASSERT_FALSE(model->youngs_time_part.empty());
  const int B = 3;
  const std::vector<Real> factors = {1, 1, 0.5, 2, 1.5, 1};
  EnvParams p;
  p.youngs_scale = 1.25;
  std::vector<Real> x[2], y[2];
  for (int v = 0; v < 2; ++v) {
    BatchedSimulator batch(model, B, model->scene.integrator, LinearSolverKind::kAuto,
                           v ? BatchEngine::kVectorized : BatchEngine::kPerEnvironment);
    batch.set_params(2, p);
    batch.set_part_youngs_scale(factors.data());
    for (int k = 0; k < 30; ++k)
      for (StepStatus st : batch.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    x[v].resize(size_t(B) * 3 * model->nnode);
    batch.positions(x[v].data());
    batch.clear_actions();
    for (int k = 0; k < 10; ++k)
      for (StepStatus st : batch.step())
        ASSERT_EQ(st, StepStatus::kConverged);
    y[v].resize(x[v].size());
    batch.positions(y[v].data());
  }
  EXPECT_EQ(x[0], x[1]);
  EXPECT_EQ(y[0], y[1]);
  // the factors acted: environment 0 (factors 1) and 1 (0.5 and 2) differ
  const size_t n3 = 3 * size_t(model->nnode);
  EXPECT_GT(max_rel_diff(std::vector<Real>(x[1].begin(), x[1].begin() + n3),
                         std::vector<Real>(x[1].begin() + n3, x[1].begin() + 2 * n3)),
            1e-6);
}

TEST(Sma, BadParametersAreNamed) {
  const std::string base = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 1e-3,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 5}}],
  "boundary": {"fixed_edges": [{"part": "r", "edges": [0]}]},
  "actuation": [{"target": "rod_curvature1", "part": "r", "amplitude": 10, "time": TIME}]
})";
  auto with = [&](const std::string& time) {
    std::string s = base;
    s.replace(s.find("TIME"), 4, time);
    return s;
  };
  EXPECT_NO_THROW(build_model(read_scene_text(
      with(R"({"type": "sma", "n": 0.1, "tau": 8, "t_bar": 1.2, "t0": 0.25})"), "s.json", "")));
  const std::pair<std::string, std::string> bad[] = {
      {R"({"type": "sma", "n": 0.1, "tau": 8, "t_bar": 1.2})", "actuation[0].time.t0"},
      {R"({"type": "sma", "n": 0.1, "tau": 8, "t_bar": 1.2, "t0": 0})", "time.t0"},
      {R"({"type": "sma", "n": 0.1, "tau": -1, "t_bar": 1.2, "t0": 0.2})", "time.tau"},
      {R"({"type": "sma", "n": 0.1, "tau": 8, "t_bar": 1.2, "t0": 0.2, "period": 0.1})",
       "time.period"},
      {R"({"type": "sma", "n": 0.1, "tau": 8, "t_bar": 1.2, "t0": 0.2, "speed": 1})",
       "actuation[0].time.speed"}};
  for (const auto& [time, field] : bad) {
    const std::string& given = time;  // (a structured binding is not captured before C++20)
    const InputError e =
        test::catch_input_error([&] { build_model(read_scene_text(with(given), "s.json", "")); });
    EXPECT_NE(e.field().find(field), std::string::npos) << time << ": " << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
