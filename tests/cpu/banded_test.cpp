// Banded LU (include/slender/core/banded.h) and its use as the CPU solver kind kBanded: the
// factors solve random non-symmetric banded systems like a dense LU; the reverse Cuthill-McKee
// order gives a rod's Jacobian the narrow band it should have; a zero pivot falls back to a
// pivoting solver with the right answer; kAuto picks the band for rods and not for shells.

#include "slender/core/banded.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "physics/physics_util.h"
#include "slender/builder.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/ordering.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

TEST(BandedLu, SolvesRandomNonSymmetricBandedSystems) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int w : {0, 1, 3, 10}) {
    const int n = 60, s = 2 * w + 1;
    std::vector<double> dense(size_t(n) * n, 0), band(size_t(n) * s, 0);
    for (int i = 0; i < n; ++i)
      for (int j = std::max(0, i - w); j <= std::min(n - 1, i + w); ++j) {
        const double v = i == j ? 4 * (w + 1) + u(rng) : u(rng);
        dense[size_t(i) * n + j] = v;
        band[size_t(i) * s + (j - i + w)] = v;
      }
    std::vector<double> x_true(n), b(n, 0);
    for (int i = 0; i < n; ++i)
      x_true[i] = u(rng);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        b[i] += dense[size_t(i) * n + j] * x_true[j];
    ASSERT_TRUE(band_lu_factor(band.data(), n, w, 1e-13));
    band_lu_solve(band.data(), n, w, b.data());
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(b[i], x_true[i], 1e-12) << "w " << w << " row " << i;
  }
}

// the cooperative factorization (band_lu_eliminate on every lane of a group, a barrier between
// columns, band_lu_multipliers on one lane a column later: what a GPU warp runs per environment)
// gives the same bits as one thread, for groups narrower and wider than the band; the lanes run
// here one after the other, in reverse order, as no lane may rely on another's order
bool cooperative_factor(std::vector<double>& band, int n, int w, int lanes) {
  const double floor = band_lu_floor(band.data(), n, w, 1e-13);
  for (int k = 0; k < n; ++k) {
    if (!band_lu_pivot_ok(band.data(), w, k, floor)) return false;
    for (int lane = lanes - 1; lane >= 0; --lane) {
      if (lane == 0 && k > 0) band_lu_multipliers(band.data(), n, w, k - 1);
      band_lu_eliminate(band.data(), n, w, k, lane, lanes);
    }
  }
  if (n > 0) band_lu_multipliers(band.data(), n, w, n - 1);
  return true;
}

TEST(BandedLu, CooperativeLanesGiveTheSameBits) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int w : {1, 3, 10, 24})
    for (int lanes : {2, 3, 7, 32}) {
      const int n = 97, s = 2 * w + 1;
      std::vector<double> band(size_t(n) * s, 0);
      for (int i = 0; i < n; ++i)
        for (int j = std::max(0, i - w); j <= std::min(n - 1, i + w); ++j)
          band[size_t(i) * s + (j - i + w)] = i == j ? 2 * (w + 1) + u(rng) : u(rng);
      std::vector<double> one = band, many = band;
      ASSERT_TRUE(band_lu_factor(one.data(), n, w, 1e-13));
      ASSERT_TRUE(cooperative_factor(many, n, w, lanes));
      EXPECT_EQ(one, many) << "w " << w << ", " << lanes << " lanes";
    }
  // a pivot that vanishes at column 1 after column 0's elimination: both fail there
  std::vector<double> bad = {0, 1, 1, 1, 1, 0, 0, 0, 1};  // [[1, 1, 0], [1, 1, 0], [0, 0, 1]]
  std::vector<double> one = bad, many = bad;
  EXPECT_FALSE(band_lu_factor(one.data(), 3, 1, 1e-13));
  EXPECT_FALSE(cooperative_factor(many, 3, 1, 4));
  EXPECT_EQ(one, many);
}

// the solve by columns on a group of lanes (band_forward_column, band_backward_column: what one
// GPU warp runs for a single system, kernels/device_solver.cu), the lanes one after the other in
// reverse order between barriers, equals the row-by-row band_lu_solve to rounding
std::vector<double> cooperative_solve(
    const std::vector<double>& band, int n, int w, std::vector<double> x, int lanes) {
  for (int k = 0; k + 1 < n; ++k)
    for (int lane = lanes - 1; lane >= 0; --lane)
      band_forward_column(band.data(), n, w, k, x.data(), lane, lanes);
  std::vector<double> out(size_t(n), 0);
  for (int i = n - 1; i >= 0; --i) {
    // every lane reads x[i] before any lane changes a row above it (the barrier's effect)
    std::vector<double> xi(static_cast<size_t>(lanes));
    for (int lane = lanes - 1; lane >= 0; --lane)
      xi[size_t(lane)] = band_backward_column(band.data(), w, i, x.data(), lane, lanes,
                                              1 / band[size_t(i) * (2 * w + 1) + w]);
    for (int lane = 1; lane < lanes; ++lane)
      EXPECT_EQ(xi[size_t(lane)], xi[0]);
    out[size_t(i)] = xi[0];
  }
  return out;
}

