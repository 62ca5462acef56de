// DeviceSparseSolver: cuSOLVER csrchol (analysis once, factor per call) and csrlsvqr fallback on
// the AMD-ordered matrix. The csrchol API is marked deprecated in CUDA 13 in favour of cuDSS
// (not shipped with the toolkit); it is what the backend's design names, so the deprecation
// notes are switched off here.

#define DISABLE_CUSOLVER_DEPRECATED

#include <cusolverSp.h>
#include <cusolverSp_LOWLEVEL_PREVIEW.h>
#include <cusparse.h>

#include <cmath>
#include <string>

#include "device_buffer.cuh"
#include "device_solver.h"
#include "reduce.cuh"
#include "slender/engine/ordering.h"

namespace slender {

namespace {

void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) {
    throw Error(std::string("cuSOLVER error ") + std::to_string(int(s)) + " in " + what);
  }
}

// out[k] = in[map[k]]
struct Gather {
  const int* map;
  const Real* in;
  Real* out;
  __device__ void operator()(long k) const { out[k] = in[map[k]]; }
};

// out[map[k]] = in[k]
struct Scatter {
  const int* map;
  const Real* in;
  Real* out;
  __device__ void operator()(long k) const { out[map[k]] = in[k]; }
};

// m0: the largest |diagonal entry|
struct MaxDiag {
  const int* diag_slot;
  const Real* val;
  __device__ Red4 operator()(long i) const {
    const int s = diag_slot[i];
    return Red4{0, 0, 0, s >= 0 ? ::fabs(val[s]) : Real(0)};
  }
};

// s0: number of entries that are not finite
struct CountNonFinite {
  const Real* v;
  __device__ Red4 operator()(long i) const {
    return Red4{v[i] - v[i] == 0 ? Real(0) : Real(1), 0, 0, 0};
  }
};

}  // namespace

struct DeviceSparseSolver::Impl {
  int n = 0, nnz = 0;
  long fill = 0;
  bool symmetric = true;
  bool fallback = false;
  Real max_diag = 0;
  DeviceBuffer<int> row_ptr, col, slot_map, order, diag_slot;
  DeviceBuffer<Real> val, b, x;
  DeviceBuffer<Red4> partial, out;
  cusolverSpHandle_t handle = nullptr;
  cusparseMatDescr_t descr = nullptr;
  csrcholInfo_t chol = nullptr;
  DeviceBuffer<char> work;
  bool have_work = false;

  // the handles are the Impl's, so that a constructor that throws half-way releases them
  ~Impl() {
    if (chol) cusolverSpDestroyCsrcholInfo(chol);
    if (descr) cusparseDestroyMatDescr(descr);
    if (handle) cusolverSpDestroy(handle);
  }

  template <class F>
  Red4 reduce(long count, const F& f) {
    reduce4_async(count, f, partial.data(), out.data());
    Red4 h{};
    SLENDER_CUDA_CHECK(cudaMemcpy(&h, out.data(), sizeof(Red4), cudaMemcpyDeviceToHost));
    return h;
  }
};

DeviceSparseSolver::DeviceSparseSolver(int n,
                                       const std::vector<int>& row_ptr,
                                       const std::vector<int>& col,
                                       bool symmetric)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = n;
  s.nnz = int(col.size());
  s.symmetric = symmetric;
  const PermutedPattern p = fill_reducing_pattern(n, row_ptr, col);
  s.fill = cholesky_fill(n, p.row_ptr, p.col);
  s.row_ptr.upload(p.row_ptr);
  s.col.upload(p.col);
  s.slot_map.upload(p.slot_map);
  s.order.upload(p.order);
  s.diag_slot.upload(p.diag_slot);
  s.val.resize(size_t(s.nnz));
  s.b.resize(size_t(n));
  s.x.resize(size_t(n));
  s.partial.resize(kReduceBlocks);
  s.out.resize(1);
  check(cusolverSpCreate(&s.handle), "cusolverSpCreate");
  if (cusparseCreateMatDescr(&s.descr) != CUSPARSE_STATUS_SUCCESS) {
    throw Error("cuSPARSE: cannot create a matrix descriptor");
  }
  if (cusparseSetMatType(s.descr, CUSPARSE_MATRIX_TYPE_GENERAL) != CUSPARSE_STATUS_SUCCESS ||
      cusparseSetMatIndexBase(s.descr, CUSPARSE_INDEX_BASE_ZERO) != CUSPARSE_STATUS_SUCCESS) {
    throw Error("cuSPARSE: cannot set up the matrix descriptor");
  }
  if (symmetric && n > 0) {
    // symbolic analysis once per pattern
    check(cusolverSpCreateCsrcholInfo(&s.chol), "cusolverSpCreateCsrcholInfo");
    check(cusolverSpXcsrcholAnalysis(s.handle, n, s.nnz, s.descr, s.row_ptr.data(), s.col.data(),
                                     s.chol),
          "cusolverSpXcsrcholAnalysis");
  }
}

