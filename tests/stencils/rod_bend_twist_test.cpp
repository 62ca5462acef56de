// Finite-difference, invariance and degenerate-input checks of the bend-twist stencil (V7),
// including non-zero natural curvature and joint edges whose orientation is flipped.
//
// The stencil's derivatives are those of the energy whose reference frames follow the DOFs by
// parallel transport from the evaluated configuration. The reference energy here does exactly
// that: it transports the base directors to the perturbed tangents and recomputes the
// reference twist. Its gradient is only exact at the base, so the Hessian is checked against
// second differences of this energy (not differences of the stencil's gradient).

#include "slender/stencils/rod_bend_twist.h"

#include <gtest/gtest.h>

#include "../../apps/examples/sadowsky_ribbon.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/rod_frames.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdHessRelTol;
using test::kFdRelTol;

// a random non-degenerate stencil: turning angle well below pi, edges of comparable length
struct Config {
  Vec<11> x;
  RodBendTwist::Params p;
};

Config random_config(std::mt19937_64& rng, bool natural_strains) {
  std::uniform_real_distribution<Real> u(0.5, 2.0), th(-3.0, 3.0);
  Config c;
  const Vec3 x0 = test::random_vec3(rng);
  const Vec3 x1 = x0 + u(rng) * vec3(1, 0, 0) + 0.6 * test::random_vec3(rng);
  const Vec3 x2 = x1 + u(rng) * vec3(1, 0, 0) + 0.6 * test::random_vec3(rng);
  c.x.set_segment(0, x0);
  c.x.set_segment(3, x1);
  c.x.set_segment(6, x2);
  c.x[9] = th(rng);
  c.x[10] = th(rng);
  const Vec3 t0 = (x1 - x0) / norm(x1 - x0), t1 = (x2 - x1) / norm(x2 - x1);
  c.p.d1_0 = test::random_normal(rng, t0);
  c.p.d1_1 = test::random_normal(rng, t1);
  c.p.ref_twist = reference_twist(c.p.d1_0, t0, c.p.d1_1, t1, 0);
  c.p.EI1 = u(rng);
  c.p.EI2 = u(rng);
  c.p.GJ = u(rng);
  c.p.dl = u(rng);
  c.p.kappa1_bar = natural_strains ? th(rng) / 3 : 0;
  c.p.kappa2_bar = natural_strains ? th(rng) / 3 : 0;
  c.p.tau_bar = natural_strains ? th(rng) / 3 : 0;
  c.p.frame_offset = natural_strains ? th(rng) / 3 : 0;
  return c;
}

// the stencil's parameters at y with its frames transported from the base configuration of c
// (as a step carries them from its start)
RodBendTwist::Params transported_params(const Config& c, const Vec<11>& y) {
  auto tangent = [](const Vec<11>& v, int a) {
    const Vec3 e = v.segment<3>(3 * a + 3) - v.segment<3>(3 * a);
    return e / norm(e);
  };
  RodBendTwist::Params q = c.p;
  const Vec3 s0 = tangent(y, 0), s1 = tangent(y, 1);
  q.d1_0 = parallel_transport(c.p.d1_0, tangent(c.x, 0), s0);
  q.d1_1 = parallel_transport(c.p.d1_1, tangent(c.x, 1), s1);
  q.ref_twist = reference_twist(q.d1_0, s0, q.d1_1, s1, c.p.ref_twist);
  return q;
}

// energy at y with frames transported from the base configuration of c (the rod's own, or
// another function of the strains)
template <class Energy = RodElasticStrainEnergy>
Real transported_energy(const Config& c, const Vec<11>& y, const Energy& energy = Energy{}) {
  const RodBendTwist::Params q = transported_params(c, y);
  LocalEval<11> r;
  rod_bend_twist_eval_with(y, q, energy, kEnergy, r);
  return r.E;
}

class RodBendTwistTest : public ::testing::TestWithParam<int> {};

