// IMC contact energy (seed 000 eqs. 21-22): the scalar penalty and its junctions, finite-difference
// checks of the three pair stencils, rigid-motion invariance, range cut-off, the repulsion of
// parallel and crossing edges, and degenerate input. Pair friction (eq. 23): its Jacobian against
// central differences of the force for every contact type, Coulomb's law in magnitude and
// direction, action and reaction.

#include "slender/stencils/contact_imc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

/// the exact size of eq. (21)'s jumps, from softplus(15) = 15 + log1p(exp(-15)): at
/// Delta = d - delta the softplus piece exceeds the quadratic one by 4.0787e-8 (relative), and
/// at Delta = d + delta the softplus piece is 4.1589e-16 k_c delta^2 (E), -1.2477e-14 k_c delta
/// (E') and 3.7430e-13 k_c (E'') where the energy is cut off
constexpr Real kLowerJunctionGap = 4.0787e-8;
constexpr Real kCutoffE = 4.159e-16, kCutoffE1 = 1.248e-14, kCutoffE2 = 3.744e-13;

Real uniform(std::mt19937_64& rng, Real lo, Real hi) {
  return std::uniform_real_distribution<Real>(lo, hi)(rng);
}

Real rel(Real a, Real b) { return std::fabs(a - b) / std::max(std::fabs(b), test::kFloor); }

Vec<12> pack(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  Vec<12> x;
  x.set_segment(0, a);
  x.set_segment(3, b);
  x.set_segment(6, c);
  x.set_segment(9, d);
  return x;
}

template <int N>
bool all_finite(const LocalEval<N>& e) {
  if (!std::isfinite(e.E)) return false;
  for (int i = 0; i < N; ++i)
    if (!std::isfinite(e.g[i])) return false;
  for (int i = 0; i < N * N; ++i)
    if (!std::isfinite(e.H.a[i])) return false;
  return true;
}

template <int N>
bool all_zero(const LocalEval<N>& e) {
  if (e.E != 0) return false;
  for (int i = 0; i < N; ++i)
    if (e.g[i] != 0) return false;
  for (int i = 0; i < N * N; ++i)
    if (e.H.a[i] != 0) return false;
  return true;
}

// poison g and H so that a test sees whether the stencil wrote them
template <int N>
void poison(LocalEval<N>& e) {
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  e.E = nan;
  for (int i = 0; i < N; ++i)
    e.g[i] = nan;
  for (int i = 0; i < N * N; ++i)
    e.H.a[i] = nan;
  e.flags = ~0u;
}

// ---------------------------------------------------------------------------------------------
// the three stencils behind one interface

enum class Prim { kEdgeEdge, kPointTriangle, kEdgeTriangle };

template <int N>
struct Stencil;

template <>
struct Stencil<12> {
  Prim prim;
  LocalEval<12> eval(const Vec<12>& x,
                     const ImcParams& p,
                     unsigned want = kGradHess,
                     ContactDistance* info = nullptr,
                     const ImcFriction* fr = nullptr) const {
    LocalEval<12> out;
    poison(out);
    if (prim == Prim::kEdgeEdge) {
      imc_edge_edge_eval(x, p, want, out, info, fr);
    } else {
      imc_point_triangle_eval(x, p, want, out, info, fr);
    }
    return out;
  }
  ContactDistance distance(const Vec<12>& x, int* pair = nullptr) const {
    ContactDistance d;
    if (pair) *pair = 0;
    if (prim == Prim::kEdgeEdge) {
      edge_edge_distance(x, kEnergy, d, nullptr, nullptr);
    } else {
      point_triangle_distance(x, kEnergy, d, nullptr, nullptr);
    }
    return d;
  }
};

template <>
struct Stencil<15> {
  Prim prim;
  LocalEval<15> eval(const Vec<15>& x,
                     const ImcParams& p,
                     unsigned want = kGradHess,
                     ContactDistance* info = nullptr,
                     const ImcFriction* fr = nullptr) const {
    LocalEval<15> out;
    poison(out);
    imc_edge_triangle_eval(x, p, want, out, info, fr);
    return out;
  }
  ContactDistance distance(const Vec<15>& x, int* pair = nullptr) const {
    ContactDistance d;
    int q;
    edge_triangle_distance(x, kEnergy, d, q, nullptr, nullptr);
    if (pair) *pair = q;
    return d;
  }
};

// ---------------------------------------------------------------------------------------------
// random configurations: well inside one closest-feature type, Delta >= 0.05

Vec<12> random_edge_edge(std::mt19937_64& rng, int kind) {
  const Vec3 a0 = test::random_vec3(rng), a1 = test::random_vec3(rng);
  if (kind % 2 == 0) return pack(a0, a1, test::random_vec3(rng), test::random_vec3(rng));
  // B passes at height h over a point of A's line
  const Vec3 t = (a1 - a0) / norm(a1 - a0);
  const Vec3 nrm = test::random_normal(rng, t);
  const Vec3 dir = test::random_normal(rng, nrm);
  const Vec3 c = a0 + uniform(rng, -0.2, 1.2) * (a1 - a0) + uniform(rng, 0.05, 0.6) * nrm;
  const Real s = uniform(rng, -0.2, 1.2), l = uniform(rng, 0.3, 1.5);
  return pack(a0, a1, c - s * l * dir, c + (1 - s) * l * dir);
}

