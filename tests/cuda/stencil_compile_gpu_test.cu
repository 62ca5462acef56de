// Every stencil instantiated in a kernel: the build fails if stencil code leaves the
// device-safe subset. With a device present, kernel results must equal the host evaluation
// (same code, same inputs) to 1e-12 relative.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cuda/gpu_test_util.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/rod_pressure_chamber.h"
#include "slender/stencils/rod_quadratic_drag.h"
#include "slender/stencils/rod_tendon.h"
#include "slender/stencils/rod_wrench.h"
#include "slender/stencils/shell_follower_pressure.h"
#include "slender/stencils/shell_membrane.h"
#include "slender/stencils/shell_pressure.h"
#include "slender/stencils/shell_thrust.h"

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

struct HingeEval {
  ShellHinge::Params p;
  __host__ __device__ void operator()(const Vec<12>& x, LocalEval<12>& r) const {
    shell_hinge_eval(x, p, kGradHess, r);
  }
};

struct MidEdgeEval {
  ShellMidedge::Params p;
  __host__ __device__ void operator()(const Vec<12>& x, LocalEval<12>& r) const {
    shell_midedge_eval(x, p, kGradHess, r);
  }
};

struct DragEval {
  ShellDrag::Params p;
  __host__ __device__ void operator()(const Vec<9>& x, LocalEval<9>& r) const {
    shell_drag_eval(x, p, kGradHess, r);
  }
};

struct QuadraticDragEval {
  RodQuadraticDrag::Params p;
  __host__ __device__ void operator()(const Vec<6>& x, LocalEval<6>& r) const {
    rod_quadratic_drag_eval(x, p, kGradHess, r);
  }
};

// a wrench on the edge x[0..5], twist x[6]; d1 is a fixed vector made normal to the edge
struct WrenchEval {
  RodWrench::Params p;
  __host__ __device__ void operator()(const Vec<7>& x, LocalEval<7>& r) const {
    RodWrench::Params q = p;
    Vec3 t = x.segment<3>(3) - x.segment<3>(0);
    t = t / norm(t);
    q.d1 = p.d1 - dot(p.d1, t) * t;
    q.d1 = q.d1 / norm(q.d1);
    rod_wrench_eval(x, q, kGradHess, r);
  }
};

// a pressure chamber's end edge (rod_pressure_chamber.h): the wrench per pascal computed where
// the kernel runs, times the pressure, as a follower wrench
struct ChamberEval {
  Real alpha, area, offset, angle, p;
  int at;
  __host__ __device__ void operator()(const Vec<7>& x, LocalEval<7>& r) const {
    RodWrench::Params q;
    Vec3 F, M;
    pressure_chamber_wrench(alpha, area, offset, angle, F, M);
    q.F = p * F;
    q.M = p * M;
    Vec3 t = x.segment<3>(3) - x.segment<3>(0);
    t = t / norm(t);
    const Vec3 d1 = Vec3{{0.3, -0.5, 0.8}};
    q.d1 = d1 - dot(d1, t) * t;
    q.d1 = q.d1 / norm(q.d1);
    q.at = at;
    q.follower = 1;
    rod_wrench_eval(x, q, kGradHess, r);
  }
};

// a tendon segment between points on the edges x[0..5] (twist x[6]) and x[7..12] (twist x[13]);
// each d1 a fixed vector made normal to its edge
struct TendonEval {
  RodTendon::Params p;
  __host__ __device__ void operator()(const Vec<14>& x, LocalEval<14>& r) const {
    RodTendon::Params q = p;
    for (int j = 0; j < 2; ++j) {
      Vec3 t = x.segment<3>(7 * j + 3) - x.segment<3>(7 * j);
      t = t / norm(t);
      q.d1[j] = p.d1[j] - dot(p.d1[j], t) * t;
      q.d1[j] = q.d1[j] / norm(q.d1[j]);
    }
    rod_tendon_eval(x, q, kGradHess, r);
  }
};

struct FollowerPressureEval {
  ShellFollowerPressure::Params p;
  __host__ __device__ void operator()(const Vec<9>& x, LocalEval<9>& r) const {
    shell_follower_pressure_eval(x, p, kGradHess, r);
  }
};

struct ThrustEval {
  ShellThrust::Params p;
  __host__ __device__ void operator()(const Vec<12>& x, LocalEval<12>& r) const {
    shell_thrust_eval(x, p, kGradHess, r);
  }
};

struct PressureEval {
  ShellPressure::Params p;
  __host__ __device__ void operator()(const Vec<9>& x, LocalEval<9>& r) const {
    shell_pressure_eval(x, p, kGradHess, r);
  }
};
struct MembraneEval {
  ShellMembrane::Params p;
  __host__ __device__ void operator()(const Vec<9>& x, LocalEval<9>& r) const {
    shell_membrane_eval(x, p, kGradHess, r);
  }
};
struct GroundEval {
  GroundContact::Params p;
  __host__ __device__ void operator()(const Vec<3>& x, LocalEval<3>& r) const {
    ground_contact_eval(x, p, kGradHess, r);
  }
};

