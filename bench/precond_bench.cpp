// slender_precond_bench: how far a stronger preconditioner than the PCG path's block Jacobi
// would cut S9's conjugate-gradient iterations (issue 21). The matrix is the Newton Jacobian of
// S9's cloth (cloth_scene.h) at the first Newton iterate of a step (y = q + dt u), after
// --steps steps from rest (in the fall, or with --steps 380 at 2k, in the fold), taken dense
// from Simulator::residual and stored as CSR. CG runs from x = 0 to the engine's tolerance
// (|b - A x| <= kKrylovRelTol |b|, b = the Newton residual) with, in turn:
// - block Jacobi over each node's free position rows (the engine's preconditioner: patch 1);
// - patch Jacobi: the exact inverse (a dense Cholesky factor) of the diagonal block of every
//   patch of k neighbouring nodes (k = --patch, grown breadth-first over the matrix's node
//   graph; non-overlapping, so still a block-diagonal preconditioner, and one patch per thread
//   block on a GPU).
// For each: CG iterations, the multiply-adds of one iteration (the SpMV's nonzeros, the
// patches' two triangular solves, six vector updates and dot products per unknown) and their
// product, relative to block Jacobi's: what the whole solve would cost where time follows
// the arithmetic. The set-up (the factorizations, once per Newton iteration) is given apart.
// --coarse K adds two-level methods: block Jacobi with a coarse space of K-node aggregates
// (their translations, plain or smoothed, and their rotations), additive or multiplicative
// (TwoLevel below); --coarse 0: none. The last row is the engine's multigrid V-cycle
// (--solver amg: include/slender/engine/amg.h), its hierarchy built as the engine builds it.
//
//   slender_precond_bench [--size 2k] [--steps 5] [--patch 1,2,4,8,16,32] [--coarse 8,32]
//                         [--E PA]

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "bench_util.h"
#include "cloth_scene.h"
#include "slender/core/pcg.h"
#include "slender/engine/amg.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace {

using slender::Real;
using slender::bench::fmt;

struct Csr {
  int n = 0;
  std::vector<int> row_ptr, col;
  std::vector<Real> val;
  void multiply(const std::vector<Real>& x, std::vector<Real>& y) const {
    for (int r = 0; r < n; ++r)
      y[size_t(r)] = slender::csr_row_dot(row_ptr.data(), col.data(), val.data(), x.data(), r);
  }
};

// a patch preconditioner: each patch's rows and the Cholesky factor of its diagonal block
struct Patches {
  std::vector<std::vector<int>> rows;
  std::vector<Eigen::LLT<Eigen::MatrixXd>> llt;
  long madds = 0;  // multiply-adds of one application (two triangular solves)
  bool ok = true;

  void apply(const std::vector<Real>& r, std::vector<Real>& z) const {
    for (size_t p = 0; p < rows.size(); ++p) {
      Eigen::VectorXd v(Eigen::Index(rows[p].size()));
      for (size_t i = 0; i < rows[p].size(); ++i)
        v[Eigen::Index(i)] = r[size_t(rows[p][i])];
      const Eigen::VectorXd w = llt[p].solve(v);
      for (size_t i = 0; i < rows[p].size(); ++i)
        z[size_t(rows[p][i])] = w[Eigen::Index(i)];
    }
  }
};

