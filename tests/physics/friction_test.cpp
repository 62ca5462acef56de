// Coulomb friction between bodies in contact (seed 000 eq. 23) in the simulator: a stiff rod
// sliding along two fixed rails (rod-rod edge pairs) and a tile and a rod sliding on a fixed
// plate (shell-shell and rod-shell pairs) under tilted gravity accelerate at g (sin - mu cos)
// when tan > mu, and creep at the speed the smooth law predicts when they stick; the Jacobian
// with sliding pairs matches finite differences; friction per pair of materials from JSON.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "physics_util.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;
constexpr Real kR = 0.005;  // rod radius [m]

/// gravity tilted by theta about x: the slope runs down +y, the normal along +z
Vec3 tilted_gravity(Real theta) { return vec3(0, kG * std::sin(theta), -kG * std::cos(theta)); }

/// mass-weighted mean velocity along y of a part's nodes
Real part_velocity_y(const Model& m, const State& s, int part) {
  Real mv = 0, mass = 0;
  for (int i = m.part_node_adr[part]; i < m.part_node_adr[part + 1]; ++i) {
    const int n = m.part_node[i];
    mv += m.node_mass[n] * s.u[3 * n + 1];
    mass += m.node_mass[n];
  }
  return mv / mass;
}

/// a stiff slider rod along y lying across two fixed rails along x; friction between the rails'
/// material and the slider's from `pair_mu` (the default `default_mu` for all other pairs)
SceneSpec slider_on_rails(
    Real theta, Real default_mu, Real pair_mu, Real slip_velocity, Real tol = 5e-4) {
  SceneBuilder b;
  const int steel = b.material("steel", 7800, 2e11, 0.3);
  const int wood = b.material("wood", 700, 1e12, 0.3);
  for (Real y : {-0.08, 0.08}) {
    const int rail = b.straight_rod(y < 0 ? "rail0" : "rail1", vec3(-0.05, y, 0), vec3(0.05, y, 0),
                                    11, steel, SceneBuilder::circle(kR));
    for (int i = 0; i < 11; ++i)
      b.fix_node(rail, i);
  }
  // it starts inside the contact layer, near where it rests
  b.straight_rod("slider", vec3(0, -0.2, 2 * kR + 0.2 * tol), vec3(0, 0.2, 2 * kR + 0.2 * tol), 41,
                 wood, SceneBuilder::circle(kR));
  ContactSpec c;
  c.tolerance = tol;
  c.friction = default_mu;
  c.slip_velocity = slip_velocity;
  if (pair_mu >= 0) c.friction_pairs.push_back(FrictionPairSpec{steel, wood, pair_mu, {}});
  b.contact(c);
  b.gravity(tilted_gravity(theta));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  return b.build();
}

/// acceleration along y of `part`: the least-squares slope of its velocity over steps
/// [steps1, steps2) (a fit, since the normal forces ripple as the slider's nodes pass over the
/// rails); and its speed at the end
struct Motion {
  Real accel, speed;
};
Motion run_and_measure(Simulator& sim, int part, int steps1, int steps2) {
  const Real dt = sim.model().scene.integrator.dt;
  Real st = 0, sv = 0, stt = 0, stv = 0;
  int n = 0;
  for (int s = 0; s < steps2; ++s) {
    const StepReport r = sim.step();
    EXPECT_TRUE(r.ok()) << "step " << s << ": " << to_string(r.status);
    if (!r.ok()) return {NAN, NAN};
    if (s < steps1) continue;
    const Real t = (s + 1) * dt, v = part_velocity_y(sim.model(), sim.state(), part);
    st += t, sv += v, stt += t * t, stv += t * v;
    ++n;
  }
  const Real accel = (n * stv - st * sv) / (n * stt - st * st);
  return {accel, part_velocity_y(sim.model(), sim.state(), part)};
}

TEST(ContactFriction, RodSlidesOnRailsAtCoulombAcceleration) {
  const Real theta = 0.5, mu = 0.3;  // tan 0.5 = 0.546 > mu: it slides
  const Real theory = kG * (std::sin(theta) - mu * std::cos(theta));
  // at two widths of the contact layer (measured: -0.09 % at 0.5 mm, +0.04 % at 0.05 mm)
  Real err[2];
  const Real tols[2] = {5e-4, 5e-5};
  for (int i = 0; i < 2; ++i) {
    // mu from the pair of materials; the default (0.9) would make it stick
    const auto m = build_model(slider_on_rails(theta, 0.9, mu, 1e-3, tols[i]));
    ASSERT_TRUE(m->contact_friction());
    Simulator sim(m);
    const Motion mo = run_and_measure(sim, 2, 100, 300);
    err[i] = mo.accel / theory - 1;
    std::printf(
        "rod on rails, layer %.0e m: acceleration %.6f m/s^2, Coulomb %.6f m/s^2 (%+.3f %%)\n",
        tols[i], mo.accel, theory, 100 * err[i]);
  }
  EXPECT_LT(std::fabs(err[0]), 3e-3);
  EXPECT_LT(std::fabs(err[1]), 3e-3);
}

TEST(ContactFriction, RodOnRailsSticksAndCreepsAtTheSmoothLawsSpeed) {
  const Real theta = 0.5, mu = 0.8, nu = 1e-3;  // tan 0.5 = 0.546 < mu: it sticks
  const auto m = build_model(slider_on_rails(theta, mu, -1, nu));
  Simulator sim(m);
  const Motion mo = run_and_measure(sim, 2, 150, 300);
  // the smooth law holds the slider at the slip speed v where mu N gamma(v) = m g sin:
  // tanh(K2 v / 2) = tan(theta) / mu, K2 = 15 / nu
  const Real creep = 2 * nu / 15 * std::atanh(std::tan(theta) / mu);
  std::printf("rod on rails, sticking: speed %.4e m/s, smooth law %.4e m/s, acceleration %.2e\n",
              mo.speed, creep, mo.accel);
  EXPECT_NEAR(mo.speed / creep, 1, 0.02);
  EXPECT_LT(std::fabs(mo.accel), 1e-3);
}

