#pragma once

// A pointer with a stride (host and device): element i at p[i s]. The batched factorizations
// take it for matrices stored interleaved across environments (entry k of environment e at
// k nenv + e), so that the GPU threads of one warp, one environment each, read consecutive
// addresses; with s = 1 it is a plain pointer.

#include "slender/core/hd.h"

namespace slender {

template <class T>
struct Strided {
  T* p;
  long s;
  SLENDER_HD T& operator[](long i) const { return p[i * s]; }
  SLENDER_HD Strided operator+(long k) const { return Strided{p + k * s, s}; }
  SLENDER_HD Strided operator-(long k) const { return Strided{p - k * s, s}; }
};

/// A pointer to a window of a longer array (host and device): element i of the whole array at
/// p[i - first], for the indices the window holds. The single-system band solve on the GPU
/// (kernels/device_solver.cu) passes one for the rows of the band it has staged in shared memory
/// to the functions of core/banded.h, which index the whole band.
template <class T>
struct Window {
  T* p;
  long first;
  SLENDER_HD T& operator[](long i) const { return p[i - first]; }
  SLENDER_HD Window operator+(long k) const { return Window{p, first - k}; }
  SLENDER_HD Window operator-(long k) const { return Window{p, first + k}; }
};

}  // namespace slender
