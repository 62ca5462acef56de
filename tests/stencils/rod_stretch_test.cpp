// Finite-difference and invariance checks of the stretching stencil (V7).

#include "slender/stencils/rod_stretch.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

class RodStretchTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0.5, 2.0);
    const Vec3 a = test::random_vec3(rng), b = a + test::random_vec3(rng) + vec3(1, 0, 0);
    x.set_segment(0, a);
    x.set_segment(3, b);
    // the Hookean law, the neo-Hookean (alpha 2) and Ogden laws of either sign, in turn
    const Real alphas[] = {0, 2, 5.3, -1.7};
    p = RodStretch::Params{u(rng) * 10, norm(b - a) * u(rng), alphas[GetParam() % 4]};
  }
  Real energy(const Vec<6>& y) const {
    LocalEval<6> r;
    rod_stretch_eval(y, p, kEnergy, r);
    return r.E;
  }
  Vec<6> grad(const Vec<6>& y) const {
    LocalEval<6> r;
    rod_stretch_eval(y, p, kGrad, r);
    return r.g;
  }
  Vec<6> x;
  RodStretch::Params p;
};

TEST_P(RodStretchTest, GradientMatchesCentralDifferences) {
  const Vec<6> fd = test::fd_gradient<6>([this](const Vec<6>& y) { return energy(y); }, x);
  EXPECT_LT(test::rel_err(grad(x), fd), kFdRelTol);
}

TEST_P(RodStretchTest, HessianMatchesGradientDifferences) {
  LocalEval<6> r;
  rod_stretch_eval(x, p, kGradHess, r);
  const Mat<6, 6> fd = test::fd_jacobian<6>([this](const Vec<6>& y) { return grad(y); }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
}

TEST_P(RodStretchTest, HessianIsSymmetric) {
  LocalEval<6> r;
  rod_stretch_eval(x, p, kGradHess, r);
  EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-14);
}

TEST_P(RodStretchTest, RigidMotionInvariance) {
  LocalEval<6> r;
  rod_stretch_eval(x, p, kGrad, r);
  // internal forces sum to zero, and so do their torques about the origin
  const Vec3 f0 = r.g.segment<3>(0), f1 = r.g.segment<3>(3);
  const Vec3 torque = cross(x.segment<3>(0), f0) + cross(x.segment<3>(3), f1);
  EXPECT_LT(norm(f0 + f1), 1e-12 * norm(f0));
  EXPECT_LT(norm(torque), 1e-12 * norm(f0) * norm(x));
}

TEST_P(RodStretchTest, RestStateHasZeroEnergyAndGradient) {
  RodStretch::Params rest = p;
  rest.l_bar = norm(x.segment<3>(3) - x.segment<3>(0));
  LocalEval<6> r;
  rod_stretch_eval(x, rest, kGrad, r);
  EXPECT_LT(r.E, 1e-28);
  EXPECT_LT(norm(r.g), 1e-12 * p.EA);
}

// the midpoint rule's energy-momentum secant (rod_stretch_em_eval): x the step's midpoint, x0
// its start, the end 2 x - x0 moved by a random rotation and stretch
class RodStretchSecantTest : public RodStretchTest {
 protected:
  Vec<6> start(Real scale) const {
    std::mt19937_64 rng(GetParam() + 1000);
    Vec<6> x0;
    for (int i = 0; i < 6; ++i)
      x0[i] = x[i] + scale * std::uniform_real_distribution<Real>(-1, 1)(rng);
    return x0;
  }
  LocalEval<6> secant(const Vec<6>& y, const Vec<6>& x0, unsigned want = kGradHess) const {
    LocalEval<6> r;
    rod_stretch_em_eval(y, x0, p, want, r);
    return r;
  }
};

