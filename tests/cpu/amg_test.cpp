// The smoothed-aggregation multigrid preconditioner (include/slender/engine/amg.h, kAmg): its
// hierarchy is Galerkin (A_{l+1} = P^T A_l P, R = P^T, checked against dense products), its
// V-cycle is a symmetric positive definite operator (so that CG may use it), bad matrices are
// refused with a reason, and a Simulator with kAmg gives Newton the direct path's iterates: on a
// plate with mid-edge DOFs, on the cloth of cloth_drop.json folding onto itself (contact), and
// on a non-symmetric model (BiCGSTAB), in fewer Krylov iterations than block Jacobi takes.

#include "slender/engine/amg.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "contact/clearance.h"
#include "physics/physics_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/config.h"
#include "slender/scene.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// a clamped square plate (side `side` m, edges `h` m, 1 mm, E = 1e7 Pa) under gravity
std::shared_ptr<const Model> plate(ShellBending bending, Real side, Real h) {
  SceneBuilder sb;
  const int mat = sb.material("m", 1000, 1e7, 0.3);
  const int p = sb.rectangle_shell("plate", vec3(0, 0, 0), vec3(side, 0, 0), vec3(0, side, 0), h,
                                   true, mat, 1e-3, bending);
  sb.membrane(p, MembraneModel::kSprings);
  for (int i = 0; i < int(sb.part(p).nodes.size()); ++i)
    if (sb.part(p).nodes[i][0] < 1e-12) sb.fix_node(p, i);
  sb.gravity(vec3(0, 0, -9.8));
  sb.integrator().dt = 2e-3;
  return build_model(sb.build());
}

// the Newton matrix of a model after `steps` steps (dense from Simulator::residual, then CSR),
// its blocks (as the engine's: the free rows of one aligned triple of DOFs) and near-null space
struct Matrix {
  AmgCsr A;
  std::vector<Real> dense;
  std::vector<int> block_row;
  std::vector<Real> B;
  int k = 0;
};

Matrix newton_matrix(const std::shared_ptr<const Model>& m, int steps) {
  Simulator sim(m, m->scene.integrator, LinearSolverKind::kAuto);
  for (int s = 0; s < steps; ++s)
    EXPECT_TRUE(sim.step().ok());
  const Real dt = m->scene.integrator.dt;
  std::vector<Real> y = sim.state().q, f;
  for (size_t i = 0; i < y.size(); ++i)
    y[i] += dt * sim.state().u[i];
  Matrix out;
  sim.residual(dt, y, f, &out.dense);
  const int n = m->plan.nfree;
  out.A.nrow = out.A.ncol = n;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c)
      if (out.dense[size_t(r) * n + c] != 0) {
        out.A.col.push_back(c);
        out.A.val.push_back(out.dense[size_t(r) * n + c]);
      }
    out.A.row_ptr.push_back(int(out.A.col.size()));
  }
  out.block_row.push_back(0);
  for (int r = 1; r < n; ++r)
    if (m->plan.free_dof[r] / 3 != m->plan.free_dof[r - 1] / 3) out.block_row.push_back(r);
  out.block_row.push_back(n);
  out.k = rigid_near_null(m->plan.free_dof, std::vector<Real>(y.begin(), y.begin() + 3 * m->nnode),
                          out.B);
  return out;
}

std::vector<Real> to_dense(const AmgCsr& M) {
  std::vector<Real> d(size_t(M.nrow) * size_t(M.ncol), 0);
  for (int r = 0; r < M.nrow; ++r)
    for (int e = M.row_ptr[r]; e < M.row_ptr[r + 1]; ++e)
      d[size_t(r) * M.ncol + M.col[e]] += M.val[e];
  return d;
}

// the hierarchy of a matrix with at most `coarsest` rows on its last level (forced deep)
AmgHierarchyHost hierarchy(const Matrix& mx, int coarsest) {
  AmgOptions opt;
  opt.coarsest = coarsest;
  AmgHierarchyHost h;
  std::string why;
  EXPECT_TRUE(build_amg(mx.A, mx.block_row, mx.B, mx.k, opt, h, why)) << why;
  return h;
}

