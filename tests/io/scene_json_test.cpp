#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "io_test_util.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;
using test::data_path;
using test::TempDir;

Real dist(const Vec3& a, const Vec3& b) { return norm(a - b); }

void expect_chain(const PartSpec& p, bool closed) {
  const int n = int(p.nodes.size());
  ASSERT_EQ(int(p.edges.size()), closed ? n : n - 1);
  for (int i = 0; i + 1 < n; ++i) {
    EXPECT_EQ(p.edges[size_t(i)], (std::array<int, 2>{i, i + 1}));
  }
  if (closed) {
    EXPECT_EQ(p.edges.back(), (std::array<int, 2>{n - 1, 0}));
  }
}

// ---- the full example scene --------------------------------------------------------------

class FullScene : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scene_ = new SceneSpec(read_scene_file(data_path("full_scene.json")));
  }
  static void TearDownTestSuite() {
    delete scene_;
    scene_ = nullptr;
  }
  static const SceneSpec& s() { return *scene_; }
  static SceneSpec* scene_;
};
SceneSpec* FullScene::scene_ = nullptr;

TEST_F(FullScene, TopLevelAndMaterials) {
  EXPECT_EQ(s().name, "io_full");
  EXPECT_EQ(s().file, data_path("full_scene.json"));
  EXPECT_EQ(s().base_dir, std::string(SLENDER_TEST_DATA_DIR));
  EXPECT_EQ(s().backend, BackendKind::kCpu);
  ASSERT_EQ(s().materials.size(), 2u);
  EXPECT_EQ(s().materials[1].name, "rubber");
  EXPECT_EQ(s().materials[1].density, 1273.52);
  EXPECT_EQ(s().materials[0].youngs_modulus, 2.1e11);
  EXPECT_EQ(s().materials[1].poisson_ratio, 0.5);
  EXPECT_EQ(s().materials[1].loc.line, 7);
  EXPECT_EQ(s().materials[1].loc.field, "materials[1]");
}

TEST_F(FullScene, PartsInFileOrderRodsThenNetworks) {
  ASSERT_EQ(s().parts.size(), 6u);
  const char* names[] = {"beam", "arm", "ring", "spring", "dismech_helix", "parachute"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s().parts[i].name, names[i]);
  }
  const PartSpec& beam = s().parts[0];
  EXPECT_EQ(beam.loc.file, data_path("full_scene.json"));
  EXPECT_EQ(beam.loc.line, 10);
  EXPECT_EQ(beam.loc.field, "rods[0]");
  EXPECT_EQ(s().parts[5].loc.field, "networks[0]");
  EXPECT_TRUE(beam.is_rod);
  EXPECT_FALSE(s().parts[5].is_rod);
}

TEST_F(FullScene, StraightRodWithOverridesAndVelocityFile) {
  const PartSpec& beam = s().parts[0];
  ASSERT_EQ(beam.nodes.size(), 201u);
  expect_chain(beam, false);
  EXPECT_EQ(beam.nodes[200][0], 1.0);
  EXPECT_DOUBLE_EQ(beam.nodes[100][0], 0.5);
  EXPECT_EQ(beam.material, 0);
  EXPECT_EQ(beam.section.kind, CrossSection::Kind::kCircle);
  EXPECT_EQ(beam.section.radius, 0.02);
  EXPECT_EQ(beam.stiffness.EA, 1e6);
  EXPECT_EQ(beam.stiffness.GJ, 2.5);
  EXPECT_LT(beam.stiffness.EI1, 0);  // derived
  EXPECT_LT(beam.stiffness.EI2, 0);

  // 201 velocity rows for the beam plus 4 uniform ones for the ring
  ASSERT_EQ(s().initial_velocities.size(), 205u);
  const std::vector<Vec3> v = read_vector_file(data_path("cantilever_init_velocity_n201.txt"));
  for (int i = 0; i < 201; ++i) {
    EXPECT_EQ(s().initial_velocities[size_t(i)].first.part, 0);
    EXPECT_EQ(s().initial_velocities[size_t(i)].first.index, i);
    EXPECT_EQ(s().initial_velocities[size_t(i)].second[2], v[size_t(i)][2]);
  }
  EXPECT_EQ(s().initial_velocities[201].first.part, 2);
  EXPECT_EQ(s().initial_velocities[204].second[2], 0.5);
}

