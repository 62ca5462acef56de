// Finite-difference, invariance, physics and degenerate-input checks of the mid-edge normal
// bending stencil: random triangles with tau0 roughly along the in-plane edge normals (as
// n_avg x e_hat at the start of a step), both ownership signs and a non-zero natural shape.
//
// The energy depends on the DOFs only (tau0 is a frozen parameter), so the Hessian is checked
// against central differences of the stencil's own gradient.

#include "slender/stencils/shell_midedge.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

struct Config {
  Vec<12> x;
  ShellMidedge::Params p;
};

Vec3 unit(const Vec3& v) { return v / norm(v); }

Vec3 node(const Vec<12>& x, int a) { return x.segment<3>(3 * a); }

// edge k of the stencil: opposite node k
Vec3 edge(const Vec<12>& x, int k) { return node(x, (k + 2) % 3) - node(x, (k + 1) % 3); }

Vec3 tri_normal(const Vec<12>& x) {
  return unit(cross(node(x, 1) - node(x, 0), node(x, 2) - node(x, 0)));
}

Real tri_area(const Vec<12>& x) {
  return Real(0.5) * norm(cross(node(x, 1) - node(x, 0), node(x, 2) - node(x, 0)));
}

Real rel(Real a, Real b) { return std::fabs(a - b) / std::max(std::fabs(b), test::kFloor); }

Real trace(const Mat3& m) { return m(0, 0) + m(1, 1) + m(2, 2); }

Real energy_of(const Mat3& L, const ShellMidedge::Params& p) {
  const Mat3 D = L - p.Lambda_bar;
  return p.kb * p.A_bar * ((1 - p.nu) * trace(D * D) + p.nu * trace(D) * trace(D));
}

// a well-shaped random triangle: no angle below ~10 degrees, edges of order one
Vec<12> random_triangle(std::mt19937_64& rng) {
  for (;;) {
    Vec<12> x = Vec<12>::zero();
    const Vec3 x0 = test::random_vec3(rng);
    x.set_segment(0, x0);
    x.set_segment(3, x0 + test::random_vec3(rng));
    x.set_segment(6, x0 + test::random_vec3(rng));
    Real l_min = 1e9, l_max = 0;
    for (int k = 0; k < 3; ++k) {
      l_min = std::min(l_min, norm(edge(x, k)));
      l_max = std::max(l_max, norm(edge(x, k)));
    }
    if (l_min > 0.4 && 2 * tri_area(x) > 0.3 * l_max * l_max) return x;
  }
}

Config random_config(std::mt19937_64& rng) {
  std::uniform_real_distribution<Real> u(0.5, 2.0), near1(0.8, 1.2), sym(-1, 1), nu(0.0, 0.45);
  Config c;
  c.x = random_triangle(rng);
  const Vec3 n = tri_normal(c.x);
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = edge(c.x, k);
    // stored edge along or against e^k; tau0 = n_avg x e_stored ~ s (n x e_hat), tilted
    c.p.s[k] = (rng() & 1) ? 1 : -1;
    c.p.tau0[k] = c.p.s[k] * unit(cross(n, e / norm(e)) + 0.3 * test::random_vec3(rng));
    c.p.l_bar[k] = norm(e) * near1(rng);
    c.x[9 + k] = 0.3 * sym(rng);
  }
  c.p.A_bar = tri_area(c.x) * near1(rng);
  c.p.kb = u(rng);
  c.p.nu = nu(rng);
  // natural shape: the shape operator of a nearby configuration
  Vec<12> y = c.x;
  for (int i = 0; i < 9; ++i)
    y[i] += 0.1 * sym(rng);
  for (int k = 0; k < 3; ++k)
    y[9 + k] = 0.3 * sym(rng);
  c.p.Lambda_bar = Mat3::zero();
  EXPECT_EQ(shell_midedge_shape_operator(y, c.p, c.p.Lambda_bar), 0u);
  return c;
}

Real energy(const Config& c, const Vec<12>& y) {
  LocalEval<12> r;
  shell_midedge_eval(y, c.p, kEnergy, r);
  return r.E;
}

