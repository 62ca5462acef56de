// Shape-memory-alloy actuation (issue 17, item 4, first part): the "sma" time function is
// Huang et al.'s eq. 7 (seed 003: a linear fall of the natural curvature to n times its value
// over t0, then a logistic recovery), repeated every period; a single curled limb
// (apps/scenes/sma_limb.json: 30 mm, 120 /m at rest) driven by it straightens and recovers,
// its curvature following n..1 times the rest curvature; bad parameters are named.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "physics_util.h"
#include "slender/core/error.h"

namespace slender {
namespace {

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
    try {
      build_model(read_scene_text(with(time), "s.json", ""));
      ADD_FAILURE() << time << ": no error";
    } catch (const InputError& e) {
      EXPECT_NE(e.field().find(field), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace slender