TEST_P(RodBendTwistTest, GradientMatchesCentralDifferences) {
  std::mt19937_64 rng(GetParam());
  for (bool natural : {false, true}) {
    const Config c = random_config(rng, natural);
    LocalEval<11> r;
    rod_bend_twist_eval(c.x, c.p, kGrad, r);
    const Vec<11> fd =
        test::fd_gradient<11>([&](const Vec<11>& y) { return transported_energy(c, y); }, c.x);
    EXPECT_LT(test::rel_err(r.g, fd), kFdRelTol) << "natural strains " << natural;
  }
}

TEST_P(RodBendTwistTest, HessianMatchesGradientDifferences) {
  std::mt19937_64 rng(GetParam());
  for (bool natural : {false, true}) {
    const Config c = random_config(rng, natural);
    LocalEval<11> r;
    rod_bend_twist_eval(c.x, c.p, kGradHess, r);
    const Mat<11, 11> fd =
        test::fd_hessian<11>([&](const Vec<11>& y) { return transported_energy(c, y); }, c.x);
    EXPECT_LT(test::rel_err(r.H, fd), kFdHessRelTol) << "natural strains " << natural;
  }
}

TEST_P(RodBendTwistTest, HessianIsSymmetric) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng, true);
  LocalEval<11> r;
  rod_bend_twist_eval(c.x, c.p, kGradHess, r);
  EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-13);
}

TEST_P(RodBendTwistTest, RigidMotionInvariance) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng, true);
  LocalEval<11> r;
  rod_bend_twist_eval(c.x, c.p, kGrad, r);
  // forces sum to zero; torques of the forces plus the twist moments about the tangents too
  Vec3 f = vec3(0, 0, 0), torque = vec3(0, 0, 0);
  for (int a = 0; a < 3; ++a) {
    f += r.g.segment<3>(3 * a);
    torque += cross(c.x.segment<3>(3 * a), r.g.segment<3>(3 * a));
  }
  const Vec3 t0 =
      (c.x.segment<3>(3) - c.x.segment<3>(0)) / norm(c.x.segment<3>(3) - c.x.segment<3>(0));
  const Vec3 t1 =
      (c.x.segment<3>(6) - c.x.segment<3>(3)) / norm(c.x.segment<3>(6) - c.x.segment<3>(3));
  torque += r.g[9] * t0 + r.g[10] * t1;
  const Real scale = norm(r.g) * (1 + norm(c.x));
  EXPECT_LT(norm(f), 1e-12 * scale);
  EXPECT_LT(norm(torque), 1e-12 * scale);
}

TEST_P(RodBendTwistTest, RestStateHasZeroEnergyAndGradient) {
  std::mt19937_64 rng(GetParam());
  Config c = random_config(rng, false);
  LocalEval<11> r;
  RodBendTwist::Strains s;
  rod_bend_twist_eval(c.x, c.p, kEnergy, r, &s);
  c.p.kappa1_bar = s.kappa1;
  c.p.kappa2_bar = s.kappa2;
  c.p.tau_bar = s.tau;
  rod_bend_twist_eval(c.x, c.p, kGrad, r);
  EXPECT_LT(r.E, 1e-28);
  EXPECT_LT(norm(r.g), 1e-13);
}