Vec<12> random_point_triangle(std::mt19937_64& rng, int kind) {
  const Vec3 t0 = test::random_vec3(rng), t1 = test::random_vec3(rng), t2 = test::random_vec3(rng);
  if (kind % 2 == 0) return pack(test::random_vec3(rng), t0, t1, t2);
  // over a point of the triangle's plane, maybe outside the triangle, on either side
  const Vec3 n = cross(t1 - t0, t2 - t0);
  const Real h = uniform(rng, 0.05, 0.6) * (kind % 4 == 1 ? 1 : -1);
  const Vec3 q = t0 + uniform(rng, -0.3, 1.1) * (t1 - t0) + uniform(rng, -0.3, 1.1) * (t2 - t0);
  return pack(q + (h / norm(n)) * n, t0, t1, t2);
}

Vec<15> random_edge_triangle(std::mt19937_64& rng, int kind) {
  Vec<15> x;
  for (int k = 0; k < 5; ++k)
    x.set_segment(3 * k, test::random_vec3(rng));
  if (kind % 2 == 0) return x;
  // the edge near the triangle
  const Vec3 t0 = x.segment<3>(6), e1 = x.segment<3>(9) - t0, e2 = x.segment<3>(12) - t0;
  for (int k = 0; k < 2; ++k) {
    const Real b1 = uniform(rng, 0, 1), b2 = uniform(rng, 0, 1) * (1 - b1);
    x.set_segment(3 * k, t0 + b1 * e1 + b2 * e2 + test::random_vec3(rng, 0.4));
  }
  return x;
}

Real edge_sine(const Vec3& e1, const Vec3& e2) {
  return norm(cross(e1, e2)) / (norm(e1) * norm(e2));
}

// no parallel edges, no slivers: the distance's Hessian stays O(1)
bool well_shaped(const Vec<12>& x, Prim prim) {
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3), x2 = x.segment<3>(6);
  const Vec3 x3 = x.segment<3>(9);
  if (prim == Prim::kEdgeEdge) return edge_sine(x1 - x0, x3 - x2) > 0.05;
  const Real lmax = std::max({squared_norm(x2 - x1), squared_norm(x3 - x2), squared_norm(x1 - x3)});
  return norm(cross(x2 - x1, x3 - x1)) > 0.1 * lmax;
}
bool well_shaped(const Vec<15>& x, Prim) {
  const Vec3 a0 = x.segment<3>(0), a1 = x.segment<3>(3);
  const Vec3 t[3] = {x.segment<3>(6), x.segment<3>(9), x.segment<3>(12)};
  const Real lmax =
      std::max({squared_norm(t[1] - t[0]), squared_norm(t[2] - t[1]), squared_norm(t[0] - t[2])});
  if (!(norm(cross(t[1] - t[0], t[2] - t[0])) > 0.1 * lmax)) return false;
  for (int q = 0; q < 3; ++q)
    if (!(edge_sine(a1 - a0, t[(q + 1) % 3] - t[q]) > 0.05)) return false;
  return true;
}

// the same closest features (and sub-pair) at x and at every x +- margin e_i
template <int N>
bool features_stable(const Stencil<N>& s, const Vec<N>& x, Real margin) {
  int pair0;
  const ContactDistance d0 = s.distance(x, &pair0);
  for (int i = 0; i < N; ++i)
    for (Real sgn : {-1.0, 1.0}) {
      Vec<N> y = x;
      y[i] += sgn * margin;
      int pair;
      const ContactDistance d = s.distance(y, &pair);
      if (d.a != d0.a || d.b != d0.b || pair != pair0 || d.flags != d0.flags) return false;
    }
  return true;
}

template <int N>
Vec<N> random_config(std::mt19937_64& rng, Prim prim, int kind);
template <>
Vec<12> random_config<12>(std::mt19937_64& rng, Prim prim, int kind) {
  return prim == Prim::kEdgeEdge ? random_edge_edge(rng, kind) : random_point_triangle(rng, kind);
}
template <>
Vec<15> random_config<15>(std::mt19937_64& rng, Prim, int kind) {
  return random_edge_triangle(rng, kind);
}

/// a random sample of the given closest-feature type (any type for edge-triangle) and IMC
/// parameters that put its Delta in the contact range: d = Delta + tau delta with tau in
/// (-0.7, 2), i.e. from the softplus tail (Delta = d + 0.7 delta) to deep contact
template <int N>
bool random_sample(std::mt19937_64& rng, const Stencil<N>& s, int type, Vec<N>& x, ImcParams& p) {
  for (int tries = 0; tries < 20000; ++tries) {
    x = random_config<N>(rng, s.prim, tries);
    const ContactDistance d = s.distance(x);
    if ((type >= 0 && int(d.type) != type) || d.flags != 0 || d.delta < 0.05) continue;
    if (!well_shaped(x, s.prim) || !features_stable(s, x, 1e-3)) continue;
    p.k_c = uniform(rng, 1, 100);
    p.delta = uniform(rng, 0.3, 1) * d.delta;
    p.d = d.delta + uniform(rng, -0.7, 2) * p.delta;
    return true;
  }
  return false;
}

