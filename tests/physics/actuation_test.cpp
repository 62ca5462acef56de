// Actuation by the natural shape: driven rod curvature and shell hinge angles reach the shapes
// they prescribe, a travelling wave has the prescribed phases, the code callback acts like the
// scene's actuation, and a selection that drives nothing is an input error. The rods' natural
// stretch (Py-DiSMech §IV) contracts a free rod to its natural length, by the scene, the
// Simulator's action and the callback alike; a per-spring time series (MAT-DiSMech §6.1)
// sampled at the step times reproduces the time function it samples.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "physics_util.h"
#include "slender/core/error.h"
#include "slender/stencils/shell_hinge.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// a rod whose natural curvature is driven to k: with no load it becomes a regular polygon
// arc, turning by phi = 2 atan(k dl / 2) at every node, so its end-to-end distance is
// l sin(N phi / 2) / sin(phi / 2) for N edges of length l
TEST(Actuation, RodCurvatureBendsTheRodIntoAnArc) {
  const int nodes = 21;
  const Real L = 0.2, k = 10;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(L, 0, 0), nodes, mat, SceneBuilder::circle(2e-3));
  b.fix_edge(rod, 0);
  ActuationSpec a;
  a.target = ActuationSpec::Target::kRodCurvature1;
  a.part = rod;
  a.amplitude = k;
  a.time.kind = TimeFunction::Kind::kRamp;  // static load steps drive it up gradually
  a.time.ramp_time = 1;
  b.actuate(a);
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 0.125;
  b.integrator().duration = 1;
  const auto m = build_model(b.build());
  EXPECT_EQ(int(m->actuated.size()), nodes - 2);
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 8));
  const Real l = L / (nodes - 1), phi = 2 * std::atan(k * l / 2);
  const int N = nodes - 1;
  const Real chord = l * std::sin(N * phi / 2) / std::sin(phi / 2);
  const Vec3 end = test::node_position(sim.state(), nodes - 1);
  const Vec3 start = test::node_position(sim.state(), 0);
  // the static solve converges to 1e-8 N; stretching (EA l / l) makes lengths exact to ~1e-9
  EXPECT_NEAR(norm(end - start), chord, 1e-6 * L);
  for (int s = 0; s < m->nbend; ++s)
    EXPECT_NEAR(sim.bend_strains()[3 * s], k * l, 1e-6);
}

// a plate folded along its centre line: the driven hinges reach the driven angle exactly (the
// two halves stay flat, so nothing resists)
std::shared_ptr<const Model> folding_plate(Real angle,
                                           bool scene_actuation,
                                           int split = 1,
                                           Real ramp_in = 0) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const int s = b.rectangle_shell("plate", vec3(-0.05, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.04, 0),
                                  0.01, true, mat, 1e-3);
  b.membrane(s, MembraneModel::kSprings);
  const PartSpec& p = b.part(s);
  for (int i = 0; i < int(p.nodes.size()); ++i)
    if (p.nodes[i][0] < -0.04) b.fix_node(s, i);
  // `split` actuations of angle / split each on the same hinges: they add up
  for (int k = 0; scene_actuation && k < split; ++k) {
    ActuationSpec a;
    a.target = ActuationSpec::Target::kHingeAngle;
    a.part = s;
    a.amplitude = angle / split;
    a.ramp_in = ramp_in;
    a.select_normal = vec3(1, 0, 0);  // hinges on the plane x = 0
    b.actuate(a);
  }
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 0.25;
  b.integrator().duration = 1;
  return build_model(b.build());
}

Real hinge_angle(const Model& m, const State& s, int k) {
  Vec<12> x;
  for (int a = 0; a < 4; ++a)
    x.set_segment(3 * a, test::node_position(s, m.hinge_node[4 * k + a]));
  return shell_hinge_angle(x);
}

bool on_centre_line(const Model& m, int k) {
  return std::fabs(m.node_x0[3 * m.hinge_node[4 * k]]) < 1e-12 &&
         std::fabs(m.node_x0[3 * m.hinge_node[4 * k + 1]]) < 1e-12;
}

