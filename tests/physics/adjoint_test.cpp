// Exact gradients through time (slender/adjoint.h, engine/adjoint.h): the adjoint's gradient of
// a loss of a whole rollout against central differences of the rollout, per parameter class, on
// a rod cantilever in 3D (natural curvatures and twists, forces, moduli, density, damping, the
// initial state), a rod sliding on the ground with friction, and a hinge shell with a rod post
// on a joint (drag); checkpointing gives the same bits; bad input is a clear error. Each
// gradient of check_all is also taken by the adjoint's path for a device executor, on guarded
// memory (tests/guarded_executor.h: the CUDA executor's memory contract on the CPU), and must
// give the same bits.
//
// Each check is a directional derivative: dL . d for a random direction d against
// (L(p + h d) - L(p - h d)) / (2 h). The steps converge to the step size's round-off
// (abs_tol 1e-14, step_tol 1e-14: a Newton step's change below 1e-14 m, so the states are
// exact to ~1e-15 relative). h is 1e-4 of the parameter's scale (1e-5 for the natural
// curvatures of 0.02, whose response is the most curved; 1e-6 N for the forces on the ground,
// see there): the central difference's truncation error is then below 1e-8 relative and its
// round-off ~1e-15 / h ~ 1e-11, so 1e-6 relative leaves two orders of margin for what the
// adjoint itself must get right (it agrees to 1e-10..2e-7; the run prints each class's figure).

#include "slender/adjoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "guarded_executor.h"
#include "node_spring.h"
#include "physics_util.h"
#include "slender/backend.h"
#include "slender/core/error.h"
#include "slender/core/integrator.h"
#include "slender/engine/adjoint.h"
#include "slender/simulator.h"
#include "slender/stencils/user_energy.h"

namespace slender {
// (compiled in tests/guarded_engine.cpp)
extern template class RolloutAdjointOn<GuardedGpuChoices>;
namespace {
namespace SLENDER_UNITY_ID {

using test::expect_error;

constexpr int kSteps = 20;

void tight_newton(NewtonSpec& n) {
  n.abs_tol = 1e-14;
  n.rel_tol = 1e-30;
  n.step_tol = 1e-14;
  n.max_iters = 60;
}
void tight_newton(SceneBuilder& b) { tight_newton(b.integrator().newton); }

/// a rod cantilever of 9 nodes from the origin to `tip` (r = 4 mm, E = 2 MPa), clamped at its
/// first edge, under `gravity`, mass damping 0.3 /s, dt = 5 ms, Newton's tolerances tight; the
/// rod's part in *rod
SceneBuilder cantilever_scene(const Vec3& tip, const Vec3& gravity, int* rod = nullptr) {
  SceneBuilder b;
  const int mat = b.material("m", 1200, 2e6, 0.4);
  const int r = b.straight_rod("r", vec3(0, 0, 0), tip, 9, mat, SceneBuilder::circle(4e-3));
  b.fix_edge(r, 0);
  b.gravity(gravity);
  b.spec().forces.mass_damping = 0.3;
  b.integrator().dt = 5e-3;
  tight_newton(b);
  if (rod) *rod = r;
  return b;
}

/// a rod cantilever in 3D: naturally curved both ways and twisted, gravity off its planes,
/// mass damping, dt = 5 ms
std::shared_ptr<const Model> cantilever() {
  return build_model(cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8)).build());
}

/// a rod from height z0 to z1 above the ground (friction 0.4, slip tolerance 1 cm/s, contact
/// distance 1 mm set in g, the rest of g as given), under gravity, dt = 2 ms, Newton's
/// tolerances tight
SceneBuilder rod_above_ground(GroundSpec g, Real z0 = 5e-3, Real z1 = 4e-3) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 5e5, 0.4);
  b.straight_rod("r", vec3(0, 0, z0), vec3(0.1, 0, z1), 6, mat, SceneBuilder::circle(2e-3));
  g.friction = 0.4;
  g.slip_velocity = 1e-2;
  g.contact_distance = 1e-3;
  b.ground(g);
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().dt = 2e-3;
  tight_newton(b);
  return b;
}

/// a rod lying on the ground (restitution 1: no dashpot), friction mu = 0.4, pushed along
/// and across by forces on its nodes
std::shared_ptr<const Model> rod_on_ground() {
  return build_model(rod_above_ground(GroundSpec{}, 2e-3, 2e-3).build());
}

/// the loss: fixed random weights on every state's q and u
struct LinearLoss {
  std::vector<Real> wq, wu;  // (N + 1) x ndof
  LinearLoss(int ndof, int steps, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<Real> d(-1, 1);
    wq.resize(size_t(steps + 1) * size_t(ndof));
    wu.resize(wq.size());
    for (Real& v : wq)
      v = d(rng);
    for (Real& v : wu)
      v = 0.01 * d(rng);
  }
  Real operator()(const std::vector<Real>& q, const std::vector<Real>& u) const {
    Real s = 0;
    for (size_t i = 0; i < q.size(); ++i)
      s += wq[i] * q[i] + wu[i] * u[i];
    return s;
  }
};

std::vector<Real> random_vector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> d(-1, 1);
  std::vector<Real> v(n);
  for (Real& x : v)
    x = d(rng);
  return v;
}