Vec<12> grad(const Config& c, const Vec<12>& y) {
  LocalEval<12> r;
  shell_midedge_eval(y, c.p, kGrad, r);
  return r.g;
}

class ShellMidedgeTest : public ::testing::TestWithParam<int> {};

TEST_P(ShellMidedgeTest, GradientMatchesCentralDifferences) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  const Vec<12> fd = test::fd_gradient<12>([&](const Vec<12>& y) { return energy(c, y); }, c.x);
  EXPECT_LT(test::rel_err(grad(c, c.x), fd), kFdRelTol);
}

TEST_P(ShellMidedgeTest, HessianMatchesGradientDifferences) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  const Mat<12, 12> fd = test::fd_jacobian<12>([&](const Vec<12>& y) { return grad(c, y); }, c.x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
}

TEST_P(ShellMidedgeTest, Tau0DerivativeMatchesCentralDifferences) {
  // lambda . dg/d(tau0[k]) (the adjoint's term) against central differences of lambda . g in
  // each tau0[k]'s three components, lambda random over the positions and xi
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  Vec<12> lam;
  for (int i = 0; i < 12; ++i)
    lam[i] = std::uniform_real_distribution<Real>(-1, 1)(rng);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  const Vec<12> Hl = r.H * lam;
  Vec3 d[3];
  Real dk[3];
  ASSERT_TRUE(shell_midedge_adjoint_terms(c.x, c.p, r.g, Hl, lam, d, dk));
  for (int k = 0; k < 3; ++k) {
    const Vec3 fd = test::fd_gradient<3>(
        [&](const Vec3& t) {
          Config ct = c;
          ct.p.tau0[k] = t;
          return dot(grad(ct, c.x), lam);
        },
        c.p.tau0[k]);
    EXPECT_LT(test::rel_err(d[k], fd), kFdRelTol) << "edge " << k;
  }
}

TEST_P(ShellMidedgeTest, NaturalCurvatureDerivativeMatchesCentralDifferences) {
  // lambda . dg/d(kappa_bar[k]) (the adjoint's term for the actuated natural curvature) against
  // central differences of lambda . g in each kappa_bar[k]
  std::mt19937_64 rng(GetParam());
  Config c = random_config(rng);
  for (int k = 0; k < 3; ++k)
    c.p.kappa_bar[k] = std::uniform_real_distribution<Real>(-1, 1)(rng);
  Vec<12> lam;
  for (int i = 0; i < 12; ++i)
    lam[i] = std::uniform_real_distribution<Real>(-1, 1)(rng);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  Vec3 dt[3];
  Real d[3];
  ASSERT_TRUE(shell_midedge_adjoint_terms(c.x, c.p, r.g, r.H * lam, lam, dt, d));
  for (int k = 0; k < 3; ++k) {
    auto at = [&](Real h) {
      Config ck = c;
      ck.p.kappa_bar[k] += h;
      return dot(grad(ck, c.x), lam);
    };
    const Real h = 1e-5, fd = (at(h) - at(-h)) / (2 * h);
    EXPECT_LT(rel(d[k], fd), kFdRelTol) << "edge " << k;
  }
}

TEST_P(ShellMidedgeTest, HessianIsSymmetric) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-13);
}

TEST_P(ShellMidedgeTest, EnergyMatchesShapeOperator) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  LocalEval<12> r;
  Mat3 L_eval, L;
  shell_midedge_eval(c.x, c.p, kEnergy, r, &L_eval);
  EXPECT_EQ(shell_midedge_shape_operator(c.x, c.p, L), 0u);
  EXPECT_EQ(r.flags, 0u);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(L.a[i], L_eval.a[i]);
  // symmetric, and the normal is in its kernel
  EXPECT_LT(test::rel_err(L, L.transpose()), 1e-15);
  const Vec3 Ln = L * tri_normal(c.x);
  EXPECT_LT(norm(Ln), 1e-14 * test::frobenius(L));
  EXPECT_NEAR(r.E, energy_of(L, c.p), 1e-13 * r.E);
}

