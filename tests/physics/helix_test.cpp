// V4: a helix hanging under gravity (DisMech b1, b2), shape from DisMech's data file (a short
// straight lead, a radial arm and a helix of radius 2 cm and pitch 5 cm, 106 nodes), top edge
// clamped. With mass damping the dynamic run settles, and its rest state must not depend on the
// time step and must equal the static equilibrium.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "physics_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kDensity = 1273.52;  // [kg/m^3]
constexpr Real kPoisson = 0.5;
constexpr Real kDamping = 5;  // mass damping alpha [1/s]: the helix settles in a few seconds

/// The rest states are compared node by node, relative to the helix's size (its largest
/// extent, 0.21 m). Settled runs and static solves agree to about 5e-9 m (measured):
/// Newton stops at 1e-8 N on a spring of about 35 N/m (3e-10 m), and after 6 s the largest
/// velocity left is about 1e-8 m/s. 1e-6 of the size (2e-7 m) is far above both yet far below
/// gravity's sag of the tip (3.7 mm at E = 1e9, 1.4 cm at E = 1e7).
constexpr Real kRestRelTol = 1e-6;

struct HelixCase {
  Real E;       // [Pa]
  Real radius;  // [m]
  Real dt;      // implicit Euler step [s]; the refined run takes dt / 2
  Real settle;  // simulated time to settle [s]
};

SceneSpec helix_scene(const HelixCase& c, IntegratorKind kind, Real dt, Real duration) {
  const std::vector<Vec3> nodes = read_vector_file(test::data_path("helix_configuration_n106.txt"));
  EXPECT_EQ(nodes.size(), 106u);
  SceneBuilder b;
  const int mat = b.material("m", kDensity, c.E, kPoisson);
  const int rod = b.polyline_rod("helix", nodes, mat, SceneBuilder::circle(c.radius));
  b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
  if (kind != IntegratorKind::kStatic) b.mass_damping(kDamping);
  b.integrator().kind = kind;
  b.integrator().dt = dt;
  b.integrator().duration = duration;
  return b.build();
}

/// final node positions of a run of `duration` in steps of dt
std::vector<Real> rest_positions(const HelixCase& c, IntegratorKind kind, Real dt, Real duration) {
  const auto model = build_model(helix_scene(c, kind, dt, duration));
  Simulator sim(model);
  EXPECT_TRUE(test::run_steps(sim, std::lround(duration / dt)));
  return std::vector<Real>(sim.state().q.begin(), sim.state().q.begin() + 3 * model->nnode);
}

/// largest node distance between two configurations [m]
Real max_node_distance(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real d = 0;
  for (size_t n = 0; 3 * n < a.size(); ++n)
    d = std::max(d, std::hypot(a[3 * n] - b[3 * n], a[3 * n + 1] - b[3 * n + 1],
                               a[3 * n + 2] - b[3 * n + 2]));
  return d;
}

/// largest extent of the initial helix [m]
Real helix_size() {
  const std::vector<Vec3> nodes = read_vector_file(test::data_path("helix_configuration_n106.txt"));
  Real s = 0;
  for (int k = 0; k < 3; ++k) {
    Real lo = INFINITY, hi = -INFINITY;
    for (const Vec3& x : nodes) {
      lo = std::min(lo, x[k]);
      hi = std::max(hi, x[k]);
    }
    s = std::max(s, hi - lo);
  }
  return s;
}

class HelixTest : public ::testing::TestWithParam<HelixCase> {};