Real dot(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

struct Problem {
  std::shared_ptr<const Model> m;
  State s0;
  RolloutActions a;
  RolloutParams p;
};

/// the problem of model m from its initial state, without actions, at the model's parameters
Problem problem_of(std::shared_ptr<const Model> m) {
  Problem pr;
  pr.m = std::move(m);
  pr.s0 = initial_state(*pr.m);
  return pr;
}

Real loss_of(const Problem& pr, const LinearLoss& loss, int steps) {
  RolloutAdjoint ad(pr.m, pr.m->scene.integrator);
  std::vector<Real> q, u;
  ad.run(pr.s0, steps, pr.a, pr.p, &q, &u);
  return loss(q, u);
}

/// expects dL . d to match the central difference of L along d (h: the step along d; fourth:
/// the fourth-order difference of steps h and 2 h, for a loss whose round-off needs a longer step)
void expect_directional(const char* what,
                        Real ad,
                        const std::function<Real(Real)>& L,
                        Real h,
                        Real tol = 1e-6,
                        bool fourth = false) {
  const Real fd =
      fourth ? (8 * (L(h) - L(-h)) - (L(2 * h) - L(-2 * h))) / (12 * h) : (L(h) - L(-h)) / (2 * h);
  EXPECT_NEAR(ad, fd, tol * std::fabs(fd)) << what << ": adjoint " << ad << ", central " << fd
                                           << ", relative " << std::fabs(ad - fd) / std::fabs(fd);
  std::printf("  %-22s adjoint %+.10e  central %+.10e  relative %.1e\n", what, ad, fd,
              std::fabs(ad - fd) / std::fabs(fd));
}

/// the same rollout's gradient by the adjoint on guarded memory (tests/guarded_executor.h: the
/// CUDA executor's choices and memory contract, the sweep reading the engine's arrays through
/// its host copies) gives the same bits, where the CUDA path takes the model (not energies from
/// the caller's code compiled for the host alone)
void expect_guarded_same(const Problem& pr,
                         const LinearLoss& loss,
                         int steps,
                         const RolloutGradient& g) {
  const Model& m = *pr.m;
  if (!m.user_energies.empty()) return;
  RolloutAdjointOn<GuardedGpuChoices> ad(pr.m, m.scene.integrator, RolloutOptions{});
  ad.run(pr.s0, steps, pr.a, pr.p, nullptr, nullptr);
  const size_t nd = size_t(m.ndof);
  const RolloutGradient d = ad.gradient([&](int n, const Real*, const Real*, Real* gq, Real* gu) {
    for (size_t i = 0; i < nd; ++i) {
      gq[i] += loss.wq[size_t(n) * nd + i];
      gu[i] += loss.wu[size_t(n) * nd + i];
    }
  });
  EXPECT_EQ(d.q0, g.q0);
  EXPECT_EQ(d.u0, g.u0);
  EXPECT_EQ(d.a0, g.a0);
  EXPECT_EQ(d.kappa_bar, g.kappa_bar);
  EXPECT_EQ(d.tau_bar, g.tau_bar);
  EXPECT_EQ(d.phi_bar, g.phi_bar);
  EXPECT_EQ(d.midedge_kappa_bar, g.midedge_kappa_bar);
  EXPECT_EQ(d.stretch_bar, g.stretch_bar);
  EXPECT_EQ(d.forces, g.forces);
  EXPECT_EQ(d.fixed_targets, g.fixed_targets);
  EXPECT_EQ(d.loads, g.loads);
  EXPECT_EQ(d.part_youngs_scale, g.part_youngs_scale);
  EXPECT_EQ(d.youngs_scale, g.youngs_scale);
  EXPECT_EQ(d.density_scale, g.density_scale);
  EXPECT_EQ(d.mass_damping, g.mass_damping);
}

/// every parameter class of a problem against central differences
/// (force_h: the step of the forces' difference [N]; friction's regularization needs a small one)
void check_all(const Problem& base,
               const LinearLoss& loss,
               bool actions,
               bool strains,
               Real force_h = 1e-4,
               int steps = kSteps,
               Real tol = 1e-6,
               Real h_scale = 1,  // (the parameters', loads' and velocities' steps' factor)
               bool fourth = false,
               Real q_scale = 1,       // (the initial positions' step's factor)
               bool initial = true) {  // (the initial state's classes)
  const Model& m = *base.m;
  RolloutAdjoint ad(base.m, m.scene.integrator);
  ad.run(base.s0, steps, base.a, base.p);
  const RolloutGradient g = ad.gradient(loss.wq, loss.wu);
  expect_guarded_same(base, loss, steps, g);
  const size_t nd = size_t(m.ndof);
  unsigned seed = 11;
  if (strains && m.nbend > 0) {
    // natural curvatures and twists at every step, around the problem's (or the model's)
    for (int which = 0; which < 2; ++which) {
      const size_t w = which == 0 ? 2 : 1;
      const std::vector<Real> d = random_vector(size_t(steps) * m.nbend * w, seed++);
      auto L = [&](Real h) {
        Problem pr = base;
        std::vector<Real>& v = which == 0 ? pr.a.kappa_bar : pr.a.tau_bar;
        if (v.empty())
          for (int n = 0; n < steps; ++n)
            for (Real x : which == 0 ? m.bend_kappa_bar : m.bend_tau_bar)
              v.push_back(x);
        for (size_t i = 0; i < v.size(); ++i)
          v[i] += h * d[i];
        return loss_of(pr, loss, steps);
      };
      expect_directional(which == 0 ? "natural curvature" : "natural twist",
                         dot(which == 0 ? g.kappa_bar : g.tau_bar, d), L, 1e-5, tol, fourth);
    }
  }
  if (strains && m.nhinge > 0) {
    // the hinges' natural angles at every step, around the problem's (or the model's)
    const std::vector<Real> d = random_vector(size_t(steps) * m.nhinge, seed++);
    auto L = [&](Real h) {
      Problem pr = base;
      if (pr.a.phi_bar.empty())
        for (int n = 0; n < steps; ++n)
          pr.a.phi_bar.insert(pr.a.phi_bar.end(), m.hinge_phi_bar.begin(), m.hinge_phi_bar.end());
      for (size_t i = 0; i < d.size(); ++i)
        pr.a.phi_bar[i] += h * d[i];
      return loss_of(pr, loss, steps);
    };
    expect_directional("natural hinge angle", dot(g.phi_bar, d), L, 1e-5, tol, fourth);
  }
  if (strains && m.nmid > 0) {
    // the mid-edge triangles' natural curvatures at every step, around the problem's (or 0)
    const std::vector<Real> d = random_vector(size_t(steps) * 3 * m.nmid, 102);
    auto L = [&](Real h) {
      Problem pr = base;
      if (pr.a.midedge_kappa_bar.empty()) pr.a.midedge_kappa_bar.assign(d.size(), 0);
      for (size_t i = 0; i < d.size(); ++i)
        pr.a.midedge_kappa_bar[i] += h * d[i];
      return loss_of(pr, loss, steps);
    };
    expect_directional("mid-edge curvature", dot(g.midedge_kappa_bar, d), L, 1e-4, tol, fourth);
  }
  if (actions && !base.a.fixed_targets.empty()) {
    // the fixed DOFs' targets at every step (positions and twists), 1e-7 along d
    const std::vector<Real> d = random_vector(base.a.fixed_targets.size(), seed++);
    auto L = [&](Real h) {
      Problem pr = base;
      for (size_t i = 0; i < d.size(); ++i)
        pr.a.fixed_targets[i] += 1e-3 * h * d[i];
      return loss_of(pr, loss, steps);
    };
    expect_directional("fixed-DOF targets", 1e-3 * dot(g.fixed_targets, d), L, 1e-4, tol, fourth);
  }
  if (actions && !base.a.loads.empty()) {
    // the actuators' loads at every step (a step of 1e-4 of their scale: pressures are in Pa)
    const std::vector<Real> d = random_vector(base.a.loads.size(), seed++);
    Real scale = 1;
    for (Real v : base.a.loads)
      scale = std::max(scale, std::fabs(v));
    auto L = [&](Real h) {
      Problem pr = base;
      for (size_t i = 0; i < d.size(); ++i)
        pr.a.loads[i] += scale * h * d[i];
      return loss_of(pr, loss, steps);
    };
    expect_directional("actuators' loads", scale * dot(g.loads, d), L, 1e-4 * h_scale, tol, fourth);
  }
  if (actions) {
    const std::vector<Real> d = random_vector(size_t(steps) * 3 * m.nnode, seed++);
    auto L = [&](Real h) {
      Problem pr = base;
      if (pr.a.forces.empty()) pr.a.forces.assign(d.size(), 0);
      for (size_t i = 0; i < d.size(); ++i)
        pr.a.forces[i] += h * d[i];
      return loss_of(pr, loss, steps);
    };
    expect_directional("point forces", dot(g.forces, d), L, force_h, tol, fourth);
  }
  {
    const std::vector<Real> d = random_vector(size_t(m.npart), seed++);
    auto L = [&](Real h) {
      Problem pr = base;
      if (pr.p.part_youngs_scale.empty()) pr.p.part_youngs_scale.assign(size_t(m.npart), 1);
      for (int i = 0; i < m.npart; ++i)
        pr.p.part_youngs_scale[size_t(i)] += h * d[size_t(i)];
      return loss_of(pr, loss, steps);
    };
    expect_directional("part Young's scales", dot(g.part_youngs_scale, d), L, 1e-4 * h_scale, tol,
                       fourth);
  }
  auto scalar = [&](const char* what, Real grad, Real RolloutParams::*field) {
    auto L = [&](Real h) {
      Problem pr = base;
      pr.p.*field += h;
      return loss_of(pr, loss, steps);
    };
    expect_directional(what, grad, L, 1e-4 * h_scale, tol, fourth);
  };
  scalar("Young's scale", g.youngs_scale, &RolloutParams::youngs_scale);
  if (m.kelvin_voigt)
    scalar("Kelvin-Voigt scale", g.kelvin_voigt_scale, &RolloutParams::kelvin_voigt_scale);
  scalar("density scale", g.density_scale, &RolloutParams::density_scale);
  if (base.p.mass_damping > 0) scalar("mass damping", g.mass_damping, &RolloutParams::mass_damping);
  if (initial) {
    std::vector<Real> d = random_vector(nd, seed++);
    for (size_t i = 0; i < nd; ++i)
      if (base.s0.dof_fixed.empty() ? m.dof_fixed[i] : base.s0.dof_fixed[i]) d[i] = 0;
    auto Lq = [&](Real h) {
      Problem pr = base;
      std::vector<Real> q = base.s0.q;
      for (size_t i = 0; i < nd; ++i)
        q[i] += 1e-3 * q_scale * h * d[i];
      pr.s0 = transported_state(m, base.s0, q);
      return loss_of(pr, loss, steps);
    };
    expect_directional("initial positions", 1e-3 * q_scale * dot(g.q0, d), Lq, 1e-4, tol, fourth);
    auto Lu = [&](Real h) {
      Problem pr = base;
      for (size_t i = 0; i < nd; ++i)
        pr.s0.u[i] += 1e-2 * h * d[i];
      return loss_of(pr, loss, steps);
    };
    expect_directional("initial velocities", 1e-2 * dot(g.u0, d), Lu, 1e-4 * h_scale, tol, fourth);
    if (m.scene.integrator.kind == IntegratorKind::kNewmark) {
      // Newmark's predictor reads the initial acceleration too
      auto La = [&](Real h) {
        Problem pr = base;
        for (size_t i = 0; i < nd; ++i)
          pr.s0.a[i] += h * d[i];
        return loss_of(pr, loss, steps);
      };
      expect_directional("initial accelerations", dot(g.a0, d), La, 1e-4 * h_scale, tol, fourth);
    } else {
      for (Real v : g.a0)
        EXPECT_EQ(v, 0) << "the initial acceleration enters Newmark's steps only";
    }
  }
}

// The initial state's gradients DOF by DOF against fourth-order central differences with steps
// hq [m], hu [m/s] and ha [m/s^2] (for Newmark), each within tol of the largest entry of its
// class (where the directional check of check_all meets a small directional derivative in the
// differences' noise)
void check_initial_state_per_dof(
    const Problem& pr, const LinearLoss& loss, int steps, Real hq, Real hu, Real ha, Real tol) {
  const Model& m = *pr.m;
  RolloutAdjoint ad(pr.m, m.scene.integrator);
  ad.run(pr.s0, steps, pr.a, pr.p);
  const RolloutGradient g = ad.gradient(loss.wq, loss.wu);
  const bool nmk = m.scene.integrator.kind == IntegratorKind::kNewmark;
  for (int cls = 0; cls < (nmk ? 3 : 2); ++cls) {
    const std::vector<Real>& gc = cls == 0 ? g.q0 : cls == 1 ? g.u0 : g.a0;
    const Real h = cls == 0 ? hq : cls == 1 ? hu : ha;
    Real big = 0, worst = 0;
    for (Real v : gc)
      big = std::max(big, std::fabs(v));
    for (int i = 0; i < m.ndof; ++i) {
      if (m.dof_fixed[size_t(i)]) continue;
      auto L = [&](Real dh) {
        Problem p = pr;
        if (cls == 0) {
          std::vector<Real> q = pr.s0.q;
          q[size_t(i)] += dh;
          p.s0 = transported_state(m, pr.s0, q);
        } else {
          (cls == 1 ? p.s0.u : p.s0.a)[size_t(i)] += dh;
        }
        return loss_of(p, loss, steps);
      };
      const Real fd = (8 * (L(h) - L(-h)) - (L(2 * h) - L(-2 * h))) / (12 * h);
      worst = std::max(worst, std::fabs(fd - gc[size_t(i)]));
    }
    const char* name = cls == 0   ? "initial positions"
                       : cls == 1 ? "initial velocities"
                                  : "initial accelerations";
    std::printf("  %-22s per DOF: worst %.1e of the largest %.3e\n", name, worst / big, big);
    EXPECT_LT(worst, tol * big) << name;
  }
}

TEST(Adjoint, CantileverEveryParameterClassMatchesCentralDifferences) {
  Problem pr = problem_of(cantilever());
  const Model& m = *pr.m;
  // actions: a natural curvature both ways and a twist at every step, growing in time
  for (int n = 0; n < kSteps; ++n)
    for (int k = 0; k < m.nbend; ++k) {
      pr.a.kappa_bar.push_back(0.02 * (n + 1) / kSteps);
      pr.a.kappa_bar.push_back(-0.01 * (n + 1) / kSteps);
      pr.a.tau_bar.push_back(0.05 * (n + 1) / kSteps);
    }
  pr.a.forces.assign(size_t(kSteps) * 3 * m.nnode, 0);
  for (int n = 0; n < kSteps; ++n)
    pr.a.forces[size_t(n) * 3 * m.nnode + 3 * (m.nnode - 1) + 1] = 1e-3;
  pr.p.part_youngs_scale = {1.3};
  pr.p.density_scale = 0.9;
  pr.p.mass_damping = 0.3;
  check_all(pr, LinearLoss(m.ndof, kSteps, 5), true, true);
}

/// the rod on the ground pushed along x and across y at every step, sliding (the slip speed
/// passes the friction's tolerance)
void push_along_and_across(Problem& pr) {
  const int nn = pr.m->nnode;
  pr.a.forces.assign(size_t(kSteps) * 3 * nn, 0);
  for (int n = 0; n < kSteps; ++n)
    for (int i = 0; i < nn; ++i) {
      pr.a.forces[size_t(n) * 3 * nn + 3 * i] = 2e-3;
      pr.a.forces[size_t(n) * 3 * nn + 3 * i + 1] = (i % 2 ? 1e-3 : -5e-4);
    }
}

TEST(Adjoint, RodOnGroundWithFrictionMatchesCentralDifferences) {
  Problem pr = problem_of(rod_on_ground());
  const Model& m = *pr.m;
  push_along_and_across(pr);
  // (a force step of 1e-4 N moves the slip speeds across a good part of the friction's
  // regularization and measures its curvature: 7e-5 off; 1e-6 N agrees to 1e-8)
  check_all(pr, LinearLoss(m.ndof, kSteps, 6), true, false, 1e-6);
}

TEST(Adjoint, HingeShellWithRodPostMatchesCentralDifferences) {
  Problem pr;
  pr.m = test::plate_with_post(ShellBending::kHinge);
  auto spec = pr.m->scene.integrator;
  ASSERT_EQ(spec.kind, IntegratorKind::kImplicitEuler);
  // (the plate's model with the tight Newton tolerances)
  SceneSpec sc = pr.m->scene;
  tight_newton(sc.integrator.newton);
  pr.m = build_model(sc);
  pr.s0 = initial_state(*pr.m);
  check_all(pr, LinearLoss(pr.m->ndof, 8, 7), false, true, 1e-4, 8);
}

// Mid-edge shells (stencils/shell_midedge.h): each step's bending stencils read the frame
// vectors tau0 of its start, a function of q_n (MidEdgeFrames), whose derivative the sweep adds
// (shell_midedge_adjoint_terms, mid_edge_frame_adjoint). The plate with its rod post (two
// clamped nodes: the edge between them keeps its frame), under implicit Euler and Newmark
// (the xi DOFs are massless, which the midpoint rule's adjoint refuses); every class against
// central differences, the initial positions with their frames (transported_state)
TEST(Adjoint, MidEdgeShellWithRodPostMatchesCentralDifferences) {
  for (IntegratorKind kind : {IntegratorKind::kImplicitEuler, IntegratorKind::kNewmark,
                              IntegratorKind::kImplicitMidpoint}) {
    SCOPED_TRACE(int(kind));
    const bool mid = kind == IntegratorKind::kImplicitMidpoint;
    std::printf("%s\n", kind == IntegratorKind::kNewmark ? "Newmark"
                        : mid                            ? "midpoint"
                                                         : "implicit Euler");
    SceneSpec sc = test::plate_with_post(ShellBending::kMidEdge)->scene;
    tight_newton(sc.integrator.newton);
    sc.integrator.kind = kind;
    Problem pr = problem_of(build_model(sc));
    ASSERT_GT(pr.m->nmid, 0);
    // (the midpoint rule: its massless xi DOFs end each step at its midpoint value, q_n+1 = y;
    // the post's stretching secant's noise as for the hinge plate below)
    check_all(pr, LinearLoss(pr.m->ndof, 8, 55), false, true, 1e-4, 8, 1e-6, mid ? 3 : 1, mid);
  }
}

// The midpoint rule and Newmark (core/integrator.h): the cantilever's every class against
// central differences, its rollout a Simulator's. The midpoint rule's y is the step's midpoint
// (q_n+1 = 2 y - q_n, the frames carried to both); Newmark's predictor reads the acceleration,
// state too (the initial one an input: its gradient a0), for the trapezoidal rule (beta = 1/4,
// gamma = 1/2) and a dissipative pair
struct IntegratorCase {
  const char* name;
  IntegratorKind kind;
  Real beta, gamma;
};
const IntegratorCase kIntegrators[] = {
    {"midpoint", IntegratorKind::kImplicitMidpoint, 0.25, 0.5},
    {"Newmark", IntegratorKind::kNewmark, 0.25, 0.5},
    {"Newmark, dissipative", IntegratorKind::kNewmark, 0.3025, 0.6}};
void set_integrator(IntegratorSpec& s, const IntegratorCase& c) {
  s.kind = c.kind;
  s.beta = c.beta;
  s.gamma = c.gamma;
}
void set_integrator(SceneBuilder& b, const IntegratorCase& c) { set_integrator(b.integrator(), c); }
void set_integrator(SceneSpec& sc, const IntegratorCase& c) { set_integrator(sc.integrator, c); }

/// the damping tests' cantilever actions: its springs' natural curvatures both ways and twist
/// growing in time, and its clamp (the fixed DOFs' targets) swung sideways
void ramp_actions(Problem& pr) {
  const Model& m = *pr.m;
  for (int n = 0; n < kSteps; ++n) {
    for (int k = 0; k < m.nbend; ++k) {
      pr.a.kappa_bar.push_back(0.02 * (n + 1) / kSteps);
      pr.a.kappa_bar.push_back(-0.01 * (n + 1) / kSteps);
      pr.a.tau_bar.push_back(0.05 * (n + 1) / kSteps);
    }
    for (const int dof : m.fixed_dof)
      pr.a.fixed_targets.push_back(pr.s0.q[size_t(dof)] +
                                   (dof < 3 * m.nnode && dof % 3 == 1 ? 2e-3 * (n + 1) : 0));
  }
}

TEST(Adjoint, MidpointAndNewmarkCantileverMatchCentralDifferences) {
  for (const IntegratorCase& c : kIntegrators) {
    SCOPED_TRACE(c.name);
    std::printf("%s\n", c.name);
    SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
    set_integrator(b, c);
    // (the midpoint rule with pointwise stretching here: with the secant, Newton's line search
    // goes by the residual, which at its floor on this stiff rod stalls some steps for 15 to 20
    // iterations and leaves noise of 1e-6 to 1e-5 to central differences of the parameters; the
    // secant is checked on the moving clamp and the plate's post below)
    const bool mid = c.kind == IntegratorKind::kImplicitMidpoint;
    if (mid) b.integrator().energy_consistent = false;
    Problem pr = problem_of(build_model(b.build()));
    const Model& m = *pr.m;
    // the rollout from a Simulator's start (Newmark's: its consistent acceleration) is the
    // Simulator's run
    Simulator sim(pr.m);
    pr.s0 = sim.state();
    RolloutAdjoint ad(pr.m, m.scene.integrator);
    const State end = ad.run(pr.s0, kSteps);
    for (int n = 0; n < kSteps; ++n)
      ASSERT_TRUE(sim.step().ok());
    for (int i = 0; i < m.ndof; ++i)
      ASSERT_NEAR(sim.state().q[size_t(i)], end.q[size_t(i)], 1e-13) << "DOF " << i;
    pr.a.forces.assign(size_t(kSteps) * 3 * m.nnode, 0);
    for (int n = 0; n < kSteps; ++n)
      pr.a.forces[size_t(n) * 3 * m.nnode + 3 * (m.nnode - 1) + 1] = 1e-3;
    pr.p.density_scale = 0.9;
    pr.p.mass_damping = 0.3;
    check_all(pr, LinearLoss(m.ndof, kSteps, 51), true, true);
  }
}

// The held DOFs under the midpoint rule and Newmark: the cantilever's clamp moved along a path
// (a moved DOF's y is its path's midpoint under the midpoint rule), in a resistive fluid that
// reads its velocity; every class, the targets among them
TEST(Adjoint, MidpointAndNewmarkMovingClampMatchCentralDifferences) {
  for (const IntegratorCase& c : kIntegrators) {
    SCOPED_TRACE(c.name);
    std::printf("%s\n", c.name);
    SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
    b.resistive_force(0.05, 0.2);
    set_integrator(b, c);
    Problem pr = problem_of(build_model(b.build()));
    const Model& m = *pr.m;
    const size_t nf = m.fixed_dof.size();
    for (int n = 0; n < kSteps; ++n) {
      const Real t = (n + 1) * m.scene.integrator.dt;
      for (size_t j = 0; j < nf; ++j) {
        const int dof = m.fixed_dof[j];
        const int k = dof % 3;
        pr.a.fixed_targets.push_back(pr.s0.q[size_t(dof)] + (dof >= 3 * m.nnode ? 2 * t
                                                             : k == 2           ? 0.3 * t
                                                             : k == 1 ? 0.1 * std::sin(40 * t)
                                                                      : 0));
      }
    }
    // (the midpoint rule with its stretching secant from q_n: its line search by the residual
    // leaves noise that the fourth-order difference at ten times the usual step steps over)
    const bool mid = c.kind == IntegratorKind::kImplicitMidpoint;
    if (mid) {
      ASSERT_TRUE(stretch_secant_on(m.scene.integrator));
    }
    check_all(pr, LinearLoss(m.ndof, kSteps, 52), true, true, 1e-4, kSteps, 1e-6, mid ? 10 : 1,
              mid);
  }
}

// Ground contact with friction and the ground's dashpot under the midpoint rule and Newmark
// with their pointwise contact forces (integrator.energy_consistent false, which Newmark's
// adjoint asks for), and under the midpoint rule with its energy-consistent ones (the secant
// normal force from the distance at the step's start: ground_secant_start_derivative; the
// rods' stretching secant too, whose round-off the fourth-order difference at ten times the
// step steps over): the rod pushed along the ground
TEST(Adjoint, MidpointAndNewmarkGroundFrictionMatchCentralDifferences) {
  for (int i = 0; i < 4; ++i) {
    const IntegratorCase& c = kIntegrators[i % 3];
    const bool consistent = i == 3;  // (the midpoint rule again)
    SCOPED_TRACE(c.name);
    std::printf("%s%s\n", c.name, consistent ? ", energy-consistent" : "");
    SceneSpec sc = rod_on_ground()->scene;
    set_integrator(sc, c);
    sc.integrator.energy_consistent = consistent;
    sc.forces.ground.restitution = 0.5;  // (the dashpot on)
    Problem pr = problem_of(build_model(sc));
    const Model& m = *pr.m;
    push_along_and_across(pr);
    check_all(pr, LinearLoss(m.ndof, kSteps, 53), true, false, 1e-6, kSteps, 1e-6,
              consistent ? 10 : 1, consistent);
  }
}

// An impact under the midpoint rule with its energy-consistent ground force: a rod falling at
// 0.3 m/s onto a frictional ground (restitution 1: the secant keeps the penalty's energy), its
// contact made within the rollout, so that the secant's start term spans the impact (the
// fourth-order difference at ten times the step, as for the other secant rollouts; without the
// start term every class is about 1e-2 off)
TEST(Adjoint, MidpointImpactOnTheGroundsSecantMatchesCentralDifferences) {
  GroundSpec g;
  SceneBuilder b = rod_above_ground(g);
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  Problem pr = problem_of(build_model(b.build()));
  const Model& m = *pr.m;
  ASSERT_TRUE(m.scene.integrator.energy_consistent);
  for (int i = 0; i < m.nnode; ++i) {
    pr.s0.u[size_t(3 * i)] = 0.05;
    pr.s0.u[size_t(3 * i + 2)] = -0.3;
  }
  // (the velocities' and forces' small sensitivities: the differences' rounding and the
  // contact ramp's curvature leave a few 1e-6, as for the ground's dashpot above)
  check_all(pr, LinearLoss(m.ndof, kSteps, 24), true, false, 1e-6, kSteps, 2e-5, 10, true);
}

// The rod edges' natural stretch as the rollout's action (set_natural_stretch: muscle-like
// contraction), its gradient against central differences: the cantilever under implicit Euler,
// Newmark and the midpoint rule (its stretching secant: the fourth-order difference, as above),
// and Bartholdt's actuator (Ogden stretching, Kelvin-Voigt damping). (A stiff rod's natural
// length wants a step short for the difference's truncation and long for its round-off: 1e-6
// of the rest length here; every adjoint test's rods agreed within 1e-6 at it, some within a
// few 1e-7 of the bound, so the check lives here rather than in check_all.)
TEST(Adjoint, NaturalStretchMatchesCentralDifferences) {
  auto check = [](Problem pr, unsigned seed, int steps, bool fourth) {
    const Model& m = *pr.m;
    const LinearLoss loss(m.ndof, steps, seed);
    for (int n = 0; n < steps; ++n)
      for (int k = 0; k < m.nedge; ++k)
        pr.a.stretch_bar.push_back(1 - 0.02 * (n + 1) / steps);  // contracting
    RolloutAdjoint ad(pr.m, m.scene.integrator);
    ad.run(pr.s0, steps, pr.a, pr.p);
    const RolloutGradient g = ad.gradient(loss.wq, loss.wu);
    const std::vector<Real> d = random_vector(pr.a.stretch_bar.size(), seed + 1);
    auto L = [&](Real h) {
      Problem q = pr;
      for (size_t i = 0; i < d.size(); ++i)
        q.a.stretch_bar[i] += h * d[i];
      return loss_of(q, loss, steps);
    };
    expect_directional("natural stretch", dot(g.stretch_bar, d), L, 1e-6, 1e-6, fourth);
  };
  for (const IntegratorCase& c :
       {IntegratorCase{"implicit Euler", IntegratorKind::kImplicitEuler, 0.25, 0.5},
        kIntegrators[1], kIntegrators[0]}) {
    SCOPED_TRACE(c.name);
    std::printf("%s\n", c.name);
    SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
    set_integrator(b, c);
    check(problem_of(build_model(b.build())), 71, kSteps,
          c.kind == IntegratorKind::kImplicitMidpoint);
  }
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/bartholdt_actuator.json");
  tight_newton(sc.integrator.newton);
  check(problem_of(build_model(sc)), 72, 8, false);
}

// A hinge shell plate with a rod post (joints, hinges, shell springs) under Newmark and the
// midpoint rule
TEST(Adjoint, MidpointAndNewmarkHingeShellMatchCentralDifferences) {
  for (const IntegratorCase& c : kIntegrators) {
    SCOPED_TRACE(c.name);
    std::printf("%s\n", c.name);
    SceneSpec sc = test::plate_with_post(ShellBending::kHinge)->scene;
    tight_newton(sc.integrator.newton);
    set_integrator(sc, c);
    Problem pr = problem_of(build_model(sc));
    const bool mid = c.kind == IntegratorKind::kImplicitMidpoint;  // (the post's secant, as above)
    check_all(pr, LinearLoss(pr.m->ndof, 8, 54), false, true, 1e-4, 8, 1e-6, mid ? 10 : 1, mid);
  }
}

// The fixed DOFs' targets as the rollout's actions (Simulator::set_fixed_targets' prescribed
// motion): the cantilever's clamp (its first two nodes and the first edge's twist) raised,
// swung and turned about the rod along a path of the caller's, in a fluid that resists the
// edges' motion (resistive force theory: the clamp's velocity reaches the free nodes through
// it); every class against central differences, the rollout equal to a Simulator's
TEST(Adjoint, MovingClampTargetsMatchCentralDifferences) {
  SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
  b.resistive_force(0.05, 0.2);
  Problem pr = problem_of(build_model(b.build()));
  const Model& m = *pr.m;
  ASSERT_EQ(m.fixed_dof.size(), 7u);  // two nodes and a twist
  const size_t nf = m.fixed_dof.size();
  for (int n = 0; n < kSteps; ++n) {
    const Real t = (n + 1) * m.scene.integrator.dt;
    for (size_t j = 0; j < nf; ++j) {
      const int dof = m.fixed_dof[j];
      Real v = pr.s0.q[size_t(dof)];
      if (dof < 3 * m.nnode) {
        const int c = dof % 3;
        v += c == 2 ? 0.3 * t : c == 1 ? 0.1 * std::sin(40 * t) : 0;
      } else {
        v += 2 * t;  // the clamp turns at 2 rad/s
      }
      pr.a.fixed_targets.push_back(v);
    }
  }
  // the rollout is a Simulator's with the same targets
  RolloutAdjoint ad(pr.m, m.scene.integrator);
  const State end = ad.run(pr.s0, kSteps, pr.a);
  Simulator sim(pr.m);
  for (int n = 0; n < kSteps; ++n) {
    sim.set_fixed_targets(std::vector<Real>(pr.a.fixed_targets.begin() + long(n * nf),
                                            pr.a.fixed_targets.begin() + long((n + 1) * nf)));
    ASSERT_TRUE(sim.step().ok());
  }
  for (int i = 0; i < m.ndof; ++i)
    ASSERT_NEAR(sim.state().q[size_t(i)], end.q[size_t(i)], 1e-13) << "DOF " << i;
  check_all(pr, LinearLoss(m.ndof, kSteps, 43), true, true);
}

// The actuators' loads as the rollout's actions (Simulator::set_load_value's values): the
// cantilever pulled by a tendon off its centreline (its tension slack for the first steps) and
// turned by a follower wrench at its tip; every class against central differences, the
// rollout equal to a Simulator's with the same load values
TEST(Adjoint, ActuatorLoadsMatchCentralDifferences) {
  SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
  b.family_input(FamilyInput{"tendons"}
                     .part("part", "r")
                     .list("offset", {3e-3})
                     .list("angle", {0.7})
                     .number("tension", 0.05));
  b.family_input(FamilyInput{"wrenches"}
                     .part("part", "r")
                     .word("frame", "follower")
                     .vec3("force", vec3(2e-3, 0, 0))
                     .vec3("moment", vec3(0, 1e-4, 2e-4)));
  Problem pr = problem_of(build_model(b.build()));
  const Model& m = *pr.m;
  ASSERT_EQ(m.signals.size(), 2u);
  // (the signals in the model's order: load_signal names them)
  const size_t ten = size_t(load_signal(m, "tendons", 0)),
               wr = size_t(load_signal(m, "wrenches", 0));
  pr.a.loads.assign(2 * size_t(kSteps), 0);
  for (int n = 0; n < kSteps; ++n) {
    pr.a.loads[2 * size_t(n) + ten] = n < 3 ? -0.5 : 0.2 + 0.1 * n;  // tension: slack, then taut
    pr.a.loads[2 * size_t(n) + wr] = 1 + 0.5 * std::sin(0.3 * n);    // the wrench's factor
  }
  RolloutAdjoint ad(pr.m, m.scene.integrator);
  const State end = ad.run(pr.s0, kSteps, pr.a);
  Simulator sim(pr.m);
  for (int n = 0; n < kSteps; ++n) {
    sim.set_load_value("tendons", 0, pr.a.loads[2 * size_t(n) + ten]);
    sim.set_load_value("wrenches", 0, pr.a.loads[2 * size_t(n) + wr]);
    ASSERT_TRUE(sim.step().ok());
  }
  for (int i = 0; i < m.ndof; ++i)
    ASSERT_NEAR(sim.state().q[size_t(i)], end.q[size_t(i)], 1e-13) << "DOF " << i;
  const LinearLoss loss(m.ndof, kSteps, 47);
  const RolloutGradient g = ad.gradient(loss.wq, loss.wu);
  for (int n = 0; n < 3; ++n)  // a slack tendon's tension has no gradient
    EXPECT_EQ(g.loads[2 * size_t(n) + ten], 0);
  EXPECT_NE(g.loads[2 * 3 + ten], 0);
  check_all(pr, loss, true, true);
}

// ... and a follower pressure on a hinge plate clamped at one side (its normals turn with the
// plate: a non-symmetric load), its value an action at every step
TEST(Adjoint, FollowerPressureLoadMatchesCentralDifferences) {
  SceneBuilder b = test::follower_pressure_plate();
  tight_newton(b);
  Problem pr = problem_of(build_model(b.build()));
  const Model& m = *pr.m;
  ASSERT_EQ(m.signals.size(), 1u);
  const int steps = 8;
  for (int n = 0; n < steps; ++n)
    pr.a.loads.push_back(1 + 0.3 * n);
  // (forces of 1e-6 N: the plate's nodes weigh 60 mg, and 1e-4 N would move them millimetres)
  check_all(pr, LinearLoss(m.ndof, steps, 53), true, true, 1e-6, steps);
}

/// a user stencil of a rod's twist angles and a position, E = k/2 (x1 - x0 - s x2)^2 (x0, x1 two
/// edges' twist angles, x2 a node's coordinate): an energy of the DOFs' values, which reads no
/// frame
struct TwistCoupling {
  static constexpr int kDofs = 3;
  struct Params {
    Real k, s;
  };
  SLENDER_HD static void eval(const Vec<3>& x, const Params& p, unsigned want, LocalEval<3>& r) {
    const Real v[3] = {-1, 1, -p.s};
    const Real d = x[1] - x[0] - p.s * x[2];
    r.E = Real(0.5) * p.k * d * d;
    for (int i = 0; i < 3 && (want & kGrad); ++i)
      r.g[i] = p.k * d * v[i];
    if (!(want & kHess)) return;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r.H(i, j) = p.k * v[i] * v[j];
  }
};

/// a strain energy of the caller's (BendTwistStrainEnergy): each bend-twist stencil's curvatures
/// and twist in a positive quadratic form with a bend-twist coupling, of the strains alone (not
/// the natural strains, which it says)
struct CoupledStrainEnergy {
  static constexpr bool kReadsNaturalStrains = false;
  SLENDER_HD void operator()(const RodBendTwist::Params& p,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    const Real a = Real(0.5) * p.EI1 / p.dl, b = Real(0.5) * p.GJ / p.dl;
    const Real c = Real(0.3) * std::sqrt(a * b);
    out.E = Real(0.5) * a * (s.kappa1 * s.kappa1 + s.kappa2 * s.kappa2) +
            Real(0.5) * b * s.tau * s.tau + c * s.kappa1 * s.tau;
    out.dE[0] = a * s.kappa1 + c * s.tau;
    out.dE[1] = a * s.kappa2;
    out.dE[2] = b * s.tau + c * s.kappa1;
    out.d2E[0][0] = out.d2E[1][1] = a;
    out.d2E[2][2] = b;
    out.d2E[0][2] = out.d2E[2][0] = c;
  }
};

/// a strain energy that reads the natural curvature and says nothing of it, E = k kappa1_bar
/// kappa1^2 / 2: the adjoint cannot take its derivative by the natural strains
struct NaturalCurvatureReader {
  SLENDER_HD void operator()(const RodBendTwist::Params& p,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    const Real k = Real(1e-3) * p.EI1 / p.dl * p.kappa1_bar;
    out.E = Real(0.5) * k * s.kappa1 * s.kappa1;
    out.dE[0] = k * s.kappa1;
    out.d2E[0][0] = k;
  }
};

// Energies from the caller's code (stencils/user_energy.h) enter through their Hessians: two
// zero-length springs, from the clamped node 1 to the tip and between two free nodes, on the
// cantilever whose clamp is raised; and energies of a rod's twist angles (coupling two edges'
// twist to the tip's height, and the last edge's twist to a node's x), which read the angles'
// values and not the frames, so that a turn of the reference frames leaves them as they are
// (they stay out of the sweep's frame terms); and an energy of the rods' strains, which reads
// their frames (a coupled quadratic form: the sweep's frame terms with its Hessian and its
// transport term); both kinds again under the midpoint rule and Newmark; and a copy of the rods'
// own springs, a function of the strains' differences from the natural strains, whose share
// of the actions' gradients is StrainDifferenceSensitivity's. Every class against central
// differences (within 1.6e-7). One that reads the natural strains otherwise is refused, naming it
TEST(Adjoint, EnergiesFromTheCallersCodeMatchCentralDifferences) {
  const auto base = cantilever();
  const int tip = base->nnode - 1;
  std::vector<std::array<int, 6>> dofs = {{3, 4, 5, 3 * tip, 3 * tip + 1, 3 * tip + 2},
                                          {6, 7, 8, 15, 16, 17}};
  Problem pr;
  pr.m =
      with_energies(base, {std::make_shared<LocalStencilEnergy<test::NodeSpring>>(
                              "springs", dofs, std::vector<test::NodeSpring::Params>{{0.5}, {2}})});
  pr.s0 = initial_state(*pr.m);
  pr.p.mass_damping = 0.3;
  // the clamp raised along a path of the caller's: the spring from it reaches the tip
  const Model& m = *pr.m;
  for (int n = 0; n < kSteps; ++n)
    for (const int dof : m.fixed_dof)
      pr.a.fixed_targets.push_back(pr.s0.q[size_t(dof)] +
                                   (dof < 3 * m.nnode && dof % 3 == 2 ? 1e-3 * (n + 1) : 0));
  check_all(pr, LinearLoss(pr.m->ndof, kSteps, 62), true, true);
  {
    SCOPED_TRACE("twist angles");
    const int tw = 3 * base->nnode;  // the first edge's twist DOF (edge 0 is clamped)
    std::vector<std::array<int, 3>> tdofs = {{tw + 2, tw + 5, 3 * tip + 2}, {tw + 6, tw + 7, 12}};
    Problem pt = pr;
    pt.m = with_energies(base, {std::make_shared<LocalStencilEnergy<TwistCoupling>>(
                                   "twist couplings", tdofs,
                                   std::vector<TwistCoupling::Params>{{5e-3, 10}, {2e-3, -20}})});
    pt.s0 = initial_state(*pt.m);
    check_all(pt, LinearLoss(pt.m->ndof, kSteps, 63), true, true);
  }
  {
    SCOPED_TRACE("the rods' strains");
    Problem pt = pr;
    pt.m = with_energies(
        base, {std::make_shared<BendTwistStrainEnergy<CoupledStrainEnergy>>("coupled strains")});
    pt.s0 = initial_state(*pt.m);
    check_all(pt, LinearLoss(pt.m->ndof, kSteps, 64), true, true);
  }
  for (const IntegratorCase& c : kIntegrators) {
    SCOPED_TRACE(std::string("the rods' strains and twist angles, ") + c.name);
    SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
    set_integrator(b, c);
    if (c.kind == IntegratorKind::kImplicitMidpoint) b.integrator().energy_consistent = false;
    Problem pt = pr;
    pt.m = with_energies(
        build_model(b.build()),
        {std::make_shared<BendTwistStrainEnergy<CoupledStrainEnergy>>("coupled strains"),
         std::make_shared<LocalStencilEnergy<TwistCoupling>>(
             "twist couplings",
             std::vector<std::array<int, 3>>{{3 * base->nnode + 3, 3 * base->nnode + 6, 3 * tip}},
             std::vector<TwistCoupling::Params>{{4e-3, 15}})});
    pt.s0 = initial_state(*pt.m);
    check_all(pt, LinearLoss(pt.m->ndof, kSteps, 66), true, true, 2e-5);
  }
  {
    SCOPED_TRACE("a copy of the rods' springs (a function of the strains' differences)");
    Problem pt = pr;
    pt.m = with_energies(
        base, {std::make_shared<BendTwistStrainEnergy<RodElasticStrainEnergy>>("bend-twist copy")});
    pt.s0 = initial_state(*pt.m);
    check_all(pt, LinearLoss(pt.m->ndof, kSteps, 67), true, true, 2e-5);
  }
  const auto reader = with_energies(
      base, {std::make_shared<BendTwistStrainEnergy<NaturalCurvatureReader>>("reader")});
  expect_error([&] { RolloutAdjoint(reader, reader->scene.integrator); }, "energy 'reader'");
}

// Kelvin-Voigt strain-rate damping (seed 004; stencils/kelvin_voigt.h): each damped stencil's
// force reads its strains at the step's start (the anchors), whose derivative the sweep adds.
// The cantilever with eta = 2 kPa s (tau = 1 ms against dt = 5 ms) under every action, its clamp
// swung; and the hinge plate with its rod post (shell springs, hinges, the post's stretching and
// bend-twist springs) with eta = 50 Pa s: every class against central differences
TEST(Adjoint, KelvinVoigtDampingMatchesCentralDifferences) {
  {
    SCOPED_TRACE("cantilever");
    SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
    b.kelvin_voigt(2e3);
    Problem pr;
    pr.m = build_model(b.build());
    const Model& m = *pr.m;
    ASSERT_TRUE(m.kelvin_voigt);
    pr.s0 = initial_state(m);
    pr.p.kelvin_voigt_scale = 1.3;
    ramp_actions(pr);
    check_all(pr, LinearLoss(m.ndof, kSteps, 61), true, true);
  }
  {
    SCOPED_TRACE("plate with a post");
    SceneSpec sc = test::plate_with_post(ShellBending::kHinge)->scene;
    sc.forces.kelvin_voigt = 50;
    tight_newton(sc.integrator.newton);
    Problem pr = problem_of(build_model(sc));
    ASSERT_TRUE(pr.m->kelvin_voigt);
    check_all(pr, LinearLoss(pr.m->ndof, 8, 67), false, true, 1e-4, 8);
  }
}

// ... under the midpoint rule and Newmark: the damping forces act at z = q_a + w (y - q_a)
// (w = c_u dt; the midpoint rule's z is q_n+1), with the rods' frames carried there from the
// step's start, and their anchors are the strains at q_a = q_hat - u_hat / c_u (Newmark's reads
// the start's velocity and acceleration); the sweep adds z's share of q_a's adjoint, the frames'
// terms at z and the anchors at q_a. The cantilever with its clamp swung and the plate with its
// post, every class against central differences
TEST(Adjoint, MidpointAndNewmarkKelvinVoigtMatchCentralDifferences) {
  for (const IntegratorCase& c : kIntegrators) {
    SCOPED_TRACE(c.name);
    std::printf("%s\n", c.name);
    const bool mid = c.kind == IntegratorKind::kImplicitMidpoint;
    {
      SCOPED_TRACE("cantilever");
      SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
      b.kelvin_voigt(2e3);
      set_integrator(b, c);
      if (mid) b.integrator().energy_consistent = false;  // (as the cantilever's above)
      Problem pr;
      pr.m = build_model(b.build());
      const Model& m = *pr.m;
      ASSERT_TRUE(m.kelvin_voigt);
      Simulator sim(pr.m);
      pr.s0 = sim.state();
      pr.p.kelvin_voigt_scale = 1.3;
      ramp_actions(pr);
      check_all(pr, LinearLoss(m.ndof, kSteps, 62), true, true);
    }
    {
      SCOPED_TRACE("plate with a post");
      SceneSpec sc = test::plate_with_post(ShellBending::kHinge)->scene;
      sc.forces.kelvin_voigt = 50;
      tight_newton(sc.integrator.newton);
      set_integrator(sc, c);
      // (the midpoint rule without the post's stretching secant: the secant's Newton noise puts
      // the initial velocities' small sensitivity, 6e-4, where the difference depends on the
      // machine's rounding: within 2.4e-8 at three times the step (fourth order) on a Xeon,
      // 5.9e-6 on an AMD EPYC, where the steps from one to ten times gave 1.5e-7 to 8.4e-6;
      // without it, 5.9e-8 and 2.0e-8 at one and three times. The secant's adjoint is checked
      // without damping (the hinge plate's test, the contact rollouts); with Kelvin-Voigt
      // damping under the midpoint rule it has no difference check now)
      if (mid) sc.integrator.energy_consistent = false;
      Problem pr = problem_of(build_model(sc));
      ASSERT_TRUE(pr.m->kelvin_voigt);
      check_all(pr, LinearLoss(pr.m->ndof, 8, 68), false, true, 1e-4, 8);
    }
  }
}

// ... of mid-edge shells: a triangle's anchor is its shape operator (less the actuation) at
// q_a, read with the step's start's frame vectors tau0 (functions of q_n), so the anchors' share
// reaches q_a, tau0 and the natural curvatures (shell_midedge_xi_chain); under Newmark the
// damping's part of the pools is at z, its tau0 terms apart. The mid-edge plate with its rod post
// (eta = 50 Pa s), under implicit Euler, the midpoint rule, the trapezoidal Newmark rule and the
// dissipative one: every class against central differences, the natural curvatures among them
TEST(Adjoint, KelvinVoigtOfMidEdgeShellsMatchesCentralDifferences) {
  const IntegratorCase euler{"implicit Euler", IntegratorKind::kImplicitEuler, 0.25, 0.5};
  for (const IntegratorCase& c : {euler, kIntegrators[0], kIntegrators[1], kIntegrators[2]}) {
    SCOPED_TRACE(c.name);
    std::printf("%s\n", c.name);
    SceneSpec sc = test::plate_with_post(ShellBending::kMidEdge)->scene;
    sc.forces.kelvin_voigt = 50;
    tight_newton(sc.integrator.newton);
    set_integrator(sc, c);
    Problem pr = problem_of(build_model(sc));
    ASSERT_TRUE(pr.m->kelvin_voigt);
    ASSERT_GT(pr.m->nmid, 0);
    pr.p.kelvin_voigt_scale = 1.2;
    const bool mid = c.kind == IntegratorKind::kImplicitMidpoint;  // (as the plate's above)
    check_all(pr, LinearLoss(pr.m->ndof, 8, 69), false, true, 1e-4, 8, 1e-6, mid ? 3 : 1, mid);
  }
}

// ... of constant-strain membranes: a triangle's anchor is its rest metric, the metric at q_a,
// which its law reads nonlinearly (through the invariants and the rest area): the anchors' share
// from the law's own derivative by it (shell_membrane_rest_metric_derivative). The hinge plate
// with its post, its membrane a St Venant-Kirchhoff and a neo-Hookean triangle (eta = 50 Pa s),
// under implicit Euler, the midpoint rule and the dissipative Newmark rule: every class against
// central differences
TEST(Adjoint, KelvinVoigtOfMembranesMatchesCentralDifferences) {
  const IntegratorCase euler{"implicit Euler", IntegratorKind::kImplicitEuler, 0.25, 0.5};
  for (MembraneModel law : {MembraneModel::kStvk, MembraneModel::kNeoHookean})
    for (const IntegratorCase& c : {euler, kIntegrators[0], kIntegrators[2]}) {
      const bool stvk = law == MembraneModel::kStvk;
      SCOPED_TRACE(stvk ? "St Venant-Kirchhoff" : "neo-Hookean");
      SCOPED_TRACE(c.name);
      std::printf("%s, %s\n", stvk ? "St Venant-Kirchhoff" : "neo-Hookean", c.name);
      SceneSpec sc = test::plate_with_post(ShellBending::kHinge)->scene;
      sc.parts[0].membrane = law;
      sc.forces.kelvin_voigt = 50;
      tight_newton(sc.integrator.newton);
      set_integrator(sc, c);
      // (the midpoint rule without the post's stretching secant: with it, its Newton noise
      // leaves the moduli's and the initial velocities' differences 1e-6 to 3e-5 off at one
      // step and 1e-7 to 8e-7 at ten times it; the secant with damping is checked on the
      // springs' plate above)
      sc.integrator.energy_consistent = c.kind != IntegratorKind::kImplicitMidpoint;
      Problem pr = problem_of(build_model(sc));
      ASSERT_TRUE(pr.m->kelvin_voigt);
      ASSERT_GT(pr.m->tables[kFamMembrane].rows, 0);
      pr.p.kelvin_voigt_scale = 0.8;
      check_all(pr, LinearLoss(pr.m->ndof, 8, 70), false, true, 1e-4, 8);
    }
}

// Rayleigh stiffness damping (seed 003, eq. 1; stencils/rayleigh.h): each elastic stencil's
// force b K u reads its Hessian K at the step's start, whose dependence on the start (its
// positions, frames and mid-edge frame vectors, and the step's natural strains) the sweep takes
// by fourth-order differences of the stencils' own Hessians, the rest exactly. The cantilever
// (beta = 2 ms) with its clamp swung under every action and integrator, and the hinge and
// mid-edge plates with their posts (beta = 5 ms) under implicit Euler and the dissipative Newmark
// rule: every class against central differences (the plates' by fourth-order ones: their clamped
// in-plane springs' Hessians move fast with the positions, and the second-order difference of
// the initial positions at 1e-7 m is 2e-6 to 2e-5 off where per-DOF fourth-order ones agree)
TEST(Adjoint, RayleighStiffnessDampingMatchesCentralDifferences) {
  const IntegratorCase euler{"implicit Euler", IntegratorKind::kImplicitEuler, 0.25, 0.5};
  for (const IntegratorCase& c : {euler, kIntegrators[0], kIntegrators[1], kIntegrators[2]}) {
    SCOPED_TRACE(c.name);
    std::printf("cantilever, %s\n", c.name);
    SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8));
    b.stiffness_damping(2e-3);
    set_integrator(b, c);
    if (c.kind == IntegratorKind::kImplicitMidpoint) b.integrator().energy_consistent = false;
    Problem pr;
    pr.m = build_model(b.build());
    const Model& m = *pr.m;
    ASSERT_TRUE(m.stiffness_damping);
    Simulator sim(pr.m);
    pr.s0 = sim.state();
    ramp_actions(pr);
    check_all(pr, LinearLoss(m.ndof, kSteps, 72), true, true);
  }
  for (ShellBending bending : {ShellBending::kHinge, ShellBending::kMidEdge})
    for (const IntegratorCase& c : {euler, kIntegrators[2]}) {
      const bool hinge = bending == ShellBending::kHinge;
      SCOPED_TRACE(hinge ? "hinge plate" : "mid-edge plate");
      SCOPED_TRACE(c.name);
      std::printf("%s, %s\n", hinge ? "hinge plate" : "mid-edge plate", c.name);
      SceneSpec sc = test::plate_with_post(bending)->scene;
      sc.forces.stiffness_damping = 5e-3;
      tight_newton(sc.integrator.newton);
      set_integrator(sc, c);
      Problem pr = problem_of(build_model(sc));
      ASSERT_TRUE(pr.m->stiffness_damping);
      check_all(pr, LinearLoss(pr.m->ndof, 8, 73), false, true, 1e-4, 8, 1e-6, 1, true);
    }
}