Real dot(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

// csr_add, which the engine also uses to merge its static and contact matrices: the sum's
// pattern is the union of the two, sorted, with the exact zeros of the sum kept or dropped
TEST(Amg, CsrAddMergesSortedPatterns) {
  AmgCsr a, b;
  a.nrow = a.ncol = b.nrow = b.ncol = 3;
  a.row_ptr = {0, 2, 3, 3};  // rows {0: c0 1, c2 2}, {1: c1 3}, {2: -}
  a.col = {0, 2, 1};
  a.val = {1, 2, 3};
  b.row_ptr = {0, 1, 2, 4};  // rows {0: c1 5}, {1: c1 1.5}, {2: c0 7, c2 8}
  b.col = {1, 1, 0, 2};
  b.val = {5, 1.5, 7, 8};
  const AmgCsr kept = csr_add(a, 1, b, -2, true);
  EXPECT_EQ(kept.row_ptr, (std::vector<int>{0, 3, 4, 6}));
  EXPECT_EQ(kept.col, (std::vector<int>{0, 1, 2, 1, 0, 2}));
  EXPECT_EQ(kept.val, (std::vector<Real>{1, -10, 2, 0, -14, -16}));
  const AmgCsr dropped = csr_add(a, 1, b, -2);
  EXPECT_EQ(dropped.row_ptr, (std::vector<int>{0, 3, 3, 5}));
  EXPECT_EQ(dropped.col, (std::vector<int>{0, 1, 2, 0, 2}));
}

// the hierarchy of a mid-edge plate's matrix (position and xi rows: k = 7), forced to several
// levels: R is P's transpose and each coarse matrix is P^T A P, to 1e-12 of its largest entry
TEST(Amg, HierarchyIsGalerkin) {
  const Matrix mx = newton_matrix(plate(ShellBending::kMidEdge, 0.1, 0.01), 3);
  EXPECT_EQ(mx.k, 7);
  const AmgHierarchyHost h = hierarchy(mx, 20);
  ASSERT_GE(h.levels.size(), 3u);
  std::vector<Real> A = mx.dense;
  for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
    const AmgLevelHost& L = h.levels[l];
    const int n = L.P.nrow, nc = L.P.ncol;
    ASSERT_EQ(n, h.rows(l));
    ASSERT_EQ(nc, h.rows(l + 1));
    EXPECT_LT(nc, n);
    const std::vector<Real> P = to_dense(L.P), R = to_dense(L.R);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < nc; ++j)
        ASSERT_EQ(P[size_t(i) * nc + j], R[size_t(j) * n + i]) << "level " << l;
    // A_c = R A P, dense
    std::vector<Real> AP(size_t(n) * nc, 0), Ac(size_t(nc) * nc, 0);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k)
        if (const Real a = A[size_t(i) * n + k])
          for (int j = 0; j < nc; ++j)
            AP[size_t(i) * nc + j] += a * P[size_t(k) * nc + j];
    for (int i = 0; i < nc; ++i)
      for (int k = 0; k < n; ++k)
        if (const Real r = R[size_t(i) * n + k])
          for (int j = 0; j < nc; ++j)
            Ac[size_t(i) * nc + j] += r * AP[size_t(k) * nc + j];
    const std::vector<Real> built = to_dense(h.levels[l + 1].A);
    ASSERT_EQ(built.size(), Ac.size());
    Real worst = 0, big = 0;
    for (size_t i = 0; i < Ac.size(); ++i) {
      worst = std::max(worst, std::fabs(built[i] - Ac[i]));
      big = std::max(big, std::fabs(Ac[i]));
    }
    EXPECT_LT(worst, 1e-12 * big) << "level " << l + 1;
    A = Ac;
  }
  // the coarsest inverse inverts the last coarse matrix
  const int nc = h.rows(h.levels.size() - 1);
  Real worst = 0;
  for (int i = 0; i < nc; ++i)
    for (int j = 0; j < nc; ++j) {
      Real s = 0;
      for (int k = 0; k < nc; ++k)
        s += h.coarse_inverse[size_t(i) * nc + k] * A[size_t(k) * nc + j];
      worst = std::max(worst, std::fabs(s - (i == j ? 1 : 0)));
    }
  EXPECT_LT(worst, 1e-8);
}

