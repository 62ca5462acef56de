// The constant-strain membrane triangle (stencils/shell_membrane.h), both laws: finite
// differences, symmetry, the rest state, rigid motions, degenerate triangles, and the laws
// against closed forms (plane-stress Hooke at small strain, equibiaxial stretch at large strain,
// the plane-stress thickness stretch).

#include "slender/stencils/shell_membrane.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

constexpr ShellMembrane::Law kLaws[] = {ShellMembrane::kStvk, ShellMembrane::kNeoHookean};

const char* law_name(int law) { return law == ShellMembrane::kStvk ? "stvk" : "neo_hookean"; }

LocalEval<9> eval(const Vec<9>& x, const ShellMembrane::Params& p, unsigned want) {
  LocalEval<9> r;
  shell_membrane_eval(x, p, want, r);
  return r;
}

// the rest metric of triangle x
void set_rest(ShellMembrane::Params& p, const Vec<9>& x) {
  shell_membrane_metric(x, p.g11, p.g22, p.g12);
}

// x's nodes moved by Q and d
Vec<9> moved(const Vec<9>& x, const Mat3& Q, const Vec3& d) {
  Vec<9> y;
  for (int n = 0; n < 3; ++n)
    y.set_segment(3 * n, Q * x.segment<3>(3 * n) + d);
  return y;
}

// A random rest triangle (edges 0.5 to 2, not too thin) and a current one: the rest triangle
// deformed by a random in-plane stretch (principal stretches 0.6 to 1.6 and a shear), bent out
// of its plane a little at one node, then turned and moved. Poisson ratios 0 and 0.5 (the
// laws' special cases) and random ones in between.
struct Config {
  Vec<9> x_bar, x;
  ShellMembrane::Params p;
};
Config random_config(int seed, int law) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<Real> u(0.5, 2.0), st(0.6, 1.6), sh(-0.3, 0.3), nu(0.01, 0.49);
  Config c;
  const Real a = u(rng), b = u(rng), skew = std::uniform_real_distribution<Real>(-0.6, 0.6)(rng);
  const Vec3 local[3] = {vec3(0, 0, 0), vec3(a, 0, 0), vec3(skew * a, b, 0)};
  const Mat3 Q0 = test::random_rotation(rng);
  const Vec3 d0 = test::random_vec3(rng, 2);
  for (int n = 0; n < 3; ++n)
    c.x_bar.set_segment(3 * n, Q0 * local[n] + d0);
  const Real s1 = st(rng), s2 = st(rng), g = sh(rng);
  Vec<9> y;
  for (int n = 0; n < 3; ++n) {
    const Vec3& X = local[n];
    y.set_segment(3 * n, vec3(s1 * X[0] + g * X[1], s2 * X[1], 0));
  }
  y[8] += 0.2 * b;  // x2 off the plane
  c.x = moved(y, test::random_rotation(rng), test::random_vec3(rng, 2));
  c.p.law = law;
  c.p.E = u(rng);
  c.p.nu = seed % 5 == 0 ? 0.0 : seed % 5 == 1 ? 0.5 : nu(rng);
  c.p.h = u(rng);
  set_rest(c.p, c.x_bar);
  return c;
}

class ShellMembraneStencilTest : public ::testing::TestWithParam<int> {};

TEST_P(ShellMembraneStencilTest, GradientMatchesCentralDifferences) {
  for (int law : kLaws) {
    const Config c = random_config(GetParam(), law);
    const Vec<9> fd =
        test::fd_gradient<9>([&](const Vec<9>& y) { return eval(y, c.p, kEnergy).E; }, c.x);
    const LocalEval<9> r = eval(c.x, c.p, kGrad);
    EXPECT_LT(test::rel_err(r.g, fd), kFdRelTol) << law_name(law) << ", nu " << c.p.nu;
    EXPECT_EQ(r.flags, 0u);
  }
}

