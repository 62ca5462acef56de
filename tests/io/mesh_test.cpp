// Shell meshes: OBJ and PLY readers (every face form, errors with file, line and field), the
// SceneBuilder generators (counts, winding, edge lengths, areas), the triangle checks of
// validate_scene, and "shells" in JSON against the builder.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "slender/builder.h"
#include "slender/model.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;
using test::data_path;
using test::TempDir;
using Tri = std::array<int, 3>;
using Edge = std::array<int, 2>;

// ---- helpers -----------------------------------------------------------------------------

Vec3 triangle_normal(const PartSpec& p, size_t t) {
  const Vec3& x0 = p.nodes[size_t(p.triangles[t][0])];
  return cross(p.nodes[size_t(p.triangles[t][1])] - x0, p.nodes[size_t(p.triangles[t][2])] - x0);
}

// what the tests measure on a generated mesh
struct MeshStats {
  Real area = 0;
  Real min_edge = std::numeric_limits<Real>::max();
  Real max_edge = 0;
  int nedge = 0;      // distinct triangle edges
  int nboundary = 0;  // edges of one triangle
  Real min_node_distance = std::numeric_limits<Real>::max();
  bool every_node_used = true;
};

MeshStats stats(const PartSpec& p) {
  MeshStats s;
  std::map<std::pair<int, int>, int> count;
  std::vector<bool> used(p.nodes.size(), false);
  for (size_t t = 0; t < p.triangles.size(); ++t) {
    s.area += Real(0.5) * norm(triangle_normal(p, t));
    for (int k = 0; k < 3; ++k) {
      const int a = p.triangles[t][size_t(k)], b = p.triangles[t][size_t((k + 1) % 3)];
      ++count[{std::min(a, b), std::max(a, b)}];
      used[size_t(a)] = true;
    }
  }
  for (const auto& [e, n] : count) {
    const Real l = norm(p.nodes[size_t(e.second)] - p.nodes[size_t(e.first)]);
    s.min_edge = std::min(s.min_edge, l);
    s.max_edge = std::max(s.max_edge, l);
    ++s.nedge;
    s.nboundary += n == 1;
  }
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    s.every_node_used = s.every_node_used && used[i];
    for (size_t j = 0; j < i; ++j) {
      s.min_node_distance = std::min(s.min_node_distance, norm(p.nodes[i] - p.nodes[j]));
    }
  }
  return s;
}

// the properties every generated mesh has: a shell part without rod edges that validates,
// every node used, no two nodes closer than a fifth of the target, one connected disk
// (V - E + F = 1), and edges within a factor 2 of the target length
void expect_good_mesh(SceneBuilder& b, int part, Real edge_length) {
  const PartSpec& p = b.part(part);
  EXPECT_FALSE(p.is_rod);
  EXPECT_TRUE(p.edges.empty());
  EXPECT_NO_THROW(b.build());
  const MeshStats s = stats(p);
  EXPECT_TRUE(s.every_node_used);
  EXPECT_GT(s.min_node_distance, 0.2 * edge_length);
  EXPECT_EQ(int(p.nodes.size()) - s.nedge + int(p.triangles.size()), 1);
  EXPECT_GE(s.min_edge, 0.5 * edge_length * (1 - 1e-12));
  EXPECT_LE(s.max_edge, 2 * edge_length);
}

SceneBuilder builder_with_material(int& m) {
  SceneBuilder b;
  m = b.material("cloth", 1000, 1e6, 0.3);
  return b;
}

// ---- readers -----------------------------------------------------------------------------

TEST(MeshFile, ObjFaceFormsQuadsRelativeIndicesAndLines) {
  const GeometryFile g = read_mesh_file(data_path("mesh_forms.obj"));
  ASSERT_EQ(g.nodes.size(), 11u);
  EXPECT_EQ(g.nodes[5][0], 2.0);  // "v 2 1 0 1.0": w dropped
  EXPECT_EQ(g.nodes[8][1], 2.0);  // "v 2 2 0 r g b": colour dropped
  // f v | f v/vt | f v/vt/vn | f v//vn (relative) | quad | quad with relative v/vt
  const std::vector<Tri> want = {{0, 1, 4}, {0, 4, 3}, {1, 2, 5}, {1, 5, 4},
                                 {3, 4, 7}, {3, 7, 6}, {4, 5, 8}, {4, 8, 7}};
  EXPECT_EQ(g.triangles, want);
  EXPECT_EQ(g.edges, (std::vector<Edge>{{1, 9}, {9, 10}}));  // "l 2 10 11"
}

TEST(MeshFile, ObjContinuationLinesAndCrlf) {
  TempDir dir;
  const std::string path =
      dir.write("c.obj", "v 0 0 0\r\nv 1 0 0\r\nv 0 1 \\\r\n 0\r\nf 1 2 \\\r\n3 # tail\r\n");
  const GeometryFile g = read_mesh_file(path);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2][1], 1.0);
  EXPECT_EQ(g.triangles, (std::vector<Tri>{{0, 1, 2}}));
}

