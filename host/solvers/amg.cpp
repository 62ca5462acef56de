// The smoothed-aggregation hierarchy of include/slender/engine/amg.h, built on the host. The
// sparse products are row-wise (Gustavson): a symbolic pass counts each row's columns, a numeric
// pass fills them, both parallel over rows with a marker array per thread.

#include "slender/engine/amg.h"

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "slender/core/parallel_for.h"

namespace slender {

namespace {

// per-thread scratch: sized on a thread's first chunk
template <class T>
std::vector<T>& scratch(std::vector<std::vector<T>>& per_slot, int slot, size_t n, T fill) {
  std::vector<T>& v = per_slot[size_t(slot)];
  if (v.size() != n) v.assign(n, fill);
  return v;
}

// C = A B (columns sorted within each row)
AmgCsr multiply(const AmgCsr& A, const AmgCsr& B) {
  AmgCsr C;
  C.nrow = A.nrow;
  C.ncol = B.ncol;
  C.row_ptr.assign(size_t(A.nrow) + 1, 0);
  const int nt = host_threads();
  std::vector<std::vector<int>> marks(static_cast<size_t>(nt));
  // symbolic: each row's column count
  parallel_chunks_host(
      A.nrow,
      [&](long begin, long end, int slot) {
        std::vector<int>& mark = scratch(marks, slot, size_t(B.ncol), -1);
        for (int i = int(begin); i < int(end); ++i) {
          int count = 0;
          for (int a = A.row_ptr[size_t(i)]; a < A.row_ptr[size_t(i) + 1]; ++a) {
            const int k = A.col[size_t(a)];
            for (int b = B.row_ptr[size_t(k)]; b < B.row_ptr[size_t(k) + 1]; ++b) {
              const int j = B.col[size_t(b)];
              if (mark[size_t(j)] != i) {
                mark[size_t(j)] = i;
                ++count;
              }
            }
          }
          C.row_ptr[size_t(i) + 1] = count;
        }
      },
      kParallelGrainHeavy, nt);
  std::partial_sum(C.row_ptr.begin(), C.row_ptr.end(), C.row_ptr.begin());
  C.col.resize(size_t(C.row_ptr.back()));
  C.val.resize(size_t(C.row_ptr.back()));
  // numeric: each row's sums in a dense accumulator (`seen`: the rows whose column j is in
  // `sum`), its columns listed, sorted, then written with their sums (the sums in the order of
  // the products, whatever the columns' order)
  std::vector<std::vector<Real>> sums(static_cast<size_t>(nt));
  marks.assign(size_t(nt), {});  // (the symbolic pass's marks are row numbers)
  parallel_chunks_host(
      A.nrow,
      [&](long begin, long end, int slot) {
        std::vector<int>& seen = scratch(marks, slot, size_t(B.ncol), -1);
        std::vector<Real>& sum = scratch(sums, slot, size_t(B.ncol), Real(0));
        for (int i = int(begin); i < int(end); ++i) {
          int* col = C.col.data() + C.row_ptr[size_t(i)];
          int count = 0;
          for (int a = A.row_ptr[size_t(i)]; a < A.row_ptr[size_t(i) + 1]; ++a) {
            const int k = A.col[size_t(a)];
            const Real v = A.val[size_t(a)];
            for (int b = B.row_ptr[size_t(k)]; b < B.row_ptr[size_t(k) + 1]; ++b) {
              const int j = B.col[size_t(b)];
              if (seen[size_t(j)] != i) {
                seen[size_t(j)] = i;
                col[count++] = j;
                sum[size_t(j)] = 0;
              }
              sum[size_t(j)] += v * B.val[size_t(b)];
            }
          }
          std::sort(col, col + count);
          Real* val = C.val.data() + C.row_ptr[size_t(i)];
          for (int e = 0; e < count; ++e)
            val[e] = sum[size_t(col[e])];
        }
      },
      kParallelGrainHeavy, nt);
  return C;
}

AmgCsr transpose(const AmgCsr& A) {
  AmgCsr T;
  T.nrow = A.ncol;
  T.ncol = A.nrow;
  T.row_ptr.assign(size_t(A.ncol) + 1, 0);
  for (int c : A.col)
    ++T.row_ptr[size_t(c) + 1];
  std::partial_sum(T.row_ptr.begin(), T.row_ptr.end(), T.row_ptr.begin());
  T.col.resize(A.col.size());
  T.val.resize(A.val.size());
  std::vector<int> next(T.row_ptr.begin(), T.row_ptr.end() - 1);
  for (int r = 0; r < A.nrow; ++r)  // rows in order: each of T's rows comes out sorted
    for (int e = A.row_ptr[size_t(r)]; e < A.row_ptr[size_t(r) + 1]; ++e) {
      const int slot = next[size_t(A.col[size_t(e)])]++;
      T.col[size_t(slot)] = r;
      T.val[size_t(slot)] = A.val[size_t(e)];
    }
  return T;
}

// the block-diagonal matrix of the blocks' bs x bs matrices (row-major)
AmgCsr block_diagonal(const std::vector<int>& block_row, int bs, const std::vector<Real>& blocks) {
  AmgCsr D;
  D.nrow = D.ncol = block_row.back();
  const size_t stride = size_t(bs) * size_t(bs);
  for (size_t b = 0; b + 1 < block_row.size(); ++b) {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) {
        D.col.push_back(r0 + j);
        D.val.push_back(blocks[stride * b + size_t(i * bs + j)]);
      }
      D.row_ptr.push_back(int(D.col.size()));
    }
  }
  return D;
}