// A soft robot of the seeds, differentiated whole: Bartholdt et al.'s pneumatic actuator
// (apps/scenes/bartholdt_actuator.json: Ogden stretching, Kelvin-Voigt damping, three pressure
// chambers, a 60 g plate at its tip, parts joined), its chambers' pressures the actions, every
// class against central differences over 20 steps of 10 ms
TEST(Adjoint, PneumaticActuatorMatchesCentralDifferences) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/bartholdt_actuator.json");
  tight_newton(sc.integrator.newton);
  Problem pr = problem_of(build_model(sc));
  const Model& m = *pr.m;
  ASSERT_TRUE(m.kelvin_voigt);
  ASSERT_EQ(m.signals.size(), 3u);
  for (int n = 0; n < kSteps; ++n) {
    pr.a.loads.push_back(6e4 * (n + 1) / kSteps);  // chamber 0 inflated to 60 kPa
    pr.a.loads.push_back(1e4);
    pr.a.loads.push_back(0);
  }
  // (the parameters', loads' and velocities' difference steps ten times the others': the states
  // are exact to ~1e-14 m, and the damping's and density's small sensitivities need the larger
  // step to rise above that; the truncation stays below 1e-8)
  check_all(pr, LinearLoss(m.ndof, kSteps, 71), true, true, 1e-4, kSteps, 1e-6, 10);
}

