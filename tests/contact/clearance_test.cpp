// Clearance measurement (host/contact/clearance.h): the triangle-triangle distance against a
// sampled reference and in closed-form configurations (face over face, crossing edges,
// intersecting triangles), and ClearanceProbe against a brute-force loop over all triangle pairs
// that share no node, for two stacked sheets, with the ground.

#include "contact/clearance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "pair_lists_util.h"
#include "slender/builder.h"
#include "slender/model.h"

namespace slender::contact {
namespace {
namespace SLENDER_UNITY_ID {

// smallest distance between points of the two triangles on a barycentric grid of n steps (an
// upper bound of the true distance, within the grid spacing of it)
Real sampled_distance(const Vec3 a[3], const Vec3 b[3], int n) {
  std::vector<Vec3> pa, pb;
  for (int i = 0; i <= n; ++i)
    for (int j = 0; i + j <= n; ++j) {
      const Real u = Real(i) / n, v = Real(j) / n, w = 1 - u - v;
      pa.push_back(u * a[0] + v * a[1] + w * a[2]);
      pb.push_back(u * b[0] + v * b[1] + w * b[2]);
    }
  Real best = INFINITY;
  for (const Vec3& p : pa)
    for (const Vec3& q : pb)
      best = std::min(best, norm(p - q));
  return best;
}

TEST(Clearance, TriangleDistanceInClosedFormCases) {
  bool crossing = true;
  // a triangle 3 mm above a larger one, inside its shadow: vertex-face
  const Vec3 lo[3] = {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0)};
  const Vec3 hi[3] = {vec3(0.1, 0.1, 3e-3), vec3(0.3, 0.1, 3e-3), vec3(0.1, 0.3, 4e-3)};
  EXPECT_NEAR(triangle_distance(lo, hi, crossing), 3e-3, 1e-15);
  EXPECT_FALSE(crossing);
  // crossing edges, one above the other: edge-edge
  const Vec3 a[3] = {vec3(-1, 0, 0), vec3(1, 0, 0), vec3(0, -1, -0.5)};
  const Vec3 b[3] = {vec3(0, -1, 0.2), vec3(0, 1, 0.2), vec3(0.5, 0, 1)};
  EXPECT_NEAR(triangle_distance(a, b, crossing), 0.2, 1e-14);
  EXPECT_FALSE(crossing);
  // one triangle through the other: distance 0
  const Vec3 c[3] = {vec3(0.2, 0.2, -0.5), vec3(0.3, 0.2, 0.5), vec3(0.2, 0.3, 0.5)};
  EXPECT_EQ(triangle_distance(lo, c, crossing), 0);
  EXPECT_TRUE(crossing);
  EXPECT_EQ(triangle_distance(c, lo, crossing), 0);
  EXPECT_TRUE(crossing);
}

// random disjoint pairs: never above the sampled distance, and within its grid spacing
TEST(Clearance, TriangleDistanceMatchesSampling) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  int checked = 0;
  for (int k = 0; k < 40; ++k) {
    Vec3 a[3], b[3];
    for (int i = 0; i < 3; ++i) {
      a[i] = vec3(u(rng), u(rng), u(rng));
      b[i] = vec3(u(rng), u(rng), u(rng)) + vec3(0.6, 0, 0.6);
    }
    bool crossing = false;
    const Real d = triangle_distance(a, b, crossing);
    const int n = 40;
    const Real ds = sampled_distance(a, b, n);
    if (crossing) {
      EXPECT_EQ(d, 0);
      EXPECT_LT(ds, 0.2);  // the grids come close where the triangles cut each other
      continue;
    }
    Real size = 0;
    for (int i = 0; i < 3; ++i)
      size = std::max({size, norm(a[i] - a[(i + 1) % 3]), norm(b[i] - b[(i + 1) % 3])});
    EXPECT_LE(d, ds + 1e-12) << "pair " << k;
    EXPECT_GE(d, ds - 2 * size / n) << "pair " << k;
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

// a sheet finer than its contact range: at rest its triangles' second rings lie within that
// range, and count as touching unless the probe leaves out the pairs the contact model does
TEST(Clearance, ProbeCanLeaveOutAFineSheetsRestNeighbours) {
  const auto m = test::fine_sheet(false);
  std::vector<Real> q(m->node_x0.begin(), m->node_x0.end());
  ClearanceProbe probe;
  ClearanceOptions opt;
  opt.search = 0.003;
  opt.touch = 0.003 + 1e-3;
  const Clearance all = probe.measure(*m, q, opt);
  EXPECT_GT(all.touching, 100);
  EXPECT_LT(all.self, 0.003);
  opt.skip_rest_neighbours = true;
  const Clearance own = probe.measure(*m, q, opt);
  EXPECT_EQ(own.touching, 0);
  EXPECT_GE(own.self, opt.touch);
  EXPECT_LT(own.measured, all.measured);
  EXPECT_EQ(own.crossing, 0);
  // folded over itself 2.5 mm apart, the halves touch: pairs far apart at rest still count
  for (size_t i = 0; i < q.size() / 3; ++i)
    if (q[3 * i] > 0.03 + 1e-9) {
      q[3 * i] = 0.06 - q[3 * i];
      q[3 * i + 2] += 0.0025;
    }
  const Clearance folded = probe.measure(*m, q, opt);
  EXPECT_GT(folded.touching, 100);
  EXPECT_LT(folded.self, 0.0026);
}

// the probe's minimum equals the minimum over all pairs of triangles sharing no node
TEST(Clearance, ProbeMatchesBruteForceOnStackedSheets) {
  const Real h = 2e-3, gap = 5e-3, lift = 1.5e-3;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  b.rectangle_shell("low", vec3(0, 0, lift), vec3(0.2, 0, 0), vec3(0, 0.1, 0), 0.02, false, mat, h);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  // the top sheet is turned and tilted a little, so that its distance varies over the pairs
  b.rectangle_shell("top", vec3(0.02, 0.01, lift + gap), vec3(0.15, 0.03, 0.004),
                    vec3(-0.02, 0.08, 0.001), 0.02, false, mat, h);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  GroundSpec g;
  g.enabled = true;
  b.ground(g);
  const auto m = build_model(b.build());
  std::vector<Real> q(m->node_x0.begin(), m->node_x0.end());

  ClearanceProbe probe;
  ClearanceOptions opt;
  opt.search = 0.01;
  opt.touch = gap + 1e-3;
  const Clearance c = probe.measure(*m, q, opt);

  Real best = INFINITY;
  long near = 0;
  for (int ta = 0; ta < m->ntri; ++ta)
    for (int tb = ta + 1; tb < m->ntri; ++tb) {
      Vec3 pa[3], pb[3];
      bool shared = false;
      for (int i = 0; i < 3; ++i) {
        const int na = m->tri_node[3 * ta + i];
        pa[i] = vec3(q[3 * na], q[3 * na + 1], q[3 * na + 2]);
        pb[i] = vec3(q[3 * m->tri_node[3 * tb + i]], q[3 * m->tri_node[3 * tb + i] + 1],
                     q[3 * m->tri_node[3 * tb + i] + 2]);
        for (int j = 0; j < 3; ++j)
          shared = shared || na == m->tri_node[3 * tb + j];
      }
      if (shared) continue;
      bool crossing = false;
      const Real d = triangle_distance(pa, pb, crossing);
      best = std::min(best, d);
      if (d < opt.touch) ++near;
    }
  EXPECT_EQ(c.self, best);
  EXPECT_GT(c.self, gap - 1e-12);  // the top sheet's lowest corner sits `gap` above the low one
  EXPECT_LT(c.self, gap + 2e-3);
  EXPECT_EQ(c.touching, near);
  EXPECT_GT(c.touching, 0);
  EXPECT_EQ(c.crossing, 0);
  EXPECT_GE(c.measured, c.touching);
  // the low sheet's nodes are lowest: lift minus half the thickness above the ground
  EXPECT_NEAR(c.ground, lift - h / 2, 1e-15);
  EXPECT_EQ(m->node_part[c.ground_node], 0);

  // pushed through the low sheet, the top sheet's corner makes intersecting pairs
  std::vector<Real> q2 = q;
  for (int n = 0; n < m->nnode; ++n)
    if (m->node_part[n] == 1) q2[3 * size_t(n) + 2] -= gap + 2e-3;
  const Clearance c2 = probe.measure(*m, q2, opt);
  EXPECT_EQ(c2.self, 0);
  EXPECT_GT(c2.crossing, 0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender::contact