TEST(BandedLu, SolveByColumnsOnLanesMatchesTheRowSweep) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int w : {1, 3, 10, 24, 40})
    for (int lanes : {1, 5, 32}) {
      const int n = 83, s = 2 * w + 1;
      std::vector<double> band(size_t(n) * s, 0);
      for (int i = 0; i < n; ++i)
        for (int j = std::max(0, i - w); j <= std::min(n - 1, i + w); ++j)
          band[size_t(i) * s + (j - i + w)] = i == j ? 2 * (w + 1) + u(rng) : u(rng);
      ASSERT_TRUE(band_lu_factor(band.data(), n, w, 1e-13));
      std::vector<double> b(static_cast<size_t>(n));
      for (double& v : b)
        v = u(rng);
      std::vector<double> rows = b;
      band_lu_solve(band.data(), n, w, rows.data());
      const std::vector<double> cols = cooperative_solve(band, n, w, b, lanes);
      double scale = 0;
      for (double v : rows)
        scale = std::max(scale, std::fabs(v));
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR(cols[size_t(i)], rows[size_t(i)], 1e-13 * scale)
            << "w " << w << ", " << lanes << " lanes, row " << i;
    }
}

TEST(BandedLu, ZeroPivotFails) {
  // [[0, 1], [1, 0]]: LU without pivoting has no first pivot
  std::vector<double> band = {0, 0, 1, 1, 0, 0};
  EXPECT_FALSE(band_lu_factor(band.data(), 2, 1, 1e-13));
}

std::shared_ptr<const Model> rod(int nodes) { return test::clamped_rod(nodes, 0.5); }

TEST(BandedLu, RodJacobianHasANarrowBandInRcmOrder) {
  const auto m = rod(200);
  const AssemblyPlan& p = m->plan;
  const std::vector<int> order = reverse_cuthill_mckee(p.nfree, p.row_ptr, p.col);
  const PermutedPattern q = permute_pattern(p.nfree, p.row_ptr, p.col, order);
  // a bend-twist stencil spans three nodes and two twists: 11 DOFs, so a band of about 10
  EXPECT_LE(half_bandwidth(p.nfree, q.row_ptr, q.col), 12);
  // the model's own numbering (twists after all positions) is as wide as the rod
  EXPECT_GT(half_bandwidth(p.nfree, p.row_ptr, p.col), 400);
}

TEST(BandedLu, AutoChoosesTheBandForRodsAndNewtonMatchesCholesky) {
  const auto m = rod(60);
  cpu::LinearSolver ls(m->plan, LinearSolverKind::kAuto);
  EXPECT_EQ(ls.name(), "banded-lu");
  Simulator banded(m, m->scene.integrator, LinearSolverKind::kBanded);
  Simulator sparse(m, m->scene.integrator, LinearSolverKind::kSparseLu);
  EXPECT_EQ(banded.linear_solver_name(), "banded-lu");
  for (int k = 0; k < 20; ++k) {
    const StepReport a = banded.step(), b = sparse.step();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a.iterations, b.iterations);
  }
  Real d = 0, s = 0;
  for (int i = 0; i < m->ndof; ++i) {
    d = std::max(d, std::fabs(banded.state().q[i] - sparse.state().q[i]));
    s = std::max(s, std::fabs(sparse.state().q[i]));
  }
  EXPECT_LT(d, 1e-10 * s);
}

TEST(BandedLu, ZeroPivotFallsBackToAPivotingSolver) {
  // [[0, 1], [1, 0]]: no symmetric reordering gives LU without pivoting a nonzero pivot
  AssemblyPlan p;
  p.nfree = 2;
  p.row_ptr = {0, 2, 4};
  p.col = {0, 1, 0, 1};
  cpu::LinearSolver ls(p, LinearSolverKind::kBanded, false);
  const double v[] = {0, 1, 1, 0};
  std::copy(v, v + 4, ls.values());
  ASSERT_TRUE(ls.factorize());
  EXPECT_TRUE(ls.used_fallback());
  const double b[2] = {1, 2};
  double x[2];
  ASSERT_TRUE(ls.solve(b, x));
  EXPECT_NEAR(x[0], 2, 1e-12);
  EXPECT_NEAR(x[1], 1, 1e-12);
}

TEST(BandedLu, AutoDoesNotChooseTheBandForAShellPlate) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.2, 0, 0), vec3(0, 0.2, 0), 0.01, true, mat,
                    1e-3);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  const auto m = build_model(b.spec());
  cpu::LinearSolver ls(m->plan, LinearSolverKind::kAuto);
  EXPECT_NE(ls.name(), "banded-lu");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
