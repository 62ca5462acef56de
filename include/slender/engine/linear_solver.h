#pragma once

// Sparse solve of the CPU backend: the free-DOF Jacobian lives in an Eigen sparse matrix whose
// value array the assembly writes into directly (the pattern is the model's CSR, which Eigen
// reads as CSC: for a symmetric Jacobian the same matrix, otherwise its transpose, which the
// LU solve accounts for). The pattern is analysed once; every Newton iteration
// refactorizes. CHOLMOD when available, Eigen's SimplicialLDLT otherwise, and a sparse LU
// fallback when the factorization fails (e.g. a matrix that is not positive definite).
// kPcg is not one of its kinds: the iterative path (block-Jacobi CG and BiCGSTAB) is the
// engine's, on every executor (engine/stepper.h).
// kBanded: the free DOFs in reverse Cuthill-McKee order and banded LU without pivoting
// (include/slender/core/banded.h), the direct path when a pivot is too small; chosen by kAuto
// when the half-bandwidth is at most kBandedAutoMax (rods).
// kDense (the vectorized batch's dense solver) means the sparse direct kind here: CHOLMOD or
// LDLT for symmetric Jacobians, sparse LU otherwise.

#include <memory>
#include <string>

#include "slender/core/status.h"
#include "slender/model.h"

namespace slender::cpu {

/// the widest half-bandwidth for which kAuto chooses banded LU
constexpr int kBandedAutoMax = 24;

class LinearSolver {
 public:
  /// symmetric = false: the Jacobian is not symmetric (friction, drag), so the automatic choice
  /// and the fallbacks use LU
  LinearSolver(const AssemblyPlan& plan, LinearSolverKind kind, bool symmetric = true);
  ~LinearSolver();
  /// CSR values (nnz) in the plan's slot order: assemble here before factorize()
  Real* values();
  /// factorizes the current values; false if even the fallback failed
  bool factorize();
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
