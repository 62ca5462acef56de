// The predictor's sums read with the first Newton direction's (Engine::fused_first_mask, issue
// 47): where the executor reads across a bus, the first direction of an environment whose last
// step iterated is taken before its predictor's residual is read, so that a step of one Newton
// iteration reads the host once. Forced on here on the host executor
// (SLENDER_FUSED_PREDICTOR_READ=1), it must give the bits of the plain order in every case:
// steps that iterate, a step that converges at its predictor after one that iterated (the
// speculative direction and trial ignored, the predictor evaluated again: its degenerate
// stencils are counted as before), one that fails at its predictor, on a Simulator and in the
// vectorized batch with environments of each kind side by side.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "slender/backend.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/status.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// SLENDER_FUSED_PREDICTOR_READ set for the engines made in its scope (read when one is made)
struct FusedRead : test::ScopedEnv {
  explicit FusedRead(bool on) : ScopedEnv("SLENDER_FUSED_PREDICTOR_READ", on ? "1" : "0") {}
};

bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}
bool same_bits(Real a, Real b) { return std::memcmp(&a, &b, sizeof(Real)) == 0; }

// A rod folded back onto itself at one node (its bend-twist stencil there is degenerate: counted
// at every step's end), clamped at one end, without gravity: at rest its predictor is the step's
// solution; a force at its tip makes it iterate
std::shared_ptr<const Model> folded_rod() {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int r = b.polyline_rod("r",
                               {vec3(0, 0, 0), vec3(0.01, 0, 0), vec3(0.02, 0, 0), vec3(0.01, 0, 0),
                                vec3(0, 0, 1e-3), vec3(-0.01, 0, 2e-3)},
                               mat, SceneBuilder::circle(1e-4));
  b.fix_edge(r, 0);
  b.gravity(vec3(0, 0, 0));
  return build_model(b.build());
}

std::vector<Real> tip_force(const Model& m, Real fz) {
  std::vector<Real> f(size_t(3 * m.nnode), 0);
  f[size_t(3 * (m.nnode - 1) + 2)] = fz;
  return f;
}

// a tip force that makes the rod iterate (14 Newton iterations from rest) [N]
constexpr Real kPush = 1e-5;

struct Stepped {
  std::vector<StepReport> reports;
  std::vector<State> states;
  ExecutorCounts counts;  // (the host executor's tally of the steps)
};

void expect_same(const Stepped& a, const Stepped& b) {
  ASSERT_EQ(a.reports.size(), b.reports.size());
  for (size_t k = 0; k < a.reports.size(); ++k) {
    SCOPED_TRACE(testing::Message() << "step " << k);
    const StepReport &ra = a.reports[k], &rb = b.reports[k];
    EXPECT_EQ(ra.status, rb.status);
    EXPECT_EQ(ra.iterations, rb.iterations);
    EXPECT_TRUE(same_bits(ra.residual, rb.residual));
    EXPECT_TRUE(same_bits(ra.residual0, rb.residual0));
    const State &sa = a.states[k], &sb = b.states[k];
    EXPECT_TRUE(same_bits(sa.q, sb.q));
    EXPECT_TRUE(same_bits(sa.u, sb.u));
    EXPECT_TRUE(same_bits(sa.a, sb.a));
    EXPECT_TRUE(same_bits(sa.time, sb.time));
    EXPECT_TRUE(same_bits(sa.edge_d1, sb.edge_d1));
    EXPECT_EQ(sa.warn_degenerate, sb.warn_degenerate);
    EXPECT_EQ(sa.warn_linear_fallback, sb.warn_linear_fallback);
    EXPECT_EQ(sa.warn_line_search, sb.warn_line_search);
  }
}

// the schedule: a force (steps 0-2: iterating), none (3-4: swinging back), the rest state again
// (5: converged at its predictor right after iterating steps; 6: again), the force (7-8)
Stepped run_simulator(const std::shared_ptr<const Model>& m, bool fused, long* factorizations) {
  const FusedRead env(fused);
  Simulator sim(m);
  const State rest = sim.state();
  Stepped out;
  reset_executor_counts();
  for (int k = 0; k < 9; ++k) {
    sim.set_external_forces(tip_force(*m, k <= 2 || k >= 7 ? kPush : 0));
    if (k == 5) sim.set_state(rest);
    out.reports.push_back(sim.step());
    out.states.push_back(sim.state());
  }
  out.counts = executor_counts();
  if (factorizations) *factorizations = sim.phase_times().factorizations;
  return out;
}

