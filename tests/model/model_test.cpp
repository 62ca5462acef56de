// Model building: counts, masses, orientation signs, joints, per-spring stiffness overrides,
// and the errors that need the assembled structure to see.

#include "slender/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

SceneBuilder rod_scene(int nodes, Real length = 1, bool closed = false) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  if (closed) {
    std::vector<Vec3> pts;
    for (int i = 0; i < nodes; ++i) {
      const Real a = 2 * kPi * i / nodes;
      pts.push_back(vec3(std::cos(a), std::sin(a), 0));
    }
    b.polyline_rod("ring", pts, mat, SceneBuilder::circle(0.01), true);
  } else {
    b.straight_rod("rod", vec3(0, 0, 0), vec3(length, 0, 0), nodes, mat,
                   SceneBuilder::circle(0.01));
  }
  return b;
}

TEST(Model, CountsAndMassOfAStraightRod) {
  const auto m = build_model(rod_scene(11).build());
  EXPECT_EQ(m->nnode, 11);
  EXPECT_EQ(m->nedge, 10);
  EXPECT_EQ(m->nbend, 9);
  EXPECT_EQ(m->ndof, 3 * 11 + 10);
  Real mass = 0;
  for (Real v : m->node_mass)
    mass += v;
  // rho A L, exactly up to round-off
  EXPECT_NEAR(mass, 1000 * kPi * 1e-4 * 1.0, 1e-12);
  for (Real s : m->bend_sign)
    EXPECT_EQ(s, 1);  // a plain rod needs no flips
  // a straight rod is stress-free with zero natural curvature
  for (Real k : m->bend_kappa_bar)
    EXPECT_NEAR(k, 0, 1e-14);
}

TEST(Model, ClosedRodHasABendAtEveryNode) {
  const auto m = build_model(rod_scene(12, 1, true).build());
  EXPECT_EQ(m->nedge, 12);
  EXPECT_EQ(m->nbend, 12);
  // a regular 12-gon: turning angle 2 pi / 12 at every node, kappa = 2 tan(angle / 2)
  for (int k = 0; k < m->nbend; ++k) {
    const Real kappa = std::hypot(m->bend_kappa_bar[2 * k], m->bend_kappa_bar[2 * k + 1]);
    EXPECT_NEAR(kappa, 2 * std::tan(kPi / 12), 1e-12);
  }
}

// the rest length of rod between two edges, which contact uses to skip near neighbours
TEST(Model, RodGapAlongOpenAndClosedRods) {
  const auto open = build_model(rod_scene(11, 1).build());  // 10 edges of 0.1 m
  EXPECT_NEAR(open->rod_gap(0, 1), 0, 1e-12);
  EXPECT_NEAR(open->rod_gap(2, 5), 0.2, 1e-12);
  EXPECT_NEAR(open->rod_gap(9, 0), 0.8, 1e-12);
  const auto ring = build_model(rod_scene(12, 1, true).build());
  const Real l = 2 * std::sin(kPi / 12);  // edge length of the unit 12-gon
  EXPECT_NEAR(ring->rod_gap(0, 2), l, 1e-12);
  EXPECT_NEAR(ring->rod_gap(0, 11), 0, 1e-12);  // neighbours across the closing node
  EXPECT_NEAR(ring->rod_gap(1, 10), 2 * l, 1e-12);
  // edges of different rods are on no common chain
  SceneBuilder b = rod_scene(5, 1);
  b.straight_rod("other", vec3(0, 1, 0), vec3(1, 1, 0), 5, 0, SceneBuilder::circle(0.01));
  const auto two = build_model(b.build());
  EXPECT_EQ(two->rod_gap(0, 5), -1);
}

TEST(Model, JointsMergeNodesAndPairEveryEdge) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const Vec3 c = vec3(0, 0, 0);
  const Vec3 dirs[3] = {vec3(1, 0, 0), vec3(0, 1, 0), vec3(0, 0, 1)};
  for (int i = 0; i < 3; ++i) {
    // the second arm runs into the centre, so its edge at the joint is flipped
    if (i == 1) {
      b.straight_rod("arm" + std::to_string(i), dirs[i], c, 5, mat, SceneBuilder::circle(0.01));
    } else {
      b.straight_rod("arm" + std::to_string(i), c, dirs[i], 5, mat, SceneBuilder::circle(0.01));
    }
  }
  b.joint({NodeRef{0, 0, {}}, NodeRef{1, -1, {}}, NodeRef{2, 0, {}}});
  const auto m = build_model(b.build());
  EXPECT_EQ(m->nnode, 3 * 5 - 2);
  EXPECT_EQ(m->nbend, 3 * 3 + 3);  // interior nodes plus the 3 pairs at the joint
  int flipped = 0;
  for (Real s : m->bend_sign)
    flipped += s < 0;
  EXPECT_GT(flipped, 0);
}

TEST(Model, JointOfDistantNodesIsAnInputError) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  b.straight_rod("a", vec3(0, 0, 0), vec3(1, 0, 0), 3, mat, SceneBuilder::circle(0.01));
  b.straight_rod("b", vec3(0, 0, 1), vec3(1, 0, 1), 3, mat, SceneBuilder::circle(0.01));
  b.joint({NodeRef{0, 0, {}}, NodeRef{1, 0, {}}});
  EXPECT_THROW(build_model(b.build()), InputError);
}

