// Finite-difference, dissipation and hand-computed checks of the shell drag stencil.

#include "slender/stencils/shell_drag.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

Vec3 node(const Vec<9>& x, int a) { return x.segment<3>(3 * a); }

/// params whose velocities are u_hat exactly at x (q_hat = x)
ShellDrag::Params moving_with(const Vec<9>& x, const Vec3 (&u)[3], Real c_u) {
  ShellDrag::Params p{};
  for (int a = 0; a < 3; ++a) {
    p.u_hat[a] = u[a];
    p.q_hat[a] = node(x, a);
  }
  p.c_u = c_u;
  p.rho_med = 1.2;
  p.C_D = 0.8;
  p.A_bar = 0.35;
  return p;
}

Vec3 velocity(const Vec<9>& x, const ShellDrag::Params& p, int a) {
  return p.u_hat[a] + p.c_u * (node(x, a) - p.q_hat[a]);
}

Vec3 unit_normal(const Vec<9>& x) {
  const Vec3 N = cross(node(x, 1) - node(x, 0), node(x, 2) - node(x, 0));
  return N / norm(N);
}

class ShellDragTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0.5, 2.0);
    // a well-shaped triangle anywhere, and an integrator state near it
    const Vec3 a = test::random_vec3(rng);
    const Vec3 b = a + vec3(u(rng), 0, 0) + test::random_vec3(rng, 0.3);
    const Vec3 c = a + vec3(0, u(rng), 0) + test::random_vec3(rng, 0.3);
    x.set_segment(0, a);
    x.set_segment(3, b);
    x.set_segment(6, c);
    for (int k = 0; k < 3; ++k) {
      p.u_hat[k] = test::random_vec3(rng, 2);
      p.q_hat[k] = node(x, k) - test::random_vec3(rng, 0.05);
    }
    p.c_u = 20 * u(rng);
    p.rho_med = 1000 * u(rng);
    p.C_D = u(rng);
    p.A_bar = 0.5 * u(rng);
  }
  Vec<9> grad(const Vec<9>& y) const {
    LocalEval<9> r;
    shell_drag_eval(y, p, kGrad, r);
    return r.g;
  }
  Vec<9> x;
  ShellDrag::Params p;
};