TEST(FusedPredictorRead, ASimulatorStepsTheSameBits) {
  const auto m = folded_rod();
  long fact_plain = 0, fact_fused = 0;
  const Stepped plain = run_simulator(m, false, &fact_plain);
  const Stepped fused = run_simulator(m, true, &fact_fused);
  // the schedule does what it says: iterating steps, then steps converged at their predictor
  for (int k : {0, 1, 2, 3, 4, 7, 8}) {
    EXPECT_TRUE(plain.reports[size_t(k)].ok()) << "step " << k;
    EXPECT_GT(plain.reports[size_t(k)].iterations, 0) << "step " << k;
  }
  for (int k : {5, 6}) {
    EXPECT_TRUE(plain.reports[size_t(k)].ok()) << "step " << k;
    EXPECT_EQ(plain.reports[size_t(k)].iterations, 0) << "step " << k;
  }
  // the fold's degenerate stencil counted at the ends of steps that saw it
  EXPECT_GT(plain.states.back().warn_degenerate, 0);
  expect_same(plain, fused);
  // the factorizations counted are those of the directions Newton took
  EXPECT_EQ(fact_plain, fact_fused);
  // the directions taken ahead: at steps 2 to 5, after two or more steps that iterated. Steps
  // 2 to 4 read the host once less each; step 5's (converged at its predictor) was a band
  // factorization and solve for nothing, and its read of both no more than the predictor's
  // alone (its predictor evaluated again without one). The band's pivot too small (in the
  // fold's first iterations at steps 0 and 7, once each: the fallbacks counted before and after
  // step 5's reset): its status read with the slope, the sparse path's factorization and solve
  // after the band's, and the slope and trial read again
  const long fallbacks =
      plain.states[4].warn_linear_fallback + plain.states[8].warn_linear_fallback;
  EXPECT_GT(fallbacks, 0);
  EXPECT_EQ(fused.counts.direct_calls, plain.counts.direct_calls + 2 + 2 * fallbacks);
  EXPECT_EQ(fused.counts.host_reads, plain.counts.host_reads - 3 + fallbacks);
}

// A step after an iterating one whose predictor's residual is not finite (the caller's force
// is NaN there) fails at its predictor and leaves the state as it was: its direction, taken
// ahead, is ignored
TEST(FusedPredictorRead, AStepThatFailsAtItsPredictorLeavesTheStateAsItWas) {
  const auto m = folded_rod();
  Stepped runs[2];
  for (int fused = 0; fused < 2; ++fused) {
    const FusedRead env(fused != 0);
    Simulator sim(m);
    Real push = kPush;
    sim.set_force_callback([&push, &m](ForceEval& e) { e.force[3 * (m->nnode - 1) + 2] = push; },
                           /*symmetric=*/true);
    for (int k = 0; k < 4; ++k) {
      push = k == 2 ? Real(NAN) : k == 3 ? Real(0) : kPush;
      const State before = sim.state();
      runs[fused].reports.push_back(sim.step());
      runs[fused].states.push_back(sim.state());
      if (k == 2) {
        EXPECT_EQ(runs[fused].reports.back().status, StepStatus::kNonFinite);
        EXPECT_EQ(runs[fused].reports.back().iterations, 0);
        EXPECT_TRUE(same_bits(sim.state().q, before.q));
      } else {
        EXPECT_TRUE(runs[fused].reports.back().ok()) << "step " << k;
        EXPECT_GT(runs[fused].reports.back().iterations, 0) << "step " << k;
      }
    }
  }
  expect_same(runs[0], runs[1]);
}

