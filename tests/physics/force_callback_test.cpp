// The caller's state-dependent force (Simulator::set_force_callback, ForceEval): its Jacobian
// entries in the Newton system against central differences of the residual, a spring on a
// cantilever's tip against Euler-Bernoulli beam theory, the reactions balancing it, and the
// errors for entries outside the Jacobian's pattern (the state left as it was).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "physics_util.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kLength = 0.1;   // free length L [m]
constexpr Real kRadius = 1e-3;  // [m]
constexpr Real kE = 1e7;        // [Pa]
constexpr int kEdges = 50;      // the first one clamped

SceneBuilder cantilever(IntegratorKind kind, Real dt) {
  const Real dl = kLength / (kEdges - 0.5);
  SceneBuilder b;
  const int mat = b.material("m", 1200, kE, 0.5);
  const int rod = b.straight_rod("beam", vec3(-dl / 2, 0, 0), vec3(kLength, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(kRadius));
  b.fix_edge(rod, 0);
  b.integrator().kind = kind;
  b.integrator().dt = dt;
  b.integrator().duration = 1;
  return b;
}

// a linear spring of stiffness k from node n to the point p: F = -k (x - p), dF/dx = -k I
ForceCallback spring(int n, Vec3 p, Real k) {
  return [n, p, k](ForceEval& e) {
    for (int c = 0; c < 3; ++c) {
      e.force[3 * n + c] += -k * (e.q[3 * n + c] - p[c]);
      e.add_jacobian(3 * n + c, 3 * n + c, -k);
    }
  };
}

TEST(ForceCallback, JacobianMatchesCentralDifferencesOfTheResidual) {
  const auto model = build_model(
      cantilever(IntegratorKind::kImplicitEuler, 2e-3).gravity(vec3(0, 0, -9.8)).build());
  Simulator sim(model);
  const int tip = model->nnode - 1, mid = model->nnode / 2;
  const Vec3 p = vec3(0.08, 0.01, 0.02);
  const Real k = 5, c = 0.3, a = 2;
  // on the tip a nonlinear spring F = -k |d| d (d = x - p); on the middle node a dashpot
  // F = -c u and a force a y along x (non-symmetric): entries in dF/dq and in dF/du
  sim.set_force_callback([=](ForceEval& e) {
    Vec3 d;
    for (int i = 0; i < 3; ++i)
      d[i] = e.q[3 * tip + i] - p[i];
    const Real r = norm(d);
    for (int i = 0; i < 3; ++i) {
      e.force[3 * tip + i] += -k * r * d[i];
      for (int j = 0; j < 3; ++j)
        e.add_jacobian(3 * tip + i, 3 * tip + j, -k * ((i == j ? r : 0) + d[i] * d[j] / r));
      e.force[3 * mid + i] += -c * e.u[3 * mid + i];
      e.add_jacobian(3 * mid + i, 3 * mid + i, 0, -c);
    }
    e.force[3 * mid] += a * e.q[3 * mid + 1];
    e.add_jacobian(3 * mid, 3 * mid + 1, a);
  });
  for (int s = 0; s < 5; ++s)
    ASSERT_TRUE(sim.step().ok());
  const Real rel = test::residual_fd_error(sim, 2e-3, [](Real) { return Real(1e-7); });
  std::printf("force callback: |J - J_fd| / |J_fd| = %.3e\n", rel);
  EXPECT_LT(rel, test::kFdRelTol);
}

// a vertical spring from the tip of a cantilever to a point h above it: in equilibrium the tip
// rises by delta = k h / (k_b + k), k_b = 3 E I / L^3 (small deflection, 1 %)
TEST(ForceCallback, SpringOnACantileverTipMatchesBeamTheory) {
  const Real I = kPi * std::pow(kRadius, 4) / 4;
  const Real kb = 3 * kE * I / std::pow(kLength, 3);
  const Real h = 1e-3;
  for (bool symmetric : {true, false}) {
    SceneBuilder b = cantilever(IntegratorKind::kStatic, 0.5);
    const auto model = build_model(b.build());
    const int tip = model->nnode - 1;
    const Vec3 p = vec3(model->node_x0[3 * tip], 0, h);
    for (Real k : {0.5 * kb, 2 * kb}) {
      Simulator sim(model);
      sim.set_force_callback(spring(tip, p, k), symmetric);
      for (int s = 0; s < 2; ++s)
        ASSERT_TRUE(sim.step().ok());
      const Real delta = sim.state().q[3 * tip + 2];
      const Real theory = k * h / (kb + k);
      std::printf("spring on the tip (k = %.3g N/m, %s): delta %.6e m, theory %.6e m (%s)\n", k,
                  symmetric ? "symmetric" : "LU", delta, theory, sim.linear_solver_name().c_str());
      EXPECT_NEAR(delta, theory, 0.01 * theory);
      // the clamp's reactions balance the spring: their z components sum to -F_z
      const std::vector<Real> rx = sim.reactions();
      Real rz = 0;
      for (int n = 0; n < model->nnode; ++n)
        rz += rx[3 * n + 2];
      const Real fz = -k * (delta - h);
      EXPECT_NEAR(rz, -fz, 1e-6 * std::fabs(fz));
    }
  }
}

TEST(ForceCallback, AnEntryOutsideThePatternIsAnErrorAndTheStateStays) {
  const auto model = build_model(cantilever(IntegratorKind::kImplicitEuler, 2e-3).build());
  Simulator sim(model);
  ASSERT_TRUE(sim.step().ok());
  const State before = sim.state();
  const int a = 3 * (model->nnode - 1), b = 3 * (model->nnode / 2);  // nodes far apart
  sim.set_force_callback([=](ForceEval& e) { e.add_jacobian(a, b, 1); });
  try {
    sim.step();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the Jacobian's pattern"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(sim.state().q, before.q);
  EXPECT_EQ(sim.state().u, before.u);
  EXPECT_EQ(sim.state().step, before.step);
  // removed, the steps go on as before
  sim.set_force_callback(nullptr);
  EXPECT_TRUE(sim.step().ok());
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
