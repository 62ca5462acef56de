// Pressure chambers along rods (stencils/rod_pressure_chamber.h): the wrench per pascal is
// alpha A t and alpha A d x t; the family's rows (per chamber edge the tension pair, the end
// moments shared with the edges beyond) carry no net force or moment at rest and the
// chamber's pressure as their signal; the assembled Jacobian of a chamber on a bent, twisted rod
// against central differences of the residual; Bartholdt's actuator (apps/scenes/
// bartholdt_actuator.json) settles to the closed-form arc of a cantilever under the chamber's
// moment and tension; the scene field's errors.

#include "slender/stencils/rod_pressure_chamber.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "load_share_fd.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::string scene_path(const std::string& name) {
  return std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name;
}

Vec3 node_at(const State& s, int n) { return vec3(s.q[3 * n], s.q[3 * n + 1], s.q[3 * n + 2]); }

// F = alpha A t and M = d x F with d = offset (cos phi m1 + sin phi m2), for random frames and
// angles: the components pressure_chamber_wrench gives, resolved in the world, equal them to
// round-off (1e-14 relative)
TEST(PressureChamberWrench, IsAlphaATangentAndOffsetCrossIt) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(0, 1);
  for (int i = 0; i < 20; ++i) {
    const Mat3 R = test::random_rotation(rng);
    const Vec3 m1{{R(0, 0), R(1, 0), R(2, 0)}}, m2{{R(0, 1), R(1, 1), R(2, 1)}}, t = cross(m1, m2);
    const Real alpha = 0.2 + 0.8 * u(rng), area = 1e-5 * (1 + u(rng)), offset = 1e-2 * u(rng),
               angle = 7 * (u(rng) - 0.5);
    Vec3 F, M;
    pressure_chamber_wrench(alpha, area, offset, angle, F, M);
    const Vec3 d = offset * (std::cos(angle) * m1 + std::sin(angle) * m2);
    const Vec3 Fw = F[0] * m1 + F[1] * m2 + F[2] * t, Mw = M[0] * m1 + M[1] * m2 + M[2] * t;
    EXPECT_LT(norm(Fw - alpha * area * t), 1e-15 * alpha * area);
    EXPECT_LT(norm(Mw - cross(d, alpha * area * t)), 1e-14 * alpha * area * 1e-2);
  }
}

// ---- the rows of Bartholdt's actuator ----

// Each chamber of the scene (on the actuator's 20 edges, between two caps): 2 rows per edge and
// one on each cap edge next to the chamber (its half of the end moment), 42 in all; each row a
// follower wrench on its signal, the chamber's, whose gain is the chamber's pressure. At rest
// (the straight rod) the rows of one chamber resolve in the world to no net force and no net
// moment about the origin (an internal load; 1e-12 of alpha A and alpha A L), the distal end
// moment is alpha A d_ch, and load_signal finds each entry's signal.
TEST(RodPressureChamberRows, BartholdtsChambersAreSelfEquilibratedWrenchPairs) {
  const auto m = build_model(read_scene_file(scene_path("bartholdt_actuator.json")));
  const FamilyTable& t = m->tables[kFamPressureChamber];
  EXPECT_EQ(t.name, "pressure_chambers");
  ASSERT_EQ(t.rows, 3 * 42);
  ASSERT_EQ(m->signals.size(), 3u);
  EXPECT_EQ(m->signal_gain[0], 60000);
  EXPECT_EQ(m->signal_gain[1], 0);
  for (int c = 0; c < 3; ++c)
    EXPECT_EQ(load_signal(*m, "pressure_chambers", c), c);
  EXPECT_TRUE(m->nonsymmetric());
  const Real a = 2.827433388230814e-05, d = 0.007;
  for (int c = 0; c < 3; ++c) {
    Vec3 force{{0, 0, 0}}, moment{{0, 0, 0}};
    Real distal = 0;
    int rows = 0;
    for (long k = 0; k < t.rows; ++k) {
      const int* row = t.i.data() + 6 * k;
      const Real* r = t.r.data() + 6 * k;
      if (row[5] != c) continue;
      ++rows;
      EXPECT_EQ(row[4], 1);  // follower
      const int e = row[2];
      Vec3 xa, xb;
      for (int i = 0; i < 3; ++i) {
        xa[i] = m->node_x0[3 * size_t(row[0]) + i];
        xb[i] = m->node_x0[3 * size_t(row[1]) + i];
      }
      const Vec3 te = (xb - xa) / norm(xb - xa);
      const Vec3 d1{{m->edge_d1_0[3 * e], m->edge_d1_0[3 * e + 1], m->edge_d1_0[3 * e + 2]}};
      Vec3 m1, m2;
      material_frame(d1, te, m->edge_theta0[size_t(e)], m1, m2);
      const Vec3 F = r[0] * m1 + r[1] * m2 + r[2] * te, M = r[3] * m1 + r[4] * m2 + r[5] * te;
      // the wrench's generalized forces do the work of F at its node and of M on a rigid
      // rotation: their resultant is F, their moment about the origin x_at x F + M
      force += F;
      moment += cross(row[3] ? xb : xa, F) + M;
      if (row[3] == 1 && r[2] > 0 && norm(M) > 0) distal += norm(M);
    }
    EXPECT_EQ(rows, 42);
    EXPECT_LT(norm(force), 1e-12 * a) << "chamber " << c;
    EXPECT_LT(norm(moment), 1e-12 * a * 0.05) << "chamber " << c;
    // the chamber's own last edge takes half the end moment, the cap's first edge the other
    EXPECT_NEAR(distal, a * d / 2, 1e-15) << "chamber " << c;
  }
  try {
    load_signal(*m, "pressure_chambers", 3);
    ADD_FAILURE() << "entry 3 of 3 was found";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("forces.pressure_chambers has 3 entries"),
              std::string::npos)
        << e.what();
  }
}