// A band's pivot too small (a spring of stiffness 1e25 on one DOF: every other pivot falls below
// the band's floor of 1e-13 of the largest diagonal entry): where the band's status is read with
// the direction's slope (the device's order), its solve is known to have failed only after the
// full step's trial; the iterate is evaluated again and the sparse path solves it. The same bits
// and the same fallbacks counted as the solve that reads its status at once
TEST(FusedPredictorRead, ABandsPivotTooSmallTakesTheSparsePathInTheSameBits) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.2, 0, 0), 12, mat, SceneBuilder::circle(1e-3));
  b.fix_edge(r, 0);
  b.gravity(vec3(0, 0, -9.81));
  const auto m = build_model(b.build());
  constexpr Real kStiff = 1e25;
  const int dof = 3 * 6 + 2;  // node 6's z
  const Real z0 = initial_state(*m).q[size_t(dof)];
  Stepped runs[2];
  std::string solver[2];
  for (int deferred = 0; deferred < 2; ++deferred) {
    const FusedRead env(deferred != 0);
    Simulator sim(m);
    solver[deferred] = sim.linear_solver_name();
    sim.set_force_callback(
        [&](ForceEval& e) {
          e.force[dof] = -kStiff * (e.q[dof] - z0);
          e.add_jacobian(dof, dof, -kStiff);
        },
        /*symmetric=*/true);
    for (int k = 0; k < 4; ++k) {
      runs[deferred].reports.push_back(sim.step());
      runs[deferred].states.push_back(sim.state());
      EXPECT_TRUE(runs[deferred].reports.back().ok()) << "step " << k;
    }
    // every Newton iteration's band fell back
    long iterations = 0;
    for (const StepReport& rep : runs[deferred].reports)
      iterations += rep.iterations;
    EXPECT_GT(iterations, 0);
    EXPECT_EQ(sim.state().warn_linear_fallback, iterations);
  }
  EXPECT_EQ(solver[0], "banded-lu");
  expect_same(runs[0], runs[1]);
}

// The vectorized batch: four environments of the folded rod, each on its own schedule, so that
// in one step some take their first direction ahead and use it, some converge at their
// predictor after iterating, some were at rest and start to iterate (their first direction in
// a call of their own)
Stepped run_batch(const std::shared_ptr<const Model>& m, bool fused) {
  const FusedRead env(fused);
  constexpr int kEnvs = 4, kSteps = 8;
  BatchedSimulator batch(m, kEnvs, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  const State rest = batch.state(0);
  Stepped out;
  reset_executor_counts();
  const size_t n3 = size_t(3 * m->nnode);
  for (int k = 0; k < kSteps; ++k) {
    std::vector<Real> f(kEnvs * n3, 0);
    for (int e = 0; e < kEnvs; ++e) {
      // 0: always pushed; 1: pushed from step 2; 2: pushed until step 2, then back at rest at
      // step 4; 3: pushed on even steps
      const bool push = e == 0 || (e == 1 && k >= 2) || (e == 2 && k < 2) || (e == 3 && k % 2 == 0);
      if (push) f[size_t(e) * n3 + n3 - 1] = kPush * (1 + e);
    }
    batch.set_external_forces(f.data());
    if (k == 4) batch.set_state(2, rest);
    batch.step();
    for (int e = 0; e < kEnvs; ++e) {
      out.reports.push_back(batch.reports()[size_t(e)]);
      out.states.push_back(batch.state(e));
    }
  }
  out.counts = executor_counts();
  return out;
}

TEST(FusedPredictorRead, TheVectorizedBatchStepsTheSameBits) {
  const auto m = folded_rod();
  const Stepped plain = run_batch(m, false), fused = run_batch(m, true);
  EXPECT_LT(fused.counts.host_reads, plain.counts.host_reads);
  // some environment converged at its predictor in a step after one it iterated in
  bool after_iterating = false;
  for (size_t k = 4; k < plain.reports.size(); ++k)
    after_iterating = after_iterating ||
                      (plain.reports[k].iterations == 0 && plain.reports[k - 4].iterations > 0);
  EXPECT_TRUE(after_iterating);
  for (size_t k = 0; k < plain.reports.size(); ++k)
    EXPECT_TRUE(plain.reports[k].ok()) << "step " << k / 4 << ", environment " << k % 4;
  expect_same(plain, fused);
}

// A step of S1 (one Newton iteration) reads the host once: its predictor's sums travel with the
// direction's slope and the band's status and the full step's sums (issue 47, item 4: a
// converged step of a fixed-pattern scene synchronises with the host once), and allocates
// nothing
TEST(FusedPredictorRead, AConvergedStepOfS1ReadsTheHostOnce) {
  const FusedRead env(true);
  Simulator sim(build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/bench/scenes/s1_cantilever_e1e5.json")));
  for (int k = 0; k < 2; ++k)
    ASSERT_TRUE(sim.step().ok());
  reset_executor_counts();
  constexpr int kSteps = 6;
  for (int k = 0; k < kSteps; ++k) {
    const StepReport r = sim.step();
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.iterations, 1);
  }
  EXPECT_EQ(executor_counts().host_reads, kSteps);
  // (nor does the first step that reads its predictor with its direction allocate: it is the
  // first counted here, after two that iterated)
  EXPECT_EQ(executor_counts().allocations, 0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