// patches of up to k nodes, grown breadth-first over the node graph (nodes: the blocks of
// `block_of`), in node order of their seeds
Patches make_patches(const Csr& A, const std::vector<int>& block_of, int nblock, int k) {
  const size_t nb = size_t(nblock);
  std::vector<std::vector<int>> block_rows(nb), adj(nb);
  for (int r = 0; r < A.n; ++r) {
    block_rows[size_t(block_of[size_t(r)])].push_back(r);
    for (int j = A.row_ptr[size_t(r)]; j < A.row_ptr[size_t(r) + 1]; ++j)
      adj[size_t(block_of[size_t(r)])].push_back(block_of[size_t(A.col[size_t(j)])]);
  }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  Patches P;
  std::vector<int> patch_of(size_t(nblock), -1);
  for (int seed = 0; seed < nblock; ++seed) {
    if (patch_of[size_t(seed)] >= 0) continue;
    const int id = int(P.rows.size());
    std::vector<int> members{seed}, queue{seed};
    patch_of[size_t(seed)] = id;
    for (size_t q = 0; q < queue.size() && int(members.size()) < k; ++q)
      for (int nb : adj[size_t(queue[q])]) {
        if (int(members.size()) >= k) break;
        if (patch_of[size_t(nb)] >= 0) continue;
        patch_of[size_t(nb)] = id;
        members.push_back(nb);
        queue.push_back(nb);
      }
    std::vector<int> rows;
    for (int b : members)
      rows.insert(rows.end(), block_rows[size_t(b)].begin(), block_rows[size_t(b)].end());
    std::sort(rows.begin(), rows.end());
    P.rows.push_back(rows);
  }
  // the diagonal blocks, factorized
  std::vector<int> pos(size_t(A.n), -1);
  for (const std::vector<int>& rows : P.rows) {
    const Eigen::Index m = Eigen::Index(rows.size());
    for (Eigen::Index i = 0; i < m; ++i)
      pos[size_t(rows[size_t(i)])] = int(i);
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(m, m);
    for (Eigen::Index i = 0; i < m; ++i) {
      const int r = rows[size_t(i)];
      for (int j = A.row_ptr[size_t(r)]; j < A.row_ptr[size_t(r) + 1]; ++j) {
        const int c = A.col[size_t(j)];
        if (pos[size_t(c)] >= 0)  // (set for this patch's rows only)
          D(i, pos[size_t(c)]) = A.val[size_t(j)];
      }
    }
    for (Eigen::Index i = 0; i < m; ++i)
      pos[size_t(rows[size_t(i)])] = -1;
    P.llt.emplace_back(D);
    P.ok = P.ok && P.llt.back().info() == Eigen::Success;
    P.madds += long(m) * long(m);  // L and L^T: m (m + 1) / 2 each
  }
  return P;
}

using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// Two levels: block Jacobi D (patch 1) and a coarse space of node aggregates (the patches of k
// nodes): P's column (a, c) is 1 on component c of every node of aggregate a (tentative), or,
// smoothed, that times (I - omega D^-1 A) with omega = 2/3 (smoothed aggregation). The coarse
// matrix P^T A P is solved exactly (dense Cholesky). Additive: z = D^-1 r + P Ac^-1 P^T r.
// Multiplicative (symmetric): D^-1, then the coarse correction, then D^-1 again, each on the
// residual left by the one before (two more SpMVs).
struct TwoLevel {
  const Csr* A = nullptr;
  const Patches* D = nullptr;
  SpMat P;
  Eigen::LLT<Eigen::MatrixXd> coarse;
  bool multiplicative = false;
  long madds = 0;  // of one application
  bool ok = true;

  void apply(const std::vector<Real>& r, std::vector<Real>& z) const {
    const size_t n = r.size();
    auto correct = [&](const std::vector<Real>& res, std::vector<Real>& out) {
      const Eigen::Map<const Eigen::VectorXd> rv(res.data(), Eigen::Index(n));
      const Eigen::VectorXd c = coarse.solve(P.transpose() * rv);
      const Eigen::VectorXd e = P * c;
      for (size_t i = 0; i < n; ++i)
        out[i] += e[Eigen::Index(i)];
    };
    if (!multiplicative) {
      D->apply(r, z);
      correct(r, z);
      return;
    }
    std::vector<Real> Az(n), res(n), dz(n);
    D->apply(r, z);  // z1
    A->multiply(z, Az);
    for (size_t i = 0; i < n; ++i)
      res[i] = r[i] - Az[i];
    correct(res, z);  // z2
    A->multiply(z, Az);
    for (size_t i = 0; i < n; ++i)
      res[i] = r[i] - Az[i];
    D->apply(res, dz);
    for (size_t i = 0; i < n; ++i)
      z[i] += dz[i];
  }
};