// ---- the assembled Jacobian against central differences ----

// A soft rod (E = 1 MPa, 10 edges, clamped at edge 0) with a chamber on edges 3..6 (alpha 0.8,
// 1 mm off the axis at 0.7 rad), bent out of plane by gravity and a side load and twisted by an
// initial spin, after four steps (frames transported): the chamber's part of the residual,
// f(p) - f(0) with p and 0 set as the chamber's load value, and of the Jacobian, J(p) - J(0), on
// the same configurations. At the step's start (y = q, where the follower's frame rule is the
// residual's) J's part matches central differences of f's (h = 1e-7 on 1 cm edges: truncation
// 1e-10, round-off eps |f| / h about 1e-9 of the entries; kFdRelTol = 1e-6).
TEST(RodPressureChamberJacobian, MatchesCentralDifferencesOfTheResidual) {
  SceneBuilder b;
  const int mat = b.material("soft", 1000, 1e6, 0.45);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), 11, mat, SceneBuilder::circle(2e-3));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.point_load(rod, -1, vec3(0, 2e-3, 0));
  b.family_input(FamilyInput{"pressure_chambers"}
                     .part("part", "rod")
                     .number("first_edge", 3)
                     .number("last_edge", 6)
                     .number("area", 3e-6)
                     .number("offset", 1e-3)
                     .number("angle", 0.7)
                     .number("alpha", 0.8)
                     .number("pressure", 1e5));
  b.integrator().dt = 5e-3;
  const auto model = build_model(b.build());
  ASSERT_EQ(model->tables[kFamPressureChamber].rows, 2 * 4 + 2);
  Simulator sim(model);
  State s = sim.state();
  for (int e = 0; e < model->nedge; ++e)
    s.u[3 * size_t(model->nnode) + e] = 20.0 * e;  // a spin growing along the rod
  sim.set_state(s);
  for (int n = 0; n < 4; ++n)
    ASSERT_TRUE(sim.step().ok());
  const Real dt = 5e-3, p = 1e5;
  const AssemblyPlan& plan = model->plan;
  const std::vector<Real> y = sim.state().q;
  const test::LoadShareFd fd = test::load_share_vs_fd(
      sim, dt, plan, y, [&](bool on) { sim.set_load_value("pressure_chambers", 0, on ? p : 0); });
  const Real rel = fd.rel, asym = fd.asymmetry;
  std::printf(
      "pressure chamber: Jacobian vs central differences of the residual %.2e (|J| %.3g, "
      "asymmetry %.3g)\n",
      rel, fd.fd_norm, asym);
  EXPECT_GT(fd.force_norm, 1e-2);  // the chamber's forces are there (0.24 N)
  EXPECT_LT(rel, test::kFdRelTol);
  // not symmetric: the end moments' couples turn with the twist (d f / d theta = M / (2 l) at
  // each end edge, M = p alpha A d_ch = 2.4e-4 N m, l = 1 cm), the twist's torque M . t = 0 does
  // not depend on the positions
  EXPECT_GT(asym, 0.25 * p * 0.8 * 3e-6 * 1e-3 / 0.01);
}

