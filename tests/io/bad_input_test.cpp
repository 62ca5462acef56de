// Bad scenes: each must fail with an InputError that names the file, the line and the field.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/input_file.h"
#include "io/json.h"
#include "io/text_rows.h"
#include "io_test_util.h"
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/state.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;
using test::data_path;
using test::TempDir;

const char* const kFile = "bad.json";

// a valid scene that the cases below break one piece at a time
const char* const kBase = R"({
  "materials": [
    {"name": "steel", "density": 7850, "youngs_modulus": 2.1e11, "poisson_ratio": 0.3}
  ],
  "rods": [
    {"name": "beam", "material": "steel", "radius": 0.001,
     "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 51}}
  ],
  "boundary": {
    "fixed_nodes": [{"part": "beam", "nodes": [0, 1]}]
  },
  "integrator": {"type": "implicit_euler", "dt": 0.01, "duration": 1},
  "output": {"every": 1}
})";

// kBase with `from` replaced by `to` (which must be there once)
std::string with(const std::string& from, const std::string& to, std::string text = kBase) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) {
    return text;
  }
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// 1-based line of the first occurrence of `needle`
int line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  int line = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    line += text[i] == '\n';
  }
  return line;
}

InputError scene_error(const std::string& text) {
  return catch_input_error([&] { read_scene_text(text, kFile, ""); });
}

void expect_error(const std::string& text,
                  const std::string& line_needle,
                  const std::string& field,
                  const std::string& message_part) {
  const InputError e = scene_error(text);
  EXPECT_EQ(e.file(), kFile);
  EXPECT_EQ(e.line(), line_of(text, line_needle)) << e.what();
  EXPECT_EQ(e.field(), field) << e.what();
  EXPECT_NE(e.message().find(message_part), std::string::npos) << e.what();
}

TEST(BadInput, BaseSceneIsValid) { EXPECT_NO_THROW(read_scene_text(kBase, kFile, "")); }

// ---- cases the project requires ----------------------------------------------------------

TEST(BadInput, MalformedJsonNamesTheLine) {
  // a missing comma: the error is where the next member starts
  const std::string text = with("\"radius\": 0.001,\n", "\"radius\": 0.001\n");
  const InputError e = scene_error(text);
  EXPECT_EQ(e.file(), kFile);
  EXPECT_EQ(e.line(), line_of(text, "\"shape\""));
  EXPECT_EQ(e.field(), "");
  EXPECT_EQ(e.message(), "malformed JSON: expected ',' or '}' after an object member, got '\"'");
  EXPECT_EQ(std::string(e.what()).rfind("bad.json:7: malformed JSON", 0), 0u) << e.what();

  // unclosed document: the last line
  const std::string cut = std::string(kBase).substr(0, std::string(kBase).size() - 2);
  EXPECT_EQ(scene_error(cut).line(), line_of(cut, "\"output\""));
}

TEST(BadInput, MissingRequiredFields) {
  expect_error(with("\"density\": 7850, ", ""), "\"name\": \"steel\"", "materials[0].density",
               "missing required field");
  expect_error(with(",\n     \"shape\": {\"type\": \"straight\", \"start\": [0, 0, 0], "
                    "\"end\": [0.1, 0, 0], \"nodes\": 51}",
                    ""),
               "\"name\": \"beam\"", "rods[0].shape", "missing required field");
  expect_error(with("\"start\": [0, 0, 0], ", ""), "\"shape\"", "rods[0].shape.start",
               "missing required field");
  expect_error(with("\"radius\": 0.001,", ""), "\"name\": \"beam\"", "rods[0].radius",
               "missing required field (or give cross_section)");
  expect_error(with("\"name\": \"beam\", ", ""), "\"material\": \"steel\", \"radius\"",
               "rods[0].name", "missing required field");
  const std::string no_materials = "{\"rods\": []}";
  const InputError e = scene_error(no_materials);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "materials");
  EXPECT_EQ(e.message(), "missing required field");
}

TEST(BadInput, NodeReferenceOutOfRange) {
  expect_error(with("\"nodes\": [0, 1]", "\"nodes\": [0,\n 51]"), " 51]",
               "boundary.fixed_nodes[0].nodes[1]",
               "node index 51 out of range for part 'beam' (51 nodes, valid -51..50)");
  expect_error(with("\"nodes\": [0, 1]", "\"nodes\": [-52]"), "-52",
               "boundary.fixed_nodes[0].nodes[0]", "node index -52 out of range");
  expect_error(
      with("\"output\": {\"every\": 1}",
           "\"output\": {\"every\": 1,\n \"nodes\": [{\"part\": \"beam\", \"node\": 99}]}"),
      "99", "output.nodes[0].node", "node index 99 out of range");
  expect_error(with("\"integrator\"",
                    "\"forces\": {\"point_loads\": [\n{\"part\": \"beam\", \"node\": 51, "
                    "\"force\": [0, 0, 1]}]},\n  \"integrator\""),
               "\"node\": 51", "forces.point_loads[0].node", "node index 51 out of range");
}

// a point mass: its node in range, its mass positive and finite, only its own fields
TEST(BadInput, PointMassesNameTheirField) {
  const auto masses = [](const std::string& entry) {
    return with("\"integrator\"", "\"point_masses\": [\n" + entry + "],\n  \"integrator\"");
  };
  expect_error(masses(R"({"part": "beam", "node": 51, "mass": 0.1})"), "\"node\": 51",
               "point_masses[0].node", "node index 51 out of range");
  expect_error(masses(R"({"part": "beam", "node": -1, "mass": -0.1})"), "\"mass\": -0.1",
               "point_masses[0].mass", "must be a positive finite mass in kg");
  expect_error(masses(R"({"part": "beam", "node": -1, "mass": 0})"), "\"mass\": 0",
               "point_masses[0].mass", "must be a positive finite mass in kg");
  expect_error(masses(R"({"part": "rope", "node": -1, "mass": 0.1})"), "\"rope\"",
               "point_masses[0].part", "rope");
  expect_error(masses(R"({"part": "beam", "node": -1, "mass": 0.1, "inertia": 1})"), "inertia",
               "point_masses[0].inertia", "unknown field");
  // the builder's path names the same field
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.5);
  const int r = b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 5, m, SceneBuilder::circle(0.01));
  b.point_mass(r, 2, std::nan(""));
  const InputError e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "point_masses[0].mass") << e.what();
}

TEST(BadInput, EdgeReferenceOutOfRange) {
  const std::string text = with("\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}]",
                                "\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}],\n"
                                "    \"fixed_edges\": [{\"part\": \"beam\", \"edges\": [0, 50]}]");
  expect_error(text, "\"fixed_edges\"", "boundary.fixed_edges[0].edges[1]",
               "edge index 50 out of range for part 'beam' (50 edges, valid -50..49)");
  const std::string twist = with("\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}]",
                                 "\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}],\n"
                                 "    \"fixed_twist\": [{\"part\": \"beam\", \"edges\": [-51]}]");
  expect_error(twist, "\"fixed_twist\"", "boundary.fixed_twist[0].edges[0]",
               "edge index -51 out of range");
}

