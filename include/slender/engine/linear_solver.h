#pragma once

// Sparse solve of the CPU backend: the free-DOF Jacobian lives in an Eigen sparse matrix whose
// value array the assembly writes into directly (the pattern is the model's CSR, which Eigen
// reads as CSC: for a symmetric Jacobian the same matrix, otherwise its transpose, which the
// LU solve accounts for). The pattern is analysed once; every Newton iteration
// refactorizes. CHOLMOD when available, Eigen's SimplicialLDLT otherwise, and a sparse LU
// fallback when the factorization fails (e.g. a matrix that is not positive definite).
// kPcg is not one of its kinds: the iterative path (block-Jacobi CG and BiCGSTAB) is the
// engine's, on every executor (engine/simulator_engine_on.h).
// kBanded: the free DOFs in reverse Cuthill-McKee order and banded LU without pivoting
// (include/slender/core/banded.h), the direct path when a pivot is too small; chosen by kAuto
// when the half-bandwidth is at most kBandedAutoMax (rods).
// kDense (the vectorized batch's dense solver) means the sparse direct kind here: CHOLMOD or
// LDLT for symmetric Jacobians, sparse LU otherwise.

#include <memory>
#include <string>
#include <vector>

#include "slender/core/status.h"
#include "slender/model.h"

namespace slender::cpu {

/// the widest half-bandwidth for which kAuto chooses banded LU
constexpr int kBandedAutoMax = 24;

/// The kind of LinearSolver the executors' direct path builds for a request (HostDirectSolver):
/// kPcg's and kAmg's direct path (CG could not go on) and kDense are the sparse direct kind, and a
/// non-symmetric Jacobian needs LU (banded or sparse), between which kAuto chooses.
inline LinearSolverKind direct_solver_kind(LinearSolverKind kind, bool symmetric) {
  if (linear_solver_iterative(kind)) kind = LinearSolverKind::kDense;
  if (!symmetric && kind != LinearSolverKind::kAuto && kind != LinearSolverKind::kBanded)
    kind = LinearSolverKind::kSparseLu;
  return kind;
}

class LinearSolver {
 public:
  /// the bytes a solver of this kind for `plan` holds once it has factorized, estimated without
  /// building it: its values and pattern, and the band, or the sparse factor whose fill a
  /// symbolic factorization in AMD order counts (the order of LDLT, and close to CHOLMOD's and
  /// to UMFPACK's symmetric strategy on these structurally symmetric patterns; LU holds L and
  /// U, twice the Cholesky factor's fill). The sparse direct path behind a band that meets a
  /// pivot too small (rare) is not counted.
  static double memory_bytes(const AssemblyPlan& plan, LinearSolverKind kind, bool symmetric);

  /// symmetric = false: the Jacobian is not symmetric (friction, drag), so the automatic choice
  /// and the fallbacks use LU
  LinearSolver(const AssemblyPlan& plan, LinearSolverKind kind, bool symmetric = true);
  /// the same for the pattern alone (n free rows, CSR row pointers and columns)
  LinearSolver(int n,
               const std::vector<int>& row_ptr,
               const std::vector<int>& col,
               LinearSolverKind kind,
               bool symmetric = true);
  ~LinearSolver();
  /// CSR values (nnz) in the plan's slot order: assemble here before factorize()
  Real* values();
  /// factorizes the current values; false if even the fallback failed. band_only: a band's
  /// pivot too small returns false without the sparse direct path (the caller then takes
  /// factorize_sparse(), as the device's band does once its status is read)
  bool factorize(bool band_only = false);
  /// the sparse direct factorization of the current values (a band's fallback; counted as one
  /// by used_fallback() where the band is the kind); false if it fails
  bool factorize_sparse();
  /// whether the band is this solver's kind (kBanded, more than one row)
  bool banded() const;
  /// x = J^-1 b (both nfree); false on a non-finite result
  bool solve(const Real* b, Real* x);
  /// whether the last factorize() or solve() needed a fallback (LU for an indefinite matrix,
  /// the sparse direct kind for a banded pivot too small)
  bool used_fallback() const;
  std::string name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slender::cpu
