// AMD ordering (Eigen) and permuted CSR patterns for the device factorizations.

#include "slender/engine/ordering.h"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <utility>

#include "slender/core/error.h"

namespace slender {

PermutedPattern permute_pattern(int n,
                                const std::vector<int>& row_ptr,
                                const std::vector<int>& col,
                                std::vector<int> order) {
  SLENDER_CHECK(int(order.size()) == n && int(row_ptr.size()) == n + 1,
                "pattern and order sizes differ");
  PermutedPattern p;
  std::vector<int> new_index(n, -1);
  for (int k = 0; k < n; ++k) {
    SLENDER_CHECK(order[k] >= 0 && order[k] < n && new_index[order[k]] < 0, "not a permutation at ",
                  k);
    new_index[order[k]] = k;
  }
  p.row_ptr.assign(size_t(n) + 1, 0);
  p.col.reserve(col.size());
  p.slot_map.reserve(col.size());
  p.diag_slot.assign(n, -1);
  std::vector<std::pair<int, int>> row;  // (new column, original slot)
  for (int k = 0; k < n; ++k) {
    const int r = order[k];
    row.clear();
    for (int s = row_ptr[r]; s < row_ptr[r + 1]; ++s)
      row.emplace_back(new_index[col[s]], s);
    std::sort(row.begin(), row.end());
    for (const auto& [c, s] : row) {
      if (c == k) p.diag_slot[k] = int(p.col.size());
      p.col.push_back(c);
      p.slot_map.push_back(s);
    }
    p.row_ptr[k + 1] = int(p.col.size());
  }
  p.order = std::move(order);
  return p;
}

namespace {

// whether a CSR pattern with ascending columns in each row is structurally symmetric: the rows
// taken in order, entry (r, c) must be the next entry of row c not yet met (O(nnz))
bool sorted_pattern_symmetric(int n, const std::vector<int>& row_ptr, const std::vector<int>& col) {
  std::vector<int> next(row_ptr.begin(), row_ptr.end() - 1);
  for (int r = 0; r < n; ++r)
    for (int s = row_ptr[r]; s < row_ptr[r + 1]; ++s) {
      const int c = col[s];
      if (s > row_ptr[r] && col[s - 1] >= c) return false;
      if (c < 0 || c >= n || next[c] >= row_ptr[c + 1] || col[next[c]] != r) return false;
      ++next[c];
    }
  return true;
}

}  // namespace

std::vector<int> fill_reducing_order(int n,
                                     const std::vector<int>& row_ptr,
                                     const std::vector<int>& col) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (n > 1) {
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> pinv;
    if (sorted_pattern_symmetric(n, row_ptr, col)) {
      // Eigen's AMD on the pattern itself: the A^T + A it would form first is the same pattern
      // in the same order (its 1-byte values unread), so the order is the same, without the
      // transpose, the sum and their values (a 10^6-node network's estimate held 2 GiB more)
      Eigen::SparseMatrix<char, Eigen::ColMajor, int> A(n, n);
      A.resizeNonZeros(Eigen::Index(col.size()));
      std::copy(row_ptr.begin(), row_ptr.end(), A.outerIndexPtr());
      std::copy(col.begin(), col.end(), A.innerIndexPtr());
      std::fill(A.valuePtr(), A.valuePtr() + col.size(), char(1));
      Eigen::internal::minimum_degree_ordering(A, pinv);
    } else {
      // the pattern as a column-major sparse matrix (rows read as columns), its arrays sized
      // exactly (an assignment from a mapped matrix grows them entry by entry)
      using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
      SpMat A(n, n);
      A.resizeNonZeros(Eigen::Index(col.size()));
      std::copy(row_ptr.begin(), row_ptr.end(), A.outerIndexPtr());
      std::copy(col.begin(), col.end(), A.innerIndexPtr());
      std::fill(A.valuePtr(), A.valuePtr() + col.size(), 1.0);
      Eigen::AMDOrdering<int> amd;
      amd(A, pinv);
    }
    // Eigen's convention (as its Cholesky uses it): the permuted matrix is A.twistedBy(P) with
    // P = pinv^-1, so new row k is original row pinv.indices()[k]
    for (int k = 0; k < n; ++k)
      order[k] = pinv.indices()[k];
  }
  return order;
}

PermutedPattern fill_reducing_pattern(int n,
                                      const std::vector<int>& row_ptr,
                                      const std::vector<int>& col) {
  return permute_pattern(n, row_ptr, col, fill_reducing_order(n, row_ptr, col));
}

