// The fused CG iteration (KrylovOn::cg_fused, issue 48 item 3): block-Jacobi CG with the matrix
// product (its columns read as runs, ColumnRuns) and p . Ap in one pass, and the update of x and
// r with the preconditioner and both dot products in another (executor map_reduce4). It must
// give cg's iterates (with the plain CSR product) bit for bit: on block
// systems with partial blocks (held DOFs), with and without a contact part, in double and in
// single-precision storage (kPcgMixed), and through the engine (SLENDER_FUSED_CG=1, the
// device's default, against 0, the host's), in fewer launches.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/config.h"
#include "slender/core/pcg.h"
#include "slender/engine/krylov.h"
#include "slender/scene.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

struct Csr {
  std::vector<int> row_ptr{0}, col;
  std::vector<Real> val;
};

Csr to_csr(const std::vector<Real>& dense, int n) {
  Csr c;
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < n; ++k)
      if (dense[size_t(r) * n + k] != 0) {
        c.col.push_back(k);
        c.val.push_back(dense[size_t(r) * n + k]);
      }
    c.row_ptr.push_back(int(c.col.size()));
  }
  return c;
}

// A symmetric positive definite system of `nodes` nodes of three DOFs on a ring, each node
// coupled to its next two (a stiffness whose CG takes tens of iterations), some DOFs held (their
// rows and columns gone: blocks of one and two rows); with `contact`, a second matrix of a few
// positive rank-one terms on other rows (its own pattern), as the engine's contact part
struct System {
  int n = 0;
  Csr A, C;
  std::vector<int> block_row{0}, row_block;
  std::vector<Real> b;
};

System make_system(int nodes, bool contact, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> u(-1, 1);
  const int nd = 3 * nodes;
  std::vector<Real> K(size_t(nd) * nd, 0);
  auto add = [&](int i, int j, Real v) { K[size_t(i) * nd + j] += v; };
  for (int a = 0; a < nodes; ++a)
    for (int s = 1; s <= 2; ++s) {  // springs to the next two nodes, stiffness k on each axis
      const int c = (a + s) % nodes;
      const Real k = (s == 1 ? 100 : 10) * (1 + 0.5 * u(rng));
      for (int d = 0; d < 3; ++d) {
        add(3 * a + d, 3 * a + d, k);
        add(3 * c + d, 3 * c + d, k);
        add(3 * a + d, 3 * c + d, -k);
        add(3 * c + d, 3 * a + d, -k);
      }
    }
  for (int i = 0; i < nd; ++i) {
    add(i, i, 1 + std::abs(u(rng)));  // the mass's share
    for (int j = i + 1; j < nd && j < i + 3; ++j) {
      if ((i / 3) != (j / 3)) continue;
      const Real w = 0.2 * u(rng);  // a coupling within a node's block, symmetric
      add(i, j, w);
      add(j, i, w);
    }
  }
  std::vector<int> free;
  for (int i = 0; i < nd; ++i)
    if (i % 7 != 3 && i % 11 != 5) free.push_back(i);  // held DOFs: partial blocks
  System s;
  s.n = int(free.size());
  std::vector<Real> Kf(size_t(s.n) * s.n), Cf(size_t(s.n) * s.n, 0);
  for (int r = 0; r < s.n; ++r)
    for (int c = 0; c < s.n; ++c)
      Kf[size_t(r) * s.n + c] = K[size_t(free[r]) * nd + free[c]];
  if (contact)
    for (int t = 0; t < s.n / 6; ++t) {
      const int i = int(rng() % unsigned(s.n)), j = int(rng() % unsigned(s.n));
      const Real vi = 5 * u(rng), vj = 5 * u(rng);
      Cf[size_t(i) * s.n + i] += vi * vi;
      Cf[size_t(j) * s.n + j] += vj * vj;
      Cf[size_t(i) * s.n + j] += vi * vj;
      Cf[size_t(j) * s.n + i] += vi * vj;
    }
  s.A = to_csr(Kf, s.n);
  s.C = to_csr(Cf, s.n);
  for (int r = 1; r < s.n; ++r)
    if (free[r] / 3 != free[r - 1] / 3) s.block_row.push_back(r);
  s.block_row.push_back(s.n);
  s.row_block.resize(size_t(s.n));
  for (size_t k = 0; k + 1 < s.block_row.size(); ++k)
    for (int r = s.block_row[k]; r < s.block_row[k + 1]; ++r)
      s.row_block[size_t(r)] = int(k);
  s.b.resize(size_t(s.n));
  for (Real& v : s.b)
    v = u(rng);
  return s;
}

