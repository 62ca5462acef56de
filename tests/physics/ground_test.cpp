// Ground contact and Coulomb friction: V5 (DisMech's axial friction case: a 1 kg rod on the
// floor pushed along its axis by 44 forces, kinetic energy after 1.5 s against Coulomb's law),
// a rod resting on an incline below and above the friction angle, and the ground in JSON.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "physics_util.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;

// V5 set-up: N = 26, r = 2.5 cm, rho = 509.3 (1 kg), L = 1 m, E = 1e5, mu = 0.4,
// delta = 5e-4 m, slip tolerance 1e-3 m/s, T = 1.5 s
struct AxialFrictionRun {
  Real kinetic = 0, mass = 0;
};

AxialFrictionRun push_on_floor(Real force) {
  const int nodes = 26;
  const Real r = 0.025;
  SceneBuilder b;
  const int mat = b.material("m", 509.3, 1e5, 0.5);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, r), vec3(1, 0, r), nodes, mat, SceneBuilder::circle(r));
  GroundSpec g;
  g.contact_distance = 5e-4;
  g.friction = 0.4;
  g.slip_velocity = 1e-3;
  b.ground(g);
  b.gravity(vec3(0, 0, -kG));
  // the push is spread over the nodes by mass, so the rod moves as one body
  for (int i = 0; i < nodes; ++i) {
    const Real share = (i == 0 || i == nodes - 1) ? 0.5 / (nodes - 1) : 1.0 / (nodes - 1);
    b.point_load(rod, i, vec3(force * share, 0, 0));
  }
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-2;
  const auto m = build_model(b.build());
  Simulator sim(m);
  EXPECT_TRUE(test::run_steps(sim, 150));
  AxialFrictionRun out;
  out.kinetic = sim.energies().kinetic;
  for (Real w : m->node_mass)
    out.mass += w;
  return out;
}

TEST(GroundFriction, V5AxialPushMatchesCoulomb) {
  const Real T = 1.5, mu = 0.4;
  int compared = 0;
  Real worst = 0;
  for (int i = 0; i < 44; ++i) {
    const Real F = -10.6 + i * (10.5 + 10.6) / 43;
    const AxialFrictionRun run = push_on_floor(F);
    const Real slide = std::fabs(F) - mu * run.mass * kG;
    const Real theory = slide > 0 ? T * T * slide * slide / (2 * run.mass) : 0;
    if (std::fabs(slide) < 1.0) continue;  // near the threshold stick-slip smoothing dominates
    ++compared;
    if (theory == 0) {
      // stuck: the smooth stick law lets it creep at most about the slip tolerance
      EXPECT_LT(run.kinetic, 0.5 * run.mass * 1e-3 * 1e-3) << "F = " << F;
    } else {
      const Real err = std::fabs(run.kinetic / theory - 1);
      worst = std::max(worst, err);
      EXPECT_LT(err, 0.02) << "F = " << F << ": kinetic " << run.kinetic << " theory " << theory;
    }
  }
  std::printf("V5: %d of 44 forces compared, worst kinetic-energy error %.2e %%\n", compared,
              100 * worst);
  EXPECT_GT(compared, 30);
}

// a rod lying across an incline of angle theta stays put while tan(theta) < mu and slides
// with a = g (sin theta - mu cos theta) beyond
TEST(GroundFriction, InclineSticksBelowTheFrictionAngle) {
  const Real mu = 0.4;
  for (const Real theta : {0.25, 0.6}) {  // tan = 0.255 (sticks) and 0.684 (slides)
    const Real r = 0.01;
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e6, 0.5);
    // the rod lies across the slope (along y), just touching the plane
    const Vec3 n = vec3(-std::sin(theta), 0, std::cos(theta));
    b.straight_rod("rod", r * n + vec3(0, -0.2, 0), r * n + vec3(0, 0.2, 0), 11, mat,
                   SceneBuilder::circle(r));
    GroundSpec g;
    g.normal = n;
    g.contact_distance = 1e-4;
    g.friction = mu;
    g.slip_velocity = 1e-4;
    b.ground(g);
    b.gravity(vec3(0, 0, -kG));
    b.integrator().dt = 2e-3;
    const auto m = build_model(b.build());
    Simulator sim(m);
    ASSERT_TRUE(test::run_steps(sim, 250));  // 0.5 s
    // velocity along the slope, downhill
    Vec3 down = vec3(0, 0, -1) - dot(vec3(0, 0, -1), n) * n;
    down = down / norm(down);
    Real v = 0;
    for (int k = 0; k < m->nnode; ++k)
      v +=
          dot(vec3(sim.state().u[3 * k], sim.state().u[3 * k + 1], sim.state().u[3 * k + 2]), down);
    v /= m->nnode;
    const Real a = kG * (std::sin(theta) - mu * std::cos(theta));
    std::printf("incline %.2f rad: downhill speed %.5f m/s, Coulomb %.5f m/s\n", theta, v,
                a > 0 ? a * 0.5 : 0.0);
    if (a <= 0) {
      EXPECT_LT(std::fabs(v), 2e-4);  // creeping below the slip tolerance
    } else {
      EXPECT_NEAR(v / (a * 0.5), 1, 0.03);
    }
  }
}