// A joint edge stored the other way round: the binding negates its tangent, director and twist
// angle. The energy must not depend on how the edge is stored, and the binding's gradient
// must match central differences in the stored DOFs.
TEST_P(RodBendTwistTest, FlippedEdgeOrientationIsConsistent) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng, true);
  for (int flips = 0; flips < 4; ++flips) {
    const Real s0 = (flips & 1) ? -1 : 1, s1 = (flips & 2) ? -1 : 1;
    // a three-node model: edges stored in the given orientation
    std::vector<int> edge_node = {s0 > 0 ? 0 : 1, s0 > 0 ? 1 : 0, s1 > 0 ? 1 : 2, s1 > 0 ? 2 : 1};
    std::vector<Real> l_bar = {1, 1}, EA = {1, 1};
    std::vector<int> bend_node = {0, 1, 2}, bend_edge = {0, 1};
    std::vector<Real> bend_sign = {s0, s1}, EI = {c.p.EI1, c.p.EI2}, GJ = {c.p.GJ}, dl = {c.p.dl};
    std::vector<Real> tau_bar = {c.p.tau_bar}, kappa_bar = {c.p.kappa1_bar, c.p.kappa2_bar};
    std::vector<Real> offset = {c.p.frame_offset};
    ModelView mv{};  // only what a bend-twist stencil reads
    mv.nnode = 3;
    mv.nedge = 2;
    mv.nbend = 1;
    mv.ndof = 11;
    mv.edge_node = edge_node.data();
    mv.edge_l_bar = l_bar.data();
    mv.edge_EA = EA.data();
    mv.bend_node = bend_node.data();
    mv.bend_edge = bend_edge.data();
    mv.bend_sign = bend_sign.data();
    mv.bend_EI = EI.data();
    mv.bend_GJ = GJ.data();
    mv.bend_dl = dl.data();
    mv.bend_tau_bar = tau_bar.data();
    mv.bend_frame_offset = offset.data();
    std::vector<Real> q(11);
    for (int i = 0; i < 9; ++i)
      q[i] = c.x[i];
    q[9] = s0 * c.x[9];
    q[10] = s1 * c.x[10];
    std::vector<Real> d1(6);
    for (int i = 0; i < 3; ++i) {
      d1[i] = s0 * c.p.d1_0[i];
      d1[3 + i] = s1 * c.p.d1_1[i];
    }
    std::vector<Real> ref = {c.p.ref_twist};
    EvalView ev{};
    ev.nenv = 1;
    ev.q = q.data();
    ev.edge_d1 = d1.data();
    ev.bend_ref_twist = ref.data();
    ev.bend_kappa_bar = kappa_bar.data();
    ev.bend_tau_bar = tau_bar.data();
    LocalEval<11> stored, local;
    RodBendTwistBinding::eval(mv, ev, 0, 0, kGradHess, stored);
    rod_bend_twist_eval(c.x, c.p, kGradHess, local);
    EXPECT_NEAR(stored.E, local.E, 1e-14 * (1 + local.E));
    // chain rule through theta_stored = sign theta_local
    for (int i = 0; i < 9; ++i)
      EXPECT_NEAR(stored.g[i], local.g[i], 1e-12);
    EXPECT_NEAR(stored.g[9], s0 * local.g[9], 1e-12);
    EXPECT_NEAR(stored.g[10], s1 * local.g[10], 1e-12);
    const Real sg[11] = {1, 1, 1, 1, 1, 1, 1, 1, 1, s0, s1};
    for (int i = 0; i < 11; ++i)
      for (int j = 0; j < 11; ++j)
        EXPECT_NEAR(stored.H(i, j), sg[i] * sg[j] * local.H(i, j),
                    1e-10 * (1 + test::frobenius(local.H)));
  }
}

// An energy of the strains that couples all three (every second derivative non-zero), for the
// chain rule of rod_bend_twist_eval_with: E = a k1^2 t + b k2 t^2 + c k1 k2 + 1/2 g t^2 + k1^4
struct CoupledStrainEnergy {
  Real a = 0.7, b = -0.4, c = 0.9, g = 1.3;
  SLENDER_HD void operator()(const RodBendTwist::Params&,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    const Real k1 = s.kappa1, k2 = s.kappa2, t = s.tau;
    out.E =
        a * k1 * k1 * t + b * k2 * t * t + c * k1 * k2 + Real(0.5) * g * t * t + k1 * k1 * k1 * k1;
    out.dE[0] = 2 * a * k1 * t + c * k2 + 4 * k1 * k1 * k1;
    out.dE[1] = b * t * t + c * k1;
    out.dE[2] = a * k1 * k1 + 2 * b * k2 * t + g * t;
    out.d2E[0][0] = 2 * a * t + 12 * k1 * k1;
    out.d2E[1][1] = 0;
    out.d2E[2][2] = 2 * b * k2 + g;
    out.d2E[0][1] = out.d2E[1][0] = c;
    out.d2E[0][2] = out.d2E[2][0] = 2 * a * k1;
    out.d2E[1][2] = out.d2E[2][1] = 2 * b * t;
  }
};

