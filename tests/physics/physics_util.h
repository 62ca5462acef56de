#pragma once

// Helpers of the physics validation suites (BENCHMARKS.md V1, V3, V4 and the Newton checks):
// node positions, time series of one coordinate, periods from zero crossings.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "slender/stencils/contact_distance.h"
#include "test_util.h"

namespace slender::test {

/// position of global node n in a state [m]
inline Vec3 node_position(const State& s, int n) {
  return vec3(s.q[3 * size_t(n)], s.q[3 * size_t(n) + 1], s.q[3 * size_t(n) + 2]);
}

/// path of a file of tests/data
inline std::string data_path(const std::string& name) {
  return std::string(SLENDER_TEST_DATA_DIR) + "/" + name;
}

/// Fails if the state counted any warning (none is expected in these well-posed scenes).
inline ::testing::AssertionResult no_warnings(const Simulator& sim) {
  const State& s = sim.state();
  if (s.warn_degenerate != 0 || s.warn_linear_fallback != 0 || s.warn_line_search != 0) {
    return ::testing::AssertionFailure()
           << "warnings: degenerate " << s.warn_degenerate << ", linear fallback "
           << s.warn_linear_fallback << ", line search " << s.warn_line_search;
  }
  return ::testing::AssertionSuccess();
}

/// Steps the simulator n times; fails (and stops) at the first failed step, and fails if the
/// state counted any warning.
inline ::testing::AssertionResult run_steps(Simulator& sim, long n) {
  for (long i = 0; i < n; ++i) {
    const StepReport r = sim.step();
    if (!r.ok()) {
      return ::testing::AssertionFailure()
             << "step " << sim.state().step << " at t = " << sim.state().time
             << " failed: " << to_string(r.status) << " after " << r.iterations
             << " iterations, residual " << r.residual;
    }
  }
  return no_warnings(sim);
}

/// |J - J_fd| / |J_fd| (Frobenius) of the assembled free-DOF Jacobian against central
/// differences of Simulator::residual at y = the state's configuration, where the frames are
/// exact. step(y_d) is the difference step for the coordinate whose value is y_d.
template <class Step>
Real residual_fd_error(const Simulator& sim, Real dt, Step step) {
  const AssemblyPlan& p = sim.model().plan;
  const std::vector<Real> y = sim.state().q;
  std::vector<Real> f, J, fp, fm;
  sim.residual(dt, y, f, &J);
  EXPECT_EQ(int(f.size()), p.nfree);
  EXPECT_EQ(J.size(), size_t(p.nfree) * p.nfree);
  Real diff = 0, ref = 0;
  for (int c = 0; c < p.nfree; ++c) {
    const int d = p.free_dof[c];
    const Real h = step(y[d]);
    std::vector<Real> yp = y, ym = y;
    yp[d] += h;
    ym[d] -= h;
    sim.residual(dt, yp, fp, nullptr);
    sim.residual(dt, ym, fm, nullptr);
    for (int r = 0; r < p.nfree; ++r) {
      const Real fd = (fp[r] - fm[r]) / (2 * h);
      const Real a = J[size_t(r) * p.nfree + c];
      diff += (a - fd) * (a - fd);
      ref += fd * fd;
    }
  }
  return std::sqrt(diff) / std::max(std::sqrt(ref), kFloor);
}

/// A scene solved statically: the model and a simulator that has taken `load_steps` equal
/// load steps (the builder's integrator is set to static over t in [0, 1]); each step is
/// expected to converge.
struct StaticSolve {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Simulator> sim;
};
inline StaticSolve static_solve(SceneBuilder& b, int load_steps = 1) {
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().dt = 1.0 / load_steps;
  b.integrator().duration = 1;
  StaticSolve out;
  out.model = build_model(b.build());
  out.sim = std::make_unique<Simulator>(out.model);
  for (int k = 0; k < load_steps; ++k)
    EXPECT_TRUE(out.sim->step().ok()) << "load step " << k;
  return out;
}

/// A sampled signal z(t) (equal or unequal spacing).
struct Series {
  std::vector<Real> t, z;
  void add(Real time, Real value) {
    t.push_back(time);
    z.push_back(value);
  }
  /// times at which z crosses zero going up, linearly interpolated
  std::vector<Real> upward_crossings() const {
    std::vector<Real> c;
    for (size_t i = 1; i < z.size(); ++i)
      if (z[i - 1] < 0 && z[i] >= 0) {
        const Real w = -z[i - 1] / (z[i] - z[i - 1]);
        c.push_back(t[i - 1] + w * (t[i] - t[i - 1]));
      }
    return c;
  }
  /// mean period between the first and last upward crossings; 0 if fewer than two
  Real period() const {
    const std::vector<Real> c = upward_crossings();
    if (c.size() < 2) return 0;
    return (c.back() - c.front()) / Real(c.size() - 1);
  }
  /// largest |z| over samples with t in [t0, t1]
  Real max_abs(Real t0, Real t1) const {
    Real m = 0;
    for (size_t i = 0; i < z.size(); ++i)
      if (t[i] >= t0 && t[i] <= t1) m = std::max(m, std::fabs(z[i]));
    return m;
  }
};

/// A straight rod of `nodes` nodes along x, `length` long (r = 3 mm, E = 1 MPa), clamped at its
/// first edge, under gravity: a Jacobian in a narrow band.
inline std::shared_ptr<const Model> clamped_rod(int nodes, Real length) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r = b.straight_rod("r", vec3(0, 0, 0), vec3(length, 0, 0), nodes, mat,
                               SceneBuilder::circle(0.003));
  b.fix_edge(r, 0);
  b.gravity(vec3(0, 0, -9.8));
  return build_model(b.spec());
}

