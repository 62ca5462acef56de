// Distributed loads on rods and added mass (issue 50, items 7 and 8).
// - forces.distributed_loads: a force per length on a rod part, lumped to its nodes by their
//   Voronoi (rest) lengths within the part: the total is f times the part's length, and a
//   cantilever under a uniform load deflects as Euler-Bernoulli's w L^4 / (8 E I).
// - forces.added_mass: C_a rho_med V per node joins the inertia only, so a hanging rod's axial
//   period grows by sqrt((m + m_a) / m) while its static stretch (its weight in the fluid) stays.
// Bad entries are named by file, line and field.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;

// The nodal forces of a load on a bent rod of unequal edges sum to f times the part's rest
// length (to round-off, 1e-14 relative), and a time function rides along with each.
TEST(DistributedLoad, TotalIsForcePerLengthTimesThePartsLength) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int other =
      b.straight_rod("other", vec3(0, 1, 0), vec3(1, 1, 0), 4, mat, SceneBuilder::circle(1e-3));
  const int rod = b.polyline_rod(
      "rod", {vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0.25, 0.05, 0), vec3(0.3, 0.2, 0.1)}, mat,
      SceneBuilder::circle(1e-3));
  const Vec3 f = vec3(0.3, -2, 5);
  TimeFunction ramp;
  ramp.kind = TimeFunction::Kind::kRamp;
  ramp.ramp_time = 2;
  b.distributed_load(rod, f, ramp);
  (void)other;
  const auto m = build_model(b.build());
  Real length = 0;
  for (int e = 0; e < m->nedge; ++e)
    if (m->edge_part[size_t(e)] == rod) length += m->edge_l_bar[size_t(e)];
  Vec3 total = vec3(0, 0, 0);
  std::vector<Real> fa(size_t(m->ndof), 0);
  add_point_loads(*m, 1, 1, fa.data());  // half way up the ramp
  Vec3 half = vec3(0, 0, 0);
  for (const PointLoad& pl : m->point_loads) {
    total = total + pl.force;
    EXPECT_EQ(m->node_part[size_t(pl.node)], rod) << "node " << pl.node;
  }
  for (int n = 0; n < m->nnode; ++n)
    for (int c = 0; c < 3; ++c)
      half[c] += fa[size_t(3 * n + c)];
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(total[c], f[c] * length, 1e-14 * norm(f) * length) << c;
    EXPECT_NEAR(half[c], 0.5 * f[c] * length, 1e-14 * norm(f) * length) << c;
  }
  std::printf("distributed load: total (%.15g, %.15g, %.15g) N over %.15g m\n", total[0], total[1],
              total[2], length);
}