TEST_F(FullScene, ResampledPolylineWithNaturalShape) {
  const PartSpec& arm = s().parts[1];
  // 0.3 m in edges of at most 0.1 m: 3 edges; 0.2 m: 2 edges
  ASSERT_EQ(arm.nodes.size(), 6u);
  expect_chain(arm, false);
  EXPECT_EQ(arm.nodes[3][2], 0.3);
  EXPECT_NEAR(arm.nodes[1][2], 0.1, 1e-15);
  EXPECT_NEAR(arm.nodes[4][0], 1.1, 1e-15);
  EXPECT_EQ(arm.section.kind, CrossSection::Kind::kRectangle);
  EXPECT_EQ(arm.section.width, 2e-3);
  EXPECT_EQ(arm.section.height, 1e-3);
  EXPECT_EQ(arm.frame_normal[1], 1.0);
  ASSERT_EQ(arm.natural_curvature.size(), 4u);  // interior nodes
  EXPECT_EQ(arm.natural_curvature[3][0], 1.5);
  ASSERT_EQ(arm.natural_twist.size(), 4u);
  EXPECT_EQ(arm.natural_twist[0], 0.25);
}

TEST_F(FullScene, ClosedRingHelixAndFileRod) {
  const PartSpec& ring = s().parts[2];
  ASSERT_EQ(ring.nodes.size(), 4u);
  expect_chain(ring, true);
  ASSERT_EQ(ring.natural_curvature.size(), 4u);
  EXPECT_EQ(ring.natural_curvature[2][0], 2.5);  // (a turn of 2.5 rad: below 0.9 pi)

  const PartSpec& spring = s().parts[3];
  ASSERT_EQ(spring.nodes.size(), 101u);
  expect_chain(spring, false);
  EXPECT_NEAR(dist(spring.nodes[0], vec3(0.02, 0, 2)), 0, 1e-15);

  const PartSpec& helix = s().parts[4];
  const std::vector<Vec3> x = read_vector_file(data_path("helix_configuration_n106.txt"));
  ASSERT_EQ(helix.nodes.size(), 106u);
  expect_chain(helix, false);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(dist(helix.nodes[i], x[i]), 0);
  }
}

TEST_F(FullScene, NetworkFromGeometryFile) {
  const PartSpec& net = s().parts[5];
  const GeometryFile g = read_geometry_file(data_path("hexparachute_n4_python.txt"));
  ASSERT_EQ(net.nodes.size(), g.nodes.size());
  EXPECT_EQ(net.edges, g.edges);
  EXPECT_EQ(net.triangles, g.triangles);
  EXPECT_EQ(net.thickness, 1e-3);
  EXPECT_EQ(net.stiffness.EI1, 1e-3);
  EXPECT_EQ(net.stiffness.EI2, 1e-3);
}

TEST_F(FullScene, JointsAndBoundary) {
  ASSERT_EQ(s().joints.size(), 1u);
  const JointSpec& j = s().joints[0];
  ASSERT_EQ(j.nodes.size(), 2u);
  EXPECT_EQ(j.nodes[0].part, 0);
  EXPECT_EQ(j.nodes[0].index, -1);
  EXPECT_EQ(j.nodes[1].part, 1);
  EXPECT_EQ(j.nodes[1].loc.field, "joints[0][1].node");
  EXPECT_EQ(j.loc.line, 36);

  ASSERT_EQ(s().fixed_nodes.size(), 2u);
  EXPECT_EQ(s().fixed_nodes[1].index, 1);
  EXPECT_EQ(s().fixed_nodes[1].loc.field, "boundary.fixed_nodes[0].nodes[1]");
  EXPECT_EQ(s().fixed_nodes[1].loc.line, 39);
  ASSERT_EQ(s().fixed_edges.size(), 1u);
  EXPECT_EQ(s().fixed_edges[0].part, 3);
  ASSERT_EQ(s().fixed_twist.size(), 2u);
  EXPECT_EQ(s().fixed_twist[1].index, -1);
  ASSERT_EQ(s().fixed_dofs.size(), 1u);
  EXPECT_EQ(s().fixed_dofs[0].node.part, 1);
  EXPECT_EQ(s().fixed_dofs[0].fix, (std::array<bool, 3>{true, false, true}));
}