TEST(Actuation, HingeAngleFoldsAPlate) {
  const Real angle = 0.8;
  const auto m = folding_plate(angle, true);
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 4));
  int driven = 0;
  for (int k = 0; k < m->nhinge; ++k) {
    if (on_centre_line(*m, k)) {
      ++driven;
      EXPECT_NEAR(hinge_angle(*m, sim.state(), k), angle, 1e-6);
    } else {
      EXPECT_NEAR(hinge_angle(*m, sim.state(), k), 0, 1e-6);
    }
  }
  EXPECT_EQ(driven, int(m->actuated.size()));
  EXPECT_GT(driven, 2);
}

TEST(Actuation, SeveralActuationsAddUpAndRampIn) {
  const Real angle = 0.8;
  const auto m = folding_plate(angle, true, 2);
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 4));
  // half way through a 2 s ramp-in at the end of the static run (t = 1 s)
  const auto r = folding_plate(angle, true, 1, 2.0);
  Simulator sr(r);
  ASSERT_TRUE(test::run_steps(sr, 4));
  for (int k = 0; k < m->nhinge; ++k) {
    if (!on_centre_line(*m, k)) continue;
    EXPECT_NEAR(hinge_angle(*m, sim.state(), k), angle, 1e-6);
    EXPECT_NEAR(hinge_angle(*r, sr.state(), k), angle / 2, 1e-6);
  }
}

TEST(Actuation, CallbackActsLikeTheSceneActuation) {
  const Real angle = 0.8;
  const auto a = folding_plate(angle, true);
  const auto b = folding_plate(angle, false);
  Simulator sa(a), sb(b);
  std::vector<int> centre;
  for (int k = 0; k < b->nhinge; ++k)
    if (on_centre_line(*b, k)) centre.push_back(k);
  sb.set_actuation([&](Real, NaturalShape& shape) {
    for (int k : centre)
      shape.hinge_phi_bar[k] = b->hinge_phi_bar[k] + angle;
  });
  ASSERT_TRUE(test::run_steps(sa, 4));
  ASSERT_TRUE(test::run_steps(sb, 4));
  for (size_t i = 0; i < sa.state().q.size(); ++i)
    EXPECT_EQ(sa.state().q[i], sb.state().q[i]);
}

// a travelling sine: phase = phase_per_length * (centre - origin) . direction
TEST(Actuation, TravellingWaveHasThePrescribedPhases) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 11, mat, SceneBuilder::circle(2e-3));
  ActuationSpec a;
  a.target = ActuationSpec::Target::kRodCurvature2;
  a.part = rod;
  a.amplitude = 2;
  a.time.kind = TimeFunction::Kind::kSine;
  a.time.frequency = 1;
  a.wave_direction = vec3(2, 0, 0);  // normalized by the model
  a.phase_per_length = kPi;
  b.actuate(a);
  const auto m = build_model(b.build());
  ASSERT_EQ(int(m->actuated.size()), 9);
  for (const ActuatedSpring& s : m->actuated) {
    const Real x = m->node_x0[3 * m->bend_node[3 * s.index + 1]];
    EXPECT_NEAR(s.phase, kPi * x, 1e-12);
    EXPECT_EQ(s.component, 1);
    EXPECT_NEAR(s.scale, 0.1, 1e-12);
  }
}

// ---- mid-edge shells: the actuated natural curvature ----------------------------------------

constexpr Real kStripL = 0.1, kStripW = 0.01;

// a mid-edge strip along x clamped at x = 0 (its row of nodes and their edges' xi), without
// gravity, driven to the natural curvature `k` along x by a ramp over the static run (or, with
// `scene` false, by nothing: the caller's callback)
std::shared_ptr<const Model> curling_strip(Real k, bool scene, int steps, bool grid = true) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const int s = b.rectangle_shell("strip", vec3(0, 0, 0), vec3(kStripL, 0, 0), vec3(0, kStripW, 0),
                                  5e-3, grid, mat, 1e-3, ShellBending::kMidEdge);
  std::vector<int> row;
  for (int i = 0; i < int(b.part(s).nodes.size()); ++i)
    if (b.part(s).nodes[i][0] <= 1e-12) row.push_back(i);
  b.fix_shell_edges(s, row);
  if (scene) {
    ActuationSpec a;
    a.target = ActuationSpec::Target::kMidEdgeCurvature;
    a.part = s;
    a.amplitude = k;
    a.direction = vec3(2, 0, 0);  // made unit in each triangle's plane
    a.time.kind = TimeFunction::Kind::kRamp;
    a.time.ramp_time = 1;
    b.actuate(a);
  }
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 1.0 / steps;
  b.integrator().duration = 1;
  return build_model(b.build());
}

