#pragma once

// Deterministic reductions on the device over a functor that gives each index's contribution
// (any associative operation; Red4: three sums and a maximum at once). A fixed grid (for a given n)
// accumulates strided partial results per thread, CUB's BlockReduce combines each block, and one
// block combines the blocks' partials: the same order every run, so two runs give bit-identical
// results (no atomics).

#include <cub/block/block_reduce.cuh>

#include "device_buffer.cuh"
#include "launch.cuh"
#include "slender/core/reduce4.h"
#include "slender/core/types.h"

namespace slender {

constexpr int kReduceThreads = 256;
constexpr int kReduceBlocks = 192;  // <= kReduceThreads: pass 2 reads one partial per thread

template <class T, class F, class Op>
__global__ void reduce_pass1_kernel(long n, F f, T init, Op op, T* partial) {
  T acc = init;
  for (long i = long(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += long(gridDim.x) * blockDim.x)
    acc = op(acc, f(i));
  using BR = cub::BlockReduce<T, kReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  const T b = BR(tmp).Reduce(acc, op);
  if (threadIdx.x == 0) partial[blockIdx.x] = b;
}

template <class T, class Op>
__global__ void reduce_pass2_kernel(const T* partial, int np, T init, Op op, T* out) {
  T v = init;
  if (int(threadIdx.x) < np) v = partial[threadIdx.x];
  using BR = cub::BlockReduce<T, kReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  const T b = BR(tmp).Reduce(v, op);
  if (threadIdx.x == 0) *out = b;
}

/// Reduces f(i), i in [0, n), with `op` (associative; `init` its identity) into *d_out (device
/// memory) asynchronously on `stream`; `partial` is workspace of kReduceBlocks entries.
template <class T, class F, class Op>
void reduce_async(
    long n, const F& f, T init, Op op, T* partial, T* d_out, cudaStream_t stream = nullptr) {
  long blocks = (n + kReduceThreads - 1) / kReduceThreads;
  if (blocks > kReduceBlocks) blocks = kReduceBlocks;
  if (blocks < 1) blocks = 1;
  reduce_pass1_kernel<T, F, Op>
      <<<unsigned(blocks), kReduceThreads, 0, stream>>>(n, f, init, op, partial);
  SLENDER_CUDA_LAUNCHED();
  reduce_pass2_kernel<T, Op>
      <<<1, kReduceThreads, 0, stream>>>(partial, int(blocks), init, op, d_out);
  SLENDER_CUDA_LAUNCHED();
}

/// three sums and a maximum of f(i) (Red4) into *d_out, as reduce_async
template <class F>
void reduce4_async(long n, const F& f, Red4* partial, Red4* d_out, cudaStream_t stream = nullptr) {
  reduce_async(n, f, Red4{0, 0, 0, 0}, Red4Combine{}, partial, d_out, stream);
}

}  // namespace slender
