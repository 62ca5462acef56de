#include "slender/engine/linear_solver.h"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <cmath>
#include <utility>
#include <vector>

#include "slender/config.h"
#include "slender/core/banded.h"
#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/core/pcg.h"
#include "slender/engine/ordering.h"
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
  bool lu_active = false;  // the last direct factorization is the LU's

  // kPcg: block-Jacobi CG; the direct kind (CHOLMOD or LDLT, then LU) when CG cannot go on
  LinearSolverKind direct = LinearSolverKind::kSparseLu;
  bool direct_analyzed = false;
  std::vector<int> row_ptr, col, block_row;
  std::vector<Real> inv, r, z, p, Ap;
  std::vector<unsigned char> block_ok;
  bool pcg_ready = false;
  long pcg_iterations = 0;

  bool direct_factorize();
  bool direct_solve(const Real* b, Real* x);
  bool pcg_solve(const Real* b, Real* x);

  // kBanded
  int band_w = 0;
  std::vector<int> band_order;  // original row of each banded row
  std::vector<int> band_pos;    // band index of each CSR slot
  std::vector<Real> band, band_x;
  bool band_ready = false;  // the last factorization is the band's
};

bool LinearSolver::Impl::direct_factorize() {
  bool ok = false;
  switch (direct) {
    case LinearSolverKind::kEigenLdlt:
      if (!direct_analyzed) ldlt.analyzePattern(A);
      direct_analyzed = true;
      ldlt.factorize(A);
      ok = ldlt.info() == Eigen::Success;
      break;
#ifdef SLENDER_HAVE_CHOLMOD
    case LinearSolverKind::kCholmod:
      if (!direct_analyzed) {
        cholmod.setMode(Eigen::CholmodAuto);
        // an indefinite matrix is reported through info() and falls back to LU: no printing
        cholmod.cholmod().print = 0;
        cholmod.analyzePattern(A);
      }
      direct_analyzed = true;
      cholmod.factorize(A);
      ok = cholmod.info() == Eigen::Success;
      break;
#endif
    default:
      break;
  }
  lu_active = !ok;
  if (ok) return true;
  // general sparse LU: for matrices that are not positive definite (the Cholesky is tried
  // again at the next factorization)
  if (kind != LinearSolverKind::kSparseLu) fallback = true;
  return lu_factorize();
}

bool LinearSolver::Impl::direct_solve(const Real* b, Real* x) {
  Eigen::Map<const Eigen::VectorXd> bv(b, n);
  Eigen::Map<Eigen::VectorXd> xv(x, n);
  if (lu_active) {
    lu_solve(b, x);
  } else if (direct == LinearSolverKind::kEigenLdlt) {
    xv = ldlt.solve(bv);
#ifdef SLENDER_HAVE_CHOLMOD
  } else {
    xv = cholmod.solve(bv);
#endif
  }
  return xv.allFinite();
}

// preconditioned CG from x = 0 to |b - A x| <= kKrylovRelTol |b|; false when it does not get there
// (an indefinite matrix, or too slow)
bool LinearSolver::Impl::pcg_solve(const Real* b, Real* x) {
  const int max_iter = krylov_max_iterations(n);
  const long nb = long(block_row.size()) - 1;
  const Real* val = A.valuePtr();
  auto dot = [&](const std::vector<Real>& a, const std::vector<Real>& c) {
    Real sum = 0;
    for (int i = 0; i < n; ++i)
      sum += a[i] * c[i];
    return sum;
  };
  Real bb = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = 0;
    r[i] = b[i];
    bb += b[i] * b[i];
  }
  if (bb == 0) return true;
  const Real stop = kKrylovRelTol * kKrylovRelTol * bb;
  parallel_for_host(nb, BlockJacobiApply{block_row.data(), inv.data(), r.data(), z.data()},
                    kParallelGrainMedium);
  p = z;
  Real rz = dot(r, z);
  for (int it = 1; it <= max_iter; ++it) {
    parallel_for_host(n, CsrSpmv{row_ptr.data(), col.data(), val, p.data(), Ap.data()},
                      kParallelGrainMedium);
    const Real pAp = dot(p, Ap);
    if (!(pAp > 0)) return false;  // not positive definite along p
    const Real alpha = rz / pAp;
    Real rr = 0;
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * Ap[i];
      rr += r[i] * r[i];
    }
    ++pcg_iterations;
    if (!std::isfinite(rr)) return false;
    if (rr <= stop) return true;
    parallel_for_host(nb, BlockJacobiApply{block_row.data(), inv.data(), r.data(), z.data()},
                      kParallelGrainMedium);
    const Real rz_new = dot(r, z);
    const Real beta = rz_new / rz;
    rz = rz_new;
    for (int i = 0; i < n; ++i)
      p[i] = z[i] + beta * p[i];
  }
  return false;
}

LinearSolver::LinearSolver(const AssemblyPlan& plan, LinearSolverKind kind, bool symmetric)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = plan.nfree;
#ifdef SLENDER_HAVE_CHOLMOD
  const LinearSolverKind cholesky = LinearSolverKind::kCholmod;
#else
  const LinearSolverKind cholesky = LinearSolverKind::kEigenLdlt;
  SLENDER_CHECK(kind != LinearSolverKind::kCholmod,
                "CHOLMOD was asked for, but this build has no SuiteSparse");