// the largest distance of a node from the arc of curvature k through the clamp (positive k
// curls the strip away from its normal +z: node (s, y) goes to (sin(k s) / k, y,
// -(1 - cos(k s)) / k))
Real arc_error(const Model& m, const State& st, Real k) {
  Real worst = 0;
  for (int n = 0; n < m.nnode; ++n) {
    const Real s = m.node_x0[3 * n], y = m.node_x0[3 * n + 1];
    const Vec3 arc = vec3(std::sin(k * s) / k, y, -(1 - std::cos(k * s)) / k);
    worst = std::max(worst, norm(test::node_position(st, n) - arc));
  }
  return worst;
}

// A strip driven to the natural curvature k curls into the arc of curvature k (a quarter
// circle here), half of it half way through the ramp: the time function drives it. Bending a
// flat strip to a cylinder is an isometry and Lambda_act turns with each triangle, so nothing
// resists but the mesh's discretization of the cylinder (two triangles across the strip);
// the tolerance is 0.1 % of L.
TEST(Actuation, MidEdgeCurvatureCurlsAStripIntoTheArc) {
  const Real k = kPi / (2 * kStripL);
  const auto m = curling_strip(k, true, 10);
  EXPECT_EQ(int(m->actuated.size()), 3 * m->nmid);
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 5));
  const Real half = arc_error(*m, sim.state(), k / 2);
  ASSERT_TRUE(test::run_steps(sim, 5));
  const Real full = arc_error(*m, sim.state(), k);
  std::printf(
      "mid-edge strip driven to k L = pi/2: largest distance from the arc %.2e L (half "
      "way, k / 2: %.2e L)\n",
      full / kStripL, half / kStripL);
  EXPECT_LT(full, 1e-3 * kStripL);  // measured 4.9e-4 L
  EXPECT_LT(half, 1e-3 * kStripL);  // measured 8.5e-5 L
  // the tip really turned: a quarter circle ends at (1/k, -1/k)
  EXPECT_GT(arc_error(*m, sim.state(), k / 2), 0.05 * kStripL);
}

// the callback's mid_kappa_bar is the same input as the scene's actuation, bit for bit
TEST(Actuation, MidEdgeCallbackActsLikeTheSceneActuation) {
  const Real k = 4;
  const auto a = curling_strip(k, true, 4);
  const auto b = curling_strip(k, false, 4);
  const std::vector<Real> unit = midedge_curvature_components(*b, vec3(1, 0, 0));
  Simulator sa(a), sb(b);
  sb.set_actuation([&](Real t, NaturalShape& shape) {
    ASSERT_EQ(shape.nmid, b->nmid);
    for (int i = 0; i < 3 * shape.nmid; ++i)
      shape.mid_kappa_bar[i] = std::min(t, Real(1)) * k * unit[i];
  });
  ASSERT_TRUE(test::run_steps(sa, 4));
  ASSERT_TRUE(test::run_steps(sb, 4));
  EXPECT_EQ(sa.state().q, sb.state().q);
}

TEST(Actuation, SelectionThatDrivesNothingIsAnInputError) {
  const std::string text = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
  "rods": [{"name": "r", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 5}}],
  "actuation": [{"target": "rod_twist", "part": "r", "amplitude": 1,
                 "select": {"point": [0, 0, 5], "normal": [0, 0, 1]}}]
})";
  const SceneSpec s = read_scene_text(text, "a.json", ".");
  ASSERT_EQ(s.actuation.size(), 1u);
  try {
    build_model(s);
    FAIL() << "an actuation that selects nothing was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "a.json");
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.field(), "actuation[0].select");
    EXPECT_NE(std::string(e.what()).find("takes none of the 3 bend-twist springs"),
              std::string::npos)
        << e.what();
  }
}