// the V-cycle on the host executor is symmetric and positive definite (CG's requirement), and
// as a stationary iteration x += M^-1 (b - A x) it converges: each cycle cuts the error's
// energy norm (by a factor of at most 0.78 over 8 cycles, measured; asserted below 0.9)
TEST(Amg, CycleIsSymmetricPositiveAndContracts) {
  const Matrix mx = newton_matrix(plate(ShellBending::kHinge, 0.1, 0.005), 3);
  EXPECT_EQ(mx.k, 6);
  const AmgHierarchyHost h = hierarchy(mx, 30);
  ASSERT_GE(h.levels.size(), 3u);
  stepper::AmgOn<HostExecutor> amg;
  amg.set(h);
  EXPECT_EQ(amg.levels(), int(h.levels.size()));
  const int n = mx.A.nrow;
  auto A = [&](const Real* x, Real* y) {
    for (int r = 0; r < n; ++r)
      y[r] = csr_row_dot(mx.A.row_ptr.data(), mx.A.col.data(), mx.A.val.data(), x, r);
  };
  std::mt19937_64 rng(7);
  std::normal_distribution<Real> g;
  std::vector<Real> x(static_cast<size_t>(n)), y(x), Mx(x), My(x);
  for (int trial = 0; trial < 5; ++trial) {
    for (int i = 0; i < n; ++i) {
      x[size_t(i)] = g(rng);
      y[size_t(i)] = g(rng);
    }
    amg.apply(x.data(), Mx.data(), A);
    amg.apply(y.data(), My.data(), A);
    const Real a = dot(y, Mx), b = dot(x, My);
    EXPECT_LT(std::fabs(a - b), 1e-10 * std::sqrt(dot(x, x) * dot(Mx, Mx))) << trial;
    EXPECT_GT(dot(x, Mx), 0) << trial;
  }
  // error e of A x = 0 from a random start: e <- e - M^-1 A e
  std::vector<Real> e(static_cast<size_t>(n)), Ae(e), c(e);
  for (int i = 0; i < n; ++i)
    e[size_t(i)] = g(rng);
  A(e.data(), Ae.data());
  Real energy = dot(e, Ae), worst = 0;
  for (int it = 0; it < 8; ++it) {
    amg.apply(Ae.data(), c.data(), A);
    for (int i = 0; i < n; ++i)
      e[size_t(i)] -= c[size_t(i)];
    A(e.data(), Ae.data());
    const Real next = dot(e, Ae);
    worst = std::max(worst, std::sqrt(next / energy));
    energy = next;
  }
  EXPECT_LT(worst, 0.9);
}