// Energies of the strains other than the rod's own (user energies, stencils/user_energy.h):
// their chained gradient and Hessian against differences of the energy, as for the rod's own
template <class Energy>
void check_strain_energy(const Energy& energy, std::mt19937_64& rng, const char* what) {
  for (bool natural : {false, true}) {
    const Config c = random_config(rng, natural);
    LocalEval<11> r;
    rod_bend_twist_eval_with(c.x, c.p, energy, kGradHess, r);
    auto E = [&](const Vec<11>& y) { return transported_energy(c, y, energy); };
    EXPECT_LT(test::rel_err(r.g, test::fd_gradient<11>(E, c.x)), kFdRelTol)
        << what << ", natural strains " << natural;
    EXPECT_LT(test::rel_err(r.H, test::fd_hessian<11>(E, c.x)), kFdHessRelTol)
        << what << ", natural strains " << natural;
    EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-13) << what;
  }
}

TEST_P(RodBendTwistTest, AnEnergyOfTheStrainsChainsToFiniteDifferences) {
  std::mt19937_64 rng(GetParam());
  check_strain_energy(CoupledStrainEnergy{}, rng, "coupled polynomial");
  // (a regularization comparable to the strains: second differences of step 1e-4 resolve it)
  check_strain_energy(examples::SadowskyRibbon{0.3}, rng, "Sadowsky ribbon");
}

// the rod's own energy through the general path is the same function, to the bit
TEST_P(RodBendTwistTest, TheRodsEnergyIsTheQuadraticStrainEnergy) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng, true);
  Config d = c;
  const Real k1 = c.p.EI1 / c.p.dl, k2 = c.p.EI2 / c.p.dl, kt = c.p.GJ / c.p.dl;
  LocalEval<11> r;
  RodBendTwist::Strains s;
  rod_bend_twist_eval(c.x, c.p, kGradHess, r, &s);
  const Real d1 = s.kappa1 - c.p.kappa1_bar, d2 = s.kappa2 - c.p.kappa2_bar,
             dt = s.tau - c.p.tau_bar;
  EXPECT_EQ(r.E, Real(0.5) * (k1 * d1 * d1 + k2 * d2 * d2 + kt * dt * dt));
  // twice the stiffnesses: twice the energy and its derivatives (a power of two is exact)
  d.p.EI1 *= 2;
  d.p.EI2 *= 2;
  d.p.GJ *= 2;
  LocalEval<11> r2;
  rod_bend_twist_eval(d.x, d.p, kGradHess, r2);
  EXPECT_EQ(r2.E, 2 * r.E);
  for (int i = 0; i < 11; ++i)
    EXPECT_EQ(r2.g[i], 2 * r.g[i]);
}

// a random stencil in a plane y = const (the 2D mode's): in-plane edges of comparable length,
// frames and twist angles as random as in 3D (the curvature reads their y components)
Config random_planar_config(std::mt19937_64& rng, bool natural_strains) {
  Config c = random_config(rng, natural_strains);
  std::uniform_real_distribution<Real> u(0.5, 2.0), w(-0.6, 0.6);
  const Real y = w(rng);
  const Vec3 x0 = vec3(w(rng), y, w(rng));
  const Vec3 x1 = x0 + vec3(u(rng) + w(rng), 0, w(rng));
  const Vec3 x2 = x1 + vec3(u(rng) + w(rng), 0, w(rng));
  c.x.set_segment(0, x0);
  c.x.set_segment(3, x1);
  c.x.set_segment(6, x2);
  const Vec3 t0 = (x1 - x0) / norm(x1 - x0), t1 = (x2 - x1) / norm(x2 - x1);
  c.p.d1_0 = test::random_normal(rng, t0);
  c.p.d1_1 = test::random_normal(rng, t1);
  c.p.ref_twist = reference_twist(c.p.d1_0, t0, c.p.d1_1, t1, 0);
  return c;
}