TEST_F(FullScene, ForcesAndTimeFunctions) {
  const ForcesSpec& f = s().forces;
  EXPECT_EQ(f.gravity[2], -9.81);
  EXPECT_EQ(f.viscosity, 1.0);
  EXPECT_EQ(f.mass_damping, 0.1);
  ASSERT_EQ(f.point_loads.size(), 5u);
  EXPECT_EQ(f.point_loads[0].time.kind, TimeFunction::Kind::kConstant);
  EXPECT_EQ(f.point_loads[0].force[2], -1);
  EXPECT_EQ(f.point_loads[0].loc.field, "forces.point_loads[0]");
  EXPECT_EQ(f.point_loads[0].loc.line, 47);
  const TimeFunction& sine = f.point_loads[1].time;
  EXPECT_EQ(sine.kind, TimeFunction::Kind::kSine);
  EXPECT_EQ(sine.frequency, 2);
  EXPECT_EQ(sine.amplitude, 0.5);
  EXPECT_EQ(sine.phase, 0.1);
  EXPECT_EQ(sine.offset, 1);
  EXPECT_EQ(f.point_loads[2].time.kind, TimeFunction::Kind::kRamp);
  EXPECT_EQ(f.point_loads[2].time.ramp_time, 0.5);
  const TimeFunction& rows = f.point_loads[3].time;
  EXPECT_EQ(rows.kind, TimeFunction::Kind::kTable);
  ASSERT_EQ(rows.table.size(), 3u);
  EXPECT_EQ(rows.table[2][1], 0.5);
  EXPECT_EQ(f.point_loads[3].node.part, 5);
  const TimeFunction& file = f.point_loads[4].time;
  ASSERT_EQ(file.table.size(), 3u);
  EXPECT_EQ(file.table[1][0], 0.5);
  EXPECT_EQ(file.table[1][1], 1);
}

TEST_F(FullScene, IntegratorAndOutput) {
  const IntegratorSpec& g = s().integrator;
  EXPECT_EQ(g.kind, IntegratorKind::kNewmark);
  EXPECT_EQ(g.dt, 1e-3);
  EXPECT_EQ(g.duration, 2.0);
  EXPECT_EQ(g.beta, 0.3);
  EXPECT_EQ(g.gamma, 0.6);
  EXPECT_TRUE(g.adaptive);
  EXPECT_EQ(g.min_dt, 1e-6);
  EXPECT_FALSE(g.two_d);
  EXPECT_EQ(g.newton.max_iters, 30);
  EXPECT_EQ(g.newton.abs_tol, 1e-9);
  EXPECT_EQ(g.newton.rel_tol, 1e-11);
  EXPECT_EQ(g.newton.step_tol, 1e-13);
  EXPECT_FALSE(g.newton.line_search);
  const OutputSpec& o = s().output;
  EXPECT_EQ(o.dir, "out/io_full");
  EXPECT_EQ(o.every, 10);
  EXPECT_EQ(o.vtk_every, 30);
  EXPECT_FALSE(o.vtk);
  EXPECT_TRUE(o.energies);
  ASSERT_EQ(o.csv_nodes.size(), 2u);
  EXPECT_EQ(o.csv_nodes[1].part, 3);
  EXPECT_EQ(o.csv_nodes[1].index, 50);
}

// ---- small scenes ------------------------------------------------------------------------

const char* const kMinimal = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 3}}]
})";