// ---- Bartholdt's actuator against the closed form ----

// The ogden law's axial force at stretch lambda, dW/dlambda of seed 004 eq. 12 (EA c_e at small
// strain)
Real ogden_force(Real lambda, Real EA, Real alpha, Real ce) {
  return 2 * EA * ce / (3 * alpha) *
         (std::pow(lambda, alpha - 1) - std::pow(lambda, -alpha / 2 - 1));
}

// The closed form of Bartholdt's actuator (part `act`) under its first chamber's pressure,
// without gravity: the chamber's tension N = p alpha A, its end moment M = N d, the arc's turn
// theta = M L / EI over the L = 50 mm chamber section and the section's stretch lambda under N
// (its Ogden law, by bisection), the arc's radius R = lambda L / theta
struct ChamberArc {
  Real p, N, M, theta, lambda, R;
};
ChamberArc chamber_arc(const SceneSpec& sc, const PartSpec& act) {
  const FamilyInput& ch = sc.forces.families[0];
  const Real p = *ch.find_number("pressure"), A = *ch.find_number("area"),
             d = *ch.find_number("offset"), alpha = *ch.find_number("alpha");
  const Real L = 0.05, N = p * alpha * A, M = N * d, theta = M * L / act.stiffness.EI1;
  Real lo = 1, hi = 1.5;  // bisection for the stretch
  for (int i = 0; i < 200; ++i) {
    const Real mid = (lo + hi) / 2;
    (ogden_force(mid, act.stiffness.EA, act.stretch_law.alpha, act.stretch_law.scale) < N ? lo
                                                                                          : hi) =
        mid;
  }
  const Real lambda = (lo + hi) / 2;
  return {p, N, M, theta, lambda, lambda * L / theta};
}

