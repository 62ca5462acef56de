#pragma once

// Fill-reducing ordering of a symmetric sparse pattern (approximate minimum degree, Eigen's AMD)
// and the CSR of the permuted matrix with the map from its slots to the original ones: the
// device Cholesky and QR (cuSOLVER's low-level csrchol orders only by its elimination tree, and
// csrlsvqr's reorder argument has no effect) factorize P J P^T instead of J, whose twist and
// mid-edge DOFs, numbered after every position, would otherwise fill the factor quadratically.

#include <vector>

namespace slender {

struct PermutedPattern {
  std::vector<int> order;      ///< original row of each new row                  (n)
  std::vector<int> row_ptr;    ///< CSR of P J P^T                                 (n + 1)
  std::vector<int> col;        ///< columns, ascending in each row                 (nnz)
  std::vector<int> slot_map;   ///< original slot of each slot of P J P^T          (nnz)
  std::vector<int> diag_slot;  ///< slot of each diagonal entry of P J P^T, -1 if none (n)
};

/// AMD ordering of the symmetric pattern (row_ptr, col) of an n x n matrix (every structurally
/// nonzero (i, j) with (j, i)), and the permuted CSR.
PermutedPattern fill_reducing_pattern(int n,
                                      const std::vector<int>& row_ptr,
                                      const std::vector<int>& col);
/// The AMD order alone (order[k] = original row of new row k), as fill_reducing_pattern's.
std::vector<int> fill_reducing_order(int n,
                                     const std::vector<int>& row_ptr,
                                     const std::vector<int>& col);

/// The permuted CSR for a given order (order[k] = original row of new row k).
PermutedPattern permute_pattern(int n,
                                const std::vector<int>& row_ptr,
                                const std::vector<int>& col,
                                std::vector<int> order);

/// Reverse Cuthill-McKee ordering (order[k] = original row of new row k): a bandwidth-reducing
/// order; for a rod it runs node by node with the twists between (half-bandwidth about 10).
std::vector<int> reverse_cuthill_mckee(int n,
                                       const std::vector<int>& row_ptr,
                                       const std::vector<int>& col);

/// The band storage of a pattern's matrix in reverse Cuthill-McKee order: banded row k is
/// original row order[k]; half-bandwidth w; the entry of CSR slot s lands at band_pos[s] of a
/// row-major band of 2w + 1 entries per row (include/slender/core/banded.h), band_size in all.
struct BandLayout {
  int n = 0, w = 0;
  long band_size = 0;
  std::vector<int> order, band_pos;
};
BandLayout band_layout(int n, const std::vector<int>& row_ptr, const std::vector<int>& col);

/// Half-bandwidth max |i - j| over the entries of a CSR pattern.
int half_bandwidth(int n, const std::vector<int>& row_ptr, const std::vector<int>& col);

/// Nonzeros of the Cholesky factor L (diagonal included) of a symmetric pattern in its own
/// order: how much fill an ordering leaves. From the elimination tree, each row of L the nodes
/// on the tree's paths from the row's entries up to the row (linear in the count, O(n) memory).
long cholesky_fill(int n, const std::vector<int>& row_ptr, const std::vector<int>& col);
/// The same for the pattern in the order `order` (order[k] = original row of new row k), without
/// a permuted copy of it.
long cholesky_fill(int n,
                   const std::vector<int>& row_ptr,
                   const std::vector<int>& col,
                   const std::vector<int>& order);

}  // namespace slender
