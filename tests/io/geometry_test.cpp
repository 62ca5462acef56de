#include <gtest/gtest.h>

#include <string>

#include "io_test_util.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;
using test::data_path;
using test::TempDir;

// ---- real MAT-DiSMech files --------------------------------------------------------------

TEST(GeometryFile, ReadsRodsShellAndEdgesOfTheParachute) {
  const GeometryFile g = read_geometry_file(data_path("hexparachute_n4_python.txt"));
  ASSERT_EQ(g.nodes.size(), 22u);
  ASSERT_EQ(g.triangles.size(), 16u);
  ASSERT_EQ(g.edges.size(), 9u);
  EXPECT_EQ(g.nodes[0][0], -0.288675);
  EXPECT_EQ(g.nodes[0][1], 0.0);
  EXPECT_EQ(g.nodes[0][2], -0.1);
  EXPECT_EQ(g.nodes[21][1], 0.5);
  // ids are 0-based after reading: "9, 11, 12" and "1, 2", "7, 8"
  EXPECT_EQ(g.triangles[0], (std::array<int, 3>{8, 10, 11}));
  EXPECT_EQ(g.edges[0], (std::array<int, 2>{0, 1}));
  EXPECT_EQ(g.edges[8], (std::array<int, 2>{6, 7}));
}

TEST(GeometryFile, ReadsAStraightRod) {
  const GeometryFile g = read_geometry_file(data_path("horizontal_rod_n101.txt"));
  ASSERT_EQ(g.nodes.size(), 101u);
  ASSERT_EQ(g.edges.size(), 100u);
  EXPECT_TRUE(g.triangles.empty());
  EXPECT_EQ(g.edges[99], (std::array<int, 2>{99, 100}));
  EXPECT_DOUBLE_EQ(g.nodes[100][0], 0.1);
}

TEST(GeometryFile, ReadsATriangleOnlyPlate) {
  const GeometryFile g = read_geometry_file(data_path("2random_mesh_8.txt"));
  EXPECT_EQ(g.nodes.size(), 56u);
  EXPECT_TRUE(g.edges.empty());
  EXPECT_EQ(g.triangles.size(), 68u);
  for (const auto& t : g.triangles) {
    for (int id : t) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, 56);
    }
  }
}

// ---- layout variants ---------------------------------------------------------------------

TEST(GeometryFile, SectionsAnyOrderAnyCaseWithCommentsAndWhitespace) {
  TempDir dir;
  const std::string path = dir.write("g.txt",
                                     "# a comment line\r\n"
                                     "*EDGES\r\n"
                                     "1 2\r\n"
                                     "  2,\t3   # trailing comment\r\n"
                                     "\r\n"
                                     "*triangles\n"
                                     "1, 2, 3\n"
                                     "  *Nodes  \n"
                                     "0 0 0\n"
                                     "1.0, 0, 0\n"
                                     "+1e0 ,1, -0\n");
  const GeometryFile g = read_geometry_file(path);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2][0], 1.0);
  EXPECT_EQ(g.nodes[2][1], 1.0);
  ASSERT_EQ(g.edges.size(), 2u);
  EXPECT_EQ(g.edges[1], (std::array<int, 2>{1, 2}));
  EXPECT_EQ(g.triangles[0], (std::array<int, 3>{0, 1, 2}));
}

TEST(GeometryFile, EmptySectionsAreAllowedWhenNodesExist) {
  TempDir dir;
  const GeometryFile g = read_geometry_file(dir.write("g.txt", "*Nodes\n0 0 0\n*Edges\n"));
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.edges.empty());
}

// ---- errors ------------------------------------------------------------------------------

struct GeometryCase {
  const char* text;
  int line;
  const char* field;
  const char* message_part;
};