// y = A x
void product(const AmgCsr& A, const std::vector<Real>& x, std::vector<Real>& y) {
  y.resize(size_t(A.nrow));
  parallel_for_host(A.nrow,
                    CsrSpmv{A.row_ptr.data(), A.col.data(), A.val.data(), x.data(), y.data()});
}

// the blocks' inverses (bs x bs each, row-major); false where a block (at most bs rows) is not
// positive definite. Inverts the symmetric part, by Cholesky.
bool invert_blocks(const AmgCsr& A,
                   const std::vector<int>& block_row,
                   int bs,
                   std::vector<Real>& inv) {
  const long nb = long(block_row.size()) - 1;
  const size_t stride = size_t(bs) * size_t(bs);
  inv.assign(stride * size_t(nb), 0);
  std::atomic<int> bad{0};
  parallel_for_host(
      nb,
      [&](long b) {
        const int r0 = block_row[size_t(b)], m = block_row[size_t(b) + 1] - r0;
        Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m, m);
        for (int i = 0; i < m; ++i)
          for (int e = A.row_ptr[size_t(r0 + i)]; e < A.row_ptr[size_t(r0 + i) + 1]; ++e) {
            const int c = A.col[size_t(e)] - r0;
            if (c >= 0 && c < m) a(i, c) += A.val[size_t(e)];
          }
        const Eigen::MatrixXd sym = 0.5 * (a + a.transpose());
        const Eigen::LLT<Eigen::MatrixXd> llt(sym);
        if (llt.info() != Eigen::Success) {
          bad.fetch_add(1, std::memory_order_relaxed);
          return;
        }
        const Eigen::MatrixXd ai = llt.solve(Eigen::MatrixXd::Identity(m, m));
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j)
            inv[stride * size_t(b) + size_t(i * bs + j)] = ai(i, j);
      },
      kParallelGrainHeavy);
  return bad.load() == 0;
}

// y = D^-1 x with the blocks' inverses
void block_solve(const std::vector<int>& block_row,
                 int bs,
                 const std::vector<Real>& inv,
                 const std::vector<Real>& x,
                 std::vector<Real>& y) {
  y.resize(x.size());
  parallel_for_host(long(block_row.size()) - 1,
                    BlockSmooth{block_row.data(), bs, inv.data(), x.data(), y.data()});
}

// the spectral radius of D^-1 A, by power iteration from a fixed start
Real spectral_radius(const AmgCsr& A,
                     const std::vector<int>& block_row,
                     int bs,
                     const std::vector<Real>& inv) {
  const size_t n = size_t(A.nrow);
  std::vector<Real> x(n), y, z;
  for (size_t i = 0; i < n; ++i)  // not orthogonal to the top modes: a fixed, irregular start
    x[i] = 1 + Real(0.5) * std::sin(Real(1.7) * Real(i) + Real(0.3));
  Real rho = 0;
  for (int it = 0; it < 15; ++it) {
    product(A, x, y);
    block_solve(block_row, bs, inv, y, z);
    Real zz = 0, xx = 0;
    for (size_t i = 0; i < n; ++i) {
      zz += z[i] * z[i];
      xx += x[i] * x[i];
    }
    if (!(zz > 0) || !(xx > 0)) break;
    rho = std::sqrt(zz / xx);
    const Real s = 1 / std::sqrt(zz);
    for (size_t i = 0; i < n; ++i)
      x[i] = z[i] * s;
  }
  return rho;
}

