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
#ifdef SLENDER_HAVE_UMFPACK
#include <umfpack.h>
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
#ifdef SLENDER_HAVE_UMFPACK
  // UMFPACK on the stored matrix A = J^T (CSR read as CSC): symbolic analysis once, numeric
  // factorization every time, J x = b solved as A^T x = b
  void* umf_symbolic = nullptr;
  void* umf_numeric = nullptr;
  double umf_control[UMFPACK_CONTROL];
  bool lu_factorize() {
    if (!umf_symbolic) {
      umfpack_di_defaults(umf_control);
      umf_control[UMFPACK_PRL] = 0;  // no printing
      if (umfpack_di_symbolic(n, n, A.outerIndexPtr(), A.innerIndexPtr(), A.valuePtr(),
                              &umf_symbolic, umf_control, nullptr) != UMFPACK_OK) {
        umf_symbolic = nullptr;
        return false;
      }
    }
    if (umf_numeric) umfpack_di_free_numeric(&umf_numeric);
    const int status = umfpack_di_numeric(A.outerIndexPtr(), A.innerIndexPtr(), A.valuePtr(),
                                          umf_symbolic, &umf_numeric, umf_control, nullptr);
    return status == UMFPACK_OK;  // a singular matrix (a warning to UMFPACK) fails here
  }
  void lu_solve(const double* b, double* x) {
    umfpack_di_solve(UMFPACK_At, A.outerIndexPtr(), A.innerIndexPtr(), A.valuePtr(), x, b,
                     umf_numeric, umf_control, nullptr);
  }
  ~Impl() {
    if (umf_numeric) umfpack_di_free_numeric(&umf_numeric);
    if (umf_symbolic) umfpack_di_free_symbolic(&umf_symbolic);
  }
#else
  Eigen::SparseLU<SpMat, Eigen::COLAMDOrdering<int>> lu;
  bool lu_analyzed = false;
  bool lu_factorize() {
    if (!lu_analyzed) {
      lu.analyzePattern(A);
      lu_analyzed = true;
    }
    lu.factorize(A);
    return lu.info() == Eigen::Success;
  }
  void lu_solve(const double* b, double* x) {
    Eigen::Map<const Eigen::VectorXd> bv(b, n);
    Eigen::Map<Eigen::VectorXd> xv(x, n);
    // the factorized matrix is the CSR values read as CSC, i.e. J^T: solve with its transpose
    // (for a symmetric J the two are the same)
    xv = lu.transpose().solve(bv);
  }
#endif
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
      // an indefinite matrix is reported through info() and falls back to LU: no printing
      s.cholmod.cholmod().print = 0;
      s.cholmod.analyzePattern(s.A);
      break;
#endif
    default:
      break;  // the LU analyses the pattern at its first factorization
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
  return s.lu_factorize();
}

bool LinearSolver::solve(const Real* b, Real* x) {
  Impl& s = *impl_;
  if (s.n == 0) return true;
  Eigen::Map<const Eigen::VectorXd> bv(b, s.n);
  Eigen::Map<Eigen::VectorXd> xv(x, s.n);
  if (s.fallback || s.kind == LinearSolverKind::kSparseLu) {
    s.lu_solve(b, x);
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