TEST(BadInput, GeometryEdgeIdsOutOfRange) {
  TempDir dir;
  const std::string geom = dir.write("net.txt", "*Nodes\n0 0 0\n1 0 0\n2 0 0\n*Edges\n1 2\n2 4\n");
  const std::string scene = dir.write(
      "net.json",
      R"({"materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}],
          "networks": [{"name": "n", "material": "m", "radius": 1, "file": "net.txt"}]})");
  const InputError e = catch_input_error([&] { read_scene_file(scene); });
  EXPECT_EQ(e.file(), geom);
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.field(), "*Edges");
  EXPECT_EQ(e.message(), "node id 4 out of range (the file has 3 nodes, ids 1..3)");
}

// the error of a one-network scene (`network.json`, the network on its line 3) whose geometry
// file holds `geometry`; the scene's path in *path
InputError network_error(TempDir& dir, const std::string& geometry, std::string* path) {
  dir.write("net.txt", geometry);
  *path = dir.write(
      "network.json",
      R"({"materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}],
          "networks": [
            {"name": "n", "material": "m", "radius": 1, "file": "net.txt"}]})");
  return catch_input_error([&] { read_scene_file(*path); });
}

// issue 18, fault 7: a network node on no edge was accepted and the first step's solve failed
TEST(BadInput, NetworkNodeOnNoEdge) {
  TempDir dir;
  std::string path;
  const InputError e =
      network_error(dir, "*Nodes\n0 0 0\n1 0 0\n2 0 0\n5 5 5\n*Edges\n1 2\n2 3\n", &path);
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "networks[0]");
  EXPECT_EQ(e.message(),
            "node 3 is on no rod edge and no triangle (it would have no mass and nothing to hold "
            "it)");
  // on an edge, the same network loads
  dir.write("net.txt", "*Nodes\n0 0 0\n1 0 0\n2 0 0\n5 5 5\n*Edges\n1 2\n2 3\n3 4\n");
  EXPECT_NO_THROW(read_scene_file(path));
}

TEST(BadInput, ZeroLengthEdges) {
  // a repeated point of a node list
  expect_error(with("{\"type\": \"straight\", \"start\": [0, 0, 0], \"end\": [0.1, 0, 0], "
                    "\"nodes\": 51}",
                    "{\"type\": \"nodes\", \"points\": [[0, 0, 0], [1, 0, 0], [1, 0, 0], "
                    "[2, 0, 0]]}"),
               "\"name\": \"beam\"", "rods[0]", "edge 1 (nodes 1, 2) has zero length");
  // a straight rod whose ends coincide
  expect_error(with("\"end\": [0.1, 0, 0]", "\"end\": [0, 0, 0]"), "\"name\": \"beam\"", "rods[0]",
               "edge 0 (nodes 0, 1) has zero length");
  // two coincident nodes of a network file
  TempDir dir;
  std::string path;
  const InputError e = network_error(dir, "*Nodes\n0 0 0\n1 0 0\n1 0 0\n*Edges\n1 2\n2 3\n", &path);
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "networks[0]");
  EXPECT_EQ(e.message(), "edge 1 (nodes 1, 2) has zero length");
}

TEST(BadInput, NegativeOrZeroStiffness) {
  const std::string text =
      with("\"radius\": 0.001,", "\"radius\": 0.001,\n \"stiffness\": {\"EA\": 1, \"EI1\": -3},");
  expect_error(text, "\"stiffness\"", "rods[0].stiffness.EI1", "stiffness must be positive");
  expect_error(with("\"radius\": 0.001,", "\"radius\": 0.001, \"stiffness\": {\"GJ\": 0},"),
               "\"name\": \"beam\"", "rods[0].stiffness.GJ", "stiffness must be positive");
}

TEST(BadInput, NegativeDensityAndOtherMaterialValues) {
  expect_error(with("\"density\": 7850", "\"density\": -7850"), "\"name\": \"steel\"",
               "materials[0].density", "must be positive, got -7850");
  expect_error(with("\"youngs_modulus\": 2.1e11", "\"youngs_modulus\": 0"), "\"name\": \"steel\"",
               "materials[0].youngs_modulus", "must be positive, got 0");
  expect_error(with("\"poisson_ratio\": 0.3", "\"poisson_ratio\": 0.6"), "\"name\": \"steel\"",
               "materials[0].poisson_ratio", "must be in (-1, 0.5], got 0.6");
  expect_error(with("\"poisson_ratio\": 0.3", "\"poisson_ratio\": -1"), "\"name\": \"steel\"",
               "materials[0].poisson_ratio", "must be in (-1, 0.5]");
  expect_error(with("\"density\": 7850", "\"density\": \"7850\""), "\"name\": \"steel\"",
               "materials[0].density", "expected a number, got a string");
}

// ---- more field errors -------------------------------------------------------------------

TEST(BadInput, UnknownFieldsAndNames) {
  expect_error(with("\"radius\": 0.001,", "\"raduis\": 0.001,"), "raduis", "rods[0].raduis",
               "unknown field (expected one of: name, material, radius,");
  expect_error(with("\"output\": {\"every\": 1}", "\"output\": {\"evry\": 1}"), "evry",
               "output.evry", "unknown field");
  expect_error(with("\"output\"", "\"outputs\""), "outputs", "outputs", "unknown field");
  expect_error(with("\"material\": \"steel\"", "\"material\": \"steal\""), "steal",
               "rods[0].material", "unknown material 'steal'");
  expect_error(with("\"part\": \"beam\"", "\"part\": \"bean\""), "bean",
               "boundary.fixed_nodes[0].part", "unknown part 'bean' (parts: beam)");
  expect_error(with("\"type\": \"straight\"", "\"type\": \"curved\""), "curved",
               "rods[0].shape.type", "unknown shape type 'curved'");
  expect_error(with("\"implicit_euler\"", "\"euler\""), "euler", "integrator.type",
               "unknown integrator 'euler'");
}

// issue 18, fault 8: a NUL in a key (JSON's \u0000) or in a binary file cut the message short
TEST(BadInput, ControlBytesAreEscapedInMessages) {
  const InputError e = scene_error(with("\"radius\": 0.001,", "\"rad\\u0000ius\": 0.001,"));
  EXPECT_EQ(e.field(), "rods[0].rad\\x00ius") << e.what();
  EXPECT_NE(std::string(e.what()).find("rods[0].rad\\x00ius: unknown field"), std::string::npos)
      << e.what();
  EXPECT_EQ(std::string(e.what()).find('\0'), std::string::npos);
  const InputError b = InputError("a.obj", 1, "", std::string("bad \0\x01 byte\n", 12));
  EXPECT_EQ(b.message(), "bad \\x00\\x01 byte\n");
  EXPECT_STREQ(b.what(), "a.obj:1: bad \\x00\\x01 byte\n");
}

