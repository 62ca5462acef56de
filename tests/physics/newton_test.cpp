// The Newton solver and integrators on whole scenes: failed steps leave the state alone, the
// assembled Jacobian is the derivative of the residual (and, under strong twist, the Hessian of
// the incremental potential), runs are deterministic, 2D mode holds its DOFs, the
// energy-conserving integrators conserve energy, and viscous drag gives the terminal velocity
// of Stokes-like drag.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "model/model_internal.h"
#include "physics_util.h"
#include "slender/stencils/bindings.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

/// bit-identical vectors (NaN and signed zero included)
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same_bits(Real a, Real b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// A small rod bent in 3D (a quarter-turn helix, 8 nodes) under gravity; `all_forces` adds a tip
/// load, viscous drag and mass damping so that every force term of the residual is on.
/// `clamp_twist` clamps the first edge (nodes and twist); otherwise only its two nodes are held
/// and the rod may twist as a whole.
SceneBuilder bent_rod_scene(IntegratorKind kind,
                            Real dt,
                            bool clamp_twist = true,
                            bool all_forces = true) {
  SceneBuilder b;
  const int mat = b.material("m", 1200, 1e6, 0.4);
  std::vector<Vec3> nodes;
  for (int i = 0; i < 8; ++i) {
    const Real s = 0.25 * kPi * i / 7;
    nodes.push_back(vec3(0.05 * std::cos(s), 0.05 * std::sin(s), 0.02 * s));
  }
  const int rod = b.polyline_rod("bent", nodes, mat, SceneBuilder::circle(2e-3));
  if (clamp_twist) {
    b.fix_edge(rod, 0);
  } else {
    b.fix_node(rod, 0).fix_node(rod, 1);
  }
  b.gravity(vec3(0, 0, -9.8));
  if (all_forces) {
    b.viscosity(0.05).mass_damping(0.5);
    b.point_load(rod, -1, vec3(0.002, -0.001, 0.003));
  }
  b.integrator().kind = kind;
  b.integrator().dt = dt;
  b.integrator().duration = 1;
  return b;
}

// (a) ---------------------------------------------------------------------------------------

TEST(Newton, FailedStepLeavesStateUntouched) {
  const auto model = build_model(bent_rod_scene(IntegratorKind::kImplicitEuler, 0.01).build());
  // a few good steps so that velocities, frames and reference twists are no longer initial
  Simulator good(model);
  ASSERT_TRUE(test::run_steps(good, 5));

  IntegratorSpec hopeless = model->scene.integrator;
  hopeless.newton.max_iters = 1;
  hopeless.newton.abs_tol = 0;
  hopeless.newton.rel_tol = 0;
  hopeless.newton.step_tol = 0;
  Simulator sim(model, hopeless);
  sim.set_state(good.state());
  const State before = sim.state();
  const StepReport r = sim.step();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status, StepStatus::kConverged);
  EXPECT_EQ(r.iterations, 1);
  const State& after = sim.state();
  EXPECT_TRUE(same_bits(after.q, before.q));
  EXPECT_TRUE(same_bits(after.u, before.u));
  EXPECT_TRUE(same_bits(after.a, before.a));
  EXPECT_TRUE(same_bits(after.edge_d1, before.edge_d1));
  EXPECT_TRUE(same_bits(after.edge_t, before.edge_t));
  EXPECT_TRUE(same_bits(after.bend_ref_twist, before.bend_ref_twist));
  EXPECT_TRUE(same_bits(after.time, before.time));
  EXPECT_EQ(after.step, before.step);

  // and the same step with the normal settings succeeds from there
  EXPECT_TRUE(good.step().ok());
}

// (b) ---------------------------------------------------------------------------------------

/// the state of `model` after five implicit-Euler steps of the bent rod (frames exact), with
/// `twist` added to every free twist (uniform if `random` is false, else times U(-1, 1) per
/// edge), random velocities and accelerations
State strained_state(const Model& model, bool clamp_twist, Real twist, bool random) {
  Simulator warm(
      build_model(bent_rod_scene(IntegratorKind::kImplicitEuler, 0.02, clamp_twist, true).build()));
  EXPECT_TRUE(test::run_steps(warm, 5));
  State s = warm.state();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  for (int e = 0; e < model.nedge; ++e)
    if (!model.dof_fixed[model.edge_dof(e)])
      s.q[model.edge_dof(e)] += twist * (random ? u(rng) : 1);
  for (int i = 0; i < model.ndof; ++i)
    if (!model.dof_fixed[i]) {
      s.u[i] += 0.05 * u(rng);
      s.a[i] = 0.5 * u(rng);
    }
  return s;
}

