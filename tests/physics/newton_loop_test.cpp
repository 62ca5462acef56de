// The Newton loop every engine runs (core/newton.h), on one-unknown problems whose behaviour is
// known: each environment converges, fails or warns on its own, and B environments stepped
// together give each environment the bits it gets alone (what makes a batch reproduce single
// runs, and B = 1 the stepper's case).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "slender/core/newton.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

/// The kinds of one-unknown problems: the residual f(x), its derivative and the potential phi
/// with phi' = f.
enum class Problem {
  kAtan,       // f = atan x: plain Newton diverges from |x| > 1.39, the line search saves it
  kCubic,      // f = x^3 - 8, root 2
  kNoSolve,    // the cubic, but the linear solve fails at the second iteration
  kWrongSign,  // f = x - 1 with a direction of the wrong sign: no trial decreases anything
  kNan,        // f = x - 1 for x > 0, NaN else; from x = 3 the full step lands at -1
};

Real residual(Problem p, Real x) {
  switch (p) {
    case Problem::kAtan:
      return std::atan(x);
    case Problem::kCubic:
    case Problem::kNoSolve:
      return x * x * x - 8;
    case Problem::kNan:
      return x > 0 ? x - 1 : NAN;
    default:
      return x - 1;
  }
}
Real potential(Problem p, Real x) {
  switch (p) {
    case Problem::kAtan:
      return x * std::atan(x) - 0.5 * std::log1p(x * x);
    case Problem::kCubic:
    case Problem::kNoSolve:
      return 0.25 * x * x * x * x - 8 * x;
    case Problem::kNan:
      return x > 0 ? 0.5 * (x - 1) * (x - 1) : NAN;
    default:
      return 0.5 * (x - 1) * (x - 1);
  }
}
Real derivative(Problem p, Real x) {
  switch (p) {
    case Problem::kAtan:
      return 1 / (1 + x * x);
    case Problem::kCubic:
    case Problem::kNoSolve:
      return 3 * x * x;
    case Problem::kWrongSign:
      return -1;
    case Problem::kNan:
      return 0.5;  // a direction twice as long as Newton's: x = 3 -> -1
    default:
      return 1;
  }
}

/// What one run of the loop leaves: the iterates, reports and warnings, and which environments
/// each operation was asked about.
struct LoopRun {
  std::vector<Real> x;
  std::vector<StepReport> reps;
  std::vector<long> warnings;
  EnvMask done;
  std::vector<int> trials, solves;  // per environment: how often it was in a mask
};

LoopRun run_loop(const NewtonSpec& ns,
                 const std::vector<Problem>& probs,
                 const std::vector<Real>& x0,
                 const EnvMask& want,
                 bool fused = false) {
  const int B = int(probs.size());
  LoopRun out;
  out.x = x0;
  out.reps.assign(B, StepReport{});
  out.warnings.assign(B, 0);
  out.trials.assign(B, 0);
  out.solves.assign(B, 0);
  std::vector<Real> dx(B, 0), xt(B, 0), r(B), phi(B);
  for (int e = 0; e < B; ++e) {
    r[e] = std::fabs(residual(probs[e], x0[e]));
    phi[e] = potential(probs[e], x0[e]);
  }
  Real seconds = 0;
  auto solve = [&](const EnvMask& running, std::vector<NewtonDirection>& d) {
    for (int e = 0; e < B; ++e) {
      if (!running[e]) continue;
      ++out.solves[e];
      const Real f = residual(probs[e], out.x[e]);
      dx[e] = f / derivative(probs[e], out.x[e]);
      d[e].solved = !(probs[e] == Problem::kNoSolve && out.solves[e] == 2);
      d[e].slope = dx[e] * f;
      d[e].dx_max = std::fabs(dx[e]);
    }
  };
  auto trial = [&](const EnvMask& mask, const std::vector<Real>& alpha, std::vector<Real>& r_new,
                   std::vector<Real>& phi_new) {
    for (int e = 0; e < B; ++e) {
      if (!mask[e]) continue;
      ++out.trials[e];
      xt[e] = out.x[e] - alpha[e] * dx[e];
      r_new[e] = std::fabs(residual(probs[e], xt[e]));
      phi_new[e] = potential(probs[e], xt[e]);
    }
  };
  // fused: each direction with its full step's trial, for every running environment (a failed
  // direction's trial too, which the loop must ignore)
  auto direction = [&](const EnvMask& running, std::vector<NewtonDirection>& d,
                       std::vector<Real>& r_new, std::vector<Real>& phi_new) {
    solve(running, d);
    if (fused) trial(running, std::vector<Real>(size_t(B), 1), r_new, phi_new);
    return fused;
  };
  out.done =
      newton_iterations(ns, want, EnvMask(B, 0), r, phi, out.reps.data(), out.warnings.data(),
                        seconds, direction, trial, [&](const EnvMask& mask) {
                          for (int e = 0; e < B; ++e)
                            if (mask[e]) out.x[e] = xt[e];
                        });
  return out;
}

bool same_bits(Real a, Real b) { return std::memcmp(&a, &b, sizeof a) == 0; }

const std::vector<Problem> kProblems = {Problem::kAtan,      Problem::kCubic, Problem::kNoSolve,
                                        Problem::kWrongSign, Problem::kNan,   Problem::kCubic};
const std::vector<Real> kStart = {3, 1, 5, 4, 3, 7};