TEST(BadInput, DuplicateNames) {
  const std::string rod =
      "{\"name\": \"beam\", \"material\": \"steel\", \"radius\": 0.001,\n"
      "     \"shape\": {\"type\": \"straight\", \"start\": [0, 0, 0], \"end\": [0.1, 0, 0], "
      "\"nodes\": 51}}";
  const std::string text = with(rod, rod + ",\n    " + rod);
  const InputError e = scene_error(text);
  EXPECT_EQ(e.line(), 8);
  EXPECT_EQ(e.field(), "rods[1].name");
  EXPECT_EQ(e.message(), "duplicate part name 'beam' (first at rods[0], line 6)");
  const std::string mat =
      "{\"name\": \"steel\", \"density\": 7850, \"youngs_modulus\": 2.1e11, \"poisson_ratio\": "
      "0.3}";
  const InputError m = scene_error(with(mat, mat + ",\n" + mat));
  EXPECT_EQ(m.line(), 4);
  EXPECT_EQ(m.field(), "materials[1].name");
  EXPECT_EQ(m.message(), "duplicate material name 'steel' (first at line 3)");
}

TEST(BadInput, ShapeArgumentsMapToTheirKeys) {
  expect_error(with("\"nodes\": 51", "\"nodes\": 1"), "\"nodes\": 1", "rods[0].shape.nodes",
               "a rod needs at least 2 nodes, got 1");
  expect_error(with("\"nodes\": 51", "\"nodes\": 5.5"), "\"nodes\": 5.5", "rods[0].shape.nodes",
               "expected an integer, got 5.5");
  expect_error(with("\"nodes\": 51", "\"nodes\": 2000000000"), "\"nodes\"", "rods[0].shape.nodes",
               "too many nodes");
  expect_error(with("\"start\": [0, 0, 0]", "\"start\": [0, 0]"), "\"start\"",
               "rods[0].shape.start", "expected an array of 3 numbers, got an array of 2");
  const std::string helix =
      "{\"type\": \"helix\", \"axis\": [0, 0, 0], \"radius\": 0.1, \"pitch\": 0.1, "
      "\"length\": 1, \"nodes\": 10}";
  const std::string straight =
      "{\"type\": \"straight\", \"start\": [0, 0, 0], \"end\": [0.1, 0, 0], \"nodes\": 51}";
  expect_error(with(straight, helix), "\"shape\"", "rods[0].shape.axis", "nonzero vector");
  const std::string poly =
      "{\"type\": \"polyline\", \"points\": [[0, 0, 0]], \"max_edge_length\": 1}";
  expect_error(with(straight, poly), "\"shape\"", "rods[0].shape.points",
               "at least 2 corners, got 1");
  const std::string ring =
      "{\"type\": \"nodes\", \"points\": [[0, 0, 0], [1, 0, 0]], \"closed\": true}";
  expect_error(with(straight, ring), "\"shape\"", "rods[0].shape.points",
               "a closed rod needs at least 3 nodes, got 2");
  const std::string extra =
      "{\"type\": \"straight\", \"start\": [0, 0, 0], \"end\": [0.1, 0, 0], \"nodes\": 51, "
      "\"closed\": true}";
  expect_error(with(straight, extra), "\"shape\"", "rods[0].shape.closed", "unknown field");
}

TEST(BadInput, CrossSectionAndNaturalShape) {
  expect_error(with("\"radius\": 0.001,",
                    "\"radius\": 0.001, \"cross_section\": {\"width\": 1, "
                    "\"height\": 1},"),
               "\"name\": \"beam\"", "rods[0].radius", "either radius or cross_section");
  expect_error(with("\"radius\": 0.001", "\"radius\": -0.001"), "\"name\": \"beam\"",
               "rods[0].radius", "must be positive, got -0.001");
  expect_error(with("\"radius\": 0.001", "\"cross_section\": {\"width\": 1, \"height\": 0}"),
               "\"name\": \"beam\"", "rods[0].cross_section.height", "must be positive");
  expect_error(with("\"radius\": 0.001,", "\"radius\": 0.001, \"natural_curvature\": [[1, 0]],"),
               "\"name\": \"beam\"", "rods[0].natural_curvature",
               "has 1 entries (one per interior node: 49)");
  expect_error(with("\"radius\": 0.001,", "\"radius\": 0.001, \"natural_twist\": [1, 2],"),
               "\"name\": \"beam\"", "rods[0].natural_twist", "has 2 entries");
  expect_error(
      with("\"radius\": 0.001,", "\"radius\": 0.001, \"natural_curvature\": {\"uniform\": [1]},"),
      "uniform", "rods[0].natural_curvature.uniform", "expected an array of 2 numbers");
}

// issue 49, item 5: a natural curvature that would turn the rod by more than 0.9 pi at a node
// (|kappa| dl; here dl = 0.1 m / 50 = 2 mm, so |kappa| <= 0.9 pi / 2 mm = 1413.7 1/m) is
// refused up front, the entry named: -1e308 before, ran 38 s into a failed step
TEST(BadInput, AnAbsurdNaturalCurvatureIsRefused) {
  auto curved = [](const std::string& k) {
    return with("\"radius\": 0.001,",
                "\"radius\": 0.001, \"natural_curvature\": {\"uniform\": [" + k + "]},");
  };
  expect_error(curved("-1e308, 0"), "\"name\": \"beam\"", "rods[0].natural_curvature[0]",
               "turns the rod by |kappa| dl = 2e+305 rad at node 1");
  expect_error(curved("0, 1500"), "\"name\": \"beam\"", "rods[0].natural_curvature[0]",
               "at most 0.9 pi = 2.82743 rad (|kappa| <= 1413.72 1/m here");
  EXPECT_NO_THROW(read_scene_text(curved("1000, 990"), kFile, ""));  // |kappa| = 1407.2
  EXPECT_NO_THROW(read_scene_text(curved("0, 1400"), kFile, ""));
}

TEST(BadInput, InitialVelocityFileMustMatchTheNodeCount) {
  TempDir dir;
  const std::string text =
      with("\"radius\": 0.001,", "\"radius\": 0.001,\n \"initial_velocity\": {\"file\": \"" +
                                     data_path("cantilever_init_velocity_n201.txt") + "\"},");
  expect_error(text, "initial_velocity", "rods[0].initial_velocity.file",
               "the velocity file has 201 rows but the part has 51 nodes");
  expect_error(with("\"radius\": 0.001,",
                    "\"radius\": 0.001,\n \"initial_velocity\": {\"file\": \"nope.txt\"},"),
               "nope", "rods[0].initial_velocity.file", "cannot open file 'nope.txt'");
}

TEST(BadInput, JointsAndFixedDofs) {
  const std::string add = "\"boundary\"";
  expect_error(with(add, "\"joints\": [\n[{\"part\": \"beam\", \"node\": 0}]],\n  " + add),
               "[{\"part\": \"beam\", \"node\": 0}]]", "joints[0]",
               "a joint needs at least 2 nodes, got 1");
  expect_error(with(add,
                    "\"joints\": [[{\"part\": \"beam\", \"node\": 0},\n"
                    "{\"part\": \"beam\", \"node\": -51}]],\n  " +
                        add),
               "-51", "joints[0][1].node", "node 0 of part 'beam' is already in a joint");
  expect_error(with("\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}]",
                    "\"fixed_dofs\": [{\"part\": \"beam\", \"node\": 0, \"components\": \"xw\"}]"),
               "fixed_dofs", "boundary.fixed_dofs[0].components", "subset of \"xyz\"");
}

