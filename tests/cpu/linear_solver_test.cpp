// The CPU backend's sparse solve: every solver kind solves an SPD system, and a matrix that is
// not positive definite falls back to sparse LU with a correct solution.

#include "cpu/linear_solver.h"

#include <gtest/gtest.h>

#include <cmath>

#include "slender/config.h"

namespace slender {
namespace {

// a 1D Laplacian-like tridiagonal pattern with diagonal d and off-diagonal -1
AssemblyPlan tridiagonal_plan(int n) {
  AssemblyPlan p;
  p.nfree = n;
  p.row_ptr.push_back(0);
  for (int r = 0; r < n; ++r) {
    for (int c = std::max(0, r - 1); c <= std::min(n - 1, r + 1); ++c)
      p.col.push_back(c);
    p.row_ptr.push_back(int(p.col.size()));
  }
  return p;
}

void fill(const AssemblyPlan& p, Real* val, Real diag) {
  for (int r = 0; r < p.nfree; ++r)
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      val[k] = p.col[k] == r ? diag : -1;
}

// residual of A x = b for the tridiagonal matrix
Real residual(const AssemblyPlan& p,
              Real diag,
              const std::vector<Real>& x,
              const std::vector<Real>& b) {
  Real s = 0;
  for (int r = 0; r < p.nfree; ++r) {
    Real ax = 0;
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      ax += (p.col[k] == r ? diag : -1) * x[p.col[k]];
    s += (ax - b[r]) * (ax - b[r]);
  }
  return std::sqrt(s);
}

std::vector<LinearSolverKind> kinds() {
  std::vector<LinearSolverKind> k = {LinearSolverKind::kEigenLdlt, LinearSolverKind::kSparseLu,
                                     LinearSolverKind::kAuto};
#ifdef SLENDER_HAVE_CHOLMOD
  k.push_back(LinearSolverKind::kCholmod);
#endif
  return k;
}

TEST(LinearSolver, EveryKindSolvesAnSpdSystem) {
  const int n = 50;
  const AssemblyPlan p = tridiagonal_plan(n);
  std::vector<Real> b(n), x(n);
  for (int i = 0; i < n; ++i)
    b[i] = std::sin(0.3 * i);
  for (LinearSolverKind kind : kinds()) {
    cpu::LinearSolver s(p, kind);
    fill(p, s.values(), 2.5);
    ASSERT_TRUE(s.factorize()) << s.name();
    EXPECT_FALSE(s.used_fallback()) << s.name();
    ASSERT_TRUE(s.solve(b.data(), x.data()));
    EXPECT_LT(residual(p, 2.5, x, b), 1e-12) << s.name();
  }
}

TEST(LinearSolver, IndefiniteMatrixIsSolved) {
  const int n = 50;
  const AssemblyPlan p = tridiagonal_plan(n);
  std::vector<Real> b(n), x(n);
  for (int i = 0; i < n; ++i)
    b[i] = std::cos(0.7 * i);
  // diagonal 0.5: eigenvalues 0.5 - 2 cos(k pi / (n + 1)) of both signs
  for (LinearSolverKind kind : kinds()) {
    cpu::LinearSolver s(p, kind);
    fill(p, s.values(), 0.5);
    ASSERT_TRUE(s.factorize()) << s.name();
    ASSERT_TRUE(s.solve(b.data(), x.data()));
    EXPECT_LT(residual(p, 0.5, x, b), 1e-9) << s.name();
  }
}

TEST(LinearSolver, ZeroPivotFallsBackToLu) {
  // zero diagonal, -1 off it: nonsingular for even n, but every symmetric factorization
  // without pivoting meets a zero pivot first
  const int n = 20;
  const AssemblyPlan p = tridiagonal_plan(n);
  std::vector<Real> b(n), x(n);
  for (int i = 0; i < n; ++i)
    b[i] = 1 + i;
  for (LinearSolverKind kind : kinds()) {
    if (kind == LinearSolverKind::kSparseLu) continue;
    cpu::LinearSolver s(p, kind);
    fill(p, s.values(), 0.0);
    ASSERT_TRUE(s.factorize()) << s.name();
    EXPECT_TRUE(s.used_fallback()) << s.name();
    ASSERT_TRUE(s.solve(b.data(), x.data()));
    EXPECT_LT(residual(p, 0.0, x, b), 1e-9) << s.name();
  }
}

// a non-symmetric Jacobian (drag, friction) stored row by row must be solved as J x = b,
// not J^T x = b
TEST(LinearSolver, LuSolvesTheRowMajorNonSymmetricMatrix) {
  const int n = 30;
  const AssemblyPlan p = tridiagonal_plan(n);
  cpu::LinearSolver s(p, LinearSolverKind::kSparseLu);
  Real* val = s.values();
  auto entry = [](int r, int c) { return r == c ? 5.0 : (c > r ? -2.0 : -0.5); };
  for (int r = 0; r < n; ++r)
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      val[k] = entry(r, p.col[k]);
  ASSERT_TRUE(s.factorize());
  std::vector<Real> b(n), x(n);
  for (int i = 0; i < n; ++i)
    b[i] = std::sin(1.3 * i) + 0.2;
  ASSERT_TRUE(s.solve(b.data(), x.data()));
  Real res = 0;
  for (int r = 0; r < n; ++r) {
    Real ax = 0;
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      ax += entry(r, p.col[k]) * x[p.col[k]];
    res = std::max(res, std::fabs(ax - b[r]));
  }
  EXPECT_LT(res, 1e-12);
}

TEST(LinearSolver, SingularMatrixIsReported) {
  const int n = 10;
  AssemblyPlan p = tridiagonal_plan(n);
  cpu::LinearSolver s(p, LinearSolverKind::kSparseLu);
  std::fill(s.values(), s.values() + p.col.size(), 0.0);
  EXPECT_FALSE(s.factorize());
}

}  // namespace
}  // namespace slender