// Lambda is linear in xi, so Appendix A's xi derivatives are exact: with
// c^i = 1 / (A_bar l_bar^i t_hat^i . tau^i) and tau^i = s^i tau0^i,
//   dE/dxi^i = kb A_bar c^i s^i [2 (1 - nu) t^iT D t^i + 2 nu |t^i|^2 Tr D],
//   d2E/dxi^i dxi^j = kb A_bar c^i c^j s^i s^j [2 (1 - nu) (t^i . t^j)^2 + 2 nu |t^i|^2 |t^j|^2]
TEST_P(ShellMidedgeTest, XiDerivativesMatchAppendixA) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  LocalEval<12> r;
  Mat3 L;
  shell_midedge_eval(c.x, c.p, kGradHess, r, &L);
  const Mat3 D = L - c.p.Lambda_bar;
  const Vec3 n = tri_normal(c.x);
  Vec3 t[3];
  Real ci[3];
  for (int i = 0; i < 3; ++i) {
    t[i] = cross(edge(c.x, i), n);
    ci[i] = 1 / (c.p.A_bar * c.p.l_bar[i] * dot(unit(t[i]), c.p.s[i] * c.p.tau0[i]));
  }
  const Real kA = c.p.kb * c.p.A_bar, nu = c.p.nu;
  for (int i = 0; i < 3; ++i) {
    const Real gi = kA * ci[i] * c.p.s[i] *
                    (2 * (1 - nu) * dot(t[i], D * t[i]) + 2 * nu * dot(t[i], t[i]) * trace(D));
    EXPECT_NEAR(r.g[9 + i], gi, 1e-12 * norm(r.g));
    for (int j = 0; j < 3; ++j) {
      const Real tt = dot(t[i], t[j]);
      const Real hij = kA * ci[i] * ci[j] * c.p.s[i] * c.p.s[j] *
                       (2 * (1 - nu) * tt * tt + 2 * nu * dot(t[i], t[i]) * dot(t[j], t[j]));
      EXPECT_NEAR(r.H(9 + i, 9 + j), hij, 1e-12 * test::frobenius(r.H));
    }
  }
}

TEST_P(ShellMidedgeTest, RestStateHasZeroEnergyAndGradient) {
  std::mt19937_64 rng(GetParam());
  Config c = random_config(rng);
  ASSERT_EQ(shell_midedge_shape_operator(c.x, c.p, c.p.Lambda_bar), 0u);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  EXPECT_LT(r.E, 1e-28);
  EXPECT_LT(norm(r.g), 1e-13);
  // at rest only the Gauss-Newton part <C dLambda, dLambda> is left: positive semi-definite
  std::uniform_real_distribution<Real> sym(-1, 1);
  for (int trial = 0; trial < 10; ++trial) {
    Vec<12> v;
    for (int i = 0; i < 12; ++i)
      v[i] = sym(rng);
    EXPECT_GT(dot(v, r.H * v), -1e-12 * test::frobenius(r.H) * dot(v, v));
  }
}

TEST_P(ShellMidedgeTest, RigidTranslationInvariance) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  // forces on the nodes sum to zero, and a translation is in the Hessian's null space
  const Vec3 f = node(r.g, 0) + node(r.g, 1) + node(r.g, 2);
  EXPECT_LT(norm(f), 1e-12 * norm(r.g));
  for (int axis = 0; axis < 3; ++axis) {
    Vec<12> v = Vec<12>::zero();
    for (int a = 0; a < 3; ++a)
      v[3 * a + axis] = 1;
    EXPECT_LT(norm(r.H * v), 1e-12 * test::frobenius(r.H));
  }
  // and the energy does not change
  Vec<12> y = c.x;
  const Vec3 shift = test::random_vec3(rng, 5);
  for (int a = 0; a < 3; ++a)
    y.add_segment(3 * a, shift);
  EXPECT_NEAR(energy(c, y), r.E, 1e-12 * r.E);
}