// the dense product R A P of CSR matrices (the reference of the Galerkin refresh)
std::vector<Real> dense_rap(const AmgCsr& R, const std::vector<Real>& A, int n, const AmgCsr& P) {
  const std::vector<Real> r = to_dense(R), p = to_dense(P);
  const int nc = P.ncol;
  std::vector<Real> ap(size_t(n) * nc, 0), c(size_t(nc) * nc, 0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (A[size_t(i) * n + k] != 0)
        for (int j = 0; j < nc; ++j)
          ap[size_t(i) * nc + j] += A[size_t(i) * n + k] * p[size_t(k) * nc + j];
  for (int i = 0; i < nc; ++i)
    for (int k = 0; k < n; ++k)
      if (r[size_t(i) * n + k] != 0)
        for (int j = 0; j < nc; ++j)
          c[size_t(i) * nc + j] += r[size_t(i) * n + k] * ap[size_t(k) * nc + j];
  return c;
}

// The Galerkin refresh on the executor (AmgOn::refresh): a hierarchy built for one Newton matrix
// of a plate, given a later one of the same pattern (the plate 8 steps on, its values differing
// by up to the matrix's own size), holds each coarse matrix R A P of the new one through the
// build's prolongators (against a dense product in double; the refresh stores single precision:
// within 1e-5 of the level's largest entry, where the old coarse matrices are over 1e-3 off)
// and each coarse smoother w times the new blocks' inverses; its cycle stays symmetric (to single
// precision) and positive definite and contracts on the new matrix as a hierarchy built for it
// does.
TEST(Amg, GalerkinRefreshHoldsTheNewMatricesProducts) {
  const auto m = plate(ShellBending::kHinge, 0.1, 0.005);
  const Matrix m0 = newton_matrix(m, 0), m8 = newton_matrix(m, 8);
  // one pattern, the union of the two (the engine's static pattern holds its exact zeros)
  Matrix a = m0, b = m8;
  a.A = csr_add(m0.A, 1, m8.A, 0, /*keep_zeros=*/true);
  b.A = csr_add(m8.A, 1, m0.A, 0, /*keep_zeros=*/true);
  ASSERT_EQ(a.A.col, b.A.col);
  const AmgHierarchyHost h = hierarchy(a, 30);
  ASSERT_GE(h.levels.size(), 3u);
  stepper::AmgOn<HostExecutor> amg;
  amg.set(h);
  EXPECT_FALSE(amg.refresh(b.A.row_ptr.data(), b.A.col.data(), b.A.val.data()))
      << "a hierarchy set without its products' patterns";
  amg.set(h, /*refreshable=*/true);
  ASSERT_TRUE(amg.refresh(b.A.row_ptr.data(), b.A.col.data(), b.A.val.data()));
  const int n = b.A.nrow;
  std::vector<Real> level = m8.dense;  // the new matrix of the level above, dense
  int nl = n;
  for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l + 1));
    const std::vector<Real> want = dense_rap(h.levels[l].R, level, nl, h.levels[l].P);
    const AmgCsr got = amg.level_matrix(l + 1);
    const std::vector<Real> gd = to_dense(got), old = to_dense(h.levels[l + 1].A);
    Real top = 0, err = 0, moved = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      top = std::max(top, std::fabs(want[i]));
      err = std::max(err, std::fabs(gd[i] - want[i]));
      moved = std::max(moved, std::fabs(old[i] - want[i]));
    }
    EXPECT_LT(err, 1e-5 * top);
    EXPECT_GT(moved, 1e-3 * top) << "the new matrix should move the coarse ones";
    // the smoother (not the coarsest's, which is inverted densely): w times each block's inverse
    if (l + 2 < h.levels.size()) {
      const AmgLevelHost& c = h.levels[l + 1];
      const std::vector<Real> S = amg.level_smoother(l + 1);
      const Real w = Real(4) / (Real(3) * c.rho);
      for (size_t bk = 0; bk + 1 < c.block_row.size(); ++bk) {
        const int r0 = c.block_row[bk], mb = c.block_row[bk + 1] - r0;
        Eigen::MatrixXd blk(mb, mb);
        for (int i = 0; i < mb; ++i)
          for (int j = 0; j < mb; ++j)
            blk(i, j) = 0.5 * (gd[size_t(r0 + i) * got.ncol + r0 + j] +
                               gd[size_t(r0 + j) * got.ncol + r0 + i]);
        const Eigen::MatrixXd inv = blk.inverse();
        for (int i = 0; i < mb; ++i)
          for (int j = 0; j < mb; ++j)
            ASSERT_NEAR(S[size_t(c.bs) * c.bs * bk + size_t(i) * c.bs + j], w * inv(i, j),
                        1e-9 * std::fabs(w) * inv.cwiseAbs().maxCoeff())
                << "block " << bk;
      }
    }
    level = gd;
    nl = got.nrow;
  }
  // the finest smoother from the new blocks, as the engine gives it (refresh_finest)
  std::vector<Real> finest(9 * (b.block_row.size() - 1), 0);
  for (size_t bk = 0; bk + 1 < b.block_row.size(); ++bk) {
    const int r0 = b.block_row[bk], mb = b.block_row[bk + 1] - r0;
    Eigen::MatrixXd blk(mb, mb);
    for (int i = 0; i < mb; ++i)
      for (int j = 0; j < mb; ++j)
        blk(i, j) = m8.dense[size_t(r0 + i) * n + r0 + j];
    const Eigen::MatrixXd inv = blk.inverse();
    for (int i = 0; i < mb; ++i)
      for (int j = 0; j < mb; ++j)
        finest[9 * bk + 3 * size_t(i) + j] = inv(i, j);
  }
  amg.refresh_finest(finest.data());
  // the cycle on the new matrix: symmetric, positive, and contracting as a fresh build's
  auto A = [&](const Real* x, Real* y) {
    for (int r = 0; r < n; ++r)
      y[r] = csr_row_dot(b.A.row_ptr.data(), b.A.col.data(), b.A.val.data(), x, r);
  };
  auto contraction = [&](stepper::AmgOn<HostExecutor>& cyc) {
    std::mt19937_64 rng(3);
    std::normal_distribution<Real> g;
    std::vector<Real> e(static_cast<size_t>(n)), Ae(e), c(e);
    for (Real& v : e)
      v = g(rng);
    A(e.data(), Ae.data());
    const Real e0 = dot(e, Ae);
    for (int it = 0; it < 8; ++it) {
      cyc.apply(Ae.data(), c.data(), A);
      for (int i = 0; i < n; ++i)
        e[size_t(i)] -= c[size_t(i)];
      A(e.data(), Ae.data());
    }
    return std::sqrt(dot(e, Ae) / e0);
  };
  std::mt19937_64 rng(9);
  std::normal_distribution<Real> g;
  std::vector<Real> x(static_cast<size_t>(n)), y(x), Mx(x), My(x);
  for (int i = 0; i < n; ++i)
    x[size_t(i)] = g(rng), y[size_t(i)] = g(rng);
  amg.apply(x.data(), Mx.data(), A);
  amg.apply(y.data(), My.data(), A);
  // (symmetric to single precision: each coarse level is refreshed from the one above as held,
  // in floats, where the build multiplies in double; measured 1.5e-9 relative, a build's 1e-10)
  EXPECT_LT(std::fabs(dot(y, Mx) - dot(x, My)), 1e-8 * std::sqrt(dot(x, x) * dot(Mx, Mx)));
  EXPECT_GT(dot(x, Mx), 0);
  stepper::AmgOn<HostExecutor> fresh;
  fresh.set(hierarchy(b, 30));
  const Real refreshed = contraction(amg), built = contraction(fresh);
  EXPECT_LT(refreshed, 1.5 * built) << "refreshed " << refreshed << ", built " << built;
  EXPECT_LT(refreshed, 0.9);
}

