#pragma once

// The CUDA executor (include/slender/engine/executor.h): kernels of the engines' functors
// (launch.cuh), deterministic CUB reductions (reduce.cuh) and per-environment reductions with one
// block per environment in a fixed order, CUB's scans and radix sorts, cuSOLVER's sparse Cholesky
// or QR (DeviceSparseSolver), device buffers, the model's arrays on the device (DeviceModel).
// Scratch (CUB's temporary storage, the sorts' second buffers, the reduction partials) grows and
// is kept: steady steps allocate nothing. The host executor (host/backend/host_executor.h) runs
// the same engines in CI.

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <memory>
#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "device_model.h"
#include "device_solver.h"
#include "launch.cuh"
#include "reduce.cuh"
#include "slender/core/status.h"
#include "slender/engine/contact_pipeline.h"

namespace slender {

namespace cuda_exec {

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

// one environment's items by a plain index (env_reduce with one environment: the device-wide
// reduction, many blocks, rather than one block for every item)
template <class F>
struct FirstEnvItems {
  F f;
  __device__ Red4 operator()(long i) const { return f(0, i); }
};

// a column-stepped per-environment algorithm (env_major::BandSolve's or env_major::DenseSolve's
// begin / column phases / finish) on a warp per environment: every lane takes its share of each
// phase,
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

// the same on a staging area in shared memory, one environment (a warp) per block: the stage
// phases fill it, the columns run on it, lane 0 finishes from it
template <class F>
__global__ void env_columns_staged_kernel(int nenv, F f) {
  extern __shared__ Real staged[];
  const int lane = int(threadIdx.x);
  const long e = long(blockIdx.x);
  if (e >= nenv || !f.wanted(e)) return;  // the whole block alike
  for (int ph = 0; ph < f.stage_phases(); ++ph) {
    f.stage(e, staged, ph, lane, kWarp);
    __syncwarp();
  }
  const Real floor = f.begin_staged(staged);
  __syncwarp();
  const int n = f.columns(), phases = f.phases();
  for (int k = 0; k < n; ++k)
    for (int ph = 0; ph < phases; ++ph) {
      if (!__all_sync(0xffffffffu, f.column_staged(staged, k, ph, floor, lane, kWarp))) {
        if (lane == 0) f.fail(e);
        return;
      }
      __syncwarp();
    }
  if (lane == 0) f.finish_staged(e, staged);
}

}  // namespace cuda_exec

struct CudaExecutor {
  // ---- memory ----
  template <class T>
  using Buffer = DeviceBuffer<T>;
  template <class T>
  using ConstArray = DeviceBuffer<T>;  // a copy on the device
  using ModelData = DeviceModel;       // every array of the model's view, uploaded once
  static constexpr bool kHostMemory = false;

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
  template <class T>
  static void to_host(T* host, const T* src, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemcpy(host, src, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  template <class T>
  static void copy(T* dst, const T* src, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice));
  }
  template <class T>
  static void fill_zero(T* p, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemset(p, 0, n * sizeof(T)));
  }