/// largest |tau - tau_bar| over the bend stencils of the simulator's state [rad]
Real max_twist_strain(const Simulator& sim) {
  const std::vector<Real> st = sim.bend_strains();
  Real m = 0;
  for (int k = 0; k < sim.model().nbend; ++k)
    m = std::max(m, std::fabs(st[3 * k + 2] - sim.model().bend_tau_bar[k]));
  return m;
}

// h = 1e-7 on coordinates of 0.05 m and angles below 1 rad keeps truncation (h^2 / l^2 with
// edges of 6 mm) and round-off (eps / h) both near 1e-9 relative
Real residual_fd_error(const Simulator& sim, Real dt) {
  return test::residual_fd_error(sim, dt, [](Real) { return Real(1e-7); });
}

struct JacobianCase {
  IntegratorKind kind;
  Real dt;
  const char* name;
};

class GlobalJacobian : public ::testing::TestWithParam<JacobianCase> {};

TEST_P(GlobalJacobian, MatchesCentralDifferencesOfResidual) {
  const JacobianCase jc = GetParam();
  // the bent rod after five steps of motion (bent further, twisted by the motion, frames
  // transported), with random velocities and accelerations
  const auto model = build_model(bent_rod_scene(jc.kind, jc.dt).build());
  Simulator sim(model);
  sim.set_state(strained_state(*model, true, 0.0, false));
  const Real rel = residual_fd_error(sim, jc.dt);
  const Real twist = max_twist_strain(sim);
  std::printf(
      "global Jacobian (%s, dt = %g): |J - J_fd| / |J_fd| = %.3e at max twist strain %.3e "
      "rad\n",
      jc.name, jc.dt, rel, twist);
  ::testing::Test::RecordProperty("relative_error", std::to_string(rel));
  EXPECT_LT(rel, test::kFdRelTol);
  // the configuration really is twisted (measured 1.3e-2 rad) and out of balance
  EXPECT_GT(twist, 5e-3);
  std::vector<Real> f;
  sim.residual(jc.dt, sim.state().q, f, nullptr);
  Real fnorm = 0;
  for (Real v : f)
    fnorm += v * v;
  EXPECT_GT(std::sqrt(fnorm), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Integrators,
    GlobalJacobian,
    ::testing::Values(JacobianCase{IntegratorKind::kStatic, 0.1, "static"},
                      JacobianCase{IntegratorKind::kImplicitEuler, 0.05, "implicit_euler"},
                      JacobianCase{IntegratorKind::kImplicitMidpoint, 0.05, "midpoint"},
                      JacobianCase{IntegratorKind::kNewmark, 0.05, "newmark"}),
    [](const ::testing::TestParamInfo<JacobianCase>& i) { return std::string(i.param.name); });

/// State at configuration y with the frames of `base` transported to it (as Newton does)
State transported(const Model& m, const State& base, const std::vector<Real>& y) {
  State s = base;
  s.q = y;
  std::fill(s.u.begin(), s.u.end(), 0);
  const ModelView mv = host_view(m);
  for (long e = 0; e < m.nedge; ++e)
    TransportFrames{
        mv, y.data(), base.edge_d1.data(), base.edge_t.data(), s.edge_d1.data(), s.edge_t.data()}(
        e);
  for (long k = 0; k < m.nbend; ++k)
    ReferenceTwists{mv, s.edge_d1.data(), s.edge_t.data(), base.bend_ref_twist.data(),
                    s.bend_ref_twist.data()}(k);
  return s;
}

TEST(GlobalJacobian, IsHessianOfPotentialUnderTwistStrain) {
  // Where edges carry a net torque (dE/dtheta != 0, here from random twists of 0.3 rad) the
  // residual's derivative and the stencils' Hessian differ: the stencils' gradient is exact only
  // where the frames were transported from (see rod_bend_twist_test.cpp), and the frames
  // transported from the state differ from those transported from a nearby configuration by a
  // rotation about the tangent whose energy is that torque times the angle (measured 5.9e-3
  // relative). So here the assembled static Jacobian is checked against second differences of
  // the potential (elastic + gravity) with frames transported from the state, as the stencil
  // tests do for one stencil.
  const auto model =
      build_model(bent_rod_scene(IntegratorKind::kStatic, 0.1, true, /*all_forces=*/false).build());
  const AssemblyPlan& p = model->plan;
  Simulator sim(model), probe(model);
  State base = strained_state(*model, true, 0.3, true);
  std::fill(base.u.begin(), base.u.end(), 0);
  sim.set_state(base);
  const Real twist = max_twist_strain(sim);
  std::vector<Real> f, J;
  sim.residual(0.1, base.q, f, &J);

  auto potential = [&](const std::vector<Real>& y) {
    probe.set_state(transported(*model, base, y));
    return probe.energies().total();
  };
  // h = 1e-6 on 6 mm edges: truncation (h / l)^2 ~ 3e-8, round-off eps E / h^2 far below the
  // 1e2..1e3 N/m entries
  constexpr Real kH = 1e-6;
  Real diff = 0, ref = 0;
  std::vector<Real> y = base.q;
  for (int i = 0; i < p.nfree; ++i)
    for (int j = 0; j <= i; ++j) {
      const int di = p.free_dof[i], dj = p.free_dof[j];
      auto at = [&](Real si, Real sj) {
        y[di] += si * kH;
        y[dj] += sj * kH;
        const Real e = potential(y);
        y[di] = base.q[di];
        y[dj] = base.q[dj];
        return e;
      };
      const Real h = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * kH * kH);
      const Real a = J[size_t(i) * p.nfree + j];
      const Real w = i == j ? 1 : 2;  // both triangles
      diff += w * (a - h) * (a - h);
      ref += w * h * h;
    }
  const Real rel = std::sqrt(diff) / std::sqrt(ref);
  const Real rel_residual = residual_fd_error(sim, 0.1);
  std::printf(
      "global Jacobian under twist strain %.3f rad: vs Hessian of the transported potential "
      "%.3e; vs differences of the residual %.3e\n",
      twist, rel, rel_residual);
  ::testing::Test::RecordProperty("hessian_relative_error", std::to_string(rel));
  ::testing::Test::RecordProperty("residual_fd_relative_error", std::to_string(rel_residual));
  EXPECT_GT(twist, 0.1);
  EXPECT_LT(rel, test::kFdHessRelTol);
}

