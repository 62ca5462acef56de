// Geometry given in place in a scene (issue 19, scenes from Python): a network's "nodes",
// "edges" and "triangles", and a shell's {"type": "mesh", "nodes", "triangles"}. Each reads the
// same part as the file it replaces, and each bad entry is an error naming its line and field.

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "io_test_util.h"
#include "slender/builder.h"
#include "slender/model.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;
using test::data_path;

const char* const kFile = "inline.json";

// a scene whose network and shell are given in place, from `net` and `mesh` (JSON members)
std::string scene(const std::string& net, const std::string& mesh) {
  return std::string(R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.3}],
  "networks": [{"name": "net", "material": "m", "radius": 1e-3,
)") + net +
         R"(}],
  "shells": [{"name": "sheet", "material": "m", "thickness": 1e-3,
    "mesh": {)" +
         mesh + R"(}}],
  "boundary": {"fixed_nodes": [{"part": "net", "nodes": [0]}, {"part": "sheet", "nodes": [0, 1]}]}
})";
}

const char* const kNet =
    R"("nodes": [[0, 0, 0], [0.1, 0, 0], [0.2, 0, 0], [0.1, 0.1, 0]],
    "edges": [[0, 1], [1, 2], [1, 3]])";
const char* const kMesh =
    R"("type": "mesh", "nodes": [[0, 0, 1], [0.1, 0, 1], [0, 0.1, 1], [0.1, 0.1, 1]],
    "triangles": [[0, 1, 2], [1, 3, 2]])";

TEST(InlineGeometry, NetworkAndMeshAreReadAsGiven) {
  const SceneSpec s = read_scene_text(scene(kNet, kMesh), kFile, "");
  ASSERT_EQ(s.parts.size(), 2u);
  const PartSpec& net = s.parts[0];
  EXPECT_FALSE(net.is_rod);
  ASSERT_EQ(net.nodes.size(), 4u);
  EXPECT_EQ(net.nodes[3][1], 0.1);
  EXPECT_EQ(net.edges, (std::vector<std::array<int, 2>>{{0, 1}, {1, 2}, {1, 3}}));
  EXPECT_TRUE(net.triangles.empty());
  const PartSpec& sheet = s.parts[1];
  EXPECT_FALSE(sheet.is_rod);
  ASSERT_EQ(sheet.nodes.size(), 4u);
  EXPECT_EQ(sheet.nodes[1][2], 1.0);
  EXPECT_EQ(sheet.triangles, (std::vector<std::array<int, 3>>{{0, 1, 2}, {1, 3, 2}}));
  EXPECT_TRUE(sheet.edges.empty());
  // and a model is built from it
  const auto m = build_model(s);
  EXPECT_EQ(m->nnode, 8);
  EXPECT_EQ(m->nedge, 3);
}

// the C++ builder's network and mesh_shell make the same parts as the JSON in place
TEST(InlineGeometry, TheBuilderMakesTheSameParts) {
  const SceneSpec s = read_scene_text(scene(kNet, kMesh), kFile, "");
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  b.network("net", {{{0, 0, 0}}, {{0.1, 0, 0}}, {{0.2, 0, 0}}, {{0.1, 0.1, 0}}},
            {{0, 1}, {1, 2}, {1, 3}}, m, SceneBuilder::circle(1e-3));
  b.mesh_shell("sheet", {{{0, 0, 1}}, {{0.1, 0, 1}}, {{0, 0.1, 1}}, {{0.1, 0.1, 1}}},
               {{0, 1, 2}, {1, 3, 2}}, m, 1e-3);
  const SceneSpec& c = b.spec();
  ASSERT_EQ(c.parts.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const PartSpec &a = s.parts[i], &d = c.parts[i];
    EXPECT_EQ(a.name, d.name);
    EXPECT_EQ(a.is_rod, d.is_rod);
    ASSERT_EQ(a.nodes.size(), d.nodes.size());
    for (size_t k = 0; k < a.nodes.size(); ++k)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(a.nodes[k][j], d.nodes[k][j]);
    EXPECT_EQ(a.edges, d.edges);
    EXPECT_EQ(a.triangles, d.triangles);
    EXPECT_EQ(a.thickness, d.thickness);
    EXPECT_EQ(a.bending, d.bending);
  }
}