TEST(ContactFriction, TileAndRodSlideOnAFixedPlate) {
  const Real theta = 0.6, mu = 0.4, h = 2e-3, tol = 5e-4;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e8, 0.3);
  const int plate = b.rectangle_shell("plate", vec3(-0.06, -0.1, 0), vec3(0.12, 0, 0),
                                      vec3(0, 0.2, 0), 0.02, true, mat, h);
  b.membrane(plate, MembraneModel::kSprings);
  for (int i = 0; i < int(b.part(plate).nodes.size()); ++i)
    b.fix_node(plate, i);
  // the tile is turned against the plate's grid; both start inside the contact layer
  const Real z = h + 0.2 * tol;
  const int tile = b.rectangle_shell("tile", vec3(-0.045, -0.07, z), vec3(0.03, 0.008, 0),
                                     vec3(-0.008, 0.03, 0), 0.015, true, mat, h);
  b.membrane(tile, MembraneModel::kSprings);
  const int rod = b.straight_rod("rod", vec3(0.02, -0.08, h / 2 + 1e-3 + 0.2 * tol),
                                 vec3(0.03, -0.03, h / 2 + 1e-3 + 0.2 * tol), 11, mat,
                                 SceneBuilder::circle(1e-3));
  ContactSpec c;
  c.tolerance = tol;
  c.friction = mu;
  b.contact(c);
  b.gravity(tilted_gravity(theta));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  const auto m = build_model(b.build());
  Simulator sim(m);
  Real vt1 = 0, vr1 = 0;
  const int s1 = 100, s2 = 250;
  for (int s = 0; s < s2; ++s) {
    const StepReport r = sim.step();
    ASSERT_TRUE(r.ok()) << "step " << s << ": " << to_string(r.status);
    if (s + 1 == s1) {
      vt1 = part_velocity_y(*m, sim.state(), tile);
      vr1 = part_velocity_y(*m, sim.state(), rod);
    }
  }
  const Real T = (s2 - s1) * 1e-3;
  const Real at = (part_velocity_y(*m, sim.state(), tile) - vt1) / T;
  const Real ar = (part_velocity_y(*m, sim.state(), rod) - vr1) / T;
  const Real theory = kG * (std::sin(theta) - mu * std::cos(theta));
  std::printf(
      "on a plate: tile %.5f m/s^2 (%+.3f %%), rod %.5f m/s^2 (%+.3f %%), Coulomb %.5f m/s^2\n", at,
      100 * (at / theory - 1), ar, 100 * (ar / theory - 1), theory);
  // 1 %: many sub-pairs share the load, each with its own normal
  EXPECT_NEAR(at / theory, 1, 1e-2);
  EXPECT_NEAR(ar / theory, 1, 1e-2);
}

TEST(ContactFriction, JacobianWithSlidingPairsMatchesFiniteDifferences) {
  const auto m = build_model(slider_on_rails(0.5, 0.3, -1, 1e-2));
  Simulator sim(m);
  for (int s = 0; s < 30; ++s)
    ASSERT_TRUE(sim.step().ok());
  ASSERT_GT(std::fabs(part_velocity_y(*m, sim.state(), 2)), 1e-2);  // sliding
  const Real rel = test::residual_fd_error(sim, 1e-3, [](Real) { return Real(1e-8); });
  std::printf("friction Jacobian: relative error %.3e\n", rel);
  EXPECT_LT(rel, 1e-6);
}

TEST(ContactFriction, FrictionFromJson) {
  const std::string text = R"({
  "materials": [{"name": "a", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3},
                {"name": "b", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
  "rods": [{"name": "r", "material": "a", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 5}},
           {"name": "s", "material": "b", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 1, 0], "end": [1, 1, 0], "nodes": 5}}],
  "contact": {"tolerance": 1e-3, "friction": 0.2, "slip_velocity": 2e-3,
              "friction_pairs": [{"materials": ["a", "MAT"], "mu": MU}]}
})";
  auto with = [&](const char* mat, const char* mu) {
    std::string s = text;
    s.replace(s.find("MAT"), 3, mat);
    s.replace(s.find("MU"), 2, mu);
    return s;
  };
  const SceneSpec ok = read_scene_text(with("b", "0.7"), "f.json", ".");
  EXPECT_EQ(ok.contact.friction, 0.2);
  EXPECT_EQ(ok.contact.slip_velocity, 2e-3);
  ASSERT_EQ(ok.contact.friction_pairs.size(), 1u);
  const auto m = build_model(ok);
  EXPECT_EQ(m->part_mu(0, 1), 0.7);
  EXPECT_EQ(m->part_mu(1, 0), 0.7);
  EXPECT_EQ(m->part_mu(0, 0), 0.2);
  EXPECT_EQ(m->part_mu(1, 1), 0.2);
  struct Bad {
    const char *mat, *mu, *field;
    int line;
  };
  const Bad bad[] = {{"c", "0.7", "contact.friction_pairs[0].materials[1]", 9},
                     {"b", "-1", "contact.friction_pairs[0].mu", 9}};
  for (const Bad& c : bad) {
    try {
      read_scene_text(with(c.mat, c.mu), "f.json", ".");
      ADD_FAILURE() << "accepted " << c.mat << " " << c.mu;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "f.json");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(e.field().find(c.field), std::string::npos) << e.what();
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
