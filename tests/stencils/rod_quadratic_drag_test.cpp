// Quadratic drag on rod edges (stencils/rod_quadratic_drag.h): the Jacobian against central
// differences, the force against its closed form (across the edge: -C |v| v; along it: none);
// a level rod falling through a fluid against the exact implicit-Euler recursion of
// m dv/dt = m g - C_tot v^2 and its closed-form terminal velocity sqrt(m g / C_tot); a rod
// falling along its axis feels none; the family's traits; the scene field's errors.

#include "slender/stencils/rod_quadratic_drag.h"

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
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

LocalEval<6> eval(const Vec<6>& x, const RodQuadraticDrag::Params& p, unsigned want) {
  LocalEval<6> r;
  rod_quadratic_drag_eval(x, p, want, r);
  return r;
}

class RodQuadraticDragStencil : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0.5, 2.0);
    const Vec3 a = test::random_vec3(rng);
    const Vec3 b = a + u(rng) * test::random_vec3(rng) + vec3(0.3, 0, 0);
    x.set_segment(0, a);
    x.set_segment(3, b);
    for (int k = 0; k < 2; ++k) {
      p.u_hat[k] = test::random_vec3(rng, 2);
      p.q_hat[k] = x.segment<3>(3 * k) - test::random_vec3(rng, 0.05);
    }
    p.c_u = 20 * u(rng);
    p.C = 0.3 * u(rng);
  }
  Vec<6> x;
  RodQuadraticDrag::Params p;
};

// the force has no potential: its Jacobian against central differences of g (kFdRelTol, the
// suite's tolerance for O(h^2) differences of smooth functions); away from v_perp = 0 it is
// smooth
TEST_P(RodQuadraticDragStencil, JacobianMatchesCentralDifferencesAndIsNotSymmetric) {
  const LocalEval<6> r = eval(x, p, kGradHess);
  EXPECT_EQ(r.E, 0);
  EXPECT_EQ(r.flags, 0u);
  const Mat<6, 6> fd =
      test::fd_jacobian<6>([this](const Vec<6>& y) { return eval(y, p, kGrad).g; }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
  Real asym = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      asym = std::max(asym, std::fabs(r.H(i, j) - r.H(j, i)));
  EXPECT_GT(asym, 1e-3 * p.C);  // a force without a potential: not symmetric
}

INSTANTIATE_TEST_SUITE_P(Seeds, RodQuadraticDragStencil, ::testing::Range(1, 7));

// an edge along x moving with v: the per-node g is C / 2 |v_perp| v_perp, exact to round-off
TEST(RodQuadraticDrag, ForceIsTheCrossFlowsSquareLaw) {
  Vec<6> x;
  x.set_segment(0, vec3(0, 0, 0));
  x.set_segment(3, vec3(0.2, 0, 0));
  RodQuadraticDrag::Params p{};
  p.C = 0.4;
  p.c_u = 0;                            // u = u_hat
  const Vec3 v = vec3(0.7, -0.3, 0.4);  // along 0.7, across (-0.3, 0.4): |v_perp| = 0.5
  p.u_hat[0] = v;
  p.u_hat[1] = v;
  const LocalEval<6> r = eval(x, p, kGrad);
  for (int a = 0; a < 2; ++a) {
    EXPECT_NEAR(r.g[3 * a + 0], 0, 1e-16);
    EXPECT_NEAR(r.g[3 * a + 1], 0.5 * 0.4 * 0.5 * -0.3, 1e-16);
    EXPECT_NEAR(r.g[3 * a + 2], 0.5 * 0.4 * 0.5 * 0.4, 1e-16);
  }
  // along the axis: no force, and a zero Jacobian (s w_p has zero derivative at w_p = 0)
  p.u_hat[0] = p.u_hat[1] = vec3(1.5, 0, 0);
  const LocalEval<6> along = eval(x, p, kGradHess);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(along.g[i], 0);
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ(along.H(i, j), 0);
  }
  // a zero-length edge: flagged, not NaN
  x.set_segment(3, vec3(0, 0, 0));
  const LocalEval<6> zero = eval(x, p, kGradHess);
  EXPECT_TRUE(zero.flags & kDegenerate);
  EXPECT_EQ(zero.g[0], 0);
}

// ---- a rod falling through water ----

constexpr Real kL = 0.5, kRadius = 0.002, kRho = 7800, kRhoF = 1000, kCd = 1.2, kG = 9.81;
constexpr int kNodes = 21;

SceneBuilder falling_rod(bool vertical, Real dt) {
  SceneBuilder b;
  const int mat = b.material("steel", kRho, 2e11, 0.3);
  b.straight_rod("rod", vec3(0, 0, 0), vertical ? vec3(0, 0, -kL) : vec3(kL, 0, 0), kNodes, mat,
                 SceneBuilder::circle(kRadius));
  b.gravity(vec3(0, 0, -kG));
  b.family_input(FamilyInput{"quadratic_drag"}
                     .part("part", "rod")
                     .number("fluid_density", kRhoF)
                     .number("drag_coefficient", kCd)
                     .number("diameter", 2 * kRadius));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = dt;
  b.integrator().newton.abs_tol = 1e-14;
  return b;
}