// issue 18, fault 10: a UTF-8 byte order mark at the start of a geometry, OBJ, PLY or number
// file is skipped, as the JSON reader skips it (it was an error); the lines count as before
TEST(MeshFile, AByteOrderMarkIsSkippedInEveryTextFormat) {
  TempDir dir;
  const std::string bom = "\xEF\xBB\xBF";
  const GeometryFile obj =
      read_mesh_file(dir.write("b.obj", bom + "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
  EXPECT_EQ(obj.triangles, (std::vector<Tri>{{0, 1, 2}}));
  const GeometryFile txt =
      read_geometry_file(dir.write("b.txt", bom + "*Nodes\n0 0 0\n1 0 0\n*Edges\n1 2\n"));
  EXPECT_EQ(txt.nodes.size(), 2u);
  const GeometryFile ply = read_mesh_file(
      dir.write("b.ply", bom + "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                               "property float y\nproperty float z\nelement face 1\n"
                               "property list uchar int vertex_indices\nend_header\n0 0 0\n"
                               "1 0 0\n0 1 0\n3 0 1 2\n"));
  EXPECT_EQ(ply.triangles, (std::vector<Tri>{{0, 1, 2}}));
  EXPECT_EQ(read_vector_file(dir.write("v.txt", bom + "1 2 3\n")).size(), 1u);
  // a line number after the mark is still the file's own
  const InputError e =
      test::catch_input_error([&] { read_mesh_file(dir.write("e.obj", bom + "v 0 0 0\nv x\n")); });
  EXPECT_EQ(e.line(), 2);
}

TEST(MeshFile, PlyFacesEdgesAndSkippedProperties) {
  const GeometryFile g = read_mesh_file(data_path("mesh_square.ply"));
  ASSERT_EQ(g.nodes.size(), 6u);
  EXPECT_EQ(g.nodes[4][0], 2.0);
  EXPECT_EQ(g.nodes[4][1], 0.5);
  EXPECT_EQ(g.triangles, (std::vector<Tri>{{0, 1, 2}, {0, 2, 3}, {1, 4, 2}}));
  EXPECT_EQ(g.edges, (std::vector<Edge>{{4, 5}}));
}

TEST(MeshFile, TxtGoesToTheGeometryReaderAndCaseIsIgnored) {
  const GeometryFile a = read_mesh_file(data_path("hexparachute_n4_python.txt"));
  const GeometryFile b = read_geometry_file(data_path("hexparachute_n4_python.txt"));
  EXPECT_EQ(a.triangles, b.triangles);
  EXPECT_EQ(a.edges, b.edges);
  TempDir dir;
  const GeometryFile c = read_mesh_file(dir.write("T.OBJ", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
  EXPECT_EQ(c.triangles.size(), 1u);
}

// the error of reading `text` as the file `name` (checked to name that file)
InputError mesh_error(const std::string& name, const std::string& text) {
  TempDir dir;
  const std::string path = dir.write(name, text);
  const InputError e = catch_input_error([&] { read_mesh_file(path); });
  EXPECT_EQ(e.file(), path);
  return e;
}

void expect_mesh_error(const std::string& name,
                       const std::string& text,
                       int line,
                       const std::string& field,
                       const std::string& message) {
  const InputError e = mesh_error(name, text);
  EXPECT_EQ(e.line(), line) << text;
  EXPECT_EQ(e.field(), field) << text;
  EXPECT_NE(e.message().find(message), std::string::npos)
      << "message: " << e.message() << "\nexpected to contain: " << message;
}

TEST(MeshFile, ObjErrorsNameTheLineAndStatement) {
  const std::string v3 = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";  // lines 1-3
  expect_mesh_error("a.obj", "v 0 0 x\n", 1, "v", "'x' is not a number");
  expect_mesh_error("a.obj", "# c\nv 1 2\n", 2, "v",
                    "expected x y z (optionally w, or r g b), got 2");
  expect_mesh_error("a.obj", v3 + "vn 0 1\n", 4, "vn", "expected 3 values, got 2");
  expect_mesh_error("a.obj", v3 + "f 1 2 4\n", 4, "f",
                    "index 4 in '4' out of range (3 vertices defined so far)");
  expect_mesh_error("a.obj", v3 + "f -4 1 2\n", 4, "f",
                    "index -4 in '-4' out of range (3 vertices defined so far)");
  expect_mesh_error("a.obj", v3 + "f 0 1 2\n", 4, "f", "OBJ indices start at 1");
  expect_mesh_error("a.obj", v3 + "\nf 1 2\n", 5, "f", "a face needs at least 3 vertices, got 2");
  expect_mesh_error("a.obj", v3 + "f 1 2 1\n", 4, "f", "face uses vertex 1 twice");
  expect_mesh_error("a.obj", v3 + "f 1.5 2 3\n", 4, "f", "bad index '1.5' in '1.5'");
  expect_mesh_error("a.obj", v3 + "vt 0 0\nf 1/1 2/2 3/1\n", 5, "f",
                    "index 2 in '2/2' out of range (1 texture coordinates (vt) defined so far)");
  expect_mesh_error("a.obj", v3 + "f 1//1 2//1 3//1\n", 4, "f",
                    "out of range (0 normals (vn) defined so far)");
  expect_mesh_error("a.obj", v3 + "f 1/1/1/1 2 3\n", 4, "f", "bad vertex reference '1/1/1/1'");
  expect_mesh_error("a.obj", v3 + "f 1/ 2 3\n", 4, "f", "bad index '' in '1/'");
  expect_mesh_error("a.obj", v3 + "l 1\n", 4, "l", "a line needs at least 2 vertices, got 1");
  expect_mesh_error("a.obj", v3 + "l 1 2 2\n", 4, "l", "line uses vertex 2 twice in a row");
  expect_mesh_error("a.obj", v3 + "l 1//1 2\n", 4, "l", "expected v or v/vt");
  expect_mesh_error("a.obj", v3 + "curv 0 1 1 2\n", 4, "curv", "unsupported OBJ statement 'curv'");
  // a continued statement is reported at its first line
  expect_mesh_error("a.obj", v3 + "f 1 2 \\\n 9\n", 4, "f", "index 9");
  expect_mesh_error("a.obj", "# nothing\n", 0, "v", "no vertices");
}

const std::string kPlyHead =
    "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
    "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
const std::string kPlyVertices = "0 0 0\n1 0 0\n0 1 0\n";  // lines 10-12

TEST(MeshFile, PlyErrorsNameTheLineAndElement) {
  const std::string ok = kPlyHead + kPlyVertices + "3 0 1 2\n";
  EXPECT_EQ(read_mesh_file(TempDir().write("ok.ply", ok)).triangles.size(), 1u);
  expect_mesh_error("a.ply", "ply\nformat binary_little_endian 1.0\nend_header\n", 2, "format",
                    "binary PLY not supported, save as ASCII");
  expect_mesh_error("a.ply", "ply\nformat binary_big_endian 1.0\n", 2, "format",
                    "binary PLY not supported, save as ASCII");
  expect_mesh_error("a.ply", "solid x\n", 1, "header", "not a PLY file");
  expect_mesh_error("a.ply", "ply\nformat ascii 2.0\n", 2, "format", "expected 'format ascii 1.0'");
  expect_mesh_error("a.ply", "ply\nformat ascii 1.0\nelement vertex 1\n", 3, "header",
                    "the file ends before 'end_header'");
  expect_mesh_error("a.ply", "ply\nformat ascii 1.0\nelement vertex -1\n", 3, "element",
                    "count >= 0");
  expect_mesh_error("a.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float128 x\n", 4,
                    "property", "expected 'property <type> <name>'");
  expect_mesh_error("a.ply",
                    "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                    "end_header\n0\n",
                    3, "vertex", "needs properties x, y and z");
  expect_mesh_error("a.ply", "ply\nformat ascii 1.0\nelement face 0\nend_header\n", 4, "header",
                    "no 'element vertex'");
  expect_mesh_error("a.ply", "ply\nelement vertex 0\nend_header\n", 3, "format",
                    "missing 'format ascii 1.0'");
  expect_mesh_error("a.ply", "ply\nformat ascii 1.0\nfoo bar\n", 3, "header",
                    "unknown header line starting with 'foo'");
  expect_mesh_error("a.ply", kPlyHead + "0 0 0\n1 0 a\n", 11, "vertex.z", "'a' is not a number");
  expect_mesh_error("a.ply", kPlyHead + "0 0 0 0\n", 10, "vertex",
                    "expected 3 values on the line, got 4");
  expect_mesh_error("a.ply", kPlyHead + "0 0\n", 10, "vertex.z", "the line ends early");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "2 0 1\n", 13, "face",
                    "a face needs at least 3 vertices, got 2");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1 7\n", 13, "face",
                    "vertex index 7 out of range (the file has 3 vertices, indices 0..2)");
  // issue 18, fault 2: an index far beyond any integer (its message used an undefined cast)
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1 1e300\n", 13, "face",
                    "vertex index 1e+300 out of range (the file has 3 vertices");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1 -1e300\n", 13, "face",
                    "vertex index -1e+300 out of range");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1 1\n", 13, "face",
                    "face uses vertex 1 twice");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1.5 2\n", 13, "face.vertex_indices",
                    "'1.5' is not a whole number");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1\n", 13, "face.vertex_indices",
                    "the line ends early");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices, 12, "face", "the file ends after 0 of 1");
  expect_mesh_error("a.ply", kPlyHead + kPlyVertices + "3 0 1 2\n\n9\n", 15, "",
                    "unexpected data after the last element");
}