TEST_P(RodStretchSecantTest, WorkOverTheStepIsTheChangeOfEnergy) {
  // exact for any law and step: g . (x1 - x0) = E(x1) - E(x0) to round-off
  for (Real scale : {1e-6, 1e-3, 0.3}) {
    const Vec<6> x0 = start(scale);
    const Vec<6> x1 = 2 * x - x0;
    const LocalEval<6> r = secant(x, x0);
    const Real work = dot(r.g, x1 - x0), dE = energy(x1) - energy(x0);
    EXPECT_NEAR(work, dE, 1e-9 * (std::fabs(energy(x1)) + std::fabs(energy(x0)) + 1e-30)) << scale;
  }
}

TEST_P(RodStretchSecantTest, IsCentralAndTendsToTheMidpointForce) {
  const Vec<6> x0 = start(0.05);
  const LocalEval<6> r = secant(x, x0);
  // central: no net force, no torque (momentum and angular momentum kept)
  const Vec3 f0 = r.g.segment<3>(0), f1 = r.g.segment<3>(3);
  EXPECT_LT(norm(f0 + f1), 1e-12 * norm(f0));
  EXPECT_LT(norm(cross(x.segment<3>(3) - x.segment<3>(0), f1)), 1e-12 * norm(f0) * norm(x));
  // a step that does not move: the pointwise force, through the midpoint branch
  EXPECT_LT(test::rel_err(secant(x, x, kGrad).g, grad(x)), 1e-12);
  EXPECT_LT(test::rel_err(secant(x, start(1e-9), kGrad).g, grad(x)), 1e-7);
}

TEST_P(RodStretchSecantTest, JacobianMatchesCentralDifferences) {
  // the exact Jacobian (not symmetric once the step moves the edge), with the start held
  for (Real scale : {1e-9, 0.05}) {
    const Vec<6> x0 = start(scale);
    const LocalEval<6> r = secant(x, x0);
    const Mat<6, 6> fd =
        test::fd_jacobian<6>([&](const Vec<6>& y) { return secant(y, x0, kGrad).g; }, x);
    EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol) << scale;
  }
}

TEST_P(RodStretchSecantTest, StartDerivativeMatchesCentralDifferences) {
  // the secant's derivative by the step's start at a fixed midpoint (the adjoint's term,
  // rod_stretch_em_start_derivative), for a step that barely moves and one that moves far;
  // relative to the Jacobian's size (the derivative vanishes as the step does: at x0 = x the
  // secant is the midpoint force whatever the start)
  for (Real scale : {1e-9, 0.05}) {
    const Vec<6> x0 = start(scale);
    Mat<6, 6> D;
    ASSERT_TRUE(rod_stretch_em_start_derivative(x, x0, p, D));
    const Mat<6, 6> fd =
        test::fd_jacobian<6>([&](const Vec<6>& z) { return secant(x, z, kGrad).g; }, x0);
    const Real size = test::frobenius<6>(secant(x, x0).H);
    EXPECT_LT(test::frobenius<6>(D - fd), kFdRelTol * size) << scale;
    if (scale > 1e-3) {
      EXPECT_GT(test::frobenius<6>(D), 1e-3 * size);  // (not vanishing there)
    }
  }
  Mat<6, 6> D;
  Vec<6> e = Vec<6>::zero();
  e[3] = 1;  // a zero-length edge at the start: no derivative, as no secant
  EXPECT_FALSE(rod_stretch_em_start_derivative(e, Vec<6>::zero(), p, D));
  EXPECT_EQ(test::rel_err(D, Mat<6, 6>::zero()), 0);
}

TEST_P(RodStretchSecantTest, NaturalLengthDerivativeMatchesCentralDifferences) {
  // dg/dl_bar (the adjoint's term for the natural stretch), pointwise and through the
  // midpoint rule's secant, against central differences in the natural length
  for (Real scale : {0.0, 0.05}) {
    const Vec<6> x0 = start(scale);
    const Vec<6>* start_of = scale > 0 ? &x0 : nullptr;
    Vec<6> dg;
    ASSERT_TRUE(rod_stretch_natural_length_derivative(x, start_of, p, dg));
    auto g_at = [&](Real h) {
      RodStretch::Params q = p;
      q.l_bar += h;
      LocalEval<6> r;
      if (start_of) {
        rod_stretch_em_eval(x, x0, q, kGrad, r);
      } else {
        rod_stretch_eval(x, q, kGrad, r);
      }
      return r.g;
    };
    const Real h = 1e-6 * p.l_bar;
    const Vec<6> fd = (g_at(h) - g_at(-h)) / (2 * h);
    EXPECT_LT(test::rel_err(dg, fd), kFdRelTol) << scale;
  }
}