TEST_P(ShellMembraneStencilTest, HessianMatchesGradientDifferences) {
  for (int law : kLaws) {
    const Config c = random_config(GetParam(), law);
    const LocalEval<9> r = eval(c.x, c.p, kGradHess);
    const Mat<9, 9> fd =
        test::fd_jacobian<9>([&](const Vec<9>& y) { return eval(y, c.p, kGrad).g; }, c.x);
    EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol) << law_name(law) << ", nu " << c.p.nu;
    // the energy and gradient do not depend on whether the Hessian was asked for
    const LocalEval<9> rg = eval(c.x, c.p, kGrad);
    EXPECT_EQ(r.E, rg.E);
    EXPECT_EQ(test::rel_err(r.g, rg.g), 0);
  }
}

// lambda . g by the rest metric (the Kelvin-Voigt anchors' share in the adjoint) against central
// differences of lambda . g in g11, g22, g12 (steps 1e-6 of the metric's scale)
TEST_P(ShellMembraneStencilTest, RestMetricDerivativeMatchesCentralDifferences) {
  for (int law : kLaws) {
    const Config c = random_config(GetParam(), law);
    std::mt19937_64 rng(GetParam() + 7);
    std::uniform_real_distribution<Real> u(-1, 1);
    Vec<9> lam;
    for (int i = 0; i < 9; ++i)
      lam[i] = u(rng);
    Real d[3];
    shell_membrane_rest_metric_derivative(c.x, c.p, lam, d);
    const Real scale = std::max(c.p.g11, c.p.g22), h = 1e-6 * scale;
    auto lg = [&](int j, Real dg) {
      ShellMembrane::Params p = c.p;
      (j == 0 ? p.g11 : j == 1 ? p.g22 : p.g12) += dg;
      const LocalEval<9> r = eval(c.x, p, kGrad);
      Real t = 0;
      for (int i = 0; i < 9; ++i)
        t += r.g[i] * lam[i];
      return t;
    };
    Real err = 0, mag = 0;
    for (int j = 0; j < 3; ++j) {
      const Real fd = (lg(j, h) - lg(j, -h)) / (2 * h);
      err = std::max(err, std::fabs(d[j] - fd));
      mag = std::max(mag, std::fabs(fd));
    }
    EXPECT_LT(err, kFdRelTol * mag) << law_name(law) << ", nu " << c.p.nu;
    EXPECT_GT(mag, 0);
  }
}

TEST_P(ShellMembraneStencilTest, HessianIsSymmetric) {
  for (int law : kLaws) {
    const Config c = random_config(GetParam(), law);
    const LocalEval<9> r = eval(c.x, c.p, kGradHess);
    EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-14) << law_name(law);
  }
}

TEST_P(ShellMembraneStencilTest, RestStateHasZeroEnergyAndGradient) {
  for (int law : kLaws) {
    const Config c = random_config(GetParam(), law);
    // the rest shape anywhere, turned any way, is at rest
    std::mt19937_64 rng(GetParam() + 500);
    const Vec<9> x = moved(c.x_bar, test::random_rotation(rng), test::random_vec3(rng, 3));
    const LocalEval<9> r = eval(x, c.p, kGradHess);
    const Real k = c.p.E * c.p.h;  // the force scale of a unit-size triangle
    EXPECT_LT(std::fabs(r.E), 1e-14 * k) << law_name(law);
    EXPECT_LT(norm(r.g), 1e-13 * k) << law_name(law);
    EXPECT_EQ(r.flags, 0u);
    // at rest the Hessian is the linear stiffness: positive semi-definite
    for (int i = 0; i < 9; ++i)
      EXPECT_GE(r.H(i, i), -1e-13 * k);
    for (int t = 0; t < 20; ++t) {
      Vec<9> v;
      for (int i = 0; i < 9; ++i)
        v[i] = std::uniform_real_distribution<Real>(-1, 1)(rng);
      EXPECT_GE(dot(v, r.H * v), -1e-12 * k);
    }
  }
}