// samples of every closest-feature type of the 12-DOF stencils and of the edge-triangle
// stencil, three of each, for one seed
template <class F12, class F15>
void for_each_sample(int seed, const F12& f12, const F15& f15) {
  std::mt19937_64 rng(7000 + seed);
  struct Case {
    Prim prim;
    ContactType type;
  };
  const Case cases[] = {{Prim::kEdgeEdge, ContactType::kPointPoint},
                        {Prim::kEdgeEdge, ContactType::kPointEdge},
                        {Prim::kEdgeEdge, ContactType::kEdgeEdge},
                        {Prim::kPointTriangle, ContactType::kPointPoint},
                        {Prim::kPointTriangle, ContactType::kPointEdge},
                        {Prim::kPointTriangle, ContactType::kPointTriangle}};
  for (const Case& c : cases)
    for (int rep = 0; rep < 3; ++rep) {
      SCOPED_TRACE(::testing::Message() << "prim " << int(c.prim) << " type " << int(c.type));
      const Stencil<12> s{c.prim};
      Vec<12> x;
      ImcParams p;
      ASSERT_TRUE(random_sample(rng, s, int(c.type), x, p));
      f12(s, x, p);
    }
  for (int rep = 0; rep < 3; ++rep) {
    SCOPED_TRACE("edge-triangle");
    const Stencil<15> s{Prim::kEdgeTriangle};
    Vec<15> x;
    ImcParams p;
    ASSERT_TRUE(random_sample(rng, s, -1, x, p));
    f15(s, x, p);
  }
}

// ---------------------------------------------------------------------------------------------
// the scalar penalty E(Delta)

TEST(ImcEnergy, DerivativesMatchCentralDifferences) {
  const ImcParams p{250, 0.02, 0.004};
  const Real h = 1e-6 * p.delta;
  for (int i = 0; i <= 200; ++i) {
    // from deep contact (Delta = d - 3 delta) into the tail (d + 0.7 delta)
    const Real D = p.d - 3 * p.delta + i * (3.7 * p.delta / 200);
    Real e1, e2, e1p, e1m;
    imc_energy(D, p, &e1, &e2);
    const Real fd1 = (imc_energy(D + h, p) - imc_energy(D - h, p)) / (2 * h);
    imc_energy(D + h, p, &e1p);
    imc_energy(D - h, p, &e1m);
    const Real fd2 = (e1p - e1m) / (2 * h);
    EXPECT_LT(rel(e1, fd1), kFdRelTol) << "Delta " << D;
    EXPECT_LT(rel(e2, fd2), kFdRelTol) << "Delta " << D;
    EXPECT_LT(e1, 0);  // repulsive
    EXPECT_GT(e2, 0);  // convex
  }
}

TEST(ImcEnergy, SoftplusMeetsQuadraticBelowTolerance) {
  const ImcParams p{3, 0.5, 0.05};
  // eq. (21) as written jumps at d - delta: its quadratic piece is delta^2 there
  const Real E_soft = imc_energy(p.d - p.delta, p);
  const Real E_quad = p.k_c * p.delta * p.delta;
  EXPECT_NEAR(E_soft / E_quad - 1, kLowerJunctionGap, 1e-12);
  // the smooth form used below d - delta exceeds (d - Delta)^2 by a vanishing margin
  Real prev = kLowerJunctionGap * (1 + 1e-6);
  for (int i = 0; i <= 100; ++i) {
    const Real D = p.d - p.delta - i * (p.d - p.delta) / 100;
    const Real q = p.k_c * (p.d - D) * (p.d - D);
    const Real gap = imc_energy(D, p) / q - 1;
    EXPECT_GE(gap, -1e-15) << "Delta " << D;
    EXPECT_LE(gap, prev + 1e-15) << "Delta " << D;
    prev = gap;
  }
  // the forces agree with -2 k_c (d - Delta) to the same order
  Real e1;
  imc_energy(p.d - 2 * p.delta, p, &e1);
  EXPECT_LT(rel(e1, -2 * p.k_c * 2 * p.delta), 1e-12);
}

