// Loads as actions (Simulator::set_load_value, BatchedSimulator::set_load_values): the value of
// a family entry's signal replaces its time function, per environment. Bartholdt's actuator
// (apps/scenes/bartholdt_actuator.json) with a different pressure in each chamber of each
// environment: both batch engines give the single runs' bits, the chambers 120 degrees apart
// bend the actuator three ways alike and the three together only stretch it; a wrench's value
// scales it; bad requests are named.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::string actuator_path() {
  return std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/bartholdt_actuator.json";
}

// each environment's pressure in each chamber [Pa]: one chamber at 60 kPa (three
// environments), all three (one), two chambers at other pressures (one)
const std::vector<std::vector<Real>> kPressures = {
    {60e3, 0, 0}, {0, 60e3, 0}, {0, 0, 60e3}, {60e3, 60e3, 60e3}, {30e3, 0, 20e3}};

// 20 steps (0.2 s) of the actuator hanging under gravity with its 60 g tip mass, the chambers
// pressurized from the start
constexpr int kSteps = 20;

TEST(LoadActions, ChamberPressuresPerEnvironmentEqualSingleRuns) {
  const auto model = build_model(read_scene_file(actuator_path()));
  const int B = int(kPressures.size()), nd = model->ndof;
  std::vector<std::vector<Real>> q(2);
  for (int engine = 0; engine < 2; ++engine) {
    BatchedSimulator batch(model, B, model->scene.integrator, LinearSolverKind::kAuto,
                           engine ? BatchEngine::kVectorized : BatchEngine::kPerEnvironment);
    for (int c = 0; c < 3; ++c) {
      std::vector<Real> v(kPressures.size());
      for (int e = 0; e < B; ++e)
        v[size_t(e)] = kPressures[size_t(e)][size_t(c)];
      batch.set_load_values("pressure_chambers", c, v.data());
    }
    for (int n = 0; n < kSteps; ++n)
      for (StepStatus s : batch.step())
        ASSERT_EQ(s, StepStatus::kConverged) << "step " << n;
    for (int e = 0; e < B; ++e) {
      const std::vector<Real> qe = batch.state(e).q;
      q[size_t(engine)].insert(q[size_t(engine)].end(), qe.begin(), qe.end());
    }
  }
  // the vectorized engine has the per-environment engine's bits
  EXPECT_EQ(q[0], q[1]);
  // single runs with the same values (environments 3 and 4, two of the five)
  for (int e : {3, 4}) {
    Simulator sim(model);
    for (int c = 0; c < 3; ++c)
      sim.set_load_value("pressure_chambers", c, kPressures[size_t(e)][size_t(c)]);
    for (int n = 0; n < kSteps; ++n)
      ASSERT_TRUE(sim.step().ok());
    const std::vector<Real> batch_q(q[1].begin() + size_t(e) * nd,
                                    q[1].begin() + size_t(e + 1) * nd);
    EXPECT_EQ(sim.state().q, batch_q) << "environment " << e;
  }
  // the physics: chamber c at phi_c = 120 c degrees from m1 = +x (m2 = t x m1 = -y on the
  // hanging rod) bends the tip away from it, along (-cos phi, sin phi), by the same amount
  // (the section and the stiffness are round: the three agree to 1e-9 relative, Newton's
  // tolerance); the three together only stretch the rod (no sideways tip motion beyond 1e-9 of
  // one chamber's)
  const int tip = model->part_node[size_t(model->part_node_adr[3]) - 1];
  auto tip_of = [&](int e) {
    const Real* x = q[1].data() + size_t(e) * nd + 3 * size_t(tip);
    return vec3(x[0], x[1], x[2]);
  };
  const Vec3 x0 = tip_of(0);
  const Real r = std::hypot(x0[0], x0[1]);
  std::printf(
      "one chamber at 60 kPa: tip deflection %.4f mm under gravity; all three: %.2e m "
      "sideways, %.4f mm lower than one\n",
      r * 1e3, std::hypot(tip_of(3)[0], tip_of(3)[1]), (x0[2] - tip_of(3)[2]) * 1e3);
  EXPECT_GT(r, 1e-4);
  for (int c = 0; c < 3; ++c) {
    const Real phi = 2 * kPi * c / 3;
    const Vec3 x = tip_of(c);
    EXPECT_NEAR(x[0], -r * std::cos(phi), 1e-9 * r) << "chamber " << c;
    EXPECT_NEAR(x[1], r * std::sin(phi), 1e-9 * r) << "chamber " << c;
    EXPECT_NEAR(x[2], x0[2], 1e-9 * r) << "chamber " << c;
  }
  EXPECT_LT(std::hypot(tip_of(3)[0], tip_of(3)[1]), 1e-9 * r);
  EXPECT_LT(tip_of(3)[2], x0[2]);
}