TEST(MeshFile, UnknownExtensionAndMissingFile) {
  const InputError e = mesh_error("a.stl", "solid x\n");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.message(), "unknown mesh file type '.stl' (expected .obj, .ply or .txt)");
  const InputError m = catch_input_error([] { read_mesh_file("/no/such/mesh.obj"); });
  EXPECT_EQ(m.file(), "/no/such/mesh.obj");
  EXPECT_EQ(m.message(), "cannot open mesh file");
}

// ---- generators --------------------------------------------------------------------------

TEST(ShellMesh, StructuredRectangle) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const Real L = 0.1;
  const Vec3 u = vec3(1, 0, 0), v = vec3(0, 0.5, 0);
  const int i = b.rectangle_shell("plate", vec3(1, 2, 3), u, v, L, true, m, 1e-3);
  const PartSpec& p = b.part(i);
  EXPECT_EQ(p.nodes.size(), 11u * 6u);  // nu = 10, nv = 5, row-major along u
  EXPECT_EQ(p.triangles.size(), 2u * 10u * 5u);
  EXPECT_EQ(p.thickness, 1e-3);
  EXPECT_EQ(p.bending, ShellBending::kHinge);
  EXPECT_EQ(norm(p.nodes[12] - vec3(1.1, 2.1, 3)), 0.0);  // node j (nu + 1) + i
  expect_good_mesh(b, i, L);
  const MeshStats s = stats(p);
  EXPECT_NEAR(s.area, 0.5, 1e-14);  // exact up to rounding
  EXPECT_EQ(s.nboundary, 2 * (10 + 5));
  EXPECT_NEAR(s.max_edge, L * std::sqrt(2.0), 1e-14);  // the diagonals
  for (size_t t = 0; t < p.triangles.size(); ++t) {
    EXPECT_GT(dot(triangle_normal(p, t), cross(u, v)), 0) << t;
  }
}

TEST(ShellMesh, SkewedRectangleSplitsCellsAlongTheShortDiagonal) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  // 60 degrees between u and v: cells are rhombi with diagonals L and sqrt(3) L
  const Vec3 u = vec3(1, 0, 0), v = vec3(0.5, std::sqrt(3.0) / 2, 0);
  const int i = b.rectangle_shell("rhombus", vec3(0, 0, 0), u, v, 0.1, true, m, 1e-3);
  expect_good_mesh(b, i, 0.1);
  const MeshStats s = stats(b.part(i));
  EXPECT_NEAR(s.max_edge, 0.1, 1e-12);  // every edge has length L: equilateral triangles
  EXPECT_NEAR(s.area, norm(cross(u, v)), 1e-13);
  // and the other way round: the normal flips with the order of the sides
  const int j = b.rectangle_shell("flipped", vec3(0, 0, 0), v, u, 0.1, true, m, 1e-3);
  for (size_t t = 0; t < b.part(j).triangles.size(); ++t) {
    EXPECT_LT(triangle_normal(b.part(j), t)[2], 0);
  }
}

TEST(ShellMesh, UnstructuredRectangleIsATriangularLattice) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const Real L = 0.1;
  const Vec3 u = vec3(0, 1, 0), v = vec3(0, 0, 0.5);
  const int i =
      b.rectangle_shell("lattice", vec3(0, 0, 0), u, v, L, false, m, 2e-3, ShellBending::kMidEdge);
  const PartSpec& p = b.part(i);
  // nu = 10; nv = round(0.5 / (0.1 sqrt(3) / 2)) = 6 strips; rows of 11, 12, 11, ... nodes
  EXPECT_EQ(p.nodes.size(), 4u * 11u + 3u * 12u);
  EXPECT_EQ(p.triangles.size(), 6u * (2u * 10u + 1u));
  EXPECT_EQ(p.bending, ShellBending::kMidEdge);
  expect_good_mesh(b, i, L);
  const MeshStats s = stats(p);
  EXPECT_NEAR(s.area, 0.5, 1e-14);        // covers the rectangle exactly: no jagged ends
  EXPECT_NEAR(s.min_edge, L / 2, 1e-14);  // the half cells closing the shifted rows
  for (size_t t = 0; t < p.triangles.size(); ++t) {
    EXPECT_GT(triangle_normal(p, t)[0], 0) << t;  // u x v = +x
  }

  // interior triangles are near equilateral: edges L and about sqrt(L^2/4 + (0.5/6)^2)
  const Real slanted = std::sqrt(L * L / 4 + (0.5 / 6) * (0.5 / 6));
  EXPECT_NEAR(s.max_edge, std::max(L, slanted), 1e-12);

  // the structured mesh of the same rectangle is a different mesh (p dangles once a part is
  // added)
  const size_t nnode = p.nodes.size(), ntri = p.triangles.size();
  const int j = b.rectangle_shell("grid", vec3(0, 0, 0), u, v, L, true, m, 2e-3);
  EXPECT_NE(b.part(j).nodes.size(), nnode);
  EXPECT_NE(b.part(j).triangles.size(), ntri);
}

TEST(ShellMesh, StripIsALongRectangle) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const int i = b.rectangle_shell("strip", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.01, 0), 0.0025,
                                  false, m, 1e-3);
  expect_good_mesh(b, i, 0.0025);
  EXPECT_NEAR(stats(b.part(i)).area, 1e-3, 1e-17);
}

TEST(ShellMesh, Disk) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const Real R = 1, L = 0.1;
  const Vec3 c = vec3(0, 0, 1), n = vec3(0, 1, 1);
  const int i = b.disk_shell("disk", c, n, R, L, m, 1e-3);
  const PartSpec& p = b.part(i);
  const int nr = 10;
  EXPECT_EQ(int(p.nodes.size()), 1 + 3 * nr * (nr + 1));  // center + 6k per ring
  EXPECT_EQ(int(p.triangles.size()), 6 * nr * nr);
  EXPECT_EQ(norm(p.nodes[0] - c), 0.0);
  expect_good_mesh(b, i, L);
  const MeshStats s = stats(p);
  EXPECT_EQ(s.nboundary, 6 * nr);

  // the mesh is exactly the inscribed 60-gon; its area is within (2 pi / 60)^2 / 6 = 0.18 % of
  // the circle's
  const int rim = 6 * nr;
  EXPECT_NEAR(s.area, 0.5 * rim * R * R * std::sin(2 * kPi / rim), 1e-12);
  EXPECT_NEAR(s.area / (kPi * R * R), 1, 2e-3);
  const Vec3 unit_n = n / norm(n);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    EXPECT_NEAR(dot(p.nodes[k] - c, unit_n), 0, 1e-15);
    EXPECT_LE(norm(p.nodes[k] - c), R * (1 + 1e-15));
  }
  for (size_t k = p.nodes.size() - size_t(rim); k < p.nodes.size(); ++k) {
    EXPECT_NEAR(norm(p.nodes[k] - c), R, 1e-15);
  }
  for (size_t t = 0; t < p.triangles.size(); ++t) {
    EXPECT_GT(dot(triangle_normal(p, t), unit_n), 0) << t;
  }
}