TEST_P(HelixTest, SettledStateMatchesHalfStepAndStaticSolve) {
  const HelixCase c = GetParam();
  const Real size = helix_size();
  const std::vector<Real> coarse =
      rest_positions(c, IntegratorKind::kImplicitEuler, c.dt, c.settle);
  const std::vector<Real> fine =
      rest_positions(c, IntegratorKind::kImplicitEuler, c.dt / 2, c.settle);
  // static: loads ramp to full over 4 load steps
  const std::vector<Real> stat = rest_positions(c, IntegratorKind::kStatic, 0.25, 1);
  ASSERT_EQ(coarse.size(), fine.size());
  ASSERT_EQ(coarse.size(), stat.size());

  const Real d_dt = max_node_distance(coarse, fine) / size;
  const Real d_static = max_node_distance(fine, stat) / size;
  const size_t tip = coarse.size() - 3;
  const Real sag =
      stat[tip + 2] - read_vector_file(test::data_path("helix_configuration_n106.txt")).back()[2];
  std::printf(
      "V4 E = %.0e, r = %.0e: tip at rest (%.9f, %.9f, %.9f) m, sag %.6e m; dt vs dt/2 %.3e, "
      "dynamic vs static %.3e (max node distance / helix size %.4f m)\n",
      c.E, c.radius, stat[tip], stat[tip + 1], stat[tip + 2], sag, d_dt, d_static, size);
  ::testing::Test::RecordProperty("dt_vs_half_dt", std::to_string(d_dt));
  ::testing::Test::RecordProperty("dynamic_vs_static", std::to_string(d_static));
  EXPECT_LT(d_dt, kRestRelTol);
  EXPECT_LT(d_static, kRestRelTol);
  // gravity must visibly stretch the helix downwards (a run that ignored it would pass above)
  EXPECT_LT(sag, -100 * kRestRelTol * size);
}

/// period of the tip's vertical oscillation about the static rest height z_rest, undamped,
/// implicit midpoint at step dt over `duration` [s]
Real bounce_period(const HelixCase& c, Real dt, Real duration, Real z_rest) {
  SceneSpec spec = helix_scene(c, IntegratorKind::kImplicitMidpoint, dt, duration);
  spec.forces.mass_damping = 0;
  const auto model = build_model(spec);
  Simulator sim(model);
  test::Series tip;
  const long steps = std::lround(duration / dt);
  for (long s = 0; s < steps; ++s) {
    const StepReport r = sim.step();
    EXPECT_TRUE(r.ok()) << "step " << s << ": " << to_string(r.status);
    if (!r.ok()) break;
    tip.add(sim.state().time, test::node_position(sim.state(), model->nnode - 1)[2] - z_rest);
  }
  EXPECT_TRUE(test::no_warnings(sim));
  EXPECT_GE(tip.upward_crossings().size(), 10u);
  return tip.period();
}

TEST(HelixBounce, PeriodConvergesUnderStepRefinement) {
  // released from its stress-free shape, the helix bounces about its rest state with a period
  // of about 0.21 s (several modes mixed, so the crossings are not evenly spaced; the mean over
  // 3 s is stable). Implicit midpoint's period error is second order in dt.
  const HelixCase c{1e7, 5e-3, 0.01, 6};
  const std::vector<Real> rest = rest_positions(c, IntegratorKind::kStatic, 0.25, 1);
  const Real z_rest = rest[rest.size() - 1];
  const Real t1 = bounce_period(c, 0.01, 3, z_rest);
  const Real t2 = bounce_period(c, 0.005, 3, z_rest);
  const Real t4 = bounce_period(c, 0.0025, 3, z_rest);
  const Real gap_coarse = std::fabs(t1 - t2) / t4, gap_fine = std::fabs(t2 - t4) / t4;
  std::printf(
      "V4 bounce period (E = 1e7, midpoint): dt 10 ms %.6f s, 5 ms %.6f s, 2.5 ms %.6f s; gaps "
      "%.3e, %.3e (ratio %.2f)\n",
      t1, t2, t4, gap_coarse, gap_fine, gap_coarse / gap_fine);
  ::testing::Test::RecordProperty("period_gap_5ms_2_5ms", std::to_string(gap_fine));
  /// V4: "oscillation frequency stable under dt refinement"; measured 0.16 % between 5 and
  /// 2.5 ms, so 1 % catches a first-order error or a mode change
  constexpr Real kPeriodRefineRelTol = 0.01;
  EXPECT_LT(gap_fine, kPeriodRefineRelTol);
  // second order: halving dt quarters the gap (measured 3.9); 2 allows for the mode mixing
  EXPECT_GT(gap_coarse / gap_fine, 2);
}

INSTANTIATE_TEST_SUITE_P(V4,
                         HelixTest,
                         ::testing::Values(HelixCase{1e7, 5e-3, 0.01, 6},
                                           HelixCase{1e9, 1e-3, 0.01, 6}),
                         [](const ::testing::TestParamInfo<HelixCase>& i) {
                           return i.param.E > 1e8 ? std::string("E1e9_r1mm")
                                                  : std::string("E1e7_r5mm");
                         });

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
