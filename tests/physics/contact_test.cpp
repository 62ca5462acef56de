// Rod-rod implicit contact in the simulator: a rod dropped across a clamped rod comes to rest on
// it without passing through (the surfaces stay within the contact layer), the assembled
// Jacobian with active contact pairs matches finite differences, and "contact" in JSON.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "physics_util.h"
#include "slender/core/error.h"
#include "slender/stencils/contact_distance.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kR = 0.005;  // rod radius [m]

SceneSpec crossing_rods(Real gap, Real tolerance) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int base =
      b.straight_rod("base", vec3(-0.1, 0, 0), vec3(0.1, 0, 0), 21, mat, SceneBuilder::circle(kR));
  b.straight_rod("top", vec3(0, -0.1, 2 * kR + gap), vec3(0, 0.1, 2 * kR + gap), 21, mat,
                 SceneBuilder::circle(kR));
  b.fix_edge(base, 0).fix_edge(base, -1);
  ContactSpec c;
  c.tolerance = tolerance;
  b.contact(c);
  b.gravity(vec3(0, 0, -9.8));
  b.mass_damping(5);
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 2e-3;
  return b.build();
}

// the smallest distance between an edge of one part and an edge of the other
Real closest_approach(const Model& m, const State& s) {
  Real best = INFINITY;
  const int na = m.part_edge_adr[1], nb = m.part_edge_adr[2] - na;
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j) {
      const int ea = m.part_edge[i], eb = m.part_edge[na + j];
      Vec<12> x;
      const int nodes[4] = {m.edge_node[2 * ea], m.edge_node[2 * ea + 1], m.edge_node[2 * eb],
                            m.edge_node[2 * eb + 1]};
      for (int a = 0; a < 4; ++a)
        x.set_segment(3 * a, test::node_position(s, nodes[a]));
      ContactDistance d;
      edge_edge_distance(x, kEnergy, d, nullptr, nullptr);
      best = std::min(best, d.delta);
    }
  return best;
}

TEST(RodContact, DroppedRodRestsOnTheOtherWithoutPassingThrough) {
  const Real tol = 1e-3;
  const auto m = build_model(crossing_rods(0.02, tol));
  Simulator sim(m);
  Real lowest = INFINITY;
  for (int s = 0; s < 500; ++s) {  // 1 s
    ASSERT_TRUE(sim.step().ok()) << "step " << s;
    lowest = std::min(lowest, closest_approach(*m, sim.state()));
  }
  Real speed = 0;
  for (Real v : sim.state().u)
    speed = std::max(speed, std::fabs(v));
  const Real rest = closest_approach(*m, sim.state());
  std::printf(
      "rod on rod: closest approach %.6f m during the fall, %.6f m at rest, contact "
      "distance %.4f m, tolerance %.4f m, largest speed at the end %.2e m/s\n",
      lowest, rest, 2 * kR, tol, speed);
  // no tunnelling: the surfaces never come closer than the contact layer allows
  EXPECT_GT(lowest, 2 * kR - tol);
  // it lies on the base within the layer, at rest
  EXPECT_LT(rest, 2 * kR + tol);
  EXPECT_LT(speed, 1e-3);
}

TEST(RodContact, JacobianWithActivePairsMatchesFiniteDifferences) {
  const auto m = build_model(crossing_rods(-0.0002, 1e-3));  // starts inside the layer
  Simulator sim(m);
  ASSERT_TRUE(sim.step().ok());
  const Real dt = 2e-3;
  const Real rel = test::residual_fd_error(sim, dt, [](Real) { return Real(1e-8); });
  std::printf("rod contact Jacobian: relative error %.3e\n", rel);
  EXPECT_LT(rel, 1e-6);
}

// A force of the caller's coupling a node of each rod (a spring between them): its Jacobian
// entries land where only the contact pairs couple the rods, in the merged matrix of the direct
// path (the model's pattern and the contact part's, engine/contact_jacobian.h). An entry looked
// up in the model's pattern alone is refused as outside the pattern, and one written at the
// model's slots lands at the wrong entries: central differences see both
TEST(RodContact, ACallersForceBetweenTouchingRodsTakesTheMergedPattern) {
  const auto m = build_model(crossing_rods(-0.0002, 1e-3));
  Simulator sim(m);
  const int a = 10, b = 21 + 10;  // the middle nodes of base and top, where they cross
  constexpr Real k = 40;
  sim.set_force_callback([=](ForceEval& e) {
    for (int c = 0; c < 3; ++c) {
      const Real d = e.q[3 * a + c] - e.q[3 * b + c];
      e.force[3 * a + c] += -k * d;
      e.force[3 * b + c] += k * d;
      e.add_jacobian(3 * a + c, 3 * a + c, -k);
      e.add_jacobian(3 * a + c, 3 * b + c, k);
      e.add_jacobian(3 * b + c, 3 * b + c, -k);
      e.add_jacobian(3 * b + c, 3 * a + c, k);
    }
  });
  // (no stencil of the model couples the two rods)
  const AssemblyPlan& p = m->plan;
  const int ra = p.dof_free[3 * a], rb = p.dof_free[3 * b];
  ASSERT_GE(ra, 0);
  ASSERT_GE(rb, 0);
  EXPECT_FALSE(
      std::binary_search(p.col.begin() + p.row_ptr[ra], p.col.begin() + p.row_ptr[ra + 1], rb));
  for (int s = 0; s < 3; ++s)
    ASSERT_TRUE(sim.step().ok()) << "step " << s;
  const Real rel = test::residual_fd_error(sim, 2e-3, [](Real) { return Real(1e-8); });
  std::printf("rod contact with a caller's spring: relative error %.3e\n", rel);
  EXPECT_LT(rel, 1e-6);
}

