// V9: closest-feature type and distance of contact primitives against a brute-force reference,
// robustness on parallel and degenerate input, and finite-difference checks of the derivatives.

#include "slender/stencils/contact_distance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

/// distances of O(1) primitives agree to this [m]: the reference is exact to about 1e-18 (long
/// double), the stencil to a few machine epsilons times the primitive size, and the parallel
/// fallback to kContactParallelSin times the overlap length
constexpr Real kDistanceAbsTol = 1e-12;

// ---------------------------------------------------------------------------------------------
// reference: the distance as a nested one-dimensional convex minimization in long double (ternary
// search over one primitive's parameter, closed-form clamped projection for the rest)

using LD = long double;
struct P3 {
  LD v[3];
};
P3 p3(const Vec3& a) { return P3{{a[0], a[1], a[2]}}; }
P3 operator-(const P3& a, const P3& b) {
  return P3{{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2]}};
}
P3 operator+(const P3& a, const P3& b) {
  return P3{{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2]}};
}
P3 operator*(LD s, const P3& a) { return P3{{s * a.v[0], s * a.v[1], s * a.v[2]}}; }
LD dotl(const P3& a, const P3& b) { return a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2]; }
LD norml(const P3& a) { return std::sqrt(dotl(a, a)); }

// distance from p to the segment [a, b]; t the clamped parameter of the closest point
LD ref_point_segment(const P3& p, const P3& a, const P3& b, LD* t = nullptr) {
  const P3 e = b - a;
  const LD ee = dotl(e, e);
  const LD s = ee > 0 ? std::clamp(dotl(p - a, e) / ee, LD(0), LD(1)) : LD(0);
  if (t) *t = s;
  return norml(p - (a + s * e));
}

// argmin of a convex f over [0, hi] by ternary search, the endpoints included as candidates
template <class F>
LD ternary_argmin(const F& f, LD hi, LD* fmin) {
  LD lo = 0, up = hi;
  for (int it = 0; it < 110; ++it) {
    const LD m1 = lo + (up - lo) / 3, m2 = up - (up - lo) / 3;
    if (f(m1) <= f(m2)) {
      up = m2;
    } else {
      lo = m1;
    }
  }
  LD arg = (lo + up) / 2, best = f(arg);
  for (LD c : {LD(0), hi}) {
    const LD fc = f(c);
    if (fc < best) {
      best = fc;
      arg = c;
    }
  }
  *fmin = best;
  return arg;
}

struct Ref {
  LD delta;
  LD s, t;     // edge-edge: parameters on A and B; point-triangle: u, v of t0 + u e1 + v e2
  LD bary[3];  // point-triangle barycentrics
};

Ref ref_edge_edge(const Vec<12>& x) {
  const P3 a0 = p3(x.segment<3>(0)), a1 = p3(x.segment<3>(3));
  const P3 b0 = p3(x.segment<3>(6)), b1 = p3(x.segment<3>(9));
  Ref r{};
  r.s = ternary_argmin([&](LD s) { return ref_point_segment(a0 + s * (a1 - a0), b0, b1); }, 1,
                       &r.delta);
  ref_point_segment(a0 + r.s * (a1 - a0), b0, b1, &r.t);
  return r;
}

// distance from p to the triangle; min over v in [0, 1 - u] in closed form, ternary over u
LD ref_triangle(const P3& p, const P3& t0, const P3& t1, const P3& t2, LD* u_out, LD* v_out) {
  const P3 e1 = t1 - t0, e2 = t2 - t0, d = p - t0;
  const LD ee2 = dotl(e2, e2);
  auto v_of = [&](LD u) {
    return ee2 > 0 ? std::clamp(dotl(d - u * e1, e2) / ee2, LD(0), 1 - u) : LD(0);
  };
  auto f = [&](LD u) { return norml(d - u * e1 - v_of(u) * e2); };
  LD fmin;
  const LD u = ternary_argmin(f, 1, &fmin);
  if (u_out) *u_out = u;
  if (v_out) *v_out = v_of(u);
  return fmin;
}

Ref ref_point_triangle(const Vec<12>& x) {
  Ref r{};
  r.delta = ref_triangle(p3(x.segment<3>(0)), p3(x.segment<3>(3)), p3(x.segment<3>(6)),
                         p3(x.segment<3>(9)), &r.s, &r.t);
  r.bary[0] = 1 - r.s - r.t;
  r.bary[1] = r.s;
  r.bary[2] = r.t;
  return r;
}

