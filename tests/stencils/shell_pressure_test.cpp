// The pressure family (stencils/shell_pressure.h): the stencil against finite differences and
// the volume of a closed polyhedron; an inflated icosahedron against its closed-form
// equilibrium, on the CPU Simulator, the stepper on the host executor and the vectorized batch;
// the scene field's checks.

#include "slender/stencils/shell_pressure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/info.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

// ---- the stencil ----

LocalEval<9> eval(const Vec<9>& x, const ShellPressure::Params& p, unsigned want) {
  LocalEval<9> r;
  shell_pressure_eval(x, p, want, r);
  return r;
}

class ShellPressureStencil : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    for (int a = 0; a < 3; ++a)
      x.set_segment(3 * a, test::random_vec3(rng));
    p.p = 1e3 * (GetParam() % 2 ? 1.7 : -0.6);  // either sign: suction too
    p.c = test::random_vec3(rng, 0.5);
  }
  Vec<9> x;
  ShellPressure::Params p;
};

TEST_P(ShellPressureStencil, GradientMatchesCentralDifferences) {
  const Vec<9> fd =
      test::fd_gradient<9>([this](const Vec<9>& y) { return eval(y, p, kEnergy).E; }, x);
  EXPECT_LT(test::rel_err(eval(x, p, kGrad).g, fd), kFdRelTol);
}

