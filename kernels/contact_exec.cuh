#pragma once

// The CUDA executor of ContactPipeline (include/slender/engine/contact_pipeline.h): the passes as
// kernels of the same functors the host executor runs in CI, CUB's scans and radix sorts
// (deterministic), the reductions of kernels/reduce.cuh. Scratch (CUB's temporary storage, the
// sorts' second buffers, the reduction partials) grows and is kept: steady steps allocate nothing.

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <vector>

#include "device_buffer.cuh"
#include "launch.cuh"
#include "reduce.cuh"

namespace slender::contact {

class CudaContactExec {
 public:
  template <class T>
  using Buffer = DeviceBuffer<T>;

  template <class F>
  void for_each(long n, const F& f) const {
    parallel_for_cuda(n, f);
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

  template <class T>
  void upload(Buffer<T>& b, const std::vector<T>& h) const {
    b.upload(h);
  }
  template <class T>
  void download(const T* src, T* host, long n) const {
    if (n > 0)
      SLENDER_CUDA_CHECK(cudaMemcpy(host, src, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost));
  }
  template <class T>
  void fill_zero(T* p, long n) const {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemset(p, 0, size_t(n) * sizeof(T)));
  }

 private:
  // raw byte scratch, 8-byte aligned (cudaMalloc aligns to 256), grown by a quarter
  static void grow(DeviceBuffer<std::uint64_t>& b, size_t bytes) {
    const size_t words = (bytes + 7) / 8;
    if (b.size() < words) b.resize(words + words / 4 + 1);
  }
  DeviceBuffer<std::uint64_t> temp_, key_alt_, val_alt_, partial_;
};

}  // namespace slender::contact