TEST(ShellMesh, HexagonIsSixSubdividedEquilateralSectors) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const Real side = 0.5, L = 0.1;
  const Vec3 c = vec3(1, 1, 1), n = vec3(0, 0, -2);
  const int i = b.hexagon_shell("hex", c, n, side, L, m, 1e-3);
  const PartSpec& p = b.part(i);
  const int nr = 5;
  EXPECT_EQ(int(p.nodes.size()), 1 + 3 * nr * (nr + 1));
  EXPECT_EQ(int(p.triangles.size()), 6 * nr * nr);
  expect_good_mesh(b, i, L);
  const MeshStats s = stats(p);
  EXPECT_NEAR(s.area, 1.5 * std::sqrt(3.0) * side * side, 1e-14);
  EXPECT_NEAR(s.min_edge, L, 1e-14);  // every triangle equilateral with side L
  EXPECT_NEAR(s.max_edge, L, 1e-14);
  EXPECT_EQ(s.nboundary, 6 * nr);
  // the first corner lies along e1: for a normal along z that is x
  const size_t first_corner = size_t(1 + 3 * (nr - 1) * nr);
  EXPECT_NEAR(norm(p.nodes[first_corner] - (c + side * vec3(1, 0, 0))), 0, 1e-15);
  for (size_t t = 0; t < p.triangles.size(); ++t) {
    EXPECT_LT(triangle_normal(p, t)[2], 0) << t;
  }
}

TEST(ShellMesh, HemisphereFacesOutwardWithTheRimOnTheEquator) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const Real R = 1, L = 0.1;
  const Vec3 c = vec3(0.5, 0, 0), a = vec3(1, 0, 0);
  const int i = b.hemisphere_shell("dome", c, a, R, L, m, 1e-3);
  const PartSpec& p = b.part(i);
  expect_good_mesh(b, i, L);
  EXPECT_EQ(norm(p.nodes[0] - (c + R * a)), 0.0);  // the pole
  const MeshStats s = stats(p);
  // rim: round(2 pi R / L) = 63 nodes, the last ring
  const int rim = 63;
  EXPECT_EQ(s.nboundary, rim);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Real h = dot(p.nodes[k] - c, a);
    EXPECT_NEAR(norm(p.nodes[k] - c), R, 1e-15);
    if (k + size_t(rim) >= p.nodes.size()) {
      EXPECT_EQ(h, 0.0) << k;
    } else {
      EXPECT_GT(h, 0.0) << k;
    }
  }
  // the inscribed polyhedron's area is below the hemisphere's: by 0.24 % here (0.06 % at
  // L = 0.05, second order in L / R)
  EXPECT_LT(s.area, 2 * kPi * R * R);
  EXPECT_NEAR(s.area / (2 * kPi * R * R), 1, 5e-3);
  for (size_t t = 0; t < p.triangles.size(); ++t) {
    const Tri& x = p.triangles[t];
    const Vec3 centroid =
        (p.nodes[size_t(x[0])] + p.nodes[size_t(x[1])] + p.nodes[size_t(x[2])]) / 3;
    EXPECT_GT(dot(triangle_normal(p, t), centroid - c), 0) << t;
  }
}

TEST(ShellMesh, CoarseMeshesStayValid) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  // edge length larger than the shape: one cell, one ring
  const int r = b.rectangle_shell("r", vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0), 5, false, m, 1);
  EXPECT_EQ(b.part(r).triangles.size(), 3u);
  const int d = b.disk_shell("d", vec3(0, 0, 0), vec3(0, 0, 1), 1, 5, m, 1);
  EXPECT_EQ(b.part(d).triangles.size(), 6u);
  const int h = b.hemisphere_shell("h", vec3(0, 0, 0), vec3(0, 0, 1), 1, 5, m, 1);
  EXPECT_EQ(b.part(h).triangles.size(), 3u);  // a 3-sided pyramid over the equator
  EXPECT_NO_THROW(b.build());
}

TEST(ShellMesh, GeneratorMisuseNamesTheArgument) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  auto field = [](auto&& f) { return catch_input_error(f).field(); };
  const Vec3 o = vec3(0, 0, 0), x = vec3(1, 0, 0), z = vec3(0, 0, 1);
  EXPECT_EQ(field([&] { b.rectangle_shell("a", o, x, 2 * x, 0.1, true, m, 1); }),
            "rectangle_shell.v");
  EXPECT_EQ(field([&] { b.rectangle_shell("a", o, o, z, 0.1, true, m, 1); }), "rectangle_shell.u");
  EXPECT_EQ(field([&] { b.rectangle_shell("a", o, x, z, -0.1, true, m, 1); }),
            "rectangle_shell.edge_length");
  EXPECT_EQ(field([&] { b.rectangle_shell("a", o, x, z, 1e-9, true, m, 1); }),
            "rectangle_shell.edge_length");  // too many nodes
  EXPECT_EQ(field([&] { b.disk_shell("a", o, o, 1, 0.1, m, 1); }), "disk_shell.normal");
  EXPECT_EQ(field([&] { b.disk_shell("a", o, z, 0, 0.1, m, 1); }), "disk_shell.radius");
  EXPECT_EQ(field([&] { b.hexagon_shell("a", o, z, -1, 0.1, m, 1); }), "hexagon_shell.side");
  EXPECT_EQ(field([&] { b.hexagon_shell("a", vec3(0, kPi / 0.0, 0), z, 1, 0.1, m, 1); }),
            "hexagon_shell.center");
  EXPECT_EQ(field([&] { b.hemisphere_shell("a", o, o, 1, 0.1, m, 1); }), "hemisphere_shell.axis");
  EXPECT_EQ(field([&] { b.hemisphere_shell("a", o, z, 1, 0, m, 1); }),
            "hemisphere_shell.edge_length");
  const InputError e = catch_input_error([&] { b.disk_shell("a", o, z, 1, 1e-5, m, 1); });
  EXPECT_NE(e.message().find("too many nodes"), std::string::npos);
  EXPECT_EQ(b.spec().parts.size(), 0u);  // nothing was added
}

