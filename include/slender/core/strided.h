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

}  // namespace slender