// An edge stored the other way round has s, tau0 and xi negated (xi = n^m . tau0): energy,
// gradient and Hessian must agree with the chain rule through xi_stored = -xi.
TEST_P(ShellMidedgeTest, StoredEdgeOrientationIsImmaterial) {
  std::mt19937_64 rng(GetParam());
  const Config c = random_config(rng);
  LocalEval<12> base;
  shell_midedge_eval(c.x, c.p, kGradHess, base);
  for (int flips = 1; flips < 8; ++flips) {
    Config f = c;
    Real sg[12];
    for (int i = 0; i < 12; ++i)
      sg[i] = 1;
    for (int k = 0; k < 3; ++k) {
      if (!(flips & (1 << k))) continue;
      f.p.s[k] = -f.p.s[k];
      f.p.tau0[k] = -1.0 * f.p.tau0[k];
      f.x[9 + k] = -f.x[9 + k];
      sg[9 + k] = -1;
    }
    LocalEval<12> r;
    shell_midedge_eval(f.x, f.p, kGradHess, r);
    EXPECT_NEAR(r.E, base.E, 1e-13 * base.E);
    for (int i = 0; i < 12; ++i)
      EXPECT_NEAR(r.g[i], sg[i] * base.g[i], 1e-12 * norm(base.g));
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 12; ++j)
        EXPECT_NEAR(r.H(i, j), sg[i] * sg[j] * base.H(i, j), 1e-12 * test::frobenius(base.H));
  }
  // s alone only orients tau0 inside the stencil (s xi - n . s tau0 over t_hat . s tau0)
  Config f = c;
  f.p.s[1] = -f.p.s[1];
  LocalEval<12> r;
  shell_midedge_eval(f.x, f.p, kGrad, r);
  EXPECT_NEAR(r.E, base.E, 1e-13 * base.E);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellMidedgeTest, ::testing::Range(1, 21));

// ---- actuation: the natural curvature kappa_bar that turns with the triangle ----------------

Config actuated_config(std::mt19937_64& rng) {
  Config c = random_config(rng);
  std::uniform_real_distribution<Real> sym(-1, 1);
  for (int k = 0; k < 3; ++k)
    c.p.kappa_bar[k] = 2 * sym(rng);
  return c;
}

// a rotation by `angle` about the unit axis a (Rodrigues)
Mat3 rotation(const Vec3& a, Real angle) {
  const Mat3 K = skew(a);
  return Mat3::identity() + std::sin(angle) * K + (1 - std::cos(angle)) * (K * K);
}

class ShellMidedgeActuationTest : public ::testing::TestWithParam<int> {};

// the shift B^k -> B^k - kappa_bar / l_bar^2 keeps the derivatives exact
TEST_P(ShellMidedgeActuationTest, DerivativesMatchCentralDifferences) {
  std::mt19937_64 rng(GetParam());
  const Config c = actuated_config(rng);
  LocalEval<12> r;
  shell_midedge_eval(c.x, c.p, kGradHess, r);
  const Vec<12> fd = test::fd_gradient<12>([&](const Vec<12>& y) { return energy(c, y); }, c.x);
  EXPECT_LT(test::rel_err(r.g, fd), kFdRelTol);
  const Mat<12, 12> fh = test::fd_jacobian<12>([&](const Vec<12>& y) { return grad(c, y); }, c.x);
  EXPECT_LT(test::rel_err(r.H, fh), kFdRelTol);
}

// with Lambda_bar = 0 the energy compares Lambda with Lambda_act, both built from the current
// edges: turning the triangle (and its frozen tau0) leaves it unchanged, where a natural
// curvature fixed in the world frame would not
TEST_P(ShellMidedgeActuationTest, NaturalCurvatureTurnsWithTheTriangle) {
  std::mt19937_64 rng(GetParam());
  Config c = actuated_config(rng);
  c.p.Lambda_bar = Mat3::zero();
  const Real e0 = energy(c, c.x);
  const Mat3 R = rotation(unit(test::random_vec3(rng)), 1.3);
  Config t = c;
  for (int a = 0; a < 3; ++a) {
    t.x.set_segment(3 * a, R * node(c.x, a));
    t.p.tau0[a] = R * c.p.tau0[a];
  }
  EXPECT_NEAR(energy(t, t.x), e0, 1e-12 * e0);
  // and the actuation is felt: the energy differs from the unactuated one
  Config none = c;
  for (int k = 0; k < 3; ++k)
    none.p.kappa_bar[k] = 0;
  EXPECT_GT(std::fabs(energy(none, c.x) - e0), 1e-3 * e0);
}