// A wrench's value replaces its time function: a tip force F with a ramp, its value set to
// 0.5, steps as the force F / 2 held constant, to the bit (0.5 F and 1 (F / 2) are the same
// numbers); cleared, it follows the ramp again (not the constant)
TEST(LoadActions, AWrenchsValueScalesItsForce) {
  auto scene = [](Real Fz, bool ramp) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e7, 0.4);
    const int rod =
        b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), 11, mat, SceneBuilder::circle(1e-3));
    b.fix_edge(rod, 0);
    TimeFunction f;
    if (ramp) {
      f.kind = TimeFunction::Kind::kRamp;
      f.ramp_time = 1;
    }
    b.family_input(
        FamilyInput{"wrenches"}.part("part", "rod").vec3("force", vec3(0, 0, Fz)).time("time", f));
    b.integrator().dt = 1e-3;
    return build_model(b.build());
  };
  Simulator set(scene(-2e-3, true)), half(scene(-1e-3, false));
  set.set_load_value("wrenches", 0, 0.5);
  for (int n = 0; n < 10; ++n) {
    ASSERT_TRUE(set.step().ok());
    ASSERT_TRUE(half.step().ok());
  }
  EXPECT_EQ(set.state().q, half.state().q);
  set.clear_load_values();
  ASSERT_TRUE(set.step().ok());
  ASSERT_TRUE(half.step().ok());
  EXPECT_NE(set.state().q, half.state().q);
}

