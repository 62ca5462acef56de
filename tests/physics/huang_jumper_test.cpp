// Huang et al.'s SMA jumper (seed 003, "Jumper", Fig. 7; apps/scenes/huang_jumper.json): an
// asymmetric ring on the ground (a foot and an SMA loop of radius R0 = 5 mm), heated once, with
// a pull at its first node (the wire at its leading edge). It leaves the ground and lands
// forward. The seed's text gives no number for the jump (Fig. 7b-c is not in the text), so the
// checks are physical: while every node is above the ground's contact layer the body is in free
// flight, and its momentum changes by gravity and the pull alone; the flight lasts far longer
// than a bounce off the contact layer; the leading edge ends more than R0 ahead of where it
// started. The first node's path over the 3 s cycle is reported in
// bench/results/2026-11-29-huang-jumper-xeon-2c.md.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// The scene for 0.25 s (the heating; 2000 steps of 0.125 ms). Airborne: every node's surface more
// than the contact layer delta above the ground, where the ground's force is below 1e-15 of a
// node's weight (ground_contact.h: exp(-15) twice over).
// - A flight lasts at least 20 ms (measured: 66 ms from t = 12 ms, then shorter hops as it
//   tumbles, 0.154 s in the air in all): a node bouncing off the contact layer's spring (2 k_c
//   with k_c ten times the jumper's weight over delta) is back within about 3 ms even with the
//   whole mass on it; and its lowest point clears the ground by more than 10 delta (measured
//   4.45 mm, 22 delta).
// - Over every step taken wholly in the air, the midpoint rule's momentum balance
//   sum_i m_i (u_i(n+1) - u_i(n)) = dt (M g + F s(t + dt/2)) holds: internal forces (elastic,
//   Kelvin-Voigt, the actuation's) sum to zero, and nothing else acts. Within 1e-3 of the
//   weight's impulse M g dt (Newton's abs_tol of 1e-8 N is 3e-5 of the weight; measured 1e-11).
// - The first node (the leading edge) ends more than R0 forward (+x) of its start (measured
//   2.0 R0; a sweep of the ground's stiffness, friction, damping and edge length gave 1.4 to
//   2.7 R0 at 0.4 s, and 0.25 mm of creep is all the regularized friction allows in 0.25 s at its
//   slip velocity of 1 mm/s).
TEST(HuangJumper, LeavesTheGroundInFreeFlightAndLandsForward) {
  const auto m = build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/huang_jumper.json"));
  const SceneSpec& sc = m->scene;
  ASSERT_TRUE(m->ground.enabled);
  const Real R0 = 0.005, r = 4e-4, delta = m->ground.contact_distance;
  const Real g = norm(m->gravity);
  ASSERT_GT(g, 9);
  const Real dt = sc.integrator.dt;
  ASSERT_EQ(sc.integrator.kind, IntegratorKind::kImplicitMidpoint);
  Real M = 0;
  for (int n = 0; n < m->nnode; ++n)
    M += m->node_mass[n];
  ASSERT_EQ(m->point_loads.size(), 1u);
  const Vec3 pull = m->point_loads[0].force;
  const int first = m->part_node[m->part_node_adr[0]];  // the foot's node 0

  Simulator sim(m);
  const Real x0 = test::node_position(sim.state(), first)[0];
  auto airborne = [&](const State& s) {
    for (int n = 0; n < m->nnode; ++n)
      if (s.q[3 * size_t(n) + 2] - r <= delta) return false;
    return true;
  };
  auto momentum = [&](const State& s) {
    Vec3 p = vec3(0, 0, 0);
    for (int n = 0; n < m->nnode; ++n)
      for (int c = 0; c < 3; ++c)
        p[c] += m->node_mass[n] * s.u[3 * size_t(n) + c];
    return p;
  };
  const int steps = int(std::lround(0.25 / dt));
  int air_steps = 0, longest = 0, run = 0, balanced = 0;
  Real t_first = -1, worst = 0, clearance = 0;
  bool was_airborne = airborne(sim.state());
  for (int k = 0; k < steps; ++k) {
    const Vec3 p0 = momentum(sim.state());
    const Real t = sim.state().time;
    const StepReport rep = sim.step();
    ASSERT_TRUE(rep.ok()) << "step " << k << ": " << to_string(rep.status);
    const bool now = airborne(sim.state());
    if (now) {
      ++air_steps;
      longest = std::max(longest, ++run);
      if (t_first < 0) t_first = sim.state().time;
      Real low = std::numeric_limits<Real>::infinity();
      for (int n = 0; n < m->nnode; ++n)
        low = std::min(low, sim.state().q[3 * size_t(n) + 2] - r);
      clearance = std::max(clearance, low);
    } else {
      run = 0;
    }
    if (now && was_airborne) {  // the whole step in the air
      const Real s = eval_time_function(m->point_loads[0].time, t + dt / 2);
      const Vec3 want = dt * (M * m->gravity + s * pull);
      worst = std::max(worst, norm(momentum(sim.state()) - p0 - want) / (M * g * dt));
      ++balanced;
    }
    was_airborne = now;
  }
  const Real dx = test::node_position(sim.state(), first)[0] - x0;
  std::printf(
      "jumper: airborne from t = %.4f s, %d steps in the air (longest flight %.4f s), momentum "
      "balance in flight within %.2e of M g dt over %d steps, clearance up to %.2f mm; first "
      "node %.3f R0 forward at t = 0.25 s\n",
      t_first, air_steps, longest * dt, worst, balanced, 1e3 * clearance, dx / R0);
  EXPECT_GE(longest * dt, 0.02);
  EXPECT_GT(clearance, 10 * delta);
  EXPECT_GT(balanced, 0);
  EXPECT_LT(worst, 1e-3);
  EXPECT_GT(dx, R0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