struct Aggregation {
  std::vector<int> of_block;  // each block's aggregate
  int count = 0;
};

// greedy aggregation over the strong block graph
Aggregation aggregate(const AmgCsr& A, const std::vector<int>& block_row, Real theta) {
  const int nb = int(block_row.size()) - 1;
  std::vector<int> block_of(static_cast<size_t>(A.nrow));
  for (int b = 0; b < nb; ++b)
    for (int r = block_row[size_t(b)]; r < block_row[size_t(b) + 1]; ++r)
      block_of[size_t(r)] = b;
  // |A_II|_F^2 and the squared block norms of each block row
  std::vector<Real> diag(static_cast<size_t>(nb), 0);
  std::vector<std::vector<std::pair<int, Real>>> coupling(static_cast<size_t>(nb));
  const int nt = host_threads();
  std::vector<std::vector<int>> marks(static_cast<size_t>(nt));
  parallel_chunks_host(
      nb,
      [&](long begin, long end, int slot) {
        std::vector<int>& where =
            scratch(marks, slot, size_t(nb), -1);  // (-1 again after each row)
        for (int b = int(begin); b < int(end); ++b) {
          std::vector<std::pair<int, Real>>& row = coupling[size_t(b)];
          for (int r = block_row[size_t(b)]; r < block_row[size_t(b) + 1]; ++r)
            for (int e = A.row_ptr[size_t(r)]; e < A.row_ptr[size_t(r) + 1]; ++e) {
              const int J = block_of[size_t(A.col[size_t(e)])];
              const Real v = A.val[size_t(e)];
              if (where[size_t(J)] < 0) {
                where[size_t(J)] = int(row.size());
                row.emplace_back(J, 0);
              }
              row[size_t(where[size_t(J)])].second += v * v;
            }
          for (const auto& c : row) {
            where[size_t(c.first)] = -1;
            if (c.first == b) diag[size_t(b)] = c.second;
          }
        }
      },
      kParallelGrainHeavy, nt);
  // the strong graph, symmetrized, with each edge's strength
  std::vector<std::vector<std::pair<int, Real>>> strong(static_cast<size_t>(nb));
  for (int b = 0; b < nb; ++b)
    for (const auto& c : coupling[size_t(b)]) {
      if (c.first == b) continue;
      const Real s = std::sqrt(c.second / std::sqrt(diag[size_t(b)] * diag[size_t(c.first)]));
      if (s > theta) {
        strong[size_t(b)].emplace_back(c.first, s);
        strong[size_t(c.first)].emplace_back(b, s);
      }
    }
  for (auto& s : strong) {
    std::sort(s.begin(), s.end());
    // duplicates (both directions found) keep the larger strength
    std::vector<std::pair<int, Real>> u;
    for (const auto& e : s) {
      if (!u.empty() && u.back().first == e.first) {
        u.back().second = std::max(u.back().second, e.second);
      } else {
        u.push_back(e);
      }
    }
    s.swap(u);
  }
  Aggregation g;
  g.of_block.assign(size_t(nb), -1);
  // 1: a block whose strong neighbours are all free seeds an aggregate of them all
  for (int b = 0; b < nb; ++b) {
    if (g.of_block[size_t(b)] >= 0) continue;
    bool free = true;
    for (const auto& e : strong[size_t(b)])
      if (g.of_block[size_t(e.first)] >= 0) {
        free = false;
        break;
      }
    if (!free || strong[size_t(b)].empty()) continue;
    g.of_block[size_t(b)] = g.count;
    for (const auto& e : strong[size_t(b)])
      g.of_block[size_t(e.first)] = g.count;
    ++g.count;
  }
  // 2: the others join the aggregate they are most strongly coupled to
  std::vector<int> joined = g.of_block;
  for (int b = 0; b < nb; ++b) {
    if (g.of_block[size_t(b)] >= 0) continue;
    Real best = -1;
    for (const auto& e : strong[size_t(b)])
      if (g.of_block[size_t(e.first)] >= 0 && e.second > best) {
        best = e.second;
        joined[size_t(b)] = g.of_block[size_t(e.first)];
      }
  }
  g.of_block.swap(joined);
  // 3: what is left (no strong neighbour in an aggregate) makes aggregates of its own
  for (int b = 0; b < nb; ++b) {
    if (g.of_block[size_t(b)] >= 0) continue;
    g.of_block[size_t(b)] = g.count;
    for (const auto& e : strong[size_t(b)])
      if (g.of_block[size_t(e.first)] < 0) g.of_block[size_t(e.first)] = g.count;
    ++g.count;
  }
  return g;
}