// pair friction with node velocities u_k = u_hat_k + c_u (x_k - x_k0), x_k0 = x_k - 1e-4
__host__ __device__ inline ImcFriction test_friction(const Vec<12>& x) {
  ImcFriction f;
  f.mu = 0.5;
  f.nu = 1e-2;
  f.c_u = 100;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i)
      f.u[k][i] = Real(0.01) * (k + 1) * (i == 0 ? 1 : -1) + f.c_u * Real(1e-4) * x[3 * k + i];
  f.u[4] = Vec3::zero();
  return f;
}

struct ImcEval {
  ImcParams p;
  bool friction;
  __host__ __device__ void operator()(const Vec<12>& x, LocalEval<12>& r) const {
    const ImcFriction f = test_friction(x);
    imc_edge_edge_eval(x, p, kGradHess, r, nullptr, friction ? &f : nullptr);
  }
};

struct ImcPointTriEval {
  ImcParams p;
  bool friction;
  __host__ __device__ void operator()(const Vec<12>& x, LocalEval<12>& r) const {
    const ImcFriction f = test_friction(x);
    imc_point_triangle_eval(x, p, kGradHess, r, nullptr, friction ? &f : nullptr);
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
  // LocalEval's padding after `flags` is never written by the kernel, but the whole struct is
  // copied back: zeroed first, so that initcheck reports only reads of what a stencil left out
  ASSERT_EQ(cudaMemset(dout, 0, n * sizeof(LocalEval<D>)), cudaSuccess);
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

// a flat-ish quad of two triangles, perturbed: hinge (x0, x1 the hinge, x2, x3 the tips)
std::vector<Vec<12>> random_hinges(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<Real> u(-0.2, 0.2);
  std::vector<Vec<12>> xs(256);
  const Real base[12] = {0, 0, 0, 1, 0, 0, 0.5, 0.8, 0, 0.5, -0.8, 0};
  for (auto& x : xs)
    for (int k = 0; k < 12; ++k)
      x[k] = base[k] + u(rng);
  return xs;
}

TEST(StencilGpu, HingeMatchesHost) {
  SLENDER_REQUIRE_GPU();
  compare_on_device<12>(random_hinges(3), HingeEval{{1.5, 0.2}});
}

TEST(StencilGpu, MidEdgeMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<12>> xs = random_hinges(5);  // x0, x1, x2 and three xi values
  for (auto& x : xs)
    for (int k = 9; k < 12; ++k)
      x[k] *= 0.1;
  ShellMidedge::Params p;
  p.tau0[0] = vec3(0, 0, 1);
  p.tau0[1] = vec3(0.6, 0, 0.8);
  p.tau0[2] = vec3(0, 0.6, 0.8);
  for (int k = 0; k < 3; ++k) {
    p.s[k] = k == 1 ? -1 : 1;
    p.l_bar[k] = 1;
  }
  p.A_bar = 0.4;
  p.Lambda_bar = Mat3::zero();
  p.kb = 2;
  p.nu = 0.3;
  compare_on_device<12>(xs, MidEdgeEval{p});
}

TEST(StencilGpu, DragMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<9>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(7);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 9; ++k)
      xs[i][k] = h[i][k];
  ShellDrag::Params p;
  for (int a = 0; a < 3; ++a) {
    p.u_hat[a] = vec3(0.1 * a, -0.2, 0.5);
    p.q_hat[a] = vec3(0, 0, 0.01 * a);
  }
  p.c_u = 100;
  p.rho_med = 1.2;
  p.C_D = 1;
  p.A_bar = 0.4;
  compare_on_device<9>(xs, DragEval{p});
}

TEST(StencilGpu, QuadraticDragMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<6>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(11);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 6; ++k)
      xs[i][k] = h[i][k];
  RodQuadraticDrag::Params p;
  for (int a = 0; a < 2; ++a) {
    p.u_hat[a] = vec3(0.1 * a, -0.2, 0.5);
    p.q_hat[a] = vec3(0, 0, 0.01 * a);
  }
  p.c_u = 100;
  p.C = 0.3;
  compare_on_device<6>(xs, QuadraticDragEval{p});
}

TEST(StencilGpu, WrenchMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<7>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(13);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 7; ++k)
      xs[i][k] = h[i][k];
  for (int follower : {0, 1}) {
    RodWrench::Params p;
    p.d1 = vec3(0.3, -0.5, 0.8);
    p.F = vec3(1.5, -0.4, 0.7);
    p.M = vec3(-0.2, 0.6, 0.25);
    p.at = 1;
    p.follower = follower;
    compare_on_device<7>(xs, WrenchEval{p});
  }
}