// V1's cantilever (tests/physics/cantilever_static_test.cpp: edge 0 clamped and centred on
// x = 0, the tip at x = L) under a uniform load w across it instead of its weight (no gravity):
// the tip deflects by w L^4 / (8 E I). delta / L is 0.2 %, so linear theory holds to the
// discretization error (V1 measured 0.02 % there); 1 % catches a load lumped by the wrong lengths
// (the tip's half length given a whole one: +3 %) or a lost component.
TEST(DistributedLoad, CantileverDeflectsAsEulerBernoulli) {
  constexpr Real L = 0.1, r = 1e-3, E = 2e10, w = 0.5;
  constexpr int kEdges = 50;
  const Real I = kPi * r * r * r * r / 4;
  const Real dl = L / (kEdges - 0.5);
  SceneBuilder b;
  const int mat = b.material("m", 1200, E, 0.5);
  const int rod = b.straight_rod("beam", vec3(-dl / 2, 0, 0), vec3(L, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(r));
  b.fix_edge(rod, 0).distributed_load(rod, vec3(0, 0, -w));
  const test::StaticSolve st = test::static_solve(b, 2);
  const Real delta = -test::node_position(st.sim->state(), kEdges)[2];
  const Real eb = w * std::pow(L, 4) / (8 * E * I);
  std::printf("distributed load %g N/m: tip deflection %.6e m, Euler-Bernoulli %.6e m (%+.3f %%)\n",
              w, delta, eb, 100 * (delta / eb - 1));
  EXPECT_NEAR(delta / eb, 1, 0.01);
}

// A rod hanging in water (rho = 2 rho_f, its top node pinned), released unstretched: its tip
// oscillates in the fundamental axial mode about the static stretch (rho - rho_f) g L^2 / (2 E)
// (exact for the lumped chain of linear springs). With added mass C_a = 1 every node's inertial
// mass grows by the same factor (1 + C_a rho_f / rho) = 1.5 and nothing else changes, so the
// period grows by sqrt(1.5) (both runs at the same dt of T0 / 200: the implicit midpoint rule's
// period error (omega dt)^2 / 12 = 8e-5 differs between them by less) and the static stretch
// stays. 1 % catches the added mass left out (-18 %), put on the weight (the stretch changes by
// half) or counted twice.
TEST(AddedMass, PeriodGrowsBySqrtOfTheMassRatioAndTheWeightStays) {
  constexpr Real L = 0.1, r = 1e-3, rho = 2000, rho_f = 1000, E = 1e7, Ca = 1;
  constexpr int kEdges = 20;
  const Real T0 = 4 * L * std::sqrt(rho / E);  // fixed-free rod, fundamental mode
  const Real stretch = (rho - rho_f) * kG * L * L / (2 * E);
  auto scene = [&](Real ca) {
    SceneBuilder b;
    const int mat = b.material("m", rho, E, 0.5);
    const int rod = b.straight_rod("rod", vec3(0, 0, 0), vec3(0, 0, -L), kEdges + 1, mat,
                                   SceneBuilder::circle(r));
    b.fix_node(rod, 0).gravity(vec3(0, 0, -kG)).buoyancy(rho_f);
    if (ca > 0) b.added_mass(ca);
    return b;
  };
  Real period[2], statics[2];
  for (int k = 0; k < 2; ++k) {
    SceneBuilder b = scene(k * Ca);
    b.integrator().kind = IntegratorKind::kImplicitMidpoint;
    b.integrator().dt = T0 / 200;
    b.integrator().duration = 4 * T0;
    Simulator sim(build_model(b.build()));
    test::Series z;
    for (int s = 0; s < 760; ++s) {
      ASSERT_TRUE(sim.step().ok()) << "step " << s;
      z.add(sim.time(), test::node_position(sim.state(), kEdges)[2] + L + stretch);
    }
    period[k] = z.period();
    SceneBuilder bs = scene(k * Ca);
    const test::StaticSolve st = test::static_solve(bs, 1);
    statics[k] = -(test::node_position(st.sim->state(), kEdges)[2] + L);
  }
  const Real ratio = period[1] / period[0], expect = std::sqrt(1 + Ca * rho_f / rho);
  std::printf(
      "added mass: period %.6e s (rod theory %.6e s, %+.3f %%), with C_a = 1 %.6e s: ratio %.6f "
      "vs %.6f (%+.4f %%); static stretch %.6e / %.6e m, theory %.6e m\n",
      period[0], T0, 100 * (period[0] / T0 - 1), period[1], ratio, expect,
      100 * (ratio / expect - 1), statics[0], statics[1], stretch);
  EXPECT_NEAR(period[0] / T0, 1, 0.01);
  EXPECT_NEAR(ratio / expect, 1, 0.01);
  EXPECT_NEAR(statics[0] / stretch, 1, 0.01);
  EXPECT_NEAR(statics[1] / statics[0], 1, 1e-9);
}

// the added mass sits in the model's inertial mass only: dof_mass = node_mass + C_a rho_f V on
// the listed parts' nodes, node_mass (the weight) unchanged
TEST(AddedMass, JoinsTheInertialMassOfTheListedPartsOnly) {
  SceneBuilder b;
  const int mat = b.material("m", 1500, 1e7, 0.5);
  const int a =
      b.straight_rod("a", vec3(0, 0, 0), vec3(0.1, 0, 0), 5, mat, SceneBuilder::circle(1e-3));
  const int c =
      b.straight_rod("c", vec3(0, 1, 0), vec3(0.1, 1, 0), 5, mat, SceneBuilder::circle(1e-3));
  b.buoyancy(1000).added_mass(0.5, {c});
  const auto m = build_model(b.build());
  for (int n = 0; n < m->nnode; ++n) {
    const Real ma = m->node_part[size_t(n)] == c ? 0.5 * 1000 * m->node_volume[size_t(n)] : 0;
    EXPECT_GT(m->node_mass[size_t(n)], 0);
    EXPECT_EQ(m->node_added_mass[size_t(n)], ma) << n;
    EXPECT_EQ(m->dof_mass[size_t(3 * n + 2)], m->node_mass[size_t(n)] + ma) << n;
  }
  (void)a;
}

// ---- the scene fields' errors ----

std::string scene_with(const std::string& forces) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.4}],
  "rods": [{"name": "rod", "material": "m", "radius": 1e-3, "shape": {"type": "straight",
            "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 5}}],
  "shells": [{"name": "sail", "material": "m", "thickness": 1e-3, "mesh":
     {"type": "mesh", "nodes": [[0,0,1],[1,0,1],[0,1,1]], "triangles": [[0,1,2]]}}],
  "forces": )" +
         forces + R"(,
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "loads.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

TEST(DistributedLoadScene, ReadsAndNamesBadEntries) {
  const auto m = build_model(read_scene_text(
      scene_with(R"({"distributed_loads": [{"part": "rod", "force_per_length": [0, 0, -2],
                     "time": {"type": "ramp", "duration": 1}}]})"),
      "loads.json", "."));
  EXPECT_EQ(m->point_loads.size(), 5u);
  EXPECT_EQ(m->point_loads[0].time.kind, TimeFunction::Kind::kRamp);
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"distributed_loads": [{"part": "sail", "force_per_length": [0, 0, 1]}]})",
       "loads.json:7: forces.distributed_loads[0].part: part 'sail' has no rod edges"},
      {R"({"distributed_loads": [{"part": "hull", "force_per_length": [0, 0, 1]}]})",
       "forces.distributed_loads[0].part: unknown part 'hull'"},
      {R"({"distributed_loads": [{"part": "rod"}]})",
       "forces.distributed_loads[0].force_per_length"},
      {R"({"distributed_loads": [{"part": "rod", "force": [0, 0, 1]}]})",
       "forces.distributed_loads[0].force: unknown field"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(scene_with(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
  // the builder's path names the same fields
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 5, mat, SceneBuilder::circle(0.01));
  b.distributed_load(r, vec3(0, std::nan(""), 0));
  try {
    b.build();
    ADD_FAILURE() << "a NaN load was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "forces.distributed_loads[0].force_per_length") << e.what();
  }
}

TEST(AddedMassScene, ReadsAndNamesBadEntries) {
  const auto m = build_model(read_scene_text(scene_with(R"({"buoyancy": {"medium_density": 1000},
                     "added_mass": {"coefficient": 1, "parts": ["rod"]}})"),
                                             "loads.json", "."));
  EXPECT_GT(m->node_added_mass[0], 0);
  EXPECT_EQ(m->node_added_mass[size_t(m->nnode - 1)], 0);  // the sail's node: not listed
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"added_mass": {"coefficient": 1}})", "forces.added_mass: needs forces.buoyancy"},
      {R"({"buoyancy": {"medium_density": 1000}, "added_mass": {"coefficient": -1}})",
       "forces.added_mass.coefficient: must be 0 or more"},
      {R"({"buoyancy": {"medium_density": 1000},
           "added_mass": {"coefficient": 1, "parts": ["rod", "hull"]}})",
       "forces.added_mass.parts[1]: unknown part 'hull'"},
      {R"({"buoyancy": {"medium_density": 1000}, "added_mass": {"coeff": 1}})",
       "forces.added_mass.coeff: unknown field"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(scene_with(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
  // the builder's path names the same fields
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 5, mat, SceneBuilder::circle(0.01));
  for (const auto& c : std::vector<std::pair<Real, std::string>>{
           {std::nan(""), "forces.added_mass.coefficient"}, {1, "forces.added_mass"}}) {
    SceneBuilder bb = b;
    bb.added_mass(c.first, {r});
    try {
      bb.build();
      ADD_FAILURE() << "added mass " << c.first << " was accepted without buoyancy";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), c.second) << e.what();
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