TEST(ImcEnergy, ContinuousAndC1AcrossJunctions) {
  const ImcParams p{40, 0.1, 0.01};
  const Real eps = 1e-9 * p.delta;
  // d - delta: the smooth form is C-infinity; the jumps are those of the slope and curvature
  // times the step
  {
    const Real D0 = p.d - p.delta;
    Real e1m, e2m, e1p, e2p;
    const Real Em = imc_energy(D0 - eps, p, &e1m, &e2m);
    const Real Ep = imc_energy(D0 + eps, p, &e1p, &e2p);
    EXPECT_LE(std::fabs(Ep - Em), std::fabs(e1m) * 2 * eps * (1 + 1e-6) + 1e-15 * Em);
    EXPECT_LE(std::fabs(e1p - e1m), e2m * 2 * eps * (1 + 1e-3) + 1e-15 * std::fabs(e1m));
    EXPECT_LT(rel(e2p, e2m), 1e-6);
  }
  // d + delta: the cut-off; the jumps are at the rounding level of the contact scales
  {
    const Real D0 = p.d + p.delta;
    Real e1m, e2m, e1p, e2p;
    const Real Em = imc_energy(D0 - eps, p, &e1m, &e2m);
    const Real Ep = imc_energy(D0 + eps, p, &e1p, &e2p);
    EXPECT_EQ(Ep, 0);
    EXPECT_EQ(e1p, 0);
    EXPECT_EQ(e2p, 0);
    EXPECT_EQ(imc_energy(D0, p), 0);
    EXPECT_GT(Em, 0);
    EXPECT_LE(Em, kCutoffE * p.k_c * p.delta * p.delta);
    EXPECT_LE(-e1m, kCutoffE1 * p.k_c * p.delta);
    EXPECT_LE(e2m, kCutoffE2 * p.k_c);
    // relative to the contact scales k_c delta^2, 2 k_c delta and 2 k_c: below 1e-12
    EXPECT_LT(Em / (p.k_c * p.delta * p.delta), 1e-15);
    EXPECT_LT(-e1m / (2 * p.k_c * p.delta), 1e-14);
    EXPECT_LT(e2m / (2 * p.k_c), 1e-12);
  }
}

TEST(ImcEnergy, ContinuousAlongAStencilPath) {
  // B crosses over A at height h along the common normal z: Delta = h exactly (edge-edge type)
  const ImcParams p{40, 0.1, 0.01};
  const Stencil<12> s{Prim::kEdgeEdge};
  auto at = [&](Real h) {
    return pack(vec3(-0.5, 0, 0), vec3(0.5, 0, 0), vec3(0.1, -0.5, h), vec3(-0.1, 0.5, h));
  };
  const Real eps = 1e-9 * p.delta;
  for (Real D0 : {p.d - p.delta, p.d + p.delta}) {
    SCOPED_TRACE(::testing::Message() << "junction " << D0);
    const LocalEval<12> m = s.eval(at(D0 - eps), p), q = s.eval(at(D0 + eps), p);
    Real e1, e2;
    imc_energy(D0 - eps, p, &e1, &e2);
    EXPECT_LE(std::fabs(q.E - m.E), std::fabs(e1) * 2.01 * eps + 1e-15 * p.k_c * p.delta * p.delta);
    // g = E' grad Delta with |grad Delta| fixed along this path
    const Real grad_norm = norm(m.g) / -e1;
    EXPECT_LE(norm(q.g - m.g), (e2 * 2.01 * eps + 1.01 * kCutoffE1 * p.k_c * p.delta) * grad_norm);
  }
}

TEST(ImcEnergy, ZeroOutsideRange) {
  const ImcParams p{10, 0.2, 0.02};
  Real e1 = 1, e2 = 1;
  EXPECT_EQ(imc_energy(p.d + p.delta, p, &e1, &e2), 0);
  EXPECT_EQ(e1, 0);
  EXPECT_EQ(e2, 0);
  EXPECT_EQ(imc_energy(10, p), 0);
  EXPECT_TRUE(std::isnan(imc_energy(std::numeric_limits<Real>::quiet_NaN(), p)));

  std::mt19937_64 rng(3);
  for (int n = 0; n < 200; ++n) {
    for (Prim prim : {Prim::kEdgeEdge, Prim::kPointTriangle}) {
      const Stencil<12> s{prim};
      const Vec<12> x = random_config<12>(rng, prim, n);
      const ContactDistance d = s.distance(x);
      // put the cut-off at or below Delta
      const ImcParams q{10, d.delta * uniform(rng, 0.2, 1) - p.delta, p.delta};
      for (unsigned want : {kEnergy, kGrad, kHess, kGradHess}) {
        ContactDistance info;
        const LocalEval<12> e = s.eval(x, q, want, &info);
        EXPECT_EQ(e.E, 0);
        EXPECT_EQ(e.flags, d.flags);
        EXPECT_EQ(info.delta, d.delta);
        for (int i = 0; i < 12 && want != kEnergy; ++i)
          EXPECT_EQ(e.g[i], 0);
        for (int i = 0; i < 144 && (want & kHess); ++i)
          EXPECT_EQ(e.H.a[i], 0);
      }
    }
    const Stencil<15> s{Prim::kEdgeTriangle};
    const Vec<15> x = random_edge_triangle(rng, n);
    const ContactDistance d = s.distance(x);
    const ImcParams q{10, d.delta * uniform(rng, 0.2, 1) - p.delta, p.delta};
    const LocalEval<15> e = s.eval(x, q);
    EXPECT_TRUE(all_zero(e));
    EXPECT_EQ(e.flags, d.flags);
  }
}

// ---------------------------------------------------------------------------------------------
// the stencils against central differences, symmetry, invariance

