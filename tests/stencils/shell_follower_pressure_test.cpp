// The follower pressure on a shell's triangles (stencils/shell_follower_pressure.h): the Jacobian
// against central differences, the force against its closed form (p A n, a third per node, along
// the node order's normal), a free flat sheet accelerating at exactly p / (rho h) (the load is
// distributed as the lumped mass is, so the sheet translates rigidly), the family's traits and
// the scene field's errors.

#include "slender/stencils/shell_follower_pressure.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "slender/stencils/families.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

LocalEval<9> eval(const Vec<9>& x, Real p, unsigned want) {
  LocalEval<9> r;
  shell_follower_pressure_eval(x, ShellFollowerPressure::Params{p}, want, r);
  return r;
}

class ShellFollowerPressureStencil : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    for (int a = 0; a < 3; ++a)
      x.set_segment(3 * a, test::random_vec3(rng));
    p = 50 + 100 * std::uniform_real_distribution<Real>(0, 1)(rng);
  }
  Vec<9> x;
  Real p = 0;
};

// the Jacobian against central differences of g, h = 1e-6 max(1, |x|) (test::fd_step; kFdRelTol,
// the suite's tolerance for O(h^2) differences; g is quadratic in x, so only round-off remains); a
// follower load has no potential, so H is not symmetric
TEST_P(ShellFollowerPressureStencil, JacobianMatchesCentralDifferencesAndIsNotSymmetric) {
  const LocalEval<9> r = eval(x, p, kGradHess);
  EXPECT_EQ(r.E, 0);
  EXPECT_EQ(r.flags, 0u);
  const Mat<9, 9> fd =
      test::fd_jacobian<9>([this](const Vec<9>& y) { return eval(y, p, kGrad).g; }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
  Real asym = 0;
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j)
      asym = std::max(asym, std::fabs(r.H(i, j) - r.H(j, i)));
  EXPECT_GT(asym, 1e-3 * p);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellFollowerPressureStencil, ::testing::Range(1, 7));

// a right triangle in the xy plane, counter-clockwise about +z, of area 0.06: each node gets
// p A / 3 along +z (g = -F), exact to round-off; the reversed order pushes along -z
TEST(ShellFollowerPressureStencil, EachNodeGetsAThirdOfPTimesTheAreaAlongTheNormal) {
  Vec<9> x;
  x.set_segment(0, vec3(0, 0, 0));
  x.set_segment(3, vec3(0.3, 0, 0));
  x.set_segment(6, vec3(0, 0.4, 0));
  const Real p = 250, f = p * 0.06 / 3;
  const LocalEval<9> r = eval(x, p, kGrad);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(r.g[3 * a + 0], 0, 1e-14);
    EXPECT_NEAR(r.g[3 * a + 1], 0, 1e-14);
    EXPECT_NEAR(r.g[3 * a + 2], -f, 1e-12 * f);
  }
  Vec<9> y;
  y.set_segment(0, x.segment<3>(0));
  y.set_segment(3, x.segment<3>(6));
  y.set_segment(6, x.segment<3>(3));
  EXPECT_NEAR(eval(y, p, kGrad).g[2], f, 1e-12 * f);
}

TEST(ShellFollowerPressureStencil, IsALoadWithoutPotentialAndNotSymmetric) {
  constexpr FamilyTraits t = ShellFollowerPressureBinding<kFamFollowerPressure>::kTraits;
  EXPECT_FALSE(t.elastic);
  EXPECT_FALSE(t.in_reactions);
  EXPECT_FALSE(t.symmetric);
  EXPECT_EQ(t.energy, EnergyKind::kNone);
}

// A free flat sheet (no gravity, no clamp) under a uniform pressure: each node's load p A_t / 3
// over its triangles is exactly its lumped mass rho h A_t / 3 times p / (rho h), so the sheet
// translates along its normal at a = p / (rho h) without deforming, and implicit Euler gives
// v_n = n dt a exactly (to round-off: 1e-9 relative). The total force is p times the area.
TEST(ShellFollowerPressure, AFreeSheetAcceleratesAtPOverRhoH) {
  constexpr Real rho = 800, h = 1e-3, p = 2, dt = 1e-3;
  constexpr int kSteps = 10;
  SceneBuilder b;
  const int mat = b.material("m", rho, 1e6, 0.3);
  b.rectangle_shell("sheet", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.06, 0), 0.02, true, mat, h);
  b.family_input(FamilyInput{"follower_pressure"}.part("part", "sheet").number("pressure", p));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = dt;
  b.integrator().duration = kSteps * dt;
  const auto model = build_model(b.build());
  EXPECT_TRUE(model->nonsymmetric());
  Simulator sim(model);
  for (int s = 0; s < kSteps; ++s)
    ASSERT_TRUE(sim.step().ok()) << "step " << s;
  const Real a = p / (rho * h), v = kSteps * dt * a;
  Real worst = 0;
  for (int n = 0; n < model->nnode; ++n) {
    worst = std::max(worst, std::fabs(sim.state().u[3 * n + 2] - v));
    worst = std::max(worst, std::fabs(sim.state().u[3 * n]) + std::fabs(sim.state().u[3 * n + 1]));
  }
  std::printf("free sheet under %g Pa: node velocities within %.2e of p t / (rho h) = %.6e m/s\n",
              p, worst, v);
  EXPECT_LT(worst, 1e-9 * v);
}

// ---- the scene field ----

std::string scene_with(const std::string& entry) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.4}],
  "rods": [{"name": "rod", "material": "m", "radius": 1e-3, "shape": {"type": "straight",
            "start": [0, 0, 1], "end": [0.1, 0, 1], "nodes": 3}}],
  "shells": [{"name": "sail", "material": "m", "thickness": 1e-3, "mesh":
     {"type": "mesh", "nodes": [[0,0,0],[1,0,0],[0,1,0],[1,1,0]],
      "triangles": [[0,1,2],[1,3,2]]}}],
  "forces": {"follower_pressure": )" +
         entry + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "sail.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

TEST(ShellFollowerPressureScene, AnOpenSheetReadsOneRowPerTriangle) {
  const auto m = build_model(read_scene_text(
      scene_with(R"({"part": "sail", "pressure": 30, "time": {"type": "ramp", "duration": 1}})"),
      "sail.json", "."));
  const FamilyTable& t = m->tables[kFamFollowerPressure];
  EXPECT_EQ(t.name, "follower_pressure");
  ASSERT_EQ(t.rows, 2);
  EXPECT_EQ(t.r[0], 30);
  EXPECT_EQ(t.r[1], 30);
  ASSERT_EQ(m->signals.size(), 1u);
  EXPECT_EQ(m->signals[0].kind, TimeFunction::Kind::kRamp);
  EXPECT_EQ(t.i[3], 0);  // both rows read the ramp's signal
  EXPECT_EQ(t.i[4 + 3], 0);
}

TEST(ShellFollowerPressureScene, BadEntriesNameTheFileLineAndField) {
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"part": "rod", "pressure": 1})",
       "sail.json:8: forces.follower_pressure.part: part 'rod' has no triangles"},
      {R"({"part": "hull", "pressure": 1})", "forces.follower_pressure.part: no part named 'hull'"},
      {R"({"part": "sail"})", "forces.follower_pressure.pressure: missing (required)"},
      {R"({"part": "sail", "pressure": 1, "area": 2})",
       "forces.follower_pressure.area: unknown field"},
      {R"([{"part": "sail", "pressure": "high"}])", "forces.follower_pressure[0].pressure"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(scene_with(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