TEST(ShellMesh, MeshFileShellKeepsRodEdges) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const int i = b.mesh_file_shell("plate", data_path("mesh_forms.obj"), m, 1e-3,
                                  ShellBending::kMidEdge, SceneBuilder::circle(1e-3));
  const PartSpec& p = b.part(i);
  EXPECT_FALSE(p.is_rod);
  EXPECT_EQ(p.triangles.size(), 8u);
  EXPECT_EQ(p.edges.size(), 2u);
  EXPECT_EQ(p.section.radius, 1e-3);
  EXPECT_EQ(p.bending, ShellBending::kMidEdge);
  EXPECT_NEAR(stats(p).area, 4, 1e-15);
  const int j = b.mesh_file_shell("square", data_path("mesh_square.ply"), m, 1e-3,
                                  ShellBending::kHinge, SceneBuilder::rectangle(1e-3, 2e-3));
  EXPECT_NEAR(stats(b.part(j)).area, 1.5, 1e-15);
  EXPECT_NO_THROW(b.build());

  // the MAT-DiSMech parachute: canopy triangles and rope edges in one part
  const int k = b.mesh_file_shell("parachute", data_path("hexparachute_n4_python.txt"), m, 1e-3,
                                  ShellBending::kHinge, SceneBuilder::circle(1e-3));
  EXPECT_EQ(b.part(k).triangles.size(), 16u);
  EXPECT_EQ(b.part(k).edges.size(), 9u);
  EXPECT_NO_THROW(b.build());

  // rod edges need their cross-section
  b.part(k).section = CrossSection{};
  const InputError e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "parts[2].radius");
  EXPECT_NE(e.message().find("rod edges besides its triangles"), std::string::npos);

  // a file without triangles is no shell
  TempDir dir;
  const std::string lines = dir.write("l.obj", "v 0 0 0\nv 1 0 0\nl 1 2\n");
  const InputError f = catch_input_error([&] { b.mesh_file_shell("l", lines, m, 1e-3); });
  EXPECT_EQ(f.field(), "mesh_file_shell.path");
  EXPECT_NE(f.message().find("has no triangles"), std::string::npos);
}

// ---- triangle checks of validate_scene ---------------------------------------------------

// the error of building a scene with one part of these nodes and triangles
InputError shell_error(const std::vector<Vec3>& nodes,
                       const std::vector<Tri>& triangles,
                       Real thickness = 1e-3) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const int i = b.network("sheet", nodes, {}, m, CrossSection{});
  b.part(i).triangles = triangles;
  b.part(i).thickness = thickness;
  return catch_input_error([&] { b.build(); });
}

void expect_shell_error(const std::vector<Vec3>& nodes,
                        const std::vector<Tri>& triangles,
                        const std::string& field,
                        const std::string& message) {
  const InputError e = shell_error(nodes, triangles);
  EXPECT_EQ(e.field(), field);
  EXPECT_EQ(e.message(), message);
}

const std::vector<Vec3> kSquare = {vec3(0, 0, 0), vec3(1, 0, 0), vec3(1, 1, 0), vec3(0, 1, 0)};

TEST(ShellValidation, ATriangleOnlyPartIsFine) {
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const int i = b.network("sheet", kSquare, {}, m, CrossSection{});
  b.part(i).triangles = {{0, 1, 2}, {0, 2, 3}};
  b.part(i).thickness = 1e-3;
  EXPECT_NO_THROW(b.build());
}

TEST(ShellValidation, TriangleErrorsNameTheTriangles) {
  expect_shell_error(kSquare, {{0, 1, 5}}, "parts[0]",
                     "triangle 0 (nodes 0, 1, 5): node id 5 out of range (4 nodes)");
  expect_shell_error(kSquare, {{0, 1, 2}, {-1, 1, 2}}, "parts[0]",
                     "triangle 1 (nodes -1, 1, 2): node id -1 out of range (4 nodes)");
  expect_shell_error(kSquare, {{0, 1, 1}}, "parts[0]",
                     "triangle 0 (nodes 0, 1, 1) uses node 1 twice");
  expect_shell_error({vec3(0, 0, 0), vec3(1, 0, 0), vec3(2, 0, 0)}, {{0, 1, 2}}, "parts[0]",
                     "triangle 0 (nodes 0, 1, 2) has zero area (its nodes are collinear or "
                     "coincide)");
  expect_shell_error(kSquare, {{0, 1, 2}, {1, 2, 0}}, "parts[0]",
                     "triangle 1 (nodes 1, 2, 0) repeats triangle 0 (the same three nodes)");
  // three triangles on edge 0-1 (a book with three pages)
  const std::vector<Vec3> book = {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0), vec3(0, -1, 0),
                                  vec3(0, 0, 1)};
  expect_shell_error(book, {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}}, "parts[0]",
                     "edge (nodes 0, 1) is shared by 3 triangles (0, 1, 2): a shell mesh must be "
                     "manifold, with at most 2 triangles per edge");
  // the second triangle of the square wound the other way
  expect_shell_error(kSquare, {{0, 1, 2}, {0, 3, 2}}, "parts[0]",
                     "triangles 0 and 1 are oriented inconsistently: both run along their shared "
                     "edge (nodes 0, 2) from node 2 to node 0, so their normals point to opposite "
                     "sides; flip one of them (reverse its node order)");
}

TEST(ShellValidation, ThicknessAndCrossSection) {
  const InputError t = shell_error(kSquare, {{0, 1, 2}}, 0);
  EXPECT_EQ(t.field(), "parts[0].thickness");
  EXPECT_EQ(t.message(), "a part with triangles (a shell) needs a thickness > 0, got 0");
  EXPECT_EQ(shell_error(kSquare, {{0, 1, 2}}, std::nan("")).field(), "parts[0].thickness");

  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(1, 0, 0), 3, m, SceneBuilder::circle(1));
  b.part(rod).thickness = 1e-3;
  const InputError r = catch_input_error([&] { b.build(); });
  EXPECT_EQ(r.field(), "parts[0].thickness");
  EXPECT_EQ(r.message(), "only parts with triangles (shells) have a thickness");

  SceneBuilder e = builder_with_material(m);
  e.network("empty", kSquare, {}, m, SceneBuilder::circle(1));
  const InputError n = catch_input_error([&] { e.build(); });
  EXPECT_EQ(n.field(), "parts[0]");
  EXPECT_EQ(n.message(), "the part has no rod edges and no triangles");
}

// ---- JSON --------------------------------------------------------------------------------