// (c) ---------------------------------------------------------------------------------------

TEST(Newton, RunsAreBitDeterministic) {
  const auto model = build_model(bent_rod_scene(IntegratorKind::kImplicitEuler, 0.01).build());
  Simulator a(model), b(build_model(bent_rod_scene(IntegratorKind::kImplicitEuler, 0.01).build()));
  ASSERT_TRUE(test::run_steps(a, 50));
  ASSERT_TRUE(test::run_steps(b, 50));
  EXPECT_TRUE(same_bits(a.state().q, b.state().q));
  EXPECT_TRUE(same_bits(a.state().u, b.state().u));
  EXPECT_TRUE(same_bits(a.state().edge_d1, b.state().edge_d1));
  EXPECT_TRUE(same_bits(a.state().bend_ref_twist, b.state().bend_ref_twist));
  EXPECT_TRUE(same_bits(a.state().time, b.state().time));
}

// (d) ---------------------------------------------------------------------------------------

TEST(Newton, TwoDimensionalModeHoldsYAndTwist) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  // in the plane y = 0.05, tilted in x-z
  const int rod = b.straight_rod("r", vec3(0, 0.05, 0), vec3(0.2, 0.05, 0.05), 21, mat,
                                 SceneBuilder::circle(1e-3));
  b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
  // an out-of-plane load component must be ignored by the held y DOFs
  b.point_load(rod, -1, vec3(0.001, 0.002, 0));
  b.integrator().two_d = true;
  b.integrator().dt = 0.01;
  const auto model = build_model(b.build());
  Simulator sim(model);
  const State s0 = sim.state();
  ASSERT_TRUE(test::run_steps(sim, 30));
  const State& s = sim.state();
  bool y_held = true, twist_held = true;
  for (int n = 0; n < model->nnode; ++n)
    y_held = y_held && same_bits(s.q[3 * n + 1], s0.q[3 * n + 1]) && s.u[3 * n + 1] == 0;
  for (int e = 0; e < model->nedge; ++e)
    twist_held = twist_held && same_bits(s.q[model->edge_dof(e)], s0.q[model->edge_dof(e)]);
  EXPECT_TRUE(y_held);
  EXPECT_TRUE(twist_held);
  // while the tip sags and moves in x-z by centimetres
  const Vec3 tip0 = test::node_position(s0, model->nnode - 1);
  const Vec3 tip = test::node_position(s, model->nnode - 1);
  EXPECT_LT(tip[2] - tip0[2], -0.01);
  EXPECT_GT(std::fabs(tip[0] - tip0[0]), 1e-4);
}

