// Finite-difference, invariance, geometry and degenerate-input checks of the hinge bending
// stencil of discrete shells (seed 000, eq. 17).

#include "slender/stencils/shell_hinge.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

// A hinge with a known dihedral angle theta: the edge lies on the local x axis, wing A in the
// plane z = 0 on the +y side (normal +z), and wing B starts on the -y side and is turned by
// theta about +x. The whole hinge is then rotated by Q and moved by c.
Vec<12> folded_hinge(
    Real l, Real sA, Real hA, Real sB, Real hB, Real theta, const Mat3& Q, const Vec3& c) {
  const Vec3 local[4] = {vec3(0, 0, 0), vec3(l, 0, 0), vec3(sA * l, hA, 0),
                         vec3(sB * l, -hB * std::cos(theta), -hB * std::sin(theta))};
  Vec<12> x;
  for (int n = 0; n < 4; ++n)
    x.set_segment(3 * n, Q * local[n] + c);
  return x;
}

struct Config {
  Vec<12> x;
  ShellHinge::Params p;
  Real theta;  // the dihedral angle it was built with
};

// both bending senses, |phi| from 0.1 to 2.5, wing tips past either end of the hinge
Config random_config(std::mt19937_64& rng) {
  std::uniform_real_distribution<Real> u(0.5, 2.0), s(-0.4, 1.4), ang(0.1, 2.5), bar(-0.5, 0.5);
  std::bernoulli_distribution sign(0.5);
  Config c;
  const Real l = u(rng), sA = s(rng), hA = u(rng), sB = s(rng), hB = u(rng);
  c.theta = sign(rng) ? ang(rng) : -ang(rng);
  const Mat3 Q = test::random_rotation(rng);
  c.x = folded_hinge(l, sA, hA, sB, hB, c.theta, Q, test::random_vec3(rng, 2));
  c.p = ShellHinge::Params{u(rng), bar(rng)};
  return c;
}

class ShellHingeTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    c = random_config(rng);
  }
  Real energy(const Vec<12>& y) const {
    LocalEval<12> r;
    shell_hinge_eval(y, c.p, kEnergy, r);
    return r.E;
  }
  Vec<12> grad(const Vec<12>& y) const {
    LocalEval<12> r;
    shell_hinge_eval(y, c.p, kGrad, r);
    return r.g;
  }
  Config c;
};

TEST_P(ShellHingeTest, GradientMatchesCentralDifferences) {
  const Vec<12> fd = test::fd_gradient<12>([this](const Vec<12>& y) { return energy(y); }, c.x);
  EXPECT_LT(test::rel_err(grad(c.x), fd), kFdRelTol) << "theta " << c.theta;
}

TEST_P(ShellHingeTest, HessianMatchesGradientDifferences) {
  LocalEval<12> r;
  shell_hinge_eval(c.x, c.p, kGradHess, r);
  const Mat<12, 12> fd = test::fd_jacobian<12>([this](const Vec<12>& y) { return grad(y); }, c.x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol) << "theta " << c.theta;
  // the energy and gradient do not depend on whether the Hessian was asked for
  LocalEval<12> rg;
  shell_hinge_eval(c.x, c.p, kGrad, rg);
  EXPECT_EQ(r.E, rg.E);
  EXPECT_EQ(test::rel_err(r.g, rg.g), 0);
}

TEST_P(ShellHingeTest, HessianIsSymmetric) {
  LocalEval<12> r;
  shell_hinge_eval(c.x, c.p, kGradHess, r);
  EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-14);
}

TEST_P(ShellHingeTest, RestStateHasZeroEnergyAndGradient) {
  ShellHinge::Params rest = c.p;
  rest.phi_bar = shell_hinge_angle(c.x);
  LocalEval<12> r;
  shell_hinge_eval(c.x, rest, kGradHess, r);
  EXPECT_LT(r.E, 1e-28);
  EXPECT_LT(norm(r.g), 1e-13 * c.p.kb);
  // at rest the Hessian is kb grad phi grad phi^T: positive semi-definite of rank one
  EXPECT_EQ(r.flags, 0u);
  for (int i = 0; i < 12; ++i)
    EXPECT_GE(r.H(i, i), -1e-14);
}

TEST_P(ShellHingeTest, RigidMotionInvariance) {
  LocalEval<12> r;
  shell_hinge_eval(c.x, c.p, kGrad, r);
  // internal forces sum to zero, and so do their torques about the origin
  Vec3 f = vec3(0, 0, 0), torque = vec3(0, 0, 0);
  for (int n = 0; n < 4; ++n) {
    f += r.g.segment<3>(3 * n);
    torque += cross(c.x.segment<3>(3 * n), r.g.segment<3>(3 * n));
  }
  const Real scale = norm(r.g) * (1 + norm(c.x));
  EXPECT_LT(norm(f), 1e-12 * scale);
  EXPECT_LT(norm(torque), 1e-12 * scale);
  // and the energy itself is unchanged by a rigid motion
  std::mt19937_64 rng(GetParam() + 1000);
  const Mat3 Q = test::random_rotation(rng);
  const Vec3 d = test::random_vec3(rng, 3);
  Vec<12> y;
  for (int n = 0; n < 4; ++n)
    y.set_segment(3 * n, Q * c.x.segment<3>(3 * n) + d);
  EXPECT_NEAR(energy(y), energy(c.x), 1e-12 * (1 + energy(c.x)));
}