// an actuation of the wrong kind for its part says which kinds the part has (issue 53: a
// mid-edge shell driven by hinge_angle used to hear only that nothing was selected)
TEST(Actuation, WrongKindOfSpringNamesThePartsKinds) {
  auto scene = [](const std::string& bending, const std::string& target) {
    return R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
  "shells": [{"name": "sheet", "material": "m", "thickness": 1e-3, "bending": ")" +
           bending + R"(",
              "mesh": {"type": "rectangle", "u": [0.1, 0, 0], "v": [0, 0.02, 0],
                       "edge_length": 0.01}}],
  "actuation": [{"target": ")" +
           target + R"(", "part": "sheet", "amplitude": 1}]
})";
  };
  struct Case {
    std::string bending, target, want;
  } cases[] = {
      {"mid_edge", "hinge_angle", "its springs are mid-edge triangles: target midedge_curvature"},
      {"hinge", "midedge_curvature", "its springs are hinges: target hinge_angle"},
      {"mid_edge", "rod_twist", "rod targets need rod edges; 'sheet' has none"},
  };
  for (const Case& c : cases) {
    try {
      build_model(read_scene_text(scene(c.bending, c.target), "a.json", "."));
      FAIL() << c.target << " on a " << c.bending << " shell was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "a.json");
      EXPECT_EQ(e.line(), 6);
      EXPECT_EQ(e.field(), "actuation[0].target");
      EXPECT_NE(std::string(e.what()).find(c.want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'sheet'"), std::string::npos) << e.what();
    }
  }
}

// ---- natural stretch of rod edges ----

// a free rod along x, held only against rigid motion (node 0, the last node's y and z, the
// first edge's twist), whose natural stretch goes to s: by the scene's rod_stretch actuation
// (amplitude s - 1, ramped over the static load steps), or by the Simulator's action
std::shared_ptr<const Model> free_rod(Real s, bool scene) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 11, mat, SceneBuilder::circle(2e-3));
  b.fix_node(rod, 0).fix_dofs(rod, -1, false, true, true).fix_twist(rod, 0);
  if (scene) {
    ActuationSpec a;
    a.target = ActuationSpec::Target::kRodStretch;
    a.part = rod;
    a.amplitude = s - 1;
    a.time.kind = TimeFunction::Kind::kRamp;
    a.time.ramp_time = 1;
    b.actuate(a);
  }
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 0.25;
  b.integrator().duration = 1;
  return build_model(b.build());
}

// Statically the rod takes its natural length s L: Newton's residual (1e-8 N) over an edge's
// axial stiffness EA / (s l) (about 8e3 N/m) leaves 1.3e-12 m per edge, 1.3e-11 m over the ten
// (7e-11 L): within 1e-9 L. Contraction (0.8) and extension (1.1); the action gives the same
// length (it reaches it in one load step), and its stretch energy there is zero.
TEST(Actuation, NaturalStretchContractsAFreeRodToItsNaturalLength) {
  const Real L = 0.2;
  for (Real s : {0.8, 1.1}) {
    const auto m = free_rod(s, true);
    EXPECT_EQ(int(m->actuated.size()), m->nedge);
    Simulator sim(m);
    ASSERT_TRUE(test::run_steps(sim, 4));
    const Real len = test::node_position(sim.state(), m->nnode - 1)[0];
    std::printf("natural stretch %.2f: length %.15f L (off by %.1e L)\n", s, len / L,
                std::fabs(len / L - s));
    EXPECT_NEAR(len, s * L, 1e-9 * L) << "s = " << s;
    for (int e = 0; e < m->nedge; ++e)  // each edge at its own natural length
      EXPECT_NEAR(
          test::node_position(sim.state(), e + 1)[0] - test::node_position(sim.state(), e)[0],
          s * m->edge_l_bar[e], 1e-10 * L);
    // the strains are measured against the rest length: s - 1
    const std::vector<Real> eps = sim.strains(StrainKind::kStretch);
    EXPECT_NEAR(eps[0], s - 1, 1e-9);
    const auto plain = free_rod(s, false);
    Simulator act(plain);
    act.set_natural_stretch(std::vector<Real>(size_t(plain->nedge), s));
    ASSERT_TRUE(test::run_steps(act, 1));
    EXPECT_NEAR(test::node_position(act.state(), plain->nnode - 1)[0], s * L, 1e-9 * L);
    EXPECT_LT(act.energies().stretch, 1e-12);
    // back to the rest length once the action is cleared
    act.set_natural_stretch({});
    ASSERT_TRUE(test::run_steps(act, 1));
    EXPECT_NEAR(test::node_position(act.state(), plain->nnode - 1)[0], L, 1e-9 * L);
  }
}

