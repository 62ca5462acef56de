// Dense Cholesky and LU with partial pivoting (include/slender/core/dense.h), the batch's
// per-environment direct solves: random systems solved to round-off, and the cooperative form
// (a group of lanes sharing each column's phases with a barrier after each: what a GPU warp runs
// per environment) giving the same bits as one thread, for groups narrower and wider than the
// matrix. The lanes run here one after the other, in reverse order, since no lane may rely on
// another's order within a phase.

#include "slender/core/dense.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// a random symmetric positive definite matrix (B^T B + n I) and a random non-symmetric one
// whose columns need row swaps (small diagonal)
std::vector<double> spd(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> b(size_t(n) * n), a(size_t(n) * n, 0);
  for (double& v : b)
    v = u(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? n : 0;
      for (int k = 0; k < n; ++k)
        s += b[size_t(k) * n + i] * b[size_t(k) * n + j];
      a[size_t(i) * n + j] = s;
    }
  return a;
}

std::vector<double> general(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(size_t(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[size_t(i) * n + j] = i == j ? 0.01 * u(rng) : u(rng);
  return a;
}

bool cooperative_cholesky(std::vector<double>& a, int n, int lanes) {
  const double floor = dense_cholesky_floor(a.data(), n, 1e-13);
  for (int k = 0; k < n; ++k) {
    bool good = true;
    for (int lane = lanes - 1; lane >= 0; --lane)
      good = dense_cholesky_row(a.data(), n, k, floor, lane, lanes) && good;
    if (!good) return false;
    for (int lane = lanes - 1; lane >= 0; --lane)
      dense_cholesky_update(a.data(), n, k, lane, lanes);
  }
  if (n > 0) dense_cholesky_diag(a.data(), n, n - 1);
  return true;
}

bool cooperative_lu(std::vector<double>& a, int n, std::vector<int>& piv, int lanes) {
  const double floor = dense_lu_floor(a.data(), n, 1e-13);
  for (int k = 0; k < n; ++k) {
    bool good = true;
    for (int lane = lanes - 1; lane >= 0; --lane)
      good = dense_lu_pivot(a.data(), n, piv.data(), k, floor, lane) && good;
    if (!good) return false;
    for (int lane = lanes - 1; lane >= 0; --lane)
      dense_lu_swap(a.data(), n, piv.data(), k, lane, lanes);
    for (int lane = lanes - 1; lane >= 0; --lane)
      dense_lu_eliminate(a.data(), n, k, lane, lanes);
  }
  if (n > 0) dense_lu_multipliers(a.data(), n, n - 1);
  return true;
}

// A x = b solved by both factorizations: the residual max |A x - b| / max |b| below 1e-12
TEST(DenseSolve, CholeskyAndLuSolveRandomSystems) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n : {1, 7, 40}) {
    for (int kind = 0; kind < 2; ++kind) {
      const std::vector<double> a0 = kind == 0 ? spd(n, rng) : general(n, rng);
      std::vector<double> b(n), x(n), a = a0;
      for (double& v : b)
        v = u(rng);
      x = b;
      std::vector<int> piv(n);
      if (kind == 0) {
        ASSERT_TRUE(dense_cholesky_factor(a.data(), n, 1e-13));
        dense_cholesky_solve(a.data(), n, x.data());
      } else {
        ASSERT_TRUE(dense_lu_factor(a.data(), n, piv.data(), 1e-13));
        dense_lu_solve(a.data(), n, piv.data(), x.data());
      }
      double r = 0, bmax = 0;
      for (int i = 0; i < n; ++i) {
        double s = -b[i];
        for (int j = 0; j < n; ++j)
          s += a0[size_t(i) * n + j] * x[j];
        r = std::max(r, std::fabs(s));
        bmax = std::max(bmax, std::fabs(b[i]));
      }
      EXPECT_LT(r / bmax, 1e-12) << "n " << n << (kind ? " LU" : " Cholesky");
    }
  }
}

TEST(DenseSolve, CooperativeLanesGiveTheSameBits) {
  std::mt19937 rng(17);
  for (int n : {5, 33, 70})
    for (int lanes : {2, 3, 7, 32}) {
      const std::vector<double> s0 = spd(n, rng), g0 = general(n, rng);
      std::vector<double> one = s0, many = s0;
      ASSERT_TRUE(dense_cholesky_factor(one.data(), n, 1e-13));
      ASSERT_TRUE(cooperative_cholesky(many, n, lanes));
      EXPECT_EQ(one, many) << "Cholesky n " << n << ", " << lanes << " lanes";
      std::vector<double> lu1 = g0, lu2 = g0;
      std::vector<int> p1(n), p2(n);
      ASSERT_TRUE(dense_lu_factor(lu1.data(), n, p1.data(), 1e-13));
      ASSERT_TRUE(cooperative_lu(lu2, n, p2, lanes));
      EXPECT_EQ(lu1, lu2) << "LU n " << n << ", " << lanes << " lanes";
      EXPECT_EQ(p1, p2);
      int swaps = 0;
      for (int k = 0; k < n; ++k)
        swaps += p1[k] != k;
      EXPECT_GT(swaps, 0);  // the pivoting is exercised
    }
  // no pivot: a Cholesky of an indefinite matrix and an LU of a singular one fail alike
  std::vector<double> indef = {1, 2, 2, 1}, c1 = indef, c2 = indef;
  EXPECT_FALSE(dense_cholesky_factor(c1.data(), 2, 1e-13));
  EXPECT_FALSE(cooperative_cholesky(c2, 2, 4));
  std::vector<double> sing = {1, 2, 2, 4}, l1 = sing, l2 = sing;
  std::vector<int> p1(2), p2(2);
  EXPECT_FALSE(dense_lu_factor(l1.data(), 2, p1.data(), 1e-13));
  EXPECT_FALSE(cooperative_lu(l2, 2, p2, 4));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