TEST_P(ShellPressureStencil, HessianMatchesGradientDifferencesAndIsSymmetric) {
  const LocalEval<9> r = eval(x, p, kGradHess);
  const Mat<9, 9> fd =
      test::fd_jacobian<9>([this](const Vec<9>& y) { return eval(y, p, kGrad).g; }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
  EXPECT_EQ(test::rel_err(r.H, r.H.transpose()), 0);
}

INSTANTIATE_TEST_SUITE_P(Random, ShellPressureStencil, ::testing::Range(0, 6));

// a regular icosahedron of circumradius R about `center`, its triangles counter-clockwise about
// the outward normal
struct Icosahedron {
  std::vector<Vec3> nodes;
  std::vector<std::array<int, 3>> tris;
  Real edge = 0;
};
Icosahedron icosahedron(Real R, Vec3 center = vec3(0, 0, 0)) {
  const Real f = (1 + std::sqrt(Real(5))) / 2, s = R / std::sqrt(1 + f * f);
  Icosahedron ico;
  const Real v[12][3] = {{-1, f, 0},  {1, f, 0},  {-1, -f, 0}, {1, -f, 0}, {0, -1, f},  {0, 1, f},
                         {0, -1, -f}, {0, 1, -f}, {f, 0, -1},  {f, 0, 1},  {-f, 0, -1}, {-f, 0, 1}};
  for (const auto& p : v)
    ico.nodes.push_back(center + s * vec3(p[0], p[1], p[2]));
  ico.tris = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
              {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
              {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  ico.edge = 2 * s;
  return ico;
}

TEST(ShellPressureStencil, ClosedPolyhedronGivesMinusPTimesItsVolumeAndTheFollowerForce) {
  const Icosahedron ico = icosahedron(0.3, vec3(0.2, -0.1, 0.05));
  const Real a = ico.edge, p = 2.5e3;
  const Real volume = 5 * (3 + std::sqrt(Real(5))) / 12 * a * a * a;
  // any fixed point gives the same energy and, at every node, the follower force p A n / 3
  for (const Vec3& c : {vec3(0, 0, 0), vec3(0.2, -0.1, 0.05), vec3(3, 4, -5)}) {
    Real E = 0;
    std::vector<Vec3> g(12, vec3(0, 0, 0)), follower(12, vec3(0, 0, 0));
    for (const auto& t : ico.tris) {
      Vec<9> x;
      for (int k = 0; k < 3; ++k)
        x.set_segment(3 * k, ico.nodes[size_t(t[k])]);
      const LocalEval<9> r = eval(x, ShellPressure::Params{p, c}, kGrad);
      E += r.E;
      const Vec3 area2 = cross(ico.nodes[size_t(t[1])] - ico.nodes[size_t(t[0])],
                               ico.nodes[size_t(t[2])] - ico.nodes[size_t(t[0])]);
      for (int k = 0; k < 3; ++k) {
        g[size_t(t[k])] += r.g.segment<3>(3 * k);
        follower[size_t(t[k])] += (p / 6) * area2;
      }
    }
    EXPECT_NEAR(E, -p * volume, 1e-13 * p * volume);
    for (int n = 0; n < 12; ++n)
      EXPECT_LT(norm(g[size_t(n)] + follower[size_t(n)]), 1e-12 * p * a * a) << "node " << n;
  }
}

// ---- an inflated icosahedron ----

// Uniform scaling by lambda about the centre keeps every hinge angle and stretches every edge by
// lambda - 1: U(lambda) = S (lambda - 1)^2 / 2 - p V0 lambda^3 with S = sum of k_s l_bar, whose
// stationary point S (lambda - 1) = 3 p V0 lambda^2 is, by the icosahedron's symmetry, the
// equilibrium. Nine fixed coordinates that are zero at the start (and stay zero under the
// scaling) hold the six rigid motions.
constexpr Real kR = 0.05, kE = 1e6, kH = 1e-3, kP = 5000;

SceneBuilder inflated_icosahedron(IntegratorKind kind, TimeFunction time = {}) {
  const Icosahedron ico = icosahedron(kR);
  SceneBuilder b;
  const int mat = b.material("rubber", 1100, kE, 0.45);
  const int s = b.mesh_shell("balloon", ico.nodes, ico.tris, mat, kH);
  b.membrane(s, MembraneModel::kSprings);
  // (0, +-1, +-f): x = 0; (+-f, 0, +-1): y = 0; (+-1, +-f, 0): z = 0; three of each
  for (int n : {4, 5, 6})
    b.fix_dofs(s, n, true, false, false);
  for (int n : {8, 9, 10})
    b.fix_dofs(s, n, false, true, false);
  for (int n : {0, 1, 2})
    b.fix_dofs(s, n, false, false, true);
  b.family_input(
      FamilyInput{"pressure"}.part("part", "balloon").number("pressure", kP).time("time", time));
  b.integrator().kind = kind;
  return b;
}

// the closed-form stretch lambda (the smaller root: the stable branch)
Real expected_lambda(const Model& m) {
  Real S = 0;
  for (int k = 0; k < m.nsedge; ++k)
    S += m.sedge_EA[size_t(k)] * m.sedge_l_bar[size_t(k)];
  const Real a = icosahedron(kR).edge;
  const Real V0 = 5 * (3 + std::sqrt(Real(5))) / 12 * a * a * a;
  const Real A = 3 * kP * V0;  // A l^2 - S l + S = 0
  return (S - std::sqrt(S * S - 4 * A * S)) / (2 * A);
}

Real worst_radius_error(const Model& m, const std::vector<Real>& q, Real lambda) {
  Real worst = 0;
  for (int n = 0; n < m.nnode; ++n) {
    const Real r =
        std::sqrt(q[3 * n] * q[3 * n] + q[3 * n + 1] * q[3 * n + 1] + q[3 * n + 2] * q[3 * n + 2]);
    worst = std::max(worst, std::fabs(r / (lambda * kR) - 1));
  }
  return worst;
}

TEST(ShellPressure, StaticInflationMatchesTheClosedFormStretch) {
  SceneBuilder b = inflated_icosahedron(IntegratorKind::kStatic);
  b.integrator().dt = 0.25;
  b.integrator().duration = 1;  // four load steps: the pressure ramps with the load factor
  const auto model = build_model(b.build());
  const Real lambda = expected_lambda(*model);
  ASSERT_GT(lambda, 1.01);  // a visible inflation
  Simulator sim(model);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(sim.step().ok()) << "load step " << i;
  const Real err = worst_radius_error(*model, sim.state().q, lambda);
  EXPECT_LT(err, 1e-9);
  // the energy reports the pressure's potential, -p V
  const Real V0 = 5 * (3 + std::sqrt(Real(5))) / 12 * std::pow(icosahedron(kR).edge, 3);
  const Real load = -kP * V0 * lambda * lambda * lambda;
  EXPECT_NEAR(sim.energies().load, load, 1e-8 * kP * V0);
  // and the membrane's, S (lambda - 1)^2 / 2, with no bending (every hinge angle kept)
  Real S = 0;
  for (int k = 0; k < model->nsedge; ++k)
    S += model->sedge_EA[size_t(k)] * model->sedge_l_bar[size_t(k)];
  const Real membrane = 0.5 * S * (lambda - 1) * (lambda - 1);
  const Energies en = sim.energies();
  EXPECT_NEAR(en.stretch, membrane, 1e-9 * membrane);
  EXPECT_LT(std::fabs(en.bend), 1e-12 * membrane);
  std::printf(
      "static inflation: lambda %.6f, radius error %.2e, -p V error %.2e, membrane energy error "
      "%.2e, bending %.2e J\n",
      lambda, err, std::fabs(en.load / load - 1), std::fabs(en.stretch / membrane - 1), en.bend);
}

TEST(ShellPressure, ARampedPressureSettlesThereOnEveryEngine) {
  // a damped dynamic inflation, the pressure ramped over 0.05 s: the Simulator, the stepper on
  // the host executor and the vectorized batch (two environments) reach the static stretch
  TimeFunction ramp;
  ramp.kind = TimeFunction::Kind::kRamp;
  ramp.ramp_time = 0.05;
  SceneBuilder b = inflated_icosahedron(IntegratorKind::kImplicitEuler, ramp);
  b.mass_damping(200);
  b.integrator().dt = 2e-3;
  const auto model = build_model(b.build());
  const Real lambda = expected_lambda(*model);
  constexpr int kSteps = 150;
  Simulator sim(model);
  for (int i = 0; i < kSteps; ++i)
    ASSERT_TRUE(sim.step().ok()) << "step " << i;
  const Real err = worst_radius_error(*model, sim.state().q, lambda);
  EXPECT_LT(err, 1e-6);
  // the vectorized batch, its second environment started half a ramp later (its own signal)
  BatchedSimulator batch(model, 2, model->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  State late = batch.state(1);
  late.time = -0.025;
  batch.set_state(1, late);
  Simulator late_sim(model);
  late_sim.set_state(late);
  for (int i = 0; i < kSteps; ++i) {
    for (StepStatus st : batch.step())
      ASSERT_EQ(st, StepStatus::kConverged) << "step " << i;
    ASSERT_TRUE(late_sim.step().ok());
    if (i == 19) {  // mid-ramp, where the two environments' pressures differ
      ASSERT_GT(test::max_abs_diff(batch.state(0).q, batch.state(1).q), 1e-4);
      EXPECT_LT(test::max_abs_diff(batch.state(1).q, late_sim.state().q), 1e-10);
    }
  }
  // (the first environment against the Simulator's run above, which ended at the same step)
  const Real d0 = test::max_abs_diff(batch.state(0).q, sim.state().q);
  const Real d1 = test::max_abs_diff(batch.state(1).q, late_sim.state().q);
  EXPECT_LT(d0, 1e-10);
  EXPECT_LT(d1, 1e-10);
  std::printf("ramped inflation: radius error %.2e; batch vs Simulator %.2e, %.2e m\n", err, d0,
              d1);
}

// ---- the scene field ----

std::string scene_with(const std::string& pressure, const std::string& mesh) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.4}],
  "shells": [{"name": "skin", "material": "m", "thickness": 1e-3, "mesh": )" +
         mesh + R"(}],
  "forces": {"pressure": )" +
         pressure + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

const char* kTetra =
    R"({"type": "mesh", "nodes": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]],
        "triangles": [[0,2,1],[0,1,3],[1,2,3],[0,3,2]]})";
const char* kOpenTetra =
    R"({"type": "mesh", "nodes": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]],
        "triangles": [[0,2,1],[0,1,3],[1,2,3]]})";

