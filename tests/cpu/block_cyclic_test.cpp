// Block cyclic reduction (include/slender/core/block_cyclic.h), the single-system direct solve of
// the CUDA backend's rods, run here by its host drivers: it solves random banded systems
// (non-symmetric, and symmetric positive definite) as a dense solve
// and the band's LU do, for sizes that leave the last block padded and for a single block; the
// items of each pass give the same bits in any order (what a GPU block's threads rely on); a
// zero pivot fails as the band's does, and padding rows do not.

#include "slender/core/block_cyclic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cuda/gpu_models.h"
#include "physics/physics_util.h"
#include "slender/builder.h"
#include "slender/core/banded.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/ordering.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

struct BandSystem {
  int n = 0, w = 0;
  std::vector<double> dense, band;  // dense row-major; band as band_layout stores it
};

// a random band: diagonally dominant and non-symmetric, or L L^T for a random lower band L with a
// dominant diagonal (symmetric positive definite, not diagonally dominant)
BandSystem random_band(int n, int w, bool spd, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  BandSystem s;
  s.n = n;
  s.w = w;
  s.dense.assign(size_t(n) * n, 0);
  if (spd) {
    std::vector<double> l(size_t(n) * n, 0);
    for (int i = 0; i < n; ++i)
      for (int j = std::max(0, i - w); j <= i; ++j)
        l[size_t(i) * n + j] = i == j ? (w + 1) * (1 + std::fabs(u(rng))) : u(rng);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double v = 0;
        for (int k = 0; k <= std::min(i, j); ++k)
          v += l[size_t(i) * n + k] * l[size_t(j) * n + k];
        s.dense[size_t(i) * n + j] = std::abs(i - j) <= w ? v : 0;
      }
  } else {
    for (int i = 0; i < n; ++i)
      for (int j = std::max(0, i - w); j <= std::min(n - 1, i + w); ++j)
        s.dense[size_t(i) * n + j] = i == j ? 4 * (w + 1) + u(rng) : u(rng);
  }
  const int bs = 2 * w + 1;
  s.band.assign(size_t(n) * bs, 0);
  for (int i = 0; i < n; ++i)
    for (int j = std::max(0, i - w); j <= std::min(n - 1, i + w); ++j)
      s.band[size_t(i) * bs + (j - i + w)] = s.dense[size_t(i) * n + j];
  return s;
}

// the workspace filled from the band by the map the device keeps
std::vector<double> fill(const BandSystem& s, const BcrDims& d) {
  std::vector<double> ws(size_t(bcr_workspace_size(d)), std::nan(""));
  for (long t = 0; t < 3 * bcr_block_count(d) * d.nb; ++t) {
    const long src = bcr_band_source(d, s.w, t);
    ws[size_t(bcr_fill_target(d, t))] = src >= 0 ? s.band[size_t(src)] : src == -2 ? 1.0 : 0.0;
  }
  return ws;
}

void put_rhs(std::vector<double>& ws, const BcrDims& d, const std::vector<double>& b) {
  double* f = bcr_vector(ws.data(), d);
  for (long i = 0; i < long(d.nb) * d.b; ++i)
    f[i] = i < d.n ? b[size_t(i)] : 0.0;
}