// the scene's stretch, the Simulator's action and the callback set the same natural lengths:
// the same bits over a few dynamic steps of a hanging, contracting cantilever; a value that is
// not positive is refused by the action and the callback, and a scene stretch that reaches zero
// stops the run with an error naming the actuation
TEST(Actuation, NaturalStretchByActionAndCallbackActsLikeTheScene) {
  auto model = [](bool scene, Real amplitude) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e6, 0.5);
    const int rod =
        b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(5e-3));
    b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
    if (scene) {
      ActuationSpec a;
      a.target = ActuationSpec::Target::kRodStretch;
      a.part = rod;
      a.amplitude = amplitude;
      b.actuate(a);
    }
    b.integrator().dt = 1e-3;
    return build_model(b.build());
  };
  const Real a = -0.05;
  const auto ms = model(true, a), mp = model(false, 0);
  Simulator ss(ms), sa(mp), sc(mp);
  sa.set_natural_stretch(std::vector<Real>(size_t(mp->nedge), 1 + a));
  sc.set_actuation([&](Real, NaturalShape& sh) {
    ASSERT_EQ(sh.nedge, mp->nedge);
    for (int e = 0; e < sh.nedge; ++e)
      sh.edge_stretch_bar[e] = 1 + a;
  });
  ASSERT_TRUE(test::run_steps(ss, 5));
  ASSERT_TRUE(test::run_steps(sa, 5));
  ASSERT_TRUE(test::run_steps(sc, 5));
  EXPECT_EQ(ss.state().q, sa.state().q);
  EXPECT_EQ(ss.state().q, sc.state().q);
  EXPECT_LT(test::node_position(ss.state(), mp->nnode - 1)[0], 0.3 * (1 + a / 2));  // contracted
  std::vector<Real> bad(size_t(mp->nedge), 1);
  bad[3] = 0;
  EXPECT_THROW(sa.set_natural_stretch(bad), Error);
  bad[3] = NAN;
  EXPECT_THROW(sa.set_natural_stretch(bad), Error);
  EXPECT_THROW(sa.set_natural_stretch({1, 1}), Error);
  sc.set_actuation([](Real, NaturalShape& sh) { sh.edge_stretch_bar[2] = -1; });
  EXPECT_THROW(sc.step(), Error);
  Simulator zero(model(true, -1));
  try {
    zero.step();
    FAIL() << "a natural stretch of 0 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("actuation[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("must stay positive"), std::string::npos) << e.what();
  }
}

// ---- per-spring time series ----

// a scratch folder for a test's scene and CSV files (removed at the end)
struct ScratchDir {
  std::filesystem::path dir;
  explicit ScratchDir(const std::string& name)
      : dir(std::filesystem::path(::testing::TempDir()) / name) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path() const { return dir.string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
};

const char* kSeriesRod = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 0.005,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.3, 0, 0], "nodes": 12}}],
  "boundary": {"fixed_edges": [{"part": "r", "edges": [0]}]},
  "forces": {"gravity": [0, 0, -9.8]},
  "actuation": [%s],
  "integrator": {"type": "implicit_midpoint", "dt": 1e-3, "duration": 1}
})";

std::string series_scene(const std::string& actuation) {
  std::vector<char> buf(std::string(kSeriesRod).size() + actuation.size() + 16);
  std::snprintf(buf.data(), buf.size(), kSeriesRod, actuation.c_str());
  return buf.data();
}