TEST(RodContact, ContactFromJson) {
  const std::string text = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
  "rods": [{"name": "r", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 5}}],
  "contact": {"stiffness": 100, "tolerance": TOL}
})";
  std::string ok = text;
  ok.replace(ok.find("TOL"), 3, "1e-3");
  const SceneSpec s = read_scene_text(ok, "c.json", ".");
  EXPECT_TRUE(s.contact.enabled);
  EXPECT_EQ(s.contact.stiffness, 100);
  std::string bad = text;
  bad.replace(bad.find("TOL"), 3, "-1");
  try {
    read_scene_text(bad, "c.json", ".");
    FAIL() << "a negative tolerance was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "c.json");
    EXPECT_NE(e.field().find("contact.tolerance"), std::string::npos) << e.what();
  }
}

// a rod dropped onto a clamped plate (rod-shell pairs) and a small plate dropped onto it
// (shell-shell: vertex-triangle and edge-edge pairs) stop within the contact layer
Real closest_point_triangle(const Model& m, const State& s, int part_a, int part_b) {
  Real best = INFINITY;
  for (int t = 0; t < m.ntri; ++t) {
    if (m.tri_part[t] != part_b) continue;
    for (int n = 0; n < m.nnode; ++n) {
      if (m.node_part[n] != part_a) continue;
      Vec<12> x;
      x.set_segment(0, test::node_position(s, n));
      for (int a = 0; a < 3; ++a)
        x.set_segment(3 + 3 * a, test::node_position(s, m.tri_node[3 * t + a]));
      ContactDistance d;
      point_triangle_distance(x, kEnergy, d, nullptr, nullptr);
      best = std::min(best, d.delta);
    }
  }
  return best;
}

TEST(ShellContact, RodAndPlateLandOnAClampedPlate) {
  const Real h = 2e-3, tol = 5e-4;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const int floor = b.rectangle_shell("floor", vec3(-0.05, -0.05, 0), vec3(0.1, 0, 0),
                                      vec3(0, 0.1, 0), 0.01, true, mat, h);
  b.membrane(floor, MembraneModel::kSprings);
  const PartSpec& fp = b.part(floor);
  for (int i = 0; i < int(fp.nodes.size()); ++i) {
    const Vec3& p = fp.nodes[i];
    if (std::fabs(std::fabs(p[0]) - 0.05) < 1e-12 || std::fabs(std::fabs(p[1]) - 0.05) < 1e-12)
      b.fix_node(floor, i);
  }
  const int rod = b.straight_rod("rod", vec3(-0.03, 0.01, 0.01), vec3(0.03, 0.02, 0.01), 13, mat,
                                 SceneBuilder::circle(1e-3));
  // the tile is turned against the floor's grid (aligned grids make every edge pair parallel)
  const int tile = b.rectangle_shell("tile", vec3(-0.02, -0.03, 0.006), vec3(0.028, 0.01, 0),
                                     vec3(-0.007, 0.019, 0), 0.01, true, mat, h);
  b.membrane(tile, MembraneModel::kSprings);
  ContactSpec c;
  c.tolerance = tol;
  b.contact(c);
  b.gravity(vec3(0, 0, -9.8));
  b.mass_damping(10);
  b.integrator().dt = 2e-3;
  const auto m = build_model(b.build());
  Simulator sim(m);
  Real rod_low = INFINITY, tile_low = INFINITY;
  for (int s = 0; s < 200; ++s) {  // 0.4 s
    const StepReport r = sim.step();
    ASSERT_TRUE(r.ok()) << "step " << s << ": " << to_string(r.status) << " after " << r.iterations
                        << " iterations, residual " << r.residual << " (first " << r.residual0
                        << ")";
    rod_low = std::min(rod_low, closest_point_triangle(*m, sim.state(), rod, floor));
    tile_low = std::min(tile_low, closest_point_triangle(*m, sim.state(), tile, floor));
  }
  std::printf(
      "rod on plate: closest node %.5f m (contact distance %.4f m); tile on plate: "
      "closest vertex %.5f m (contact distance %.4f m); tolerance %.4f m\n",
      rod_low, 1e-3 + h / 2, tile_low, h, tol);
  // node-to-triangle distances bound the contact distance from below only at vertices, which
  // is where these meshes touch: no pass-through, and both came to rest on the floor
  EXPECT_GT(rod_low, 1e-3 + h / 2 - tol);
  EXPECT_GT(tile_low, h - tol);
  EXPECT_LT(rod_low, 1e-3 + h / 2 + 2 * tol);
  EXPECT_LT(tile_low, h + 2 * tol);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