// The 2D mode's Hessian (in_plane: the x-z block where the stencil lies in a plane y = const)
// is the x-z block of the whole Hessian, which the tests above check against differences, to
// round-off (the same closed form summed in another order: 1e-12 of the Hessian's size), and
// zero elsewhere; energy and gradient are the whole path's, to the bit. Every energy of the
// strains: the rod's own, one coupling all three strains (the twist's terms have no x-z block)
// and the Sadowsky ribbon.
template <class Energy>
void check_in_plane(const Energy& energy, std::mt19937_64& rng, const char* what) {
  for (bool natural : {false, true}) {
    const Config c = random_planar_config(rng, natural);
    Config d = c;
    d.p.in_plane = 1;
    LocalEval<11> whole, planar;
    rod_bend_twist_eval_with(c.x, c.p, energy, kGradHess, whole);
    rod_bend_twist_eval_with(d.x, d.p, energy, kGradHess, planar);
    EXPECT_EQ(planar.E, whole.E) << what;
    for (int i = 0; i < 11; ++i)
      EXPECT_EQ(planar.g[i], whole.g[i]) << what << ", entry " << i;
    const Real scale = test::frobenius(whole.H);
    auto in_plane = [](int i) { return i < 9 && i % 3 != 1; };
    for (int i = 0; i < 11; ++i)
      for (int j = 0; j < 11; ++j) {
        if (in_plane(i) && in_plane(j)) {
          EXPECT_NEAR(planar.H(i, j), whole.H(i, j), 1e-12 * scale)
              << what << ", natural " << natural << ", entry (" << i << ", " << j << ")";
        } else {
          EXPECT_EQ(planar.H(i, j), 0) << what << ", entry (" << i << ", " << j << ")";
        }
      }
    // out of the plane (edges with a y component) the whole Hessian, to the bit
    Config e = d;
    e.x[7] += 0.1;
    LocalEval<11> off, off_whole;
    rod_bend_twist_eval_with(e.x, e.p, energy, kGradHess, off);
    e.p.in_plane = 0;
    rod_bend_twist_eval_with(e.x, e.p, energy, kGradHess, off_whole);
    for (int i = 0; i < 121; ++i)
      EXPECT_EQ(off.H.a[i], off_whole.H.a[i]) << what << ", out of the plane, entry " << i;
  }
}

TEST_P(RodBendTwistTest, InPlaneHessianIsTheWholeOnesXzBlock) {
  std::mt19937_64 rng(GetParam());
  check_in_plane(RodElasticStrainEnergy{}, rng, "rod");
  check_in_plane(CoupledStrainEnergy{}, rng, "coupled polynomial");
  check_in_plane(examples::SadowskyRibbon{0.3}, rng, "Sadowsky ribbon");
}

// the stencil's gradient at y with frames transported from the base configuration of c (as a
// step carries them from its start): its Jacobian at the base is the Hessian plus the part the
// symmetric Hessian leaves out (transport_asym, which the adjoint adds: engine/adjoint.h)
Vec<11> transported_gradient(const Config& c, const Vec<11>& y) {
  const RodBendTwist::Params q = transported_params(c, y);
  LocalEval<11> r;
  rod_bend_twist_eval(y, q, kGrad, r);
  return r.g;
}

TEST_P(RodBendTwistTest, TransportedGradientsJacobianIsHessianPlusTransportAsym) {
  std::mt19937_64 rng(GetParam());
  for (bool natural : {false, true}) {
    const Config c = random_config(rng, natural);
    LocalEval<11> r;
    Mat<11, 11> A;
    rod_bend_twist_eval_with(c.x, c.p, RodElasticStrainEnergy{}, kGradHess, r, nullptr, &A);
    const Mat<11, 11> fd =
        test::fd_jacobian<11>([&](const Vec<11>& y) { return transported_gradient(c, y); }, c.x);
    Mat<11, 11> J = r.H;
    J += A;
    EXPECT_LT(test::rel_err(J, fd), kFdRelTol) << "natural strains " << natural;
    // and the antisymmetric part is what the Hessian misses (not zero here)
    EXPECT_GT(test::rel_err(r.H, fd), 100 * kFdRelTol) << "natural strains " << natural;
  }
}