class ContactImcSeeds : public ::testing::TestWithParam<int> {};

template <int N>
void check_gradient(const Stencil<N>& s, const Vec<N>& x, const ImcParams& p) {
  ContactDistance info;
  const LocalEval<N> e = s.eval(x, p, kGradHess, &info);
  EXPECT_EQ(e.flags, 0u);
  EXPECT_EQ(e.E, imc_energy(info.delta, p));
  EXPECT_GT(e.E, 0);
  const Vec<N> fd =
      test::fd_gradient<N>([&](const Vec<N>& y) { return s.eval(y, p, kEnergy).E; }, x);
  EXPECT_LT(test::rel_err(e.g, fd), kFdRelTol);
}

template <int N>
void check_hessian(const Stencil<N>& s, const Vec<N>& x, const ImcParams& p) {
  const LocalEval<N> e = s.eval(x, p);
  const Mat<N, N> fd =
      test::fd_jacobian<N>([&](const Vec<N>& y) { return s.eval(y, p, kGrad).g; }, x);
  EXPECT_LT(test::rel_err(e.H, fd), kFdRelTol);
}

template <int N>
void check_symmetry_and_want(const Stencil<N>& s, const Vec<N>& x, const ImcParams& p) {
  const LocalEval<N> e = s.eval(x, p);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      ASSERT_EQ(e.H(i, j), e.H(j, i));
  // fewer want bits give the same bits of what they ask for
  const LocalEval<N> eE = s.eval(x, p, kEnergy), eG = s.eval(x, p, kGrad);
  const LocalEval<N> eH = s.eval(x, p, kHess);
  EXPECT_EQ(eE.E, e.E);
  EXPECT_EQ(eG.E, e.E);
  for (int i = 0; i < N; ++i)
    EXPECT_EQ(eG.g[i], e.g[i]);
  for (int i = 0; i < N * N; ++i)
    EXPECT_EQ(eH.H.a[i], e.H.a[i]);
}

template <int N>
void check_rigid(const Stencil<N>& s, const Vec<N>& x, const ImcParams& p) {
  // E depends on Delta only, which is invariant under translation and rotation: forces and
  // torques about the origin sum to zero, and translations are in the Hessian's null space
  const LocalEval<N> e = s.eval(x, p);
  Vec3 fsum = Vec3::zero(), tsum = Vec3::zero();
  for (int k = 0; k < N / 3; ++k) {
    fsum += e.g.template segment<3>(3 * k);
    tsum += cross(x.template segment<3>(3 * k), e.g.template segment<3>(3 * k));
  }
  const Real gscale = norm(e.g);
  EXPECT_GT(gscale, 0);
  EXPECT_LT(norm(fsum), 1e-14 * gscale);
  EXPECT_LT(norm(tsum), 1e-14 * gscale);
  const Real hscale = test::frobenius<N>(e.H);
  for (int c = 0; c < 3; ++c) {
    Vec<N> tr = Vec<N>::zero();
    for (int k = 0; k < N / 3; ++k)
      tr[3 * k + c] = 1;
    EXPECT_LT(norm(e.H * tr), 1e-13 * hscale);
  }
}

TEST_P(ContactImcSeeds, GradientMatchesCentralDifferences) {
  for_each_sample(
      GetParam(),
      [](const Stencil<12>& s, const Vec<12>& x, const ImcParams& p) { check_gradient(s, x, p); },
      [](const Stencil<15>& s, const Vec<15>& x, const ImcParams& p) { check_gradient(s, x, p); });
}

TEST_P(ContactImcSeeds, HessianMatchesGradientDifferences) {
  for_each_sample(
      GetParam(),
      [](const Stencil<12>& s, const Vec<12>& x, const ImcParams& p) { check_hessian(s, x, p); },
      [](const Stencil<15>& s, const Vec<15>& x, const ImcParams& p) { check_hessian(s, x, p); });
}

TEST_P(ContactImcSeeds, HessianIsSymmetric) {
  for_each_sample(
      GetParam(),
      [](const Stencil<12>& s, const Vec<12>& x, const ImcParams& p) {
        check_symmetry_and_want(s, x, p);
      },
      [](const Stencil<15>& s, const Vec<15>& x, const ImcParams& p) {
        check_symmetry_and_want(s, x, p);
      });
}

TEST_P(ContactImcSeeds, RigidMotionInvariance) {
  for_each_sample(
      GetParam(),
      [](const Stencil<12>& s, const Vec<12>& x, const ImcParams& p) { check_rigid(s, x, p); },
      [](const Stencil<15>& s, const Vec<15>& x, const ImcParams& p) { check_rigid(s, x, p); });
}

INSTANTIATE_TEST_SUITE_P(Seeds, ContactImcSeeds, ::testing::Range(1, 21));

// ---------------------------------------------------------------------------------------------
// two edges pushed together along their common normal

// rotation of v about the unit axis k by angle th (Rodrigues)
Vec3 rotate(const Vec3& v, const Vec3& k, Real th) {
  return std::cos(th) * v + std::sin(th) * cross(k, v) + (1 - std::cos(th)) * dot(k, v) * k;
}

