// Jet thrust of a bell (stencils/shell_thrust.h): the Jacobian against central differences, the
// wedge's volume rate against the derivative of its volume along the velocities, no thrust
// from a rigid motion (the wedges move with their reference node) nor from a growing wedge,
// the thrust of a uniformly shrinking closed shell against its closed form k 3 beta V, the
// momentum a free body gains over each step equal to dt times the thrust the family gives at
// the step's end (the engine's integration of it), and the scene field's rows and errors.

#include "slender/stencils/shell_thrust.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

LocalEval<12> eval(const Vec<12>& x, const ShellThrust::Params& p, unsigned want) {
  LocalEval<12> r;
  shell_thrust_eval(x, p, want, r);
  return r;
}

// the wedge's signed volume 1/6 (x0 - r) . ((x1 - r) x (x2 - r))
Real wedge_volume(const Vec<12>& x) {
  const Vec3 r = x.segment<3>(9);
  return dot(x.segment<3>(0) - r, cross(x.segment<3>(3) - r, x.segment<3>(6) - r)) / 6;
}

// the node velocities of the integrator's map at x
Vec<12> velocities(const Vec<12>& x, const ShellThrust::Params& p) {
  Vec<12> u;
  for (int a = 0; a < 4; ++a)
    u.set_segment(3 * a, p.u_hat[a] + p.c_u * (x.segment<3>(3 * a) - p.q_hat[a]));
  return u;
}

class ShellThrustStencil : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0.5, 2.0);
    // a wedge of a unit-sized tetrahedron (positive volume), randomly placed
    const Vec3 o = test::random_vec3(rng);
    x.set_segment(0, o + vec3(1, 0, 0) + test::random_vec3(rng, 0.2));
    x.set_segment(3, o + vec3(0, 1, 0) + test::random_vec3(rng, 0.2));
    x.set_segment(6, o + vec3(0, 0, 1) + test::random_vec3(rng, 0.2));
    x.set_segment(9, o + test::random_vec3(rng, 0.2));
    for (int k = 0; k < 4; ++k) {
      p.u_hat[k] = test::random_vec3(rng, 2);
      p.q_hat[k] = x.segment<3>(3 * k) - test::random_vec3(rng, 0.05);
    }
    p.c_u = 20 * u(rng);
    p.c = 0.3 * u(rng);
    p.e = test::random_vec3(rng);
    p.e = p.e / norm(p.e);
    // a shrinking wedge: u -> -u (u_hat -> -u_hat, q_hat -> 2 x - q_hat) turns the rate's sign
    if (shell_thrust_volume_rate(x, p) > 0)
      for (int k = 0; k < 4; ++k) {
        p.u_hat[k] = -1 * p.u_hat[k];
        p.q_hat[k] = 2 * x.segment<3>(3 * k) - p.q_hat[k];
      }
  }
  Vec<12> x;
  ShellThrust::Params p;
};

// away from the kink at dV/dt = 0 the force is smooth: its Jacobian against central differences
// of g (kFdRelTol, the suite's tolerance for O(h^2) differences); it has no potential (not
// symmetric), no energy and no force on the reference node
TEST_P(ShellThrustStencil, JacobianMatchesCentralDifferences) {
  const Real rate = shell_thrust_volume_rate(x, p);
  ASSERT_LT(rate, -1e-3);
  const LocalEval<12> r = eval(x, p, kGradHess);
  EXPECT_EQ(r.E, 0);
  EXPECT_EQ(r.flags, 0u);
  for (int i = 9; i < 12; ++i)
    EXPECT_EQ(r.g[i], 0);
  const Mat<12, 12> fd =
      test::fd_jacobian<12>([this](const Vec<12>& y) { return eval(y, p, kGrad).g; }, x);
  EXPECT_LT(test::rel_err(r.H, fd), kFdRelTol);
  Real asym = 0;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      asym = std::max(asym, std::fabs(r.H(i, j) - r.H(j, i)));
  EXPECT_GT(asym, 1e-3 * p.c);
}

