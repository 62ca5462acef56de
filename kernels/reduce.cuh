#pragma once

// Deterministic reductions on the device: three sums and a maximum at once, over a functor that
// gives each index's contribution. A fixed grid (for a given n) accumulates strided partial
// results per thread, CUB's BlockReduce combines each block, and one block combines the blocks'
// partials: the same order every run, so two runs give bit-identical results (no atomics).

#include <cub/block/block_reduce.cuh>

#include "device_buffer.cuh"
#include "launch.cuh"
#include "slender/core/reduce4.h"
#include "slender/core/types.h"

namespace slender {

constexpr int kReduceThreads = 256;
constexpr int kReduceBlocks = 192;  // <= kReduceThreads: pass 2 reads one partial per thread

template <class F>
__global__ void reduce_pass1_kernel(long n, F f, Red4* partial) {
  Red4 acc{0, 0, 0, 0};
  const Red4Combine op;
  for (long i = long(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += long(gridDim.x) * blockDim.x)
    acc = op(acc, f(i));
  using BR = cub::BlockReduce<Red4, kReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  const Red4 b = BR(tmp).Reduce(acc, op);
  if (threadIdx.x == 0) partial[blockIdx.x] = b;
}

template <int kUnused = 0>
__global__ void reduce_pass2_kernel(const Red4* partial, int np, Red4* out) {
  Red4 v{0, 0, 0, 0};
  if (int(threadIdx.x) < np) v = partial[threadIdx.x];
  using BR = cub::BlockReduce<Red4, kReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  const Red4 b = BR(tmp).Reduce(v, Red4Combine{});
  if (threadIdx.x == 0) *out = b;
}

/// Reduces f(i), i in [0, n), into *d_out (device memory) asynchronously on `stream`;
/// `partial` is workspace of kReduceBlocks entries.
template <class F>
void reduce4_async(long n, const F& f, Red4* partial, Red4* d_out, cudaStream_t stream = nullptr) {
  long blocks = (n + kReduceThreads - 1) / kReduceThreads;
  if (blocks > kReduceBlocks) blocks = kReduceBlocks;
  if (blocks < 1) blocks = 1;
  reduce_pass1_kernel<F><<<unsigned(blocks), kReduceThreads, 0, stream>>>(n, f, partial);
  SLENDER_CUDA_CHECK(cudaGetLastError());
  reduce_pass2_kernel<><<<1, kReduceThreads, 0, stream>>>(partial, int(blocks), d_out);
  SLENDER_CUDA_CHECK(cudaGetLastError());
}

}  // namespace slender