std::vector<int> reverse_cuthill_mckee(int n,
                                       const std::vector<int>& row_ptr,
                                       const std::vector<int>& col) {
  std::vector<int> degree(n), order;
  order.reserve(n);
  for (int i = 0; i < n; ++i)
    degree[i] = row_ptr[i + 1] - row_ptr[i];
  std::vector<char> seen(n, 0);
  std::vector<int> nbr;
  // one breadth-first sweep per connected component, from a node of least degree (a good
  // stand-in for a peripheral node: a rod's end), neighbours by increasing degree
  for (;;) {
    int start = -1;
    for (int i = 0; i < n; ++i)
      if (!seen[i] && (start < 0 || degree[i] < degree[start])) start = i;
    if (start < 0) break;
    size_t head = order.size();
    order.push_back(start);
    seen[start] = 1;
    while (head < order.size()) {
      const int v = order[head++];
      nbr.clear();
      for (int s = row_ptr[v]; s < row_ptr[v + 1]; ++s)
        if (!seen[col[s]]) {
          seen[col[s]] = 1;
          nbr.push_back(col[s]);
        }
      std::stable_sort(nbr.begin(), nbr.end(), [&](int a, int b) { return degree[a] < degree[b]; });
      order.insert(order.end(), nbr.begin(), nbr.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

BandLayout band_layout(int n, const std::vector<int>& row_ptr, const std::vector<int>& col) {
  BandLayout b;
  b.n = n;
  b.order = reverse_cuthill_mckee(n, row_ptr, col);
  std::vector<int> new_index(n);
  for (int k = 0; k < n; ++k)
    new_index[b.order[k]] = k;
  for (int r = 0; r < n; ++r)
    for (int s = row_ptr[r]; s < row_ptr[r + 1]; ++s)
      b.w = std::max(b.w, std::abs(new_index[col[s]] - new_index[r]));
  const int stride = 2 * b.w + 1;
  b.band_size = long(n) * stride;
  b.band_pos.resize(col.size());
  for (int r = 0; r < n; ++r)
    for (int s = row_ptr[r]; s < row_ptr[r + 1]; ++s) {
      const int i = new_index[r], j = new_index[col[s]];
      b.band_pos[s] = i * stride + (j - i + b.w);
    }
  return b;
}

int half_bandwidth(int n, const std::vector<int>& row_ptr, const std::vector<int>& col) {
  int w = 0;
  for (int i = 0; i < n; ++i)
    for (int s = row_ptr[i]; s < row_ptr[i + 1]; ++s)
      w = std::max(w, std::abs(col[s] - i));
  return w;
}

long cholesky_fill(int n,
                   const std::vector<int>& row_ptr,
                   const std::vector<int>& col,
                   const std::vector<int>& order) {
  SLENDER_CHECK(int(order.size()) == n && int(row_ptr.size()) == n + 1,
                "pattern and order sizes differ");
  std::vector<int> new_index(n, -1);
  for (int k = 0; k < n; ++k)
    new_index[order[k]] = k;
  // the elimination tree (Liu's algorithm, with path compression through `ancestor`): row k's
  // entries left of the diagonal, each followed up to its root, which becomes k's child
  std::vector<int> parent(n, -1), ancestor(n, -1);
  for (int k = 0; k < n; ++k) {
    const int r = order[k];
    for (int s = row_ptr[r]; s < row_ptr[r + 1]; ++s) {
      for (int i = new_index[col[s]]; i != -1 && i < k;) {
        const int next = ancestor[i];
        ancestor[i] = k;
        if (next == -1) parent[i] = k;
        i = next;
      }
    }
  }
  // row k of L: the nodes on the tree's paths from each entry left of the diagonal up to k
  // (each counted once: marked with k)
  std::vector<int>& mark = ancestor;
  std::fill(mark.begin(), mark.end(), -1);
  long nnz = n;
  for (int k = 0; k < n; ++k) {
    mark[k] = k;
    const int r = order[k];
    for (int s = row_ptr[r]; s < row_ptr[r + 1]; ++s) {
      for (int i = new_index[col[s]]; i < k && mark[i] != k; i = parent[i]) {
        mark[i] = k;
        ++nnz;
      }
    }
  }
  return nnz;
}

long cholesky_fill(int n, const std::vector<int>& row_ptr, const std::vector<int>& col) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  return cholesky_fill(n, row_ptr, col, order);
}

}  // namespace slender