TEST(ContactImc, EdgesPushedTogetherAreRepelledAlongTheNormal) {
  const ImcParams p{1e3, 0.2, 0.02};
  const Stencil<12> s{Prim::kEdgeEdge};
  std::mt19937_64 rng(11);
  struct Layout {
    const char* name;
    Real shift;  // of B along A, as a fraction of the length
    Real angle;  // of B against A about the normal [rad]
  };
  const Layout layouts[] = {
      {"parallel head-on", 0, 0}, {"parallel shifted", 0.3, 0}, {"crossing", 0, 1.0}};
  for (const Layout& lay : layouts) {
    SCOPED_TRACE(lay.name);
    // a random frame: A along t from c, B offset by h along the common normal n
    const Vec3 c = test::random_vec3(rng);
    Vec3 t = test::random_vec3(rng);
    t = t / norm(t);
    const Vec3 n = test::random_normal(rng, t);
    const Vec3 tb = rotate(t, n, lay.angle);
    Real prev = 0;
    int in_range = 0;
    for (int i = 0; i <= 300; ++i) {
      // from d + 2 delta down to d / 4
      const Real h = p.d + 2 * p.delta - i * (0.75 * p.d + 2 * p.delta) / 300;
      const Vec3 mid = c + 0.5 * t;
      const Vec3 b0 = mid + lay.shift * t - 0.5 * tb + h * n;
      const Vec3 x[4] = {c, c + t, b0, b0 + tb};
      const LocalEval<12> e = s.eval(pack(x[0], x[1], x[2], x[3]), p);
      ASSERT_TRUE(all_finite(e));
      EXPECT_EQ(e.flags, 0u);
      const Vec3 fA = -(e.g.segment<3>(0) + e.g.segment<3>(3));
      const Vec3 fB = -(e.g.segment<3>(6) + e.g.segment<3>(9));
      if (h >= p.d + p.delta * (1 + 1e-12)) {
        EXPECT_TRUE(all_zero(e)) << "h " << h;
        continue;
      }
      ++in_range;
      // B is pushed away from A along +n, A along -n; every nodal force lies along n
      const Real fn = dot(fB, n);
      EXPECT_GT(fn, prev) << "h " << h;
      EXPECT_LT(norm(fB - fn * n), 1e-12 * fn);
      EXPECT_LT(norm(fA + fB), 1e-12 * fn);
      for (int k = 0; k < 4; ++k)
        EXPECT_LT(norm(cross(e.g.segment<3>(3 * k), n)), 1e-12 * fn);
      // the total force is -E'(h) along n
      Real e1;
      imc_energy(h, p, &e1);
      EXPECT_LT(rel(fn, -e1), 1e-12);
      prev = fn;
    }
    EXPECT_GT(in_range, 250);
    EXPECT_GT(prev, 2 * p.k_c * 0.5 * p.d);  // deep contact: about 2 k_c (d - h)
  }
}

// ---------------------------------------------------------------------------------------------
// touching, degenerate and crossing input

TEST(ContactImc, DegenerateInputStaysFinite) {
  const ImcParams p{100, 0.3, 0.05};
  const Vec3 o = vec3(0, 0, 0), ex = vec3(1, 0, 0), ey = vec3(0, 1, 0);
  struct Case {
    const char* name;
    Prim prim;
    Vec<12> x;
    unsigned flags;
  };
  const Case cases[] = {
      {"edges crossing in a plane", Prim::kEdgeEdge, pack(o, ex, vec3(0.5, -1, 0), vec3(0.5, 1, 0)),
       kDegenerate | kContactTouching},
      {"collinear identical edges", Prim::kEdgeEdge, pack(o, ex, o, ex),
       kDegenerate | kContactTouching},
      {"zero-length edge", Prim::kEdgeEdge, pack(vec3(0.5, 0.2, 0), vec3(0.5, 0.2, 0), o, ex),
       kDegenerate},
      {"parallel edges", Prim::kEdgeEdge, pack(o, ex, vec3(0.5, 0.2, 0), vec3(1.5, 0.2, 0)), 0},
      {"near-parallel edges", Prim::kEdgeEdge,
       pack(o, ex, vec3(0.25, 0, 0.2), vec3(1.25, 1e-9, 0.2)), 0},
      {"point on the triangle", Prim::kPointTriangle, pack(vec3(0.2, 0.2, 0), o, ex, ey),
       kDegenerate | kContactTouching},
      {"collinear triangle", Prim::kPointTriangle, pack(vec3(0.5, 0.2, 0), o, ex, vec3(2, 0, 0)),
       kDegenerate},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Stencil<12> s{c.prim};
    ContactDistance info;
    const LocalEval<12> e = s.eval(c.x, p, kGradHess, &info);
    EXPECT_TRUE(all_finite(e));
    EXPECT_EQ(e.flags, c.flags);
    EXPECT_EQ(e.E, imc_energy(info.delta, p));
    EXPECT_GT(e.E, 0);
    if (c.flags & kContactTouching) {
      EXPECT_LE(info.delta, kTinyLength);
      EXPECT_EQ(norm(e.g), 0);
    } else {
      EXPECT_GT(norm(e.g), 0);
    }
  }

  // an edge through a triangle: flagged crossing, in range or not
  Vec<15> x;
  x.set_segment(0, vec3(0.2, 0.2, -1));
  x.set_segment(3, vec3(0.2, 0.2, 1));
  x.set_segment(6, o);
  x.set_segment(9, ex);
  x.set_segment(12, ey);
  const Stencil<15> s{Prim::kEdgeTriangle};
  const LocalEval<15> near = s.eval(x, p), far = s.eval(x, ImcParams{100, 0.05, 0.01});
  EXPECT_TRUE(all_finite(near));
  EXPECT_EQ(near.flags, unsigned(kContactCrossing));
  EXPECT_GT(near.E, 0);
  EXPECT_TRUE(all_zero(far));
  EXPECT_EQ(far.flags, unsigned(kContactCrossing));
}