/// A model's Newton system after one step of 1 ms from its initial state: the free-DOF
/// Jacobian's CSR values (in the assembly plan's slot order) and the residual at the step's end.
struct NewtonSystem {
  std::shared_ptr<const Model> m;
  std::vector<Real> val, f;
  explicit NewtonSystem(std::shared_ptr<const Model> model) : m(std::move(model)) {
    Simulator sim(m);
    EXPECT_TRUE(sim.step(1e-3).ok());
    std::vector<Real> J;
    sim.residual(1e-3, sim.state().q, f, &J);
    const AssemblyPlan& p = m->plan;
    val.resize(size_t(p.nnz()));
    for (int r = 0; r < p.nfree; ++r)
      for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
        val[size_t(k)] = J[size_t(r) * p.nfree + p.col[k]];
  }
};

/// A 0.1 m square plate (edge 0.02: a 6 x 6 grid of nodes; 1 mm, E = 1 MPa, nu = 0.3, spring
/// membrane), clamped along x = 0, sagging under gravity (9.8); implicit Euler at dt = 5 ms.
inline std::shared_ptr<const Model> clamped_plate(ShellBending bending, Real edge = 0.02) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int s = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), edge,
                                  true, mat, 1e-3, bending);
  b.membrane(s, MembraneModel::kSprings);
  const PartSpec& part = b.part(s);
  for (int i = 0; i < int(part.nodes.size()); ++i)
    if (part.nodes[i][0] <= 1e-12) b.fix_node(s, i);
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 5e-3;
  return build_model(b.build());
}

/// A small shell plate (4 x 3 cm, 1 cm edges, 1 mm, two corner nodes fixed) with a rod post
/// jointed to its last corner, tilted gravity, a load at the post's tip and aerodynamic drag (a
/// non-symmetric Jacobian; without `loads`, neither the load nor the drag: a symmetric one);
/// dt = 0.01 s.
inline std::shared_ptr<const Model> plate_with_post(ShellBending bending, bool loads = true) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int plate = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.04, 0, 0), vec3(0, 0.03, 0),
                                      0.01, false, mat, 1e-3, bending);
  b.membrane(plate, MembraneModel::kSprings);
  const Vec3 c = b.part(plate).nodes.back();
  const int rod =
      b.straight_rod("post", c, c + vec3(0.01, 0.005, 0.02), 5, mat, SceneBuilder::circle(1e-3));
  b.joint({NodeRef{plate, -1, {}}, NodeRef{rod, 0, {}}});
  b.fix_node(plate, 0).fix_node(plate, 1);
  b.gravity(vec3(0.3, -0.2, -9.8));
  if (loads) {
    b.point_load(rod, -1, vec3(1e-3, 2e-3, 0));
    b.spec().forces.drag_density = 1.2;
    b.spec().forces.drag_coefficient = 1;
  }
  b.integrator().dt = 0.01;
  return build_model(b.build());
}