// the message of the InputError that reading and building the scene throws ("" if none)
std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "balloon.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

TEST(ShellPressureScene, AClosedShellReadsAndBuildsOneRowPerTriangle) {
  const auto m = build_model(read_scene_text(scene_with(R"([{"part": "skin", "pressure": 100},
                     {"part": "skin", "pressure": 50, "time": {"type": "ramp", "duration": 1}}])",
                                                        kTetra),
                                             "balloon.json", "."));
  const FamilyTable& t = m->tables[kFamPressure];
  EXPECT_EQ(t.name, "pressure");
  ASSERT_EQ(t.rows, 8);
  EXPECT_EQ(t.r[0], 100);
  EXPECT_EQ(t.r[4 * 4], 50);
  ASSERT_EQ(m->signals.size(), 2u);
  EXPECT_EQ(m->signals[1].kind, TimeFunction::Kind::kRamp);
  EXPECT_EQ(t.i[4 * 4 + 3], 1);  // the second entry's rows read the second signal
  EXPECT_NE(model_info(*m).find("pressure (8 stencils)"), std::string::npos);
}

TEST(ShellPressureScene, BadEntriesNameTheFileLineAndField) {
  // each: the entry, the mesh, what the message must hold
  const std::vector<std::array<std::string, 3>> cases = {
      {R"({"part": "skin", "pressure": 1})", kOpenTetra,
       "balloon.json:5: forces.pressure.part: the shell 'skin' is open"},
      {R"({"part": "hull", "pressure": 1})", kTetra, "forces.pressure.part: no part named 'hull'"},
      {R"({"part": "skin"})", kTetra, "forces.pressure.pressure: missing (required)"},
      {R"({"part": "skin", "pressure": 1, "presure": 2})", kTetra,
       "forces.pressure.presure: unknown field"},
      {R"([{"part": "skin", "pressure": "high"}])", kTetra, "forces.pressure[0].pressure"},
      {R"(3)", kTetra, "forces.pressure: must be an object or a list of objects"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(scene_with(c[0], c[1]));
    EXPECT_NE(msg.find(c[2]), std::string::npos) << c[0] << " gave: " << msg;
  }
}

TEST(ShellPressureScene, AnOpenShellWithAFixedRimIsAMembrane) {
  // a square sheet held at its rim: the pressure bulges it along its normal (+z)
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.4);
  const int s = b.rectangle_shell("sheet", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), 0.025,
                                  true, mat, 1e-3, ShellBending::kHinge);
  b.membrane(s, MembraneModel::kSprings);
  const std::vector<Vec3> nodes = b.part(s).nodes;
  int centre = -1;
  for (int i = 0; i < int(nodes.size()); ++i) {
    const Vec3& x = nodes[size_t(i)];
    if (x[0] < 1e-9 || x[0] > 0.1 - 1e-9 || x[1] < 1e-9 || x[1] > 0.1 - 1e-9) b.fix_node(s, i);
    if (std::fabs(x[0] - 0.05) < 1e-9 && std::fabs(x[1] - 0.05) < 1e-9) centre = i;
  }
  ASSERT_GE(centre, 0);
  b.family_input(FamilyInput{"pressure"}.part("part", "sheet").number("pressure", 200));
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 0.5;
  b.integrator().duration = 1;
  Simulator sim(build_model(b.build()));
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE(sim.step().ok());
  EXPECT_GT(sim.state().q[3 * size_t(centre) + 2], 1e-3);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