// A planar problem run in 3D stays in its plane (a round rod, loads in the plane); the 2D mode
// (which solves only the x-z DOFs with the stencils' x-z Hessian blocks) must follow the 3D
// run's x and z. A rod bent into an arc in the plane y = 0.05, clamped, under gravity, an
// in-plane tip load and an initial velocity, implicit midpoint (S1 and S2's integrator) with
// Slender's default Newton tolerances (residual 1e-10 of the first): both runs take the same
// Newton iterates, so they agree to round-off.
TEST(Newton, TwoDimensionalModeFollowsTheThreeDimensionalRunOfAPlanarProblem) {
  auto run = [](bool two_d) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e6, 0.5);
    std::vector<Vec3> nodes;
    for (int i = 0; i < 15; ++i) {
      const Real s = 0.5 * i / 14;
      nodes.push_back(vec3(0.3 * std::sin(s), 0.05, 0.3 * (1 - std::cos(s))));
    }
    const int rod = b.polyline_rod("arc", nodes, mat, SceneBuilder::circle(1e-3));
    b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
    b.point_load(rod, -1, vec3(2e-4, 0, 1e-4));
    b.initial_velocity(rod, 10, vec3(0.01, 0, -0.02));
    b.integrator().kind = IntegratorKind::kImplicitMidpoint;
    b.integrator().dt = 0.01;
    b.integrator().two_d = two_d;
    const auto model = build_model(b.build());
    Simulator sim(model);
    const State s0 = sim.state();
    long iterations = 0;
    for (int k = 0; k < 40; ++k) {
      const StepReport r = sim.step();
      EXPECT_TRUE(r.ok()) << "step " << k;
      iterations += r.iterations;
    }
    return std::make_tuple(s0, sim.state(), iterations);
  };
  const auto [start, planar, its2] = run(true);
  const auto [start3, whole, its3] = run(false);
  // the same Newton iterates: a 2D Jacobian other than the 3D one's x-z block would converge
  // in more iterations
  EXPECT_EQ(its2, its3);
  const int nnode = int(start.q.size() - start.edge_d1.size() / 3) / 3;
  Real moved = 0, dxz = 0, dy3 = 0;
  for (int n = 0; n < nnode; ++n) {
    for (int c : {0, 2}) {
      moved = std::max(moved, std::fabs(planar.q[3 * n + c] - start.q[3 * n + c]));
      dxz = std::max(dxz, std::fabs(planar.q[3 * n + c] - whole.q[3 * n + c]));
    }
    EXPECT_TRUE(same_bits(planar.q[3 * n + 1], start.q[3 * n + 1])) << "node " << n;
    dy3 = std::max(dy3, std::fabs(whole.q[3 * n + 1] - start3.q[3 * n + 1]));
  }
  std::printf("2D vs 3D: motion %.3g m, largest x-z gap %.3g m, 3D run's largest y motion %.3g m\n",
              moved, dxz, dy3);
  EXPECT_GT(moved, 0.01);  // centimetres of motion
  // the 3D run stays in its plane (by symmetry: exactly, measured 0), and the 2D mode follows
  // it to well within the Newton tolerance (measured 1e-15 of the motion)
  EXPECT_LT(dy3, 1e-12 * moved);
  EXPECT_LT(dxz, 1e-11 * moved);
}

// (e) ---------------------------------------------------------------------------------------

/// A flexible pendulum: rod of 0.2 m pinned at one end (position only), released horizontal
/// under gravity, no damping. Returns the largest |E(t) - E(0)| and the final E(T) - E(0),
/// both divided by the energy it swings with, m g L / 2.
void pendulum_energy(IntegratorKind kind, Real* max_dev, Real* final_dev) {
  constexpr Real kL = 0.2, kDt = 2e-3, kT = 4;  // T: about five swings of 0.8 s
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e8, 0.5);
  const int rod =
      b.straight_rod("p", vec3(0, 0, 0), vec3(kL, 0, 0), 21, mat, SceneBuilder::circle(1e-3));
  b.fix_node(rod, 0).gravity(vec3(0, 0, -9.8));
  b.integrator().kind = kind;
  b.integrator().dt = kDt;
  const auto model = build_model(b.build());
  Simulator sim(model);
  Real mass = 0;
  for (Real m : model->node_mass)
    mass += m;
  const Real scale = mass * 9.8 * kL / 2;
  const Real e0 = sim.energies().total();
  *max_dev = 0;
  const long steps = std::lround(kT / kDt);
  for (long i = 0; i < steps; ++i) {
    const StepReport r = sim.step();
    ASSERT_TRUE(r.ok()) << "step " << i << ": " << to_string(r.status);
    *max_dev = std::max(*max_dev, std::fabs(sim.energies().total() - e0) / scale);
  }
  EXPECT_TRUE(test::no_warnings(sim));
  *final_dev = (sim.energies().total() - e0) / scale;
}