// prescribed motions: what they move must be fixed, once; references, amounts and time
// functions are checked where they are written
TEST(BadInput, Motions) {
  const std::string fixed = "\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}]";
  auto motions = [&](const std::string& list) {
    return with(fixed, fixed + ",\n    \"motions\": [" + list + "]");
  };
  auto model_error = [](const std::string& text) {
    return catch_input_error([&] { build_model(read_scene_text(text, kFile, "")); });
  };
  // valid: nodes 0 and 1 along z
  const std::string ok = motions(
      "{\"part\": \"beam\", \"nodes\": [0, 1], \"translation\": [0, 0, 0.01],\n"
      " \"time\": {\"type\": \"sine\", \"frequency\": 2}}");
  const auto m = build_model(read_scene_text(ok, kFile, ""));
  EXPECT_EQ(m->motion_dof, (std::vector<int>{2, 5}));
  // a free node
  const std::string free_node =
      motions("{\"part\": \"beam\", \"nodes\": [0,\n 7], \"translation\": [0, 0.5, 0.01]}");
  InputError e = model_error(free_node);
  EXPECT_EQ(e.file(), kFile);
  EXPECT_EQ(e.line(), line_of(free_node, " 7]")) << e.what();
  EXPECT_EQ(e.field(), "boundary.motions[0].nodes[1]") << e.what();
  EXPECT_NE(e.message().find("node 7 of part 'beam' (y) is not fixed"), std::string::npos)
      << e.what();
  // a twist that is not fixed
  const std::string twist = motions("{\"part\": \"beam\", \"edges\": [\n3], \"twist\": 6.28}");
  e = model_error(twist);
  EXPECT_EQ(e.line(), line_of(twist, "3], \"twist")) << e.what();
  EXPECT_EQ(e.field(), "boundary.motions[0].edges[0]") << e.what();
  EXPECT_NE(e.message().find("the twist of edge 3 of part 'beam' is not fixed"), std::string::npos)
      << e.what();
  // one DOF in two motions
  const std::string twice = motions(
      "{\"part\": \"beam\", \"nodes\": [1], \"translation\": [0.1, 0, 0]},\n"
      "{\"part\": \"beam\", \"nodes\": [-50], \"translation\": [0.1, 0, 0]}");
  e = model_error(twice);
  EXPECT_EQ(e.field(), "boundary.motions[1].nodes[0]") << e.what();
  EXPECT_NE(e.message().find("is moved by motions 0 and 1"), std::string::npos) << e.what();
  // the reader's and the checker's errors
  expect_error(motions("{\"part\": \"beam\", \"nodes\": [0]}"), "\"motions\"",
               "boundary.motions[0].translation", "needs a translation");
  expect_error(motions("{\"part\": \"beam\", \"edges\": [0]}"), "\"motions\"",
               "boundary.motions[0].twist", "needs a twist");
  expect_error(motions("{\"part\": \"beam\", \"translation\": [0, 0, 1]}"), "\"motions\"",
               "boundary.motions[0].nodes", "needs nodes or edges");
  expect_error(motions("{\"part\": \"beam\", \"nodes\": [\n51], \"translation\": [0, 0, 1]}"),
               "51]", "boundary.motions[0].nodes[0]", "node index 51 out of range");
  expect_error(motions("{\"part\": \"beam\", \"nodes\": [0], \"translation\": [0, 0, 1],\n"
                       "\"time\": {\"type\": \"ramp\", \"duration\": -1}}"),
               "\"motions\"", "boundary.motions[0].time.duration", "");
  expect_error(motions("{\"part\": \"beam\", \"nodes\": [0], \"translation\": [0, 0, 1],\n"
                       "\"speed\": 3}"),
               "\"speed\"", "boundary.motions[0].speed", "");
}

// boundary events: a time from 0 on, one of fix and release, a selection the boundary block's
// keys give (no clamps), and, when the model is built, no release of a DOF a clamp at a node
// holds and no fix of a moved DOF; the valid events resolve to their DOFs in time order
TEST(BadInput, BoundaryEvents) {
  const std::string fixed = "\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0, 1]}]";
  auto events = [&](const std::string& list, const std::string& more = "") {
    return with(fixed, fixed + more + ",\n    \"events\": [" + list + "]");
  };
  auto model_error = [](const std::string& text) {
    return catch_input_error([&] { build_model(read_scene_text(text, kFile, "")); });
  };
  const std::string ok = events(
      "{\"time\": 0.5, \"release\": {\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [1]}]}},\n"
      "{\"time\": 0.2, \"fix\": {\"fixed_dofs\": [{\"part\": \"beam\", \"node\": -1, "
      "\"components\": \"z\"}],\n \"fixed_twist\": [{\"part\": \"beam\", \"edges\": [2]}]}}");
  const auto m = build_model(read_scene_text(ok, kFile, ""));
  EXPECT_EQ(m->event_time, (std::vector<Real>{0.2, 0.5}));  // by time
  EXPECT_EQ(m->event_release, (std::vector<unsigned char>{0, 1}));
  EXPECT_EQ(m->event_dof_adr, (std::vector<int>{0, 2, 5}));
  EXPECT_EQ(m->event_dof, (std::vector<int>{3 * 50 + 2, 3 * 51 + 2, 3, 4, 5}));
  // the reader's errors
  expect_error(events("{\"time\": 1,\n \"fix\": {}, \"release\": {}}"), "\"fix\"",
               "boundary.events[0].release", "either fixes");
  expect_error(events("{\"time\": 1}"), "\"time\"", "boundary.events[0].fix", "either fixes");
  expect_error(events("{\"release\": {\"fixed_nodes\": []}}"), "\"release\"",
               "boundary.events[0].time", "");
  expect_error(events("{\"time\": 1,\n \"release\": {}}"), "\"release\"",
               "boundary.events[0].release", "selects no DOFs");
  expect_error(
      events("{\"time\": 1, \"release\": {\n\"clamps\": [{\"part\": \"beam\", \"node\": 0}]}}"),
      "\"clamps\"", "boundary.events[0].release.clamps", "does not let go");
  expect_error(events("{\"time\": 1, \"fix\": {\"motions\": []}}"), "\"motions\"",
               "boundary.events[0].fix.motions", "unknown field");
  expect_error(
      events("{\"time\": 1, \"fix\": {\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [\n"
             "60]}]}}"),
      "60]", "boundary.events[0].fix.fixed_nodes[0].nodes[0]", "out of range");
  expect_error(events("{\"time\": -1,\n \"fix\": {\"fixed_nodes\": [{\"part\": \"beam\", "
                      "\"nodes\": [3]}]}}"),
               "\"time\": -1", "boundary.events[0].time", "must be >= 0");
  // the model's: a release of the clamped node of a clamp at a node; a fix of a moved DOF
  const std::string clamp = events(
      "{\"time\": 1, \"release\": {\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [-1]}]}}",
      ",\n    \"clamps\": [{\"part\": \"beam\", \"node\": -1}]");
  InputError e = model_error(clamp);
  EXPECT_EQ(e.file(), kFile);
  EXPECT_EQ(e.line(), line_of(clamp, "{\"time\": 1")) << e.what();
  EXPECT_EQ(e.field(), "boundary.events[0]") << e.what();
  EXPECT_NE(e.message().find("releases node 50 (x), but a clamp at a node holds it"),
            std::string::npos)
      << e.what();
  const std::string moved = events(
      "{\"time\": 1, \"fix\": {\"fixed_nodes\": [{\"part\": \"beam\", \"nodes\": [0]}]}}",
      ",\n    \"motions\": [{\"part\": \"beam\", \"nodes\": [0], \"translation\": [0, 0, 1]}]");
  e = model_error(moved);
  EXPECT_EQ(e.field(), "boundary.events[0]") << e.what();
  EXPECT_NE(e.message().find("fixes node 0 (z), which a motion moves"), std::string::npos)
      << e.what();
  // a scene made in code: the errors name the event by its index
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const int rod = b.straight_rod("r", vec3(0, 0, 0), vec3(0.1, 0, 0), 5, mat, b.circle(1e-3));
  b.clamp(rod, 0);
  BoundaryEvent ev;
  ev.time = 0.1;
  ev.release = true;
  ev.select.nodes.push_back(NodeRef{rod, 0, {}});
  b.event(ev);
  const SceneSpec code = b.build();
  e = catch_input_error([&] { build_model(code); });
  EXPECT_EQ(e.field(), "boundary.events[0]") << e.what();
  EXPECT_NE(e.message().find("a clamp at a node holds it"), std::string::npos) << e.what();
  ev.time = -0.5;
  b.spec().events[0] = ev;
  e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "boundary.events[0].time") << e.what();
}