// apps/scenes/bartholdt_actuator.json without gravity (the 60 g tip mass then adds inertia
// only): chamber 0 (at +x, m1) steps to p = 60 kPa at 0.5 s and the actuator settles by 1.5 s.
// Closed form: no external load, so the caps carry nothing and stay straight; the chamber's
// stretch of the rod carries the tension N = p alpha A_ch along the axis and the bending moment
// M = N d_ch about m2 (the chamber pushes its ends apart at the offset d_ch): an Euler elastica
// under a pure moment is a circular arc, of turning theta = M L_ch / EI over the chamber's rest
// length L_ch = 50 mm and of length lambda L_ch, lambda the Ogden stretch under N (Table II:
// EA = 91.87 N, alpha 1.3308, c_e 2.2703). The arc starts at the base cap's end (5 mm below the
// clamp) along the axis and bends away from the chamber (-x); the tip cap continues straight
// along its end tangent. Tip: x = -(R (1 - cos theta) + L_cap sin theta), z = -(L_cap + R sin
// theta + L_cap cos theta), R = lambda L_ch / theta. The discrete rod follows within 3 % in the
// deflection and in the elongation (measured +1.1 % and -0.03 %). The deflection's difference
// is the two joint nodes': their bend-twist springs (at the chamber's ends, each carrying half
// the moment) take the mean of the cap's and the actuator's EI (a 1 MPa cap: 0.0163 N m^2
// against 0.0257) and turn 1.22 times as far as the actuator's would: theta grows by
// (l / L_ch) (EI / EI_mean - 1) = 1.1 %. The discrete solution itself is a polygon: the caps'
// edges straight and unstretched, the actuator's 20 edges stretched by lambda, each interior
// node of the actuator turned by phi with 2 sin(phi / 2) / cos^3(phi / 2) = M l / EI (the
// bending energy's dE/dphi, l = 2.5 mm) and each joint node by the same with M / 2 and EI_mean;
// the tip matches it to 1e-6 of the deflection (Newton's tolerances and the settling).
TEST(BartholdtActuator, SettlesToTheClosedFormArcOfTheChambersMoment) {
  SceneSpec sc = read_scene_file(scene_path("bartholdt_actuator.json"));
  sc.forces.gravity = vec3(0, 0, 0);
  const auto model = build_model(sc);
  const PartSpec& act = sc.parts[1];
  ASSERT_EQ(act.name, "actuator");
  const Real EI = act.stiffness.EI1;
  const Real Lcap = 0.005;
  Simulator sim(model);
  const int tip = model->part_node[size_t(model->part_node_adr[3]) - 1];
  std::vector<Real> before;
  while (sim.time() < 1.5 - 1e-9) {
    before.assign(sim.state().q.begin() + 3 * tip, sim.state().q.begin() + 3 * tip + 3);
    ASSERT_TRUE(sim.step().ok()) << "t = " << sim.time();
  }
  const Vec3 x = node_at(sim.state(), tip);
  // settled: the last step moved the tip by less than 1e-9 m
  EXPECT_LT(std::fabs(x[0] - before[0]) + std::fabs(x[2] - before[2]), 1e-9);
  // the closed form
  const ChamberArc arc = chamber_arc(sc, act);
  const Real p = arc.p, M = arc.M, theta = arc.theta, lambda = arc.lambda, R = arc.R;
  const Real dx = -(R * (1 - std::cos(theta)) + Lcap * std::sin(theta));
  const Real z = -(Lcap + R * std::sin(theta) + Lcap * std::cos(theta));
  const Real dz = z - (-0.06);
  std::printf(
      "Bartholdt's actuator, chamber 0 at %.0f kPa: tip deflection %.4f mm (closed form %.4f mm, "
      "%+.2f %%), elongation %.4f mm (closed form %.4f mm, %+.2f %%); theta %.4f rad, stretch "
      "%.5f\n",
      p / 1e3, -x[0] * 1e3, -dx * 1e3, 100 * (x[0] / dx - 1), -(x[2] + 0.06) * 1e3, -dz * 1e3,
      100 * ((x[2] + 0.06) / dz - 1), theta, lambda);
  EXPECT_NEAR(x[0], dx, 0.03 * std::fabs(dx));
  EXPECT_NEAR(x[2] + 0.06, dz, 0.03 * std::fabs(dz));
  EXPECT_LT(std::fabs(x[1]), 1e-12);  // in the plane of the chamber's offset
  // the discrete polygon
  const Real l = 0.0025, E_cap = sc.materials[0].youngs_modulus, r = sc.parts[0].section.radius;
  const Real EI_mean = (EI + E_cap * kPi * std::pow(r, 4) / 4) / 2;
  auto turn = [](Real moment_l_over_EI) {
    Real a = 0, b = 1;
    for (int i = 0; i < 200; ++i) {
      const Real mid = (a + b) / 2, c = std::cos(mid / 2);
      (2 * std::sin(mid / 2) / (c * c * c) < moment_l_over_EI ? a : b) = mid;
    }
    return (a + b) / 2;
  };
  const Real phi = turn(M * l / EI), phi_joint = turn(M / 2 * l / EI_mean);
  Real psi = 0, px = 0, pz = 0;  // the edge's angle from -z towards -x, the polygon's end
  auto edge = [&](Real length) {
    px -= length * std::sin(psi);
    pz -= length * std::cos(psi);
  };
  edge(l), edge(l);
  psi += phi_joint;
  for (int k = 0; k < 20; ++k) {
    edge(lambda * l);
    psi += k < 19 ? phi : phi_joint;
  }
  edge(l), edge(l);
  std::printf("  the discrete polygon: tip deflection %.6f mm (%.1e), elongation %.6f mm\n",
              -px * 1e3, std::fabs(x[0] - px) / std::fabs(px), -(pz + 0.06) * 1e3);
  EXPECT_NEAR(x[0], px, 1e-6 * std::fabs(px));
  EXPECT_NEAR(x[2], pz, 1e-6 * std::fabs(px));
}