TEST_P(ShellMembraneStencilTest, RigidMotionInvariance) {
  for (int law : kLaws) {
    const Config c = random_config(GetParam(), law);
    const LocalEval<9> r = eval(c.x, c.p, kGrad);
    // internal forces sum to zero, and so do their torques about the origin
    Vec3 f = vec3(0, 0, 0), torque = vec3(0, 0, 0);
    for (int n = 0; n < 3; ++n) {
      f += r.g.segment<3>(3 * n);
      torque += cross(c.x.segment<3>(3 * n), r.g.segment<3>(3 * n));
    }
    const Real scale = norm(r.g) * (1 + norm(c.x));
    EXPECT_LT(norm(f), 1e-13 * scale) << law_name(law);
    EXPECT_LT(norm(torque), 1e-13 * scale) << law_name(law);
    // and the energy itself is unchanged by a rigid motion
    std::mt19937_64 rng(GetParam() + 1000);
    const Vec<9> y = moved(c.x, test::random_rotation(rng), test::random_vec3(rng, 3));
    EXPECT_NEAR(eval(y, c.p, kEnergy).E, r.E, 1e-12 * (1 + std::fabs(r.E))) << law_name(law);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellMembraneStencilTest, ::testing::Range(1, 25));

// a unit right triangle in the plane z = 0 under the homogeneous in-plane deformation F (2 x 2)
Vec<9> deformed_unit_triangle(const Real F[2][2]) {
  Vec<9> x = Vec<9>::zero();
  x.set_segment(3, vec3(F[0][0], F[1][0], 0));
  x.set_segment(6, vec3(F[0][1], F[1][1], 0));
  return x;
}

ShellMembrane::Params unit_params(int law, Real E, Real nu, Real h) {
  ShellMembrane::Params p{law, E, nu, h, 0, 0, 0};
  Real F[2][2] = {{1, 0}, {0, 1}};
  set_rest(p, deformed_unit_triangle(F));
  return p;
}

// At small strain both laws are the plane-stress Hooke law of E and nu: the energy per volume
// of a small strain eps (2 x 2) is E / (2 (1 - nu^2)) ((1 - nu) eps:eps + nu (tr eps)^2). With
// |eps| ~ 1e-5 the nonlinear terms are 1e-5 of it.
TEST(ShellMembraneStencil, SmallStrainIsPlaneStressHooke) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  for (int law : kLaws)
    for (Real nu : {0.0, 0.25, 1.0 / 3, 0.45, 0.5}) {
      const Real E = 3e6, h = 2e-3;
      const ShellMembrane::Params p = unit_params(law, E, nu, h);
      for (int t = 0; t < 5; ++t) {
        const Real e11 = 1e-5 * u(rng), e22 = 1e-5 * u(rng), e12 = 1e-5 * u(rng);
        const Real F[2][2] = {{1 + e11, e12}, {e12, 1 + e22}};  // symmetric: strain e
        const Real ee = e11 * e11 + e22 * e22 + 2 * e12 * e12, tr = e11 + e22;
        const Real W = E / (2 * (1 - nu * nu)) * ((1 - nu) * ee + nu * tr * tr);
        const Real V = h * 0.5;  // h A_bar
        EXPECT_NEAR(eval(deformed_unit_triangle(F), p, kEnergy).E / V, W, 1e-4 * W)
            << law_name(law) << ", nu " << nu;
      }
    }
}