TEST_P(RodBendTwistTest, NaturalStrainSensitivityIsTheGradientsDerivative) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng, true);
  for (int s = 0; s < 3; ++s) {
    LocalEval<11> r;
    rod_bend_twist_eval_with(c.x, c.p, RodNaturalStrainSensitivity{s}, kGrad, r);
    auto grad_at = [&](Real v) {
      RodBendTwist::Params p = c.p;
      (s == 0 ? p.kappa1_bar : s == 1 ? p.kappa2_bar : p.tau_bar) += v;
      LocalEval<11> e;
      rod_bend_twist_eval(c.x, p, kGrad, e);
      return e.g;
    };
    const Real h = 1e-6;
    const Vec<11> fd = (grad_at(h) - grad_at(-h)) / (2 * h);
    EXPECT_LT(test::rel_err(r.g, fd), kFdRelTol) << "strain " << s;
  }
}

TEST(RodFrames, TransportHolonomyGradientIsTheFirstOrderHolonomy) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 10; ++trial) {
    Vec3 ta = test::random_vec3(rng);
    ta = ta / norm(ta);
    Vec3 tc = ta + 0.8 * test::random_vec3(rng);
    tc = tc / norm(tc);
    const Vec3 d = test::random_normal(rng, ta);
    const Vec3 w = test::random_vec3(rng);
    const Vec3 h = transport_holonomy_gradient(ta, tc);
    // moving the start: P(a' -> c) P(a -> a') = R_c(h . da) P(a -> c)
    auto start = [&](Real e) {
      Vec3 t = ta + e * w;
      t = t / norm(t);
      return signed_angle(parallel_transport(d, ta, tc),
                          parallel_transport(parallel_transport(d, ta, t), t, tc), tc);
    };
    // moving the end: P(a -> c') = R_c'(h . dc) P(c -> c') P(a -> c)
    auto end = [&](Real e) {
      Vec3 t = tc + e * w;
      t = t / norm(t);
      return signed_angle(parallel_transport(parallel_transport(d, ta, tc), tc, t),
                          parallel_transport(d, ta, t), t);
    };
    const Real e = 1e-6;
    const Vec3 da = w - dot(w, ta) * ta, dc = w - dot(w, tc) * tc;
    EXPECT_NEAR((start(e) - start(-e)) / (2 * e), dot(h, da), 1e-8 * norm(h) * norm(w));
    EXPECT_NEAR((end(e) - end(-e)) / (2 * e), dot(h, dc), 1e-8 * norm(h) * norm(w));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RodBendTwistTest, ::testing::Range(1, 21));

TEST(RodBendTwist, DegenerateInputStaysFinite) {
  RodBendTwist::Params p{vec3(0, 1, 0), vec3(0, 1, 0), 0, 1, 1, 1, 1, 0.1, 0.2, 0.3, 0};
  const Vec3 pts[][3] = {
      {vec3(0, 0, 0), vec3(0, 0, 0), vec3(1, 0, 0)},          // zero-length first edge
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(1 + 1e-15, 0, 0)},  // nearly zero second edge
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 0, 0)},          // folded back onto itself
      {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, 0, 0)},        // antiparallel, shorter
  };
  for (const auto& c : pts) {
    Vec<11> x;
    for (int a = 0; a < 3; ++a)
      x.set_segment(3 * a, c[a]);
    x[9] = 0.1;
    x[10] = -0.2;
    LocalEval<11> r;
    rod_bend_twist_eval(x, p, kGradHess, r);
    EXPECT_TRUE(std::isfinite(r.E));
    for (int i = 0; i < 11; ++i)
      EXPECT_TRUE(std::isfinite(r.g[i]));
    for (int i = 0; i < 121; ++i)
      EXPECT_TRUE(std::isfinite(r.H.a[i]));
    EXPECT_TRUE(r.flags & kDegenerate);
  }
  // straight, parallel edges are not degenerate: zero curvature, finite derivatives
  Vec<11> x;
  x.set_segment(0, vec3(0, 0, 0));
  x.set_segment(3, vec3(1, 0, 0));
  x.set_segment(6, vec3(2, 0, 0));
  x[9] = x[10] = 0;
  LocalEval<11> r;
  rod_bend_twist_eval(x, p, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  for (int i = 0; i < 121; ++i)
    EXPECT_TRUE(std::isfinite(r.H.a[i]));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