// Bartholdt's three-segment manipulator (apps/scenes/bartholdt_manipulator.json, Sec. V-B):
// without gravity and with only the base segment's chamber at 60 kPa (its step at 0.5 s; the
// others' at 2 and 3.5 s, after this run), the base actuator settles into the single
// actuator's arc and everything beyond it (the base's tip cap and the two other segments,
// 125 mm) stays straight along its end tangent: the tip where the closed form puts it, within
// the single actuator's 3 % (the caps' mean EI at the joints turns the arc about 1 % further)
TEST(BartholdtManipulator, TheBaseSegmentsArcCarriesTheStraightArm) {
  SceneSpec sc = read_scene_file(scene_path("bartholdt_manipulator.json"));
  sc.forces.gravity = vec3(0, 0, 0);
  const auto model = build_model(sc);
  ASSERT_EQ(model->nnode,
            74);  // 73 along the arm (the joints share their nodes), the clamp's ghost
  const PartSpec& act = sc.parts[1];
  ASSERT_EQ(act.name, "actuator_1");
  const Real Lcap = 0.005, Ldist = 0.125;
  Simulator sim(model);
  const int last_part = int(sc.parts.size());
  const int tip = model->part_node[size_t(model->part_node_adr[size_t(last_part)]) - 1];
  while (sim.time() < 1.5 - 1e-9)
    ASSERT_TRUE(sim.step().ok()) << "t = " << sim.time();
  const Vec3 x = node_at(sim.state(), tip);
  const ChamberArc arc = chamber_arc(sc, act);
  const Real p = arc.p, theta = arc.theta, R = arc.R;
  const Real dx = -(R * (1 - std::cos(theta)) + Ldist * std::sin(theta));
  const Real z = -(Lcap + R * std::sin(theta) + Ldist * std::cos(theta));
  std::printf(
      "Bartholdt's manipulator, the base chamber at %.0f kPa: tip at x %.3f mm, z %.3f mm "
      "(closed form %.3f, %.3f mm: %+.2f %% of the deflection)\n",
      p / 1e3, x[0] * 1e3, x[2] * 1e3, dx * 1e3, z * 1e3, 100 * (x[0] / dx - 1));
  EXPECT_NEAR(x[0], dx, 0.03 * std::fabs(dx));
  EXPECT_NEAR(x[2], z, 0.03 * std::fabs(z + 0.18));
  EXPECT_LT(std::fabs(x[1]), 1e-12);  // in the plane of the chamber's offset
}

// ---- the scene field ----

std::string rod_scene(const std::string& chamber) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.5}],
  "rods": [{"name": "rod", "material": "m", "radius": 0.002,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.3, 0, 0], "nodes": 7}},
           {"name": "bar", "material": "m", "cross_section": {"width": 0.004, "height": 0.002},
            "shape": {"type": "straight", "start": [0, 0.1, 0], "end": [0.3, 0.1, 0], "nodes": 4}}],
  "networks": [{"name": "net", "material": "m", "radius": 0.002,
     "nodes": [[0, 0.2, 0], [0.1, 0.2, 0], [0.2, 0.2, 0], [0.3, 0.2, 0]],
     "edges": [[0, 1], [2, 3], [1, 2]]}],
  "shells": [{"name": "sheet", "material": "m", "thickness": 1e-3,
     "mesh": {"type": "rectangle", "u": [0.1, 0, 0], "v": [0, 0.1, 0], "edge_length": 0.05}}],
  "forces": {"pressure_chambers": )" +
         chamber + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "chamber.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

