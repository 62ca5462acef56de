#pragma once

// Small fixed-size vectors and matrices for stencil math: plain arrays with loops that the
// compiler unrolls, usable in host and device code alike (no Eigen inside kernels, no
// allocation, no exceptions). Storage is row-major.

#include "slender/core/hd.h"

namespace slender {

template <int N>
struct Vec {
  Real v[N];

  SLENDER_HD Real& operator[](int i) { return v[i]; }
  SLENDER_HD const Real& operator[](int i) const { return v[i]; }
  SLENDER_HD Real& operator()(int i) { return v[i]; }
  SLENDER_HD const Real& operator()(int i) const { return v[i]; }

  SLENDER_HD static Vec zero() {
    Vec r;
    for (int i = 0; i < N; ++i)
      r.v[i] = 0;
    return r;
  }
  SLENDER_HD void set_zero() {
    for (int i = 0; i < N; ++i)
      v[i] = 0;
  }
  /// the sub-vector of length M starting at i
  template <int M>
  SLENDER_HD Vec<M> segment(int i) const {
    Vec<M> r;
    for (int k = 0; k < M; ++k)
      r.v[k] = v[i + k];
    return r;
  }
  template <int M>
  SLENDER_HD void set_segment(int i, const Vec<M>& s) {
    for (int k = 0; k < M; ++k)
      v[i + k] = s.v[k];
  }
  template <int M>
  SLENDER_HD void add_segment(int i, const Vec<M>& s) {
    for (int k = 0; k < M; ++k)
      v[i + k] += s.v[k];
  }
  SLENDER_HD Vec& operator+=(const Vec& b) {
    for (int i = 0; i < N; ++i)
      v[i] += b.v[i];
    return *this;
  }
  SLENDER_HD Vec& operator-=(const Vec& b) {
    for (int i = 0; i < N; ++i)
      v[i] -= b.v[i];
    return *this;
  }
  SLENDER_HD Vec& operator*=(Real s) {
    for (int i = 0; i < N; ++i)
      v[i] *= s;
    return *this;
  }
};

using Vec3 = Vec<3>;

template <int N>
SLENDER_HD inline Vec<N> operator+(Vec<N> a, const Vec<N>& b) {
  a += b;
  return a;
}
template <int N>
SLENDER_HD inline Vec<N> operator-(Vec<N> a, const Vec<N>& b) {
  a -= b;
  return a;
}
template <int N>
SLENDER_HD inline Vec<N> operator-(Vec<N> a) {
  for (int i = 0; i < N; ++i)
    a.v[i] = -a.v[i];
  return a;
}
template <int N>
SLENDER_HD inline Vec<N> operator*(Real s, Vec<N> a) {
  a *= s;
  return a;
}
template <int N>
SLENDER_HD inline Vec<N> operator*(Vec<N> a, Real s) {
  a *= s;
  return a;
}
template <int N>
SLENDER_HD inline Vec<N> operator/(Vec<N> a, Real s) {
  a *= Real(1) / s;
  return a;
}
template <int N>
SLENDER_HD inline Real dot(const Vec<N>& a, const Vec<N>& b) {
  Real s = 0;
  for (int i = 0; i < N; ++i)
    s += a.v[i] * b.v[i];
  return s;
}
template <int N>
SLENDER_HD inline Real squared_norm(const Vec<N>& a) {
  return dot(a, a);
}
template <int N>
SLENDER_HD inline Real norm(const Vec<N>& a) {
  return ::sqrt(dot(a, a));
}
SLENDER_HD inline Vec3 vec3(Real x, Real y, Real z) { return Vec3{{x, y, z}}; }
SLENDER_HD inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return Vec3{{a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2],
               a.v[0] * b.v[1] - a.v[1] * b.v[0]}};
}

/// Row-major R x C matrix.
template <int R, int C = R>
struct Mat {
  Real a[R * C];

  SLENDER_HD Real& operator()(int i, int j) { return a[i * C + j]; }
  SLENDER_HD const Real& operator()(int i, int j) const { return a[i * C + j]; }