// initial twist angles and velocities: one number per rod edge, or {"uniform": v}
TEST(BadInput, InitialTwist) {
  const std::string rod = "\"radius\": 0.001,";
  auto twist = [&](const std::string& field) { return with(rod, rod + "\n" + field + ","); };
  const auto m = build_model(read_scene_text(twist("\"initial_twist_angle\": {\"uniform\": 0.25}, "
                                                   "\"initial_twist_velocity\": {\"uniform\": 2}"),
                                             kFile, ""));
  EXPECT_EQ(m->edge_theta0, std::vector<Real>(50, 0.25));
  const State s = initial_state(*m);
  EXPECT_EQ(s.q[3 * 51 + 7], 0.25);
  EXPECT_EQ(s.u[3 * 51 + 7], 2.0);
  expect_error(twist("\"initial_twist_angle\": [0, 1]"), "initial_twist_angle",
               "rods[0].initial_twist_angle", "has 2 entries, the part 50 rod edges");
  expect_error(twist("\"initial_twist_velocity\": {\"uniform\": \"fast\"}"),
               "initial_twist_velocity", "rods[0].initial_twist_velocity.uniform", "");
  expect_error(twist("\"initial_twist_angle\": {\"all\": 1}"), "initial_twist_angle",
               "rods[0].initial_twist_angle.all", "unknown field");
}

TEST(BadInput, ForcesTimeFunctionsIntegratorOutput) {
  const std::string load =
      "\"forces\": {\"point_loads\": [\n{\"part\": \"beam\", \"node\": -1, \"force\": [0, 0, 1], "
      "\"time\": ";
  auto with_time = [&](const std::string& t) {
    return with("\"integrator\"", load + t + "}]},\n  \"integrator\"");
  };
  expect_error(with_time("{\"type\": \"table\", \"rows\": [[0, 0], [1, 1], [0.5, 2]]}"),
               "\"node\": -1", "forces.point_loads[0].time.rows",
               "times must increase: row 2 has t = 0.5 after 1");
  expect_error(with_time("{\"type\": \"table\", \"rows\": []}"), "\"node\": -1",
               "forces.point_loads[0].time.rows", "the table has no rows");
  expect_error(with_time("{\"type\": \"ramp\", \"duration\": 0}"), "\"node\": -1",
               "forces.point_loads[0].time.duration", "must be positive");
  expect_error(with_time("{\"type\": \"sine\", \"frequency\": -1}"), "\"node\": -1",
               "forces.point_loads[0].time.frequency", "must be >= 0");
  expect_error(with("\"integrator\"",
                    "\"forces\": {\n\"viscous_drag\": {\"viscosity\": -1}},\n  "
                    "\"integrator\""),
               "\"forces\"", "forces.viscous_drag.viscosity", "must be >= 0, got -1");

  expect_error(with("\"dt\": 0.01", "\"dt\": 0"), "\"integrator\"", "integrator.dt",
               "must be positive, got 0");
  expect_error(with("\"dt\": 0.01", "\"dt\": 0.01, \"min_dt\": 0.1"), "\"integrator\"",
               "integrator.min_dt", "must not exceed dt");
  expect_error(with("\"implicit_euler\"", "\"newmark\", \"beta\": 0.6"), "\"integrator\"",
               "integrator.beta", "must be in (0, 0.5], got 0.6");
  expect_error(with("\"implicit_euler\"", "\"newmark\", \"gamma\": 0.4"), "\"integrator\"",
               "integrator.gamma", "must be >= 0.5");
  expect_error(with("\"duration\": 1", "\"duration\": 1, \"newton\": {\"max_iters\": 0}"),
               "\"integrator\"", "integrator.newton.max_iters", "must be at least 1, got 0");
  expect_error(with("\"every\": 1", "\"every\": 0"), "\"output\"", "output.every",
               "must be at least 1, got 0");
}