// shell_midedge_curvature_components: sum_k c_k t_hat^k t_hat^kT rebuilds P K P, and a flat
// triangle whose mid-edge normals are its normal (Lambda = 0) reads Lambda - Lambda_act = -P K P
TEST_P(ShellMidedgeActuationTest, ComponentsRebuildTheCurvatureTensor) {
  std::mt19937_64 rng(GetParam());
  Config c = random_config(rng);
  std::uniform_real_distribution<Real> sym(-1, 1);
  Mat3 K;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j)
      K(i, j) = K(j, i) = 3 * sym(rng);
  Vec<9> x9;
  for (int i = 0; i < 9; ++i)
    x9[i] = c.x[i];
  Real comp[3];
  ASSERT_TRUE(shell_midedge_curvature_components(x9, K, comp));
  const Vec3 n = tri_normal(c.x);
  const Mat3 P = Mat3::identity() - outer(n, n);
  const Mat3 PKP = P * K * P;
  Mat3 sum = Mat3::zero();
  for (int k = 0; k < 3; ++k) {
    const Vec3 th = unit(cross(edge(c.x, k), n));
    sum += comp[k] * outer(th, th);
  }
  EXPECT_LT(test::rel_err(sum, PKP), 1e-12);
  // at rest lengths, xi making a = s xi - n . tau vanish (mid-edge normals along n)
  for (int k = 0; k < 3; ++k) {
    c.p.l_bar[k] = norm(edge(c.x, k));
    c.x[9 + k] = c.p.s[k] * dot(n, c.p.s[k] * c.p.tau0[k]);
    c.p.kappa_bar[k] = comp[k];
  }
  Mat3 L;
  ASSERT_EQ(shell_midedge_shape_operator(c.x, c.p, L), 0u);
  EXPECT_LT(test::rel_err(L, -1.0 * PKP), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellMidedgeActuationTest, ::testing::Range(1, 11));

// ---- physics: a flat triangle in the tangent plane of a curved surface ----------------------
//
// The triangle's centroid p0 lies on the surface, its normal is the surface normal n0 there
// (outward), and xi^k = n^{m,k} . tau0[k] with n^{m,k} the surface normal whose normal line
// passes through the midpoint of edge k. By the divergence theorem,
//   Tr(Lambda) = 1/A sum_k (n^{m,k} . t_hat^k) |e^k|
// is the divergence of the surface normal for any triangle shape: the mean curvature is
// consistent. Only one normal component per edge enters, so the full tensor is not: on an
// equilateral triangle the three t_hat^k are 120 degrees apart and eq. (19) returns
//   Lambda = G / 2 + Tr(G) P / 4   (G the surface's shape operator, P the in-plane projector),
// exact for a sphere (G = P / R) but with half the deviatoric part for a cylinder
// (G = u u^T / R gives eigenvalues 3/(4R) and 1/(4R)). These tests pin both facts; the
// sampling errors are O((h/R)^2).

struct Surface {
  bool sphere;  // else a cylinder with axis along u2
  Real R;       // radius [m]
  Vec3 center;  // sphere centre, or a point on the cylinder's axis
  Vec3 axis;
  Vec3 normal_through(const Vec3& m) const {
    Vec3 r = m - center;
    if (!sphere) r -= dot(r, axis) * axis;
    return unit(r);
  }
};

struct TangentTriangle {
  Vec3 p0, n0, u1, u2;  // centroid, outward normal, in-plane basis with u1 x u2 = n0
  Vec<12> x;
};