#endif
  const LinearSolverKind general = symmetric ? cholesky : LinearSolverKind::kSparseLu;
  // dense (the vectorized batch's): here the sparse direct factorization, the same exact solve
  if (kind == LinearSolverKind::kDense) kind = general;
  // the banded layout, when banded LU is asked for or may be chosen
  BandLayout layout;
  if ((kind == LinearSolverKind::kAuto || kind == LinearSolverKind::kBanded) && s.n > 1)
    layout = band_layout(s.n, plan.row_ptr, plan.col);
  if (kind == LinearSolverKind::kAuto) {
    kind = s.n > 1 && layout.w <= kBandedAutoMax ? LinearSolverKind::kBanded : general;
  }
  s.kind = kind;
  s.direct = kind == LinearSolverKind::kPcg || kind == LinearSolverKind::kBanded ? general : kind;
  if (kind == LinearSolverKind::kBanded && s.n > 1) {
    s.band_w = layout.w;
    s.band_order = std::move(layout.order);
    s.band_pos = std::move(layout.band_pos);
    s.band.assign(size_t(layout.band_size), 0);
    s.band_x.assign(s.n, 0);
  }
  // the pattern: the symmetric CSR read as CSC
  std::vector<double> zeros(plan.col.size(), 0.0);
  s.A = Eigen::Map<const SpMat>(s.n, s.n, int(plan.col.size()), plan.row_ptr.data(),
                                plan.col.data(), zeros.data());
  s.A.makeCompressed();
  if (s.n == 0) return;
  if (kind == LinearSolverKind::kPcg) {
    s.row_ptr = plan.row_ptr;
    s.col = plan.col;
    // blocks: consecutive free rows within one aligned triple of global DOFs
    s.block_row.push_back(0);
    // (a plan without DOF numbers, as in tests, counts rows as DOFs)
    auto dof = [&](int r) { return plan.free_dof.empty() ? r : plan.free_dof[r]; };
    for (int r = 1; r < s.n; ++r)
      if (dof(r) / 3 != dof(r - 1) / 3) s.block_row.push_back(r);
    s.block_row.push_back(s.n);
    const size_t nb = s.block_row.size() - 1;
    s.inv.assign(9 * nb, 0);
    s.block_ok.assign(nb, 0);
    s.r.assign(s.n, 0);
    s.z.assign(s.n, 0);
    s.p.assign(s.n, 0);
    s.Ap.assign(s.n, 0);
    return;  // the direct fallback analyses its pattern when first needed
  }
  // the direct kinds analyse their pattern at the first factorization
}

LinearSolver::~LinearSolver() = default;

Real* LinearSolver::values() { return impl_->A.valuePtr(); }

bool LinearSolver::factorize() {
  Impl& s = *impl_;
  s.fallback = false;
  s.pcg_ready = false;
  s.band_ready = false;
  if (s.n == 0) return true;
  if (s.kind == LinearSolverKind::kBanded && s.n > 1) {
    std::fill(s.band.begin(), s.band.end(), 0);
    const Real* val = s.A.valuePtr();
    for (size_t k = 0; k < s.band_pos.size(); ++k)
      s.band[s.band_pos[k]] = val[k];
    if (band_lu_factor(s.band.data(), s.n, s.band_w, 1e-13)) {
      s.band_ready = true;
      return true;
    }
    s.fallback = true;  // a pivot too small for LU without pivoting
  }
  if (s.kind == LinearSolverKind::kPcg) {
    const long nb = long(s.block_row.size()) - 1;
    parallel_for_host(nb,
                      BlockJacobiSetup{s.row_ptr.data(), s.col.data(), s.A.valuePtr(),
                                       s.block_row.data(), s.inv.data(), s.block_ok.data()},
                      kParallelGrainMedium);
    bool all = true;
    for (unsigned char ok : s.block_ok)
      all = all && ok;
    if (all) {
      s.pcg_ready = true;
      return true;
    }
    s.fallback = true;  // a diagonal block is not positive definite: CG cannot apply
  }
  return s.direct_factorize();
}

bool LinearSolver::solve(const Real* b, Real* x) {
  Impl& s = *impl_;
  if (s.n == 0) return true;
  if (s.band_ready) {
    for (int k = 0; k < s.n; ++k)
      s.band_x[k] = b[s.band_order[k]];
    band_lu_solve(s.band.data(), s.n, s.band_w, s.band_x.data());
    bool finite = true;
    for (int k = 0; k < s.n; ++k) {
      x[s.band_order[k]] = s.band_x[k];
      finite = finite && std::isfinite(s.band_x[k]);
    }
    return finite;
  }
  if (s.pcg_ready) {
    if (s.pcg_solve(b, x)) return true;
    // CG did not converge: factorize directly and solve again
    s.pcg_ready = false;
    s.fallback = true;
    if (!s.direct_factorize()) return false;
  }
  return s.direct_solve(b, x);
}

long LinearSolver::pcg_iterations() const { return impl_->pcg_iterations; }

bool LinearSolver::used_fallback() const { return impl_->fallback; }

std::string LinearSolver::name() const {
  switch (impl_->kind) {
    case LinearSolverKind::kEigenLdlt:
      return "eigen-ldlt";
    case LinearSolverKind::kCholmod:
      return "cholmod";
    case LinearSolverKind::kPcg:
      return "pcg";
    case LinearSolverKind::kBanded:
      return "banded-lu";
    default:
      return "sparse-lu";
  }
}

}  // namespace slender::cpu