TEST(SceneJson, DefaultsWhenBlocksAreAbsent) {
  const SceneSpec s = read_scene_text(kMinimal, "", "");
  const SceneSpec d;
  EXPECT_EQ(s.name, "scene");
  EXPECT_EQ(s.integrator.kind, IntegratorKind::kImplicitEuler);
  EXPECT_EQ(s.integrator.dt, d.integrator.dt);
  EXPECT_EQ(s.integrator.newton.max_iters, d.integrator.newton.max_iters);
  EXPECT_EQ(s.output.dir, d.output.dir);
  EXPECT_EQ(s.forces.gravity[2], 0);
  EXPECT_TRUE(s.fixed_nodes.empty());
  EXPECT_TRUE(s.initial_velocities.empty());
}

TEST(SceneJson, NameDefaultsToTheFileStem) {
  TempDir dir;
  const std::string path = dir.write("my_cantilever.json", kMinimal);
  EXPECT_EQ(read_scene_file(path).name, "my_cantilever");
}

TEST(SceneJson, RelativePathsResolveAgainstTheSceneFolder) {
  TempDir dir;
  dir.write("scenes/geom/tri.txt", "*Nodes\n0 0 0\n1 0 0\n0 1 0\n*Edges\n1 2\n2 3\n");
  dir.write("scenes/v.txt", "0 0 1\n0 0 2\n0 0 3\n");
  const std::string path = dir.write("scenes/net.json", R"({
    "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.3}],
    "networks": [{"name": "n", "material": "m", "radius": 0.01, "file": "geom/tri.txt",
                  "initial_velocity": {"file": "v.txt"}}]
  })");
  const SceneSpec s = read_scene_file(path);
  EXPECT_EQ(s.base_dir, dir.path() + "/scenes");
  ASSERT_EQ(s.parts.size(), 1u);
  EXPECT_EQ(s.parts[0].edges.size(), 2u);
  ASSERT_EQ(s.initial_velocities.size(), 3u);
  EXPECT_EQ(s.initial_velocities[2].second[2], 3);

  // the same text through read_scene_text and an explicit base folder
  std::string text = R"({
    "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.3}],
    "networks": [{"name": "n", "material": "m", "radius": 0.01, "file": "geom/tri.txt"}]
  })";
  EXPECT_EQ(read_scene_text(text, "inline", dir.path() + "/scenes").parts[0].nodes.size(), 3u);
}

TEST(SceneJson, MissingSceneFile) {
  const InputError e = catch_input_error([] { read_scene_file("/nonexistent/scene.json"); });
  EXPECT_EQ(e.file(), "/nonexistent/scene.json");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.field(), "");
  EXPECT_EQ(e.message(), "cannot open scene file");
}

// ---- builder generators ------------------------------------------------------------------

TEST(SceneBuilder, StraightRodIsEvenlySpacedWithExactEnds) {
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 4, m, SceneBuilder::circle(1e-3));
  const PartSpec& p = b.part(r);
  ASSERT_EQ(p.nodes.size(), 4u);
  expect_chain(p, false);
  EXPECT_EQ(p.nodes[3][0], 0.3);
  EXPECT_NEAR(p.nodes[1][0], 0.1, 1e-16);
  EXPECT_TRUE(p.is_rod);
}

TEST(SceneBuilder, ResampledPolylineSplitsEachSegmentEvenly) {
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  const std::vector<Vec3> corners = {vec3(0, 0, 0), vec3(1, 0, 0), vec3(1, 0.25, 0)};
  const PartSpec& p =
      b.part(b.polyline_rod_resampled("r", corners, 0.3, m, SceneBuilder::circle(1e-3)));
  // ceil(1 / 0.3) = 4 edges of 0.25, then ceil(0.25 / 0.3) = 1 edge
  ASSERT_EQ(p.nodes.size(), 6u);
  expect_chain(p, false);
  EXPECT_EQ(dist(p.nodes[4], corners[1]), 0);
  EXPECT_EQ(dist(p.nodes[5], corners[2]), 0);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(dist(p.nodes[i], p.nodes[i + 1]), 0.25, 1e-15);
  }
  // an exact multiple gains no extra edge through rounding
  const PartSpec& q = b.part(b.polyline_rod_resampled("q", {vec3(0, 0, 0), vec3(0.7, 0, 0)}, 0.1, m,
                                                      SceneBuilder::circle(1e-3)));
  EXPECT_EQ(q.nodes.size(), 8u);
}