// The star robot of Huang et al. (seed 003; apps/scenes/star_roll.json: seven SMA-driven
// limbs of naturally curved rods, Rayleigh stiffness damping, the ground with friction 0.8 and
// a dashpot of restitution 0, the midpoint rule with energy-consistent contact, the 2D mode),
// resting on its two lower limbs, differentiated whole over 24 steps of 0.5 ms: every class
// against central differences (its limbs' natural curvatures, the forces, the moduli, the
// density, the initial state; before, its Rayleigh damping was refused)
TEST(Adjoint, StarRobotMatchesCentralDifferences) {
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/star_roll.json");
  tight_newton(sc.integrator.newton);
  sc.integrator.adaptive = false;
  Problem pr = problem_of(build_model(sc));
  const Model& m = *pr.m;
  ASSERT_TRUE(m.stiffness_damping);
  ASSERT_TRUE(m.ground.enabled);
  const int N = 24;
  // (fourth-order differences; the initial positions moved by 1e-8 m: the friction's
  // regularization, 1 mm/s of slip, is 5e-7 m in a step, which the usual 1e-7 m step reaches far
  // enough into for 2e-5 of truncation, 4e-9 at 1e-8 m)
  check_all(pr, LinearLoss(m.ndof, N, 74), true, true, 1e-6, N, 1e-6, 10, true, 0.1);
}