// A level rod falls rigidly (each node's mass and drag share are both in proportion to its
// Voronoi length), so every node obeys m dv/dt = m g - C_tot v^2 with C_tot = 1/2 rho_f C_d d L.
// Implicit Euler's step solves k dt v'^2 + v' - (v + g dt) = 0 (k = C_tot / m) exactly; the
// Simulator must follow it to Newton's tolerance (1e-9 relative), and reach the closed-form
// terminal velocity sqrt(g / k) (the scheme's fixed point) after 8 of its time constants
// v_t / g (1e-6 relative: tanh(8) differs from 1 by 2e-7).
TEST(RodQuadraticDrag, FallingRodFollowsTheRecursionToTheTerminalVelocity) {
  const Real dt = 2e-3;
  const auto m = build_model(falling_rod(false, dt).spec());
  ASSERT_EQ(m->tables[kFamQuadraticDrag].rows, kNodes - 1);
  EXPECT_TRUE(m->nonsymmetric());  // its traits: a force without a potential
  Real mass = 0;
  for (Real mn : m->node_mass)
    mass += mn;
  const Real k = 0.5 * kRhoF * kCd * 2 * kRadius * kL / mass;
  const Real vt = std::sqrt(kG / k);
  const int steps = int(std::ceil(8 * vt / kG / dt));
  Simulator sim(m);
  Real v = 0, worst = 0;
  for (int n = 0; n < steps; ++n) {
    ASSERT_TRUE(sim.step().ok());
    const Real c = v + kG * dt;  // downward speed
    v = (-1 + std::sqrt(1 + 4 * k * dt * c)) / (2 * k * dt);
    for (int node : {0, kNodes / 2, kNodes - 1})
      worst = std::max(worst, std::fabs(-sim.state().u[3 * node + 2] / v - 1));
  }
  EXPECT_LT(worst, 1e-9);
  const Real vz = -sim.state().u[3 * (kNodes / 2) + 2];
  EXPECT_NEAR(vz, vt, 1e-6 * vt);
  std::printf(
      "quadratic drag: terminal velocity %.6f m/s (closed form %.6f) after %d steps; "
      "worst deviation from the recursion %.1e\n",
      vz, vt, steps, worst);
  // the drag is a load: no energy of its own, not in the reactions (a free rod: none at all)
  const Energies en = sim.energies();
  EXPECT_EQ(en.load, 0);
  EXPECT_EQ(en.user, 0);
}

// falling along its axis the rod meets no cross flow: free fall, v = g t to round-off
TEST(RodQuadraticDrag, ARodFallingAlongItsAxisFeelsNone) {
  const Real dt = 2e-3;
  Simulator sim(build_model(falling_rod(true, dt).spec()));
  for (int n = 0; n < 20; ++n)
    ASSERT_TRUE(sim.step().ok());
  EXPECT_NEAR(-sim.state().u[3 * (kNodes / 2) + 2], kG * 20 * dt, 1e-12);
}

// ---- the scene field ----

std::string rod_scene(const std::string& drag) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.5}],
  "rods": [{"name": "rod", "material": "m", "radius": 0.002,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.3, 0, 0], "nodes": 7}}],
  "forces": {"quadratic_drag": )" +
         drag + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "drag.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

TEST(RodQuadraticDragScene, ReadsOneRowPerEdgeAndNamesBadFields) {
  const auto m = build_model(read_scene_text(
      rod_scene(
          R"({"part": "rod", "fluid_density": 1000, "drag_coefficient": 1.2, "diameter": 0.004})"),
      "drag.json", "."));
  const FamilyTable& t = m->tables[kFamQuadraticDrag];
  EXPECT_EQ(t.name, "quadratic_drag");
  ASSERT_EQ(t.rows, 6);
  EXPECT_NEAR(t.r[0], 0.5 * 1000 * 1.2 * 0.004 * 0.05, 1e-15);
  EXPECT_TRUE(m->nonsymmetric());
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"part": "rod", "fluid_density": -1, "drag_coefficient": 1.2, "diameter": 0.004})",
       "drag.json:5: forces.quadratic_drag.fluid_density: must be 0 or more"},
      {R"({"part": "rod", "fluid_density": 1, "drag_coefficient": -1.2, "diameter": 0.004})",
       "forces.quadratic_drag.drag_coefficient: must be 0 or more"},
      {R"({"part": "rod", "fluid_density": 1, "drag_coefficient": 1.2})",
       "forces.quadratic_drag.diameter: missing (required)"},
      {R"({"part": "hull", "fluid_density": 1, "drag_coefficient": 1, "diameter": 1})",
       "forces.quadratic_drag.part: no part named 'hull'"},
      {R"([{"part": "rod", "fluid_density": 1, "drag_coefficient": 1, "diameter": 1, "cd": 2}])",
       "forces.quadratic_drag[0].cd: unknown field"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(rod_scene(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
