#pragma once

// Red4: three sums and a maximum, the value type of the reductions that drive Newton's method
// (norms, potentials, line-search slopes, step sizes) on the host and the device.

#include "slender/core/types.h"

namespace slender {

/// Three sums and a maximum (of non-negative values).
struct Red4 {
  Real s0, s1, s2, m0;
};

struct Red4Combine {
  SLENDER_HD Red4 operator()(const Red4& a, const Red4& b) const {
    return Red4{a.s0 + b.s0, a.s1 + b.s1, a.s2 + b.s2, a.m0 > b.m0 ? a.m0 : b.m0};
  }
};

/// f.map(i), then f(i): the one pass of a map_reduce4 (engine/executor.h) on the device, where
/// the reduction's first pass visits each index once
template <class F>
struct MapThenValue {
  F f;
  SLENDER_HD Red4 operator()(long i) const {
    f.map(i);
    return f(i);
  }
};

}  // namespace slender