// A travelling curvature wave (a sine with a phase along the rod) against the same drive read
// from a CSV: one row per step at the integrator's evaluation times (t + dt/2 here), one column
// per bend-twist spring (the model's order), each the wave's s_k(t) written to round-trip: the
// same natural shapes at every step, so the same bits.
TEST(ActuationSeries, CurvatureSeriesSampledAtTheStepTimesReproducesTheWave) {
  const ScratchDir dir("slender_series_wave");
  const std::string wave = R"({"target": "rod_curvature1", "part": "r", "amplitude": 4,
      "time": {"type": "sine", "frequency": 5},
      "wave": {"direction": [1, 0, 0], "phase_per_length": 12}})";
  const auto ma =
      build_model(read_scene_text(series_scene(wave), dir.path() + "/a.json", dir.path()));
  Simulator sa(ma);
  std::vector<Real> times;
  sa.set_actuation([&](Real t, NaturalShape&) { times.push_back(t); });
  ASSERT_TRUE(test::run_steps(sa, 30));
  ASSERT_EQ(times.size(), 30u);
  std::string csv = "# time, then s_k of each bend-twist spring\nt";
  for (size_t k = 0; k < ma->actuated.size(); ++k)
    csv += ",k" + std::to_string(k);
  csv += "\n";
  char num[40];
  for (Real t : times) {
    std::snprintf(num, sizeof num, "%.17g", t);
    csv += num;
    for (const ActuatedSpring& a : ma->actuated) {
      std::snprintf(num, sizeof num, ",%.17g",
                    eval_time_function(ma->scene.actuation[0].time, t, a.phase));
      csv += num;
    }
    csv += "\n";
  }
  dir.write("curvature.csv", csv);
  const auto mb = build_model(
      read_scene_text(series_scene(R"({"target": "rod_curvature1", "part": "r", "amplitude": 4,
                       "series": "curvature.csv"})"),
                      dir.path() + "/b.json", dir.path()));
  ASSERT_EQ(mb->actuated.size(), ma->actuated.size());
  EXPECT_EQ(mb->actuated.back().column, int(ma->actuated.size()) - 1);
  Simulator sb(mb);
  ASSERT_TRUE(test::run_steps(sb, 30));
  EXPECT_EQ(sa.state().q, sb.state().q);
  EXPECT_GT(std::fabs(sa.bend_strains()[0]), 1e-3);  // the wave bent the rod
}

// a rod's natural stretch ramped by a time function against a two-row series (0 at t = 0, the
// amplitude at the ramp's end): linear interpolation of a linear drive is the ramp itself
// (w a = a (t / T), the same rounding), between the rows and held past the last: the same bits
TEST(ActuationSeries, StretchSeriesInterpolatesARampExactly) {
  const ScratchDir dir("slender_series_ramp");
  const Real T = 0.0137;
  char ramp[256];
  std::snprintf(ramp, sizeof ramp,
                R"({"target": "rod_stretch", "part": "r", "amplitude": -0.1,
                    "time": {"type": "ramp", "duration": %.17g}})",
                T);
  const auto ma =
      build_model(read_scene_text(series_scene(ramp), dir.path() + "/a.json", dir.path()));
  std::string row0 = "0", row1;
  char num[40];
  std::snprintf(num, sizeof num, "%.17g", T);
  row1 = num;
  for (int e = 0; e < ma->nedge; ++e) {
    row0 += ", 0";
    row1 += ", -0.1";
  }
  dir.write("stretch.csv", "time,edges...\n" + row0 + "\n\n" + row1 + "  # the ramp's end\n");
  const auto mb = build_model(read_scene_text(
      series_scene(R"({"target": "rod_stretch", "part": "r", "series": "stretch.csv"})"),
      dir.path() + "/b.json", dir.path()));
  Simulator sa(ma), sb(mb);
  ASSERT_TRUE(test::run_steps(sa, 20));  // to t = 0.02 > T
  ASSERT_TRUE(test::run_steps(sb, 20));
  EXPECT_EQ(sa.state().q, sb.state().q);
  EXPECT_LT(test::node_position(sb.state(), mb->nnode - 1)[0], 0.3 * 0.99);  // it contracted
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