struct Solved {
  bool ok = false;
  std::vector<Real> x;
  long iterations = 0;
  long launches = 0;
};

// cg (`fused` false) or cg_fused on the system, its values stored as V
template <class V>
Solved solve(const System& s, bool contact, bool fused) {
  const int n = s.n;
  const long nblock = long(s.block_row.size()) - 1;
  std::vector<V> a(s.A.val.begin(), s.A.val.end()), c(s.C.val.begin(), s.C.val.end());
  std::vector<Real> inv(size_t(9 * nblock));
  std::vector<unsigned char> ok(static_cast<size_t>(nblock));
  const std::vector<Real> no_contact(s.C.val.size(), 0);
  for (long k = 0; k < nblock; ++k)
    BlockJacobiSetupSum{
        s.A.row_ptr.data(), s.A.col.data(), s.A.val.data(),
        s.C.row_ptr.data(), s.C.col.data(), contact ? s.C.val.data() : no_contact.data(),
        s.block_row.data(), inv.data(),     ok.data()}(k);
  for (unsigned char v : ok)
    EXPECT_EQ(v, 1);
  const std::vector<V> invv(inv.begin(), inv.end());
  stepper::KrylovOn<HostExecutor> kr;
  Solved out;
  out.x.assign(size_t(n), 0);
  auto precondition = [&](const Real* in, Real* z) {
    HostExecutor::for_each(nblock, BlockJacobiApplyOf<V>{s.block_row.data(), invv.data(), in, z});
  };
  reset_executor_counts();
  if (fused) {
    const ColumnRuns runs(s.A.row_ptr, s.A.col);
    const SystemRowsOf<V> rows{s.A.row_ptr.data(),
                               runs.run_ptr.data(),
                               runs.run_col.data(),
                               runs.run_len.data(),
                               a.data(),
                               contact ? s.C.row_ptr.data() : nullptr,
                               contact ? s.C.col.data() : nullptr,
                               contact ? c.data() : nullptr};
    out.ok = kr.cg_fused(n, s.b.data(), out.x.data(), rows, s.row_block.data(), s.block_row.data(),
                         invv.data(), precondition);
  } else {
    auto apply = [&](const Real* x, Real* y) {
      HostExecutor::for_each(n, CsrSpmvOf<V>{s.A.row_ptr.data(), s.A.col.data(), a.data(), x, y});
      if (contact)
        HostExecutor::for_each(n,
                               CsrSpmvAddOf<V>{s.C.row_ptr.data(), s.C.col.data(), c.data(), x, y});
    };
    out.ok = kr.cg(n, s.b.data(), out.x.data(), apply, precondition);
  }
  out.launches = executor_counts().launches;
  out.iterations = kr.iterations();
  return out;
}

