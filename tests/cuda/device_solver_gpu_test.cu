// The CUDA backend's direct solve (cuSOLVER csrchol with a QR fallback) against the CPU
// backend's: a real Newton Jacobian (mid-edge plate with a joined rod) solved on the device
// equals the CPU solve; refactorizing new values reuses the analysis; an indefinite matrix falls
// back to QR; a non-symmetric row-major matrix is solved as J x = b. The band (a rod's Jacobian):
// block cyclic reduction (the default) and the LU by columns each against the CPU's banded LU,
// the LU's same bits in small windows as in one, non-symmetric values, and the sparse path for a
// pivot too small. Skipped without a device.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/gpu_models.h"
#include "cuda/gpu_test_util.h"
#include "device_buffer.cuh"
#include "device_solver.h"
#include "physics/physics_util.h"
#include "slender/builder.h"
#include "slender/core/block_cyclic.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/ordering.h"
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

using test::NewtonSystem;

TEST(DeviceSolver, NewtonJacobianMatchesTheCpuSolve) {
  SLENDER_REQUIRE_GPU();
  const NewtonSystem sys(build_model(test::midedge_plate_with_rod(false, true)));
  const AssemblyPlan& p = sys.m->plan;
  const std::vector<Real>& val = sys.val;
  const std::vector<Real>& f = sys.f;

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

/// a rod's Newton system (1 m: a band of about 10)
struct RodSystem : NewtonSystem {
  explicit RodSystem(int nodes) : NewtonSystem(test::clamped_rod(nodes, 1)) {}
};

/// the values with the entries above the diagonal scaled by `factor` (a non-symmetric matrix on
/// the same pattern)
std::vector<Real> upper_scaled(const AssemblyPlan& p, std::vector<Real> val, Real factor) {
  for (int r = 0; r < p.nfree; ++r)
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      if (p.col[k] > r) val[k] *= factor;
  return val;
}

std::vector<Real> cpu_band_solve(const AssemblyPlan& p,
                                 const std::vector<Real>& val,
                                 const std::vector<Real>& f,
                                 bool symmetric) {
  cpu::LinearSolver cpu(p, LinearSolverKind::kBanded, symmetric);
  std::copy(val.begin(), val.end(), cpu.values());
  EXPECT_TRUE(cpu.factorize());
  EXPECT_FALSE(cpu.used_fallback());
  std::vector<Real> x(p.nfree);
  EXPECT_TRUE(cpu.solve(f.data(), x.data()));
  return x;
}

// the band's LU by columns (SLENDER_DEVICE_BAND=lu; block cyclic reduction is the default)
TEST(DeviceSolver, BandLuOnARodMatchesTheCpuBandInOneWindowOrMany) {
  SLENDER_REQUIRE_GPU();
  setenv("SLENDER_DEVICE_BAND", "lu", 1);
  struct Unset {
    ~Unset() { unsetenv("SLENDER_DEVICE_BAND"); }
  } unset;
  const RodSystem rod(400);  // about 1,600 free DOFs: a band of about 270 KB, over one window
  const AssemblyPlan& p = rod.m->plan;
  const int w = band_layout(p.nfree, p.row_ptr, p.col).w;
  ASSERT_LE(w, 12);
  const std::vector<Real> x_cpu = cpu_band_solve(p, rod.val, rod.f, true);
  DeviceBuffer<Real> dval(rod.val);
  DeviceSparseSolver dev(p.nfree, p.row_ptr, p.col, true, LinearSolverKind::kAuto);
  ASSERT_TRUE(dev.banded());
  EXPECT_STREQ(dev.band_name(), "cuda-banded-lu");
  bool fallback = true;
  const std::vector<Real> x = device_solve(dev, dval, rod.f, &fallback);
  EXPECT_FALSE(fallback);
  // the same operations as the CPU's band, but for fused multiply-adds on the device
  EXPECT_LT(test::max_abs_diff(x, x_cpu), 1e-11 * max_abs(x_cpu));
  // windows of 2w + 3 rows (x then in global memory): every element of the factors gets the
  // same operations in the same order, so the same bits
  const long row_bytes = long(2 * w + 1) * long(sizeof(Real));
  setenv("SLENDER_BAND_STAGE_BYTES", std::to_string((2 * w + 3) * row_bytes).c_str(), 1);
  DeviceSparseSolver small(p.nfree, p.row_ptr, p.col, true, LinearSolverKind::kAuto);
  // and windows of about 230 rows with x in shared memory beside them
  setenv("SLENDER_BAND_STAGE_BYTES", std::to_string(4 * p.nfree * 8).c_str(), 1);
  DeviceSparseSolver mid(p.nfree, p.row_ptr, p.col, true, LinearSolverKind::kAuto);
  unsetenv("SLENDER_BAND_STAGE_BYTES");
  ASSERT_TRUE(small.banded());
  ASSERT_TRUE(mid.banded());
  EXPECT_EQ(device_solve(small, dval, rod.f), x);
  EXPECT_EQ(device_solve(mid, dval, rod.f), x);

  // non-symmetric values on the same pattern (LU, as the CPU's band): the upper entries 0.1 %
  // larger (a rod's stiff Jacobian scaled further apart leaves LU without pivoting unstable, on
  // the CPU as here)
  const std::vector<Real> val = upper_scaled(p, rod.val, 1.001);
  const std::vector<Real> y_cpu = cpu_band_solve(p, val, rod.f, false);
  DeviceBuffer<Real> dval2(val);
  DeviceSparseSolver lu(p.nfree, p.row_ptr, p.col, false, LinearSolverKind::kAuto);
  ASSERT_TRUE(lu.banded());
  const std::vector<Real> y = device_solve(lu, dval2, rod.f);
  EXPECT_LT(test::max_abs_diff(y, y_cpu), 1e-11 * max_abs(y_cpu));
  // a backward-stable solve: the residual at rounding of |J| |y|
  const std::vector<Real> fy = multiply(p.row_ptr, p.col, val, y);
  EXPECT_LT(test::max_abs_diff(fy, rod.f), 1e-12 * max_abs(val) * max_abs(y) * 16);
}

// block cyclic reduction (slender/core/block_cyclic.h) on rods of 1,600 and 8,000 free DOFs
// (the second beyond any window of the LU's), symmetric and not: the CPU band's solution within
// the two eliminations' rounding, a backward-stable residual, the host driver's solution of the
// same blocks, the same bits on a rerun
TEST(DeviceSolver, BlockCyclicOnRodsMatchesTheCpuBand) {
  SLENDER_REQUIRE_GPU();
  for (int nodes : {400, 2000}) {
    SCOPED_TRACE(nodes);
    const RodSystem rod(nodes);
    const AssemblyPlan& p = rod.m->plan;
    for (bool symmetric : {true, false}) {
      SCOPED_TRACE(symmetric);
      const std::vector<Real> val = symmetric ? rod.val : upper_scaled(p, rod.val, 1.001);
      const std::vector<Real> x_cpu = cpu_band_solve(p, val, rod.f, symmetric);
      DeviceBuffer<Real> dval(val);
      DeviceSparseSolver dev(p.nfree, p.row_ptr, p.col, symmetric, LinearSolverKind::kAuto);
      ASSERT_TRUE(dev.banded());
      EXPECT_STREQ(dev.band_name(), "cuda-block-cyclic");
      bool fallback = true;
      const std::vector<Real> x = device_solve(dev, dval, rod.f, &fallback);
      EXPECT_FALSE(fallback);
      EXPECT_LT(test::max_abs_diff(x, x_cpu), 1e-9 * max_abs(x_cpu));
      const std::vector<Real> fx = multiply(p.row_ptr, p.col, val, x);
      EXPECT_LT(test::max_abs_diff(fx, rod.f), 1e-12 * max_abs(val) * max_abs(x) * 16);
      EXPECT_EQ(device_solve(dev, dval, rod.f), x);
      // the host driver on the same blocks (the same passes, one thread)
      const BandLayout layout = band_layout(p.nfree, p.row_ptr, p.col);
      const BcrDims d = bcr_dims(p.nfree, layout.w);
      std::vector<Real> band(size_t(layout.band_size), 0), ws(size_t(bcr_workspace_size(d)), 0);
      for (size_t k = 0; k < layout.band_pos.size(); ++k)
        band[size_t(layout.band_pos[k])] = val[k];
      for (long t = 0; t < 3 * bcr_block_count(d) * d.nb; ++t) {
        const long src = bcr_band_source(d, layout.w, t);
        ws[size_t(bcr_fill_target(d, t))] = src >= 0 ? band[size_t(src)] : src == -2 ? 1 : 0;
      }
      ASSERT_TRUE(bcr_factor(ws.data(), d, 1e-13 * bcr_diagonal_max(ws.data(), d)));
      Real* y = bcr_vector(ws.data(), d);
      for (int i = 0; i < p.nfree; ++i)
        y[i] = rod.f[size_t(layout.order[size_t(i)])];
      bcr_solve(ws.data(), d);
      std::vector<Real> x_host(size_t(p.nfree));
      for (int i = 0; i < p.nfree; ++i)
        x_host[size_t(layout.order[size_t(i)])] = y[i];
      // (fused multiply-adds on the device only)
      EXPECT_LT(test::max_abs_diff(x, x_host), 1e-12 * max_abs(x_cpu));
    }
  }
}

// the band by block cyclic reduction asked for on a shell (kBanded: a mid-edge plate with a
// joined rod, a band wider than a warp, each block's inversion on one warp looping over its
// rows, the blocks in global memory): the CPU band's solution and a backward-stable residual
TEST(DeviceSolver, BlockCyclicOnAShellJacobianMatchesTheCpuBand) {
  SLENDER_REQUIRE_GPU();
  const NewtonSystem sys(build_model(test::midedge_plate_with_rod(false, true)));
  const AssemblyPlan& p = sys.m->plan;
  const std::vector<Real>& val = sys.val;
  const std::vector<Real>& f = sys.f;
  const int w = band_layout(p.nfree, p.row_ptr, p.col).w;
  EXPECT_GT(w, 32) << "(a band wider than a warp)";
  const std::vector<Real> x_cpu = cpu_band_solve(p, val, f, true);
  DeviceBuffer<Real> dval(val);
  DeviceSparseSolver dev(p.nfree, p.row_ptr, p.col, true, LinearSolverKind::kBanded);
  ASSERT_TRUE(dev.banded());
  EXPECT_STREQ(dev.band_name(), "cuda-block-cyclic");
  bool fallback = true;
  const std::vector<Real> x = device_solve(dev, dval, f, &fallback);
  EXPECT_FALSE(fallback);
  EXPECT_LT(test::max_abs_diff(x, x_cpu), 1e-9 * max_abs(x_cpu));
  const std::vector<Real> fx = multiply(p.row_ptr, p.col, val, x);
  EXPECT_LT(test::max_abs_diff(fx, f), 1e-12 * max_abs(val) * max_abs(x) * 16);
}

TEST(DeviceSolver, BandPivotTooSmallTakesTheSparsePath) {
  SLENDER_REQUIRE_GPU();
  // [[1, 1, 0], [1, 1, 1], [0, 1, 1]] (determinant -1): the second pivot is zero in either
  // order of the path 0-1-2; QR (the sparse path of a non-symmetric matrix) solves it
  const std::vector<int> row_ptr = {0, 2, 5, 7}, col = {0, 1, 0, 1, 2, 1, 2};
  DeviceBuffer<Real> dval(std::vector<Real>(7, 1.0));
  DeviceSparseSolver s(3, row_ptr, col, false, LinearSolverKind::kBanded);
  ASSERT_TRUE(s.banded());
  bool fallback = false;
  const std::vector<Real> x = device_solve(s, dval, {3, 6, 5}, &fallback);
  EXPECT_TRUE(fallback);
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NEAR(x[0], 1, 1e-12);
  EXPECT_NEAR(x[1], 2, 1e-12);
  EXPECT_NEAR(x[2], 3, 1e-12);
}

}  // namespace
}  // namespace slender