// ... and a closed shell's inner pressure (the pressure family, E = -p V) as the action: the
// inflated balloon on the ground (apps/scenes/balloon_inflate.json: an icosphere of spring
// membranes and hinges, mass damping), the pressure rising over 8 steps
TEST(Adjoint, BalloonPressureMatchesCentralDifferences) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/balloon_inflate.json");
  // (a shell: converged on the residual, as contact_newton says why; its floor here is ~1e-13 N)
  sc.integrator.newton.abs_tol = 5e-13;
  sc.integrator.newton.rel_tol = 1e-30;
  sc.integrator.newton.step_tol = 1e-18;
  sc.integrator.newton.max_iters = 60;
  Problem pr = problem_of(build_model(sc));
  const Model& m = *pr.m;
  ASSERT_EQ(m.signals.size(), 1u);
  const int steps = 8;
  for (int n = 0; n < steps; ++n)
    pr.a.loads.push_back(0.02 * (n + 1));  // (the factor of the scene's 3 kPa)
  check_all(pr, LinearLoss(m.ndof, steps, 73), true, true, 1e-6, steps);
}

TEST(Adjoint, ModulusAndDensityEnterAsTheirRatio) {
  // with every force but the elastic ones proportional to the mass (weight, mass damping, the
  // ground's automatic stiffness and its friction), the motion depends on E / rho only: at
  // E = rho = 1, dL/dE = -dL/drho (theory, no differences)
  for (const std::shared_ptr<const Model>& m : {cantilever(), rod_on_ground()}) {
    const LinearLoss loss(m->ndof, kSteps, 4);
    RolloutAdjoint ad(m, m->scene.integrator);
    RolloutParams p;
    p.mass_damping = 0.3;
    State s0 = initial_state(*m);  // moving in x and y (the rod on the ground bends and slides)
    const std::vector<Real> v = random_vector(s0.u.size(), 8);
    for (int i = 0; i < m->nnode; ++i)
      for (int c = 0; c < 2; ++c)
        if (!m->dof_fixed[size_t(3 * i + c)]) s0.u[size_t(3 * i + c)] = 0.05 * v[size_t(3 * i + c)];
    ad.run(s0, kSteps, {}, p);
    const RolloutGradient g = ad.gradient(loss.wq, loss.wu);
    EXPECT_NEAR(g.youngs_scale, -g.density_scale, 1e-9 * std::fabs(g.youngs_scale));
    EXPECT_GT(std::fabs(g.youngs_scale), 1e-6);
  }
}

