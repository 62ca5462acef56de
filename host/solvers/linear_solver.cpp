#include "slender/engine/linear_solver.h"

#include <dlfcn.h>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "slender/config.h"
#include "slender/core/banded.h"
#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/ordering.h"
#ifdef SLENDER_HAVE_CHOLMOD
#include <Eigen/CholmodSupport>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif
#ifdef SLENDER_HAVE_UMFPACK
#include <umfpack.h>
#endif

namespace slender::cpu {

namespace {

// The threads of the libraries under the direct solvers, for the call only: one below
// kBlasThreadsFrom unknowns, Slender's host_threads() (set_host_threads, SLENDER_THREADS,
// OMP_NUM_THREADS) from there. The dense blocks of a smaller matrix's factor are too small to
// share, and both libraries keep their threads spinning after a threaded call (libgomp for
// milliseconds, OpenBLAS yielding for about 0.1 s), which on a busy machine takes the cores from
// the work.
// - CHOLMOD's supernodal factorization runs some of its loops on a team of 4 OpenMP threads of
//   its own (a number compiled into the library), whatever OMP_NUM_THREADS says. Dynamic teams
//   let OpenMP cap the team at the threads it may use (the count set here, the cores, the
//   load). Those loops write disjoint entries, so the factor is the same whatever the team.
// - The BLAS under CHOLMOD and UMFPACK: OpenBLAS, where it is the system's BLAS (found at run
//   time, nothing to link), never above its own count (OPENBLAS_NUM_THREADS, or the cores).
class CapLibraryThreads {
 public:
  // (a judgement, not a measured crossover: the 2k and 20k cloths of S9, 3k and 30k unknowns,
  // factor on one BLAS thread; the 200k cloth, 300k unknowns, on all)
  static constexpr int kBlasThreadsFrom = 100000;

  explicit CapLibraryThreads(int nunknown) {
    const int n = nunknown >= kBlasThreadsFrom ? host_threads() : 1;
    cap_blas(n);
#if defined(_OPENMP)
    was_dynamic_ = omp_get_dynamic();
    was_threads_ = omp_get_max_threads();
    omp_set_dynamic(1);
    omp_set_num_threads(n);
#endif
  }
  ~CapLibraryThreads() {
#if defined(_OPENMP)
    omp_set_num_threads(was_threads_);
    omp_set_dynamic(was_dynamic_);
#endif
  }
  CapLibraryThreads(const CapLibraryThreads&) = delete;
  CapLibraryThreads& operator=(const CapLibraryThreads&) = delete;

 private:
  // OpenBLAS's threads: min(its own count at the first call, n)
  static void cap_blas(int n) {
    using Get = int (*)();
    using Set = void (*)(int);
    static const Get get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    static const Set set = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (!get || !set) return;
    static const int own = get();
    const int want = std::max(1, std::min(own, n));
    if (get() != want) set(want);
  }
#if defined(_OPENMP)
  int was_dynamic_ = 0;
  int was_threads_ = 1;
#endif
};

}  // namespace

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
    const CapLibraryThreads cap(n);
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

  // the direct kind (CHOLMOD or LDLT, then LU): kBanded's when a pivot is too small
  LinearSolverKind direct = LinearSolverKind::kSparseLu;
  bool direct_analyzed = false;