// triangle with 2D vertex coordinates q (counter-clockwise about n0), centred at p0
TangentTriangle tangent_triangle(const Real q[3][2], Real scale) {
  TangentTriangle tt;
  tt.p0 = vec3(0.3, -0.2, 0.5);
  tt.n0 = unit(vec3(0.2, 0.3, 1.0));
  tt.u1 = unit(cross(vec3(0, 1, 0), tt.n0));
  tt.u2 = cross(tt.n0, tt.u1);
  const Real cx = (q[0][0] + q[1][0] + q[2][0]) / 3, cy = (q[0][1] + q[1][1] + q[2][1]) / 3;
  tt.x = Vec<12>::zero();
  for (int a = 0; a < 3; ++a)
    tt.x.set_segment(3 * a, tt.p0 + scale * ((q[a][0] - cx) * tt.u1 + (q[a][1] - cy) * tt.u2));
  return tt;
}

Surface surface_at(const TangentTriangle& tt, bool sphere, Real R) {
  return Surface{sphere, R, tt.p0 - R * tt.n0, tt.u2};
}

// params and xi sampled from the surface; tau0 from the triangle's normal or, as n_avg would
// give, from the surface normal at the edge's midpoint
Config sampled_config(const TangentTriangle& tt, const Surface& s, bool tau_from_surface) {
  Config c;
  c.x = tt.x;
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = edge(c.x, k);
    const Vec3 mid = Real(0.5) * (node(c.x, (k + 1) % 3) + node(c.x, (k + 2) % 3));
    const Vec3 nm = s.normal_through(mid);
    c.p.s[k] = (k == 1) ? -1 : 1;
    c.p.tau0[k] = c.p.s[k] * unit(cross(tau_from_surface ? nm : tt.n0, e));
    c.p.l_bar[k] = norm(e);
    c.x[9 + k] = dot(nm, c.p.tau0[k]);
  }
  c.p.A_bar = tri_area(c.x);
  c.p.Lambda_bar = Mat3::zero();
  c.p.kb = 0.7;
  c.p.nu = 0.3;
  return c;
}

/// triangle size over radius in the physics tests
constexpr Real kHOverR = 1e-2;
/// the sampled operator's errors (curvature relative to 1/R, energy relative) are O((h/R)^2),
/// measured below 1e-5 here; round-off is far smaller at this h/R
constexpr Real kCurvRelTol = kHOverR * kHOverR;

const Real kEquilateral[3][2] = {{0, 0}, {1, 0}, {0.5, 0.86602540378443865}};

TEST(ShellMidedgePhysics, SphereOnEquilateralTriangle) {
  const Real R = 2.0;
  const TangentTriangle tt = tangent_triangle(kEquilateral, kHOverR * R);
  for (bool tau_from_surface : {false, true}) {
    const Config c = sampled_config(tt, surface_at(tt, true, R), tau_from_surface);
    LocalEval<12> r;
    Mat3 L;
    shell_midedge_eval(c.x, c.p, kEnergy, r, &L);
    ASSERT_EQ(r.flags, 0u);
    // Lambda = P / R: both in-plane directions bend by 1 / R, convex side along n
    const Mat3 P = Mat3::identity() - outer(tt.n0, tt.n0);
    EXPECT_LT(test::frobenius<3>(R * L - P), kCurvRelTol) << tau_from_surface;
    const Real E = c.p.kb * c.p.A_bar * (2 * (1 - c.p.nu) + 4 * c.p.nu) / (R * R);
    EXPECT_NEAR(r.E, E, kCurvRelTol * E) << tau_from_surface;
  }
}

