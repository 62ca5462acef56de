// Every stencil instantiated in a kernel: the build fails if stencil code leaves the
// device-safe subset. With a device present, kernel results must equal the host evaluation
// (same code, same inputs) to 1e-12 relative.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cuda/gpu_test_util.h"
#include "slender/stencils/bindings.h"

namespace slender {
namespace {

constexpr Real kCpuGpuRelTol = 1e-12;  // same arithmetic, only FMA contraction may differ

template <int D, class Eval>
__global__ void eval_kernel(const Vec<D>* x, int n, Eval eval, LocalEval<D>* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) eval(x[i], out[i]);
}

struct StretchEval {
  RodStretch::Params p;
  __host__ __device__ void operator()(const Vec<6>& x, LocalEval<6>& r) const {
    rod_stretch_eval(x, p, kGradHess, r);
  }
};

struct BendTwistEval {
  RodBendTwist::Params p;
  __host__ __device__ void operator()(const Vec<11>& x, LocalEval<11>& r) const {
    rod_bend_twist_eval(x, p, kGradHess, r);
  }
};

template <int D, class Eval>
void compare_on_device(const std::vector<Vec<D>>& xs, const Eval& eval) {
  const int n = int(xs.size());
  Vec<D>* dx = nullptr;
  LocalEval<D>* dout = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, n * sizeof(Vec<D>)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, n * sizeof(LocalEval<D>)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, xs.data(), n * sizeof(Vec<D>), cudaMemcpyHostToDevice), cudaSuccess);
  eval_kernel<D><<<(n + 63) / 64, 64>>>(dx, n, eval, dout);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<LocalEval<D>> out(n);
  ASSERT_EQ(cudaMemcpy(out.data(), dout, n * sizeof(LocalEval<D>), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(dx);
  cudaFree(dout);
  for (int i = 0; i < n; ++i) {
    LocalEval<D> h;
    eval(xs[i], h);
    EXPECT_NEAR(out[i].E, h.E, kCpuGpuRelTol * (1 + std::fabs(h.E)));
    for (int k = 0; k < D; ++k)
      EXPECT_NEAR(out[i].g[k], h.g[k], kCpuGpuRelTol * (1 + norm(h.g)));
    for (int k = 0; k < D * D; ++k)
      EXPECT_NEAR(out[i].H.a[k], h.H.a[k], 1e-11 * (1 + std::fabs(h.H.a[k])));
  }
}

TEST(StencilGpu, StretchMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  std::vector<Vec<6>> xs(256);
  for (auto& x : xs)
    for (int k = 0; k < 6; ++k)
      x[k] = u(rng) + (k == 3 ? 2 : 0);
  compare_on_device<6>(xs, StretchEval{{3.0, 1.5}});
}

TEST(StencilGpu, BendTwistMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<Real> u(-0.3, 0.3);
  std::vector<Vec<11>> xs(256);
  for (auto& x : xs) {
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < 3; ++k)
        x[3 * a + k] = (k == 0 ? a : 0) + u(rng);
    x[9] = u(rng);
    x[10] = u(rng);
  }
  // directors normal to the unperturbed tangent (x axis) are close enough for the compare:
  // the evaluation does not require exact orthogonality, only the same inputs on both sides
  const RodBendTwist::Params p{vec3(0, 1, 0), vec3(0, 0, 1), 0.2,  1.0,  2.0, 0.5,
                               1.0,           0.1,           -0.1, 0.05, 0.3};
  compare_on_device<11>(xs, BendTwistEval{p});
}

}  // namespace
}  // namespace slender