// issue 19: a MAT-DiSMech geometry file given as a rod's shape file said "expected 3 values per
// line, got 1"; it now says what the file is and where it goes
// an actuation's per-spring time series (a CSV file beside the scene): a missing file names the
// scene's field; a bad row names the CSV file, its line and the column; the wrong number of
// columns for the springs driven names the file and its first row; a series with a time
// function is refused at the scene's field
TEST(BadInput, ActuationSeriesFiles) {
  TempDir dir;
  // kBase's beam has 51 nodes: 50 edges, 49 bend-twist springs
  int scenes = 0;  // each scene its own file
  auto scene = [&](const std::string& actuation) {
    return dir.write(
        "s" + std::to_string(scenes++) + ".json",
        with("\"integrator\"", "\"actuation\": [" + actuation + "],\n  \"integrator\""));
  };
  auto cols = [](int n, const char* v) {
    std::string r;
    for (int k = 0; k < n; ++k)
      r += std::string(", ") + v;
    return r;
  };
  const std::string good = "t, e...\n0" + cols(50, "0") + "\n0.5" + cols(50, "-0.1") + "\n";
  dir.write("good.csv", good);
  const std::string ok =
      scene(R"({"target": "rod_stretch", "part": "beam", "series": "good.csv"})");
  const SceneSpec spec = read_scene_file(ok);
  ASSERT_EQ(spec.actuation.size(), 1u);
  EXPECT_EQ(spec.actuation[0].series.columns, 50);
  EXPECT_EQ(spec.actuation[0].series.time.size(), 2u);
  EXPECT_EQ(spec.actuation[0].amplitude, 1);
  EXPECT_NO_THROW(build_model(spec));

  struct Case {
    std::string csv;  // the file's text
    int line;         // the line the error names
    std::string field, message;
  } cases[] = {
      {"0" + cols(50, "0") + "\n0.5" + cols(50, "0") + "\n0.5" + cols(50, "0") + "\n", 3,
       "actuation[0].series (time)", "times must increase strictly: 0.5 s is not after"},
      {"0" + cols(50, "0") + "\n0.1" + cols(49, "0") + ", nan\n", 2,
       "actuation[0].series (column 50)", "non-finite value 'nan'"},
      {"# t, values\n0" + cols(50, "0") + "\n\n0.1" + cols(49, "0") + ", x1\n", 4,
       "actuation[0].series (column 50)", "'x1' is not a number"},
      {"0" + cols(50, "0") + "\n0.1" + cols(48, "0") + "\n", 2, "actuation[0].series",
       "expected 51 fields (the time and 50 values, as in the first row on line 1), got 49"},
      {"t, e\n0\n", 2, "actuation[0].series", "a row is a time and one value per driven spring"},
      {"# nothing\n", 0, "actuation[0].series", "the series file has no data rows"},
  };
  for (const Case& c : cases) {
    const std::string csv = dir.write("bad.csv", c.csv);
    const std::string path =
        scene(R"({"target": "rod_stretch", "part": "beam", "series": "bad.csv"})");
    const InputError e = catch_input_error([&] { build_model(read_scene_file(path)); });
    EXPECT_EQ(e.file(), csv) << e.what();
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.field(), c.field) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  }
  // the wrong number of columns: 50 values for the 49 bend-twist springs of rod_curvature1
  const std::string path =
      scene(R"({"target": "rod_curvature1", "part": "beam", "series": "good.csv"})");
  InputError e = catch_input_error([&] { build_model(read_scene_file(path)); });
  EXPECT_EQ(e.file(), dir.path() + "/good.csv");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "actuation[0].series");
  EXPECT_NE(e.message().find("has 50 value columns after the time, but the actuation drives 49 "
                             "bend-twist springs"),
            std::string::npos)
      << e.what();
  // a missing file, and a time function beside a series: the scene's own line and field
  const std::string missing =
      scene(R"({"target": "rod_stretch", "part": "beam", "series": "none.csv"})");
  e = catch_input_error([&] { read_scene_file(missing); });
  EXPECT_EQ(e.file(), missing);
  EXPECT_EQ(e.field(), "actuation[0].series");
  EXPECT_NE(e.message().find("cannot open file 'none.csv'"), std::string::npos) << e.what();
  const std::string both = scene(
      R"({"target": "rod_stretch", "part": "beam", "series": "good.csv", "time": {"type": "ramp", "duration": 1}})");
  e = catch_input_error([&] { read_scene_file(both); });
  EXPECT_EQ(e.field(), "actuation[0].time");
  EXPECT_NE(e.message().find("not with \"series\""), std::string::npos) << e.what();
  // a series built in code is checked as well: times not increasing
  SceneSpec code = read_scene_file(ok);
  code.actuation[0].series.time = {0, 0};
  e = catch_input_error([&] { build_model(code); });
  EXPECT_EQ(e.field(), "actuation[0].series");
  EXPECT_NE(e.message().find("times must increase strictly"), std::string::npos) << e.what();
}

TEST(BadInput, AGeometryFileAsARodShapeIsRecognized) {
  TempDir dir;
  const std::string geo = dir.write("net.txt", "*Nodes\n0 0 0\n1 0 0\n*Edges\n1 2\n");
  const InputError e = catch_input_error([&] {
    read_scene_text(with("{\"type\": \"straight\", \"start\": [0, 0, 0], \"end\": [0.1, 0, 0], "
                         "\"nodes\": 51}",
                         "{\"type\": \"file\", \"path\": \"" + geo + "\"}"),
                    kFile, "");
  });
  EXPECT_EQ(e.file(), geo);
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(e.message().find("a geometry file with sections ('*Nodes')"), std::string::npos)
      << e.what();
  EXPECT_NE(e.message().find("give it as a network"), std::string::npos) << e.what();
}

TEST(BadInput, OutputCadences) {
  expect_error(with("\"every\": 1}", "\"every\": 1, \"vtk_every\": -2}"), "\"output\"",
               "output.vtk_every", "must be at least 1 (or 0: as every), got -2");
}

TEST(BadInput, WholeFileProblems) {
  EXPECT_NE(scene_error("").message().find("empty document"), std::string::npos);
  EXPECT_EQ(scene_error("[]").message(), "expected an object, got an array");
  const InputError c = scene_error(with("\"output\"", "// no comments\n  \"output\""));
  EXPECT_EQ(c.line(), 13);
  EXPECT_NE(c.message().find("comments are not allowed"), std::string::npos);
  const std::string no_parts =
      R"({"materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}]})";
  const InputError p = scene_error(no_parts);
  EXPECT_EQ(p.field(), "rods");
  EXPECT_EQ(p.message(), "missing required field (a scene needs rods, networks or shells)");
  const InputError e = scene_error(with("\"rods\": [\n", "\"rods\": [],\n\"x\": [\n"));
  EXPECT_EQ(e.field(), "x");
}

InputError model_error(const std::string& text) {
  return catch_input_error([&] { build_model(read_scene_text(text, kFile, "")); });
}

// issue 18, fault 6: physically absurd values that each pass their own check are refused where
// what follows from them cannot be computed with: a radius of 1e308 (an infinite mass), a
// density or a radius so small that the mass vanishes, coordinates whose squares overflow
// (their edges were called "zero length"); and Newton tolerances that are all 0 (every step
// failed). Each error names the file, the line and the field.
TEST(BadInput, PhysicallyAbsurdValuesAreRefused) {
  const std::string rod_line = "{\"name\": \"beam\"";
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {with("\"radius\": 0.001", "\"radius\": 1e308"), "mass inf kg"},
      {with("\"radius\": 0.001", "\"radius\": 1e-200"), "mass 0 kg"},
      {with("\"density\": 7850", "\"density\": 1e-320"), "is not a positive finite number"},
      {with("\"youngs_modulus\": 2.1e11", "\"youngs_modulus\": 1e-300"), "bending stiffness EI1"},
  };
  for (const Case& c : cases) {
    const InputError e = model_error(c.text);
    EXPECT_EQ(e.file(), kFile);
    EXPECT_EQ(e.line(), line_of(c.text, rod_line)) << e.what();
    EXPECT_EQ(e.field(), "rods[0]") << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  }
  const std::string far = with("\"end\": [0.1, 0, 0]", "\"end\": [1e200, 0, 0]");
  const InputError f = model_error(far);
  EXPECT_EQ(f.line(), line_of(far, rod_line));
  EXPECT_NE(f.message().find("node 1 coordinate 2e+198 m is beyond the 1e+50 m"), std::string::npos)
      << f.what();
  const std::string zero_tols = with("\"duration\": 1}",
                                     "\"duration\": 1,\n  \"newton\": {\"abs_tol\": 0, "
                                     "\"rel_tol\": 0, \"step_tol\": 0}}");
  expect_error(zero_tols, "\"integrator\"", "integrator.newton", "are all 0");
  // one positive tolerance is enough
  EXPECT_NO_THROW(read_scene_text(with("\"duration\": 1}",
                                       "\"duration\": 1, \"newton\": {\"abs_tol\": 0, "
                                       "\"rel_tol\": 0, \"step_tol\": 1e-12}}"),
                                  kFile, ""));
}