TEST(BlockCyclic, SolvesRandomBandedSystemsLikeADenseSolveAndTheBand) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  int cases = 0;
  for (bool spd : {false, true})
    for (int w : {0, 1, 3, 10, 40})  // (40: a shell's band, blocks wider than a GPU warp)
      for (int n : {1, 2, 5, 37, 61, 200}) {
        const BandSystem s = random_band(n, w, spd, rng);
        const BcrDims d = bcr_dims(n, w);
        std::vector<double> x_true(n), b(n, 0);
        for (int i = 0; i < n; ++i)
          x_true[i] = u(rng);
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j)
            b[i] += s.dense[size_t(i) * n + j] * x_true[j];
        std::vector<double> ws = fill(s, d);
        const double floor = 1e-13 * bcr_diagonal_max(ws.data(), d);
        EXPECT_EQ(floor, band_lu_floor(s.band.data(), n, w, 1e-13));
        ASSERT_TRUE(bcr_factor(ws.data(), d, floor)) << "n " << n << " w " << w;
        put_rhs(ws, d, b);
        bcr_solve(ws.data(), d);
        std::vector<double> band = s.band, xb = b;
        ASSERT_TRUE(band_lu_factor(band.data(), n, w, 1e-13));
        band_lu_solve(band.data(), n, w, xb.data());
        const double* x = bcr_vector(ws.data(), d);
        const double tol = 1e-11;
        for (int i = 0; i < n; ++i) {
          EXPECT_NEAR(x[i], x_true[i], tol) << "n " << n << " w " << w << " row " << i;
          EXPECT_NEAR(x[i], xb[size_t(i)], tol) << "n " << n << " w " << w << " row " << i;
        }
        for (long i = n; i < long(d.nb) * d.b; ++i)
          EXPECT_EQ(x[i], 0.0) << "padding row " << i;
        ++cases;
      }
  EXPECT_EQ(cases, 60);
}

TEST(BlockCyclic, LevelsGrowWithTheLogarithmOfTheBlockCount) {
  // S1's rod: 796 free DOFs in a band of about 10 -> 80 blocks, 7 levels
  const BcrDims s1 = bcr_dims(796, 10);
  EXPECT_EQ(s1.b, 10);
  EXPECT_EQ(s1.nb, 80);
  EXPECT_EQ(s1.levels, 7);
  EXPECT_EQ(bcr_dims(5, 0).b, 1);
  EXPECT_EQ(bcr_dims(1, 3).levels, 0);
  EXPECT_EQ(bcr_dims(4, 2).levels, 1);
  EXPECT_EQ(bcr_dims(5, 2).levels, 2);
  // every block row is eliminated once, at one level, or is row 0, the last
  for (int nb : {1, 2, 3, 7, 8, 9, 80, 257}) {
    const BcrDims d = bcr_dims(nb * 3, 3);
    std::vector<int> seen(size_t(nb), 0);
    for (int l = 0; l < d.levels; ++l) {
      for (int e = 0; e < bcr_eliminated_count(d, l); ++e)
        ++seen[size_t(bcr_eliminated_row(l, e))];
      // the kept rows are the next level's active rows
      EXPECT_EQ(bcr_kept_count(d, l),
                l + 1 < d.levels ? bcr_kept_count(d, l + 1) + bcr_eliminated_count(d, l + 1) : 1);
    }
    EXPECT_EQ(seen[0], 0);
    for (int r = 1; r < nb; ++r)
      EXPECT_EQ(seen[size_t(r)], 1) << "nb " << nb << " row " << r;
  }
}