TEST(Model, JointCollapsingAnEdgeIsAnInputError) {
  // a closed loop of two rods whose joint would merge the two ends of one edge
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  b.polyline_rod("a", {vec3(0, 0, 0), vec3(1e-13, 0, 0), vec3(1, 0, 0)}, mat,
                 SceneBuilder::circle(0.01));
  b.joint({NodeRef{0, 0, {}}, NodeRef{0, 1, {}}});
  try {
    build_model(b.build());
    FAIL() << "a joint that collapses an edge was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("zero length"), std::string::npos) << e.what();
  }
}

TEST(Model, RectangularSectionStiffnesses) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e9, 0.25);
  b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 3, mat, SceneBuilder::rectangle(0.02, 0.01));
  const auto m = build_model(b.build());
  // width 0.02 along m1: kappa1 bends in the t-m1 plane, I1 = h w^3 / 12
  EXPECT_NEAR(m->bend_EI[0], 1e9 * 0.01 * std::pow(0.02, 3) / 12, 1e-9);
  EXPECT_NEAR(m->bend_EI[1], 1e9 * 0.02 * std::pow(0.01, 3) / 12, 1e-9);
  EXPECT_NEAR(m->edge_EA[0], 1e9 * 0.02 * 0.01, 1e-6);
  EXPECT_GT(m->bend_GJ[0], 0);
}

TEST(Model, SpringOverridesReplaceSingleSprings) {
  SceneBuilder b = rod_scene(6);
  b.stretch_spring(0, 2, 123.0);
  b.bend_spring(0, -2, 4.0, -1, 6.0);
  const auto m = build_model(b.build());
  EXPECT_EQ(m->edge_EA[2], 123.0);
  EXPECT_NE(m->edge_EA[1], 123.0);
  // the stencil centred at node 4
  int found = 0;
  for (int k = 0; k < m->nbend; ++k) {
    if (m->bend_node[3 * k + 1] != 4) {
      EXPECT_NE(m->bend_EI[2 * k], 4.0);
      continue;
    }
    ++found;
    EXPECT_EQ(m->bend_EI[2 * k], 4.0);
    EXPECT_NE(m->bend_EI[2 * k + 1], 4.0);  // negative: kept
    EXPECT_EQ(m->bend_GJ[k], 6.0);
  }
  EXPECT_EQ(found, 1);
}

// axial bar, first node fixed, static tip load: elongation sum F l_i / EA_i with one edge's
// EA overridden
TEST(Model, OverriddenStretchSpringCarriesItsLoad) {
  SceneBuilder b = rod_scene(5, 1.0);
  b.stretch_spring(0, 1, 50.0);
  b.fix_node(0, 0);
  for (int i = 0; i < 5; ++i)
    b.fix_dofs(0, i, false, true, true);
  b.fix_twist(0, 0);
  const Real F = 0.5;
  b.point_load(0, -1, vec3(F, 0, 0));
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 1;
  b.integrator().duration = 1;
  const auto m = build_model(b.build());
  Simulator sim(m);
  ASSERT_TRUE(sim.step().ok());
  const Real EA = m->edge_EA[0];
  const Real expected = 1.0 + F * 0.75 / EA + F * 0.25 / 50.0;
  EXPECT_NEAR(sim.state().q[3 * 4], expected, 1e-9);
}

TEST(Model, SpringOverridesFromJson) {
  const std::string text = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 5},
            "springs": {"stretch": [{"edge": -1, "EA": 7}],
                        "bend_twist": [{"node": 2, "GJ": 3}]}}]
})";
  const auto m = build_model(read_scene_text(text, "s.json", "."));
  EXPECT_EQ(m->edge_EA[3], 7.0);
  EXPECT_EQ(m->bend_GJ[1], 3.0);

  const std::string bad = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 5},
            "springs": {"stretch": [{"edge": 9, "EA": 7}]}}]
})";
  try {
    read_scene_text(bad, "s.json", ".");
    FAIL() << "an out-of-range spring edge was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "s.json");
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(e.field().find("springs.stretch[0].edge"), std::string::npos) << e.what();
  }
}

TEST(Model, FixedDofsAreOutsideThePlan) {
  SceneBuilder b = rod_scene(4);
  b.fix_edge(0, 0);
  b.integrator().two_d = true;
  const auto m = build_model(b.build());
  // 2D: x and z of the 2 free nodes
  EXPECT_EQ(m->plan.nfree, 2 * 2);
  for (int i = 0; i < m->ndof; ++i)
    EXPECT_EQ(m->plan.dof_free[i] < 0, m->dof_fixed[i] != 0);
}

// the one list of the model's arrays (stencils/model_arrays.h): every scene's model fits it
// (build_model checks), a model with an array of the wrong length is named with what it holds,
// and state_fits checks a state by the same list
TEST(Model, ArraysFitTheirCountsAndAMisfitIsNamed) {
  for (const char* name : {"parachute.json", "gripper.json", "shell_fold.json"}) {
    const auto m =
        build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name));
    EXPECT_EQ(model_arrays_misfit(*m), "") << name;
    EXPECT_GT(m->ntri + m->nbend, 0);
  }
  Model m = *build_model(rod_scene(11).build());
  EXPECT_EQ(model_arrays_misfit(m), "");
  m.bend_EI.pop_back();
  m.node_dl.push_back(0);
  const std::string misfit = model_arrays_misfit(m);
  EXPECT_NE(misfit.find("bend_EI holds 17 values, not m.nbend x 2 = 18"), std::string::npos)
      << misfit;
  EXPECT_NE(misfit.find("node_dl holds 12 values, not m.nnode x 1 = 11"), std::string::npos)
      << misfit;
  State s = initial_state(m);
  EXPECT_TRUE(state_fits(m, s));
  s.edge_t.pop_back();
  EXPECT_FALSE(state_fits(m, s));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
