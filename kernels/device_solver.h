#pragma once

// The direct linear solve of the CUDA backend (issue: CUDA backend, item 3): the band on the
// device for Jacobians that order into a narrow band (the CPU's kBanded rule: rods; block cyclic
// reduction in reverse Cuthill-McKee order, or LU by columns), else cuSOLVER's sparse Cholesky on
// the device CSR matrix of the free-DOF Jacobian, symbolic analysis once per sparsity pattern and
// numeric refactorization every Newton iteration (the low-level csrchol API), with sparse QR
// (csrlsvqr) when the matrix is not positive definite or not symmetric. cuSOLVER factorizes P J P^T
// with P an AMD ordering computed on the host once per pattern
// (include/slender/engine/ordering.h): the values are gathered into the permuted order on the
// device, the right-hand side permuted and the solution permuted back. The matrix is the model's
// CSR (row-major J), so no transposition is involved. Value and vector pointers are device
// pointers. No CUDA types appear here.

#include <memory>
#include <vector>

#include "slender/core/status.h"
#include "slender/core/types.h"

namespace slender {

class DeviceSparseSolver {
 public:
  /// orders and analyses the pattern (host CSR of an n x n matrix, structurally symmetric);
  /// symmetric = false skips Cholesky (non-symmetric Jacobians: friction, drag); kind kAuto or
  /// kBanded may take the band (in reverse Cuthill-McKee order, the sparse path when a pivot is
  /// too small), any other kind the sparse path alone
  DeviceSparseSolver(int n,
                     const std::vector<int>& row_ptr,
                     const std::vector<int>& col,
                     bool symmetric,
                     LinearSolverKind kind = LinearSolverKind::kDense);
  ~DeviceSparseSolver();
  DeviceSparseSolver(const DeviceSparseSolver&) = delete;
  DeviceSparseSolver& operator=(const DeviceSparseSolver&) = delete;

  /// numeric factorization of the values d_val (nnz, the pattern's slot order); false if the
  /// matrix is singular. The band's factorization is only launched: its pivot test is read with
  /// the solve's flag (one host read a Newton iteration), and d_val must live until solve()
  bool factorize(const Real* d_val);
  /// d_x = J^-1 d_b (n each); false if the solve failed (singular matrix) or the solution is
  /// not finite. Where the band's factorization met a pivot too small, the sparse path factorizes
  /// and solves here (used_fallback() then says so)
  bool solve(const Real* d_b, Real* d_x);
  /// the band's solve without its read (where set_deferred asked for it): launched, its status
  /// left in device memory at `status` for the caller to read with the direction's slope (1
  /// solved, 0 a result not finite, 2 no solve: the factorization's pivot too small, then
  /// solve_after_pivot), true; status null where the band is not the solve (then as solve())
  void set_deferred(bool on);
  bool solve_deferred(const Real* d_b, Real* d_x, const int*& status);
  /// after a deferred status of 2: the sparse path for the values factorize() was given, which
  /// the caller has assembled there again (used_fallback() then says so)
  bool solve_after_pivot(const Real* d_b, Real* d_x);
  /// whether the last factorize() or solve() fell back: from the band to the sparse path, or to
  /// QR
  bool used_fallback() const;
  /// nonzeros of the factors: the band's entries, or the Cholesky factor's of the ordered pattern
  long factor_nonzeros() const;
  /// whether the band is the first choice
  bool banded() const;
  /// the band's solve: "cuda-block-cyclic" (block cyclic reduction, the default) or
  /// "cuda-banded-lu" (LU by columns, SLENDER_DEVICE_BAND=lu)
  const char* band_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slender