TEST_P(ShellHingeTest, AngleMatchesGeometry) {
  EXPECT_NEAR(shell_hinge_angle(c.x), c.theta, 1e-12);
  // relabelling x0 <-> x1 and x2 <-> x3 describes the same hinge
  Vec<12> y;
  y.set_segment(0, c.x.segment<3>(3));
  y.set_segment(3, c.x.segment<3>(0));
  y.set_segment(6, c.x.segment<3>(9));
  y.set_segment(9, c.x.segment<3>(6));
  EXPECT_NEAR(shell_hinge_angle(y), c.theta, 1e-12);
}

// the gradient of phi at the wing tips is minus the wing normal over the tip's height
TEST_P(ShellHingeTest, WingTipGradientMatchesClosedForm) {
  ShellHinge::Params unit{1, shell_hinge_angle(c.x) - 1};  // g = grad phi
  LocalEval<12> r;
  shell_hinge_eval(c.x, unit, kGrad, r);
  const Vec3 x0 = c.x.segment<3>(0), x1 = c.x.segment<3>(3);
  const Vec3 e = x1 - x0;
  const Vec3 mA = cross(e, c.x.segment<3>(6) - x0), mB = cross(x0 - x1, c.x.segment<3>(9) - x1);
  const Vec3 g2 = (-norm(e) / dot(mA, mA)) * mA, g3 = (-norm(e) / dot(mB, mB)) * mB;
  EXPECT_LT(test::rel_err(r.g.segment<3>(6), g2), 1e-13);
  EXPECT_LT(test::rel_err(r.g.segment<3>(9), g3), 1e-13);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellHingeTest, ::testing::Range(1, 21));

// a unit square split along its diagonal, folded by a known angle about the diagonal
TEST(ShellHinge, FoldedSquareHasKnownAngle) {
  const Vec3 x0 = vec3(0, 0, 0), x1 = vec3(1, 1, 0), x2 = vec3(0, 1, 0), x3 = vec3(1, 0, 0);
  const Vec3 t = vec3(1, 1, 0) / std::sqrt(2.0);
  for (Real theta : {0.0, 0.3, -0.3, 1.5707963267948966, -1.5707963267948966, 2.5, -2.5, 3.1}) {
    // turn x3 by theta about the diagonal (Rodrigues' formula; x3 - x0 is normal to t
    // up to its component along t)
    const Vec3 v = x3 - x0;
    const Vec3 vt = dot(v, t) * t, vn = v - vt;
    const Vec3 x3r = x0 + vt + std::cos(theta) * vn + std::sin(theta) * cross(t, vn);
    Vec<12> x;
    x.set_segment(0, x0);
    x.set_segment(3, x1);
    x.set_segment(6, x2);
    x.set_segment(9, x3r);
    EXPECT_NEAR(shell_hinge_angle(x), theta, 1e-14);
    // a positive angle is a ridge seen from the normals' side (+z): wing B drops below
    if (theta > 0) {
      EXPECT_LT(x3r[2], 0);
    }
    LocalEval<12> r;
    shell_hinge_eval(x, ShellHinge::Params{2.0, 0.1}, kEnergy, r);
    EXPECT_NEAR(r.E, (theta - 0.1) * (theta - 0.1), 1e-14);
  }
}

TEST(ShellHinge, DegenerateInputStaysFinite) {
  const Vec3 pts[][4] = {
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(2, 0, 0), vec3(0.5, -1, 0)},          // A collinear
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, 1, 0), vec3(-1, 0, 0)},          // B collinear
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 0, 0), vec3(0.5, -1, 0)},          // x2 on x0
      {vec3(0, 0, 0), vec3(0, 0, 0), vec3(0.5, 1, 0), vec3(0.5, -1, 0)},        // zero hinge
      {vec3(0, 0, 0), vec3(1e-15, 0, 0), vec3(0.5, 1, 0), vec3(0.5, -1, 0)},    // tiny hinge
      {vec3(0, 0, 0), vec3(-1e-15, 0, 0), vec3(0.5, 1, 0), vec3(0.5, -1, 0)},   // tiny hinge
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, 1e-14, 0), vec3(0.5, -1, 0.3)},  // sliver A
      {vec3(1, 1, 1), vec3(1, 1, 1), vec3(1, 1, 1), vec3(1, 1, 1)},             // one point
  };
  const ShellHinge::Params p{1.0, 0.4};
  for (const auto& c : pts) {
    Vec<12> x;
    for (int n = 0; n < 4; ++n)
      x.set_segment(3 * n, c[n]);
    EXPECT_EQ(shell_hinge_angle(x), 0);
    for (unsigned want : {unsigned(kEnergy), unsigned(kGrad), unsigned(kGradHess)}) {
      LocalEval<12> r;
      shell_hinge_eval(x, p, want, r);
      EXPECT_TRUE(r.flags & kDegenerate);
      EXPECT_EQ(r.E, 0);
      for (int i = 0; i < 12; ++i)
        EXPECT_EQ(r.g[i], 0);
      for (int i = 0; i < 144; ++i)
        EXPECT_EQ(r.H.a[i], 0);
    }
  }
  // a flat hinge is not degenerate: phi = 0, finite derivatives
  Vec<12> x;
  x.set_segment(0, vec3(0, 0, 0));
  x.set_segment(3, vec3(1, 0, 0));
  x.set_segment(6, vec3(0.5, 1, 0));
  x.set_segment(9, vec3(0.5, -1, 0));
  LocalEval<12> r;
  shell_hinge_eval(x, p, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  EXPECT_EQ(shell_hinge_angle(x), 0);
  for (int i = 0; i < 144; ++i)
    EXPECT_TRUE(std::isfinite(r.H.a[i]));
}