TEST(Adjoint, CheckpointingGivesTheSameBits) {
  const std::shared_ptr<const Model> m = cantilever();
  const LinearLoss loss(m->ndof, kSteps, 9);
  RolloutActions a;
  a.forces = random_vector(size_t(kSteps) * 3 * m->nnode, 3);
  for (Real& f : a.forces)
    f *= 1e-3;
  RolloutGradient g[3];
  const int every[3] = {1, 3, 0};
  for (int c = 0; c < 3; ++c) {
    RolloutOptions o;
    o.checkpoint_every = every[c];
    RolloutAdjoint ad(m, m->scene.integrator, o);
    ad.run(initial_state(*m), kSteps, a);
    g[c] = ad.gradient(loss.wq, loss.wu);
    if (every[c] == 1) {
      EXPECT_EQ(ad.recomputed_steps(), 0);
    } else if (every[c] == 3) {
      EXPECT_EQ(ad.recomputed_steps(), kSteps - 7);  // 7 segments
    }
  }
  for (int c = 1; c < 3; ++c) {
    EXPECT_EQ(g[c].q0, g[0].q0);
    EXPECT_EQ(g[c].u0, g[0].u0);
    EXPECT_EQ(g[c].kappa_bar, g[0].kappa_bar);
    EXPECT_EQ(g[c].tau_bar, g[0].tau_bar);
    EXPECT_EQ(g[c].forces, g[0].forces);
    EXPECT_EQ(g[c].part_youngs_scale, g[0].part_youngs_scale);
    EXPECT_EQ(g[c].density_scale, g[0].density_scale);
  }
}

TEST(Adjoint, BadInputIsAClearError) {
  const std::shared_ptr<const Model> m = cantilever();
  RolloutAdjoint ad(m, m->scene.integrator);
  RolloutActions a;
  a.kappa_bar.assign(5, 0);
  expect_error([&] { ad.run(initial_state(*m), 4, a); }, "actions.kappa_bar has 5 values");
  RolloutParams p;
  p.part_youngs_scale = {1, 2};
  expect_error([&] { ad.run(initial_state(*m), 4, {}, p); }, "params.part_youngs_scale");
  expect_error([&] { ad.gradient({}, {}); }, "run a rollout first");
  RolloutActions t;
  t.fixed_targets.assign(3, 0);
  expect_error([&] { ad.run(initial_state(*m), 4, t); }, "actions.fixed_targets has 3 values");
  t.fixed_targets.assign(4 * m->fixed_dof.size(), 0);
  t.fixed_targets[5] = NAN;
  expect_error([&] { ad.run(initial_state(*m), 4, t); }, "not finite (entry 5)");
  ad.run(initial_state(*m), 4);
  expect_error([&] { ad.gradient(std::vector<Real>(7), {}); }, "(N + 1) x ndof");
  IntegratorSpec stat = m->scene.integrator;
  stat.kind = IntegratorKind::kStatic;
  expect_error([&] { RolloutAdjoint(m, stat); }, "integrator is static");
  // the CUDA backend's adjoint where this machine has none: named
  if (cuda_device_count() == 0) {
    RolloutOptions o;
    o.backend = BackendKind::kCuda;
    expect_error([&] { RolloutAdjoint(m, m->scene.integrator, o); },
                 "the CUDA backend was asked for");
  }
  // what the midpoint rule and Newmark do not differentiate, named
}

// The scene's actuation is an input in time (it drives the natural curvature from the clock, not
// from the state): the cantilever bent by a sine of its natural curvature kappa1 (and of kappa2
// on a part of its springs) gives every other class's gradient, against central differences
TEST(Adjoint, SceneActuationIsAnInputInTime) {
  int rod = -1;
  SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8), &rod);
  ActuationSpec a;
  a.target = ActuationSpec::Target::kRodCurvature1;
  a.part = rod;
  a.amplitude = 15;
  a.time.kind = TimeFunction::Kind::kSine;
  a.time.frequency = 6;
  b.actuate(a);
  a.target = ActuationSpec::Target::kRodCurvature2;
  a.amplitude = 6;
  a.time.phase = 1.0;
  b.actuate(a);
  const std::shared_ptr<const Model> m = build_model(b.build());
  ASSERT_FALSE(m->actuated.empty());
  Problem pr{m, initial_state(*m), {}, {}};
  pr.p.youngs_scale = 1.1;
  pr.p.mass_damping = 0.3;
  const LinearLoss loss(m->ndof, kSteps, 13);
  // the actuation moves the rod: a rollout without it ends elsewhere
  {
    RolloutAdjoint with(m, m->scene.integrator), without(m, m->scene.integrator);
    RolloutActions rest;
    rest.kappa_bar.assign(size_t(kSteps) * 2 * m->nbend, 0);
    EXPECT_GT(test::max_abs_diff(with.run(pr.s0, kSteps).q, without.run(pr.s0, kSteps, rest).q),
              1e-3);
  }
  check_all(pr, loss, /*actions=*/true, /*strains=*/false);
}