  SLENDER_HD static Mat zero() {
    Mat r;
    for (int i = 0; i < R * C; ++i)
      r.a[i] = 0;
    return r;
  }
  SLENDER_HD static Mat identity() {
    Mat r = zero();
    for (int i = 0; i < (R < C ? R : C); ++i)
      r.a[i * C + i] = 1;
    return r;
  }
  SLENDER_HD void set_zero() {
    for (int i = 0; i < R * C; ++i)
      a[i] = 0;
  }
  /// add the M x K block b at (i, j), scaled by s
  template <int M, int K>
  SLENDER_HD void add_block(int i, int j, const Mat<M, K>& b, Real s = 1) {
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < K; ++c)
        a[(i + r) * C + j + c] += s * b.a[r * K + c];
  }
  template <int M, int K>
  SLENDER_HD Mat<M, K> block(int i, int j) const {
    Mat<M, K> b;
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < K; ++c)
        b.a[r * K + c] = a[(i + r) * C + j + c];
    return b;
  }
  SLENDER_HD Mat<C, R> transpose() const {
    Mat<C, R> t;
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        t.a[c * R + r] = a[r * C + c];
    return t;
  }
  SLENDER_HD Mat& operator+=(const Mat& b) {
    for (int i = 0; i < R * C; ++i)
      a[i] += b.a[i];
    return *this;
  }
  SLENDER_HD Mat& operator-=(const Mat& b) {
    for (int i = 0; i < R * C; ++i)
      a[i] -= b.a[i];
    return *this;
  }
  SLENDER_HD Mat& operator*=(Real s) {
    for (int i = 0; i < R * C; ++i)
      a[i] *= s;
    return *this;
  }
};

using Mat3 = Mat<3, 3>;

template <int R, int C>
SLENDER_HD inline Mat<R, C> operator+(Mat<R, C> a, const Mat<R, C>& b) {
  a += b;
  return a;
}
template <int R, int C>
SLENDER_HD inline Mat<R, C> operator-(Mat<R, C> a, const Mat<R, C>& b) {
  a -= b;
  return a;
}
template <int R, int C>
SLENDER_HD inline Mat<R, C> operator*(Real s, Mat<R, C> a) {
  a *= s;
  return a;
}
template <int R, int K, int C>
SLENDER_HD inline Mat<R, C> operator*(const Mat<R, K>& a, const Mat<K, C>& b) {
  Mat<R, C> r = Mat<R, C>::zero();
  for (int i = 0; i < R; ++i)
    for (int k = 0; k < K; ++k) {
      const Real aik = a.a[i * K + k];
      for (int j = 0; j < C; ++j)
        r.a[i * C + j] += aik * b.a[k * C + j];
    }
  return r;
}
template <int R, int C>
SLENDER_HD inline Vec<R> operator*(const Mat<R, C>& a, const Vec<C>& x) {
  Vec<R> r;
  for (int i = 0; i < R; ++i) {
    Real s = 0;
    for (int j = 0; j < C; ++j)
      s += a.a[i * C + j] * x.v[j];
    r.v[i] = s;
  }
  return r;
}
/// a^T x
template <int R, int C>
SLENDER_HD inline Vec<C> mul_transpose(const Mat<R, C>& a, const Vec<R>& x) {
  Vec<C> r = Vec<C>::zero();
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j)
      r.v[j] += a.a[i * C + j] * x.v[i];
  return r;
}
/// a b^T
template <int R, int C>
SLENDER_HD inline Mat<R, C> outer(const Vec<R>& a, const Vec<C>& b) {
  Mat<R, C> m;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j)
      m.a[i * C + j] = a.v[i] * b.v[j];
  return m;
}
/// H += s (a b^T + b a^T)
template <int N>
SLENDER_HD inline void add_sym_outer(Mat<N, N>& H, const Vec<N>& a, const Vec<N>& b, Real s) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      H.a[i * N + j] += s * (a.v[i] * b.v[j] + b.v[i] * a.v[j]);
}
/// H += s a a^T
template <int N>
SLENDER_HD inline void add_outer(Mat<N, N>& H, const Vec<N>& a, Real s) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      H.a[i * N + j] += s * a.v[i] * a.v[j];
}
/// the cross-product matrix [a]x, with [a]x b = a x b
SLENDER_HD inline Mat3 skew(const Vec3& a) {
  return Mat3{{0, -a.v[2], a.v[1], a.v[2], 0, -a.v[0], -a.v[1], a.v[0], 0}};
}
/// M(i, j) = entry(i, j) for every entry, row by row, in loops kept rolled on the device
/// (SLENDER_ROLL_ON_DEVICE): a large stencil's matrix made entry by entry from parts in local
/// memory
template <int R, int C, class F>
SLENDER_HD SLENDER_ENTRY_INLINE void fill_by_entry(Mat<R, C>& M, const F& entry) {
  SLENDER_ROLL_ON_DEVICE
  for (int i = 0; i < R; ++i) {
    SLENDER_ROLL_ON_DEVICE
    for (int j = 0; j < C; ++j)
      M(i, j) = entry(i, j);
  }
}
/// entry (r, c) of [a]x, a given by its three values (skew's entry, for stencils that make
/// their matrices entry by entry)
SLENDER_HD SLENDER_ENTRY_INLINE Real skew_entry(const Real* a, int r, int c) {
  if (r == c) return 0;
  const int k = 3 - r - c;
  return (c - r + 3) % 3 == 1 ? -a[k] : a[k];
}

}  // namespace slender
