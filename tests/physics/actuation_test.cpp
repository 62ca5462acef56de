// Actuation by the natural shape: driven rod curvature and shell hinge angles reach the shapes
// they prescribe, a travelling wave has the prescribed phases, the code callback acts like the
// scene's actuation, and a selection that drives nothing is an input error.

#include <gtest/gtest.h>

#include <cmath>

#include "physics_util.h"
#include "slender/core/error.h"
#include "slender/stencils/shell_hinge.h"

namespace slender {
namespace {

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
    EXPECT_NE(std::string(e.what()).find("selects no spring"), std::string::npos);
  }
}

}  // namespace
}  // namespace slender
