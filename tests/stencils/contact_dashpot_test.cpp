// The contact pairs' dashpot (contact_damping.h, add_pair_dashpot in bindings.h) by its start:
// pair_dashpot_start_derivative gives the force add_pair_dashpot adds, and its derivative by the
// step's start position against central differences, for edge-edge and point-triangle pairs
// across the activation's ramp (the adjoint's term, engine/adjoint.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "slender/stencils/bindings.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

Real uniform(std::mt19937_64& rng, Real lo, Real hi) {
  return std::uniform_real_distribution<Real>(lo, hi)(rng);
}

/// a model view with what the dashpot reads: four node masses, the contact's stiffness, layer
/// and damping ratio
struct DashpotModel {
  Real mass[4] = {2e-3, 3e-3, 1.5e-3, 4e-3};
  ModelView view() const {
    ModelView m{};
    m.node_mass = mass;
    m.mass_scale = 1.3;
    m.contact_k = 800;
    m.contact_delta = 5e-4;
    m.contact_zeta = 0.4;
    return m;
  }
};

/// a pair's four nodes (edge-edge: two crossing edges; point-triangle: a point over a triangle)
/// at a separation `gap` beyond the contact distance d, with a random tilt
Vec<12> pair_at(bool edge_edge, Real d, Real gap, std::mt19937_64& rng) {
  const Real z = d + gap;
  Vec3 p[4];
  if (edge_edge) {
    p[0] = vec3(-0.01, uniform(rng, -2e-3, 2e-3), 0);
    p[1] = vec3(0.012, uniform(rng, -2e-3, 2e-3), uniform(rng, -1e-4, 1e-4));
    p[2] = vec3(uniform(rng, -2e-3, 2e-3), -0.011, z);
    p[3] = vec3(uniform(rng, -2e-3, 2e-3), 0.01, z + uniform(rng, -1e-4, 1e-4));
  } else {
    p[0] = vec3(uniform(rng, -1e-3, 1e-3), uniform(rng, -1e-3, 1e-3), z);
    p[1] = vec3(-0.01, -0.01, 0);
    p[2] = vec3(0.012, -0.008, uniform(rng, -1e-4, 1e-4));
    p[3] = vec3(0.001, 0.011, uniform(rng, -1e-4, 1e-4));
  }
  Vec<12> x;
  for (int a = 0; a < 4; ++a)
    x.set_segment(3 * a, p[a]);
  return x;
}

template <class Distance>
void check_pair(bool edge_edge) {
  const DashpotModel dm;
  const ModelView m = dm.view();
  const int node[4] = {0, 1, 2, 3};
  const Real d = 2e-3, c_u = 1000;
  std::mt19937_64 rng(edge_edge ? 5 : 6);
  int checked = 0;
  // from deep in the layer to its far edge (the activation from 1 to 0)
  for (const Real gap : {-3e-4, -1e-4, 0.0, 1e-4, 3e-4}) {
    for (int trial = 0; trial < 4; ++trial) {
      const Vec<12> xl = pair_at(edge_edge, d, gap, rng);
      Vec<12> u;
      for (int i = 0; i < 12; ++i)
        u[i] = uniform(rng, -0.3, 0.3);
      Vec<12> g;
      Mat<12, 12> dg;
      ASSERT_TRUE(detail::pair_dashpot_start_derivative<Distance>(m, node, d, xl, u, g, dg))
          << "gap " << gap;
      // the force is add_pair_dashpot's
      LocalEval<12> r;
      r.E = 0;
      r.g.set_zero();
      detail::add_pair_dashpot<Distance>(m, node, d, xl, u, c_u, kGrad, r);
      Real gmax = 0;
      for (int i = 0; i < 12; ++i)
        gmax = std::max(gmax, std::fabs(g[i]));
      ASSERT_GT(gmax, 0);
      for (int i = 0; i < 12; ++i)
        EXPECT_NEAR(g[i], r.g[i], 1e-14 * gmax) << "component " << i;
      // its derivative by the start, column by column, against central differences
      const Real h = 1e-8;
      Real dmax = 0, err = 0;
      for (int j = 0; j < 12; ++j) {
        Vec<12> xp = xl, xm = xl, gp, gm;
        xp[j] += h;
        xm[j] -= h;
        Mat<12, 12> unused;
        ASSERT_TRUE(detail::pair_dashpot_start_derivative<Distance>(m, node, d, xp, u, gp, unused));
        ASSERT_TRUE(detail::pair_dashpot_start_derivative<Distance>(m, node, d, xm, u, gm, unused));
        for (int i = 0; i < 12; ++i) {
          const Real fd = (gp[i] - gm[i]) / (2 * h);
          dmax = std::max(dmax, std::fabs(fd));
          err = std::max(err, std::fabs(fd - dg(i, j)));
        }
      }
      EXPECT_LT(err, 1e-6 * dmax) << "gap " << gap << ", trial " << trial;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
  // beyond the layer at the start: nothing
  Vec<12> g;
  Mat<12, 12> dg;
  Vec<12> u = Vec<12>::zero();
  EXPECT_FALSE(detail::pair_dashpot_start_derivative<Distance>(
      m, node, d, pair_at(edge_edge, d, 6e-4, rng), u, g, dg));
}

TEST(ContactDashpot, EdgeEdgeStartDerivativeMatchesCentralDifferences) {
  check_pair<detail::EdgeEdgeDistanceFn>(true);
}

TEST(ContactDashpot, PointTriangleStartDerivativeMatchesCentralDifferences) {
  check_pair<detail::PointTriangleDistanceFn>(false);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