TEST(ShellMidedgePhysics, CylinderOnEquilateralTriangle) {
  const Real R = 0.5;
  const TangentTriangle tt = tangent_triangle(kEquilateral, kHOverR * R);
  for (bool tau_from_surface : {false, true}) {
    const Config c = sampled_config(tt, surface_at(tt, false, R), tau_from_surface);
    LocalEval<12> r;
    Mat3 L;
    shell_midedge_eval(c.x, c.p, kEnergy, r, &L);
    ASSERT_EQ(r.flags, 0u);
    // mean curvature exact; eigenvalues 3/(4R) across the axis and 1/(4R) along it
    EXPECT_NEAR(R * trace(L), 1, kCurvRelTol);
    EXPECT_NEAR(R * dot(tt.u1, L * tt.u1), 0.75, kCurvRelTol);
    EXPECT_NEAR(R * dot(tt.u2, L * tt.u2), 0.25, kCurvRelTol);
    EXPECT_NEAR(R * dot(tt.u1, L * tt.u2), 0, kCurvRelTol);
    const Real E = c.p.kb * c.p.A_bar * ((1 - c.p.nu) * 0.625 + c.p.nu) / (R * R);
    EXPECT_NEAR(r.E, E, kCurvRelTol * E) << tau_from_surface;
  }
}

TEST(ShellMidedgePhysics, MeanCurvatureOnAnyTriangle) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(0, 1);
  const Real R = 1.5;
  for (int trial = 0; trial < 20; ++trial) {
    Real q[3][2];
    for (;;) {
      for (auto& v : q) {
        v[0] = u(rng);
        v[1] = u(rng);
      }
      const Real cr =
          (q[1][0] - q[0][0]) * (q[2][1] - q[0][1]) - (q[1][1] - q[0][1]) * (q[2][0] - q[0][0]);
      if (cr > 0.1) break;  // counter-clockwise and not a sliver
    }
    const TangentTriangle tt = tangent_triangle(q, kHOverR * R);
    for (bool sphere : {true, false}) {
      const Config c = sampled_config(tt, surface_at(tt, sphere, R), trial % 2 == 0);
      Mat3 L;
      ASSERT_EQ(shell_midedge_shape_operator(c.x, c.p, L), 0u);
      EXPECT_NEAR(R * trace(L), sphere ? 2 : 1, kCurvRelTol) << trial << " " << sphere;
    }
  }
}

// xi chosen so that eq. (19) represents a cylinder of radius R exactly (Lambda is affine in xi):
// the energy is kb A [(1 - nu) + nu] / R^2
TEST(ShellMidedgePhysics, UniformCylindricalCurvatureEnergy) {
  const Real R = 0.8;
  const Real q[3][2] = {{0, 0}, {1, 0.2}, {0.3, 0.9}};
  const TangentTriangle tt = tangent_triangle(q, 0.1);
  Config c = sampled_config(tt, surface_at(tt, false, R), false);
  const Mat3 target = (1 / R) * outer(tt.u1, tt.u1);

  // in-plane components (u1 u1, u1 u2, u2 u2) of Lambda(xi) = Lambda(0) + sum_k xi_k M_k
  auto comps = [&](const Mat3& m) {
    return Vec3{{dot(tt.u1, m * tt.u1), dot(tt.u1, m * tt.u2), dot(tt.u2, m * tt.u2)}};
  };
  Vec<12> y = c.x;
  for (int k = 0; k < 3; ++k)
    y[9 + k] = 0;
  Mat3 L0, Lk;
  ASSERT_EQ(shell_midedge_shape_operator(y, c.p, L0), 0u);
  Mat3 A;  // columns: d(comps)/d xi_k
  for (int k = 0; k < 3; ++k) {
    Vec<12> yk = y;
    yk[9 + k] = 1;
    ASSERT_EQ(shell_midedge_shape_operator(yk, c.p, Lk), 0u);
    const Vec3 col = comps(Lk) - comps(L0);
    for (int i = 0; i < 3; ++i)
      A(i, k) = col[i];
  }
  const Vec3 rhs = comps(target) - comps(L0);
  // Cramer's rule
  auto det3 = [](const Mat3& m) {
    return dot(vec3(m(0, 0), m(1, 0), m(2, 0)),
               cross(vec3(m(0, 1), m(1, 1), m(2, 1)), vec3(m(0, 2), m(1, 2), m(2, 2))));
  };
  const Real det = det3(A);
  ASSERT_GT(std::fabs(det), 1e-12);
  for (int k = 0; k < 3; ++k) {
    Mat3 Ak = A;
    for (int i = 0; i < 3; ++i)
      Ak(i, k) = rhs[i];
    c.x[9 + k] = det3(Ak) / det;
  }

  LocalEval<12> r;
  Mat3 L;
  shell_midedge_eval(c.x, c.p, kEnergy, r, &L);
  EXPECT_LT(test::frobenius<3>(R * (L - target)), 1e-12);
  // 1/R across the axis, 0 along it and along the normal
  EXPECT_LT(norm(R * (L * tt.u1) - tt.u1), 1e-12);
  EXPECT_LT(norm(L * tt.u2) * R, 1e-12);
  const Real E = c.p.kb * c.p.A_bar * ((1 - c.p.nu) + c.p.nu) / (R * R);
  EXPECT_NEAR(r.E, E, 1e-12 * E);
}

