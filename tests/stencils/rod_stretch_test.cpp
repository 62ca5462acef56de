// Finite-difference and invariance checks of the stretching stencil (V7).

#include "slender/stencils/rod_stretch.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace slender {
namespace {

using test::kFdRelTol;

class RodStretchTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0.5, 2.0);
    const Vec3 a = test::random_vec3(rng), b = a + test::random_vec3(rng) + vec3(1, 0, 0);
    x.set_segment(0, a);
    x.set_segment(3, b);
    p = RodStretch::Params{u(rng) * 10, norm(b - a) * u(rng)};
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

INSTANTIATE_TEST_SUITE_P(Seeds, RodStretchTest, ::testing::Range(1, 21));

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

}  // namespace
}  // namespace slender