TEST(ShellJson, MatchesTheBuilder) {
  const std::string text = R"({
    "name": "shells",
    "materials": [
      {"name": "cloth", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.3},
      {"name": "steel", "density": 7850, "youngs_modulus": 2e11, "poisson_ratio": 0.3}],
    "rods": [{"name": "rope", "material": "steel", "radius": 1e-3,
              "shape": {"type": "straight", "start": [0, 0, 2], "end": [0, 0, 3], "nodes": 5}}],
    "networks": [{"name": "parachute", "file": "hexparachute_n4_python.txt", "material": "cloth",
                  "radius": 1e-3, "thickness": 1e-4, "bending": "mid_edge"}],
    "shells": [
      {"name": "plate", "material": "cloth", "thickness": 1e-3,
       "mesh": {"type": "rectangle", "origin": [0, 0, 1], "u": [1, 0, 0], "v": [0, 0.5, 0],
                "edge_length": 0.1}},
      {"name": "lattice", "material": "steel", "thickness": 2e-3, "bending": "mid_edge",
       "mesh": {"type": "rectangle", "u": [1, 0, 0], "v": [0.2, 0.5, 0], "edge_length": 0.1,
                "structured": false}},
      {"name": "disk", "material": "cloth", "thickness": 1e-3, "bending": "hinge",
       "mesh": {"type": "disk", "center": [0, 0, 3], "normal": [0, 0, 1], "radius": 0.5,
                "edge_length": 0.1}},
      {"name": "hex", "material": "cloth", "thickness": 1e-3,
       "mesh": {"type": "hexagon", "normal": [1, 1, 0], "side": 0.3, "edge_length": 0.1}},
      {"name": "dome", "material": "cloth", "thickness": 1e-3, "initial_velocity": [0, 0, 1],
       "mesh": {"type": "hemisphere", "center": [0, 0, -1], "axis": [0, 0, 1], "radius": 0.5,
                "edge_length": 0.1}},
      {"name": "obj", "material": "cloth", "thickness": 1e-3, "radius": 2e-3,
       "mesh": {"type": "file", "path": "mesh_forms.obj"}},
      {"name": "ply", "material": "cloth", "thickness": 1e-3,
       "cross_section": {"width": 1e-3, "height": 2e-3},
       "mesh": {"type": "file", "path": "mesh_square.ply"}}
    ]
  })";
  const SceneSpec js = read_scene_text(text, "shells.json", SLENDER_TEST_DATA_DIR);

  SceneBuilder b;
  b.name("shells");
  const int cloth = b.material("cloth", 1000, 1e6, 0.3);
  const int steel = b.material("steel", 7850, 2e11, 0.3);
  b.straight_rod("rope", vec3(0, 0, 2), vec3(0, 0, 3), 5, steel, SceneBuilder::circle(1e-3));
  b.mesh_file_shell("parachute", data_path("hexparachute_n4_python.txt"), cloth, 1e-4,
                    ShellBending::kMidEdge, SceneBuilder::circle(1e-3));
  b.rectangle_shell("plate", vec3(0, 0, 1), vec3(1, 0, 0), vec3(0, 0.5, 0), 0.1, true, cloth, 1e-3);
  b.rectangle_shell("lattice", vec3(0, 0, 0), vec3(1, 0, 0), vec3(0.2, 0.5, 0), 0.1, false, steel,
                    2e-3, ShellBending::kMidEdge);
  b.disk_shell("disk", vec3(0, 0, 3), vec3(0, 0, 1), 0.5, 0.1, cloth, 1e-3);
  b.hexagon_shell("hex", vec3(0, 0, 0), vec3(1, 1, 0), 0.3, 0.1, cloth, 1e-3);
  const int dome = b.hemisphere_shell("dome", vec3(0, 0, -1), vec3(0, 0, 1), 0.5, 0.1, cloth, 1e-3);
  for (int k = 0; k < int(b.part(dome).nodes.size()); ++k) {
    b.initial_velocity(dome, k, vec3(0, 0, 1));
  }
  b.mesh_file_shell("obj", data_path("mesh_forms.obj"), cloth, 1e-3, ShellBending::kHinge,
                    SceneBuilder::circle(2e-3));
  b.mesh_file_shell("ply", data_path("mesh_square.ply"), cloth, 1e-3, ShellBending::kHinge,
                    SceneBuilder::rectangle(1e-3, 2e-3));
  const SceneSpec bs = b.build();

  // parts: rods, networks, shells
  ASSERT_EQ(js.parts.size(), bs.parts.size());
  const char* const order[] = {"rope", "parachute", "plate", "lattice", "disk",
                               "hex",  "dome",      "obj",   "ply"};
  for (size_t i = 0; i < bs.parts.size(); ++i) {
    const PartSpec& a = js.parts[i];
    const PartSpec& c = bs.parts[i];
    EXPECT_EQ(a.name, order[i]);
    EXPECT_EQ(a.name, c.name);
    ASSERT_EQ(a.nodes.size(), c.nodes.size()) << a.name;
    for (size_t k = 0; k < a.nodes.size(); ++k) {
      for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(a.nodes[k][d], c.nodes[k][d]) << a.name;  // bitwise
      }
    }
    EXPECT_EQ(a.edges, c.edges) << a.name;
    EXPECT_EQ(a.triangles, c.triangles) << a.name;
    EXPECT_EQ(a.material, c.material) << a.name;
    EXPECT_EQ(a.is_rod, c.is_rod) << a.name;
    EXPECT_EQ(a.thickness, c.thickness) << a.name;
    EXPECT_EQ(a.bending, c.bending) << a.name;
    EXPECT_EQ(a.section.kind, c.section.kind) << a.name;
    EXPECT_EQ(a.section.radius, c.section.radius) << a.name;
    EXPECT_EQ(a.section.width, c.section.width) << a.name;
    EXPECT_EQ(a.section.height, c.section.height) << a.name;
  }
  EXPECT_EQ(js.parts[4].loc.field, "shells[2]");
  EXPECT_EQ(js.parts[4].loc.line, 17);
  ASSERT_EQ(js.initial_velocities.size(), bs.initial_velocities.size());
  EXPECT_EQ(js.initial_velocities[0].first.part, dome);
}

// a scene whose only part is the shell {entry (line 4), "mesh": mesh (line 5)}
std::string shell_scene(const std::string& entry, const std::string& mesh) {
  return "{\n"
         R"(  "materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}],)"
         "\n  \"shells\": [\n"
         "    {\"name\": \"s\", \"material\": \"m\"" +
         entry + ",\n      \"mesh\": " + mesh + "}\n  ]\n}\n";
}
const std::string kDisk =
    R"({"type": "disk", "normal": [0, 0, 1], "radius": 1, "edge_length": 0.5})";

void expect_scene_error(const std::string& text,
                        const std::string& file,
                        int line,
                        const std::string& field,
                        const std::string& message) {
  const InputError e =
      catch_input_error([&] { read_scene_text(text, "s.json", SLENDER_TEST_DATA_DIR); });
  EXPECT_EQ(e.file(), file) << text;
  EXPECT_EQ(e.line(), line) << text;
  EXPECT_EQ(e.field(), field) << text;
  EXPECT_NE(e.message().find(message), std::string::npos)
      << "message: " << e.message() << "\nexpected to contain: " << message;
}