// The 2D mode (every y and twist DOF held, the rods' planar Hessians): a cantilever in the x-z
// plane, naturally curved in it, every class against central differences
TEST(Adjoint, PlanarRodIn2DModeMatchesCentralDifferences) {
  SceneBuilder b = cantilever_scene(vec3(0.2, 0, 0.02), vec3(0.5, 0, -9.8));
  b.integrator().two_d = true;
  const std::shared_ptr<const Model> m = build_model(b.build());
  Problem pr{m, initial_state(*m), {}, {}};
  pr.a.kappa_bar.assign(size_t(kSteps) * 2 * m->nbend, 0);
  for (int n = 0; n < kSteps; ++n)
    for (int k = 0; k < m->nbend; ++k)
      pr.a.kappa_bar[(size_t(n) * m->nbend + k) * 2 + 1] = 4.0;  // bent in its plane
  pr.p.youngs_scale = 0.9;
  pr.p.mass_damping = 0.3;
  check_all(pr, LinearLoss(m->ndof, kSteps, 17), /*actions=*/true, /*strains=*/true);
}

// Boundary events: the rod's tip fixed where it is after a third of the rollout, a node held
// from the start released after two thirds; every class against central differences (a held
// DOF's position carries its adjoint through the steps it is held)
TEST(Adjoint, BoundaryEventsMatchCentralDifferences) {
  int rod = -1;
  SceneBuilder b = cantilever_scene(vec3(0.2, 0.01, 0), vec3(0.5, 2.0, -9.8), &rod);
  b.fix_node(rod, 4);
  NodeRef tip, middle;
  tip.part = middle.part = rod;
  tip.index = -1;
  middle.index = 4;
  BoundaryEvent fix;
  fix.time = (kSteps / 3) * 5e-3;
  fix.select.nodes.push_back(tip);
  b.event(fix);
  BoundaryEvent release;
  release.time = (2 * kSteps / 3) * 5e-3;
  release.release = true;
  release.select.nodes.push_back(middle);
  b.event(release);
  const std::shared_ptr<const Model> m = build_model(b.build());
  ASSERT_EQ(m->event_time.size(), 2u);
  Problem pr{m, initial_state(*m), {}, {}};
  pr.p.youngs_scale = 1.1;
  pr.p.mass_damping = 0.3;
  // the rollout holds and releases as a Simulator does
  {
    RolloutAdjoint ad(m, m->scene.integrator);
    const State end = ad.run(pr.s0, kSteps, {}, pr.p);
    Simulator sim(m);
    EnvParams ep;
    ep.youngs_scale = 1.1;
    ep.mass_damping = 0.3;
    sim.set_params(ep);
    for (int n = 0; n < kSteps; ++n)
      ASSERT_TRUE(sim.step().ok());
    EXPECT_LE(test::max_abs_diff(end.q, sim.state().q), 1e-12);
    EXPECT_EQ(end.dof_fixed, sim.state().dof_fixed);
  }
  check_all(pr, LinearLoss(m->ndof, kSteps, 19), /*actions=*/true, /*strains=*/true,
            /*force_h=*/1e-5);
}

// The ground's dashpot (restitution 0.3): a rod dropped from 3 mm onto a frictional ground,
// bouncing and settling; the dashpot's normal, activation and coefficient come from each step's
// start. Every class against central differences, with the automatic stiffness (the dashpot
// linear in the density scale) and with a given one (as its square root)
TEST(Adjoint, GroundDashpotMatchesCentralDifferences) {
  for (const bool automatic : {true, false}) {
    SCOPED_TRACE(automatic ? "automatic stiffness" : "given stiffness");
    GroundSpec g;
    g.restitution = 0.3;
    if (!automatic) g.stiffness = 50;
    Problem pr = problem_of(build_model(rod_above_ground(g).build()));
    const Model& m = *pr.m;
    ASSERT_LT(m.ground.restitution, 1);
    for (int i = 0; i < m.nnode; ++i)
      pr.s0.u[size_t(3 * i + 2)] = -0.3;  // falling at 0.3 m/s
    pr.p.density_scale = 1.2;
    // (the moduli's and the forces' sensitivities here are small, 2e-7 to 1: the differences'
    // own rounding and the activation's curvature leave a few 1e-6)
    check_all(pr, LinearLoss(m.ndof, kSteps, 23), true, false, 1e-7, kSteps, 2e-5);
  }
  // ... under the midpoint rule (its energy-consistent ground force too), the rod also sliding
  // along x at 5 cm/s: its initial state DOF by DOF (the directional derivatives there are a
  // hundredth of their gradients' size, in the differences' noise at 1e-7 m). The midpoint
  // rule's rollouts are noisier to differences (its line search goes by the residual): per DOF
  // the positions agree within 6e-8 of the largest entry at 1.5e-7 m, 1e-6 at 3e-7 m, 2e-5 at
  // 1e-7 m and 4e-5 at 1e-6 m, hence 1e-5 at 3e-7 m here
  {
    SCOPED_TRACE("midpoint");
    GroundSpec g;
    g.restitution = 0.3;
    SceneBuilder b = rod_above_ground(g);
    b.integrator().kind = IntegratorKind::kImplicitMidpoint;
    Problem pr = problem_of(build_model(b.build()));
    const Model& m = *pr.m;
    for (int i = 0; i < m.nnode; ++i) {
      pr.s0.u[size_t(3 * i)] = 0.05;
      pr.s0.u[size_t(3 * i + 2)] = -0.3;
    }
    const LinearLoss loss(m.ndof, kSteps, 26);
    check_all(pr, loss, true, false, 1e-6, kSteps, 2e-5, 10, true, 1, false);
    check_initial_state_per_dof(pr, loss, kSteps, 3e-7, 1e-4, 1, 1e-5);
  }
}

/// Newton's tolerances for the shells' contact tests: converged on the residual alone, to
/// 1e-13 N. At the residual's round-off floor (about 1e-14 N here) a Newton step is that
/// round-off over the softest stiffness, larger than 1e-14 m in a thin tile, so stopping on the
/// step size ends wherever such a step happens to fall below it, and the state keeps an error
/// central differences see as noise. (A rod's twist is the other way round: its torsional
/// stiffness is so small that a residual of 1e-13 N m leaves the twist 1e-10 rad off, so the
/// rod tests stop on the step size.)
void contact_newton(SceneBuilder& b) {
  tight_newton(b);
  b.integrator().newton.abs_tol = 1e-13;
  b.integrator().newton.step_tol = 1e-18;
}

/// a soft slider rod across two fixed rails (rod-rod contact: edge-edge pairs), starting inside
/// the contact layer and sliding along the rails at 0.3 m/s, under gravity tilted along them:
/// friction mu between the bodies (slip tolerance 1 cm/s), restitution e (< 1: the pairs'
/// dashpot)
SceneBuilder slider_on_rails(Real mu, Real e, bool residual_newton = false) {
  const Real r = 2e-3, tol = 5e-4;
  SceneBuilder b;
  const int steel = b.material("steel", 7800, 2e9, 0.3);
  const int soft = b.material("soft", 1000, 2e6, 0.3);
  for (Real y : {-0.03, 0.03}) {
    const int rail = b.straight_rod(y < 0 ? "rail0" : "rail1", vec3(-0.02, y, 0), vec3(0.02, y, 0),
                                    5, steel, SceneBuilder::circle(r));
    for (int i = 0; i < 5; ++i)
      b.fix_node(rail, i);
  }
  const int slider =
      b.straight_rod("slider", vec3(0.003, -0.06, 2 * r + 0.3 * tol),
                     vec3(-0.002, 0.06, 2 * r + 0.2 * tol), 9, soft, SceneBuilder::circle(r));
  for (int i = 0; i < 9; ++i)
    b.initial_velocity(slider, i, vec3(0, 0.3, 0));
  ContactSpec c;
  c.tolerance = tol;
  c.friction = mu;
  c.slip_velocity = 1e-2;
  c.restitution = e;
  b.contact(c);
  b.gravity(vec3(0.4, 2.5, -9.8));
  b.integrator().dt = 1e-3;
  if (residual_newton) {
    contact_newton(b);
  } else {
    tight_newton(b);
  }
  return b;
}

/// the mean height of the slider (the model's last 9 nodes)
Real slider_height(const Model& m, const State& s) {
  Real z = 0;
  for (int i = m.nnode - 9; i < m.nnode; ++i)
    z += s.q[size_t(3 * i + 2)] / 9;
  return z;
}

// Contact between bodies' gradients against central differences: every class within 1e-6 over
// 3 steps, and over a longer rollout within 2e-4. The pairs' forces are C1 but not C2 (their
// distance's Hessian jumps where a closest point passes a primitive's end, as the slider's edges
// pass over the rails' nodes, and friction's regularized law bends sharply below its slip
// tolerance), so over many steps a difference step straddles such kinks: the differences then
// measure the jumps, about 1e-5 to 1e-4 relative here, while a step's linearization, alone or
// over a few steps, agrees to the differences' round-off (1e-8..6e-7).
void check_contact(const Problem& pr, unsigned seed, int long_steps, bool strains) {
  const int nd3 = 3 * pr.m->nnode;
  for (const int steps : {3, long_steps}) {
    SCOPED_TRACE(std::to_string(steps) + " steps");
    std::printf("  %d steps:\n", steps);
    Problem p = pr;
    if (!p.a.forces.empty()) p.a.forces.resize(size_t(steps) * nd3);
    check_all(p, LinearLoss(p.m->ndof, steps, seed), true, strains, 1e-6, steps,
              steps == 3 ? 1e-6 : 2e-4);
  }
}

// Contact between bodies (IMC, seed 000 eqs. 21-23): the pairs' penalty and friction are
// functions of the step's end and its velocity, linearized as every other family; the pairs
// come from the step's start, as the Simulator finds them. The slider on the rails, sliding
// and bending, with friction; the rollout is the Simulator's
TEST(Adjoint, RodRodContactWithFrictionMatchesCentralDifferences) {
  Problem pr = problem_of(build_model(slider_on_rails(0.3, 1).build()));
  const Model& m = *pr.m;
  ASSERT_TRUE(m.contact_friction());
  pr.a.forces.assign(size_t(kSteps) * 3 * m.nnode, 0);
  const int first = m.nnode - 9;  // the slider's first node
  for (int n = 0; n < kSteps; ++n)
    pr.a.forces[size_t(n) * 3 * m.nnode + 3 * first] = 2e-3;
  pr.p.density_scale = 1.1;
  // the rollout is a Simulator's, with the same forces and parameters
  RolloutAdjoint ad(pr.m, m.scene.integrator);
  const State end = ad.run(pr.s0, kSteps, pr.a, pr.p);
  Simulator sim(pr.m);
  EnvParams ep;
  ep.density_scale = pr.p.density_scale;
  sim.set_params(ep);
  for (int n = 0; n < kSteps; ++n) {
    sim.set_external_forces(std::vector<Real>(pr.a.forces.begin() + long(n) * 3 * m.nnode,
                                              pr.a.forces.begin() + long(n + 1) * 3 * m.nnode));
    ASSERT_TRUE(sim.step().ok());
  }
  for (int i = 0; i < m.ndof; ++i)
    ASSERT_NEAR(sim.state().q[size_t(i)], end.q[size_t(i)], 1e-12) << "DOF " << i;
  // the rails hold it up (free, it would fall 2 mm in the 20 ms) and it still slides
  Real vy = 0;
  for (int i = first; i < m.nnode; ++i)
    vy += end.u[size_t(3 * i + 1)] / 9;
  const Real dz = slider_height(m, end) - slider_height(m, pr.s0);
  std::printf("  slider: speed along the rails %.3f m/s, height change %.2e m\n", vy, dz);
  EXPECT_GT(vy, 0.1);
  EXPECT_GT(dz, -1e-3);
  check_contact(pr, 33, kSteps, true);
}

