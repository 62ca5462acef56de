// Huang et al.'s star-shaped rolling robot (seed 003, "Rolling robot", Figs. 4-5;
// apps/scenes/star_roll*.json): seven curled SMA limbs joined at the centre, resting on the arcs
// of limbs 4 and 5; heating limb 4 (eq. 7 on its natural curvature and modulus) straightens it
// against the ground and tips the robot forward (+x, along the ground) over its front contact
// limb. The seed's text gives no number from Figs. 4-5 (the curves are not in the text), only
// what happens: on flat ground the robot rolls in every cycle, it travels less as the incline
// grows from -3 to +3 degrees, and it fails to roll up +6 degrees. These tests check the first
// heating's roll on flat ground and up +3 degrees; the four cycles on every ground are in
// bench/star_roll.py and bench/results/2026-11-29-star-rolling-xeon-2c.md.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

struct Roll {
  std::set<int> before, after;  // the limbs touching the ground before the heating and at the end
  Real advance;                 // the centre of mass's advance along the ground [m]
};

// The scene with its first heating (limb 4) moved from t = 0.5 s to t = 0.2 s, run to 0.2 +
// `after` s at the scene's step, 0.5 ms. It starts at rest on limbs 4 and 5 in its undeformed
// shape and sags under its weight; 0.2 s of that is enough for the heating to roll it as in the
// scene (measured: 16.4 mm onto limbs 6 and 0; the scene's first cycle, heated at 0.5 s, 15.9 mm
// onto the same limbs). Heated earlier, still swaying, it rolls further (20 and 28 mm at 0.1 and
// 0.05 s, measured with an elastic ground). A limb touches when one of its nodes' surface is within
// the contact layer of the plane.
Roll first_roll(const std::string& name, Real after) {
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name);
  const Real shift = 0.3;
  for (auto& a : sc.actuation)
    a.time.sma_start -= shift;
  for (auto& p : sc.parts)
    if (p.youngs_time.kind == TimeFunction::Kind::kSma) p.youngs_time.sma_start -= shift;
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
  const Real c0 = centre(sim.state());
  EXPECT_TRUE(test::run_steps(sim, std::lround((0.2 + after) / sc.integrator.dt)));
  out.after = touching(sim.state());
  out.advance = centre(sim.state()) - c0;
  return out;
}

std::string limbs(const std::set<int>& s) {
  std::string o;
  for (int k : s)
    o += (o.empty() ? "" : ",") + std::to_string(k);
  return o;
}

// On flat ground the heated limb 4, straightened, tips the robot over limb 5 and, as it sticks out
// 30 mm (the curled limbs reach about 20 mm from the centre), keeps it from resting on limbs 5
// and 6: 0.3 s after the heating starts the robot rests on limbs 6 and 0, two limbs (2 x 2 pi /
// 7) on, its centre of mass more than 12 mm forward (measured 16.6 mm; one limb's turn is about
// 8.3 mm, half of it, three limbs would be 25 mm).
TEST(StarRoll, HeatingTheRearContactLimbRollsItTwoLimbsOnFlatGround) {
  const Roll r = first_roll("star_roll.json", 0.3);
  std::printf("flat: on limbs %s, after the heating on %s, centre of mass %+.2f mm along\n",
              limbs(r.before).c_str(), limbs(r.after).c_str(), 1e3 * r.advance);
  EXPECT_EQ(r.before, (std::set<int>{4, 5}));
  EXPECT_EQ(r.after, (std::set<int>{6, 0}));
  EXPECT_GT(r.advance, 0.012);
  EXPECT_LT(r.advance, 0.021);
}

// Up a +3 degree plane (rising towards +x: the ground's normal tilted by 3 degrees about y, the
// robot turned with it) the same heating turns the robot by the same two limbs, onto limbs 6 and
// 0, but its centre of mass advances less along the ground than on flat ground: less than 13.5
// mm, where the flat test asks for more than 12 (measured 10.9 mm against 16.4 mm at this time;
// over the whole first cycle 8.0 against 15.9 mm, bench/star_roll.py). The paper: "when the angle
// of inclination increases from -3.0 to +3.0 degrees, the distance traveled by the robot
// decreases".
TEST(StarRoll, HeatingRollsItLessFarUpAThreeDegreeIncline) {
  const Roll r = first_roll("star_roll_incline3.json", 0.3);
  std::printf("+3 deg: on limbs %s, after the heating on %s, centre of mass %+.2f mm along\n",
              limbs(r.before).c_str(), limbs(r.after).c_str(), 1e3 * r.advance);
  EXPECT_EQ(r.before, (std::set<int>{4, 5}));
  EXPECT_EQ(r.after, (std::set<int>{6, 0}));
  EXPECT_GT(r.advance, 0.004);
  EXPECT_LT(r.advance, 0.0135);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
