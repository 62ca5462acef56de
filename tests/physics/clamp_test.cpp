// A clamp at a node (boundary.clamps, SceneBuilder::clamp; issue 19, item 4): the rod is built in
// at its end node itself, so that a cantilever of nodes from x = 0 to x = L matches
// Euler-Bernoulli with the whole length L, delta = rho g A L^4 / (8 EI), where a clamped first
// edge (fixed_edges) builds it in at that edge's middle and the same mesh deflects as a beam of
// length L - l/2. The clamp works at either end; a node that is not a rod's end, or a shell's
// node, is refused naming the field; part-local node indices are unchanged by the ghost edge.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "error_util.h"
#include "physics_util.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kLength = 0.1, kRadius = 1e-3, kDensity = 1200, kE = 2e9, kGravity = 9.8;
constexpr int kEdges = 20;

Real euler_bernoulli(Real length) {
  const Real A = kPi * kRadius * kRadius, I = kPi * std::pow(kRadius, 4) / 4;
  return kDensity * kGravity * A * std::pow(length, 4) / (8 * kE * I);
}

// the tip's deflection of a beam from `root` to `tip` (kEdges edges) under its own weight,
// clamped at its root node (clamp) or by its root edge (fix_edge), solved statically
Real tip_deflection(Vec3 root, Vec3 tip, bool at_node) {
  SceneBuilder b;
  const int mat = b.material("m", kDensity, kE, 0.5);
  const bool reversed = root[0] > tip[0];
  const int rod = b.straight_rod("beam", reversed ? tip : root, reversed ? root : tip, kEdges + 1,
                                 mat, SceneBuilder::circle(kRadius));
  const int root_node = reversed ? -1 : 0;
  if (at_node) {
    b.clamp(rod, root_node);
  } else {
    b.fix_edge(rod, reversed ? -1 : 0);
  }
  b.gravity(vec3(0, 0, -kGravity));
  const test::StaticSolve s = test::static_solve(b, 2);
  const auto& m = *s.model;
  const int tip_node = m.resolve_node(NodeRef{rod, reversed ? 0 : -1, {}});
  return -test::node_position(s.sim->state(), tip_node)[2];
}

TEST(Clamp, AtANodeTheBeamHasItsWholeLength) {
  const Real theory = euler_bernoulli(kLength);
  const Real at_node = tip_deflection(vec3(0, 0, 0), vec3(kLength, 0, 0), true);
  const Real by_edge = tip_deflection(vec3(0, 0, 0), vec3(kLength, 0, 0), false);
  const Real l = kLength / kEdges;
  std::printf(
      "tip deflection %d edges: clamp at node 0 %.6e m, clamped edge 0 %.6e m; "
      "Euler-Bernoulli L %.6e m, L - l/2 %.6e m\n",
      kEdges, at_node, by_edge, theory, euler_bernoulli(kLength - l / 2));
  EXPECT_NEAR(at_node, theory, 0.01 * theory);
  // the clamped edge builds in at its middle: the beam of L - l/2, 10 % short of L's
  EXPECT_NEAR(by_edge, euler_bernoulli(kLength - l / 2), 0.01 * theory);
  EXPECT_LT(by_edge, 0.93 * theory);
  // at the rod's other end: the same beam, mirrored
  const Real mirrored = tip_deflection(vec3(kLength, 0, 0), vec3(0, 0, 0), true);
  EXPECT_NEAR(mirrored, at_node, 1e-9 * at_node);
}

TEST(Clamp, TheGhostLeavesThePartsIndicesAndTheSceneFormatNamesBadClamps) {
  const std::string scene = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 1e-3,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 5}}],
  "shells": [{"name": "s", "material": "m", "thickness": 1e-3,
              "mesh": {"type": "rectangle", "origin": [0, 0.1, 0], "u": [0.02, 0, 0],
                       "v": [0, 0.02, 0], "edge_length": 0.01}}],
  "boundary": {"clamps": [{"part": "r", "node": NODE}]},
  "forces": {"gravity": [0, 0, -9.8]}
})";
  auto with = [&](const std::string& node) {
    std::string s = scene;
    s.replace(s.find("NODE"), 4, node);
    return s;
  };
  const auto m = build_model(read_scene_text(with("0"), "c.json", ""));
  std::string fixed = with("0");
  const std::string clamp = R"("clamps": [{"part": "r", "node": 0}])";
  fixed.replace(fixed.find(clamp), clamp.size(), R"("fixed_nodes": [{"part": "r", "nodes": [0]}])");
  const auto plain = build_model(read_scene_text(fixed, "c.json", ""));
  EXPECT_EQ(m->nnode, plain->nnode + 1);  // the ghost node
  EXPECT_EQ(m->nedge, plain->nedge + 1);  // the ghost edge
  EXPECT_EQ(m->resolve_node(NodeRef{0, -1, {}}), plain->resolve_node(NodeRef{0, -1, {}}));
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 5));
  EXPECT_EQ(test::node_position(sim.state(), 0)[2], 0);  // the clamped node stays
  EXPECT_LT(test::node_position(sim.state(), 4)[2], 0);  // the tip sags
  // a middle node, a shell's node: errors naming the clamp's node
  for (const char* bad : {"2", "-3"}) {
    const InputError e =
        test::catch_input_error([&] { build_model(read_scene_text(with(bad), "c.json", "")); });
    EXPECT_EQ(e.field(), "boundary.clamps[0].node") << e.what();
    EXPECT_NE(std::string(e.what()).find("is on 2 of its rod edges"), std::string::npos)
        << e.what();
  }
  std::string shell = with("0");
  shell.replace(shell.find(R"("part": "r", "node")"), 11, R"("part": "s")");
  const InputError e =
      test::catch_input_error([&] { build_model(read_scene_text(shell, "c.json", "")); });
  EXPECT_NE(std::string(e.what()).find("on 0 of its rod edges"), std::string::npos) << e.what();
  // a clamp that a motion would move
  std::string moved = with("0");
  moved.replace(moved.find(clamp), clamp.size(),
                clamp + R"(, "motions": [{"part": "r", "nodes": [0], "translation": [0, 0, 0.01],
                           "time": {"type": "ramp", "duration": 1}}])");
  const InputError mv =
      test::catch_input_error([&] { build_model(read_scene_text(moved, "c.json", "")); });
  EXPECT_NE(std::string(mv.what()).find("does not move"), std::string::npos) << mv.what();
  // and from the builder
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.1, 0, 0), 5, mat, SceneBuilder::circle(1e-3));
  b.clamp(rod, 1);
  EXPECT_EQ(test::catch_input_error([&] { b.build(); }).field(), "clamps[0].node");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