// two edges from two random hinges (the second shifted off the first), points at a node and at
// an edge's midpoint with offsets in both material directions
TEST(StencilGpu, TendonMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<14>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(19), g = random_hinges(23);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 7; ++k) {
      xs[i][k] = h[i][k];
      xs[i][7 + k] = g[i][k] + (k < 6 && k % 3 == 0 ? 0.5 : 0);
    }
  RodTendon::Params p;
  p.d1[0] = vec3(0.3, -0.5, 0.8);
  p.d1[1] = vec3(-0.6, 0.2, 0.7);
  p.w[0] = 0;
  p.w[1] = 0.5;
  p.r1[0] = 0.05;
  p.r2[0] = -0.02;
  p.r1[1] = -0.03;
  p.r2[1] = 0.04;
  p.T = 7.5;
  compare_on_device<14>(xs, TendonEval{p});
}

// random wedges with fixed node velocities: some shrink (thrust), some grow (none)
TEST(StencilGpu, ThrustMatchesHost) {
  SLENDER_REQUIRE_GPU();
  ShellThrust::Params p;
  for (int a = 0; a < 4; ++a) {
    p.u_hat[a] = vec3(0.2 * a - 0.3, 0.1 - 0.15 * a, 0.4 * (a % 2) - 0.2);
    p.q_hat[a] = vec3(0.01 * a, 0, -0.02);
  }
  p.c_u = 100;
  p.c = 110;
  p.e = vec3(0, 0, 1);
  compare_on_device<12>(random_hinges(17), ThrustEval{p});
}

TEST(StencilGpu, PressureChamberMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<7>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(17);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 7; ++k)
      xs[i][k] = h[i][k];
  for (int at : {0, 1})
    compare_on_device<7>(xs, ChamberEval{0.8, 2.8e-5, 7e-3, 2.0943951023931953, 6e4, at});
}

TEST(StencilGpu, FollowerPressureMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<9>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(13);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 9; ++k)
      xs[i][k] = h[i][k];
  compare_on_device<9>(xs, FollowerPressureEval{ShellFollowerPressure::Params{250}});
}

TEST(StencilGpu, PressureMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<9>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(11);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 9; ++k)
      xs[i][k] = h[i][k];
  compare_on_device<9>(xs, PressureEval{ShellPressure::Params{3e3, vec3(0.1, -0.2, 0.3)}});
}

// the constant-strain membrane, both laws, at the Poisson ratios of the neo-Hookean law's three
// branches (nu = 0: no thickness change; 0.5: incompressible; between: Newton's method)
TEST(StencilGpu, MembraneMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<9>> xs(256);
  const std::vector<Vec<12>> h = random_hinges(13);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int k = 0; k < 9; ++k)
      xs[i][k] = h[i][k];
  for (int law : {int(ShellMembrane::kStvk), int(ShellMembrane::kNeoHookean)})
    for (Real nu : {0.0, 0.3, 0.5})
      compare_on_device<9>(xs,
                           MembraneEval{ShellMembrane::Params{law, 2e6, nu, 1e-3, 1.1, 0.9, 0.2}});
}

TEST(StencilGpu, GroundContactMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<Real> u(-0.01, 0.01);
  std::vector<Vec<3>> xs(256);
  for (auto& x : xs)
    x = vec3(u(rng), u(rng), 0.001 + u(rng) * 0.1);
  GroundContact::Params p{};
  p.ground.shape = GroundShape::kPlane;
  p.ground.n = vec3(0, 0, 1);
  p.k_c = 1e3;
  p.delta = 1e-3;
  p.mu = 0.4;
  p.nu = 1e-3;
  p.u_hat = vec3(0.1, -0.05, 0);
  p.c_u = 100;
  compare_on_device<3>(xs, GroundEval{p});
}

TEST(StencilGpu, ContactEdgeEdgeMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<12>> xs = random_hinges(13);
  for (auto& x : xs) {
    x[8] += 0.004;  // second edge just above the first: within the contact range
    x[11] += 0.004;
  }
  compare_on_device<12>(xs, ImcEval{ImcParams{1e3, 0.01, 1e-3}, false});
  compare_on_device<12>(xs, ImcEval{ImcParams{1e3, 0.01, 1e-3}, true});
}

TEST(StencilGpu, ContactPointTriangleMatchesHost) {
  SLENDER_REQUIRE_GPU();
  std::vector<Vec<12>> xs = random_hinges(17);
  for (auto& x : xs)
    for (int c = 0; c < 3; ++c)  // the point just off the centroid of triangle (1, 2, 3)
      x[c] = (x[3 + c] + x[6 + c] + x[9 + c]) / 3 + (c == 2 ? 0.004 : 0.001);
  compare_on_device<12>(xs, ImcPointTriEval{ImcParams{1e3, 0.01, 1e-3}, false});
  compare_on_device<12>(xs, ImcPointTriEval{ImcParams{1e3, 0.01, 1e-3}, true});
}

}  // namespace
}  // namespace slender
