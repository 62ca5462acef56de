// Huang et al.'s star-shaped rolling robot (seed 003, "Rolling robot", Figs. 4-5;
// apps/scenes/star_roll*.json): seven curled SMA limbs joined at the centre, resting on the arcs
// of limbs 4 and 5; heating limb 4 (eq. 7 on its natural curvature and modulus) straightens it
// against the ground and tips the robot forward (+x, along the ground) over its front contact
// limb. The seed's text gives no number from Figs. 4-5 (the curves are not in the text), only
// what happens: "upon actuation of Limb 4, the robot rolls to the right and the contact limb
// changes from 5 to 6", the gait on -3 and +3 degree planes is that of flat ground, the robot
// travels less as the incline grows from -3 to +3 degrees, and "fails to roll up the incline
// when at +6.0 degrees". These tests check the first heating on the four planes; the four cycles
// on every ground are in bench/star_roll.py and
// bench/results/2026-12-01-star-rolling-soft-limbs-epyc-2c.md. The limbs' modulus (5 MPa on
// the scenes' round section) is ours, the text gives none: it puts the robot's limit between
// +3 and +6 degrees (at 3 MPa it fails +3 degrees, at 7 MPa it climbs +6), so the +6 degree
// test checks that calibration holds; the others are not fitted.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "physics_util.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

struct Roll {
  std::set<int> before, after;  // the limbs touching the ground before the heating and at the end
  Real advance;                 // the centre of mass's advance along the ground [m]
  Real turn;  // the robot's turn, clockwise (rolling forward), in limbs (2 pi / 7)
};

// The scene run to `after` s past its first heating (limb 4, at t = 0.5 s) at its step, 0.5 ms.
// It starts at rest on limbs 4 and 5 in its undeformed shape and sags under its weight for the
// first 0.5 s (on the +6 degree plane it also turns back by about half a limb, 0.45 of it by
// 0.5 s, 0.52 by 2 s: its rest there). A limb touches when one of its nodes' surface is within
// the contact layer of the plane; the turn is that of limb 0's straight part, from the hub to its
// arc; both the turn and the advance are counted from t = 0.
Roll run_first_roll(const std::string& name, Real after) {
  const SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name);
  Real heating = 1e30;
  for (const auto& a : sc.actuation)
    heating = std::min(heating, a.time.sma_start);
  const auto m = build_model(sc);
  EXPECT_TRUE(m->ground.enabled);
  EXPECT_EQ(m->npart, 14);  // a straight part and an arc per limb
  const Vec3 n = m->ground.normal;
  const Vec3 along = vec3(n[2], 0, -n[0]) / std::hypot(n[0], n[2]);
  const Real r = 4e-4, delta = m->ground.contact_distance;

  auto touching = [&](const State& s) {
    std::set<int> limbs;
    for (int p = 0; p < m->npart; ++p)
      for (int k = m->part_node_adr[p]; k < m->part_node_adr[p + 1]; ++k) {
        const Vec3 x = test::node_position(s, m->part_node[k]);
        if (dot(n, x - m->ground.point) - r < delta) limbs.insert(p / 2);
      }
    return limbs;
  };
  // limb 0's straight part (the model's part 0) runs from the hub to its arc
  const int hub = m->part_node[m->part_node_adr[0]], tip = m->part_node[m->part_node_adr[1] - 1];
  auto angle = [&](const State& s) {
    const Vec3 d = test::node_position(s, tip) - test::node_position(s, hub);
    return std::atan2(d[2], d[0]);
  };
  auto centre = [&](const State& s) {
    Real M = 0, c = 0;
    for (int k = 0; k < m->nnode; ++k) {
      M += m->node_mass[k];
      c += m->node_mass[k] * dot(along, test::node_position(s, k));
    }
    return c / M;
  };

  Simulator sim(m);
  Roll out;
  out.before = touching(sim.state());
  const Real c0 = centre(sim.state()), a0 = angle(sim.state());
  EXPECT_TRUE(test::run_steps(sim, std::lround((heating + after) / sc.integrator.dt)));
  out.after = touching(sim.state());
  out.advance = centre(sim.state()) - c0;
  const Real pi = std::acos(Real(-1));
  out.turn = -std::remainder(angle(sim.state()) - a0, 2 * pi) / (2 * pi / 7);
  return out;
}

// run_first_roll once per scene and time (the flat ground's is compared with the planes' too)
Roll first_roll(const std::string& name, Real after) {
  static std::map<std::pair<std::string, Real>, Roll> done;
  const auto key = std::make_pair(name, after);
  auto it = done.find(key);
  if (it == done.end()) it = done.emplace(key, run_first_roll(name, after)).first;
  return it->second;
}