// dV/dt is the derivative of the wedge's volume along the node velocities: V(x + s u) is a cubic
// in s, whose derivative at 0 the five-point difference gives exactly (up to round-off, 1e-10
// relative here), and each triangle node's force is -(k / 3) dV/dt e
TEST_P(ShellThrustStencil, RateIsTheVolumesDerivativeAlongTheVelocities) {
  const Vec<12> u = velocities(x, p);
  const Real h = 1e-3;
  auto V = [&](Real sh) { return wedge_volume(x + sh * u); };
  const Real fd = (8 * (V(h) - V(-h)) - (V(2 * h) - V(-2 * h))) / (12 * h);
  const Real rate = shell_thrust_volume_rate(x, p);
  EXPECT_NEAR(rate, fd, 1e-10 * std::fabs(fd));
  const LocalEval<12> r = eval(x, p, kGrad);
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < 3; ++i)
      EXPECT_NEAR(r.g[3 * a + i], p.c * rate * p.e[i], 1e-14);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ShellThrustStencil, ::testing::Range(1, 7));

// a rigid motion of the four nodes, u = v + omega x x, leaves the wedge's volume as it is: no
// thrust (to round-off), and a growing wedge gives none at all (g and H exactly 0)
TEST(ShellThrust, RigidMotionAndGrowthGiveNoThrust) {
  std::mt19937_64 rng(11);
  Vec<12> x;
  for (int a = 0; a < 4; ++a)
    x.set_segment(3 * a, test::random_vec3(rng));
  ShellThrust::Params p{};
  p.c = 1;
  p.e = vec3(0, 0, 1);
  p.c_u = 0;  // u = u_hat
  const Vec3 v = vec3(0.3, -1.2, 0.7), omega = vec3(2, 0.5, -1);
  for (int a = 0; a < 4; ++a)
    p.u_hat[a] = v + cross(omega, x.segment<3>(3 * a));
  EXPECT_NEAR(shell_thrust_volume_rate(x, p), 0, 1e-14);
  // growth about r: u_a = beta (x_a - r), dV/dt = 3 beta V
  const Real beta = 0.8;
  for (int a = 0; a < 4; ++a)
    p.u_hat[a] = beta * (x.segment<3>(3 * a) - x.segment<3>(9));
  const Real V = wedge_volume(x);
  const Real rate = shell_thrust_volume_rate(x, p);
  EXPECT_NEAR(rate, 3 * beta * V, 1e-14);
  const LocalEval<12> r = eval(x, p, kGradHess);
  const Real sign = V > 0 ? 1 : -1;  // the wedge grows where V > 0, else it shrinks
  for (int i = 0; i < 12; ++i) {
    if (sign > 0) {
      EXPECT_EQ(r.g[i], 0);
      for (int j = 0; j < 12; ++j)
        EXPECT_EQ(r.H(i, j), 0);
    } else if (i < 9 && i % 3 == 2) {
      EXPECT_NEAR(r.g[i], rate, 1e-14);
    }
  }
}