TEST(GeometryFile, ErrorsNameTheFileLineAndSection) {
  const GeometryCase cases[] = {
      {"*Nodes\n0 0 0\n*Beams\n1 2\n", 3, "", "unknown section '*Beams'"},
      {"*Nodes\n0 0 0\n1 0\n", 3, "*Nodes", "expected 3 values (x, y, z), got 2 values"},
      {"*Nodes\n0 0 0\n1 0 0\n*Edges\n1 2 3\n", 5, "*Edges", "expected 2 node ids, got 3"},
      {"*Nodes\n0 0 0\n1 0 0\n*Triangles\n1 2\n", 5, "*Triangles", "expected 3 node ids"},
      {"*Nodes\n0 0 0\n1 zero 0\n", 3, "*Nodes", "'zero' is not a number"},
      {"*Nodes\n0 0 0\n1 nan 0\n", 3, "*Nodes", "non-finite value 'nan'"},
      {"*Nodes\n0 0 0\n1 1e999 0\n", 3, "*Nodes", "out of range"},
      {"*Nodes\n0 0 0\n1 0 0\n*Edges\n1 2\n2 3\n", 6, "*Edges",
       "node id 3 out of range (the file has 2 nodes, ids 1..2)"},
      {"*Edges\n1 0\n*Nodes\n0 0 0\n1 0 0\n", 2, "*Edges", "node id 0 out of range"},
      {"*Nodes\n0 0 0\n1 0 0\n*Edges\n1 1.5\n", 5, "*Edges", "whole number"},
      {"*Nodes\n0 0 0\n1 0 0\n*Edges\n2 2\n", 5, "*Edges", "edge uses node 2 twice"},
      {"*Nodes\n0 0 0\n1 0 0\n2 0 0\n*Triangles\n1 2 1\n", 6, "*Triangles",
       "triangle uses node 1 twice"},
      {"*Nodes\n0 0 0\n*Edges\n*nodes\n1 0 0\n", 4, "*Nodes",
       "duplicate section (first at line 1)"},
      {"0 0 0\n*Nodes\n", 1, "", "data before the first section header"},
      {"*Edges\n1 2\n", 0, "*Nodes", "no nodes"},
      {"*Nodes\n# nothing\n", 1, "*Nodes", "no nodes"},
      {"", 0, "*Nodes", "no nodes"},
  };
  TempDir dir;
  int k = 0;
  for (const GeometryCase& c : cases) {
    const std::string path = dir.write("g" + std::to_string(k++) + ".txt", c.text);
    const InputError e = catch_input_error([&] { read_geometry_file(path); });
    EXPECT_EQ(e.file(), path) << c.text;
    EXPECT_EQ(e.line(), c.line) << c.text;
    EXPECT_EQ(e.field(), c.field) << c.text;
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << c.text << " -> " << e.what();
  }
}

TEST(GeometryFile, MissingFileIsAnInputError) {
  const InputError e = catch_input_error([] { read_geometry_file("/nonexistent/geom.txt"); });
  EXPECT_EQ(e.file(), "/nonexistent/geom.txt");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.message(), "cannot open geometry file");
}

// ---- vector files ------------------------------------------------------------------------

TEST(VectorFile, ReadsDisMechHelixCoordinates) {
  const std::vector<Vec3> x = read_vector_file(data_path("helix_configuration_n106.txt"));
  ASSERT_EQ(x.size(), 106u);
  EXPECT_DOUBLE_EQ(x[0][2], 2.505463280614575808e-02);
  EXPECT_EQ(x[1][0], 0.0);
  EXPECT_DOUBLE_EQ(x[2][1], 4.0e-3);
}

TEST(VectorFile, ReadsDisMechCantileverVelocities) {
  const std::vector<Vec3> v = read_vector_file(data_path("cantilever_init_velocity_n201.txt"));
  ASSERT_EQ(v.size(), 201u);
  EXPECT_EQ(v[0][2], 0.0);
  EXPECT_DOUBLE_EQ(v[1][2], 2.192467698388455932e-07);
  for (const Vec3& u : v) {
    EXPECT_EQ(u[0], 0.0);
  }
}

TEST(VectorFile, CommasCommentsAndBlankLines) {
  TempDir dir;
  const std::vector<Vec3> x = read_vector_file(dir.write("v.txt", "# v\n1,2,3\n\n 4 5 6 \n"));
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[1][2], 6);
}

TEST(VectorFile, ErrorsNameTheLine) {
  TempDir dir;
  std::string path = dir.write("a.txt", "1 2 3\n4 5\n");
  InputError e = catch_input_error([&] { read_vector_file(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(), "expected 3 values per line, got 2");

  path = dir.write("b.txt", "1 2 3\n\n4 5 x6\n");
  e = catch_input_error([&] { read_vector_file(path); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message(), "'x6' is not a number");

  path = dir.write("c.txt", "# only a comment\n");
  e = catch_input_error([&] { read_vector_file(path); });
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.message(), "the file has no data rows");

  e = catch_input_error([&] { read_vector_file(dir.path() + "/missing.txt"); });
  EXPECT_EQ(e.message(), "cannot open file");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