TEST(ShellMidedge, DegenerateInputStaysFinite) {
  ShellMidedge::Params p;
  for (int k = 0; k < 3; ++k) {
    p.s[k] = 1;
    p.l_bar[k] = 1;
  }
  p.A_bar = 0.5;
  p.Lambda_bar = Mat3::identity();
  p.kb = 1;
  p.nu = 0.3;
  // in-plane, outward-ish tau0 of the triangle (0,0,0) (1,0,0) (0,1,0)
  const Vec3 tau_ok[3] = {unit(vec3(-1, -1, 0)), vec3(1, 0, 0), vec3(0, 1, 0)};
  struct Case {
    Vec3 x[3];
    bool tau_along_normal;
  };
  const Case cases[] = {
      {{vec3(0, 0, 0), vec3(0, 0, 0), vec3(0, 1, 0)}, false},          // zero-length edge
      {{vec3(0, 0, 0), vec3(1, 0, 0), vec3(1 + 1e-15, 0, 0)}, false},  // nearly zero edge
      {{vec3(0, 0, 0), vec3(1, 0, 0), vec3(2, 0, 0)}, false},          // collinear nodes
      {{vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, 1e-13, 0)}, false},    // area ~ 1e-13
      {{vec3(0, 0, 0), vec3(0, 0, 0), vec3(0, 0, 0)}, false},          // a point
      {{vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0)}, true},           // t_hat . tau0 = 0
  };
  for (const auto& cs : cases) {
    Vec<12> x;
    for (int a = 0; a < 3; ++a)
      x.set_segment(3 * a, cs.x[a]);
    x[9] = 0.1;
    x[10] = -0.2;
    x[11] = 0.05;
    for (int k = 0; k < 3; ++k)
      p.tau0[k] = tau_ok[k];
    if (cs.tau_along_normal) p.tau0[0] = vec3(0, 0, 1);
    LocalEval<12> r;
    Mat3 L;
    shell_midedge_eval(x, p, kGradHess, r, &L);
    EXPECT_TRUE(std::isfinite(r.E));
    for (int i = 0; i < 12; ++i)
      EXPECT_TRUE(std::isfinite(r.g[i]));
    for (int i = 0; i < 144; ++i)
      EXPECT_TRUE(std::isfinite(r.H.a[i]));
    EXPECT_TRUE(r.flags & kDegenerate);
    EXPECT_EQ(r.E, 0);
    EXPECT_EQ(shell_midedge_shape_operator(x, p, L), unsigned(kDegenerate));
    for (int i = 0; i < 9; ++i)
      EXPECT_EQ(L.a[i], 0);
  }
  // a thin but valid triangle is not degenerate
  Vec<12> x;
  x.set_segment(0, vec3(0, 0, 0));
  x.set_segment(3, vec3(1, 0, 0));
  x.set_segment(6, vec3(0.5, 1e-3, 0));
  x[9] = x[10] = x[11] = 0;
  for (int k = 0; k < 3; ++k)
    p.tau0[k] = unit(cross(vec3(0, 0, 1), edge(x, k)));
  LocalEval<12> r;
  shell_midedge_eval(x, p, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  for (int i = 0; i < 144; ++i)
    EXPECT_TRUE(std::isfinite(r.H.a[i]));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