TEST(RodStretchSecant, DegenerateInputStaysFinite) {
  for (Real l : {0.0, 1e-15}) {
    Vec<6> x = Vec<6>::zero(), x0 = Vec<6>::zero();
    x[3] = 1;
    x0[3] = 2 - l;  // the end's edge of length l
    LocalEval<6> r;
    rod_stretch_em_eval(x, x0, RodStretch::Params{1.0, 1.0}, kGradHess, r);
    EXPECT_TRUE(std::isfinite(r.E));
    for (int i = 0; i < 6; ++i)
      EXPECT_TRUE(std::isfinite(r.g[i]));
    for (int i = 0; i < 36; ++i)
      EXPECT_TRUE(std::isfinite(r.H.a[i]));
    EXPECT_TRUE(r.flags & kDegenerate);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RodStretchTest, ::testing::Range(1, 41));
INSTANTIATE_TEST_SUITE_P(Seeds, RodStretchSecantTest, ::testing::Range(1, 21));

// the Ogden laws: at small strain the tension is the Hookean EA eps (the stiffness EA at
// lambda = 1); the neo-Hookean law is alpha = 2: W = EA / 6 (lambda^2 + 2 / lambda - 3) per rest
// length (mu / 2 (I1 - 3) of an incompressible solid, mu = E / 3)
TEST(RodStretch, OgdenLawsAtSmallStrainAndNeoHookean) {
  const Real EA = 7, l_bar = 0.3;
  for (const Real alpha : {Real(2), Real(5.3), Real(-1.7), Real(9)}) {
    for (const Real eps : {Real(1e-5), Real(-1e-5)}) {
      Vec<6> x = Vec<6>::zero();
      x[3] = l_bar * (1 + eps);
      LocalEval<6> r;
      rod_stretch_eval(x, RodStretch::Params{EA, l_bar, alpha}, kGradHess, r);
      // the tension f1 = g[3] (the edge along x): EA eps (1 + O(eps))
      EXPECT_NEAR(r.g[3] / (EA * eps), 1, 1e-4 * (1 + std::fabs(alpha))) << alpha;
      EXPECT_NEAR(r.H(3, 3) / (EA / l_bar), 1, 1e-4 * (1 + std::fabs(alpha))) << alpha;
    }
  }
  for (const Real lam : {Real(0.5), Real(1.3), Real(2)}) {
    Vec<6> x = Vec<6>::zero();
    x[3] = l_bar * lam;
    LocalEval<6> r;
    rod_stretch_eval(x, RodStretch::Params{EA, l_bar, 2}, kGrad, r);
    EXPECT_NEAR(r.E, l_bar * EA / 6 * (lam * lam + 2 / lam - 3), 1e-14);
    EXPECT_NEAR(r.g[3], EA / 3 * (lam - 1 / (lam * lam)), 1e-13);
  }
}

TEST(RodStretch, DegenerateInputStaysFinite) {
  for (Real l : {0.0, 1e-15, -1e-15}) {
    Vec<6> x = Vec<6>::zero();
    x[3] = l;
    LocalEval<6> r;
    rod_stretch_eval(x, RodStretch::Params{1.0, 1.0}, kGradHess, r);
    EXPECT_TRUE(std::isfinite(r.E));
    for (int i = 0; i < 6; ++i)
      EXPECT_TRUE(std::isfinite(r.g[i]));
    for (int i = 0; i < 36; ++i)
      EXPECT_TRUE(std::isfinite(r.H.a[i]));
    EXPECT_TRUE(r.flags & kDegenerate);
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