/// A hinge plate (4 x 3 cm, 1 cm edges, 1 mm, two corner nodes fixed) under tilted gravity and a
/// follower pressure of 2 Pa (its normals turn with the plate: a non-symmetric load, the
/// family's signal 0); dt = 0.01 s.
inline SceneBuilder follower_pressure_plate() {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int plate = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.04, 0, 0), vec3(0, 0.03, 0),
                                      0.01, false, mat, 1e-3, ShellBending::kHinge);
  b.membrane(plate, MembraneModel::kSprings);
  b.fix_node(plate, 0).fix_node(plate, 1);
  b.family_input(FamilyInput{"follower_pressure"}.part("part", "plate").number("pressure", 2));
  b.gravity(vec3(0.3, -0.2, -9.8));
  b.integrator().dt = 0.01;
  return b;
}

/// Expects call() to throw slender::Error with `words` in its message.
template <class Call>
void expect_error(Call&& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one mentioning '" << words << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

/// A model the vectorized batch refuses (an error mentioning `words`) and the per-environment
/// batch steps (two environments, one converged step each).
inline void expect_per_environment_batch_only(const std::shared_ptr<const Model>& m,
                                              const std::string& words) {
  expect_error(
      [&] {
        BatchedSimulator(m, 2, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
      },
      words);
  BatchedSimulator per_env(m, 2);
  per_env.step();
  for (int e = 0; e < 2; ++e)
    EXPECT_EQ(per_env.reports()[size_t(e)].status, StepStatus::kConverged) << "environment " << e;
}

/// The closest approach [m] of two rod edges of m in state s that share no node and are not
/// neighbours along one rod (an arc gap below `skip`: they would touch even when straight, so
/// they are not contact pairs). Pairs of different parts closer than `touch` go into *touching.
inline Real closest_rod_edges(const Model& m,
                              const State& s,
                              Real skip,
                              Real touch = 0,
                              std::set<std::pair<int, int>>* touching = nullptr) {
  Real best = std::numeric_limits<Real>::infinity();
  for (int a = 0; a < m.nedge; ++a)
    for (int b = a + 1; b < m.nedge; ++b) {
      const int nodes[4] = {m.edge_node[2 * a], m.edge_node[2 * a + 1], m.edge_node[2 * b],
                            m.edge_node[2 * b + 1]};
      if (nodes[0] == nodes[2] || nodes[0] == nodes[3] || nodes[1] == nodes[2] ||
          nodes[1] == nodes[3])
        continue;
      const Real gap = m.rod_gap(a, b);
      if (gap >= 0 && gap < skip) continue;
      Vec<12> x;
      for (int k = 0; k < 4; ++k)
        x.set_segment(3 * k, node_position(s, nodes[k]));
      ContactDistance d;
      edge_edge_distance(x, kEnergy, d, nullptr, nullptr);
      best = std::min(best, d.delta);
      const int pa = m.edge_part[a], pb = m.edge_part[b];
      if (touching && pa != pb && d.delta < touch) touching->insert({pa, pb});
    }
  return best;
}

/// a cantilever (16 edges, 0.3 m) clamped at edge 0, dt = 2 ms, for prescribed motion by the
/// caller's targets (clamp_targets)
inline std::shared_ptr<const Model> clamped_rod_for_targets(IntegratorKind kind, bool gravity) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0);
  if (gravity) b.gravity(vec3(0, 0, -9.8));
  b.integrator().kind = kind;
  b.integrator().dt = 2e-3;
  return build_model(b.build());
}

/// targets of every fixed DOF of that rod for environment e at the end of step s: the clamp
/// moves up and down (amplitude 1 cm (e + 1)) and turns at 0.5 e rad/s
inline std::vector<Real> clamp_targets(const Model& m, int e, int s) {
  std::vector<Real> out(m.fixed_dof.size());
  const Real t = (s + 1) * m.scene.integrator.dt;
  for (size_t j = 0; j < out.size(); ++j) {
    const int dof = m.fixed_dof[j];
    const bool node = dof < 3 * m.nnode;
    out[j] = (node ? m.node_x0[size_t(dof)] : 0) +
             (node && dof % 3 == 2 ? 0.01 * (e + 1) * std::sin(40 * t) : 0) +
             (node ? 0 : 0.5 * e * t);
  }
  return out;
}

}  // namespace slender::test