// ---------------------------------------------------------------------------------------------
// pair friction (eq. 23)

/// an integrator's offsets for every node: u_k(x) = u_hat_k + c_u (x_k - q_hat_k)
template <int N>
struct Motion {
  Vec3 u_hat[5], q_hat[5];
  Real c_u, mu, nu;
  ImcFriction at(const Vec<N>& x) const {
    ImcFriction f;
    f.mu = mu;
    f.nu = nu;
    f.c_u = c_u;
    for (int k = 0; k < N / 3; ++k)
      f.u[k] = u_hat[k] + c_u * (x.template segment<3>(3 * k) - q_hat[k]);
    for (int k = N / 3; k < 5; ++k)
      f.u[k] = Vec3::zero();
    return f;
  }
};

/// random node velocities of scale 1 and a slip tolerance from 0.03 (sliding) to 30 (nearly
/// stuck: the smooth law's viscous range) times that scale
template <int N>
Motion<N> random_motion(std::mt19937_64& rng, const Vec<N>& x) {
  Motion<N> m;
  m.c_u = uniform(rng, 5, 50);
  m.mu = uniform(rng, 0.1, 1);
  m.nu = std::pow(10.0, uniform(rng, -1.5, 1.5));
  for (int k = 0; k < N / 3; ++k) {
    m.u_hat[k] = test::random_vec3(rng);
    m.q_hat[k] = x.template segment<3>(3 * k) + 0.01 * test::random_vec3(rng);
  }
  return m;
}

template <int N>
void check_friction_jacobian(const Stencil<N>& s,
                             const Vec<N>& x,
                             const ImcParams& p,
                             std::mt19937_64& rng) {
  const Motion<N> mo = random_motion<N>(rng, x);
  const ImcFriction f = mo.at(x);
  const LocalEval<N> e = s.eval(x, p, kGradHess, nullptr, &f);
  EXPECT_TRUE(all_finite(e));
  const Mat<N, N> fd = test::fd_jacobian<N>(
      [&](const Vec<N>& y) {
        const ImcFriction fy = mo.at(y);
        return s.eval(y, p, kGrad, nullptr, &fy).g;
      },
      x);
  EXPECT_LT(test::rel_err(e.H, fd), kFdRelTol) << "nu " << mo.nu;
  // friction adds nothing to E and changes the gradient
  const LocalEval<N> e0 = s.eval(x, p);
  EXPECT_EQ(e.E, e0.E);
  EXPECT_GT(test::rel_err(e.g, e0.g), 1e-6);
}

TEST_P(ContactImcSeeds, FrictionJacobianMatchesCentralDifferences) {
  std::mt19937_64 rng(9100 + GetParam());
  for_each_sample(
      GetParam(),
      [&](const Stencil<12>& s, const Vec<12>& x, const ImcParams& p) {
        check_friction_jacobian(s, x, p, rng);
      },
      [&](const Stencil<15>& s, const Vec<15>& x, const ImcParams& p) {
        check_friction_jacobian(s, x, p, rng);
      });
}