// The engine with the Galerkin refresh at each reuse (SLENDER_AMG_REFRESH=1; off by default):
// on the mid-edge plate, the direct path's Newton iterations and iterates (1e-9), and fewer CG
// iterations than the default rule's, whose hierarchy ages for 20 solves before it is built
// again (over 14 steps: 1,272 against 1,400). A refresh that held wrong coarse matrices would
// cost CG iterations, not accuracy.
TEST(Amg, GalerkinRefreshInTheEngineGivesTheDirectPathsIterates) {
  const auto m = plate(ShellBending::kMidEdge, 0.2, 0.01);
  Simulator direct(m, m->scene.integrator, LinearSolverKind::kAuto);
  Simulator plain(m, m->scene.integrator, LinearSolverKind::kAmg);
  PhaseTimes refreshed_times;
  std::vector<Real> refreshed_q;
  {
    const test::ScopedEnv on("SLENDER_AMG_REFRESH", "1");
    Simulator refreshed(m, m->scene.integrator, LinearSolverKind::kAmg);
    for (int s = 0; s < 14; ++s) {
      const StepReport a = direct.step(), b = refreshed.step(), c = plain.step();
      ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << "step " << s;
      EXPECT_EQ(a.iterations, b.iterations) << "step " << s;
    }
    refreshed_times = refreshed.phase_times();
    refreshed_q = refreshed.state().q;
    EXPECT_EQ(refreshed.state().warn_linear_fallback, 0);
  }
  EXPECT_LT(test::max_abs_diff(direct.state().q, refreshed_q),
            1e-9 * test::max_abs(direct.state().q));
  ASSERT_GT(refreshed_times.factorizations, 25);  // (a Newton iteration each: past a rebuild)
  EXPECT_LT(refreshed_times.linear_iters, plain.phase_times().linear_iters)
      << "refreshed " << refreshed_times.linear_iters << ", rebuilt "
      << plain.phase_times().linear_iters;
}

// a value that is not finite, an indefinite diagonal block, a near-null space of the wrong
// size: refused, with the reason
TEST(Amg, RefusesBadMatrices) {
  const Matrix mx = newton_matrix(plate(ShellBending::kHinge, 0.05, 0.01), 0);
  AmgHierarchyHost h;
  std::string why;
  Matrix bad = mx;
  bad.A.val[5] = std::nan("");
  EXPECT_FALSE(build_amg(bad.A, bad.block_row, bad.B, bad.k, AmgOptions{}, h, why));
  EXPECT_NE(why.find("not finite"), std::string::npos) << why;
  bad = mx;
  for (int e = bad.A.row_ptr[0]; e < bad.A.row_ptr[1]; ++e)
    if (bad.A.col[e] == 0) bad.A.val[e] = -1;
  AmgOptions deep;
  deep.coarsest = 10;
  EXPECT_FALSE(build_amg(bad.A, bad.block_row, bad.B, bad.k, deep, h, why));
  EXPECT_NE(why.find("not positive definite"), std::string::npos) << why;
  bad = mx;
  bad.B.pop_back();
  EXPECT_FALSE(build_amg(bad.A, bad.block_row, bad.B, bad.k, AmgOptions{}, h, why));
  EXPECT_NE(why.find("near-null"), std::string::npos) << why;
}

