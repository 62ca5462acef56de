#pragma once

// The direct linear solve of the CUDA backend (issue: CUDA backend, item 3): cuSOLVER's sparse
// Cholesky on the device CSR matrix of the free-DOF Jacobian, symbolic analysis once per
// sparsity pattern and numeric refactorization every Newton iteration (the low-level csrchol
// API), with sparse QR (csrlsvqr) when the matrix is not positive definite or not symmetric.
// The matrix is the model's CSR (row-major J), so no transposition is involved. All pointers are
// device pointers. No CUDA types appear here.

#include <memory>

#include "slender/core/types.h"

namespace slender {

class DeviceSparseSolver {
 public:
  /// analyses the pattern (n rows, nnz entries, device CSR arrays that must outlive the solver);
  /// symmetric = false skips Cholesky (non-symmetric Jacobians: friction, drag)
  DeviceSparseSolver(int n, int nnz, const int* d_row_ptr, const int* d_col, bool symmetric);
  ~DeviceSparseSolver();
  DeviceSparseSolver(const DeviceSparseSolver&) = delete;
  DeviceSparseSolver& operator=(const DeviceSparseSolver&) = delete;

  /// numeric factorization of the values d_val (nnz); false if the matrix is singular
  bool factorize(const Real* d_val);
  /// d_x = J^-1 d_b (n each); false if the solve failed (singular matrix)
  bool solve(const Real* d_b, Real* d_x);
  /// whether the last factorize() fell back to QR
  bool used_fallback() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slender