LD ref_edge_triangle(const Vec<15>& x) {
  const P3 a0 = p3(x.segment<3>(0)), a1 = p3(x.segment<3>(3));
  const P3 t0 = p3(x.segment<3>(6)), t1 = p3(x.segment<3>(9)), t2 = p3(x.segment<3>(12));
  LD fmin;
  ternary_argmin(
      [&](LD s) { return ref_triangle(a0 + s * (a1 - a0), t0, t1, t2, nullptr, nullptr); }, 1,
      &fmin);
  return fmin;
}

// the reference's feature for a clamped parameter: 0 or 1 at an end, 2 inside, -1 too close
// to call
int ref_edge_feature(LD s) {
  if (s < 1e-13L) return 0;
  if (s > 1 - 1e-13L) return 1;
  if (s > 1e-6L && s < 1 - 1e-6L) return 2;
  return -1;
}

// the reference's triangle feature from its barycentrics, -1 if too close to call
int ref_triangle_feature(const LD* b) {
  int zero = 0, amb = 0, zi[3], nz[3], nzn = 0;
  for (int k = 0; k < 3; ++k) {
    if (b[k] < 1e-13L) {
      zi[zero++] = k;
    } else {
      nz[nzn++] = k;
      if (b[k] < 1e-6L) ++amb;
    }
  }
  if (amb) return -1;
  if (zero == 0) return 6;
  if (zero == 2) return nz[0];
  // one zero barycentric: the edge opposite vertex zi[0]; edge 3 + q runs t_q -> t_(q+1)
  return 3 + (zi[0] + 1) % 3;
}

// ---------------------------------------------------------------------------------------------
// evaluation helpers

struct Eval12 {
  ContactDistance d;
  Vec<12> g;
  Mat<12, 12> H;
};

enum class Prim { kEdgeEdge, kPointTriangle };

Eval12 eval12(Prim p, const Vec<12>& x, unsigned want = kGradHess) {
  Eval12 e;
  if (p == Prim::kEdgeEdge) {
    edge_edge_distance(x, want, e.d, &e.g, &e.H);
  } else {
    point_triangle_distance(x, want, e.d, &e.g, &e.H);
  }
  return e;
}

Real delta12(Prim p, const Vec<12>& x) { return eval12(p, x, kEnergy).d.delta; }

template <int N>
bool all_finite(const Vec<N>& g) {
  for (int i = 0; i < N; ++i)
    if (!std::isfinite(g[i])) return false;
  return true;
}
template <int N>
bool all_finite(const Mat<N, N>& H) {
  for (int i = 0; i < N * N; ++i)
    if (!std::isfinite(H.a[i])) return false;
  return true;
}

Vec<12> pack(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  Vec<12> x;
  x.set_segment(0, a);
  x.set_segment(3, b);
  x.set_segment(6, c);
  x.set_segment(9, d);
  return x;
}

// rotation of v about the unit axis k by angle th (Rodrigues)
Vec3 rotate(const Vec3& v, const Vec3& k, Real th) {
  return std::cos(th) * v + std::sin(th) * cross(k, v) + (1 - std::cos(th)) * dot(k, v) * k;
}

// |e1 x e2| / (|e1| |e2|) of the two edges of an edge-edge stencil
Real edge_sine(const Vec<12>& x) {
  const Vec3 e1 = x.segment<3>(3) - x.segment<3>(0), e2 = x.segment<3>(9) - x.segment<3>(6);
  return norm(cross(e1, e2)) / (norm(e1) * norm(e2));
}

// ---------------------------------------------------------------------------------------------
// random configurations of several kinds: far apart, close, crossing, touching, scaled

Vec<12> random_edge_edge(std::mt19937_64& rng, int kind) {
  std::uniform_real_distribution<Real> u(0, 1);
  const Vec3 a0 = test::random_vec3(rng), a1 = test::random_vec3(rng);
  switch (kind % 4) {
    case 0:  // anywhere in the cube
      return pack(a0, a1, test::random_vec3(rng), test::random_vec3(rng));
    case 1: {  // B near A: offsets of A's nodes
      const Real sc = std::pow(10.0, -3 * u(rng));
      return pack(a0, a1, a0 + test::random_vec3(rng, sc), a1 + test::random_vec3(rng, sc));
    }
    case 2: {  // B passes at height h (maybe 0) over a point of A's line
      const Vec3 c = a0 + (1.4 * u(rng) - 0.2) * (a1 - a0);
      const Real h = u(rng) < 0.3 ? 0 : std::pow(10.0, -6 * u(rng));
      const Vec3 t = a1 - a0;
      const Vec3 nrm = test::random_normal(rng, t / norm(t));
      const Vec3 dir = test::random_normal(rng, nrm);
      const Real s = 1.4 * u(rng) - 0.2;
      return pack(a0, a1, c + h * nrm - s * dir, c + h * nrm + (1 - s) * dir);
    }
    default: {  // small scale
      const Real sc = 1e-3;
      return pack(sc * a0, sc * a1, sc * test::random_vec3(rng), sc * test::random_vec3(rng));
    }
  }
}

