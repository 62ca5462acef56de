#pragma once

// An owning device array (cudaMalloc / cudaFree) with host transfers.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "launch.cuh"

namespace slender {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { resize(n); }
  explicit DeviceBuffer(const std::vector<T>& host) { upload(host); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_, n_ = o.n_;
      o.p_ = nullptr, o.n_ = 0;
    }
    return *this;
  }

  /// n elements, contents undefined (kept when n is unchanged)
  void resize(size_t n) {
    if (n == n_) return;
    release();
    if (n > 0) {
      const cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T));
      if (e != cudaSuccess) {
        p_ = nullptr, n_ = 0;
        cudaGetLastError();  // an allocation failure is not sticky: clear it for the caller
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        throw Error("CUDA error in cudaMalloc of a device buffer of " + std::to_string(n) +
                    " elements of " + std::to_string(sizeof(T)) + " bytes (" +
                    std::to_string(n * sizeof(T) >> 20) + " MiB; " + std::to_string(free_b >> 20) +
                    " of " + std::to_string(total_b >> 20) +
                    " MiB free): " + cudaGetErrorString(e));
      }
    }
    n_ = n;
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void upload(const T* host, size_t n) {
    resize(n);
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemcpy(p_, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(std::vector<T>& host) const {
    host.resize(n_);
    if (n_ > 0) {
      SLENDER_CUDA_CHECK(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    }
  }
  void fill_zero() {
    if (n_ > 0) SLENDER_CUDA_CHECK(cudaMemset(p_, 0, n_ * sizeof(T)));
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace slender