std::string limbs(const std::set<int>& s) {
  std::string o;
  for (int k : s)
    o += (o.empty() ? "" : ",") + std::to_string(k);
  return o;
}

// The robot 1.75 s after the heating began: the heated limb has curled back (eq. 7's logistic
// decay is centred 1.2 s after the heating) and the robot has settled where the cycle leaves it
// (bench/star_roll.py: the same limbs and within 0.3 mm of the cycle's end, 3 s after the
// heating). On flat ground the roll peaks 1 s after the heating at 1.21 limbs and settles back.
constexpr Real kSettled = 1.75;

Roll first_roll_printed(const char* scene, const char* label) {
  const Roll r = first_roll(scene, kSettled);
  std::printf(
      "%s: on limbs %s, after the heating on %s, centre of mass %+.2f mm along, turned "
      "%.2f limbs\n",
      label, limbs(r.before).c_str(), limbs(r.after).c_str(), 1e3 * r.advance, r.turn);
  return r;
}

// One limb on: the robot turned by about 2 pi / 7 (between 0.75 and 1.5 limbs; two limbs, which
// Kelvin-Voigt damping of 1 ms gave the first scenes, turn it by 2), the front contact limb 5
// passed, limb 6 on the ground and limb 0 off it, the centre of mass 12 to 30 mm forward.
void expect_one_limb_on(const Roll& r) {
  EXPECT_EQ(r.before, (std::set<int>{4, 5}));
  EXPECT_GT(r.turn, 0.75);
  EXPECT_LT(r.turn, 1.5);
  EXPECT_EQ(r.after.count(6), 1u);
  EXPECT_EQ(r.after.count(0), 0u);
  EXPECT_GT(r.advance, 0.012);
  EXPECT_LT(r.advance, 0.030);
}

// On flat ground the heated limb 4, the rear of the two contact limbs, tips the robot over limb 5
// towards limb 6: one limb on, as the paper's contact limb goes from 5 to 6 (measured: a turn of
// 0.90 limbs, the centre 20.6 mm on, on limbs 4, 5 and 6).
TEST(StarRoll, HeatingTheRearContactLimbRollsItOneLimbOnFlatGround) {
  expect_one_limb_on(first_roll_printed("star_roll.json", "flat"));
}

// Down a -3 degree plane and up a +3 degree plane (the ground's normal tilted by 3 degrees about
// y, the robot turned with it) the same heating rolls the robot by the same one limb, as the
// paper's gait on both is that of flat ground; along the ground its centre of mass advances
// further down the decline than on flat ground, and less up the incline (measured 21.4, 20.6
// and 19.7 mm; turns of 0.93, 0.90 and 0.87 limbs: deterministic runs, so the order is asserted
// as it is). The paper: "when the angle of inclination increases from -3.0 to +3.0 degrees, the
// distance traveled by the robot decreases".
TEST(StarRoll, HeatingRollsItOneLimbOnThreeDegreePlanesAndLessFarUpThem) {
  const Roll down = first_roll_printed("star_roll_decline3.json", "-3 deg");
  const Roll up = first_roll_printed("star_roll_incline3.json", "+3 deg");
  expect_one_limb_on(down);
  expect_one_limb_on(up);
  const Roll flat = first_roll("star_roll.json", kSettled);  // (as the test above)
  EXPECT_GT(down.advance, flat.advance);
  EXPECT_GT(flat.advance, up.advance);
}

// Up a +6 degree plane the same heating does not roll the robot up: the paper's robot "fails to
// roll up the incline when at +6.0 degrees". Before the heating the robot turns back by about
// half a limb (its rest on that plane); the straightened limb tips it forward to 0.66 limbs past
// where it started, 1.2 s after the heating, and as the limb curls back it falls back (measured
// at the end: on limbs 3, 4 and 5, a turn of -0.24 limbs, the centre 2.6 mm on). So the check:
// less than a quarter limb on, limb 6 off the ground, the centre within 5 mm of its start.
TEST(StarRoll, HeatingDoesNotRollItUpASixDegreePlane) {
  const Roll up = first_roll_printed("star_roll_incline6.json", "+6 deg");
  EXPECT_EQ(up.before, (std::set<int>{4, 5}));
  EXPECT_LT(up.turn, 0.25);
  EXPECT_EQ(up.after.count(6), 0u);
  EXPECT_LT(std::fabs(up.advance), 0.005);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