Vec<12> random_point_triangle(std::mt19937_64& rng, int kind) {
  std::uniform_real_distribution<Real> u(0, 1);
  const Vec3 t0 = test::random_vec3(rng), t1 = test::random_vec3(rng), t2 = test::random_vec3(rng);
  switch (kind % 4) {
    case 0:
      return pack(test::random_vec3(rng), t0, t1, t2);
    case 1: {  // over a point of the triangle's plane, maybe outside, at height h (maybe 0)
      const Real b1 = 1.6 * u(rng) - 0.3, b2 = 1.6 * u(rng) - 0.3;
      const Vec3 n = cross(t1 - t0, t2 - t0);
      const Real h = u(rng) < 0.3 ? 0 : std::pow(10.0, -6 * u(rng)) * (u(rng) < 0.5 ? 1 : -1);
      return pack(t0 + b1 * (t1 - t0) + b2 * (t2 - t0) + (h / norm(n)) * n, t0, t1, t2);
    }
    case 2:  // near a vertex
      return pack(t1 + test::random_vec3(rng, 0.1), t0, t1, t2);
    default: {
      const Real sc = 1e-3;
      return pack(sc * test::random_vec3(rng), sc * t0, sc * t1, sc * t2);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// V9: distance and type against the reference

class ContactDistanceSeeds : public ::testing::TestWithParam<int> {};

TEST_P(ContactDistanceSeeds, EdgeEdgeMatchesReference) {
  std::mt19937_64 rng(GetParam());
  int typed = 0;
  for (int n = 0; n < 800; ++n) {
    const Vec<12> x = random_edge_edge(rng, n);
    const Eval12 e = eval12(Prim::kEdgeEdge, x);
    const Ref r = ref_edge_edge(x);
    ASSERT_NEAR(e.d.delta, Real(r.delta), kDistanceAbsTol) << "sample " << n;
    ASSERT_TRUE(all_finite(e.g) && all_finite(e.H)) << "sample " << n;
    EXPECT_EQ(e.d.type, detail::edge_pair_type(e.d.a, e.d.b));
    // the features agree wherever the reference can call them
    const int fa = ref_edge_feature(r.s), fb = ref_edge_feature(r.t);
    if (fa >= 0 && fb >= 0 && edge_sine(x) > 1e-6 && r.delta > 1e-9L) {
      EXPECT_EQ(e.d.a, fa) << "sample " << n;
      EXPECT_EQ(e.d.b, fb) << "sample " << n;
      ++typed;
    }
    // the weights give the closest points: |sum w_k x_k| = Delta
    Vec3 rr = Vec3::zero();
    Real wsum = 0;
    for (int k = 0; k < 4; ++k) {
      rr += e.d.w[k] * x.segment<3>(3 * k);
      wsum += e.d.w[k];
    }
    EXPECT_NEAR(norm(rr), e.d.delta, kDistanceAbsTol);
    EXPECT_LT(std::fabs(wsum), 1e-15);
  }
  EXPECT_GT(typed, 400);
}

TEST_P(ContactDistanceSeeds, PointTriangleMatchesReference) {
  std::mt19937_64 rng(GetParam());
  int typed = 0;
  for (int n = 0; n < 800; ++n) {
    const Vec<12> x = random_point_triangle(rng, n);
    const Eval12 e = eval12(Prim::kPointTriangle, x);
    const Ref r = ref_point_triangle(x);
    ASSERT_NEAR(e.d.delta, Real(r.delta), kDistanceAbsTol) << "sample " << n;
    ASSERT_TRUE(all_finite(e.g) && all_finite(e.H)) << "sample " << n;
    EXPECT_EQ(e.d.a, 0);
    const int fb = ref_triangle_feature(r.bary);
    if (fb >= 0 && r.delta > 1e-9L) {
      EXPECT_EQ(e.d.b, fb) << "sample " << n;
      ++typed;
    }
    const ContactType want_type = e.d.b < 3   ? ContactType::kPointPoint
                                  : e.d.b < 6 ? ContactType::kPointEdge
                                              : ContactType::kPointTriangle;
    EXPECT_EQ(e.d.type, want_type);
    Vec3 rr = Vec3::zero();
    for (int k = 0; k < 4; ++k)
      rr += e.d.w[k] * x.segment<3>(3 * k);
    EXPECT_NEAR(norm(rr), e.d.delta, kDistanceAbsTol);
  }
  EXPECT_GT(typed, 400);
}

TEST_P(ContactDistanceSeeds, EdgeTriangleMatchesReference) {
  std::mt19937_64 rng(GetParam());
  std::uniform_real_distribution<Real> u(0, 1);
  int crossing = 0;
  for (int n = 0; n < 60; ++n) {
    Vec<15> x;
    for (int k = 0; k < 5; ++k)
      x.set_segment(3 * k, test::random_vec3(rng));
    if (n % 2) {
      // the edge close to the triangle: its nodes near random points of the triangle
      for (int k = 0; k < 2; ++k) {
        const Real b1 = u(rng), b2 = u(rng) * (1 - b1);
        const Vec3 t0 = x.segment<3>(6);
        x.set_segment(3 * k, t0 + b1 * (x.segment<3>(9) - t0) + b2 * (x.segment<3>(12) - t0) +
                                 test::random_vec3(rng, 0.2));
      }
    }
    ContactDistance d;
    int pair;
    Vec<15> g;
    Mat<15, 15> H;
    edge_triangle_distance(x, kGradHess, d, pair, &g, &H);
    ASSERT_TRUE(all_finite(g) && all_finite(H));
    const LD ref = ref_edge_triangle(x);
    if (d.flags & kContactCrossing) {
      // true distance 0; Delta stays the (positive) minimum over the sub-pairs
      EXPECT_LT(ref, 1e-12L);
      ++crossing;
      continue;
    }
    EXPECT_NEAR(d.delta, Real(ref), kDistanceAbsTol) << "sample " << n;
    Vec3 rr = Vec3::zero();
    for (int k = 0; k < 5; ++k)
      rr += d.w[k] * x.segment<3>(3 * k);
    EXPECT_NEAR(norm(rr), d.delta, kDistanceAbsTol);
  }
  EXPECT_LT(crossing, 60);
}

// ---------------------------------------------------------------------------------------------
// derivatives against central differences, away from type boundaries

// the same features at x and at every x +- margin e_i
bool features_stable(Prim p, const Vec<12>& x, Real margin) {
  const ContactDistance d0 = eval12(p, x, kEnergy).d;
  for (int i = 0; i < 12; ++i)
    for (Real sgn : {-1.0, 1.0}) {
      Vec<12> y = x;
      y[i] += sgn * margin;
      const ContactDistance d = eval12(p, y, kEnergy).d;
      if (d.a != d0.a || d.b != d0.b) return false;
    }
  return true;
}

// a random configuration of the given type, well inside its region: Delta >= 0.05, edges at
// least 3 degrees from parallel, triangles not slivers, features stable under 1e-3 moves
bool random_interior_sample(Prim p, ContactType type, std::mt19937_64& rng, Vec<12>& x) {
  for (int tries = 0; tries < 20000; ++tries) {
    x = p == Prim::kEdgeEdge ? random_edge_edge(rng, tries % 3)
                             : random_point_triangle(rng, tries % 3);
    const ContactDistance d = eval12(p, x, kEnergy).d;
    if (d.type != type || d.delta < 0.05) continue;
    if (p == Prim::kEdgeEdge && edge_sine(x) < 0.05) continue;
    if (p == Prim::kPointTriangle) {
      const Vec3 t0 = x.segment<3>(3), t1 = x.segment<3>(6), t2 = x.segment<3>(9);
      const Real lmax =
          std::max({squared_norm(t1 - t0), squared_norm(t2 - t1), squared_norm(t0 - t2)});
      if (norm(cross(t1 - t0, t2 - t0)) < 0.1 * lmax) continue;
    }
    if (features_stable(p, x, 1e-3)) return true;
  }
  return false;
}

struct TypeCase {
  Prim prim;
  ContactType type;
};

// three well-separated samples of each type of both 12-DOF stencils for one seed
template <class F>
void for_each_interior_sample(int seed, const F& f) {
  std::mt19937_64 rng(1000 + seed);
  const TypeCase cases[] = {{Prim::kEdgeEdge, ContactType::kPointPoint},
                            {Prim::kEdgeEdge, ContactType::kPointEdge},
                            {Prim::kEdgeEdge, ContactType::kEdgeEdge},
                            {Prim::kPointTriangle, ContactType::kPointPoint},
                            {Prim::kPointTriangle, ContactType::kPointEdge},
                            {Prim::kPointTriangle, ContactType::kPointTriangle}};
  for (const TypeCase& tc : cases)
    for (int rep = 0; rep < 3; ++rep) {
      SCOPED_TRACE(::testing::Message() << "prim " << int(tc.prim) << " type " << int(tc.type));
      Vec<12> x;
      ASSERT_TRUE(random_interior_sample(tc.prim, tc.type, rng, x));
      f(tc.prim, x);
    }
}

TEST_P(ContactDistanceSeeds, GradientMatchesCentralDifferences) {
  for_each_interior_sample(GetParam(), [](Prim p, const Vec<12>& x) {
    const Eval12 e = eval12(p, x);
    EXPECT_EQ(e.d.flags, 0u);
    const Vec<12> fd = test::fd_gradient<12>([p](const Vec<12>& y) { return delta12(p, y); }, x);
    EXPECT_LT(test::rel_err(e.g, fd), kFdRelTol);
  });
}

TEST_P(ContactDistanceSeeds, HessianMatchesGradientDifferences) {
  for_each_interior_sample(GetParam(), [](Prim p, const Vec<12>& x) {
    const Eval12 e = eval12(p, x);
    const Mat<12, 12> fd =
        test::fd_jacobian<12>([p](const Vec<12>& y) { return eval12(p, y, kGrad).g; }, x);
    EXPECT_LT(test::rel_err(e.H, fd), kFdRelTol);
  });
}

TEST_P(ContactDistanceSeeds, HessianIsSymmetric) {
  for_each_interior_sample(GetParam(), [](Prim p, const Vec<12>& x) {
    const Eval12 e = eval12(p, x);
    EXPECT_EQ(test::rel_err(e.H, e.H.transpose()), 0);  // mirrored from one triangle
  });
}

TEST_P(ContactDistanceSeeds, RigidMotionInvariance) {
  for_each_interior_sample(GetParam(), [](Prim p, const Vec<12>& x) {
    // Delta is invariant under translation and rotation: forces and torques sum to zero
    const Eval12 e = eval12(p, x);
    Vec3 fsum = Vec3::zero(), tsum = Vec3::zero();
    for (int k = 0; k < 4; ++k) {
      fsum += e.g.segment<3>(3 * k);
      tsum += cross(x.segment<3>(3 * k), e.g.segment<3>(3 * k));
    }
    EXPECT_LT(norm(fsum), 1e-14);
    EXPECT_LT(norm(tsum), 1e-14);
  });
}

TEST_P(ContactDistanceSeeds, EdgeTriangleGradientAndHessianMatchCentralDifferences) {
  std::mt19937_64 rng(2000 + GetParam());
  auto eval = [](const Vec<15>& y, unsigned want, Vec<15>* g, Mat<15, 15>* H) {
    ContactDistance d;
    int pair;
    edge_triangle_distance(y, want, d, pair, g, H);
    return std::make_pair(d, pair);
  };
  int checked = 0;
  for (int tries = 0; tries < 200 && checked < 3; ++tries) {
    Vec<15> x;
    for (int k = 0; k < 5; ++k)
      x.set_segment(3 * k, test::random_vec3(rng));
    const auto d0 = eval(x, kEnergy, nullptr, nullptr);
    if (d0.first.delta < 0.05 || d0.first.flags) continue;
    bool stable = true;
    for (int i = 0; i < 15 && stable; ++i)
      for (Real sgn : {-1.0, 1.0}) {
        Vec<15> y = x;
        y[i] += sgn * 1e-3;
        const auto d = eval(y, kEnergy, nullptr, nullptr);
        if (d.second != d0.second || d.first.a != d0.first.a || d.first.b != d0.first.b)
          stable = false;
      }
    if (!stable) continue;
    Vec<15> g;
    Mat<15, 15> H;
    eval(x, kGradHess, &g, &H);
    const Vec<15> gfd = test::fd_gradient<15>(
        [&](const Vec<15>& y) { return eval(y, kEnergy, nullptr, nullptr).first.delta; }, x);
    const Mat<15, 15> Hfd = test::fd_jacobian<15>(
        [&](const Vec<15>& y) {
          Vec<15> gy;
          eval(y, kGrad, &gy, nullptr);
          return gy;
        },
        x);
    EXPECT_LT(test::rel_err(g, gfd), kFdRelTol);
    EXPECT_LT(test::rel_err(H, Hfd), kFdRelTol);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ContactDistanceSeeds, ::testing::Range(1, 21));

// ---------------------------------------------------------------------------------------------
// parallel, degenerate and touching configurations

struct Case {
  const char* name;
  Vec<12> x;
  Real delta;  // exact distance
  bool degenerate;
};

void check_case(Prim p, const Case& c) {
  SCOPED_TRACE(c.name);
  const Eval12 e = eval12(p, c.x);
  const Ref r = p == Prim::kEdgeEdge ? ref_edge_edge(c.x) : ref_point_triangle(c.x);
  EXPECT_NEAR(e.d.delta, c.delta, kDistanceAbsTol);
  EXPECT_NEAR(e.d.delta, Real(r.delta), kDistanceAbsTol);
  EXPECT_TRUE(std::isfinite(e.d.delta) && all_finite(e.g) && all_finite(e.H));
  EXPECT_EQ(bool(e.d.flags & kDegenerate), c.degenerate);
  EXPECT_EQ(bool(e.d.flags & kContactTouching), e.d.delta <= kTinyLength);
}

TEST(ContactDistance, EdgeEdgeDegenerateInputStaysFinite) {
  const Vec3 o = vec3(0, 0, 0), ex = vec3(1, 0, 0);
  const Real h = 0.3;
  const Case cases[] = {
      {"parallel overlapping", pack(o, ex, vec3(0.5, h, 0), vec3(1.5, h, 0)), h, false},
      {"parallel opposite", pack(o, ex, vec3(1.5, h, 0), vec3(0.5, h, 0)), h, false},
      {"parallel contained", pack(o, ex, vec3(0.2, 0, h), vec3(0.7, 0, h)), h, false},
      {"parallel apart", pack(o, ex, vec3(2, h, 0), vec3(3, h, 0)), std::hypot(1.0, h), false},
      {"collinear overlapping", pack(o, ex, vec3(0.5, 0, 0), vec3(1.5, 0, 0)), 0, false},
      {"collinear identical", pack(o, ex, o, ex), 0, false},
      {"collinear reversed", pack(o, ex, ex, o), 0, false},
      {"collinear apart", pack(o, ex, vec3(1.25, 0, 0), vec3(2, 0, 0)), 0.25, false},
      {"crossing", pack(o, ex, vec3(0.5, -1, 0), vec3(0.5, 1, 0)), 0, false},
      {"crossing above", pack(o, ex, vec3(0.5, -1, h), vec3(0.5, 1, h)), h, false},
      {"T junction", pack(o, ex, vec3(0.5, 0, 0), vec3(0.5, 1, 0)), 0, false},
      {"shared node", pack(o, ex, ex, vec3(1, 1, 0)), 0, false},
      {"endpoint to endpoint", pack(o, ex, vec3(1, h, 0), vec3(1, 1, 0)), h, false},
      {"zero-length A", pack(vec3(0.5, h, 0), vec3(0.5, h, 0), o, ex), h, true},
      {"zero-length B", pack(o, ex, vec3(2, 0, 0), vec3(2, 0, 0)), 1, true},
      {"zero-length both", pack(o, o, vec3(0, h, 0), vec3(0, h, 0)), h, true},
      {"tiny A 1e-15", pack(vec3(0.5, h, 0), vec3(0.5, h, 1e-15), o, ex), h, true},
      {"tiny B 1e-13", pack(o, ex, vec3(0.5, 0, h), vec3(0.5, 1e-13, h)), h, false},
      {"tiny A on B", pack(vec3(0.5, 0, 0), vec3(0.5 + 1e-15, 0, 0), o, ex), 0, true},
      {"near parallel 1e-14", pack(o, ex, vec3(0.25, h, 0), vec3(1.25, h + 1e-14, 0)), h, false},
      {"near parallel 1e-9", pack(o, ex, vec3(0.25, 0, h), vec3(1.25, 1e-9, h)), h, false},
  };
  for (const Case& c : cases)
    check_case(Prim::kEdgeEdge, c);
}

TEST(ContactDistance, PointTriangleDegenerateInputStaysFinite) {
  const Vec3 t0 = vec3(0, 0, 0), t1 = vec3(1, 0, 0), t2 = vec3(0, 1, 0);
  const Real h = 0.3;
  const Case cases[] = {
      {"in the plane, inside", pack(vec3(0.2, 0.2, 0), t0, t1, t2), 0, false},
      {"above the interior", pack(vec3(0.2, 0.2, h), t0, t1, t2), h, false},
      {"below the interior", pack(vec3(0.2, 0.2, -h), t0, t1, t2), h, false},
      {"on an edge", pack(vec3(0.5, 0.5, 0), t0, t1, t2), 0, false},
      {"on a vertex", pack(t1, t0, t1, t2), 0, false},
      {"above an edge", pack(vec3(0.5, 0, h), t0, t1, t2), h, false},
      {"above a vertex", pack(vec3(0, 0, h), t0, t1, t2), h, false},
      {"in the plane, outside", pack(vec3(-h, 0.5, 0), t0, t1, t2), h, false},
      {"collinear triangle", pack(vec3(0.5, h, 0), t0, t1, vec3(2, 0, 0)), h, true},
      {"collinear, point on it", pack(vec3(0.5, 0, 0), t0, t1, vec3(2, 0, 0)), 0, true},
      {"coincident vertices", pack(vec3(0.5, h, 0), t0, t1, t1), h, true},
      {"all vertices equal", pack(vec3(0, 0, h), t0, t0, t0), h, true},
      {"sliver 1e-14", pack(vec3(0.5, 0, h), t0, t1, vec3(0.5, 1e-14, 0)), h, true},
      {"tiny triangle 1e-15", pack(vec3(0, 0, h), t0, 1e-15 * t1, 1e-15 * t2), h, true},
  };
  for (const Case& c : cases)
    check_case(Prim::kPointTriangle, c);
}

TEST(ContactDistance, EdgeTriangleDegenerateInputStaysFinite) {
  const Vec3 t0 = vec3(0, 0, 0), t1 = vec3(1, 0, 0), t2 = vec3(0, 1, 0);
  struct EtCase {
    const char* name;
    Vec3 a0, a1, t0, t1, t2;
    Real delta;
    unsigned flags;
  };
  const EtCase cases[] = {
      {"piercing", vec3(0.2, 0.2, -1), vec3(0.2, 0.2, 1), t0, t1, t2, 0.2, kContactCrossing},
      {"parallel above", vec3(0.1, 0.1, 0.3), vec3(0.3, 0.3, 0.3), t0, t1, t2, 0.3, 0},
      {"in the plane across an edge", vec3(0.5, -0.5, 0), vec3(0.5, 0.5, 0), t0, t1, t2, 0, 0},
      {"zero-length edge", vec3(0.2, 0.2, 0.3), vec3(0.2, 0.2, 0.3), t0, t1, t2, 0.3, kDegenerate},
      {"collinear triangle", vec3(0.5, 0.3, -1), vec3(0.5, 0.3, 1), t0, t1, vec3(2, 0, 0), 0.3,
       kDegenerate},
  };
  for (const EtCase& c : cases) {
    SCOPED_TRACE(c.name);
    Vec<15> x;
    x.set_segment(0, c.a0);
    x.set_segment(3, c.a1);
    x.set_segment(6, c.t0);
    x.set_segment(9, c.t1);
    x.set_segment(12, c.t2);
    ContactDistance d;
    int pair;
    Vec<15> g;
    Mat<15, 15> H;
    edge_triangle_distance(x, kGradHess, d, pair, &g, &H);
    EXPECT_NEAR(d.delta, c.delta, kDistanceAbsTol);
    EXPECT_EQ(d.flags & ~unsigned(kContactTouching), c.flags);
    EXPECT_TRUE(std::isfinite(d.delta) && all_finite(g) && all_finite(H));
  }
}

// ---------------------------------------------------------------------------------------------
// continuity across the parallel threshold: sweep the angle between two edges through 0

std::vector<Real> angle_sweep() {
  std::vector<Real> th = {0};
  for (Real ex = -17; ex <= -1; ex += 0.125)
    for (Real s : {-1.0, 1.0})
      th.push_back(s * std::pow(10.0, ex));
  std::sort(th.begin(), th.end());
  return th;
}

TEST(ContactDistance, EdgeEdgeDistanceIsContinuousThroughParallel) {
  const std::vector<Real> th = angle_sweep();
  std::mt19937_64 rng(7);
  int parallel = 0, line_line = 0;
  for (int c = 0; c < 40; ++c) {
    // edge B parallel to A, offset by h (0 for some), then turned by theta about an axis
    // through a point of B: the z axis (in the plane) or a random one
    const Vec3 a0 = vec3(-1, 0, 0), a1 = vec3(1, 0, 0);
    const Real h = c % 4 == 0 ? 0 : std::pow(10.0, -8.0 * (c % 5) / 4);
    const Vec3 off = c % 2 ? vec3(0, h, 0) : vec3(0, 0, h);
    const Real l0 = -1.3 + 0.1 * (c % 7), l1 = l0 + 1.2 + 0.2 * (c % 3);
    const Real pivot = l0 + (l1 - l0) * (0.5 + 0.4 * test::random_vec3(rng)[0]);
    Vec3 axis = c % 3 ? vec3(0, 0, 1) : test::random_vec3(rng);
    axis = axis / norm(axis);
    // the whole scene in a random frame, so that no product is exact by accident
    Vec3 frame = test::random_vec3(rng);
    frame = frame / norm(frame);
    const Real turn = c < 4 ? 0 : 3 * test::random_vec3(rng)[0];
    const Vec3 shift = c < 4 ? Vec3::zero() : test::random_vec3(rng);
    auto place = [&](const Vec3& v) { return rotate(v, frame, turn) + shift; };
    Real prev_delta = 0, prev_ref = 0;
    for (std::size_t i = 0; i < th.size(); ++i) {
      const Vec3 p = vec3(pivot, 0, 0) + off;
      const Vec3 b0 = p + rotate(vec3(l0 - pivot, 0, 0), axis, th[i]);
      const Vec3 b1 = p + rotate(vec3(l1 - pivot, 0, 0), axis, th[i]);
      const Vec<12> x = pack(place(a0), place(a1), place(b0), place(b1));
      const Eval12 e = eval12(Prim::kEdgeEdge, x);
      const Real ref = Real(ref_edge_edge(x).delta);
      ASSERT_TRUE(std::isfinite(e.d.delta) && all_finite(e.g) && all_finite(e.H));
      ASSERT_NEAR(e.d.delta, ref, kDistanceAbsTol) << "case " << c << " theta " << th[i];
      if (i > 0) {
        // no jump beyond what the exact distance does between neighbouring angles
        EXPECT_LE(std::fabs(e.d.delta - prev_delta), std::fabs(ref - prev_ref) + 2e-12);
      }
      prev_delta = e.d.delta;
      prev_ref = ref;
      if (e.d.type == ContactType::kEdgeEdge) {
        ++line_line;
      } else if (edge_sine(x) <= kContactParallelSin) {
        ++parallel;
      }
    }
  }
  // the sweep saw both sides of the threshold
  EXPECT_GT(parallel, 100);
  EXPECT_GT(line_line, 100);
}

TEST(ContactDistance, PointTriangleDistanceIsContinuousThroughFlat) {
  // the apex t2 = (0.5, eps, 0) passes through the line t0 t1; the point sits over the sliver
  std::vector<Real> eps = {0};
  for (Real ex = -17; ex <= -1; ex += 0.125)
    for (Real s : {-1.0, 1.0})
      eps.push_back(s * std::pow(10.0, ex));
  std::sort(eps.begin(), eps.end());
  int flat = 0;
  for (Real h : {0.0, 1e-12, 1e-6, 0.3})
    for (Real py : {0.0, 1e-15, 1e-13}) {
      Real prev_delta = 0, prev_ref = 0;
      for (std::size_t i = 0; i < eps.size(); ++i) {
        const Vec<12> x =
            pack(vec3(0.5, py, h), vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.5, eps[i], 0));
        const Eval12 e = eval12(Prim::kPointTriangle, x);
        const Real ref = Real(ref_point_triangle(x).delta);
        ASSERT_TRUE(std::isfinite(e.d.delta) && all_finite(e.g) && all_finite(e.H));
        ASSERT_NEAR(e.d.delta, ref, kDistanceAbsTol) << "h " << h << " eps " << eps[i];
        if (i > 0) {
          EXPECT_LE(std::fabs(e.d.delta - prev_delta), std::fabs(ref - prev_ref) + 2e-12);
        }
        prev_delta = e.d.delta;
        prev_ref = ref;
        if (e.d.flags & kDegenerate) ++flat;
      }
    }
  EXPECT_GT(flat, 10);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