// Why no hinge stiffness bends a free strip on the grid mesh as Euler-Bernoulli (issue 53;
// docs/numerics.md, *Hinge stiffness*): on a grid of unit right triangles (diagonals along
// (1, 1)), the surface z = (Kxx x^2 + 2 Kxy x y + Kyy y^2) / 2 folds, to first order, the hinges
// along x by (Kyy + Kxy), those along y by (Kxx + Kxy) and the diagonal ones by sqrt(2) Kxy (up
// to their signs): the axis hinges read the twist. With stiffnesses kx on the axis hinges and
// kd = r kx on the diagonals (one of each per unit cell), a free strip along x relaxes Kyy and
// Kxy and bends with 2r / (1 + 2r) of the cylinder's rigidity: 0.8 at r = 2, and 1 only as
// r -> infinity (no twist at all). Checked here on the stencil's own angle.
TEST(ShellHinge, GridHingesReadTheTwistSoAFreeStripIsSoft) {
  auto z = [](Real x, Real y, const Real K[3]) {
    return 0.5 * (K[0] * x * x + 2 * K[2] * x * y + K[1] * y * y);
  };
  // (x0, x1, x2, x3) in the plane: the hinge x0 -> x1, its wings x2 (triangle A) and x3 (B),
  // both triangles' normals +z when flat
  const Real hinges[3][4][2] = {{{0, 0}, {1, 0}, {1, 1}, {0, -1}},  // along x
                                {{0, 0}, {0, 1}, {-1, 0}, {1, 1}},  // along y
                                {{0, 0}, {1, 1}, {0, 1}, {1, 0}}};  // the diagonal
  auto angle = [&](int h, const Real K[3]) {
    Vec<12> x;
    for (int n = 0; n < 4; ++n) {
      x[3 * n] = hinges[h][n][0];
      x[3 * n + 1] = hinges[h][n][1];
      x[3 * n + 2] = z(hinges[h][n][0], hinges[h][n][1], K);
    }
    return shell_hinge_angle(x);
  };
  // a[h][c] = d angle_h / d K_c (Kxx, Kyy, Kxy) by central differences
  const Real eps = 1e-6;
  Real a[3][3];
  for (int h = 0; h < 3; ++h)
    for (int c = 0; c < 3; ++c) {
      Real Kp[3] = {0, 0, 0}, Km[3] = {0, 0, 0};
      Kp[c] = eps;
      Km[c] = -eps;
      a[h][c] = (angle(h, Kp) - angle(h, Km)) / (2 * eps);
    }
  const Real expect[3][3] = {{0, 1, 1}, {1, 0, 1}, {0, 0, std::sqrt(Real(2))}};
  for (int h = 0; h < 3; ++h) {
    const Real sign = a[h][2] > 0 ? 1 : -1;  // the stencil's sign convention
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(sign * a[h][c], expect[h][c], 1e-8) << "hinge " << h << ", K component " << c;
  }
  // the strip: W(K) = 1/2 sum_h k_h (a_h . K)^2 at Kxx = 1, minimised over Kyy and Kxy
  for (Real r : {0.5, 1.0, 2.0, 9.0}) {
    const Real k[3] = {1, 1, r};
    Real Q[3][3] = {};
    for (int h = 0; h < 3; ++h)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          Q[i][j] += k[h] * a[h][i] * a[h][j];
    const Real det = Q[1][1] * Q[2][2] - Q[1][2] * Q[2][1];
    const Real yy = -(Q[2][2] * Q[1][0] - Q[1][2] * Q[2][0]) / det;
    const Real xy = -(Q[1][1] * Q[2][0] - Q[2][1] * Q[1][0]) / det;
    const Real K[3] = {1, yy, xy};
    Real W = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        W += K[i] * Q[i][j] * K[j];
    EXPECT_NEAR(W / Q[0][0], 2 * r / (1 + 2 * r), 1e-9) << "r = " << r;
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