TEST(ShellJson, ErrorsNameTheShellAndKey) {
  const std::string h = ", \"thickness\": 1e-3";
  EXPECT_NO_THROW(read_scene_text(shell_scene(h, kDisk), "s.json", ""));
  expect_scene_error(shell_scene("", kDisk), "s.json", 4, "shells[0].thickness",
                     "missing required field");
  expect_scene_error(shell_scene(", \"thickness\": -1", kDisk), "s.json", 4, "shells[0].thickness",
                     "a part with triangles (a shell) needs a thickness > 0, got -1");
  expect_scene_error(shell_scene(h + ", \"bending\": \"plate\"", kDisk), "s.json", 4,
                     "shells[0].bending",
                     "unknown bending model 'plate' (expected hinge or mid_edge)");
  expect_scene_error(shell_scene(h + ", \"radius\": 1e-3", kDisk), "s.json", 4, "shells[0].radius",
                     "only for mesh files with rod edges (this mesh has none)");
  expect_scene_error(shell_scene(h + ", \"stiffness\": {}", kDisk), "s.json", 4,
                     "shells[0].stiffness", "unknown field");
  expect_scene_error(
      shell_scene(h, R"({"type": "cone"})"), "s.json", 5, "shells[0].mesh.type",
      "unknown mesh type 'cone' (expected rectangle, disk, hexagon, hemisphere, file or "
      "mesh)");
  expect_scene_error(shell_scene(h, R"({"type": "disk", "normal": [0, 0, 1], "radius": -1,
                                        "edge_length": 0.5})"),
                     "s.json", 5, "shells[0].mesh.radius", "must be positive and finite");
  expect_scene_error(shell_scene(h, R"({"type": "hexagon", "normal": [0, 0, 0], "side": 1,
                                        "edge_length": 0.5})"),
                     "s.json", 5, "shells[0].mesh.normal", "must be a nonzero vector");
  expect_scene_error(shell_scene(h, R"({"type": "rectangle", "u": [1, 0, 0], "v": [2, 0, 0],
                                        "edge_length": 0.5})"),
                     "s.json", 5, "shells[0].mesh.v", "u and v are parallel");
  expect_scene_error(shell_scene(h, R"({"type": "hemisphere", "axis": [0, 0, 1], "radius": 1,
                                        "edge_length": 1e-6})"),
                     "s.json", 6, "shells[0].mesh.edge_length", "too many nodes");
  expect_scene_error(shell_scene(h, R"({"type": "disk", "normal": [0, 0, 1], "raduis": 1})"),
                     "s.json", 5, "shells[0].mesh.raduis", "unknown field");
  expect_scene_error(shell_scene(h, R"({"type": "file", "path": "nope.obj"})"), "s.json", 5,
                     "shells[0].mesh.path", "cannot open file 'nope.obj'");
}

// "hinge_stiffness": papers (the default) or geometric, for hinge bending only (issue 53)
TEST(ShellJson, HingeStiffnessIsReadAndChecked) {
  const std::string h = ", \"thickness\": 1e-3";
  EXPECT_EQ(read_scene_text(shell_scene(h, kDisk), "s.json", "").parts[0].hinge_stiffness,
            HingeStiffness::kPapers);
  EXPECT_EQ(
      read_scene_text(shell_scene(h + ", \"hinge_stiffness\": \"geometric\"", kDisk), "s.json", "")
          .parts[0]
          .hinge_stiffness,
      HingeStiffness::kGeometric);
  expect_scene_error(shell_scene(h + ", \"hinge_stiffness\": \"uniform\"", kDisk), "s.json", 4,
                     "shells[0].hinge_stiffness",
                     "unknown hinge stiffness 'uniform' (expected papers or geometric)");
  expect_scene_error(
      shell_scene(h + ", \"bending\": \"mid_edge\", \"hinge_stiffness\": \"geometric\"", kDisk),
      "s.json", 4, "shells[0].hinge_stiffness", "only for \"bending\": \"hinge\"");
  // and the builder's parts are checked the same way
  int m = 0;
  SceneBuilder b = builder_with_material(m);
  const int i =
      b.disk_shell("d", vec3(0, 0, 0), vec3(0, 0, 1), 1, 0.5, m, 1e-3, ShellBending::kMidEdge);
  b.part(i).hinge_stiffness = HingeStiffness::kGeometric;
  const InputError e = catch_input_error([&] { b.build(); });
  EXPECT_NE(e.message().find("only for shells with hinge bending"), std::string::npos)
      << e.message();
}

TEST(ShellJson, MeshFileErrors) {
  TempDir dir;
  const std::string h = ", \"thickness\": 1e-3";
  auto read = [&](const std::string& entry, const std::string& mesh) {
    return catch_input_error(
        [&] { read_scene_text(shell_scene(entry, mesh), "s.json", dir.path()); });
  };
  const std::string quad = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";

  // an error inside the mesh file names that file and its line
  const std::string bad = dir.write("bad.obj", quad + "f 1 2 5\n");
  const InputError b = read(h, R"({"type": "file", "path": "bad.obj"})");
  EXPECT_EQ(b.file(), bad);
  EXPECT_EQ(b.line(), 5);
  EXPECT_EQ(b.field(), "f");

  // rod edges in the file need a cross-section, and only then
  dir.write("rods.obj", quad + "f 1 2 3 4\nl 3 4\n");
  const InputError r = read(h, R"({"type": "file", "path": "rods.obj"})");
  EXPECT_EQ(r.line(), 4);
  EXPECT_EQ(r.field(), "shells[0].radius");
  EXPECT_EQ(r.message(),
            "missing required field (or give cross_section): the mesh file has rod edges");
  EXPECT_NO_THROW(read_scene_text(
      shell_scene(h + ", \"radius\": 1e-3", R"({"type": "file", "path": "rods.obj"})"), "s.json",
      dir.path()));

  // a file without triangles
  dir.write("lines.obj", quad + "l 1 2 3\n");
  const InputError l = read(h, R"({"type": "file", "path": "lines.obj"})");
  EXPECT_EQ(l.line(), 5);
  EXPECT_EQ(l.field(), "shells[0].mesh.path");
  EXPECT_NE(l.message().find("has no triangles"), std::string::npos);

  // a flipped triangle is found by validate_scene, at the shell's entry
  dir.write("flipped.obj", quad + "f 1 2 3\nf 1 4 3\n");
  const InputError f = read(h, R"({"type": "file", "path": "flipped.obj"})");
  EXPECT_EQ(f.file(), "s.json");
  EXPECT_EQ(f.line(), 4);
  EXPECT_EQ(f.field(), "shells[0]");
  EXPECT_NE(f.message().find("flip one of them"), std::string::npos);
}

TEST(ShellJson, NetworksWithTrianglesNeedAThickness) {
  const std::string head =
      "{\n"
      R"("materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}],)"
      "\n\"networks\": [\n";
  const std::string chute = R"({"name": "n", "material": "m", "radius": 1e-3,
                                "file": "hexparachute_n4_python.txt")";
  const std::string rod = R"({"name": "n", "material": "m", "radius": 1e-3,
                              "file": "horizontal_rod_n101.txt")";
  const SceneSpec ok =
      read_scene_text(head + chute + ", \"thickness\": 1e-3}]}", "s.json", SLENDER_TEST_DATA_DIR);
  EXPECT_EQ(ok.parts[0].thickness, 1e-3);
  EXPECT_EQ(ok.parts[0].bending, ShellBending::kHinge);
  EXPECT_EQ(ok.parts[0].triangles.size(), 16u);
  expect_scene_error(head + chute + "}]}", "s.json", 4, "networks[0].thickness",
                     "a part with triangles (a shell) needs a thickness > 0, got 0");
  expect_scene_error(head + rod + ", \"thickness\": 1e-3}]}", "s.json", 5, "networks[0].thickness",
                     "only for geometry files with *Triangles (this one has none)");
  expect_scene_error(head + rod + ", \"bending\": \"hinge\"}]}", "s.json", 5, "networks[0].bending",
                     "only for geometry files with *Triangles (this one has none)");
}