TEST_P(ShellDragTest, JacobianMatchesCentralDifferences) {
  LocalEval<9> r;
  shell_drag_eval(x, p, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  EXPECT_EQ(r.E, 0);
  const Mat<9, 9> fd = test::fd_jacobian<9>([this](const Vec<9>& y) { return grad(y); }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
  // the gradient does not depend on whether the Jacobian was asked for
  EXPECT_EQ(test::rel_err(r.g, grad(x)), 0);
}

TEST_P(ShellDragTest, ForceOpposesNormalVelocity) {
  LocalEval<9> r;
  shell_drag_eval(x, p, kGrad, r);
  const Vec3 n = unit_normal(x);
  for (int a = 0; a < 3; ++a) {
    const Vec3 F = -r.g.segment<3>(3 * a), u = velocity(x, p, a);
    // F = -c |s|^3 / s n: power -c |s|^3, along n, against the normal velocity
    EXPECT_LE(dot(F, u), 0);
    EXPECT_LT(norm(cross(F, n)), 1e-12 * norm(F));
    EXPECT_LE(dot(F, n) * dot(u, n), 0);
  }
}

TEST_P(ShellDragTest, ReversedOrientationGivesSameForce) {
  // swapping nodes 1 and 2 flips n; every s_a flips with it and F_a stays
  Vec<9> y = x;
  y.set_segment(3, node(x, 2));
  y.set_segment(6, node(x, 1));
  ShellDrag::Params q = p;
  q.u_hat[1] = p.u_hat[2];
  q.u_hat[2] = p.u_hat[1];
  q.q_hat[1] = p.q_hat[2];
  q.q_hat[2] = p.q_hat[1];
  LocalEval<9> r, s;
  shell_drag_eval(x, p, kGrad, r);
  shell_drag_eval(y, q, kGrad, s);
  const Real scale = norm(r.g);
  EXPECT_LT(norm(r.g.segment<3>(0) - s.g.segment<3>(0)), 1e-13 * scale);
  EXPECT_LT(norm(r.g.segment<3>(3) - s.g.segment<3>(6)), 1e-13 * scale);
  EXPECT_LT(norm(r.g.segment<3>(6) - s.g.segment<3>(3)), 1e-13 * scale);
}

TEST_P(ShellDragTest, ZeroNormalVelocityGivesZeroForce) {
  // nodes at rest: no force, and the Jacobian vanishes too (every term carries |s|)
  const Vec3 zero[3] = {Vec3::zero(), Vec3::zero(), Vec3::zero()};
  const ShellDrag::Params rest = moving_with(x, zero, p.c_u);
  LocalEval<9> r;
  shell_drag_eval(x, rest, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(r.g[i], 0);
  for (int i = 0; i < 81; ++i)
    EXPECT_EQ(r.H.a[i], 0);
}

TEST_P(ShellDragTest, TangentialMotionGivesZeroForce) {
  // in-plane velocities of different size and direction at each node
  const Vec3 n = unit_normal(x);
  Vec3 u[3];
  Real umax = 0;
  for (int a = 0; a < 3; ++a) {
    u[a] = p.u_hat[a] - dot(p.u_hat[a], n) * n;
    umax = std::max(umax, norm(u[a]));
  }
  const ShellDrag::Params q = moving_with(x, u, p.c_u);
  const Real c = q.rho_med * q.C_D * q.A_bar / 6;
  LocalEval<9> r;
  shell_drag_eval(x, q, kGradHess, r);
  // s_a is zero up to rounding (~1e-16 umax), so F ~ c s^2 and H ~ c |s| (c_u + umax / h)
  EXPECT_LT(norm(r.g), 1e-28 * c * umax * umax);
  EXPECT_LT(test::frobenius<9>(r.H), 1e-13 * c * (q.c_u + umax) * umax);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellDragTest, ::testing::Range(1, 21));

TEST(ShellDrag, MatchesEquation29) {
  // right triangle in the xy plane moving as a whole with velocity (vx, 0, w); only w counts:
  // F_a = -rho_med C_D A / 6 w |w| z for every node, for either orientation and sign of w
  const Real rho = 1000, C_D = 0.5, A = 0.125;
  for (int flip = 0; flip < 2; ++flip) {
    for (Real w : {3.0, -3.0, 0.25}) {
      Vec<9> x = Vec<9>::zero();
      x.set_segment(flip ? 6 : 3, vec3(0.5, 0, 0));
      x.set_segment(flip ? 3 : 6, vec3(0, 0.5, 0));
      const Vec3 u = vec3(0.7, 0, w);
      const Vec3 us[3] = {u, u, u};
      ShellDrag::Params p = moving_with(x, us, 50.0);
      p.rho_med = rho;
      p.C_D = C_D;
      p.A_bar = A;
      LocalEval<9> r;
      shell_drag_eval(x, p, kGrad, r);
      EXPECT_EQ(r.flags, 0u);
      // 1000 * 0.5 * 0.125 / 6 = 62.5 / 6; w |w| = +-9 or 1/16
      const Real Fz = -62.5 / 6 * w * std::fabs(w);
      for (int a = 0; a < 3; ++a) {
        EXPECT_EQ(r.g[3 * a + 0], 0);
        EXPECT_EQ(r.g[3 * a + 1], 0);
        EXPECT_NEAR(-r.g[3 * a + 2], Fz, 1e-14 * std::fabs(Fz));
      }
    }
  }
}

TEST(ShellDrag, DegenerateInputStaysFinite) {
  struct Case {
    Vec3 x1, x2;
    bool degenerate;
  };
  const Vec3 d = vec3(0.3, -0.7, 0.2);
  const Case cases[] = {
      {Vec3::zero(), Vec3::zero(), true},              // all nodes coincide
      {Vec3::zero(), vec3(0, 1, 0), true},             // x1 = x0
      {vec3(1, 0, 0), vec3(1, 0, 0), true},            // x2 = x1
      {vec3(1, 0, 0), vec3(2, 0, 0), true},            // collinear, exactly
      {vec3(1, 0, 0), vec3(0.5, 0, 0), true},          // x2 between x0 and x1
      {d, 3.1 * d, true},                              // parallel edges, rounding left in N
      {vec3(1, 0, 0), vec3(0.5, 1e-15, 0), true},      // sine 2e-15, below kTinySine
      {vec3(1, 0, 0), vec3(0.5, 1e-12, 0), false},     // thin sliver, still a normal
      {vec3(1, 0, 0), vec3(0.5, -1e-12, 0), false},    // the same, flipped
      {vec3(1e-12, 0, 0), vec3(0, 1e-12, 0), false},   // tiny but well-shaped
      {vec3(-1e-12, 0, 0), vec3(0, -1e-12, 0), false}  // the same, other way round
  };
  for (const Case& k : cases) {
    Vec<9> x = Vec<9>::zero();
    x.set_segment(3, k.x1);
    x.set_segment(6, k.x2);
    const Vec3 u[3] = {vec3(0.1, 0.2, 1), vec3(-1, 0.5, 2), vec3(0, 0, -3)};
    const ShellDrag::Params p = moving_with(x, u, 100.0);
    LocalEval<9> r;
    shell_drag_eval(x, p, kGradHess, r);
    EXPECT_EQ(r.E, 0);
    for (int i = 0; i < 9; ++i)
      EXPECT_TRUE(std::isfinite(r.g[i]));
    for (int i = 0; i < 81; ++i)
      EXPECT_TRUE(std::isfinite(r.H.a[i]));
    EXPECT_EQ(bool(r.flags & kDegenerate), k.degenerate);
    if (k.degenerate) {
      EXPECT_EQ(norm(r.g), 0);
      EXPECT_EQ(test::frobenius<9>(r.H), 0);
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