template <int N>
void check_coulomb(const Stencil<N>& s, const Vec<N>& x, const ImcParams& p, std::mt19937_64& rng) {
  Motion<N> mo = random_motion<N>(rng, x);
  ContactDistance cd;
  const LocalEval<N> e0 = s.eval(x, p, kGradHess, &cd);
  constexpr int K = N / 3;
  Vec3 r = Vec3::zero();
  for (int k = 0; k < K; ++k)
    r += cd.w[k] * x.template segment<3>(3 * k);
  const Vec3 n = r / norm(r);
  Real e1;
  imc_energy(cd.delta, p, &e1);
  for (Real nu_scale : {1e-4, 1e4}) {
    // sliding fast against the tolerance (full Coulomb force) or creeping (viscous range)
    mo.nu = nu_scale;
    const ImcFriction f = mo.at(x);
    const LocalEval<N> e = s.eval(x, p, kGrad, nullptr, &f);
    Vec3 v = Vec3::zero();
    for (int k = 0; k < K; ++k)
      v += cd.w[k] * f.u[k];
    const Vec3 wt = v - dot(v, n) * n;
    // friction forces F_k = -(g - g_normal)_k: total zero, on side A (w_k > 0) opposing the slip.
    // They are differences of two gradients, exact to rounding of the normal force's size.
    const Real floor = 1e-14 * norm(e0.g);
    Vec3 total = Vec3::zero(), fa = Vec3::zero();
    for (int k = 0; k < K; ++k) {
      const Vec3 fk = -(e.g.template segment<3>(3 * k) - e0.g.template segment<3>(3 * k));
      total += fk;
      if (cd.w[k] > 0) fa += fk;
      EXPECT_LT(std::fabs(dot(fk, n)), 1e-12 * norm(fk) + floor);  // tangential
    }
    EXPECT_LT(norm(total), 1e-12 * norm(fa) + floor);
    EXPECT_LT(norm(cross(fa, wt)), (1e-12 * norm(fa) + floor) * norm(wt));
    EXPECT_LT(dot(fa, wt), 0);
    const Real gamma = std::tanh(7.5 / mo.nu * norm(wt));  // 2 / (1 + exp(-K2 r)) - 1
    EXPECT_LT(std::fabs(norm(fa) - mo.mu * gamma * -e1), 1e-12 * norm(fa) + floor)
        << "nu " << mo.nu;
    if (nu_scale < 1) {
      EXPECT_LT(std::fabs(norm(fa) - mo.mu * -e1), 1e-12 * norm(fa) + floor);  // gamma = 1
    }
  }
}

TEST_P(ContactImcSeeds, FrictionObeysCoulombAndActionReaction) {
  std::mt19937_64 rng(9300 + GetParam());
  for_each_sample(
      GetParam(),
      [&](const Stencil<12>& s, const Vec<12>& x, const ImcParams& p) {
        check_coulomb(s, x, p, rng);
      },
      [&](const Stencil<15>& s, const Vec<15>& x, const ImcParams& p) {
        check_coulomb(s, x, p, rng);
      });
}

TEST(ContactImcFriction, OffOutOfRangeAndWithoutCoefficient) {
  std::mt19937_64 rng(17);
  const Stencil<12> s{Prim::kEdgeEdge};
  Vec<12> x;
  ImcParams p;
  ASSERT_TRUE(random_sample(rng, s, int(ContactType::kEdgeEdge), x, p));
  Motion<12> mo = random_motion<12>(rng, x);
  mo.mu = 0;
  const ImcFriction f0 = mo.at(x);
  const LocalEval<12> a = s.eval(x, p), b = s.eval(x, p, kGradHess, nullptr, &f0);
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(a.g[i], b.g[i]);
  for (int i = 0; i < 144; ++i)
    EXPECT_EQ(a.H.a[i], b.H.a[i]);
  // out of range: no normal force, so no friction
  mo.mu = 0.5;
  const ImcFriction f = mo.at(x);
  const ContactDistance d = s.distance(x);
  const ImcParams far{p.k_c, d.delta - 2 * p.delta, p.delta};
  EXPECT_TRUE(all_zero(s.eval(x, far, kGradHess, nullptr, &f)));
}

// the secant's derivative by the distance at the step's start at a fixed midpoint (the
// adjoint's term, imc_secant_start_derivative), edge-edge and point-triangle, with friction and
// without, against the fourth-order difference in Delta_0 (the secant's quotient rounds off
// where a central difference's step would be short enough)
template <class Distance>
void check_secant_start(std::mt19937_64& rng, const Vec<12>& x) {
  Distance dist;
  ContactDistance cd;
  dist(x, kEnergy, cd, nullptr, nullptr);
  const Real D = cd.delta;
  const ImcParams p{40, 0.8 * D, 0.5 * D};  // (in range: D < d + delta)
  ImcFriction f{0.5, 0.01, 100, {}};
  for (int a = 0; a < 5; ++a)
    f.u[a] = test::random_vec3(rng);
  const ImcFriction* cases[2] = {nullptr, &f};
  for (const ImcFriction* fr : cases) {
    ContactStep st;
    st.a = 2;
    st.D0 = D + uniform(rng, -0.3, 0.3) * p.delta;
    Vec<12> dg;
    ASSERT_TRUE((detail::imc_secant_start_derivative<12, Distance>(x, p, fr, st, dg)));
    auto at = [&](Real h) {
      ContactStep s2 = st;
      s2.D0 += h;
      LocalEval<12> r;
      detail::imc_eval<12, Distance>(x, p, kGrad, r, nullptr, fr, &s2);
      return r.g;
    };
    const Real h = 1e-3 * p.delta;
    const Vec<12> fd = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h);
    EXPECT_LT(test::rel_err(dg, fd), test::kFdRelTol) << (fr ? "friction" : "frictionless");
  }
}

TEST_P(ContactImcSeeds, SecantStartDerivativeMatchesCentralDifferences) {
  std::mt19937_64 rng(GetParam());
  check_secant_start<detail::EdgeEdgeDistanceFn>(rng, random_edge_edge(rng, 1));
  check_secant_start<detail::PointTriangleDistanceFn>(rng, random_point_triangle(rng, 0));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