TEST(ShellJson, AShellAloneIsAScene) {
  const std::string text = shell_scene(", \"thickness\": 1e-3", kDisk);
  const SceneSpec s = read_scene_text(text, "s.json", "");
  ASSERT_EQ(s.parts.size(), 1u);
  EXPECT_EQ(s.parts[0].triangles.size(), 6u * 4u);
  const InputError e = catch_input_error([] {
    read_scene_text(
        R"({"materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}]})",
        "s.json", "");
  });
  EXPECT_EQ(e.message(), "missing required field (a scene needs rods, networks or shells)");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

// ---- shell clamps: fixed_edges by nodes ------------------------------------------------------

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;

std::string clamp_scene(const std::string& fixed_edges) {
  return R"({
    "name": "clamp",
    "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.3}],
    "rods": [{"name": "rope", "material": "m", "radius": 1e-3,
              "shape": {"type": "straight", "start": [0, 0, 2], "end": [0, 0, 3], "nodes": 5}}],
    "shells": [{"name": "plate", "material": "m", "thickness": 1e-3, "bending": "mid_edge",
                "mesh": {"type": "rectangle", "u": [1, 0, 0], "v": [0, 0.5, 0],
                         "edge_length": 0.25, "structured": true}}],
    "boundary": {"fixed_edges": [)" +
         fixed_edges + R"(]}
  })";
}

TEST(ShellClamp, FixedEdgesByNodesFixTheNodesAndTheMidEdgeNormalsBetweenThem) {
  // the grid's first row along u: nodes 0..4 at y = 0 (4 edges of 0.25 m)
  const SceneSpec s =
      read_scene_text(clamp_scene(R"({"part": "plate", "nodes": [0, 1, 2, 3, 4]})"), "c.json", "");
  const auto m = build_model(s);
  int on_row = 0, fixed_xi = 0;
  for (int e = 0; e < m->nsedge; ++e) {
    const int a = m->sedge_node[2 * e], b = m->sedge_node[2 * e + 1];
    const bool row = m->node_x0[3 * a + 1] == 0 && m->node_x0[3 * b + 1] == 0;
    on_row += row;
    if (m->dof_fixed[m->xi_dof(e)]) {
      ++fixed_xi;
      EXPECT_TRUE(row) << "edge " << e;
    }
  }
  EXPECT_EQ(on_row, 4);
  EXPECT_EQ(fixed_xi, 4);
  int fixed_nodes = 0;
  for (int n = 0; n < m->nnode; ++n)
    fixed_nodes += m->dof_fixed[3 * n] && m->dof_fixed[3 * n + 1] && m->dof_fixed[3 * n + 2];
  EXPECT_EQ(fixed_nodes, 5);
}

// forces that act on one kind of element are refused where the scene has none of it
TEST(ForcesOnElements, DragWithoutTrianglesAndRftWithoutRodEdgesAreRefused) {
  SceneBuilder rods;
  const int m = rods.material("m", 1000, 1e6, 0.3);
  rods.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 5, m, SceneBuilder::circle(1e-3));
  rods.aerodynamic_drag(1.0, 1.2);
  const InputError drag = catch_input_error([&] { rods.build(); });
  EXPECT_EQ(drag.field(), "forces.aerodynamic_drag");
  EXPECT_NE(drag.message().find("acts on shell triangles"), std::string::npos) << drag.what();

  SceneBuilder shells;
  const int n = shells.material("m", 1000, 1e6, 0.3);
  shells.rectangle_shell("p", vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0), 0.5, true, n, 1e-3);
  shells.resistive_force(1.0, 2.0);
  const InputError rft = catch_input_error([&] { shells.build(); });
  EXPECT_EQ(rft.field(), "forces.resistive_force");
  EXPECT_NE(rft.message().find("acts on rod edges"), std::string::npos) << rft.what();
  shells.resistive_force(0, 0);
  shells.viscosity(1.0);  // viscous drag acts on every node
  EXPECT_NO_THROW(shells.build());
}

TEST(ShellClamp, WrongFixedEdgesSayWhatToGive) {
  auto error = [](const std::string& entry) {
    return catch_input_error(
        [&] { build_model(read_scene_text(clamp_scene(entry), "c.json", "")); });
  };
  const InputError shell_edges = error(R"({"part": "plate", "edges": [0]})");
  EXPECT_EQ(shell_edges.file(), "c.json");
  EXPECT_NE(shell_edges.message().find("is a shell, which has no rod edges"), std::string::npos)
      << shell_edges.what();
  const InputError rod_nodes = error(R"({"part": "rope", "nodes": [0, 1]})");
  EXPECT_NE(rod_nodes.message().find("has no shell triangles"), std::string::npos)
      << rod_nodes.what();
  const InputError both = error(R"({"part": "plate", "nodes": [0, 1], "edges": [0]})");
  EXPECT_EQ(both.field(), "boundary.fixed_edges[0].nodes");
  EXPECT_NE(both.message().find("either"), std::string::npos) << both.what();
  const InputError apart = error(R"({"part": "plate", "nodes": [0, 2]})");
  EXPECT_NE(apart.message().find("no shell edge joins two of these 2 nodes"), std::string::npos)
      << apart.what();
  EXPECT_EQ(apart.file(), "c.json");
  EXPECT_GT(apart.line(), 0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;

// a shell's contact thickness: its own key, the thickness by default
TEST(ShellContactThickness, SetsTheContactDistanceAndDefaultsToTheThickness) {
  auto scene = [](const std::string& extra) {
    return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                              "poisson_ratio": 0.3}],
      "shells": [{"name": "p", "material": "m", "thickness": 1e-3)" +
           extra + R"(,
                  "mesh": {"type": "rectangle", "u": [1, 0, 0], "v": [0, 1, 0],
                           "edge_length": 0.5}}]})";
  };
  const auto own =
      build_model(read_scene_text(scene(R"(, "contact_thickness": 4e-3)"), "t.json", ""));
  const auto plain = build_model(read_scene_text(scene(""), "t.json", ""));
  for (Real r : own->tri_half_thickness)
    EXPECT_EQ(r, 2e-3);
  for (Real r : plain->tri_half_thickness)
    EXPECT_EQ(r, 0.5e-3);
  const InputError neg = catch_input_error(
      [&] { build_model(read_scene_text(scene(R"(, "contact_thickness": -1)"), "t.json", "")); });
  EXPECT_EQ(neg.field(), "shells[0].contact_thickness");
  const InputError rod = catch_input_error([&] {
    read_scene_text(R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                                       "poisson_ratio": 0.3}],
      "networks": [{"name": "n", "material": "m", "radius": 1e-3, "file": "horizontal_rod_n101.txt",
                    "contact_thickness": 1e-3}]})",
                    "t.json", SLENDER_TEST_DATA_DIR);
  });
  EXPECT_NE(rod.message().find("only for geometry files with *Triangles"), std::string::npos)
      << rod.what();
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
