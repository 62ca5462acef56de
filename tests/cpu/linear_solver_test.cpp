// The CPU backend's direct solve: every solver kind solves an SPD system, and a matrix that is
// not positive definite falls back to sparse LU with a correct solution. The engine's
// block-Jacobi CG gives Newton the direct path's iterates.

#include "slender/engine/linear_solver.h"

#include <gtest/gtest.h>

#include <cmath>

#include "physics/physics_util.h"
#include "slender/builder.h"
#include "slender/config.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

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

// one indefinite matrix does not condemn the solver to LU: the next positive definite one is
// factorized by the symmetric path again
TEST(LinearSolver, CholeskyIsTriedAgainAfterAFallback) {
  const int n = 30;
  const AssemblyPlan p = tridiagonal_plan(n);
  std::vector<Real> b(n, 1.0), x(n);
  for (LinearSolverKind kind : kinds()) {
    if (kind == LinearSolverKind::kSparseLu) continue;
    cpu::LinearSolver s(p, kind);
    fill(p, s.values(), 0.0);  // a zero pivot first (see ZeroPivotFallsBackToLu)
    ASSERT_TRUE(s.factorize()) << s.name();
    EXPECT_TRUE(s.used_fallback()) << s.name();
    fill(p, s.values(), 2.5);
    ASSERT_TRUE(s.factorize()) << s.name();
    EXPECT_FALSE(s.used_fallback()) << s.name();
    ASSERT_TRUE(s.solve(b.data(), x.data()));
    EXPECT_LT(residual(p, 2.5, x, b), 1e-12) << s.name();
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

// the iterative path is the engine's: the CPU's direct solver refuses kPcg
TEST(LinearSolver, RefusesTheIterativeKind) {
  const AssemblyPlan p = tridiagonal_plan(10);
  test::expect_error([&] { cpu::LinearSolver s(p, LinearSolverKind::kPcg); }, "engine");
}

// a clamped shell plate falling under gravity (mid-edge bending, so xi DOFs too): Newton with
// CG reaches the same states as with the direct solve, iteration for iteration
TEST(LinearSolver, PcgGivesNewtonTheDirectPathsIterates) {
  SceneBuilder sb;
  const int mat = sb.material("m", 1000, 1e7, 0.3);
  const int plate = sb.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0),
                                       0.01, true, mat, 1e-3, ShellBending::kMidEdge);
  sb.membrane(plate, MembraneModel::kSprings);
  for (int i = 0; i < int(sb.part(plate).nodes.size()); ++i)
    if (sb.part(plate).nodes[i][0] < 1e-12) sb.fix_node(plate, i);
  sb.gravity(vec3(0, 0, -9.8));
  sb.integrator().dt = 2e-3;
  const SceneSpec scene = sb.build();
  const auto m = build_model(scene);
  Simulator direct(m, scene.integrator, LinearSolverKind::kAuto);
  Simulator cg(m, scene.integrator, LinearSolverKind::kPcg);
  EXPECT_EQ(cg.linear_solver_name(), "pcg");
  for (int s = 0; s < 30; ++s) {
    const StepReport a = direct.step(), c = cg.step();
    ASSERT_TRUE(a.ok() && c.ok()) << "step " << s;
    EXPECT_EQ(a.iterations, c.iterations) << "step " << s;
  }
  EXPECT_LT(test::max_abs_diff(direct.state().q, cg.state().q),
            1e-9 * test::max_abs(direct.state().q));
  EXPECT_EQ(cg.state().warn_linear_fallback, 0);
}

// kPcgMixed (the matrix and the preconditioner's blocks in single precision, the vectors and the
// tolerance as kPcg's): on the same plate and on a cloth falling onto itself (self-contact's
// part of the matrix too), Newton takes the direct path's iterations and reaches its states
// within Newton's own tolerance, CG within 5 % of kPcg's iterations
TEST(LinearSolver, MixedPrecisionPcgGivesNewtonTheSameIterates) {
  auto plate = [] {
    SceneBuilder sb;
    const int mat = sb.material("m", 1000, 1e7, 0.3);
    const int p = sb.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), 0.01,
                                     true, mat, 1e-3, ShellBending::kMidEdge);
    sb.membrane(p, MembraneModel::kSprings);
    for (int i = 0; i < int(sb.part(p).nodes.size()); ++i)
      if (sb.part(p).nodes[i][0] < 1e-12) sb.fix_node(p, i);
    sb.gravity(vec3(0, 0, -9.8));
    sb.integrator().dt = 2e-3;
    return sb.build();
  };
  SceneSpec cloth =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/cloth_drop.json");
  for (const SceneSpec& scene : {plate(), cloth}) {
    SCOPED_TRACE(scene.name);
    const auto m = build_model(scene);
    Simulator direct(m, scene.integrator, LinearSolverKind::kAuto);
    Simulator cg(m, scene.integrator, LinearSolverKind::kPcg);
    Simulator mixed(m, scene.integrator, LinearSolverKind::kPcgMixed);
    EXPECT_EQ(mixed.linear_solver_name(), "pcg-mixed");
    const int steps = 60;
    for (int s = 0; s < steps; ++s) {
      const StepReport a = direct.step(), c = cg.step(), x = mixed.step();
      ASSERT_TRUE(a.ok() && c.ok() && x.ok()) << "step " << s;
      EXPECT_EQ(a.iterations, x.iterations) << "step " << s;
    }
    EXPECT_LT(test::max_abs_diff(direct.state().q, mixed.state().q),
              1e-9 * test::max_abs(direct.state().q));
    EXPECT_EQ(mixed.state().warn_linear_fallback, 0);
    const double its_cg = cg.phase_times().linear_iters,
                 its_mixed = mixed.phase_times().linear_iters;
    std::printf("%s: CG iterations %.0f (pcg) and %.0f (pcg-mixed) over %d steps\n",
                scene.name.c_str(), its_cg, its_mixed, steps);
    EXPECT_GT(its_cg, 0);
    EXPECT_LT(its_mixed, 1.05 * its_cg);
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