// apps/scenes/tendon_finger.json without gravity, with a different tension in each of its two
// tendons (the flexor 4.5 mm below the centreline, the extensor above) in each environment, set
// as actions (which replace the flexor's ramp): both batch engines give the single runs' bits;
// a negative tension (a slack cable) is a tension of zero, bit for bit, and leaves the finger at
// rest; the flexor bends the finger down as far as the extensor bends it up (the mirror image:
// 1e-9 of the deflection, Newton's tolerance); equal tensions in both cancel their moments (the
// tip on the axis to 1e-12 m) and only compress the finger, by 2 T L / EA (the linear stretching
// law's) within 2 % (measured 0.2 % after these 0.15 s: not quite settled).
TEST(LoadActions, TendonTensionsPerEnvironmentEqualSingleRuns) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/tendon_finger.json");
  sc.forces.gravity = vec3(0, 0, 0);
  const auto model = build_model(sc);
  // (flexor, extensor) [N]
  const std::vector<std::array<Real, 2>> tensions = {{2, 0}, {0, 2}, {1.5, 1.5}, {-3, 0}, {0, 0}};
  const int B = int(tensions.size()), nd = model->ndof;
  constexpr int kTendonSteps = 15;
  std::vector<std::vector<Real>> q(2);
  for (int engine = 0; engine < 2; ++engine) {
    BatchedSimulator batch(model, B, model->scene.integrator, LinearSolverKind::kAuto,
                           engine ? BatchEngine::kVectorized : BatchEngine::kPerEnvironment);
    for (int c = 0; c < 2; ++c) {
      std::vector<Real> v;
      for (int e = 0; e < B; ++e)
        v.push_back(tensions[size_t(e)][size_t(c)]);
      batch.set_load_values("tendons", c, v.data());
    }
    for (int n = 0; n < kTendonSteps; ++n)
      for (StepStatus s : batch.step())
        ASSERT_EQ(s, StepStatus::kConverged) << "step " << n;
    for (int e = 0; e < B; ++e) {
      const std::vector<Real> qe = batch.state(e).q;
      q[size_t(engine)].insert(q[size_t(engine)].end(), qe.begin(), qe.end());
    }
  }
  EXPECT_EQ(q[0], q[1]);
  auto env_q = [&](int e) {
    return std::vector<Real>(q[1].begin() + size_t(e) * nd, q[1].begin() + size_t(e + 1) * nd);
  };
  for (int e : {0, 2}) {
    Simulator sim(model);
    for (int c = 0; c < 2; ++c)
      sim.set_load_value("tendons", c, tensions[size_t(e)][size_t(c)]);
    for (int n = 0; n < kTendonSteps; ++n)
      ASSERT_TRUE(sim.step().ok());
    EXPECT_EQ(sim.state().q, env_q(e)) << "environment " << e;
  }
  EXPECT_EQ(env_q(3), env_q(4));  // slack
  const int tip = model->part_node[size_t(model->part_node_adr[1]) - 1];
  auto tip_of = [&](int e) {
    const std::vector<Real> qe = env_q(e);
    return vec3(qe[3 * size_t(tip)], qe[3 * size_t(tip) + 1], qe[3 * size_t(tip) + 2]);
  };
  EXPECT_LT(norm(tip_of(4) - vec3(0.08, 0, 0)), 1e-15);  // at rest
  const Real EA = sc.materials[0].youngs_modulus * kPi * 0.006 * 0.006;
  std::printf(
      "tendon finger after %d steps without gravity: tip z %.4f mm (flexor 2 N), %.4f mm "
      "(extensor 2 N); both 1.5 N: tip z %.1e m, shortened %.4f mm (2 T L / EA %.4f mm)\n",
      kTendonSteps, tip_of(0)[2] * 1e3, tip_of(1)[2] * 1e3, tip_of(2)[2],
      (0.08 - tip_of(2)[0]) * 1e3, 2 * 1.5 * 0.08 / EA * 1e3);
  EXPECT_LT(tip_of(0)[2], -1e-3);
  EXPECT_NEAR(tip_of(1)[2], -tip_of(0)[2], 1e-9 * std::fabs(tip_of(0)[2]));
  EXPECT_NEAR(tip_of(1)[0], tip_of(0)[0], 1e-9 * std::fabs(tip_of(0)[2]));
  EXPECT_LT(std::fabs(tip_of(2)[2]), 1e-12);
  EXPECT_NEAR(0.08 - tip_of(2)[0], 2 * 1.5 * 0.08 / EA, 0.02 * 2 * 1.5 * 0.08 / EA);
}

// errors name what was asked for: an entry past the field's, a field without load signals, a
// value that is not finite (the Simulator's and the batch's, with its environment)
TEST(LoadActions, BadRequestsAreNamed) {
  const auto model = build_model(read_scene_file(actuator_path()));
  Simulator sim(model);
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message([&] { sim.set_load_value("pressure_chambers", 3, 1); })
                .find("no load forces.pressure_chambers[3] to set: forces.pressure_chambers has 3 "
                      "entries"),
            std::string::npos);
  EXPECT_NE(message([&] { sim.set_load_value("wrenches", 0, 1); })
                .find("the scene has no entry of forces.wrenches with a load signal (the loads "
                      "an action sets: pressure_chambers[0], pressure_chambers[1], "
                      "pressure_chambers[2])"),
            std::string::npos);
  EXPECT_NE(message([&] { sim.set_load_value("pressure_chambers", 0, NAN); }).find("finite"),
            std::string::npos);
  BatchedSimulator batch(model, 2);
  const Real v[2] = {1, INFINITY};
  EXPECT_NE(message([&] { batch.set_load_values("pressure_chambers", 1, v); })
                .find("environment 1: the load value of forces.pressure_chambers[1] must be "
                      "finite"),
            std::string::npos);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
