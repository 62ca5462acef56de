// The fill-reducing ordering of the device factorizations: the permuted CSR is P J P^T entry by
// entry, the symbolic fill count is right on matrices whose fill is known, and AMD cuts the fill
// of a rod's Jacobian pattern (twist DOFs numbered after every position) by a large factor.

#include "slender/engine/ordering.h"

#include <gtest/gtest.h>

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

struct Csr {
  int n = 0;
  std::vector<int> row_ptr, col;
  std::vector<double> val;
};

Csr from_dense(const std::vector<std::vector<double>>& d) {
  Csr a;
  a.n = int(d.size());
  a.row_ptr.push_back(0);
  for (int i = 0; i < a.n; ++i) {
    for (int j = 0; j < a.n; ++j)
      if (d[i][j] != 0) {
        a.col.push_back(j);
        a.val.push_back(d[i][j]);
      }
    a.row_ptr.push_back(int(a.col.size()));
  }
  return a;
}

// arrowhead: diagonal plus a dense first row and column
Csr arrow(int n) {
  std::vector<std::vector<double>> d(n, std::vector<double>(n, 0));
  for (int i = 0; i < n; ++i) {
    d[i][i] = 4;
    d[0][i] = d[i][0] = 1;
  }
  return from_dense(d);
}

TEST(Ordering, PermutedPatternIsPJPTransposed) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const int n = 40;
  std::vector<std::vector<double>> d(n, std::vector<double>(n, 0));
  for (int i = 0; i < n; ++i) {
    d[i][i] = 10 + i;
    for (int j = 0; j < i; ++j)
      if (u(rng) > 0.8) d[i][j] = d[j][i] = u(rng);
  }
  const Csr a = from_dense(d);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const PermutedPattern p = permute_pattern(n, a.row_ptr, a.col, order);
  ASSERT_EQ(p.col.size(), a.col.size());
  for (int k = 0; k < n; ++k) {
    EXPECT_TRUE(std::is_sorted(p.col.begin() + p.row_ptr[k], p.col.begin() + p.row_ptr[k + 1]));
    ASSERT_GE(p.diag_slot[k], 0);
    EXPECT_EQ(p.col[p.diag_slot[k]], k);
    for (int s = p.row_ptr[k]; s < p.row_ptr[k + 1]; ++s)
      EXPECT_EQ(a.val[p.slot_map[s]], d[order[k]][order[p.col[s]]]);
  }
  EXPECT_THROW(permute_pattern(n, a.row_ptr, a.col, std::vector<int>(n, 0)), Error);
}

TEST(Ordering, FillCountOfKnownMatrices) {
  const int n = 10;
  const Csr a = arrow(n);
  // dense row first: the factor is dense; dense row last: no fill at all
  EXPECT_EQ(cholesky_fill(n, a.row_ptr, a.col), long(n) * (n + 1) / 2);
  std::vector<int> rev(n);
  for (int k = 0; k < n; ++k)
    rev[k] = n - 1 - k;
  const PermutedPattern p = permute_pattern(n, a.row_ptr, a.col, rev);
  EXPECT_EQ(cholesky_fill(n, p.row_ptr, p.col), 2L * n - 1);
  // AMD finds the no-fill order
  const PermutedPattern q = fill_reducing_pattern(n, a.row_ptr, a.col);
  EXPECT_EQ(cholesky_fill(n, q.row_ptr, q.col), 2L * n - 1);
  // tridiagonal: no fill in its own order
  std::vector<std::vector<double>> t(n, std::vector<double>(n, 0));
  for (int i = 0; i < n; ++i) {
    t[i][i] = 2;
    if (i > 0) t[i][i - 1] = t[i - 1][i] = -1;
  }
  const Csr tri = from_dense(t);
  EXPECT_EQ(cholesky_fill(n, tri.row_ptr, tri.col), 2L * n - 1);
}

TEST(Ordering, AmdCutsTheFillOfARodJacobian) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  const int r =
      b.straight_rod("r", vec3(0, 0, 0), vec3(1, 0, 0), 300, mat, SceneBuilder::circle(0.002));
  b.fix_edge(r, 0);
  const auto m = build_model(b.spec());
  const AssemblyPlan& p = m->plan;
  const long natural = cholesky_fill(p.nfree, p.row_ptr, p.col);
  const PermutedPattern q = fill_reducing_pattern(p.nfree, p.row_ptr, p.col);
  const long amd = cholesky_fill(p.nfree, q.row_ptr, q.col);
  // a rod is banded once its twists sit between their nodes: about 10 entries per row of L
  EXPECT_LT(amd, 12L * p.nfree) << "natural " << natural;
  EXPECT_GT(natural, 10 * amd);
}

// The fill counted from the elimination tree (cholesky_fill) against a dense symbolic
// elimination, on random sparse symmetric patterns in their own order and in a random order
// given to it (no permuted copy); and the AMD order taken on a symmetric pattern itself (without
// Eigen's A^T + A) is Eigen's AMDOrdering's, also on a pattern that is not symmetric (its
// fallback)
TEST(Ordering, FillFromTheEliminationTreeAndAmdOnThePatternItself) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    const int n = 40 + 10 * trial;
    std::vector<std::vector<char>> d(n, std::vector<char>(n, 0));
    for (int i = 0; i < n; ++i) {
      d[i][i] = 1;
      for (int e = 0; e < 2; ++e) {
        const int j = int(rng() % n);
        d[i][j] = d[j][i] = 1;
      }
    }
    if (trial == 5) d[0][n - 1] = 1;  // one entry without its mirror
    Csr a;
    a.n = n;
    a.row_ptr.push_back(0);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        if (d[i][j]) a.col.push_back(j);
      a.row_ptr.push_back(int(a.col.size()));
    }
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (const bool permuted : {false, true}) {
      // dense symbolic elimination in the order: L(i, j) for i > j is A(i, j) or some k < j
      // with L(i, k) and L(j, k)
      std::vector<std::vector<char>> l(n, std::vector<char>(n, 0));
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const int oi = permuted ? order[i] : i, oj = permuted ? order[j] : j;
          l[i][j] = d[oi][oj] || d[oj][oi];
        }
      long dense = 0;
      for (int j = 0; j < n; ++j) {
        for (int i = j + 1; i < n; ++i)
          if (l[i][j])
            for (int k = i + 1; k < n; ++k)
              if (l[k][j]) l[k][i] = 1;
        for (int i = j; i < n; ++i)
          dense += i == j || l[i][j];
      }
      if (trial == 5) continue;  // (the tree takes the pattern as symmetric)
      EXPECT_EQ(
          permuted ? cholesky_fill(n, a.row_ptr, a.col, order) : cholesky_fill(n, a.row_ptr, a.col),
          dense)
          << trial << " " << permuted;
    }
    Eigen::SparseMatrix<double, Eigen::ColMajor, int> m(n, n);
    std::vector<Eigen::Triplet<double, int>> t;
    for (int i = 0; i < n; ++i)
      for (int s = a.row_ptr[i]; s < a.row_ptr[i + 1]; ++s)
        t.emplace_back(a.col[s], i, 1.0);  // the CSR read as CSC
    m.setFromTriplets(t.begin(), t.end());
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> pinv;
    Eigen::AMDOrdering<int>()(m, pinv);
    const std::vector<int> amd = fill_reducing_order(n, a.row_ptr, a.col);
    for (int k = 0; k < n; ++k)
      ASSERT_EQ(amd[k], pinv.indices()[k]) << trial << " " << k;
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