  // ---- loops ----
  template <class F>
  static void for_each(long n, const F& f, long /*grain: the host's*/ = 0) {
    parallel_for_cuda(n, f);
  }
  // one environment per thread (a factorization)
  template <class F>
  static void for_each_env(long n, const F& f) {
    parallel_for_cuda(n, f);
  }
  // one environment per warp, column by column (the banded LU)
  static constexpr int kLanes = cuda_exec::kWarp;
  template <class F>
  static void for_each_env_columns(int nenv, const F& f) {
    if (nenv <= 0) return;
    const long threads = long(nenv) * cuda_exec::kWarp;
    cuda_exec::env_columns_kernel<F>
        <<<unsigned((threads + cuda_exec::kColumnsBlock - 1) / cuda_exec::kColumnsBlock),
           cuda_exec::kColumnsBlock>>>(nenv, f);
    SLENDER_CUDA_LAUNCHED();
  }
  // staged (env_major::BandGatherSolve): the stage in shared memory, a warp per block
  static constexpr bool kStagedColumns = true;
  /// the most shared memory one block may have on the current device (opt-in), bytes
  static long staged_capacity() {
    int dev = 0, bytes = 0;
    SLENDER_CUDA_CHECK(cudaGetDevice(&dev));
    SLENDER_CUDA_CHECK(
        cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return bytes;
  }
  template <class F>
  static void for_each_env_columns_staged(int nenv, const F& f) {
    if (nenv <= 0) return;
    const size_t bytes = size_t(f.stage_size()) * sizeof(Real);
    if (bytes > 48 * 1024)  // above the default, the kernel asks for it (on the current device)
      SLENDER_CUDA_CHECK(cudaFuncSetAttribute(cuda_exec::env_columns_staged_kernel<F>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(bytes)));
    cuda_exec::env_columns_staged_kernel<F><<<unsigned(nenv), cuda_exec::kWarp, bytes>>>(nenv, f);
    SLENDER_CUDA_LAUNCHED();
  }
  // the state's kernels and copies done: live views (DLPack) read it on any stream
  static void sync() { SLENDER_CUDA_CHECK(cudaDeviceSynchronize()); }
  static int current_device() { return cuda_current_device(); }
  using OnDevice = CudaDeviceScope;

  // ---- reductions ----
  template <class F>
  static void reduce4(long n, const F& f, Red4* partial, Red4* out) {
    reduce4_async(n, f, partial, out);
  }
  // f.map(i) and f(i) in one pass (f(i) reads only what f.map(i) wrote at i): the same tree,
  // and so the same bits, as reduce4 of f after a for_each of f.map
  template <class F>
  static void map_reduce4(long n, const F& f, Red4* partial, Red4* out) {
    reduce4_async(n, MapThenValue<F>{f}, partial, out);
  }
  // per environment into a device buffer (one block per environment, a fixed order; one
  // environment by the device-wide reduction, its partials after the result)
  template <class F>
  static void env_reduce_to(int nenv, long len, const F& f, Buffer<Red4>& out) {
    if (nenv == 1) {
      out.resize(1 + size_t(kReduceBlocks));  // sized once: each caller passes its own buffer
      reduce4_async(len, cuda_exec::FirstEnvItems<F>{f}, out.data() + 1, out.data());
      return;
    }
    out.resize(size_t(nenv));
    cuda_exec::env_reduce_kernel<F>
        <<<unsigned(nenv), cuda_exec::kEnvReduceThreads>>>(len, f, out.data());
    SLENDER_CUDA_LAUNCHED();
  }
  template <class F>
  static void env_reduce(int nenv, long len, const F& f, Red4* out, Buffer<Red4>& d_out) {
    env_reduce_to(nenv, len, f, d_out);
    SLENDER_CUDA_CHECK(
        cudaMemcpy(out, d_out.data(), size_t(nenv) * sizeof(Red4), cudaMemcpyDeviceToHost));
  }
  long exclusive_scan(const int* in, int* out, long n) {
    if (n <= 0) return 0;
    size_t bytes = 0;
    SLENDER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, int(n)));
    grow(temp_, bytes);
    SLENDER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, in, out, int(n)));
    int last[2] = {0, 0};
    SLENDER_CUDA_CHECK(cudaMemcpy(&last[0], out + n - 1, sizeof(int), cudaMemcpyDeviceToHost));
    SLENDER_CUDA_CHECK(cudaMemcpy(&last[1], in + n - 1, sizeof(int), cudaMemcpyDeviceToHost));
    return long(last[0]) + last[1];
  }

  void sort_keys(std::uint64_t* k, long n) {
    if (n <= 1) return;
    grow(key_alt_, size_t(n) * sizeof(std::uint64_t));
    cub::DoubleBuffer<std::uint64_t> keys(k, reinterpret_cast<std::uint64_t*>(key_alt_.data()));
    size_t bytes = 0;
    SLENDER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, int(n)));
    grow(temp_, bytes);
    SLENDER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.data(), bytes, keys, int(n)));
    if (keys.Current() != k)
      SLENDER_CUDA_CHECK(cudaMemcpy(k, keys.Current(), size_t(n) * sizeof(std::uint64_t),
                                    cudaMemcpyDeviceToDevice));
  }

  void sort_pairs(std::uint64_t* k, int* v, long n) {
    if (n <= 1) return;
    grow(key_alt_, size_t(n) * sizeof(std::uint64_t));
    grow(val_alt_, size_t(n) * sizeof(int));
    cub::DoubleBuffer<std::uint64_t> keys(k, reinterpret_cast<std::uint64_t*>(key_alt_.data()));
    cub::DoubleBuffer<int> vals(v, reinterpret_cast<int*>(val_alt_.data()));
    size_t bytes = 0;
    SLENDER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, vals, int(n)));
    grow(temp_, bytes);
    SLENDER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys, vals, int(n)));
    if (keys.Current() != k)
      SLENDER_CUDA_CHECK(cudaMemcpy(k, keys.Current(), size_t(n) * sizeof(std::uint64_t),
                                    cudaMemcpyDeviceToDevice));
    if (vals.Current() != v)
      SLENDER_CUDA_CHECK(
          cudaMemcpy(v, vals.Current(), size_t(n) * sizeof(int), cudaMemcpyDeviceToDevice));
  }

  template <class T, class F, class Op>
  T reduce(long n, const F& f, T init, const Op& op) {
    grow(partial_, kReduceBlocks * sizeof(T) + sizeof(T));
    T* partial = reinterpret_cast<T*>(partial_.data());
    reduce_async(n, f, init, op, partial, partial + kReduceBlocks);
    T out;
    SLENDER_CUDA_CHECK(
        cudaMemcpy(&out, partial + kReduceBlocks, sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }

  // ---- linear solves and policies ----
  using DirectSolver = DeviceSparseSolver;
  // banded LU on the device where the CPU would take it (kAuto and a narrow band, kBanded),
  // else cuSOLVER's Cholesky (QR when not symmetric)
  static std::unique_ptr<DirectSolver> make_direct_solver(int n,
                                                          const std::vector<int>& row_ptr,
                                                          const std::vector<int>& col,
                                                          bool symmetric,
                                                          LinearSolverKind kind) {
    return std::make_unique<DirectSolver>(n, row_ptr, col, symmetric, kind);
  }
  static std::string direct_name(const DirectSolver* s, bool symmetric) {
    if (s && s->banded()) return s->band_name();
    return symmetric ? "cusolver-chol" : "cusolver-qr";
  }
  // cuSOLVER reads the stepper's own value buffer
  static Real* solver_values(DirectSolver*) { return nullptr; }
  static constexpr const char* kPcgName = "cuda-pcg";
  static constexpr const char* kBicgName = "cuda-bicgstab";
  // above this many free DOFs kAuto takes the iterative path (a first guess: the sparse
  // Cholesky's fill grows faster than the matrix on shell meshes; to be tuned on a GPU)
  static constexpr int kPcgAutoThreshold = 250000;
  // band and dense matrices interleaved across environments: coalesced loads, one environment
  // per thread
  static constexpr bool kInterleaved = true;
  // a host read waits for the device: batched CG checks for running environments every 8
  // iterations (an environment that stopped in between takes no more updates)
  static constexpr int kPcgCheckEvery = 8;

  // ---- contact ----
  using ContactFinder = contact::ContactPipeline<CudaExecutor>;

 private:
  // raw byte scratch, 8-byte aligned (cudaMalloc aligns to 256), grown by a quarter
  static void grow(DeviceBuffer<std::uint64_t>& b, size_t bytes) {
    const size_t words = (bytes + 7) / 8;
    if (b.size() < words) b.resize(words + words / 4 + 1);
  }
  DeviceBuffer<std::uint64_t> temp_, key_alt_, val_alt_, partial_;
};

}  // namespace slender