// a chamber along a free end takes the whole end moment on its own edge: the last edge's row
// at the rod's free end, half at the interior end; bad fields are named
TEST(RodPressureChamberScene, ReadsRowsAndNamesBadFields) {
  const auto m = build_model(
      read_scene_text(rod_scene(R"({"part": "rod", "first_edge": 2, "area": 1e-6, "offset": 1e-3,
                    "pressure": 2e5, "time": {"type": "ramp", "duration": 1}})"),
                      "chamber.json", "."));
  const FamilyTable& t = m->tables[kFamPressureChamber];
  // edges 2..5 of 6: 8 tension rows and edge 1's half of the proximal moment
  ASSERT_EQ(t.rows, 9);
  EXPECT_EQ(m->signal_gain[0], 2e5);
  // the free end: edge 5's row at its end node carries the force and the whole moment, about
  // -m2 (d along m1: d x t = -d m2)
  bool free_end = false;
  for (long k = 0; k < t.rows; ++k) {
    const int* row = t.i.data() + 6 * k;
    const Real* r = t.r.data() + 6 * k;
    if (row[2] == 5 && row[3] == 1) {
      free_end = true;
      EXPECT_EQ(r[2], 1e-6);
      EXPECT_NEAR(r[4], -1e-9, 1e-24);
    }
    if (row[2] == 2 && row[3] == 0) {
      EXPECT_NEAR(r[4], 0.5e-9, 1e-24);
    }
  }
  EXPECT_TRUE(free_end);
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"part": "rod", "last_edge": 6, "area": 1e-6, "pressure": 1})",
       "chamber.json:12: forces.pressure_chambers.last_edge: must be an integer in [-6, 5]"},
      {R"({"part": "rod", "first_edge": 0.5, "area": 1e-6, "pressure": 1})",
       "forces.pressure_chambers.first_edge: must be an integer"},
      {R"({"part": "rod", "first_edge": 4, "last_edge": 2, "area": 1e-6, "pressure": 1})",
       "forces.pressure_chambers.last_edge: comes before first_edge"},
      {R"({"part": "rod", "area": 0, "pressure": 1})",
       "forces.pressure_chambers.area: must be positive, got 0"},
      {R"({"part": "rod", "area": -1e-6, "pressure": 1})",
       "forces.pressure_chambers.area: must be positive"},
      {R"({"part": "rod", "area": 2e-5, "pressure": 1})",
       "forces.pressure_chambers.area: the chamber (2e-05 m^2) must be smaller than part 'rod''s"},
      {R"({"part": "rod", "area": 1e-6, "offset": 0.002, "pressure": 1})",
       "forces.pressure_chambers.offset: the chamber's centre (0.002 m from the centreline at 0 "
       "rad) lies outside part 'rod''s section (radius 0.002 m)"},
      {R"({"part": "rod", "area": 1e-6, "offset": -1e-4, "pressure": 1})",
       "forces.pressure_chambers.offset: must be 0 or more"},
      {R"({"part": "bar", "area": 1e-7, "offset": 0.0015, "angle": 1.5707963, "pressure": 1})",
       "forces.pressure_chambers.offset: the chamber's centre (0.0015 m from the centreline at "
       "1.5708 rad) lies outside part 'bar''s section (0.004 m x 0.002 m)"},
      {R"({"part": "rod", "area": 1e-6, "alpha": 0, "pressure": 1})",
       "forces.pressure_chambers.alpha: must be in (0, 1], got 0"},
      {R"({"part": "rod", "area": 1e-6, "alpha": 1.2, "pressure": 1})",
       "forces.pressure_chambers.alpha: must be in (0, 1], got 1.2"},
      {R"({"part": "rod", "pressure": 1})", "forces.pressure_chambers.area: missing (required)"},
      {R"({"part": "rod", "area": 1e-6})", "forces.pressure_chambers.pressure: missing (required)"},
      {R"({"part": "net", "area": 1e-6, "pressure": 1})",
       "forces.pressure_chambers.last_edge: part 'net''s edges 0 and 1 do not follow each "
       "other: a chamber runs along a chain of edges"},
      {R"({"part": "sheet", "area": 1e-6, "pressure": 1})",
       "forces.pressure_chambers.part: part 'sheet' has no rod edges: a chamber runs along a rod"},
      {R"({"part": "hull", "area": 1e-6, "pressure": 1})",
       "forces.pressure_chambers.part: no part named 'hull'"},
      {R"([{"part": "rod", "area": 1e-6, "pressure": 1, "radius": 2}])",
       "forces.pressure_chambers[0].radius: unknown field"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(rod_scene(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
  // the bar's chamber inside its 4 x 2 mm rectangle (1.5 mm along m1) is taken
  EXPECT_EQ(error_of(rod_scene(R"({"part": "bar", "area": 1e-7, "offset": 0.0015,
                                   "pressure": 1})")),
            "");
  // a time function per entry, at most kMaxSignals of them: 32 chambers are taken, the 33rd
  // is named
  auto chambers = [](int n) {
    std::string list = "[";
    for (int k = 0; k < n; ++k)
      list += std::string(k ? ", " : "") + R"({"part": "rod", "area": 1e-7, "pressure": 1})";
    return list + "]";
  };
  EXPECT_EQ(error_of(rod_scene(chambers(kMaxSignals))), "");
  const std::string msg = error_of(rod_scene(chambers(kMaxSignals + 1)));
  EXPECT_NE(msg.find("forces.pressure_chambers[32].time: more than 32 time functions"),
            std::string::npos)
      << msg;
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