TEST(GroundFriction, GroundFromJson) {
  const std::string text = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
  "rods": [{"name": "r", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0.01], "end": [1, 0, 0.01], "nodes": 5}}],
  "forces": {"gravity": [0, 0, -9.8],
             "ground": {"type": "wavy", "amplitude": 0.01, "length_x": 0.5,
                        "friction": 0.3, "contact_distance": SLIP}}
})";
  std::string ok = text;
  ok.replace(ok.find("SLIP"), 4, "1e-3");
  const SceneSpec s = read_scene_text(ok, "g.json", ".");
  EXPECT_TRUE(s.forces.ground.enabled);
  EXPECT_TRUE(s.forces.ground.wavy);
  EXPECT_EQ(s.forces.ground.friction, 0.3);
  std::string bad = text;
  bad.replace(bad.find("SLIP"), 4, "0");
  try {
    read_scene_text(bad, "g.json", ".");
    FAIL() << "a zero contact distance was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "g.json");
    EXPECT_NE(e.field().find("ground.contact_distance"), std::string::npos) << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// Bodies placed at their documented resting height (rod nodes at z = r, a shell's at z = h / 2,
// or half its contact thickness) stay down on every integrator: the ground's force ramp is
// centred on the surface, so at rest a node feels 5 % of the weight the automatic stiffness
// carries at delta and sinks towards the static compliance weight / (2 k_c) = delta / 2 below the
// surface (the automatic stiffness is each node's weight / delta, so every node alike). Over
// 1 s nothing rises above the resting height (to 1e-9 m; measured at most -6e-10 m), nothing
// sinks by more than 1.05 delta (an undamped node starting at the top of its oscillation swings
// to twice the static compliance, delta: measured 1.002 delta on the midpoint rule and
// Newmark), and implicit Euler, which damps the oscillation, comes to rest at delta / 2 (to 10 %;
// measured 0.500 delta).
struct RestRun {
  Real highest = -INFINITY, lowest = INFINITY, last = 0;  // node height minus its resting height
};

RestRun rest_on_ground(IntegratorKind kind, bool shell, Real contact_thickness = 0) {
  constexpr Real kDelta = 5e-4, kR = 1e-3, kHs = 2e-3;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  Real rest = 0;
  if (shell) {
    rest = 0.5 * (contact_thickness > 0 ? contact_thickness : kHs);
    const int s = b.rectangle_shell("plate", vec3(0, 0, rest), vec3(0.1, 0, 0), vec3(0, 0.1, 0),
                                    0.01, true, mat, kHs);
    b.membrane(s, MembraneModel::kSprings);
    b.part(s).contact_thickness = contact_thickness;
  } else {
    rest = kR;
    b.straight_rod("rod", vec3(0, 0, kR), vec3(0.1, 0, kR), 11, mat, SceneBuilder::circle(kR));
  }
  GroundSpec g;
  g.contact_distance = kDelta;
  b.ground(g);
  b.gravity(vec3(0, 0, -kG));
  b.integrator().kind = kind;
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  Simulator sim(m);
  RestRun out;
  for (int i = 0; i < 1000; ++i) {
    const StepReport r = sim.step();
    EXPECT_TRUE(r.ok()) << "step " << i;
    if (!r.ok()) break;
    Real low = INFINITY;
    for (int n = 0; n < m->nnode; ++n) {
      const Real z = sim.state().q[3 * size_t(n) + 2] - rest;
      out.highest = std::max(out.highest, z);
      out.lowest = std::min(out.lowest, z);
      low = std::min(low, z);
    }
    out.last = low;
  }
  return out;
}

TEST(GroundRest, BodiesAtTheirRestingHeightStayDownOnEveryIntegrator) {
  constexpr Real kDelta = 5e-4;
  const std::pair<IntegratorKind, const char*> kinds[] = {
      {IntegratorKind::kImplicitEuler, "implicit Euler"},
      {IntegratorKind::kImplicitMidpoint, "midpoint"},
      {IntegratorKind::kNewmark, "Newmark"}};
  for (const auto& [kind, name] : kinds) {
    for (int body = 0; body < 3; ++body) {
      const char* what = body == 0 ? "rod" : body == 1 ? "plate" : "plate, contact thickness 2 h";
      const RestRun r = rest_on_ground(kind, body > 0, body == 2 ? 4e-3 : 0);
      std::printf("resting %-28s %-14s: highest %+.2e m, lowest %+.3f delta, at 1 s %+.3f delta\n",
                  what, name, r.highest, r.lowest / kDelta, r.last / kDelta);
      EXPECT_LT(r.highest, 1e-9) << what << ", " << name;
      EXPECT_GT(r.lowest, -1.05 * kDelta) << what << ", " << name;
      if (kind == IntegratorKind::kImplicitEuler) {
        EXPECT_NEAR(r.last / kDelta, -0.5, 0.1) << what << ", " << name;
      }
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