TEST(SceneBuilder, HelixGeometry) {
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  const Vec3 c = vec3(1, 2, 3);
  const Real r = 0.02, pitch = 0.05, length = 0.5;
  const int n = 201;
  const PartSpec& p = b.part(
      b.helix_rod("h", c, vec3(0, 0, 2), r, pitch, length, n, m, SceneBuilder::circle(1e-3)));
  ASSERT_EQ(p.nodes.size(), size_t(n));
  expect_chain(p, false);
  // first node at center + r * x (the axis least aligned with z, lowest index on ties)
  EXPECT_NEAR(dist(p.nodes[0], c + r * vec3(1, 0, 0)), 0, 1e-15);
  const Real h = pitch / (2 * kPi);
  const Real dtheta = length / std::sqrt(r * r + h * h) / (n - 1);
  const Real chord = std::hypot(2 * r * std::sin(dtheta / 2), h * dtheta);
  for (int i = 0; i < n; ++i) {
    const Vec3 d = p.nodes[size_t(i)] - c;
    EXPECT_NEAR(std::hypot(d[0], d[1]), r, 1e-15);  // on the cylinder
    EXPECT_NEAR(d[2], h * dtheta * i, 1e-14);       // rises along +axis
    if (i > 0) {
      const Real l = dist(p.nodes[size_t(i)], p.nodes[size_t(i - 1)]);
      EXPECT_NEAR(l, chord, 1e-15);  // equal chords of equal parameter steps
    }
  }
  // the arc (contour) length is the requested one: sqrt(r^2 + h^2) per radian
  EXPECT_NEAR(std::sqrt(r * r + h * h) * dtheta * (n - 1), length, 1e-15);
  // the winding is right-handed about the axis: the second node turns from x towards y
  EXPECT_GT(p.nodes[1][1] - c[1], 0);
}

TEST(SceneBuilder, HelixStartDirectionIsNormalToAnyAxis) {
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  const Vec3 axis = vec3(1, 1, 1);
  const PartSpec& p = b.part(
      b.helix_rod("h", vec3(0, 0, 0), axis, 0.5, 0.1, 2.0, 10, m, SceneBuilder::circle(1e-3)));
  const Vec3 u = p.nodes[0] / 0.5;
  EXPECT_NEAR(norm(u), 1, 1e-15);
  EXPECT_NEAR(dot(u, axis), 0, 1e-15);
  EXPECT_GT(dot(p.nodes.back(), axis), 0);
}

TEST(SceneBuilder, ClosedPolylineAndNetwork) {
  SceneBuilder b;
  const int m = b.material("m", 1000, 1e6, 0.3);
  const PartSpec& ring = b.part(b.polyline_rod(
      "ring", {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0)}, m, SceneBuilder::circle(1e-3), true));
  expect_chain(ring, true);
  const PartSpec& net = b.part(b.network("net", {vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0)},
                                         {{0, 1}, {0, 2}}, m, SceneBuilder::circle(1e-3)));
  EXPECT_FALSE(net.is_rod);
  EXPECT_EQ(net.edges[1], (std::array<int, 2>{0, 2}));
  const PartSpec& file = b.part(b.geometry_file("file", data_path("hexparachute_n4_python.txt"), m,
                                                SceneBuilder::rectangle(1e-3, 2e-3)));
  EXPECT_EQ(file.nodes.size(), 22u);
  EXPECT_EQ(file.triangles.size(), 16u);
  EXPECT_FALSE(file.is_rod);
  b.part(2).thickness = 1e-3;  // the canopy triangles make the part a shell too
  EXPECT_NO_THROW(b.build());
}