// the factorization and the solve with each pass's items in a shuffled order, and the
// Gauss-Jordan steps' lanes in reverse: the same bits as in order (no item reads what another
// item of its pass writes)
TEST(BlockCyclic, ThePassesItemsGiveTheSameBitsInAnyOrder) {
  std::mt19937 rng(3);
  for (int w : {1, 4, 9})
    for (int n : {40, 123}) {
      const BandSystem s = random_band(n, w, false, rng);
      const BcrDims d = bcr_dims(n, w);
      std::vector<double> b(n);
      std::uniform_real_distribution<double> u(-1, 1);
      for (double& v : b)
        v = u(rng);
      std::vector<double> a = fill(s, d), c = fill(s, d);
      const double floor = 1e-13 * bcr_diagonal_max(a.data(), d);
      ASSERT_TRUE(bcr_factor(a.data(), d, floor));
      put_rhs(a, d, b);
      bcr_solve(a.data(), d);
      const long bb = bcr_block_count(d);
      auto shuffled = [&](long count) {
        std::vector<long> items(static_cast<size_t>(count));
        for (long i = 0; i < count; ++i)
          items[size_t(i)] = i;
        std::shuffle(items.begin(), items.end(), rng);
        return items;
      };
      for (int l = 0; l < d.levels; ++l) {
        const int ne = bcr_eliminated_count(d, l), nk = bcr_kept_count(d, l);
        for (int e = ne - 1; e >= 0; --e) {  // the device's warps: lanes in reverse
          double* m = bcr_block(c.data(), d, bcr_eliminated_row(l, e), kBcrD);
          const int live = bcr_live_rows(d, bcr_eliminated_row(l, e));
          for (int k = 0; k < d.b; ++k) {
            const double p = bcr_gj_pivot(m, d.b, k, live, floor);
            ASSERT_NE(p, 0.0);
            for (int lane = 7; lane >= 0; --lane)
              bcr_gj_scale(m, d.b, k, bcr_reciprocal(p), lane, 8);
            for (int i = d.b - 1; i >= 0; --i)
              bcr_gj_eliminate(m, d.b, k, i);
          }
        }
        for (long item : shuffled(ne * 2 * bb))
          bcr_multiplier_item(c.data(), d, l, item);
        for (long item : shuffled(nk * 3 * bb))
          bcr_update_item(c.data(), d, l, item);
      }
      ASSERT_TRUE(bcr_invert(bcr_block(c.data(), d, 0, kBcrD), d.b, bcr_live_rows(d, 0), floor));
      put_rhs(c, d, b);
      for (int l = 0; l < d.levels; ++l)
        for (long item : shuffled(long(bcr_kept_count(d, l)) * d.b))
          bcr_forward_item(c.data(), bcr_vector(c.data(), d), d, l, item);
      for (int l = d.levels; l >= 0; --l) {
        const int h = 1 << l, ne = l == d.levels ? 1 : bcr_eliminated_count(d, l);
        for (long item : shuffled(long(ne) * d.b)) {
          const int o = l == d.levels ? 0 : bcr_eliminated_row(l, int(item / d.b));
          bcr_residual_item(c.data(), bcr_vector(c.data(), d), bcr_scratch(c.data(), d), d, o, h,
                            int(item % d.b));
        }
        for (long item : shuffled(long(ne) * d.b)) {
          const int o = l == d.levels ? 0 : bcr_eliminated_row(l, int(item / d.b));
          bcr_back_item(c.data(), bcr_vector(c.data(), d), bcr_scratch(c.data(), d), d, o,
                        int(item % d.b));
        }
      }
      // every block, the solution and the scratch: bit for bit
      ASSERT_EQ(a.size(), c.size());
      for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(c[i])) continue;  // (Mr of a row without a right)
        ASSERT_EQ(std::memcmp(&a[i], &c[i], sizeof(double)), 0)
            << "n " << n << " w " << w << " entry " << i << ": " << a[i] << " vs " << c[i];
      }
    }
}

TEST(BlockCyclic, AZeroPivotFailsAndPaddingRowsDoNot) {
  // [[1, 1, 0], [1, 1, 1], [0, 1, 1]] (determinant -1): the band's second pivot is zero; here
  // row 1 goes first and leaves row 0's Schur complement 1 - 1 = 0 (the device's test of the
  // sparse fallback)
  BandSystem s;
  s.n = 3;
  s.w = 1;
  s.band = {0, 1, 1, 1, 1, 1, 1, 1, 0};
  BcrDims d = bcr_dims(3, 1);
  std::vector<double> ws = fill(s, d);
  EXPECT_FALSE(bcr_factor(ws.data(), d, 1e-13 * bcr_diagonal_max(ws.data(), d)));
  // [[0, 1], [1, 0]] in one block: no pivot for Gauss-Jordan without pivoting
  s.n = 2;
  s.band = {0, 0, 1, 1, 0, 0};
  d = bcr_dims(2, 1);
  ws = fill(s, d);
  EXPECT_FALSE(bcr_factor(ws.data(), d, 1e-13 * bcr_diagonal_max(ws.data(), d)));
  // a diagonal system at 1e20: the padding rows' 1 lies far below the floor and is not tested
  std::mt19937 rng(2);
  BandSystem big = random_band(7, 3, false, rng);
  for (double& v : big.band)
    v *= 1e20;
  d = bcr_dims(7, 3);  // blocks of 3: two padding rows
  ws = fill(big, d);
  const double floor = 1e-13 * bcr_diagonal_max(ws.data(), d);
  EXPECT_GT(floor, 1.0);
  EXPECT_TRUE(bcr_factor(ws.data(), d, floor));
}