// Equibiaxial stretch lambda, closed forms: St Venant-Kirchhoff with the Green strain
// g = (lambda^2 - 1) / 2, W = 2 mu g^2 + 2 lambda_ps g^2; the incompressible neo-Hookean
// membrane (nu = 0.5), W = mu / 2 (2 lambda^2 + lambda^-4 - 3); nu = 0 keeps the thickness,
// W = mu (lambda^2 - 1) - 2 mu ln lambda.
TEST(ShellMembraneStencil, EquibiaxialStretchMatchesClosedForms) {
  const Real E = 2e6, h = 1e-3, V = h * 0.5;
  for (Real lam : {0.7, 1.2, 1.5, 2.5}) {
    const Real F[2][2] = {{lam, 0}, {0, lam}};
    const Vec<9> x = deformed_unit_triangle(F);
    for (Real nu : {0.0, 0.3, 0.5}) {
      const Real mu = E / (2 * (1 + nu)), lps = E * nu / (1 - nu * nu);
      const Real g = (lam * lam - 1) / 2;
      const Real W = 2 * mu * g * g + 2 * lps * g * g;
      EXPECT_NEAR(eval(x, unit_params(ShellMembrane::kStvk, E, nu, h), kEnergy).E / V, W,
                  1e-12 * W);
    }
    const Real mu5 = E / 3, mu0 = E / 2;
    const Real W5 = mu5 / 2 * (2 * lam * lam + std::pow(lam, -4) - 3);
    const Real W0 = mu0 * (lam * lam - 1) - 2 * mu0 * std::log(lam);
    EXPECT_NEAR(eval(x, unit_params(ShellMembrane::kNeoHookean, E, 0.5, h), kEnergy).E / V, W5,
                1e-12 * W5);
    EXPECT_NEAR(eval(x, unit_params(ShellMembrane::kNeoHookean, E, 0.0, h), kEnergy).E / V, W0,
                1e-12 * W0);
  }
}

// the thickness stretch solves the plane-stress condition a (s - 1) + (1 - a) ln(d s) = 0
TEST(ShellMembraneStencil, ThicknessStretchSolvesPlaneStress) {
  for (Real d : {1e-12, 1e-6, 0.3, 1.0, 2.0, 50.0, 1e6})
    for (Real nu : {0.0, 0.1, 0.3, 0.45, 0.499, 0.5}) {
      const Real a = (1 - 2 * nu) / (1 - nu);
      const Real t = shell_membrane_log_thickness_stretch(d, a), s = std::exp(t);
      const Real res = a * (s - 1) + (1 - a) * (std::log(d) + t);
      EXPECT_LT(std::fabs(res), 1e-13 * (1 + a * s + std::fabs((1 - a) * std::log(d))))
          << "d " << d << ", nu " << nu;
      EXPECT_TRUE(std::isfinite(s));
    }
}

TEST(ShellMembraneStencil, DegenerateInputStaysFinite) {
  for (int law : kLaws)
    for (Real nu : {0.0, 0.3, 0.5}) {
      const ShellMembrane::Params p = unit_params(law, 1e6, nu, 1e-3);
      const Vec3 pts[][3] = {
          {vec3(0, 0, 0), vec3(1, 0, 0), vec3(2, 0, 0)},         // collinear
          {vec3(0, 0, 0), vec3(0, 0, 0), vec3(0, 1, 0)},         // two nodes on one
          {vec3(1, 1, 1), vec3(1, 1, 1), vec3(1, 1, 1)},         // one point
          {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, 1e-12, 0)},   // sliver +1e-12
          {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, -1e-12, 0)},  // sliver -1e-12 (flipped)
      };
      for (const auto& c : pts) {
        Vec<9> x;
        for (int n = 0; n < 3; ++n)
          x.set_segment(3 * n, c[n]);
        const LocalEval<9> r = eval(x, p, kGradHess);
        EXPECT_TRUE(r.flags & kDegenerate) << law_name(law);
        EXPECT_TRUE(std::isfinite(r.E));
        for (int i = 0; i < 9; ++i)
          EXPECT_TRUE(std::isfinite(r.g[i]));
        for (int i = 0; i < 81; ++i)
          EXPECT_TRUE(std::isfinite(r.H.a[i]));
        // a squashed triangle stores energy (the neo-Hookean law a large one)
        EXPECT_GT(r.E, 0);
      }
      // a rest shape without area: zeros and the flag
      ShellMembrane::Params flat = p;
      flat.g11 = 1, flat.g22 = 4, flat.g12 = 2;  // e2 = 2 e1
      Real F[2][2] = {{1.1, 0}, {0, 0.9}};
      const LocalEval<9> r = eval(deformed_unit_triangle(F), flat, kGradHess);
      EXPECT_TRUE(r.flags & kDegenerate);
      EXPECT_EQ(r.E, 0);
      EXPECT_EQ(norm(r.g), 0);
    }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
