// The CUDA backend's direct solve (cuSOLVER csrchol with a QR fallback) against the CPU
// backend's: a real Newton Jacobian (mid-edge plate with a joined rod) solved on the device
// equals the CPU solve; refactorizing new values reuses the analysis; an indefinite matrix falls
// back to QR; a non-symmetric row-major matrix is solved as J x = b. Skipped without a device.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/gpu_models.h"
#include "cuda/gpu_test_util.h"
#include "device_buffer.cuh"
#include "device_solver.h"
#include "slender/builder.h"
#include "slender/engine/linear_solver.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {

/// y = A x for a host CSR matrix
std::vector<Real> multiply(const std::vector<int>& row_ptr,
                           const std::vector<int>& col,
                           const std::vector<Real>& val,
                           const std::vector<Real>& x) {
  std::vector<Real> y(row_ptr.size() - 1, 0);
  for (size_t r = 0; r + 1 < row_ptr.size(); ++r)
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
      y[r] += val[k] * x[col[k]];
  return y;
}

using test::max_abs;

/// solves A x = b on the device; returns x
std::vector<Real> device_solve(DeviceSparseSolver& s,
                               const DeviceBuffer<Real>& val,
                               const std::vector<Real>& b,
                               bool* fallback = nullptr) {
  DeviceBuffer<Real> db(b), dx(b.size());
  EXPECT_TRUE(s.factorize(val.data()));
  EXPECT_TRUE(s.solve(db.data(), dx.data()));
  SLENDER_CUDA_CHECK(cudaDeviceSynchronize());
  if (fallback) *fallback = s.used_fallback();
  std::vector<Real> x;
  dx.download(x);
  return x;
}

TEST(DeviceSolver, NewtonJacobianMatchesTheCpuSolve) {
  SLENDER_REQUIRE_GPU();
  const auto m = build_model(test::midedge_plate_with_rod(false, true));
  Simulator sim(m);
  ASSERT_TRUE(sim.step(1e-3).ok());
  std::vector<Real> f, J;
  sim.residual(1e-3, sim.state().q, f, &J);
  const AssemblyPlan& p = m->plan;
  std::vector<Real> val(p.nnz());
  for (int r = 0; r < p.nfree; ++r)
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      val[k] = J[size_t(r) * p.nfree + p.col[k]];

  cpu::LinearSolver cpu(p, LinearSolverKind::kAuto);
  std::copy(val.begin(), val.end(), cpu.values());
  ASSERT_TRUE(cpu.factorize());
  std::vector<Real> x_cpu(p.nfree);
  ASSERT_TRUE(cpu.solve(f.data(), x_cpu.data()));

  DeviceBuffer<Real> dval(val);
  DeviceSparseSolver dev(p.nfree, p.row_ptr, p.col, true);
  bool fallback = true;
  const std::vector<Real> x = device_solve(dev, dval, f, &fallback);
  EXPECT_FALSE(fallback);
  EXPECT_LT(test::max_abs_diff(x, x_cpu), 1e-9 * max_abs(x_cpu));

  // numeric refactorization of new values on the same analysis: twice the matrix, half the x
  std::vector<Real> val2 = val;
  for (Real& v : val2)
    v *= 2;
  DeviceBuffer<Real> dval2(val2);
  const std::vector<Real> x2 = device_solve(dev, dval2, f);
  Real diff = 0;
  for (int i = 0; i < p.nfree; ++i)
    diff = std::max(diff, std::fabs(2 * x2[i] - x_cpu[i]));
  EXPECT_LT(diff, 1e-9 * max_abs(x_cpu));
}

/// tridiagonal pattern with diagonal d, sub-diagonal lo and super-diagonal up
struct Tridiagonal {
  std::vector<int> row_ptr{0}, col;
  std::vector<Real> val;
  Tridiagonal(int n, Real d, Real lo, Real up) {
    for (int r = 0; r < n; ++r) {
      for (int c = std::max(0, r - 1); c <= std::min(n - 1, r + 1); ++c) {
        col.push_back(c);
        val.push_back(c == r ? d : (c < r ? lo : up));
      }
      row_ptr.push_back(int(col.size()));
    }
  }
};

TEST(DeviceSolver, IndefiniteMatrixFallsBackToQr) {
  SLENDER_REQUIRE_GPU();
  const int n = 60;
  const Tridiagonal t(n, 0.5, -1, -1);  // eigenvalues of both signs
  std::vector<Real> b(n);
  for (int i = 0; i < n; ++i)
    b[i] = std::cos(0.7 * i);
  DeviceBuffer<Real> dval(t.val);
  DeviceSparseSolver s(n, t.row_ptr, t.col, true);
  bool fallback = false;
  const std::vector<Real> x = device_solve(s, dval, b, &fallback);
  EXPECT_TRUE(fallback);
  const std::vector<Real> ax = multiply(t.row_ptr, t.col, t.val, x);
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(ax[i], b[i], 1e-9);
}

TEST(DeviceSolver, NonSymmetricRowMajorMatrixIsSolvedAsJxEqualsB) {
  SLENDER_REQUIRE_GPU();
  const int n = 40;
  const Tridiagonal t(n, 5, -0.5, -2);
  std::vector<Real> b(n);
  for (int i = 0; i < n; ++i)
    b[i] = std::sin(1.3 * i) + 0.2;
  DeviceBuffer<Real> dval(t.val);
  DeviceSparseSolver s(n, t.row_ptr, t.col, false);
  const std::vector<Real> x = device_solve(s, dval, b);
  const std::vector<Real> ax = multiply(t.row_ptr, t.col, t.val, x);
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(ax[i], b[i], 1e-12);
}

}  // namespace
}  // namespace slender