  bool direct_factorize();
  bool direct_solve(const Real* b, Real* x);

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
      {
        const CapLibraryThreads cap(n);
        cholmod.factorize(A);
      }
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

namespace {

// the kind a request resolves to (kAuto: banded LU when the band is narrow, else the sparse
// direct kind; kDense: the sparse direct kind) and the sparse direct kind behind it; `layout`
// the band's, where banded LU is asked for or may be chosen
LinearSolverKind resolve_kind(int n,
                              const std::vector<int>& row_ptr,
                              const std::vector<int>& col,
                              LinearSolverKind kind,
                              bool symmetric,
                              LinearSolverKind& direct,
                              BandLayout& layout) {
#ifdef SLENDER_HAVE_CHOLMOD
  const LinearSolverKind cholesky = LinearSolverKind::kCholmod;
#else
  const LinearSolverKind cholesky = LinearSolverKind::kEigenLdlt;
  SLENDER_CHECK(kind != LinearSolverKind::kCholmod,
                "CHOLMOD was asked for, but this build has no SuiteSparse");
#endif
  SLENDER_CHECK(!linear_solver_iterative(kind),
                "cpu::LinearSolver is direct: the iterative path is the engine's (stepper.h)");
  const LinearSolverKind general = symmetric ? cholesky : LinearSolverKind::kSparseLu;
  // dense (the vectorized batch's): here the sparse direct factorization, the same exact solve
  if (kind == LinearSolverKind::kDense) kind = general;
  if ((kind == LinearSolverKind::kAuto || kind == LinearSolverKind::kBanded) && n > 1)
    layout = band_layout(n, row_ptr, col);
  if (kind == LinearSolverKind::kAuto)
    kind = n > 1 && layout.w <= kBandedAutoMax ? LinearSolverKind::kBanded : general;
  direct = kind == LinearSolverKind::kBanded ? general : kind;
  return kind;
}

}  // namespace

double LinearSolver::memory_bytes(const AssemblyPlan& plan, LinearSolverKind kind, bool symmetric) {
  LinearSolverKind direct;
  BandLayout layout;
  kind = resolve_kind(plan.nfree, plan.row_ptr, plan.col, kind, symmetric, direct, layout);
  const double n = plan.nfree, nnz = double(plan.nnz());
  constexpr double kI = sizeof(int), kR = sizeof(Real);
  // the object (the Eigen and CHOLMOD solvers' own structs in it) and the matrix, CSC
  double b = sizeof(LinearSolver) + sizeof(Impl) + nnz * (kR + kI) + (n + 1) * kI;
  if (kind == LinearSolverKind::kBanded && n > 1)  // the band, its right-hand side and maps
    return b + double(layout.band_size) * kR + n * kR + nnz * kI + n * kI;
  if (n == 0) return b;
  // the factor L of a Cholesky in AMD order: its values and row indices, and per column its
  // start, count, parent, permutation and inverse and the diagonal; the factorization's permuted
  // copy of the matrix. LU holds L and U.
  const double lnz = double(cholesky_fill(int(n), plan.row_ptr, plan.col,
                                          fill_reducing_order(int(n), plan.row_ptr, plan.col)));
  const double factors = direct == LinearSolverKind::kSparseLu ? 2 : 1;
  return b + factors * lnz * (kR + kI) + n * (kR + 5 * kI) + nnz * (kR + kI);
}

LinearSolver::LinearSolver(const AssemblyPlan& plan, LinearSolverKind kind, bool symmetric)
    : LinearSolver(plan.nfree, plan.row_ptr, plan.col, kind, symmetric) {}

LinearSolver::LinearSolver(int n,
                           const std::vector<int>& row_ptr,
                           const std::vector<int>& col,
                           LinearSolverKind kind,
                           bool symmetric)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = n;
  BandLayout layout;
  s.kind = resolve_kind(n, row_ptr, col, kind, symmetric, s.direct, layout);
  kind = s.kind;
  if (kind == LinearSolverKind::kBanded && s.n > 1) {
    s.band_w = layout.w;
    s.band_order = std::move(layout.order);
    s.band_pos = std::move(layout.band_pos);
    s.band.assign(size_t(layout.band_size), 0);
    s.band_x.assign(s.n, 0);
  }
  // the pattern: the symmetric CSR read as CSC, its arrays sized exactly (an assignment from a
  // mapped matrix inserts entry by entry into arrays grown by half again, and keeps them: 1.7
  // times the values and indices for a large network, issue 49)
  const size_t nnz = col.size();
  s.A.resize(s.n, s.n);
  s.A.resizeNonZeros(Eigen::Index(nnz));
  std::copy(row_ptr.begin(), row_ptr.end(), s.A.outerIndexPtr());
  std::copy(col.begin(), col.end(), s.A.innerIndexPtr());
  std::fill(s.A.valuePtr(), s.A.valuePtr() + nnz, 0.0);
  // the direct kinds analyse their pattern at the first factorization
}

LinearSolver::~LinearSolver() = default;

Real* LinearSolver::values() { return impl_->A.valuePtr(); }

bool LinearSolver::factorize(bool band_only) {
  Impl& s = *impl_;
  s.fallback = false;
  s.band_ready = false;
  if (s.n == 0) return true;
  if (banded()) {
    std::fill(s.band.begin(), s.band.end(), 0);
    const Real* val = s.A.valuePtr();
    for (size_t k = 0; k < s.band_pos.size(); ++k)
      s.band[s.band_pos[k]] = val[k];
    if (band_lu_factor(s.band.data(), s.n, s.band_w, 1e-13)) {
      s.band_ready = true;
      return true;
    }
    if (band_only) return false;
    s.fallback = true;  // a pivot too small for LU without pivoting
  }
  return s.direct_factorize();
}

bool LinearSolver::factorize_sparse() {
  Impl& s = *impl_;
  s.band_ready = false;
  s.fallback = banded();  // (the band's fallback)
  return s.n == 0 || s.direct_factorize();
}

bool LinearSolver::banded() const {
  return impl_->kind == LinearSolverKind::kBanded && impl_->n > 1;
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
  return s.direct_solve(b, x);
}

bool LinearSolver::used_fallback() const { return impl_->fallback; }

std::string LinearSolver::name() const {
  switch (impl_->kind) {
    case LinearSolverKind::kEigenLdlt:
      return "eigen-ldlt";
    case LinearSolverKind::kCholmod:
      return "cholmod";
    case LinearSolverKind::kBanded:
      return "banded-lu";
    default:
      return "sparse-lu";
  }
}

}  // namespace slender::cpu