// ---- JSON and builder give the same scene ------------------------------------------------

TEST(SceneRoundTrip, JsonAndBuilderMakeTheSameSpec) {
  TempDir dir;
  dir.write("net.txt", "*Nodes\n0 0 -1\n0.5 0 -1\n1 0 -1\n*Edges\n1 2\n2 3\n");
  const std::string path = dir.write("rt.json", R"({
    "name": "rt",
    "materials": [
      {"name": "steel", "density": 7850, "youngs_modulus": 2.1e11, "poisson_ratio": 0.3},
      {"name": "soft", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.49}],
    "rods": [
      {"name": "beam", "material": "steel", "radius": 1e-3,
       "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 51},
       "stiffness": {"EI1": 2e-3}},
      {"name": "bent", "material": "soft", "cross_section": {"width": 1e-3, "height": 2e-3},
       "shape": {"type": "polyline", "points": [[0.1, 0, 0], [0.1, 0, 0.05], [0.2, 0, 0.05]],
                 "max_edge_length": 0.007}},
      {"name": "coil", "material": "soft", "radius": 5e-4,
       "shape": {"type": "helix", "center": [0, 0.1, 0], "axis": [0, 1, 0], "radius": 0.01,
                 "pitch": 0.004, "length": 0.3, "nodes": 77}},
      {"name": "loop", "material": "soft", "radius": 5e-4,
       "shape": {"type": "nodes", "points": [[0, 0, 1], [1, 0, 1], [1, 1, 1]], "closed": true}}
    ],
    "networks": [{"name": "net", "file": "net.txt", "material": "steel", "radius": 1e-3}],
    "joints": [[{"part": "beam", "node": -1}, {"part": "bent", "node": 0}]],
    "boundary": {"fixed_nodes": [{"part": "beam", "nodes": [0, 1]}, {"part": "net", "nodes": [-1]}],
                 "fixed_twist": [{"part": "beam", "edges": [0]}]},
    "forces": {"gravity": [0, 0, -9.81],
               "point_loads": [{"part": "coil", "node": -1, "force": [0, 0, -1]}]}
  })");
  const SceneSpec js = read_scene_file(path);

  SceneBuilder b;
  b.name("rt");
  const int steel = b.material("steel", 7850, 2.1e11, 0.3);
  const int soft = b.material("soft", 1000, 1e6, 0.49);
  const int beam =
      b.straight_rod("beam", vec3(0, 0, 0), vec3(0.1, 0, 0), 51, steel, SceneBuilder::circle(1e-3));
  b.part(beam).stiffness.EI1 = 2e-3;
  const int bent =
      b.polyline_rod_resampled("bent", {vec3(0.1, 0, 0), vec3(0.1, 0, 0.05), vec3(0.2, 0, 0.05)},
                               0.007, soft, SceneBuilder::rectangle(1e-3, 2e-3));
  const int coil = b.helix_rod("coil", vec3(0, 0.1, 0), vec3(0, 1, 0), 0.01, 0.004, 0.3, 77, soft,
                               SceneBuilder::circle(5e-4));
  b.polyline_rod("loop", {vec3(0, 0, 1), vec3(1, 0, 1), vec3(1, 1, 1)}, soft,
                 SceneBuilder::circle(5e-4), true);
  const int net =
      b.geometry_file("net", dir.path() + "/net.txt", steel, SceneBuilder::circle(1e-3));
  b.joint({NodeRef{beam, -1, {}}, NodeRef{bent, 0, {}}});
  b.fix_node(beam, 0).fix_node(beam, 1).fix_node(net, -1).fix_twist(beam, 0);
  b.gravity(vec3(0, 0, -9.81)).point_load(coil, -1, vec3(0, 0, -1));
  const SceneSpec bs = b.build();

  EXPECT_EQ(js.name, bs.name);
  ASSERT_EQ(js.materials.size(), bs.materials.size());
  for (size_t i = 0; i < bs.materials.size(); ++i) {
    EXPECT_EQ(js.materials[i].name, bs.materials[i].name);
    EXPECT_EQ(js.materials[i].density, bs.materials[i].density);
    EXPECT_EQ(js.materials[i].youngs_modulus, bs.materials[i].youngs_modulus);
    EXPECT_EQ(js.materials[i].poisson_ratio, bs.materials[i].poisson_ratio);
  }
  ASSERT_EQ(js.parts.size(), bs.parts.size());
  for (size_t i = 0; i < bs.parts.size(); ++i) {
    const PartSpec& a = js.parts[i];
    const PartSpec& c = bs.parts[i];
    EXPECT_EQ(a.name, c.name);
    ASSERT_EQ(a.nodes.size(), c.nodes.size()) << a.name;
    for (size_t k = 0; k < a.nodes.size(); ++k) {
      for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(a.nodes[k][d], c.nodes[k][d]) << a.name;  // bitwise
      }
    }
    EXPECT_EQ(a.edges, c.edges) << a.name;
    EXPECT_EQ(a.triangles, c.triangles) << a.name;
    EXPECT_EQ(a.material, c.material);
    EXPECT_EQ(a.is_rod, c.is_rod);
    EXPECT_EQ(a.section.kind, c.section.kind);
    EXPECT_EQ(a.section.radius, c.section.radius);
    EXPECT_EQ(a.section.width, c.section.width);
    EXPECT_EQ(a.section.height, c.section.height);
    EXPECT_EQ(a.stiffness.EA, c.stiffness.EA);
    EXPECT_EQ(a.stiffness.EI1, c.stiffness.EI1);
  }
  ASSERT_EQ(js.fixed_nodes.size(), bs.fixed_nodes.size());
  for (size_t i = 0; i < bs.fixed_nodes.size(); ++i) {
    EXPECT_EQ(js.fixed_nodes[i].part, bs.fixed_nodes[i].part);
    EXPECT_EQ(js.fixed_nodes[i].index, bs.fixed_nodes[i].index);
  }
  ASSERT_EQ(js.fixed_twist.size(), 1u);
  EXPECT_EQ(js.fixed_twist[0].part, bs.fixed_twist[0].part);
  ASSERT_EQ(js.joints.size(), 1u);
  EXPECT_EQ(js.joints[0].nodes[1].part, bs.joints[0].nodes[1].part);
  EXPECT_EQ(js.forces.gravity[2], bs.forces.gravity[2]);
  ASSERT_EQ(js.forces.point_loads.size(), 1u);
  EXPECT_EQ(js.forces.point_loads[0].node.part, bs.forces.point_loads[0].node.part);
  EXPECT_EQ(js.forces.point_loads[0].force[2], bs.forces.point_loads[0].force[2]);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

TEST(SceneJsonForces, BuoyancyAndAerodynamicDrag) {
  const std::string base = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
  "shells": [{"name": "p", "material": "m", "thickness": 1e-3,
              "mesh": {"type": "rectangle", "u": [1, 0, 0], "v": [0, 1, 0], "edge_length": 0.5}}],
  "forces": {"buoyancy": {"medium_density": 1025},
             "aerodynamic_drag": {"coefficient": 0.5, "medium_density": DRAG}}
})";
  std::string ok = base;
  ok.replace(ok.find("DRAG"), 4, "1.2");
  const SceneSpec s = read_scene_text(ok, "f.json", ".");
  EXPECT_EQ(s.forces.buoyancy_density, 1025);
  EXPECT_EQ(s.forces.drag_coefficient, 0.5);
  EXPECT_EQ(s.forces.drag_density, 1.2);

  std::string bad = base;
  bad.replace(bad.find("DRAG"), 4, "-1");
  try {
    read_scene_text(bad, "f.json", ".");
    FAIL() << "a negative medium density was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "f.json");
    EXPECT_NE(e.field().find("aerodynamic_drag.medium_density"), std::string::npos) << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
