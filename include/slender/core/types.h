#pragma once

#include "slender/core/small.h"

namespace slender {

constexpr Real kTinyLength = 1e-14;  // [m] below this an edge has no direction

/// What a stencil evaluation is asked to compute (bits).
enum Want : unsigned { kEnergy = 0u, kGrad = 1u, kHess = 2u, kGradHess = 3u };

/// Bits a stencil evaluation reports back.
enum EvalFlag : unsigned { kDegenerate = 1u };

/// Result of one stencil evaluation with N local DOFs.
template <int N>
struct LocalEval {
  Real E;          ///< energy [J]
  Vec<N> g;        ///< dE/dx_loc
  Mat<N, N> H;     ///< d2E/dx_loc2, symmetric
  unsigned flags;  ///< EvalFlag bits
};

}  // namespace slender