TEST(NewtonLoop, EachEnvironmentEndsOnItsOwn) {
  NewtonSpec ns;
  EnvMask want(kProblems.size(), 1);
  want[5] = 0;  // not stepped
  const LoopRun r = run_loop(ns, kProblems, kStart, want);
  // atan from 3: the line search halves the first steps, then Newton converges to 0
  EXPECT_EQ(r.reps[0].status, StepStatus::kConverged);
  EXPECT_NEAR(r.x[0], 0, 1e-8);
  EXPECT_GT(r.trials[0], r.reps[0].iterations);  // some steps were halved
  // the cubic converges quadratically to its root
  EXPECT_EQ(r.reps[1].status, StepStatus::kConverged);
  EXPECT_NEAR(r.x[1], 2, 1e-9);
  EXPECT_LE(r.reps[1].iterations, 10);
  // a failed solve at the second iteration fails that environment after one iteration
  EXPECT_EQ(r.reps[2].status, StepStatus::kLinearSolveFailed);
  EXPECT_EQ(r.reps[2].iterations, 1);
  EXPECT_EQ(r.solves[2], 2);
  // a direction that ascends: every line search ends without decrease (a warning each), the
  // best trial (the shortest) is taken, and the step fails at max_iters
  EXPECT_EQ(r.reps[3].status, StepStatus::kMaxIters);
  EXPECT_EQ(r.reps[3].iterations, ns.max_iters);
  EXPECT_EQ(r.warnings[3], ns.max_iters);
  EXPECT_EQ(r.trials[3], ns.max_iters * 12);  // 11 trials and the best one again
  // the full step lands where the residual is NaN: halved once, then it converges
  EXPECT_EQ(r.reps[4].status, StepStatus::kConverged);
  EXPECT_NEAR(r.x[4], 1, 1e-9);
  EXPECT_EQ(r.warnings[4], 0);
  // the environment not stepped is never asked about and its report is untouched
  EXPECT_EQ(r.trials[5] + r.solves[5], 0);
  EXPECT_EQ(r.reps[5].iterations, 0);
  EXPECT_EQ(r.x[5], kStart[5]);
  EXPECT_EQ(r.done, (EnvMask{1, 1, 0, 0, 1, 0}));
  EXPECT_EQ(r.reps[1].residual0, std::fabs(residual(Problem::kCubic, 1)));
}

TEST(NewtonLoop, TogetherEachEnvironmentGetsTheBitsItGetsAlone) {
  for (const bool line_search : {true, false}) {
    NewtonSpec ns;
    ns.line_search = line_search;
    const EnvMask all(kProblems.size(), 1);
    const LoopRun together = run_loop(ns, kProblems, kStart, all);
    for (size_t e = 0; e < kProblems.size(); ++e) {
      const LoopRun alone = run_loop(ns, {kProblems[e]}, {kStart[e]}, EnvMask(1, 1));
      SCOPED_TRACE(testing::Message() << "environment " << e << ", line search " << line_search);
      EXPECT_TRUE(same_bits(together.x[e], alone.x[0]));
      EXPECT_EQ(together.reps[e].status, alone.reps[0].status);
      EXPECT_EQ(together.reps[e].iterations, alone.reps[0].iterations);
      EXPECT_TRUE(same_bits(together.reps[e].residual, alone.reps[0].residual));
      EXPECT_EQ(together.warnings[e], alone.warnings[0]);
      EXPECT_EQ(together.trials[e], alone.trials[0]);
    }
  }
}

// A direction evaluated together with its full step's trial (a direction that takes the first
// trial, the engine's one read of both): the same iterates, reports and warnings as each apart,
// with one trial more only where a direction failed (evaluated, then ignored)
TEST(NewtonLoop, DirectionsFusedWithTheirFirstTrialGiveTheSameBits) {
  for (const bool line_search : {true, false}) {
    NewtonSpec ns;
    ns.line_search = line_search;
    const EnvMask all(kProblems.size(), 1);
    const LoopRun apart = run_loop(ns, kProblems, kStart, all);
    const LoopRun fused = run_loop(ns, kProblems, kStart, all, /*fused=*/true);
    EXPECT_EQ(apart.done, fused.done);
    for (size_t e = 0; e < kProblems.size(); ++e) {
      SCOPED_TRACE(testing::Message() << "environment " << e << ", line search " << line_search);
      EXPECT_TRUE(same_bits(apart.x[e], fused.x[e]));
      EXPECT_EQ(apart.reps[e].status, fused.reps[e].status);
      EXPECT_EQ(apart.reps[e].iterations, fused.reps[e].iterations);
      EXPECT_TRUE(same_bits(apart.reps[e].residual, fused.reps[e].residual));
      EXPECT_EQ(apart.warnings[e], fused.warnings[e]);
      EXPECT_EQ(apart.solves[e], fused.solves[e]);
      const int failed = apart.reps[e].status == StepStatus::kLinearSolveFailed ? 1 : 0;
      EXPECT_EQ(apart.trials[e] + failed, fused.trials[e]);
    }
  }
}

TEST(NewtonLoop, WithoutTheLineSearchAtanDiverges) {
  NewtonSpec ns;
  ns.line_search = false;
  const LoopRun r = run_loop(ns, {Problem::kAtan}, {3}, EnvMask(1, 1));
  EXPECT_NE(r.reps[0].status, StepStatus::kConverged);
  ns.line_search = true;
  EXPECT_EQ(run_loop(ns, {Problem::kAtan}, {3}, EnvMask(1, 1)).reps[0].status,
            StepStatus::kConverged);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
