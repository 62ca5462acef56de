// A star of four rods joined at one centre node, built two ways that must be the same structure:
// (a) four straight rods from the centre joined by a SceneBuilder joint, and (b) one network
// read from a MAT-DiSMech geometry file with the nodes in another order and several edges
// running the other way, so the orientation signs of the bend-twist stencils are exercised. Both
// hang from one arm's tip under gravity; their trajectories must agree to round-off.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "physics_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr int kArmNodes = 6;      // nodes per arm, the centre included
constexpr Real kArmLength = 0.1;  // [m]
constexpr int kSteps = 50;
/// the two builds solve the same equations with permuted unknowns and sign-flipped twists, so
/// they differ by round-off only (measured below 1e-12); any bookkeeping error (a wrong sign, a
/// stencil missing at the centre) changes the motion at first order
constexpr Real kSameStructureRelTol = 1e-10;

const Vec3 kCentre = vec3(0.01, -0.02, 0.03);

/// arm directions: non-coplanar, unit, tetrahedral-ish but not symmetric
std::array<Vec3, 4> arm_directions() {
  std::array<Vec3, 4> d = {vec3(1, 1, 1.2), vec3(1, -1, -1), vec3(-1.1, 1, -1), vec3(-1, -0.9, 1)};
  for (Vec3& v : d)
    v = v / norm(v);
  return d;
}

void common_settings(SceneBuilder& b) {
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 0.01;
}

int star_material(SceneBuilder& b) { return b.material("m", 1000, 1e7, 0.5); }
CrossSection star_section() { return SceneBuilder::circle(2e-3); }

/// (a) four rods from the centre, joined; `first` is the arm declared first (its edges, and so
/// the seed of the reference frames, come first), the others follow in order
SceneSpec star_from_rods(int first = 0) {
  SceneBuilder b;
  const int mat = star_material(b);
  const std::array<Vec3, 4> d = arm_directions();
  for (int j = 0; j < 4; ++j) {
    const int k = (first + j) % 4;
    b.straight_rod("arm" + std::to_string(k), kCentre, kCentre + kArmLength * d[k], kArmNodes, mat,
                   star_section());
  }
  b.joint({NodeRef{0, 0, {}}, NodeRef{1, 0, {}}, NodeRef{2, 0, {}}, NodeRef{3, 0, {}}});
  b.fix_node((4 - first) % 4, -1);  // always arm 0's tip
  common_settings(b);
  return b.build();
}

/// (b) the same nodes and edges as one network from a geometry file; returns the scene and
/// writes the file. Nodes: arms 3, 2, 1, 0 (arms 1 and 3 tip first), centre last. Edges: arms 0
/// and 2 running towards the centre, arms 1 and 3 away from it, arm 2 listed tip first.
/// Edge 0 is arm 0's centre edge, as in (a), though reversed (the seed of the frames does not
/// matter either: see FrameSeedDoesNotChangeTheMotion).
SceneSpec star_from_file(const Model& a, const std::string& path, int* fixed_local) {
  // node coordinates exactly as in (a): global node of arm k, local index i
  auto pos = [&a](int k, int i) {
    const int n = a.part_node[a.part_node_adr[k] + i];
    return vec3(a.node_x0[3 * n], a.node_x0[3 * n + 1], a.node_x0[3 * n + 2]);
  };
  std::vector<Vec3> nodes;
  int id[4][kArmNodes];  // 1-based file id of (arm, local index); index 0 is the centre
  for (int k = 3; k >= 0; --k) {
    const bool tip_first = k == 1 || k == 3;
    for (int j = 1; j < kArmNodes; ++j) {
      const int i = tip_first ? kArmNodes - j : j;
      nodes.push_back(pos(k, i));
      id[k][i] = int(nodes.size());
    }
  }
  nodes.push_back(pos(0, 0));
  for (int k = 0; k < 4; ++k)
    id[k][0] = int(nodes.size());
  *fixed_local = id[0][kArmNodes - 1] - 1;

  std::vector<std::array<int, 2>> edges;
  for (const int k : {0, 1, 3, 2}) {
    const bool inward = k == 0 || k == 2;
    for (int j = 0; j + 1 < kArmNodes; ++j) {
      const int i = k == 2 ? kArmNodes - 2 - j : j;  // arm 2 listed from the tip
      edges.push_back(inward ? std::array<int, 2>{id[k][i + 1], id[k][i]}
                             : std::array<int, 2>{id[k][i], id[k][i + 1]});
    }
  }

  std::ofstream f(path);
  f << "*Nodes\n";
  char line[128];
  for (const Vec3& x : nodes) {
    std::snprintf(line, sizeof line, "%.17g, %.17g, %.17g\n", x[0], x[1], x[2]);
    f << line;
  }
  f << "*Edges\n";
  for (const auto& e : edges)
    f << e[0] << ", " << e[1] << "\n";
  f.close();

  SceneBuilder b;
  const int mat = star_material(b);
  const int net = b.geometry_file("star", path, mat, star_section());
  b.fix_node(net, *fixed_local);
  common_settings(b);
  return b.build();
}

/// node of b at the exact initial position of each node of a (-1 where none)
std::vector<int> match_nodes(const Model& a, const Model& b) {
  std::vector<int> match(a.nnode, -1);
  for (int i = 0; i < a.nnode; ++i)
    for (int j = 0; j < b.nnode; ++j) {
      Real d = 0;
      for (int c = 0; c < 3; ++c)
        d = std::max(d, std::fabs(a.node_x0[3 * i + c] - b.node_x0[3 * j + c]));
      if (d == 0) match[i] = j;
    }
  return match;
}