bool all_finite(const std::vector<Real>& v) {
  for (Real x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

AmgCsr csr_add(const AmgCsr& A, Real a, const AmgCsr& B, Real b, bool keep_zeros) {
  AmgCsr C;
  C.nrow = A.nrow;
  C.ncol = A.ncol;
  C.row_ptr.assign(size_t(A.nrow) + 1, 0);
  // each row merged twice: counting, then filling
  auto merge = [&](int r, int* col, Real* val) {
    int i = A.row_ptr[size_t(r)], j = B.row_ptr[size_t(r)], k = 0;
    const int ie = A.row_ptr[size_t(r) + 1], je = B.row_ptr[size_t(r) + 1];
    while (i < ie || j < je) {
      const int ci = i < ie ? A.col[size_t(i)] : INT_MAX, cj = j < je ? B.col[size_t(j)] : INT_MAX;
      const int c = std::min(ci, cj);
      const Real v =
          (ci == c ? a * A.val[size_t(i++)] : 0) + (cj == c ? b * B.val[size_t(j++)] : 0);
      if (v == 0 && !keep_zeros) continue;
      if (col) {
        col[k] = c;
        val[k] = v;
      }
      ++k;
    }
    return k;
  };
  parallel_for_host(
      A.nrow, [&](long r) { C.row_ptr[size_t(r) + 1] = merge(int(r), nullptr, nullptr); },
      kParallelGrainMedium);
  std::partial_sum(C.row_ptr.begin(), C.row_ptr.end(), C.row_ptr.begin());
  C.col.resize(size_t(C.row_ptr.back()));
  C.val.resize(size_t(C.row_ptr.back()));
  parallel_for_host(
      A.nrow,
      [&](long r) {
        merge(int(r), C.col.data() + C.row_ptr[size_t(r)], C.val.data() + C.row_ptr[size_t(r)]);
      },
      kParallelGrainMedium);
  return C;
}

int rigid_near_null(const std::vector<int>& free_dof,
                    const std::vector<Real>& y,
                    std::vector<Real>& B) {
  const long ng = long(y.size());
  bool other = false;
  for (int d : free_dof)
    other = other || d >= ng;
  const int k = other ? 7 : 6;
  B.assign(free_dof.size() * size_t(k), 0);
  for (size_t r = 0; r < free_dof.size(); ++r) {
    Real* b = B.data() + r * size_t(k);
    const int d = free_dof[r];
    if (d >= ng) {
      b[6] = 1;
      continue;
    }
    const int c = d % 3;
    const Real* x = y.data() + (d - c);
    // (e_j x x)_c for the rotation about axis j
    const Real rot[3][3] = {{0, -x[2], x[1]}, {x[2], 0, -x[0]}, {-x[1], x[0], 0}};
    b[c] = 1;
    for (int j = 0; j < 3; ++j)
      b[3 + j] = rot[j][c];
  }
  return k;
}

bool amg_dense_inverse(const AmgCsr& A, std::vector<Real>& out, std::string& why) {
  const int n = A.nrow;
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  for (int r = 0; r < n; ++r)
    for (int e = A.row_ptr[size_t(r)]; e < A.row_ptr[size_t(r) + 1]; ++e)
      M(r, A.col[size_t(e)]) += A.val[size_t(e)];
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(M);
  const Eigen::MatrixXd Mi = lu.inverse();
  out.resize(size_t(n) * size_t(n));
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      out[size_t(r) * size_t(n) + size_t(c)] = Mi(r, c);
  if (n > 0 && (!all_finite(out) || !(std::abs(lu.determinant()) > 0))) {
    why = "the coarsest matrix (" + std::to_string(n) + " rows) is singular";
    return false;
  }
  return true;
}

bool build_amg(const AmgCsr& A0,
               const std::vector<int>& block_row0,
               const std::vector<Real>& near_null,
               int k,
               const AmgOptions& options,
               AmgHierarchyHost& out,
               std::string& why) {
  out = AmgHierarchyHost{};
  if (!all_finite(A0.val)) {
    why = "the matrix has a value that is not finite";
    return false;
  }
  // this level's blocks and near-null space (n x k, row-major); the finest level's are the
  // caller's, the coarser ones' are built below
  std::vector<int> block_row = block_row0;
  const std::vector<Real>* B = &near_null;
  std::vector<Real> coarse_B;
  AmgCsr coarse_A;  // the next level's matrix, moved into its level
  // this level's largest block (3 on the finest, whose blocks' inverses the engine refreshes in
  // its own 3 x 3 layout)
  int bs = 3;
  for (size_t b = 0; b + 1 < block_row.size(); ++b)
    if (block_row[b + 1] - block_row[b] > 3) {
      why = "a block of the finest level has more than 3 rows";
      return false;
    }
  if (near_null.size() != size_t(A0.nrow) * size_t(k) || k < 1) {
    why = "the near-null space does not have k columns for each row";
    return false;
  }
  const Real theta = options.theta;
  const bool trace = options.trace;
  int coarsest = options.coarsest;
  for (int level = 0;; ++level) {
    out.levels.emplace_back();
    AmgLevelHost& L = out.levels.back();
    L.block_row = block_row;
    L.bs = bs;
    if (level > 0) L.A = std::move(coarse_A);
    // this level's matrix: the caller's on the finest level, else the level's own
    const AmgCsr& A = level > 0 ? L.A : A0;
    const int n = A.nrow;
    const bool last = n <= coarsest || level + 1 >= options.max_levels;
    if (last) {
      // the coarsest level: its matrix, inverted densely
      if (n > 4 * coarsest) {
        why = "level " + std::to_string(level) + " still has " + std::to_string(n) +
              " rows: too many to invert densely";
        return false;
      }
      if (!amg_dense_inverse(A, out.coarse_inverse, why)) return false;
      out.cycle_madds += double(n) * double(n);
      if (trace) std::fprintf(stderr, "amg level %d: %d rows (coarsest)\n", level, n);
      break;
    }
    std::vector<Real> inv;
    auto t0 = std::chrono::steady_clock::now();
    auto lap = [&](const char* what) {
      if (!trace) return;
      const auto t1 = std::chrono::steady_clock::now();
      std::fprintf(stderr, "  amg level %d %s: %.3f s\n", level, what,
                   std::chrono::duration<double>(t1 - t0).count());
      t0 = t1;
    };
    if (!invert_blocks(A, block_row, bs, inv)) {
      why = "a diagonal block of level " + std::to_string(level) + " is not positive definite";
      return false;
    }
    L.rho = spectral_radius(A, block_row, bs, inv);
    if (!(L.rho > 0) || !std::isfinite(L.rho)) {
      why = "the spectral radius of D^-1 A on level " + std::to_string(level) + " is not positive";
      return false;
    }
    // the smoother: w D^-1
    const Real w = Real(4) / (Real(3) * L.rho);
    L.smoother = inv;
    for (Real& v : L.smoother)
      v *= w;
    // the tentative prolongator: per aggregate, an orthonormal basis of the near-null space on
    // its rows (Q of a QR factorization with column pivoting, dependent columns dropped); R
    // gives the near-null space of the coarse level
    lap("blocks, rho");
    const Aggregation g = aggregate(A, block_row, theta);
    lap("aggregates");
    std::vector<std::vector<int>> rows_of(static_cast<size_t>(g.count));
    for (size_t b = 0; b + 1 < block_row.size(); ++b)
      for (int r = block_row[b]; r < block_row[b + 1]; ++r)
        rows_of[size_t(g.of_block[b])].push_back(r);
    struct Local {
      Eigen::MatrixXd Q, R;  // (rows x rank), (rank x k)
    };
    std::vector<Local> local(static_cast<size_t>(g.count));
    // (a small QR each: one thread per 64)
    parallel_for_host(
        g.count,
        [&](long a) {
          const std::vector<int>& rows = rows_of[size_t(a)];
          Eigen::MatrixXd M(Eigen::Index(rows.size()), k);
          for (size_t i = 0; i < rows.size(); ++i)
            for (int c = 0; c < k; ++c)
              M(Eigen::Index(i), c) = (*B)[size_t(rows[i]) * size_t(k) + size_t(c)];
          Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(M);
          qr.setThreshold(1e-10);
          const Eigen::Index rank = qr.rank();
          const Eigen::MatrixXd Qfull =
              qr.householderQ() * Eigen::MatrixXd::Identity(M.rows(), rank);
          const Eigen::MatrixXd Rp = qr.matrixR().topRows(rank).triangularView<Eigen::Upper>();
          local[size_t(a)].Q = Qfull;
          local[size_t(a)].R = Rp * qr.colsPermutation().transpose();
        },
        64);
    std::vector<int> next_block_row{0}, first_col(static_cast<size_t>(g.count));
    int nc = 0, next_bs = 0;
    for (int a = 0; a < g.count; ++a) {
      first_col[size_t(a)] = nc;
      const int rank = int(local[size_t(a)].Q.cols());
      nc += rank;
      next_bs = std::max(next_bs, rank);
      if (rank > 0) next_block_row.push_back(nc);
    }
    AmgCsr P0;
    P0.nrow = n;
    P0.ncol = nc;
    {
      std::vector<std::vector<std::pair<int, Real>>> prow(static_cast<size_t>(n));
      for (int a = 0; a < g.count; ++a) {
        const Local& lo = local[size_t(a)];
        for (size_t i = 0; i < rows_of[size_t(a)].size(); ++i)
          for (Eigen::Index c = 0; c < lo.Q.cols(); ++c)
            if (lo.Q(Eigen::Index(i), c) != 0)
              prow[size_t(rows_of[size_t(a)][i])].emplace_back(first_col[size_t(a)] + int(c),
                                                               lo.Q(Eigen::Index(i), c));
      }
      for (int r = 0; r < n; ++r) {
        for (const auto& e : prow[size_t(r)]) {
          P0.col.push_back(e.first);
          P0.val.push_back(e.second);
        }
        P0.row_ptr.push_back(int(P0.col.size()));
      }
    }
    std::vector<Real> next_B(size_t(nc) * size_t(k), 0);
    for (int a = 0; a < g.count; ++a) {
      const Local& lo = local[size_t(a)];
      for (Eigen::Index i = 0; i < lo.R.rows(); ++i)
        for (int c = 0; c < k; ++c)
          next_B[size_t(first_col[size_t(a)] + int(i)) * size_t(k) + size_t(c)] = lo.R(i, c);
    }
    // smoothed: P = P0 - w D^-1 A P0
    lap("tentative P");
    L.P = csr_add(P0, 1, multiply(block_diagonal(block_row, bs, inv), multiply(A, P0)), -w);
    const AmgCsr& P = L.P;
    lap("smoothed P");
    L.R = transpose(P);
    // the coarse matrix R A P (A P's pattern kept for AmgOn::refresh's products)
    AmgCsr AP = multiply(A, P);
    coarse_A = multiply(L.R, AP);
    L.AP_row_ptr = std::move(AP.row_ptr);
    L.AP_col = std::move(AP.col);
    lap("R A P");
    out.cycle_madds += 2 * double(bs) * double(bs) * double(block_row.size() - 1) +
                       2 * double(A.nnz()) + double(P.nnz()) + double(L.R.nnz()) + 2.0 * n;
    const bool stalled = nc > n * 3 / 4;
    if (trace)
      std::fprintf(stderr, "amg level %d: %d rows, %ld nnz, rho %.3f, P nnz %ld -> %d rows\n",
                   level, n, A.nnz(), L.rho, P.nnz(), nc);
    block_row = std::move(next_block_row);
    coarse_B = std::move(next_B);
    B = &coarse_B;
    bs = next_bs;
    if (stalled) {
      // the next level is the coarsest, whatever its size (a dense inverse)
      if (coarse_A.nrow > 4 * options.coarsest) {
        why = "coarsening stalls at " + std::to_string(coarse_A.nrow) + " rows on level " +
              std::to_string(level + 1);
        return false;
      }
      coarsest = coarse_A.nrow;
    }
  }
  return true;
}

}  // namespace slender