TwoLevel make_two_level(const Csr& A,
                        const Patches& D,
                        const Patches& aggregates,
                        const std::vector<int>& component,
                        const std::vector<Real>* position,
                        bool smoothed,
                        bool multiplicative) {
  TwoLevel T;
  T.A = &A;
  T.D = &D;
  T.multiplicative = multiplicative;
  // per aggregate: the three translations, and with `position` (each free row's node
  // coordinate along its component, three rows a node) also the three rotations about the
  // aggregate's centroid: the rigid motions, which a shell's bending leaves nearly free
  const int per = position ? 6 : 3;
  const int n = A.n, nc = per * int(aggregates.rows.size());
  std::vector<Eigen::Triplet<double>> tp;
  for (size_t a = 0; a < aggregates.rows.size(); ++a) {
    const std::vector<int>& rows = aggregates.rows[a];
    Real centre[3] = {0, 0, 0};
    int count[3] = {0, 0, 0};
    if (position)
      for (int r : rows) {
        centre[component[size_t(r)]] += (*position)[size_t(r)];
        ++count[component[size_t(r)]];
      }
    for (int c = 0; c < 3; ++c)
      centre[c] /= std::max(count[c], 1);
    for (size_t i = 0; i < rows.size(); ++i) {
      const int r = rows[i], c = component[size_t(r)];
      tp.emplace_back(r, per * int(a) + c, 1.0);
      if (!position) continue;
      // the node's three rows are consecutive within the aggregate: its offset d from the centre
      const size_t first = i - size_t(c);
      if (first + 2 >= rows.size()) continue;  // a node with fixed components: translations only
      Real d[3];
      for (int k = 0; k < 3; ++k)
        d[k] = (*position)[size_t(rows[first + size_t(k)])] - centre[k];
      // (e_k x d)_c for the rotation about axis k
      const Real rot[3][3] = {{0, -d[2], d[1]}, {d[2], 0, -d[0]}, {-d[1], d[0], 0}};
      for (int k = 0; k < 3; ++k)
        if (rot[k][c] != 0) tp.emplace_back(r, per * int(a) + 3 + k, rot[k][c]);
    }
  }
  SpMat P0(n, nc);
  P0.setFromTriplets(tp.begin(), tp.end());
  std::vector<Eigen::Triplet<double>> ta;
  for (int r = 0; r < n; ++r)
    for (int j = A.row_ptr[size_t(r)]; j < A.row_ptr[size_t(r) + 1]; ++j)
      ta.emplace_back(r, A.col[size_t(j)], A.val[size_t(j)]);
  SpMat As(n, n);
  As.setFromTriplets(ta.begin(), ta.end());
  if (smoothed) {
    // D^-1 as a sparse block-diagonal matrix
    std::vector<Eigen::Triplet<double>> td;
    for (size_t b = 0; b < D.rows.size(); ++b) {
      const std::vector<int>& rows = D.rows[b];
      const Eigen::Index m = Eigen::Index(rows.size());
      const Eigen::MatrixXd inv = D.llt[b].solve(Eigen::MatrixXd::Identity(m, m));
      for (Eigen::Index i = 0; i < m; ++i)
        for (Eigen::Index j = 0; j < m; ++j)
          td.emplace_back(rows[size_t(i)], rows[size_t(j)], inv(i, j));
    }
    SpMat Dinv(n, n);
    Dinv.setFromTriplets(td.begin(), td.end());
    const SpMat AP = As * P0;
    T.P = P0 - (2.0 / 3.0) * SpMat(Dinv * AP);
  } else {
    T.P = P0;
  }
  T.P.prune(0.0);
  const Eigen::MatrixXd Ac = Eigen::MatrixXd(SpMat(T.P.transpose() * SpMat(As * T.P)));
  T.coarse.compute(Ac);
  T.ok = T.coarse.info() == Eigen::Success;
  T.madds = D.madds + 2 * long(T.P.nonZeros()) + long(nc) * long(nc);
  if (multiplicative) T.madds += D.madds + 2 * long(A.val.size()) + 4L * n;
  return T;
}

struct CgResult {
  int iterations = 0;
  bool converged = false;
};

// preconditioned CG from x = 0 to |b - A x| <= kKrylovRelTol |b| (the engine's rule)
using Precondition = std::function<void(const std::vector<Real>&, std::vector<Real>&)>;