DeviceSparseSolver::~DeviceSparseSolver() = default;

bool DeviceSparseSolver::factorize(const Real* d_val) {
  Impl& s = *impl_;
  s.fallback = false;
  if (s.n == 0) return true;
  parallel_for_cuda(s.nnz, Gather{s.slot_map.data(), d_val, s.val.data()});
  // the scale of the matrix, for scale-free singularity tolerances
  s.max_diag = s.reduce(s.n, MaxDiag{s.diag_slot.data(), s.val.data()}).m0;
  if (s.chol) {
    if (!s.have_work) {
      size_t internal = 0, workspace = 0;
      check(cusolverSpDcsrcholBufferInfo(s.handle, s.n, s.nnz, s.descr, s.val.data(),
                                         s.row_ptr.data(), s.col.data(), s.chol, &internal,
                                         &workspace),
            "cusolverSpDcsrcholBufferInfo");
      s.work.resize(workspace > 0 ? workspace : 1);
      s.have_work = true;
    }
    // the low-level csrchol API is not documented: a matrix that is not positive definite may
    // show as a zero-pivot status of the factorization, as a pivot at or below the tolerance,
    // or (a negative pivot's square root) as a solution that is not finite, which solve() takes
    // to QR too
    const cusolverStatus_t st =
        cusolverSpDcsrcholFactor(s.handle, s.n, s.nnz, s.descr, s.val.data(), s.row_ptr.data(),
                                 s.col.data(), s.chol, s.work.data());
    if (st != CUSOLVER_STATUS_ZERO_PIVOT) {
      check(st, "cusolverSpDcsrcholFactor");
      int pivot = -1;
      // L(j, j) at or below the tolerance: a pivot below 1e-14 of the largest diagonal entry,
      // not positive definite (numerically)
      const Real tol = 1e-7 * std::sqrt(s.max_diag);
      check(cusolverSpDcsrcholZeroPivot(s.handle, s.chol, tol, &pivot),
            "cusolverSpDcsrcholZeroPivot");
      if (pivot < 0) return true;
    }
  }
  // QR factorizes inside each solve (csrlsvqr has no separate factorization)
  s.fallback = s.symmetric;
  return s.max_diag > 0 || s.n == 0;
}

bool DeviceSparseSolver::solve(const Real* d_b, Real* d_x) {
  Impl& s = *impl_;
  if (s.n == 0) return true;
  parallel_for_cuda(s.n, Gather{s.order.data(), d_b, s.b.data()});
  if (s.chol && !s.fallback) {
    check(cusolverSpDcsrcholSolve(s.handle, s.n, s.b.data(), s.x.data(), s.chol, s.work.data()),
          "cusolverSpDcsrcholSolve");
    parallel_for_cuda(s.n, Scatter{s.order.data(), s.x.data(), d_x});
    if (s.reduce(s.n, CountNonFinite{d_x}).s0 == 0) return true;
    // a negative pivot the zero-pivot test let through: QR, as for one it reports
    s.fallback = true;
  }
  int singular = -1;
  // the ordering is already applied (csrlsvqr's reorder argument has no effect)
  check(cusolverSpDcsrlsvqr(s.handle, s.n, s.nnz, s.descr, s.val.data(), s.row_ptr.data(),
                            s.col.data(), s.b.data(), 1e-14 * s.max_diag, 0, s.x.data(), &singular),
        "cusolverSpDcsrlsvqr");
  if (singular >= 0) return false;
  parallel_for_cuda(s.n, Scatter{s.order.data(), s.x.data(), d_x});
  return s.reduce(s.n, CountNonFinite{d_x}).s0 == 0;
}

bool DeviceSparseSolver::used_fallback() const { return impl_->fallback; }
long DeviceSparseSolver::factor_nonzeros() const { return impl_->fill; }

}  // namespace slender