/// steps both simulators kSteps times; returns the largest gap between matched nodes and the
/// largest travel of a node of sa
std::pair<Real, Real> run_and_compare(Simulator& sa, Simulator& sb, const std::vector<int>& match) {
  const Model& ma = sa.model();
  Real err = 0, travel = 0;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_TRUE(sa.step().ok());
    EXPECT_TRUE(sb.step().ok());
    for (int i = 0; i < ma.nnode; ++i) {
      const Vec3 xa = test::node_position(sa.state(), i);
      const Vec3 x0 = vec3(ma.node_x0[3 * i], ma.node_x0[3 * i + 1], ma.node_x0[3 * i + 2]);
      err = std::max(err, norm(xa - test::node_position(sb.state(), match[i])));
      travel = std::max(travel, norm(xa - x0));
    }
  }
  return {err, travel};
}

TEST(StarNetwork, JointRodsAndGeometryFileMoveIdentically) {
  const auto ma = build_model(star_from_rods());
  int fixed_local = -1;
  const std::string path = ::testing::TempDir() + "slender_star_network.txt";
  const auto mb = build_model(star_from_file(*ma, path, &fixed_local));

  // counts: 4 (arm nodes - 1) + 1 nodes; 6 bend stencils at the centre (every pair of arms)
  // plus arm nodes - 2 interior ones per arm
  const int nodes = 4 * (kArmNodes - 1) + 1, edges = 4 * (kArmNodes - 1);
  const int nbend = 6 + 4 * (kArmNodes - 2);
  for (const Model* m : {ma.get(), mb.get()}) {
    EXPECT_EQ(m->nnode, nodes);
    EXPECT_EQ(m->nedge, edges);
    EXPECT_EQ(m->nbend, nbend);
    EXPECT_EQ(m->ndof, 3 * nodes + edges);
    EXPECT_EQ(m->plan.nfree, 3 * (nodes - 1) + edges);
  }
  int centre_bends = 0;
  const int centre_a = ma->part_node[0];
  for (int k = 0; k < ma->nbend; ++k)
    centre_bends += ma->bend_node[3 * k + 1] == centre_a;
  EXPECT_EQ(centre_bends, 6);

  // node of (b) at the initial position of each node of (a)
  const std::vector<int> match = match_nodes(*ma, *mb);
  for (int i = 0; i < ma->nnode; ++i)
    ASSERT_GE(match[i], 0) << "node " << i << " of (a) has no twin in (b)";
  // the reordering is real: not every node keeps its number
  int moved = 0;
  for (int i = 0; i < ma->nnode; ++i)
    moved += match[i] != i;
  EXPECT_GT(moved, 0);

  Simulator sa(ma), sb(mb);
  const auto [err, travel] = run_and_compare(sa, sb, match);
  const Energies ea = sa.energies(), eb = sb.energies();
  std::printf(
      "star network: largest node travel %.6e m, largest (a)-(b) node gap %.3e m (relative "
      "%.3e); energies (a) bend %.9e twist %.9e stretch %.9e, (b) bend %.9e twist %.9e stretch "
      "%.9e J\n",
      travel, err, err / travel, ea.bend, ea.twist, ea.stretch, eb.bend, eb.twist, eb.stretch);
  ::testing::Test::RecordProperty("relative_gap", std::to_string(err / travel));
  // the star must really swing and bend, or the comparison would be empty
  EXPECT_GT(travel, 0.01);
  EXPECT_GT(ea.bend, 0);
  EXPECT_LT(err / travel, kSameStructureRelTol);
  const Real e_scale = ea.bend + ea.twist + ea.stretch;
  EXPECT_NEAR(ea.bend, eb.bend, kSameStructureRelTol * e_scale);
  EXPECT_NEAR(ea.twist, eb.twist, kSameStructureRelTol * e_scale);
  EXPECT_NEAR(ea.stretch, eb.stretch, kSameStructureRelTol * e_scale);
  EXPECT_NEAR(ea.total(), eb.total(), kSameStructureRelTol * std::fabs(ea.total()));
}

// At a node where three or more edges meet, the initial reference frames of some pairs differ
// by a holonomy angle that depends on the edge the frames were propagated from. The bend-twist
// stencil measures curvature with that offset removed, so the motion must not depend on it:
// the same star with its arms declared in another order (another seed) moves identically.
TEST(StarNetwork, FrameSeedDoesNotChangeTheMotion) {
  const auto ma = build_model(star_from_rods(0));
  const auto mb = build_model(star_from_rods(2));
  // the offsets are really there: some centre pair starts with a large reference twist
  Real largest_offset = 0;
  for (Real v : ma->bend_frame_offset)
    largest_offset = std::max(largest_offset, std::fabs(v));
  EXPECT_GT(largest_offset, 0.1);

  const std::vector<int> match = match_nodes(*ma, *mb);
  for (int i = 0; i < ma->nnode; ++i)
    ASSERT_GE(match[i], 0);

  Simulator sa(ma), sb(mb);
  const auto [err, travel] = run_and_compare(sa, sb, match);
  std::printf(
      "star network, frames seeded on arm 0 vs arm 2: largest node gap %.3e m of %.3e "
      "m travel\n",
      err, travel);
  EXPECT_GT(travel, 0.01);
  EXPECT_LT(err / travel, kSameStructureRelTol);
  EXPECT_NEAR(sa.energies().bend, sb.energies().bend, kSameStructureRelTol * sa.energies().bend);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
