#pragma once

// Shared test helpers: named tolerances with their reasons, relative errors, random
// configurations and central finite differences.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "slender/core/small.h"

namespace slender::test {

/// an environment variable set for a scope (the engine reads its switches, SLENDER_FUSED_CG and
/// the like, when an engine is made), unset at its end
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_.c_str()); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
};

/// SLENDER_TEST_MAX_STEPS=N caps the step counts of the tests that ask (capped_steps) at N, each
/// at least 1: under compute-sanitizer a step costs seconds, and the sanitizer's verdict is then
/// what counts (a test leaves out its checks that need the full run where steps_capped())
inline int max_test_steps() {
  static const int n = [] {
    const char* s = std::getenv("SLENDER_TEST_MAX_STEPS");
    return s != nullptr && std::atoi(s) > 0 ? std::atoi(s) : 0;
  }();
  return n;
}
inline bool steps_capped() { return max_test_steps() > 0; }
inline int capped_steps(int n) { return steps_capped() ? std::min(n, max_test_steps()) : n; }

/// central differences with h = 1e-6 max(1, |x|) carry O(h^2) truncation and O(eps/h) round-off
/// error, both far below 1e-6 relative for smooth energies
constexpr Real kFdRelTol = 1e-6;
/// Hessians from second differences of the energy lose more digits to round-off (eps / h^2)
constexpr Real kFdHessRelTol = 1e-5;
/// relative error denominator floor
constexpr Real kFloor = 1e-8;

template <int N>
Real rel_err(const Vec<N>& a, const Vec<N>& b) {
  return norm(a - b) / std::max(norm(b), kFloor);
}

template <int N>
Real frobenius(const Mat<N, N>& a) {
  Real s = 0;
  for (int i = 0; i < N * N; ++i)
    s += a.a[i] * a.a[i];
  return std::sqrt(s);
}

template <int N>
Real rel_err(const Mat<N, N>& a, const Mat<N, N>& b) {
  return frobenius<N>(a - b) / std::max(frobenius<N>(b), kFloor);
}

inline Vec3 random_vec3(std::mt19937_64& rng, Real scale = 1) {
  std::uniform_real_distribution<Real> u(-1, 1);
  return Vec3{{scale * u(rng), scale * u(rng), scale * u(rng)}};
}

/// a random rotation matrix, from a random unit quaternion
inline Mat3 random_rotation(std::mt19937_64& rng) {
  std::normal_distribution<Real> nd(0, 1);
  Real q[4], n = 0;
  for (Real& c : q) {
    c = nd(rng);
    n += c * c;
  }
  n = std::sqrt(n);
  const Real w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  return Mat3{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
               2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
               2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
}

/// a unit vector normal to unit t, random
inline Vec3 random_normal(std::mt19937_64& rng, const Vec3& t) {
  for (;;) {
    Vec3 v = random_vec3(rng);
    v -= dot(v, t) * t;
    const Real n = norm(v);
    if (n > 0.1) return v / n;
  }
}

/// max |v_i|
inline Real max_abs(const std::vector<Real>& v) {
  Real m = 0;
  for (Real x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

/// max |a_i - b_i| over a's entries (b at least as long)
inline Real max_abs_diff(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

/// step of central differences for coordinate value x
inline Real fd_step(Real x) { return 1e-6 * std::max(Real(1), std::fabs(x)); }

/// gradient of f at x by central differences
template <int N, class F>
Vec<N> fd_gradient(const F& f, const Vec<N>& x) {
  Vec<N> g;
  for (int i = 0; i < N; ++i) {
    const Real h = fd_step(x[i]);
    Vec<N> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    g[i] = (f(xp) - f(xm)) / (2 * h);
  }
  return g;
}

/// Jacobian of a vector function by central differences: J(i, j) = d grad_i / d x_j
template <int N, class G>
Mat<N, N> fd_jacobian(const G& grad, const Vec<N>& x) {
  Mat<N, N> J;
  for (int j = 0; j < N; ++j) {
    const Real h = fd_step(x[j]);
    Vec<N> xp = x, xm = x;
    xp[j] += h;
    xm[j] -= h;
    const Vec<N> d = (grad(xp) - grad(xm)) / (2 * h);
    for (int i = 0; i < N; ++i)
      J(i, j) = d[i];
  }
  return J;
}

/// Hessian of f by second central differences of the energy itself
template <int N, class F>
Mat<N, N> fd_hessian(const F& f, const Vec<N>& x) {
  Mat<N, N> H;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) {
      const Real hi = 1e-4 * std::max(Real(1), std::fabs(x[i]));
      const Real hj = 1e-4 * std::max(Real(1), std::fabs(x[j]));
      auto at = [&](Real si, Real sj) {
        Vec<N> y = x;
        y[i] += si * hi;
        y[j] += sj * hj;
        return f(y);
      };
      const Real v = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * hi * hj);
      H(i, j) = H(j, i) = v;
    }
  return H;
}

}  // namespace slender::test