// issue 18, fault 5: a scene file over kMaxSceneFileBytes is refused before it is read (a
// sparse file: no disk is written)
TEST(BadInput, AnOversizedSceneFileIsRefusedBeforeItIsRead) {
  TempDir dir;
  const std::string path = dir.write("huge.json", "{");
  std::filesystem::resize_file(path, std::uintmax_t(kMaxSceneFileBytes) + 1);
  const InputError e = catch_input_error([&] { read_scene_file(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_NE(e.message().find("larger than the 64 MiB a scene file may be"), std::string::npos)
      << e.message();
}

// issue 49, item 8: a device (/dev/zero, read until memory ran out) or a FIFO (blocked for ever)
// given as a scene, geometry, mesh or number file is refused before it is opened, and a file
// beyond the readers' limit (kMaxGeometryFileBytes, 1 GiB; a sparse file: no disk written)
// before it is read; each error names the file
TEST(BadInput, NonRegularAndOversizedFilesAreRefused) {
  TempDir dir;
  const std::string fifo = dir.path() + "/pipe.obj";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string fifo_ply = dir.path() + "/pipe.ply";
  ASSERT_EQ(::mkfifo(fifo_ply.c_str(), 0600), 0);
  auto refused = [](const std::string& path, const char* kind, auto read) {
    const InputError e = catch_input_error(read);
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.message().find(kind), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("not a regular file"), std::string::npos) << e.what();
  };
  for (const std::string& p : {fifo, std::string("/dev/zero")}) {
    const char* kind = p == fifo ? "a FIFO" : "a character device";
    refused(p, kind, [&] { read_scene_file(p); });
    refused(p, kind, [&] { read_geometry_file(p); });
    refused(p, kind, [&] { read_number_table(p, 3); });
  }
  refused(fifo, "a FIFO", [&] { read_mesh_file(fifo); });
  refused(fifo_ply, "a FIFO", [&] { read_mesh_file(fifo_ply); });
  // named by a scene: the scene's line and field, the file
  const std::string scene = dir.write(
      "net.json",
      R"({"materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}],
          "networks": [{"name": "n", "material": "m", "radius": 1, "file": "pipe.obj"}]})");
  const InputError e = catch_input_error([&] { read_scene_file(scene); });
  EXPECT_EQ(e.file(), scene);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "networks[0].file");
  EXPECT_NE(e.message().find("'pipe.obj': the file is a FIFO"), std::string::npos) << e.what();
  // too long
  const std::string huge = dir.write("huge.obj", "v 0 0 0\n");
  std::filesystem::resize_file(huge, std::uintmax_t(kMaxGeometryFileBytes) + 1);
  const InputError h = catch_input_error([&] { read_mesh_file(huge); });
  EXPECT_EQ(h.file(), huge);
  EXPECT_NE(h.message().find("mesh file of 1073741825 bytes is larger than the 1024 MiB"),
            std::string::npos)
      << h.what();
}

TEST(BadInput, RandomMutationsOfASceneOnlyEverThrowInputError) {
  std::mt19937_64 rng(99);
  const std::string base = kBase;
  const std::string alphabet = "{}[],:\"-.0123456789e \nabxyz";
  int ok = 0;
  for (int k = 0; k < 3000; ++k) {
    std::string s = base;
    for (int m = 0; m < 1 + int(rng() % 2); ++m) {
      s[rng() % s.size()] = alphabet[rng() % alphabet.size()];
    }
    try {
      read_scene_text(s, kFile, "");
      ++ok;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), kFile);
      EXPECT_GE(e.line(), 1) << e.what();
    } catch (...) {
      ADD_FAILURE() << "unexpected exception for:\n" << s;
    }
  }
  EXPECT_GT(ok, 0);
}

// ---- scenes made in code -----------------------------------------------------------------

TEST(BadInput, BuilderMisuseAndValidation) {
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  InputError e = catch_input_error(
      [&] { b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 1, m, SceneBuilder::circle(1)); });
  EXPECT_EQ(e.file(), "");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.field(), "straight_rod.nodes");
  e = catch_input_error([&] { b.part(3); });
  EXPECT_EQ(e.field(), "part");

  const int r = b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 5, m, SceneBuilder::circle(0.01));
  EXPECT_NO_THROW(b.build());
  b.fix_node(r, 5);
  e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "fixed_nodes[0]");
  EXPECT_EQ(e.message(), "node index 5 out of range for part 'r' (5 nodes, valid -5..4)");
  b.spec().fixed_nodes.clear();

  b.part(r).stiffness.EA = 0;
  e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "parts[0].stiffness.EA");
  b.part(r).stiffness.EA = -1;

  b.spec().materials[0].density = -1;
  e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "materials[0].density");
  b.spec().materials[0].density = 1000;

  b.part(r).material = 2;
  e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "parts[0].material");
  b.part(r).material = m;

  b.network("n", {vec3(0, 0, 0), vec3(1, 0, 0)}, {{0, 2}}, m, SceneBuilder::circle(0.01));
  e = catch_input_error([&] { b.build(); });
  EXPECT_EQ(e.field(), "parts[1]");
  EXPECT_EQ(e.message(), "edge 0 (nodes 0, 2): node id out of range (2 nodes)");
  b.part(1).edges = {{1, 1}};
  EXPECT_EQ(catch_input_error([&] { b.build(); }).message(),
            "edge 0 (nodes 1, 1) joins a node to itself");
  b.part(1).edges = {{0, 1}, {1, 0}};
  EXPECT_EQ(catch_input_error([&] { b.build(); }).message(),
            "edge 1 (nodes 1, 0) repeats an earlier edge");
  b.part(1).edges = {{0, 1}};
  b.part(1).name = "r";
  EXPECT_EQ(catch_input_error([&] { b.build(); }).message(), "duplicate part name 'r'");
  b.part(1).name = "n";

  b.part(0).natural_curvature.assign(3, {0, 0});
  EXPECT_NO_THROW(b.build());
  b.part(0).natural_curvature.assign(5, {0, 0});
  EXPECT_EQ(catch_input_error([&] { b.build(); }).field(), "parts[0].natural_curvature");
  b.part(0).natural_curvature.clear();

  b.integrator().kind = IntegratorKind::kNewmark;
  b.integrator().beta = 0;
  EXPECT_EQ(catch_input_error([&] { b.build(); }).field(), "integrator.beta");
  b.integrator().beta = 0.25;
  TimeFunction ramp;
  ramp.kind = TimeFunction::Kind::kRamp;  // ramp_time left at 0
  b.point_load(r, -1, vec3(0, 0, 1), ramp);
  EXPECT_EQ(catch_input_error([&] { b.build(); }).field(), "forces.point_loads[0].time.duration");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// what a scene asks for is never silently ignored: a load along a fixed DOF would do nothing,
