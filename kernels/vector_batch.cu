// The vectorized batch engine on the GPU: include/slender/engine/batch_newton.h run by the CUDA
// executor (device buffers, one thread per item, per-environment reductions with one block per
// environment in a fixed order, so that two runs give the same bits).

#include <cub/block/block_reduce.cuh>

#include "device_buffer.cuh"
#include "device_model.h"
#include "launch.cuh"
#include "slender/backend.h"
#include "slender/engine/batch_engine.h"
#include "slender/engine/device_stepper.h"

namespace slender {

namespace {

constexpr int kEnvReduceThreads = 128;

template <class F>
__global__ void env_reduce_kernel(long len, F f, Red4* out) {
  const long e = blockIdx.x;
  Red4 acc{0, 0, 0, 0};
  const Red4Combine op;
  for (long i = threadIdx.x; i < len; i += blockDim.x)
    acc = op(acc, f(e, i));
  using BR = cub::BlockReduce<Red4, kEnvReduceThreads>;
  __shared__ typename BR::TempStorage tmp;
  const Red4 b = BR(tmp).Reduce(acc, op);
  if (threadIdx.x == 0) out[e] = b;
}

// a column-stepped per-environment algorithm (vec::BandSolve's or vec::DenseSolve's begin /
// column phases / finish) on a warp per environment: every lane takes its share of each phase,
// __syncwarp after each
constexpr int kWarp = 32;
constexpr int kColumnsBlock = 128;  // four environments per block

template <class F>
__global__ void env_columns_kernel(int nenv, F f) {
  const int lane = int(threadIdx.x) % kWarp;
  const long e = (long(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  if (e >= nenv || !f.wanted(e)) return;  // the whole warp alike
  const Real floor = f.begin(e);          // every lane reads the diagonal ...
  __syncwarp();                           // ... before column 0's elimination changes it
  const int n = f.columns(), phases = f.phases();
  for (int k = 0; k < n; ++k)
    for (int ph = 0; ph < phases; ++ph) {
      // every lane decides on the same pivot (the same values, read after a barrier); the vote
      // keeps the warp together should a future column() ever differ between lanes
      if (!__all_sync(0xffffffffu, f.column(e, k, ph, floor, lane, kWarp))) {
        if (lane == 0) f.fail(e);
        return;
      }
      __syncwarp();
    }
  if (lane == 0) f.finish(e);
}

struct CudaExec {
  // band and dense matrices interleaved across environments: coalesced loads, one environment
  // per thread
  static constexpr bool kInterleaved = true;
  using ModelArrays = DeviceModel;  // every array of the model's view, uploaded once
  template <class T>
  using Buffer = DeviceBuffer<T>;
  template <class F>
  static void for_each(long n, const F& f) {
    parallel_for_cuda(n, f);
  }
  // one environment per thread (a factorization)
  template <class F>
  static void for_each_env(long n, const F& f) {
    parallel_for_cuda(n, f);
  }
  // one environment per warp, column by column (the banded LU)
  static constexpr int kLanes = kWarp;
  template <class F>
  static void for_each_env_columns(int nenv, const F& f) {
    if (nenv <= 0) return;
    const long threads = long(nenv) * kWarp;
    env_columns_kernel<F>
        <<<unsigned((threads + kColumnsBlock - 1) / kColumnsBlock), kColumnsBlock>>>(nenv, f);
    SLENDER_CUDA_LAUNCHED();
  }
  // per environment into a device buffer (one block per environment, a fixed order)
  template <class F>
  static void env_reduce_to(int nenv, long len, const F& f, Buffer<Red4>& out) {
    out.resize(size_t(nenv));  // sized once: each caller passes its own buffer
    env_reduce_kernel<F><<<unsigned(nenv), kEnvReduceThreads>>>(len, f, out.data());
    SLENDER_CUDA_LAUNCHED();
  }
  template <class F>
  static void env_reduce(int nenv, long len, const F& f, Red4* out, Buffer<Red4>& d_out) {
    env_reduce_to(nenv, len, f, d_out);
    SLENDER_CUDA_CHECK(
        cudaMemcpy(out, d_out.data(), size_t(nenv) * sizeof(Red4), cudaMemcpyDeviceToHost));
  }
  // a host read waits for the device: batched CG checks for running environments every 8
  // iterations (an environment that stopped in between takes no more updates)
  static constexpr int kPcgCheckEvery = 8;
  template <class T>
  static void upload(Buffer<T>& b, const T* h, size_t n) {
    b.upload(h, n);
  }
  template <class T>
  static void upload_at(Buffer<T>& b, size_t off, const T* h, size_t n) {
    if (n > 0)
      SLENDER_CUDA_CHECK(cudaMemcpy(b.data() + off, h, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  template <class T>
  static void download_at(const Buffer<T>& b, size_t off, T* h, size_t n) {
    if (n > 0)
      SLENDER_CUDA_CHECK(cudaMemcpy(h, b.data() + off, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  static void copy(Real* dst, const Real* src, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(Real), cudaMemcpyDeviceToDevice));
  }
  // the state's kernels and copies done: live views (DLPack) read it on any stream
  static void sync() { SLENDER_CUDA_CHECK(cudaDeviceSynchronize()); }
  static int current_device() { return cuda_current_device(); }
  using OnDevice = CudaDeviceScope;
};

}  // namespace

std::unique_ptr<VectorEngine> cuda_module_make_vector_engine(std::shared_ptr<const Model> model,
                                                             int nenv,
                                                             const IntegratorSpec& spec,
                                                             const State& initial,
                                                             LinearSolverKind solver) {
  return std::make_unique<VectorEngineOf<CudaExec>>(std::move(model), nenv, spec, initial, solver);
}

}  // namespace slender