// Random block systems of 60 to 300 nodes: the same solution bit for bit and the same count of
// iterations (which also checks that a solve converged between two of the host's reads stops at
// cg's iterate), in six launches an iteration where cg takes eleven
TEST(FusedCg, SameIteratesAsCgOnBlockSystemsWithHeldDofs) {
  int checked = 0;
  for (int nodes : {60, 137, 300})
    for (bool contact : {false, true}) {
      SCOPED_TRACE(testing::Message() << nodes << " nodes, contact " << contact);
      const System s = make_system(nodes, contact, unsigned(nodes) + (contact ? 7u : 0u));
      const Solved plain = solve<Real>(s, contact, false), fused = solve<Real>(s, contact, true);
      ASSERT_TRUE(plain.ok);
      EXPECT_TRUE(fused.ok);
      EXPECT_GT(plain.iterations, 16);  // (several of the host's reads)
      EXPECT_EQ(fused.iterations, plain.iterations);
      EXPECT_TRUE(same_bits(fused.x, plain.x));
      // five launches fewer an iteration (six with the contact part's own product loop), two
      // (three) in the last, which stops at the host's read
      const long k = contact ? 6 : 5;
      EXPECT_EQ(plain.launches - fused.launches, k * (plain.iterations - 1) + (k - 3))
          << "fused " << fused.launches << ", cg " << plain.launches;
      // single-precision storage (kPcgMixed's)
      const Solved pf = solve<float>(s, contact, false), ff = solve<float>(s, contact, true);
      ASSERT_TRUE(pf.ok);
      EXPECT_EQ(ff.iterations, pf.iterations);
      EXPECT_TRUE(same_bits(ff.x, pf.x));
      ++checked;
    }
  EXPECT_EQ(checked, 6);
}

// SLENDER_FUSED_CG set for the engines made in its scope (read when one is made)
struct FusedCgSwitch : test::ScopedEnv {
  explicit FusedCgSwitch(bool on) : ScopedEnv("SLENDER_FUSED_CG", on ? "1" : "0") {}
};

struct Rollout {
  std::vector<Real> q;
  long linear_iters = 0;
  long launches = 0;
  long newton = 0;     // Newton iterations: a linear solve each
  long fallbacks = 0;  // solves that fell back to the direct path
};

Rollout run(const std::shared_ptr<const Model>& m, LinearSolverKind kind, bool fused, int steps) {
  FusedCgSwitch sw(fused);
  Simulator sim(m, m->scene.integrator, kind);
  reset_executor_counts();
  Rollout out;
  for (int s = 0; s < steps; ++s) {
    const StepReport rep = sim.step();
    EXPECT_TRUE(rep.ok()) << "step " << s;
    out.newton += rep.iterations;
  }
  out.fallbacks = sim.state().warn_linear_fallback;
  out.launches = executor_counts().launches;
  out.q = sim.state().q;
  out.linear_iters = sim.phase_times().linear_iters;
  return out;
}

// The engine's pcg and pcg-mixed paths on plate_contact.json (a rod and a tile fall onto a
// clamped plate and land at about 0.04 s, step 20: shell-shell and rod-shell contact, the pairs'
// part of J beside the model's; 9 solves fall back to the direct path, whose Jacobian is not
// positive definite): the fused iteration gives the unfused states bit for bit, and the same
// fallbacks, five launches fewer a CG iteration
TEST(FusedCg, SimulatorGivesTheUnfusedIteratesInFewerLaunches) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/plate_contact.json");
  sc.backend = BackendKind::kCpu;
  const auto m = build_model(sc);
  for (LinearSolverKind kind : {LinearSolverKind::kPcg, LinearSolverKind::kPcgMixed}) {
    SCOPED_TRACE(testing::Message() << "solver " << int(kind));
    const Rollout plain = run(m, kind, false, 40), fused = run(m, kind, true, 40);
    EXPECT_TRUE(same_bits(fused.q, plain.q));
    EXPECT_EQ(fused.linear_iters, plain.linear_iters);
    ASSERT_GT(plain.linear_iters, 100);
    EXPECT_EQ(fused.fallbacks, plain.fallbacks);
    // five launches fewer a CG iteration, two in a solve's last (none in a solve that falls back
    // before CG: a block that is not positive definite)
    const long saved = plain.launches - fused.launches;
    EXPECT_LE(saved, 5 * plain.linear_iters);
    EXPECT_GE(saved, 5 * plain.linear_iters - 3 * plain.newton)
        << "fused " << fused.launches << ", unfused " << plain.launches << ", "
        << plain.linear_iters << " CG iterations in " << plain.newton << " solves";
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
