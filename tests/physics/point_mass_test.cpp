// Point masses at nodes (issue 50, item 1): a payload adds to its node's lumped mass, so that
// gravity loads the structure with its weight and its inertia sets the dynamics. Checked against
// Euler-Bernoulli (a cantilever's tip mass) and the spring-mass period (a mass hanging from a
// rod), and a scene's payload against the same mass given in code.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "physics_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;

// V1's cantilever (tests/physics/cantilever_static_test.cpp: edge 0 clamped and centred on
// x = 0, the tip at x = L) with a tip mass ten times its own: the tip deflects by the sum of the
// self-weight's q L^4 / (8 E I) and the tip load's M g L^3 / (3 E I). delta / L is 0.8 %, so
// linear theory holds to discretization error (V1 measured 0.02 % there); 1 % catches a mass
// left out (-91 %), counted twice (+91 %) or put at the wrong node (a node earlier: -6 %).
TEST(PointMass, TipMassDeflectsACantileverAsEulerBernoulli) {
  constexpr Real L = 0.1, r = 1e-3, rho = 1200, E = 2e10;
  constexpr int kEdges = 50;
  const Real A = kPi * r * r, I = kPi * r * r * r * r / 4;
  const Real M = 10 * rho * A * L;
  const Real dl = L / (kEdges - 0.5);
  SceneBuilder b;
  const int mat = b.material("m", rho, E, 0.5);
  const int rod = b.straight_rod("beam", vec3(-dl / 2, 0, 0), vec3(L, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(r));
  b.fix_edge(rod, 0).gravity(vec3(0, 0, -kG)).point_mass(rod, -1, M);
  const test::StaticSolve st = test::static_solve(b, 2);
  const Real delta = -test::node_position(st.sim->state(), kEdges)[2];
  const Real eb =
      rho * A * kG * std::pow(L, 4) / (8 * E * I) + M * kG * std::pow(L, 3) / (3 * E * I);
  std::printf("tip mass %.3e kg: tip deflection %.6e m, Euler-Bernoulli %.6e m (%+.3f %%)\n", M,
              delta, eb, 100 * (delta / eb - 1));
  EXPECT_NEAR(delta / eb, 1, 0.01);
}

// A mass M hanging from a rod of axial stiffness k = E A / L (its top node pinned) oscillates
// about its static stretch with T = 2 pi sqrt((M + m_rod / 3) / k) (Rayleigh's correction for
// the rod's own mass, m_rod = M / 32 here); released from the unstretched rod, its amplitude is
// the static stretch (M + m_rod / 2) g / k. The implicit midpoint rule at 200 steps a period keeps
// both: its period error is (omega dt)^2 / 12 = 8e-5, and it conserves the energy; the discrete
// rod's distributed mass adds about 0.1 %. 1 % on the period catches the mass left out (T off by a
// factor 2.5) or a lumped mass of the wrong size.
TEST(PointMass, AHangingMassOscillatesAtTheSpringMassPeriod) {
  constexpr Real L = 0.1, r = 1e-3, rho = 1000, E = 1e7;
  const Real A = kPi * r * r, k = E * A / L, m_rod = rho * A * L, M = 32 * m_rod;
  const Real T = 2 * kPi * std::sqrt((M + m_rod / 3) / k);
  SceneBuilder b;
  const int mat = b.material("m", rho, E, 0.5);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0, 0, -L), 11, mat, SceneBuilder::circle(r));
  b.fix_node(rod, 0).gravity(vec3(0, 0, -kG)).point_mass(rod, -1, M);
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  b.integrator().dt = T / 200;
  b.integrator().duration = 3.2 * T;
  Simulator sim(build_model(b.build()));
  const Real stretch = (M + m_rod / 2) * kG / k;  // static (the rod's own weight too): amplitude
  test::Series z;
  Real lowest = 0;
  for (int s = 0; s < 640; ++s) {
    ASSERT_TRUE(sim.step().ok()) << "step " << s;
    const Real dz = test::node_position(sim.state(), 10)[2] + L;  // the tip's displacement
    z.add(sim.time(), dz + stretch);
    lowest = std::min(lowest, dz);
  }
  const Real period = z.period();
  std::printf(
      "hanging mass: period %.6e s, spring-mass %.6e s (%+.3f %%); lowest %.4e m, "
      "twice the static stretch %.4e m\n",
      period, T, 100 * (period / T - 1), -lowest, 2 * stretch);
  EXPECT_NEAR(period / T, 1, 0.01);
  EXPECT_NEAR(-lowest / (2 * stretch), 1, 0.01);
}

// The parachute's payload: the scene's point_masses entry, read from JSON, gives the model the
// builder's point mass gives it (the same lumped masses), and the joint's node carries it.
TEST(PointMass, TheParachuteScenesPayloadIsItsConfluenceNodesMass) {
  const auto m =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/parachute.json"));
  int rope = -1;
  for (size_t p = 0; p < m->scene.parts.size(); ++p)
    if (m->scene.parts[p].name == "rope0") rope = int(p);
  ASSERT_GE(rope, 0);
  const int confluence = m->resolve_node(NodeRef{rope, -1, {}});
  SceneSpec without = m->scene;
  without.point_masses.clear();
  const auto bare = build_model(without);
  EXPECT_NEAR(m->node_mass[confluence] - bare->node_mass[confluence], 0.13, 1e-15);
  Real extra = 0;
  for (int n = 0; n < m->nnode; ++n)
    extra += m->node_mass[n] - bare->node_mass[n];
  EXPECT_NEAR(extra, 0.13, 1e-15);
  EXPECT_EQ(m->dof_mass[3 * confluence + 2], m->node_mass[confluence]);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