// the MAT-DiSMech parachute (rods and triangles) in place reads as the file does
TEST(InlineGeometry, TheParachuteInPlaceEqualsItsGeometryFile) {
  const GeometryFile g = read_geometry_file(data_path("hexparachute_n4_python.txt"));
  std::ostringstream net;
  net.precision(17);
  net << "\"thickness\": 1e-3, \"nodes\": [";
  for (size_t i = 0; i < g.nodes.size(); ++i)
    net << (i ? ", " : "") << '[' << g.nodes[i][0] << ", " << g.nodes[i][1] << ", " << g.nodes[i][2]
        << ']';
  net << "], \"edges\": [";
  for (size_t i = 0; i < g.edges.size(); ++i)
    net << (i ? ", " : "") << '[' << g.edges[i][0] << ", " << g.edges[i][1] << ']';
  net << "], \"triangles\": [";
  for (size_t i = 0; i < g.triangles.size(); ++i)
    net << (i ? ", " : "") << '[' << g.triangles[i][0] << ", " << g.triangles[i][1] << ", "
        << g.triangles[i][2] << ']';
  net << ']';
  const SceneSpec s = read_scene_text(scene(net.str(), kMesh), kFile, "");
  const PartSpec& p = s.parts[0];
  ASSERT_EQ(p.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(p.nodes[i][k], g.nodes[i][k]);
  EXPECT_EQ(p.edges, g.edges);
  EXPECT_EQ(p.triangles, g.triangles);
  EXPECT_EQ(p.thickness, 1e-3);
}

void expect_error(const std::string& text, const std::string& field, const std::string& part) {
  const InputError e = catch_input_error([&] { build_model(read_scene_text(text, kFile, "")); });
  EXPECT_EQ(e.file(), kFile) << e.what();
  EXPECT_GT(e.line(), 0) << e.what();
  EXPECT_EQ(e.field(), field) << e.what();
  EXPECT_NE(e.message().find(part), std::string::npos) << e.what();
}

TEST(InlineGeometry, BadEntriesNameTheirField) {
  // a row of the wrong length
  expect_error(scene(R"("nodes": [[0, 0, 0], [0.1, 0, 0]], "edges": [[0, 1, 2]])", kMesh),
               "networks[0].edges[0]", "expected 2 node indices, got 3");
  expect_error(scene(kNet, R"("type": "mesh", "nodes": [[0, 0, 1], [0.1, 0, 1], [0, 0.1, 1]],
    "triangles": [[0, 1]])"),
               "shells[0].mesh.triangles[0]", "expected 3 node indices, got 2");
  // a mesh with no triangles is told so (issue 49, item 10: it was told that only shells have a
  // thickness)
  expect_error(scene(kNet, R"("type": "mesh", "nodes": [[0, 0, 1], [0.1, 0, 1], [0, 0.1, 1]],
    "triangles": [])"),
               "shells[0].mesh.triangles", "the mesh has no triangles");
  // an index that is not an integer; a point that is not three numbers
  expect_error(scene(R"("nodes": [[0, 0, 0], [0.1, 0, 0]], "edges": [[0, 1.5]])", kMesh),
               "networks[0].edges[0][1]", "integer");
  expect_error(scene(R"("nodes": [[0, 0, 0], [0.1, 0]], "edges": [[0, 1]])", kMesh),
               "networks[0].nodes[1]", "3");
  // a file and nodes, or neither; edges beside a file
  expect_error(scene(R"("file": "x.txt", "nodes": [[0, 0, 0]])", kMesh), "networks[0].nodes",
               "not both");
  expect_error(scene(R"("stiffness": {"EA": 1})", kMesh), "networks[0].file",
               "a network needs a geometry");
  expect_error(scene(R"("file": "x.txt", "edges": [[0, 1]])", kMesh), "networks[0].edges",
               "only with \"nodes\"");
  // a thickness on a network without triangles
  expect_error(scene(std::string(kNet) + R"(, "thickness": 1e-3)", kMesh), "networks[0].thickness",
               "only for networks with \"triangles\"");
  // an unknown key of the in-place mesh
  expect_error(scene(kNet, std::string(kMesh) + R"(, "edges": [[0, 1]])"), "shells[0].mesh.edges",
               "unknown field");
  // out-of-range indices are validate_scene's (the file and line of the part)
  const InputError e = catch_input_error([&] {
    build_model(read_scene_text(
        scene(R"("nodes": [[0, 0, 0], [0.1, 0, 0]], "edges": [[0, 7]])", kMesh), kFile, ""));
  });
  EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
