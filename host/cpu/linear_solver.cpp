#include "cpu/linear_solver.h"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <cmath>

#include "slender/config.h"
#include "slender/core/error.h"
#ifdef SLENDER_HAVE_CHOLMOD
#include <Eigen/CholmodSupport>
#endif

namespace slender::cpu {

using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

struct LinearSolver::Impl {
  LinearSolverKind kind;
  int n = 0;
  SpMat A;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt;
#ifdef SLENDER_HAVE_CHOLMOD
  Eigen::CholmodDecomposition<SpMat, Eigen::Lower> cholmod;
#endif
  Eigen::SparseLU<SpMat, Eigen::COLAMDOrdering<int>> lu;
  bool lu_analyzed = false;
  bool fallback = false;
};

LinearSolver::LinearSolver(const AssemblyPlan& plan, LinearSolverKind kind)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = plan.nfree;
#ifdef SLENDER_HAVE_CHOLMOD
  if (kind == LinearSolverKind::kAuto) kind = LinearSolverKind::kCholmod;
#else
  if (kind == LinearSolverKind::kAuto) kind = LinearSolverKind::kEigenLdlt;
  SLENDER_CHECK(kind != LinearSolverKind::kCholmod,
                "CHOLMOD was asked for, but this build has no SuiteSparse");
#endif
  s.kind = kind;
  // the pattern: the symmetric CSR read as CSC
  std::vector<double> zeros(plan.col.size(), 0.0);
  s.A = Eigen::Map<const SpMat>(s.n, s.n, int(plan.col.size()), plan.row_ptr.data(),
                                plan.col.data(), zeros.data());
  s.A.makeCompressed();
  if (s.n == 0) return;
  switch (kind) {
    case LinearSolverKind::kEigenLdlt:
      s.ldlt.analyzePattern(s.A);
      break;
#ifdef SLENDER_HAVE_CHOLMOD
    case LinearSolverKind::kCholmod:
      s.cholmod.setMode(Eigen::CholmodAuto);
      s.cholmod.analyzePattern(s.A);
      break;
#endif
    default:
      s.lu.analyzePattern(s.A);
      s.lu_analyzed = true;
      break;
  }
}

LinearSolver::~LinearSolver() = default;

Real* LinearSolver::values() { return impl_->A.valuePtr(); }

bool LinearSolver::factorize() {
  Impl& s = *impl_;
  s.fallback = false;
  if (s.n == 0) return true;
  bool ok = false;
  switch (s.kind) {
    case LinearSolverKind::kEigenLdlt:
      s.ldlt.factorize(s.A);
      ok = s.ldlt.info() == Eigen::Success;
      break;
#ifdef SLENDER_HAVE_CHOLMOD
    case LinearSolverKind::kCholmod:
      s.cholmod.factorize(s.A);
      ok = s.cholmod.info() == Eigen::Success;
      break;
#endif
    default:
      break;
  }
  if (ok) return true;
  // general sparse LU: for matrices that are not positive definite
  if (s.kind != LinearSolverKind::kSparseLu) s.fallback = true;
  if (!s.lu_analyzed) {
    s.lu.analyzePattern(s.A);
    s.lu_analyzed = true;
  }
  s.lu.factorize(s.A);
  return s.lu.info() == Eigen::Success;
}

bool LinearSolver::solve(const Real* b, Real* x) {
  Impl& s = *impl_;
  if (s.n == 0) return true;
  Eigen::Map<const Eigen::VectorXd> bv(b, s.n);
  Eigen::Map<Eigen::VectorXd> xv(x, s.n);
  if (s.fallback || s.kind == LinearSolverKind::kSparseLu) {
    // the factorized matrix is the CSR values read as CSC, i.e. J^T: solve with its transpose
    // (for a symmetric J the two are the same)
    xv = s.lu.transpose().solve(bv);
  } else if (s.kind == LinearSolverKind::kEigenLdlt) {
    xv = s.ldlt.solve(bv);
#ifdef SLENDER_HAVE_CHOLMOD
  } else {
    xv = s.cholmod.solve(bv);
#endif
  }
  return xv.allFinite();
}

bool LinearSolver::used_fallback() const { return impl_->fallback; }

std::string LinearSolver::name() const {
  switch (impl_->kind) {
    case LinearSolverKind::kEigenLdlt:
      return "eigen-ldlt";
    case LinearSolverKind::kCholmod:
      return "cholmod";
    default:
      return "sparse-lu";
  }
}

}  // namespace slender::cpu
