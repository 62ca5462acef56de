// MAT-DiSMech's PneuNet actuator (seed 000, Sec. 7.1, Fig. 4; apps/scenes/matdismech_pneunet.json):
// three rods of 0.1 m with the natural curvatures 15.70, 31.45 and 47.15 1/m, fixed at one end,
// under gravity (Fig. 4d) and under gravity and the tip force (175, 0, 7) N (Fig. 4e). The seed's
// text gives the set-up but no number of the shapes (the figure is not in the text), so each
// static shape is checked against the planar extensible elastica with the same natural curvature,
// weight and tip force (planar_elastica.h), node by node.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "physics_util.h"
#include "planar_elastica.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// The scene's static solve (its 40 load steps: the natural curvature, gravity and the force
// raised together from the straight rod), with or without the tip forces, against the elastica:
// the rod built in at the middle of its fixed first edge (s0 = x0 = l/2, l = 2 mm), the natural
// curvature on the interior nodes' Voronoi lengths [l/2, L - l/2], none on the last half edge;
// the weight of the free part, the force at the tip. Every node within 5e-5 m (5e-4 L) of the
// elastica:
// - gravity alone (Fig. 4d: the natural arcs, a quarter, half and three quarters of a turn;
//   the weight's moment is 1e-4 of EI kappa_bar): measured 7.8e-6, 2.1e-5, 2.4e-5 m;
// - with the force (Fig. 4e): the 175 N pull straightens each rod along the force but for a
//   bending layer of sqrt(EI / F) = 9.5 mm (5 edges) at the clamp, its tip turned by 0.17, 0.31,
//   0.45 rad: measured 1.1e-5, 1.9e-5, 2.6e-5 m. (Curled first and pulled after, the half and
//   three-quarter rods could also be pulled into loops through themselves: other roots.)
TEST(PneuNet, StaticShapesAreTheElasticaWithNaturalCurvature) {
  const std::string path = std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/matdismech_pneunet.json";
  const Real L = 0.1, r = 1e-3, E = 2e10, rho = 1200, g = 9.8, l = L / 50;
  const Real kappa[3] = {15.70, 31.45, 47.15};
  for (int with_force = 0; with_force < 2; ++with_force) {
    SceneSpec sc = read_scene_file(path);
    ASSERT_EQ(sc.integrator.kind, IntegratorKind::kStatic);
    if (!with_force) sc.forces.point_loads.clear();
    const auto m = build_model(sc);
    ASSERT_EQ(m->npart, 3);
    Simulator sim(m);
    const long steps = std::lround(sc.integrator.duration / sc.integrator.dt);
    ASSERT_TRUE(test::run_steps(sim, steps));
    for (int p = 0; p < 3; ++p) {
      test::PlanarElastica e;
      e.L = L, e.s0 = l / 2, e.x0 = l / 2;
      e.EI = E * kPi * std::pow(r, 4) / 4, e.EA = E * kPi * r * r;
      e.w = rho * kPi * r * r * g;
      if (with_force) e.Fx = 175, e.Fz = 7;
      // the discrete rod turns by 2 atan(kappa l / 2) at a node (kappa l its discrete curvature
      // 2 tan(phi / 2)): the continuum's curvature over the node's Voronoi length l
      e.kappa = {{l / 2, L - l / 2, 2 * std::atan(kappa[p] * l / 2) / l}};
      e.steps = 990;  // h = 0.1 mm (ten steps a bending layer): the pieces' ends on the grid
      // gravity alone: raised from the straight rod; with the force: the root whose tip points
      // nearest the force (the rod pulled straight but for its layer; the others are loops)
      const auto curve =
          with_force ? e.solve_bracketed(-1, 1, 2000, std::atan2(e.Fz, e.Fx)) : e.solve();
      const int a = m->part_node_adr[p], n = m->part_node_adr[p + 1] - a;
      ASSERT_EQ(n, 51);
      const Real y0 = test::node_position(sim.state(), m->part_node[a])[1];
      Real worst = 0;
      for (int i = 1; i < n; ++i) {  // node i at s = i l: curve point (i l - l / 2) / h
        const Vec3 x = test::node_position(sim.state(), m->part_node[a + i]);
        const auto& c = curve[size_t(std::lround((i * l - l / 2) / ((L - l / 2) / e.steps)))];
        worst = std::max(worst, std::hypot(x[0] - c.x, x[2] - c.z));
        EXPECT_NEAR(x[1], y0, 1e-12);  // planar
      }
      const Vec3 tip = test::node_position(sim.state(), m->part_node[a + n - 1]);
      std::printf(
          "kappa_bar %.2f 1/m, %s: tip (%.6f, %.6f) m, elastica (%.6f, %.6f) m, tip angle %.4f "
          "rad; worst node %.2e m\n",
          kappa[p], with_force ? "gravity and force" : "gravity", tip[0], tip[2], curve.back().x,
          curve.back().z, curve.back().theta, worst);
      EXPECT_LT(worst, 5e-5);
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