// a Newton Jacobian from its CSR values through the band's layout (reverse Cuthill-McKee order,
// as the device fills its blocks): the CPU band's solution, and a residual at rounding. A rod of
// 300 nodes (blocks of about 10, 7 levels and more), and a mid-edge plate with a joined rod
// (blocks of 59, wider than a GPU warp: what `--solver banded` asks of a shell)
void solves_like_the_cpu_band(const std::shared_ptr<const Model>& m, int min_levels) {
  const test::NewtonSystem sys(m);
  const AssemblyPlan& p = m->plan;
  const std::vector<Real>& val = sys.val;
  const std::vector<Real>& f = sys.f;
  cpu::LinearSolver band(p, LinearSolverKind::kBanded);
  std::copy(val.begin(), val.end(), band.values());
  ASSERT_TRUE(band.factorize());
  ASSERT_FALSE(band.used_fallback());
  std::vector<Real> x_cpu(size_t(p.nfree));
  ASSERT_TRUE(band.solve(f.data(), x_cpu.data()));

  const BandLayout layout = band_layout(p.nfree, p.row_ptr, p.col);
  const BcrDims d = bcr_dims(p.nfree, layout.w);
  EXPECT_EQ(d.b, layout.w);
  EXPECT_GE(d.levels, min_levels);
  BandSystem s;
  s.n = p.nfree;
  s.w = layout.w;
  s.band.assign(size_t(layout.band_size), 0);
  for (size_t k = 0; k < layout.band_pos.size(); ++k)
    s.band[size_t(layout.band_pos[k])] = val[k];
  std::vector<double> ws = fill(s, d);
  ASSERT_TRUE(bcr_factor(ws.data(), d, 1e-13 * bcr_diagonal_max(ws.data(), d)));
  std::vector<double> rhs(size_t(p.nfree));
  for (int i = 0; i < p.nfree; ++i)
    rhs[size_t(i)] = f[size_t(layout.order[size_t(i)])];
  put_rhs(ws, d, rhs);
  bcr_solve(ws.data(), d);
  std::vector<Real> x(size_t(p.nfree));
  for (int i = 0; i < p.nfree; ++i)
    x[size_t(layout.order[size_t(i)])] = bcr_vector(ws.data(), d)[i];
  Real xmax = 0, diff = 0, rmax = 0, vmax = 0;
  for (int i = 0; i < p.nfree; ++i) {
    xmax = std::max(xmax, std::fabs(x_cpu[size_t(i)]));
    diff = std::max(diff, std::fabs(x[size_t(i)] - x_cpu[size_t(i)]));
    Real ax = 0;
    for (int k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
      ax += val[size_t(k)] * x[size_t(p.col[k])];
      vmax = std::max(vmax, std::fabs(val[size_t(k)]));
    }
    rmax = std::max(rmax, std::fabs(ax - f[size_t(i)]));
  }
  EXPECT_LT(diff, 1e-9 * xmax);
  EXPECT_LT(rmax, 16e-12 * vmax * xmax);
}

TEST(BlockCyclic, SolvesNewtonJacobiansInTheBandsOrderLikeTheCpuBand) {
  {
    SCOPED_TRACE("rod");
    solves_like_the_cpu_band(test::clamped_rod(300, 1), 7);  // about 1,200 rows in blocks of 10
  }
  {
    SCOPED_TRACE("mid-edge plate with a rod");
    const auto plate = build_model(test::midedge_plate_with_rod(false, true));
    EXPECT_GT(band_layout(plate->plan.nfree, plate->plan.row_ptr, plate->plan.col).w, 32);
    solves_like_the_cpu_band(plate, 2);
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