// so it is refused at its line
TEST(BadInput, LoadsOnFixedDofsAreRefused) {
  const std::string load = with("  \"integrator\"",
                                "  \"forces\": {\"point_loads\": [\n"
                                "    {\"part\": \"beam\", \"node\": 1, \"force\": [0, 0, -1]}]},\n"
                                "  \"integrator\"");
  const InputError l = catch_input_error([&] { build_model(read_scene_text(load, kFile, "")); });
  EXPECT_EQ(l.file(), kFile);
  EXPECT_EQ(l.line(), line_of(load, "\"node\": 1"));
  EXPECT_NE(l.field().find("forces.point_loads[0]"), std::string::npos) << l.what();
  EXPECT_NE(l.message().find("z component on a fixed DOF"), std::string::npos) << l.what();
  // the same load on a free node is fine
  const std::string free_load = with("\"node\": 1,", "\"node\": 2,", load);
  EXPECT_NO_THROW(build_model(read_scene_text(free_load, kFile, "")));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// a pressure chamber along the beam (radius 1 mm, 50 edges): each bad field named with the file
// and the line of its entry (the second entry of the list here)
TEST(BadInput, PressureChambers) {
  auto chambers = [](const std::string& second) {
    return with("  \"integrator\"",
                "  \"forces\": {\"pressure_chambers\": [\n"
                "    {\"part\": \"beam\", \"area\": 1e-7, \"offset\": 5e-4, \"pressure\": 1e5},\n"
                "    " +
                    second +
                    "]},\n"
                    "  \"integrator\"");
  };
  const std::string ok = chambers(R"({"part": "beam", "first_edge": 10, "last_edge": -10,
      "area": 2e-7, "offset": 4e-4, "angle": 2.1, "alpha": 0.7, "pressure": 3e4})");
  // the first: 2 rows on each of the 50 edges (both ends are the rod's: their own edges take
  // the moments); the second: on edges 10..40, and half of each end moment on edges 9 and 41
  EXPECT_EQ(build_model(read_scene_text(ok, kFile, ""))->tables[kFamPressureChamber].rows,
            2 * 50 + 2 * 31 + 2);
  const std::vector<std::array<std::string, 3>> cases = {
      // (the second entry, its field, a part of the message)
      {R"({"part": "beam", "first_edge": 50, "area": 1e-7, "pressure": 1})", "first_edge",
       "must be an integer in [-50, 49]"},
      {R"({"part": "beam", "first_edge": 30, "last_edge": 20, "area": 1e-7, "pressure": 1})",
       "last_edge", "comes before first_edge"},
      {R"({"part": "beam", "area": -1e-7, "pressure": 1})", "area", "must be positive"},
      {R"({"part": "beam", "area": 4e-6, "pressure": 1})", "area",
       "must be smaller than part 'beam''s section"},
      {R"({"part": "beam", "area": 1e-7, "offset": 1.5e-3, "pressure": 1})", "offset",
       "lies outside part 'beam''s section (radius 0.001 m)"},
      {R"({"part": "beam", "area": 1e-7, "alpha": 1.5, "pressure": 1})", "alpha",
       "must be in (0, 1]"},
      {R"({"part": "beam", "area": 1e-7, "alpha": -0.5, "pressure": 1})", "alpha",
       "must be in (0, 1]"},
      {R"({"part": "beam", "area": 1e-7})", "pressure", "missing (required)"},
      {R"({"part": "beam", "area": 1e-7, "pressure": 1, "depth": 2})", "depth", "unknown field"},
  };
  for (const auto& c : cases) {
    const std::string text = chambers(c[0]);
    const InputError e = catch_input_error([&] { build_model(read_scene_text(text, kFile, "")); });
    EXPECT_EQ(e.file(), kFile) << c[0];
    EXPECT_EQ(e.line(), line_of(text, c[0])) << e.what();
    EXPECT_EQ(e.field(), "forces.pressure_chambers[1]." + c[1]) << e.what();
    EXPECT_NE(e.message().find(c[2]), std::string::npos) << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// a tendon along the beam (radius 1 mm, 51 nodes): each bad field named with the file and the
// line of its entry (the second entry of the list here); a tendon through one point, a node
// outside the rod, an offset outside the section and a negative tension among them
TEST(BadInput, Tendons) {
  auto tendons = [](const std::string& second) {
    return with("  \"integrator\"",
                "  \"forces\": {\"tendons\": [\n"
                "    {\"part\": \"beam\", \"offset\": 8e-4, \"tension\": 5},\n"
                "    " +
                    second +
                    "]},\n"
                    "  \"integrator\"");
  };
  const std::string ok = tendons(R"({"part": "beam", "nodes": [0, 10, 20, 30, 40, 50],
      "offset": [8e-4, 8e-4, 8e-4, 5e-4, 5e-4, 1e-3], "angle": 2.1, "tension": 3})");
  // the first: a segment between each two of the 51 nodes; the second: 5 segments
  EXPECT_EQ(build_model(read_scene_text(ok, kFile, ""))->tables[kFamTendon].rows, 50 + 5);
  const std::vector<std::array<std::string, 3>> cases = {
      // (the second entry, its field, a part of the message)
      {R"({"part": "beam", "nodes": [50], "offset": 5e-4, "tension": 1})", "nodes",
       "a tendon runs through 2 points or more"},
      {R"({"part": "beam", "nodes": [0, 51], "offset": 5e-4, "tension": 1})", "nodes",
       "entry 1 (51) must be an integer in [-51, 50]"},
      {R"({"part": "beam", "edges": [-51, 3], "offset": 5e-4, "tension": 1})", "edges",
       "entry 0 (-51) must be an integer in [-50, 49]"},
      {R"({"part": "beam", "offset": 1.2e-3, "tension": 1})", "offset",
       "lies outside part 'beam''s section (radius 0.001 m)"},
      {R"({"part": "beam", "offset": 5e-4, "tension": -1})", "tension",
       "must be 0 or more (a cable pulls, it cannot push)"},
      {R"({"part": "beam", "offset": [5e-4, 5e-4], "tension": 1})", "offset",
       "must be one number or one per point (51), got 2"},
      {R"({"part": "beam", "tension": 1})", "offset", "missing (required)"},
      {R"({"part": "beam", "offset": 5e-4, "tension": 1, "radius": 2})", "radius", "unknown field"},
  };
  for (const auto& c : cases) {
    const std::string text = tendons(c[0]);
    const InputError e = catch_input_error([&] { build_model(read_scene_text(text, kFile, "")); });
    EXPECT_EQ(e.file(), kFile) << c[0];
    EXPECT_EQ(e.line(), line_of(text, c[0])) << e.what();
    EXPECT_EQ(e.field(), "forces.tendons[1]." + c[1]) << e.what();
    EXPECT_NE(e.message().find(c[2]), std::string::npos) << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