// Newton with the multigrid's CG reaches the direct path's states, iteration for iteration, on a
// mid-edge plate (position and xi rows), in fewer Krylov iterations than block Jacobi's
TEST(Amg, SimulatorGivesTheDirectPathsIterates) {
  const auto m = plate(ShellBending::kMidEdge, 0.2, 0.01);
  ASSERT_GT(m->plan.nfree, 2 * kAmgCoarsest);  // more than one level
  Simulator direct(m, m->scene.integrator, LinearSolverKind::kAuto);
  Simulator amg(m, m->scene.integrator, LinearSolverKind::kAmg);
  Simulator cg(m, m->scene.integrator, LinearSolverKind::kPcg);
  EXPECT_EQ(amg.linear_solver_name(), "pcg-amg");
  for (int s = 0; s < 20; ++s) {
    const StepReport a = direct.step(), b = amg.step(), c = cg.step();
    ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << "step " << s;
    EXPECT_EQ(a.iterations, b.iterations) << "step " << s;
  }
  EXPECT_LT(test::max_abs_diff(direct.state().q, amg.state().q),
            1e-9 * test::max_abs(direct.state().q));
  EXPECT_EQ(amg.state().warn_linear_fallback, 0);
  const PhaseTimes& ta = amg.phase_times();
  const PhaseTimes& tc = cg.phase_times();
  ASSERT_GT(ta.factorizations, 0);
  EXPECT_LT(2 * ta.linear_iters, tc.linear_iters)
      << "amg " << ta.linear_iters << ", block Jacobi " << tc.linear_iters;
}

// the cloth of cloth_drop.json (hinge bending, self-contact with the rest-neighbour rule, the
// ground), through its fold: the multigrid's states stay within 1e-7 of the direct path's
// (relative to the cloth's size), with contact active at the end. Near the fold the Jacobian is
// indefinite at 4 Newton iterations, where block Jacobi's CG fails as well (measured): those
// fall back to the direct solve, and the multigrid adds no other fallback.
TEST(Amg, ClothThroughItsFoldMatchesDirect) {
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/cloth_drop.json");
  sc.backend = BackendKind::kCpu;
  const auto m = build_model(sc);
  Simulator direct(m, sc.integrator, LinearSolverKind::kAuto);
  Simulator amg(m, sc.integrator, LinearSolverKind::kAmg);
  for (int s = 0; s < 450; ++s) {
    const StepReport a = direct.step(), b = amg.step();
    ASSERT_TRUE(a.ok() && b.ok()) << "step " << s;
  }
  EXPECT_LT(test::max_abs_diff(direct.state().q, amg.state().q), 1e-7 * 0.3);
  EXPECT_LE(amg.state().warn_linear_fallback, 4);
  contact::ClearanceOptions opt;
  opt.search = 0.01;
  opt.touch = 0.003;  // the contact distance (the thickness) and the tolerance
  opt.skip_rest_neighbours = true;
  contact::ClearanceProbe probe;
  EXPECT_GT(probe.measure(*m, amg.state().q, opt).touching, 0);
}

// a plate with a rod post and drag (a non-symmetric Jacobian; twist and xi rows): BiCGSTAB with
// the multigrid reaches the direct path's (sparse LU's) states
TEST(Amg, NonSymmetricTakesBicgstab) {
  const auto m = test::plate_with_post(ShellBending::kMidEdge);
  Simulator direct(m, m->scene.integrator, LinearSolverKind::kAuto);
  Simulator amg(m, m->scene.integrator, LinearSolverKind::kAmg);
  EXPECT_EQ(amg.linear_solver_name(), "bicgstab-amg");
  for (int s = 0; s < 20; ++s) {
    const StepReport a = direct.step(), b = amg.step();
    ASSERT_TRUE(a.ok() && b.ok()) << "step " << s;
    EXPECT_EQ(a.iterations, b.iterations) << "step " << s;
  }
  EXPECT_LT(test::max_abs_diff(direct.state().q, amg.state().q),
            1e-9 * test::max_abs(direct.state().q));
}

// the vectorized batch has no multigrid: refused, naming its solvers
TEST(Amg, VectorizedBatchRefusesIt) {
  const auto m = plate(ShellBending::kHinge, 0.05, 0.01);
  test::expect_error(
      [&] {
        BatchedSimulator b(m, 2, m->scene.integrator, LinearSolverKind::kAmg,
                           BatchEngine::kVectorized);
      },
      "solves by");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