TEST(Newton, MidpointAndNewmarkConserveEnergyEulerLosesIt) {
  /// the brief's bound on the energy error of the symplectic-like integrators (measured:
  /// midpoint 5e-4, Newmark 2e-4 of m g L / 2 over five swings at dt = 2 ms)
  constexpr Real kEnergyRelTol = 0.005;
  /// implicit Euler's numerical damping at omega dt = 0.016 takes most of the swing within
  /// five periods (measured: 63 % lost); a tenth is a safe lower bound
  constexpr Real kEulerMinLoss = 0.1;
  Real dev_mid, fin_mid, dev_nm, fin_nm, dev_ie, fin_ie;
  pendulum_energy(IntegratorKind::kImplicitMidpoint, &dev_mid, &fin_mid);
  pendulum_energy(IntegratorKind::kNewmark, &dev_nm, &fin_nm);
  pendulum_energy(IntegratorKind::kImplicitEuler, &dev_ie, &fin_ie);
  std::printf(
      "pendulum energy / (m g L / 2): midpoint max drift %.3e (final %+.3e), Newmark %.3e "
      "(%+.3e), implicit Euler %.3e (%+.3e)\n",
      dev_mid, fin_mid, dev_nm, fin_nm, dev_ie, fin_ie);
  ::testing::Test::RecordProperty("midpoint_drift", std::to_string(dev_mid));
  ::testing::Test::RecordProperty("newmark_drift", std::to_string(dev_nm));
  ::testing::Test::RecordProperty("euler_loss", std::to_string(-fin_ie));
  EXPECT_LT(dev_mid, kEnergyRelTol);
  EXPECT_LT(dev_nm, kEnergyRelTol);
  EXPECT_LT(fin_ie, -kEulerMinLoss);
}

// (f) ---------------------------------------------------------------------------------------

TEST(Newton, ViscousDragGivesTerminalVelocity) {
  // free rod, horizontal; drag per node -eta dl v and weight m_node g are both proportional to
  // dl, so every node falls alike and v_terminal = m g / (eta L) = rho A g / eta
  constexpr Real kRho = 1000, kR = 1e-3, kEta = 0.01, kL = 0.3;
  SceneBuilder b;
  const int mat = b.material("m", kRho, 1e6, 0.5);
  b.straight_rod("r", vec3(0, 0, 0), vec3(kL, 0, 0), 31, mat, SceneBuilder::circle(kR));
  b.gravity(vec3(0, 0, -9.8)).viscosity(kEta);
  b.integrator().dt = 0.01;
  const auto model = build_model(b.build());
  Real mass = 0;
  for (Real m : model->node_mass)
    mass += m;
  const Real v_terminal = mass * 9.8 / (kEta * kL);
  const Real tau = mass / (kEta * kL);  // relaxation time, 0.31 s
  Simulator sim(model);
  // at t = tau the speed is about (1 - 1/e) of terminal (implicit Euler at dt = tau / 31 is
  // within 2 % of that)
  ASSERT_TRUE(test::run_steps(sim, std::lround(tau / 0.01)));
  const Real v_tau = -sim.state().u[3 * (model->nnode / 2) + 2];
  ASSERT_TRUE(test::run_steps(sim, std::lround(10 * tau / 0.01)));
  Real v_min = INFINITY, v_max = -INFINITY;
  for (int n = 0; n < model->nnode; ++n) {
    v_min = std::min(v_min, -sim.state().u[3 * n + 2]);
    v_max = std::max(v_max, -sim.state().u[3 * n + 2]);
  }
  std::printf(
      "viscous fall: terminal %.6f m/s (theory %.6f, error %+.4f %%), at t = tau %.4f of "
      "terminal\n",
      v_min, v_terminal, 100 * (v_min - v_terminal) / v_terminal, v_tau / v_terminal);
  /// the brief's bound; after 11 relaxation times the approach leaves e^-11 = 2e-5
  constexpr Real kTerminalRelTol = 0.01;
  EXPECT_NEAR(v_min / v_terminal, 1, kTerminalRelTol);
  EXPECT_NEAR(v_max / v_terminal, 1, kTerminalRelTol);
  EXPECT_NEAR(v_tau / v_terminal, 1 - std::exp(-1.0), 0.02);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