CgResult pcg(const Csr& A, const Precondition& P, const std::vector<Real>& b) {
  const size_t n = size_t(A.n);
  std::vector<Real> x(n, 0), r = b, z(n), p(n), Ap(n);
  auto dot = [](const std::vector<Real>& u, const std::vector<Real>& v) {
    Real s = 0;
    for (size_t i = 0; i < u.size(); ++i)
      s += u[i] * v[i];
    return s;
  };
  const Real stop = slender::kKrylovRelTol * slender::kKrylovRelTol * dot(b, b);
  P(r, z);
  p = z;
  Real rz = dot(r, z);
  CgResult res;
  const int cap = 20 * A.n;
  for (int it = 1; it <= cap; ++it) {
    A.multiply(p, Ap);
    const Real alpha = rz / dot(p, Ap);
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * Ap[i];
    }
    res.iterations = it;
    if (dot(r, r) <= stop) {
      res.converged = true;
      break;
    }
    P(r, z);
    const Real rz_new = dot(r, z);
    const Real beta = rz_new / rz;
    rz = rz_new;
    for (size_t i = 0; i < n; ++i)
      p[i] = z[i] + beta * p[i];
  }
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string size_name = "2k";
    long steps = 5;
    std::vector<long> patches = {1, 2, 4, 8, 16, 32};
    std::vector<long> coarse = {8, 32};
    Real E = 2e6;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--size") {
        size_name = slender::bench::option_value(argc, argv, i);
      } else if (a == "--steps") {
        const std::string v = slender::bench::option_value(argc, argv, i);
        steps = v == "0" ? 0 : slender::bench::parse_size(v);
      } else if (a == "--patch") {
        patches.clear();
        for (const std::string& s :
             slender::bench::split(slender::bench::option_value(argc, argv, i)))
          patches.push_back(slender::bench::parse_size(s));
      } else if (a == "--coarse") {
        coarse.clear();
        const std::string v = slender::bench::option_value(argc, argv, i);
        if (v != "0")
          for (const std::string& c : slender::bench::split(v))
            coarse.push_back(slender::bench::parse_size(c));
      } else if (a == "--E") {
        E = slender::bench::option_number(argc, argv, i);
        if (!(E > 0)) throw std::runtime_error("--E must be positive");
      } else {
        std::cout << "usage: slender_precond_bench [--size 2k] [--steps 5] "
                     "[--patch 1,2,4,8,16,32] [--coarse 8,32] [--E PA]\n";
        return a == "-h" || a == "--help" ? 0 : 2;
      }
    }
    const long target = slender::bench::parse_size(size_name);
    const int rings = slender::bench::cloth::rings_for(target);
    const auto model = slender::build_model(slender::bench::cloth::make_scene(rings, E));
    const int n = model->plan.nfree;
    if (double(n) * n > 4e8)
      throw std::runtime_error("the dense Jacobian of " + std::to_string(n) +
                               " free DOF would not fit: take a smaller --size");
    slender::Simulator sim(model);
    for (long s = 0; s < steps; ++s)
      if (!sim.step().ok()) throw std::runtime_error("step " + std::to_string(s + 1) + " failed");
    const Real dt = slender::bench::cloth::kDt;
    std::vector<Real> y = sim.state().q, f, J;
    for (size_t i = 0; i < y.size(); ++i)
      y[i] += dt * sim.state().u[i];
    sim.residual(dt, y, f, &J);
    Csr A;
    A.n = n;
    A.row_ptr.push_back(0);
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c)
        if (J[size_t(r) * size_t(n) + size_t(c)] != 0) {
          A.col.push_back(c);
          A.val.push_back(J[size_t(r) * size_t(n) + size_t(c)]);
        }
      A.row_ptr.push_back(int(A.col.size()));
    }
    J.clear();
    J.shrink_to_fit();
    // the engine's blocks: the free rows of one aligned triple of global DOFs
    std::vector<int> block_of(static_cast<size_t>(n));
    int nblock = 0;
    for (int r = 0; r < n; ++r) {
      if (r > 0 && model->plan.free_dof[size_t(r)] / 3 != model->plan.free_dof[size_t(r) - 1] / 3)
        ++nblock;
      block_of[size_t(r)] = nblock;
    }
    ++nblock;
    const long nnz = long(A.col.size());
    std::printf(
        "S9 cloth, %s (%d rings): %d triangles, %d free DOF, %ld nonzeros; the Newton "
        "matrix after %ld steps, |b| = %.3e\n",
        size_name.c_str(), rings, model->ntri, n, nnz, steps,
        std::sqrt(std::inner_product(f.begin(), f.end(), f.begin(), Real(0))));
    slender::bench::Table t;
    t.head = {"preconditioner", "blocks",          "CG iterations", "madds/iteration",
              "madds/solve",    "vs block Jacobi", "set-up madds"};
    double base = 0;
    auto row = [&](const std::string& name, size_t blocks, const Precondition& M, long madds,
                   double setup) {
      const CgResult cg = pcg(A, M, f);
      const double per = double(nnz + madds + 6L * n);
      const double total = per * cg.iterations;
      if (base == 0) base = total;
      t.rows.push_back({name, std::to_string(blocks),
                        std::to_string(cg.iterations) + (cg.converged ? "" : " (cap)"),
                        fmt("%.3g", per), fmt("%.3g", total), fmt("%.2f", total / base),
                        setup < 0 ? std::string("-") : fmt("%.3g", setup)});
    };
    auto cube_sum = [](const Patches& P) {
      double setup = 0;
      for (const std::vector<int>& rows : P.rows)
        setup += std::pow(double(rows.size()), 3) / 3;
      return setup;
    };
    const Patches jacobi = make_patches(A, block_of, nblock, 1);
    if (!jacobi.ok) throw std::runtime_error("a node's diagonal block is not positive definite");
    for (long k : patches) {
      const Patches P = k == 1 ? jacobi : make_patches(A, block_of, nblock, int(k));
      const std::string name = k == 1 ? "block Jacobi" : "patch Jacobi, " + std::to_string(k);
      if (!P.ok) {
        t.rows.push_back({name, std::to_string(P.rows.size()), "not SPD", "", "", "", ""});
        continue;
      }
      row(
          name, P.rows.size(),
          [&](const std::vector<Real>& r, std::vector<Real>& z) { P.apply(r, z); }, P.madds,
          cube_sum(P));
    }
    // two levels over aggregates of k nodes (the position component of each free row)
    std::vector<int> component(static_cast<size_t>(n));
    std::vector<Real> row_position(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      component[size_t(r)] = model->plan.free_dof[size_t(r)] % 3;
      row_position[size_t(r)] = y[size_t(model->plan.free_dof[size_t(r)])];
    }
    for (long k : coarse) {
      const Patches agg = make_patches(A, block_of, nblock, int(k));
      for (int variant = 0; variant < 4; ++variant) {
        const bool smoothed = variant > 0, mult = variant >= 2, rigid = variant == 3;
        const TwoLevel T = make_two_level(A, jacobi, agg, component,
                                          rigid ? &row_position : nullptr, smoothed, mult);
        const std::string name = std::string("2-level, ") + std::to_string(k) + "-node " +
                                 (smoothed ? "smoothed" : "plain") + " aggregates" +
                                 (rigid ? " with rotations" : "") + ", " +
                                 (mult ? "multiplicative" : "additive");
        if (!T.ok) {
          t.rows.push_back(
              {name, std::to_string(agg.rows.size()), "coarse not SPD", "", "", "", ""});
          continue;
        }
        const double nc = (rigid ? 6.0 : 3.0) * double(agg.rows.size());
        row(
            name, agg.rows.size(),
            [&](const std::vector<Real>& r, std::vector<Real>& z) { T.apply(r, z); }, T.madds,
            cube_sum(jacobi) + nc * nc * nc / 3);
      }
    }
    // the engine's multigrid (--solver amg), on the same matrix
    {
      slender::AmgCsr a;
      a.nrow = a.ncol = n;
      a.row_ptr = A.row_ptr;
      a.col = A.col;
      a.val = A.val;
      std::vector<int> block_row{0};
      for (int r = 1; r < n; ++r)
        if (block_of[size_t(r)] != block_of[size_t(r) - 1]) block_row.push_back(r);
      block_row.push_back(n);
      std::vector<Real> B;
      const int k = slender::rigid_near_null(
          model->plan.free_dof, std::vector<Real>(y.begin(), y.begin() + 3 * model->nnode), B);
      slender::AmgHierarchyHost h;
      std::string why;
      if (!slender::build_amg(a, block_row, B, k, slender::AmgOptions{}, h, why))
        throw std::runtime_error("the multigrid could not be built: " + why);
      slender::stepper::AmgOn<slender::HostExecutor> amg;
      amg.set(h);
      auto finest = [&](const Real* x, Real* out) {
        for (int r = 0; r < n; ++r)
          out[r] = slender::csr_row_dot(A.row_ptr.data(), A.col.data(), A.val.data(), x, r);
      };
      row(
          "multigrid V-cycle (--solver amg), " + std::to_string(h.levels.size()) + " levels",
          size_t(h.rows(1 < h.levels.size() ? 1 : 0)),
          [&](const std::vector<Real>& r, std::vector<Real>& z) {
            amg.apply(r.data(), z.data(), finest);
          },
          long(h.cycle_madds), -1);
    }
    slender::bench::print_text(std::cout, t);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "slender_precond_bench: " << e.what() << "\n";
    return 1;
  }
}