// a closed octahedron (8 triangles, counter-clockwise about the outward normal) shrinking about
// one of its vertices, u = -beta (x - r): every wedge not touching r loses 3 beta of its volume
// per second, the others have none, so the total thrust is k 3 beta V_oct along e (V_oct =
// 4/3 for unit half-diagonals), exact to round-off
TEST(ShellThrust, ShrinkingClosedShellGivesItsClosedForm) {
  const Vec3 P[6] = {vec3(1, 0, 0),  vec3(-1, 0, 0), vec3(0, 1, 0),
                     vec3(0, -1, 0), vec3(0, 0, 1),  vec3(0, 0, -1)};
  const int T[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                       {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  const int ref = 4;  // the apex
  const Real k = 2.5, beta = 0.4;
  Vec3 total = Vec3::zero();
  Real volume = 0;
  for (const auto& t : T) {
    Vec<12> x;
    ShellThrust::Params p{};
    p.c = k / 3;
    p.e = vec3(0, 0, 1);
    p.c_u = 0;
    const int nodes[4] = {t[0], t[1], t[2], ref};
    for (int a = 0; a < 4; ++a) {
      x.set_segment(3 * a, P[nodes[a]]);
      p.u_hat[a] = -beta * (P[nodes[a]] - P[ref]);
    }
    volume += wedge_volume(x);
    const LocalEval<12> r = eval(x, p, kGrad);
    for (int a = 0; a < 3; ++a)
      total -= r.g.segment<3>(3 * a);
  }
  EXPECT_NEAR(volume, 4.0 / 3, 1e-15);
  EXPECT_NEAR(total[0], 0, 1e-15);
  EXPECT_NEAR(total[1], 0, 1e-15);
  EXPECT_NEAR(total[2], k * 3 * beta * 4.0 / 3, 1e-14);
}

// ---- a bell in a simulation ----

// an open hemisphere (pole up) whose lower ring of hinges closes: no gravity, no drag, so the
// body's momentum changes only by the thrust (the elastic forces cancel in sum). Implicit
// Euler's step is M (u1 - u0) = dt F(q1, u1): the momentum gained over each step equals dt
// times the family's thrust at the step's end (its rows evaluated at (q1, u1)) to Newton's
// tolerance. The bell rises, and without thrust its momentum stays zero.
SceneBuilder pulsing_bell(Real k) {
  SceneBuilder b;
  const int mat = b.material("bell", 1100, 1e7, 0.5);
  const int bell = b.hemisphere_shell("bell", vec3(0, 0, 0), vec3(0, 0, 1), 0.05, 0.02, mat, 2e-3);
  b.membrane(bell, MembraneModel::kSprings);
  ActuationSpec a;
  a.target = ActuationSpec::Target::kHingeAngle;
  a.part = bell;
  a.amplitude = 0.4;
  a.time.kind = TimeFunction::Kind::kRamp;
  a.time.ramp_time = 0.05;
  b.actuate(a);
  if (k > 0)
    b.family_input(FamilyInput{"thrust"}
                       .part("part", "bell")
                       .number("coefficient", k)
                       .vec3("direction", vec3(0, 0, 1)));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 5e-3;
  b.integrator().newton.abs_tol = 1e-12;
  return b;
}

TEST(ShellThrust, MomentumGainedEachStepIsTheThrustTimesDt) {
  const Real k = 50;
  const auto m = build_model(pulsing_bell(k).spec());
  const FamilyTable& t = m->tables[kFamThrust];
  ASSERT_EQ(t.rows, m->ntri);
  EXPECT_TRUE(m->nonsymmetric());
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  auto momentum = [&](const State& s) {
    Vec3 p = Vec3::zero();
    for (int n = 0; n < m->nnode; ++n)
      for (int c = 0; c < 3; ++c)
        p[c] += m->dof_mass[3 * n + c] * s.u[3 * n + c];
    return p;
  };
  Real worst = 0, thrust_max = 0;
  for (int n = 0; n < 10; ++n) {
    const Vec3 p0 = momentum(sim.state());
    ASSERT_TRUE(sim.step().ok());
    const State& s = sim.state();
    // the family's thrust at (q1, u1): implicit Euler's u = u1 at y = q1 (u_hat = u1, c_u = 0)
    Vec3 f = Vec3::zero();
    for (long row = 0; row < t.rows; ++row) {
      ShellThrust::Params p{};
      Vec<12> x;
      for (int a = 0; a < 4; ++a) {
        const int node = t.i[4 * row + a];
        for (int c = 0; c < 3; ++c) {
          x[3 * a + c] = s.q[3 * node + c];
          p.u_hat[a][c] = s.u[3 * node + c];
        }
      }
      p.c = t.r[4 * row];
      p.e = vec3(t.r[4 * row + 1], t.r[4 * row + 2], t.r[4 * row + 3]);
      LocalEval<12> r;
      shell_thrust_eval(x, p, kGrad, r);
      for (int a = 0; a < 3; ++a)
        f -= r.g.segment<3>(3 * a);
    }
    const Vec3 dp = momentum(s) - p0;
    thrust_max = std::max(thrust_max, f[2]);
    worst = std::max(worst, norm(dp - dt * f));
  }
  std::printf(
      "thrust: largest %.3e N; momentum balance off by at most %.1e N s; momentum %.3e "
      "N s after %d steps\n",
      thrust_max, worst, momentum(sim.state())[2], 10);
  EXPECT_GT(thrust_max, 1e-4);  // the closing bell pushes (an upward thrust of 0.1 mN and more)
  // Newton's residual of 1e-12 N per DOF over the 3 nnode DOFs bounds the balance's error
  EXPECT_LT(worst, 1e-12 * 3 * m->nnode * dt + 1e-12 * dt * thrust_max);
  EXPECT_GT(momentum(sim.state())[2], 0);
  Simulator still(build_model(pulsing_bell(0).spec()));
  for (int n = 0; n < 10; ++n)
    ASSERT_TRUE(still.step().ok());
  Vec3 p = Vec3::zero();
  for (int i = 0; i < 3 * m->nnode; ++i)
    p[i % 3] += m->dof_mass[i] * still.state().u[i];
  EXPECT_LT(norm(p), 1e-9 * momentum(sim.state())[2]);
}

// A small jellyfish (jellyfish_thrust.json's bell, coarser: 49 nodes, no tentacles): neutrally
// buoyant, quadratic drag, every hinge's natural angle pulsing by 0.15 rad twice (closing in
// 0.15 s, reopening in 0.35 s), with the scene's thrust (k = 330 N s/m^3, up) and without.
// With thrust the pole rises by several millimetres over the two pulses (each stroke lifts it,
// each refill lets it coast); without, the pulses are symmetric up to the drag's asymmetry and
// it moves by about a micrometre. Asserted: more than 3 mm against less than 0.1 mm, and little
// sideways drift (below 5 % of the rise: the coarse mesh is not quite axisymmetric, 2 % over
// three pulses).
SceneBuilder swimming_bell(Real k) {
  SceneBuilder b;
  const int mat = b.material("bell", 1100, 1e10, 0.5);
  const int bell = b.hemisphere_shell("bell", vec3(0, 0, 0), vec3(0, 0, 1), 0.05, 0.02, mat, 3e-3);
  b.membrane(bell, MembraneModel::kSprings);
  ActuationSpec a;
  a.target = ActuationSpec::Target::kHingeAngle;
  a.part = bell;
  a.amplitude = 0.15;
  a.time.kind = TimeFunction::Kind::kTable;
  a.time.table = {{0, 0}, {0.15, 1}, {0.5, 0}, {0.65, 1}, {1.0, 0}};
  b.actuate(a);
  b.gravity(vec3(0, 0, -9.8)).buoyancy(1100).aerodynamic_drag(1, 1100);
  if (k > 0)
    b.family_input(FamilyInput{"thrust"}
                       .part("part", "bell")
                       .number("coefficient", k)
                       .vec3("direction", vec3(0, 0, 1)));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 0.02;
  return b;
}

TEST(ShellThrust, APulsingBellSwimsUpwardOnlyWithThrust) {
  Vec3 rise[2];
  for (int with = 0; with < 2; ++with) {
    const auto m = build_model(swimming_bell(with ? 330 : 0).spec());
    Simulator sim(m);
    const Vec3 start = vec3(sim.state().q[0], sim.state().q[1], sim.state().q[2]);  // the pole
    for (int n = 0; n < 50; ++n)
      ASSERT_TRUE(sim.step().ok()) << "step " << n;
    rise[with] = vec3(sim.state().q[0], sim.state().q[1], sim.state().q[2]) - start;
  }
  std::printf("pulsing bell, 2 pulses: the pole rises %.3e m with thrust, %.3e m without\n",
              rise[1][2], rise[0][2]);
  EXPECT_GT(rise[1][2], 3e-3);
  EXPECT_LT(std::fabs(rise[0][2]), 1e-4);
  EXPECT_LT(std::hypot(rise[1][0], rise[1][1]), 0.05 * rise[1][2]);
}

// ---- the scene field ----

std::string bell_scene(const std::string& thrust) {
  return R"({"materials": [{"name": "m", "density": 1100, "youngs_modulus": 1e7,
                             "poisson_ratio": 0.5}],
  "shells": [{"name": "bell", "material": "m", "thickness": 0.002, "membrane": "springs",
              "mesh": {"type": "hemisphere", "center": [0, 0, 0], "axis": [0, 0, 1],
                       "radius": 0.05, "edge_length": 0.02}},
             {"name": "sheet", "material": "m", "thickness": 0.002,
              "mesh": {"type": "rectangle", "origin": [0, 0, 1], "u": [0.1, 0, 0],
                       "v": [0, 0.1, 0], "edge_length": 0.05}}],
  "rods": [{"name": "rod", "material": "m", "radius": 0.002,
            "shape": {"type": "straight", "start": [0, 0, 2], "end": [0.3, 0, 2], "nodes": 4}}],
  "forces": {"thrust": )" +
         thrust + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "bell.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

// one row per triangle, each wedge about the pole (the node furthest along e) of positive
// volume at rest whichever way the direction points (the rows are turned where needed), and
// the errors name the file, line and field
TEST(ShellThrustScene, ReadsOneRowPerTriangleAndNamesBadFields) {
  for (const char* dir : {"[0, 0, 2]", "[0, 0, -1]"}) {
    const auto m = build_model(read_scene_text(
        bell_scene(std::string(R"({"part": "bell", "coefficient": 30, "direction": )") + dir + "}"),
        "bell.json", "."));
    const FamilyTable& t = m->tables[kFamThrust];
    EXPECT_EQ(t.name, "thrust");
    const int bell =
        int(std::find(m->part_name.begin(), m->part_name.end(), "bell") - m->part_name.begin());
    int bell_tris = 0;
    for (int k = 0; k < m->ntri; ++k)
      bell_tris += m->tri_part[k] == bell;
    ASSERT_EQ(t.rows, bell_tris);
    const Real ez = std::string(dir) == "[0, 0, 2]" ? 1 : -1;
    Real volume = 0;
    for (long k = 0; k < t.rows; ++k) {
      EXPECT_EQ(t.r[4 * k], 10);
      EXPECT_EQ(t.r[4 * k + 3], ez);
      Vec<12> x;
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 3; ++c)
          x[3 * a + c] = m->node_x0[3 * t.i[4 * k + a] + c];
      EXPECT_GE(wedge_volume(x), -1e-18);
      volume += wedge_volume(x);
      // the reference node: the pole (e up) or a rim node (e down), the same for every row
      EXPECT_NEAR(m->node_x0[3 * t.i[4 * k + 3] + 2], ez > 0 ? 0.05 : 0, 1e-12);
      EXPECT_EQ(t.i[4 * k + 3], t.i[3]);
    }
    EXPECT_GT(volume, 0);
  }
  const auto m = build_model(
      read_scene_text(bell_scene(R"({"part": "bell", "coefficient": 1, "direction": [0, 0, 1],
                     "reference_node": 3})"),
                      "bell.json", "."));
  const int bell =
      int(std::find(m->part_name.begin(), m->part_name.end(), "bell") - m->part_name.begin());
  EXPECT_EQ(m->tables[kFamThrust].i[3], m->part_node[m->part_node_adr[bell] + 3]);
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"part": "bell", "coefficient": -1, "direction": [0, 0, 1]})",
       "bell.json:11: forces.thrust.coefficient: must be 0 or more"},
      {R"({"part": "bell", "coefficient": 1, "direction": [0, 0, 0]})",
       "forces.thrust.direction: must not be zero"},
      {R"({"part": "bell", "coefficient": 1})", "forces.thrust.direction: missing (required)"},
      {R"({"part": "bell", "coefficient": 1, "direction": [0, 0, 1], "reference_node": 9999})",
       "forces.thrust.reference_node: must be a node index of part 'bell'"},
      {R"({"part": "bell", "coefficient": 1, "direction": [0, 0, 1], "reference_node": 1.5})",
       "forces.thrust.reference_node: must be a node index"},
      {R"({"part": "sheet", "coefficient": 1, "direction": [0, 0, 1]})",
       "forces.thrust.part: part 'sheet' encloses no volume with its reference node"},
      {R"({"part": "rod", "coefficient": 1, "direction": [0, 0, 1]})",
       "forces.thrust.part: part 'rod' has no triangles"},
      {R"({"part": "hull", "coefficient": 1, "direction": [0, 0, 1]})",
       "forces.thrust.part: no part named 'hull'"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(bell_scene(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
