// Resistive force theory on a rod edge: Jacobian against central differences, the force's
// split into tangential and normal drag against hand values, and a free rod's velocity decay in
// the simulator against the exact implicit-Euler recursion.

#include "slender/stencils/rod_rft.h"

#include <gtest/gtest.h>

#include <cmath>

#include "slender/builder.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

class RodRftTest : public ::testing::TestWithParam<int> {
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
    p.c_t = u(rng);
    p.c_n = 5 * u(rng);
    p.l_bar = 0.1 * u(rng);
  }
  Vec<6> grad(const Vec<6>& y) const {
    LocalEval<6> r;
    rod_rft_eval(y, p, kGrad, r);
    return r.g;
  }
  Vec<6> x;
  RodRft::Params p;
};

TEST_P(RodRftTest, JacobianMatchesCentralDifferences) {
  LocalEval<6> r;
  rod_rft_eval(x, p, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  EXPECT_EQ(r.E, 0);
  const Mat<6, 6> fd = test::fd_jacobian<6>([this](const Vec<6>& y) { return grad(y); }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
  EXPECT_EQ(test::rel_err(r.g, grad(x)), 0);
}

TEST_P(RodRftTest, ForceSplitsIntoTangentialAndNormalDrag) {
  LocalEval<6> r;
  rod_rft_eval(x, p, kGrad, r);
  const Vec3 t = (x.segment<3>(3) - x.segment<3>(0)) / norm(x.segment<3>(3) - x.segment<3>(0));
  const Vec3 u0 = p.u_hat[0] + p.c_u * (x.segment<3>(0) - p.q_hat[0]);
  const Vec3 u1 = p.u_hat[1] + p.c_u * (x.segment<3>(3) - p.q_hat[1]);
  const Vec3 v = 0.5 * (u0 + u1);
  const Vec3 vt = dot(v, t) * t, vn = v - vt;
  const Vec3 F = -(r.g.segment<3>(0) + r.g.segment<3>(3));
  const Vec3 expect = -p.l_bar * (p.c_t * vt + p.c_n * vn);
  EXPECT_LT(norm(F - expect), 1e-13 * norm(expect));
  EXPECT_LE(dot(F, v), 0);  // dissipative
}

INSTANTIATE_TEST_SUITE_P(Seeds, RodRftTest, ::testing::Range(1, 21));

TEST(RodRft, ZeroLengthEdgeIsFlaggedNotNaN) {
  Vec<6> x;
  x.set_zero();
  RodRft::Params p{};
  p.c_t = 1;
  p.c_n = 2;
  p.l_bar = 0.1;
  p.c_u = 10;
  LocalEval<6> r;
  rod_rft_eval(x, p, kGradHess, r);
  EXPECT_TRUE(r.flags & kDegenerate);
  EXPECT_EQ(norm(r.g), 0);
}

// a free straight rod (no gravity) launched along or across itself slows down as
// m dv/dt = -L c v; implicit Euler gives v_n+1 = v_n / (1 + dt c L / m) exactly (the rod stays
// straight and unstretched)
TEST(RodRft, FreeRodDecaysAtTheTangentialAndNormalRates) {
  const Real L = 0.5, ct = 0.2, cn = 1.5, dt = 1e-3;
  for (int across = 0; across < 2; ++across) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e6, 0.5);
    const int r =
        b.straight_rod("r", vec3(0, 0, 0), vec3(L, 0, 0), 21, mat, SceneBuilder::circle(0.005));
    const Vec3 v0 = across ? vec3(0, 0.3, 0) : vec3(0.3, 0, 0);
    for (int n = 0; n < 21; ++n)
      b.initial_velocity(r, n, v0);
    b.resistive_force(ct, cn);
    b.integrator().kind = IntegratorKind::kImplicitEuler;
    b.integrator().dt = dt;
    b.integrator().newton.abs_tol = 1e-14;
    const auto m = build_model(b.spec());
    EXPECT_TRUE(m->nonsymmetric());
    Real mass = 0;
    for (Real mn : m->node_mass)
      mass += mn;
    Simulator sim(m);
    const int steps = 50;
    for (int k = 0; k < steps; ++k)
      ASSERT_TRUE(sim.step().ok());
    const Real c = across ? cn : ct;
    const Real expect = 0.3 / std::pow(1 + dt * c * L / mass, steps);
    // every node moves with the rod (the end nodes carry half a Voronoi length of mass but a
    // quarter of an edge's drag less, so the rod is not exactly rigid: 1e-3 relative)
    const int mid = 10;
    const Real v = sim.state().u[3 * mid + (across ? 1 : 0)];
    EXPECT_NEAR(v, expect, 2e-3 * expect) << (across ? "normal" : "tangential");
    EXPECT_LT(v, 0.3 * 0.99);  // it did slow down noticeably
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