// Contact between bodies under the midpoint rule with its energy-consistent pair forces (the
// penalty's secant from the pairs' distances at the step's start: imc_secant_start_derivative),
// friction and the pairs' dashpot: the slider dropped onto the rails at 0.2 m/s. Every class
// against fourth-order differences at ten times the step (the secants' round-off, as above),
// over 3 steps to 1e-6 and over 12 to 2e-4 (contact's kinks, as above)
TEST(Adjoint, MidpointRodRodContactSecantMatchesCentralDifferences) {
  SceneBuilder b = slider_on_rails(0.3, 0.4);
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  Problem pr = problem_of(build_model(b.build()));
  const Model& m = *pr.m;
  ASSERT_TRUE(m.scene.integrator.energy_consistent);
  for (int i = m.nnode - 9; i < m.nnode; ++i)
    pr.s0.u[size_t(3 * i + 2)] = -0.2;
  for (const int steps : {3, 12}) {
    SCOPED_TRACE(std::to_string(steps) + " steps");
    std::printf("  %d steps:\n", steps);
    check_all(pr, LinearLoss(m.ndof, steps, 35), true, true, 1e-5, steps, steps == 3 ? 1e-6 : 2e-4,
              10, true);
  }
}

// Newmark's energy-consistent contact (the trapezoidal rule: the contact stencils act at the
// step's midpoint with its mean velocity, their normal force the secant from the start's
// distance, weighted 2 in the residual; the stored acceleration takes them back out): a rod
// falling onto a frictional ground, and the slider dropped onto the rails with friction, each
// without and with its dashpot (whose start is then the step's), every class against central
// differences (fourth-order, the steps as for the midpoint rule's)
TEST(Adjoint, NewmarkEnergyConsistentContactMatchesCentralDifferences) {
  for (const Real e : {1.0, 0.3}) {
    SCOPED_TRACE(e < 1 ? "ground with its dashpot" : "ground");
    std::printf(e < 1 ? "ground, restitution 0.3\n" : "ground\n");
    GroundSpec gs;
    gs.restitution = e;
    SceneBuilder b = rod_above_ground(gs);
    b.integrator().kind = IntegratorKind::kNewmark;
    Problem pr = problem_of(build_model(b.build()));
    const Model& m = *pr.m;
    ASSERT_GT(contact_step_coeffs(m.scene.integrator, m.scene.integrator.dt).a, 0);
    for (int i = 0; i < m.nnode; ++i) {
      pr.s0.u[size_t(3 * i)] = 0.05;
      pr.s0.u[size_t(3 * i + 2)] = -0.3;
    }
    pr.p.density_scale = 0.9;
    // (with the dashpot, the initial state's directional derivatives are a hundredth of their
    // gradients' size and meet the differences' noise: DOF by DOF there, within 1e-6 of each
    // class's largest entry, at steps between the truncation's and the noise's)
    const LinearLoss loss(m.ndof, kSteps, 25);
    check_all(pr, loss, true, false, 1e-6, kSteps, 1e-6, 10, true, 1, e == 1);
    if (e < 1) check_initial_state_per_dof(pr, loss, kSteps, 5e-7, 1e-4, 1, 1e-6);
  }
  for (const Real e : {1.0, 0.4}) {
    SCOPED_TRACE(e < 1 ? "rods with the pairs' dashpot" : "rods");
    std::printf(e < 1 ? "rods, restitution 0.4\n" : "rods\n");
    SceneBuilder b = slider_on_rails(0.3, e);
    b.integrator().kind = IntegratorKind::kNewmark;
    Problem pr = problem_of(build_model(b.build()));
    const Model& m = *pr.m;
    for (int i = m.nnode - 9; i < m.nnode; ++i)
      pr.s0.u[size_t(3 * i + 2)] = -0.2;
    check_all(pr, LinearLoss(m.ndof, 12, 36), true, true, 1e-5, 12, 1e-6, 10, true);
  }
}

// ... and with the pairs' dashpot (restitution 0.4): its normal, activation and reduced mass
// come from the step's start, whose derivative the sweep adds (pair_dashpot_start_derivative);
// the slider also dropped onto the rails at 0.2 m/s
TEST(Adjoint, RodRodContactDashpotMatchesCentralDifferences) {
  Problem pr = problem_of(build_model(slider_on_rails(0.3, 0.4, true).build()));
  const Model& m = *pr.m;
  for (int i = m.nnode - 9; i < m.nnode; ++i)
    pr.s0.u[size_t(3 * i + 2)] = -0.2;
  pr.p.density_scale = 0.8;
  check_contact(pr, 38, kSteps, false);
}

// Contact between bodies with an iterative solver is refused (the pairs live in the direct
// solver's plan), and a step that does not converge names itself and, in an adaptive scene,
// says that the rollout's steps are fixed
TEST(Adjoint, ContactWithAnIterativeSolverAndUnconvergedStepsAreClearErrors) {
  const auto contact = build_model(slider_on_rails(0.3, 1).build());
  RolloutOptions pcg;
  pcg.solver = LinearSolverKind::kPcg;
  expect_error([&] { RolloutAdjoint(contact, contact->scene.integrator, pcg); },
               "options.solver is iterative");
  const auto m = cantilever();
  IntegratorSpec few = m->scene.integrator;
  few.newton.max_iters = 1;
  few.adaptive = true;
  RolloutAdjoint short_newton(m, few);
  expect_error([&] { short_newton.run(initial_state(*m), 3); }, "adaptive halving");
}

// Shells in contact (point-triangle and edge-edge pairs): a hinge-shell tile and a rod sliding
// on a fixed plate under tilted gravity, with friction
TEST(Adjoint, ShellAndRodOnAPlateWithFrictionMatchesCentralDifferences) {
  const Real h = 2e-3, tol = 5e-4;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int plate = b.rectangle_shell("plate", vec3(-0.03, -0.03, 0), vec3(0.06, 0, 0),
                                      vec3(0, 0.06, 0), 0.02, true, mat, h);
  b.membrane(plate, MembraneModel::kSprings);
  for (int i = 0; i < int(b.part(plate).nodes.size()); ++i)
    b.fix_node(plate, i);
  const Real z = h + 0.2 * tol;
  const int tile = b.rectangle_shell("tile", vec3(-0.012, -0.015, z), vec3(0.02, 0.004, 0),
                                     vec3(-0.004, 0.02, 0), 0.01, true, mat, h);
  b.membrane(tile, MembraneModel::kSprings);
  for (int i = 0; i < int(b.part(tile).nodes.size()); ++i)
    b.initial_velocity(tile, i, vec3(0.05, 0.3, 0));
  const int rod = b.straight_rod("rod", vec3(0.008, -0.02, h / 2 + 1e-3 + 0.2 * tol),
                                 vec3(0.015, 0.01, h / 2 + 1e-3 + 0.3 * tol), 5, mat,
                                 SceneBuilder::circle(1e-3));
  for (int i = 0; i < 5; ++i)
    b.initial_velocity(rod, i, vec3(-0.2, 0.2, 0));
  ContactSpec c;
  c.tolerance = tol;
  c.friction = 0.3;
  c.slip_velocity = 1e-2;
  b.contact(c);
  b.gravity(vec3(0.5, 5, -9.8));
  b.integrator().dt = 1e-3;
  contact_newton(b);
  Problem pr = problem_of(build_model(b.build()));
  const Model& m = *pr.m;
  ASSERT_GT(m.ntri, 0);
  check_contact(pr, 41, 12, true);
}

// The batch's gradients (BatchRolloutAdjoint): three environments of the cantilever, each with
// its own forces, modulus and density, run and swept in parallel, give each the gradient a
// single RolloutAdjoint gives for its inputs, bit for bit, and a gradient that is its own
TEST(Adjoint, BatchGivesEachEnvironmentItsOwnGradient) {
  const std::shared_ptr<const Model> m = cantilever();
  const int B = 3;
  const LinearLoss loss(m->ndof, kSteps, 5);
  std::vector<RolloutActions> a(B);
  std::vector<RolloutParams> p(B);
  for (int e = 0; e < B; ++e) {
    a[size_t(e)].forces = random_vector(size_t(kSteps) * 3 * m->nnode, 20 + unsigned(e));
    for (Real& f : a[size_t(e)].forces)
      f *= 1e-3;
    p[size_t(e)].youngs_scale = 1 + 0.2 * e;
    p[size_t(e)].density_scale = 1 - 0.1 * e;
  }
  BatchRolloutAdjoint batch(m, B, m->scene.integrator);
  EXPECT_EQ(batch.nenv(), B);
  std::vector<Real> qb, ub;
  const std::vector<State> last = batch.run({initial_state(*m)}, kSteps, a, p, &qb, &ub);
  ASSERT_EQ(last.size(), size_t(B));
  const size_t per = size_t(kSteps + 1) * size_t(m->ndof);
  ASSERT_EQ(qb.size(), B * per);
  std::vector<Real> wq, wu;
  for (int e = 0; e < B; ++e) {
    wq.insert(wq.end(), loss.wq.begin(), loss.wq.end());
    wu.insert(wu.end(), loss.wu.begin(), loss.wu.end());
  }
  const std::vector<RolloutGradient> g = batch.gradient(wq, wu);
  ASSERT_EQ(g.size(), size_t(B));
  for (int e = 0; e < B; ++e) {
    SCOPED_TRACE("environment " + std::to_string(e));
    RolloutAdjoint one(m, m->scene.integrator);
    std::vector<Real> q, u;
    const State s = one.run(initial_state(*m), kSteps, a[size_t(e)], p[size_t(e)], &q, &u);
    EXPECT_EQ(std::vector<Real>(qb.begin() + e * per, qb.begin() + (e + 1) * per), q);
    EXPECT_EQ(last[size_t(e)].q, s.q);
    const RolloutGradient ge = one.gradient(loss.wq, loss.wu);
    EXPECT_EQ(g[size_t(e)].q0, ge.q0);
    EXPECT_EQ(g[size_t(e)].u0, ge.u0);
    EXPECT_EQ(g[size_t(e)].forces, ge.forces);
    EXPECT_EQ(g[size_t(e)].kappa_bar, ge.kappa_bar);
    EXPECT_EQ(g[size_t(e)].youngs_scale, ge.youngs_scale);
    EXPECT_EQ(g[size_t(e)].density_scale, ge.density_scale);
    if (e > 0) {
      EXPECT_NE(g[size_t(e)].forces, g[0].forces);
      EXPECT_NE(g[size_t(e)].youngs_scale, g[0].youngs_scale);
    }
  }
  // bad input names what and, for a failure in one environment, which
  expect_error(
      [&] {
        batch.run({initial_state(*m)}, kSteps, a, {p[0], p[1]});
      },
      "params holds 2 entries");
  expect_error([&] { batch.gradient(loss.wq, {}); }, "nenv x (N + 1) x ndof");
  std::vector<RolloutParams> bad = p;
  bad[2].youngs_scale = -1;
  expect_error([&] { batch.run({initial_state(*m)}, kSteps, a, bad); }, "environment 2");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
