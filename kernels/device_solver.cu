// DeviceSparseSolver: cuSOLVER csrchol (analysis once, factor per call) and csrlsvqr fallback.
// The csrchol API is marked deprecated in CUDA 13 in favour of cuDSS (not shipped with the
// toolkit); it is what the backend's design names, so the deprecation notes are switched off here.

#define DISABLE_CUSOLVER_DEPRECATED

#include <cusolverSp.h>
#include <cusolverSp_LOWLEVEL_PREVIEW.h>
#include <cusparse.h>

#include <string>

#include "device_buffer.cuh"
#include "device_solver.h"

namespace slender {

namespace {

void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) {
    throw Error(std::string("cuSOLVER error ") + std::to_string(int(s)) + " in " + what);
  }
}

}  // namespace

struct DeviceSparseSolver::Impl {
  int n = 0, nnz = 0;
  const int* row_ptr = nullptr;
  const int* col = nullptr;
  const Real* val = nullptr;  // the values of the last factorize()
  bool symmetric = true;
  bool fallback = false;
  cusolverSpHandle_t handle = nullptr;
  cusparseMatDescr_t descr = nullptr;
  csrcholInfo_t chol = nullptr;
  DeviceBuffer<char> work;
};

DeviceSparseSolver::DeviceSparseSolver(
    int n, int nnz, const int* d_row_ptr, const int* d_col, bool symmetric)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = n;
  s.nnz = nnz;
  s.row_ptr = d_row_ptr;
  s.col = d_col;
  s.symmetric = symmetric;
  check(cusolverSpCreate(&s.handle), "cusolverSpCreate");
  if (cusparseCreateMatDescr(&s.descr) != CUSPARSE_STATUS_SUCCESS) {
    throw Error("cuSPARSE: cannot create a matrix descriptor");
  }
  cusparseSetMatType(s.descr, CUSPARSE_MATRIX_TYPE_GENERAL);
  cusparseSetMatIndexBase(s.descr, CUSPARSE_INDEX_BASE_ZERO);
  if (symmetric && n > 0) {
    // symbolic analysis once per pattern
    check(cusolverSpCreateCsrcholInfo(&s.chol), "cusolverSpCreateCsrcholInfo");
    check(cusolverSpXcsrcholAnalysis(s.handle, n, nnz, s.descr, d_row_ptr, d_col, s.chol),
          "cusolverSpXcsrcholAnalysis");
  }
}

DeviceSparseSolver::~DeviceSparseSolver() {
  Impl& s = *impl_;
  if (s.chol) cusolverSpDestroyCsrcholInfo(s.chol);
  if (s.descr) cusparseDestroyMatDescr(s.descr);
  if (s.handle) cusolverSpDestroy(s.handle);
}

bool DeviceSparseSolver::factorize(const Real* d_val) {
  Impl& s = *impl_;
  s.val = d_val;
  s.fallback = false;
  if (s.n == 0) return true;
  if (s.chol) {
    size_t internal = 0, workspace = 0;
    check(cusolverSpDcsrcholBufferInfo(s.handle, s.n, s.nnz, s.descr, d_val, s.row_ptr, s.col,
                                       s.chol, &internal, &workspace),
          "cusolverSpDcsrcholBufferInfo");
    s.work.resize(workspace > 0 ? workspace : 1);
    check(cusolverSpDcsrcholFactor(s.handle, s.n, s.nnz, s.descr, d_val, s.row_ptr, s.col, s.chol,
                                   s.work.data()),
          "cusolverSpDcsrcholFactor");
    int pivot = -1;
    // a pivot at or below the tolerance: not positive definite (numerically)
    check(cusolverSpDcsrcholZeroPivot(s.handle, s.chol, 1e-14, &pivot),
          "cusolverSpDcsrcholZeroPivot");
    if (pivot < 0) return true;
  }
  // QR factorizes inside each solve (csrlsvqr has no separate factorization)
  s.fallback = s.symmetric;
  return true;
}

bool DeviceSparseSolver::solve(const Real* d_b, Real* d_x) {
  Impl& s = *impl_;
  if (s.n == 0) return true;
  if (s.chol && !s.fallback) {
    check(cusolverSpDcsrcholSolve(s.handle, s.n, d_b, d_x, s.chol, s.work.data()),
          "cusolverSpDcsrcholSolve");
    return true;
  }
  int singular = -1;
  // reorder = 1 (symrcm) limits the fill of the QR factors
  check(cusolverSpDcsrlsvqr(s.handle, s.n, s.nnz, s.descr, s.val, s.row_ptr, s.col, d_b, 1e-14, 1,
                            d_x, &singular),
        "cusolverSpDcsrlsvqr");
  return singular < 0;
}

bool DeviceSparseSolver::used_fallback() const { return impl_->fallback; }

}  // namespace slender
