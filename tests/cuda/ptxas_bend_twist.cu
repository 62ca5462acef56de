// The bend-twist evaluation kernel alone, for ptxas's report (tests/cuda/ptxas_bend_twist.sh):
// the same template and functor as kernels/cuda_engine.cu launches, compiled at full
// optimisation in a few seconds where the whole module takes minutes.

#include "launch.cuh"
#include "slender/stencils/bindings.h"

namespace slender {
template __global__ void for_each_index_kernel<EvalStencils<RodBendTwistBinding>>(
    long, EvalStencils<RodBendTwistBinding>);
}  // namespace slender
