#pragma once

// An owning device array (cudaMalloc / cudaFree) with host transfers. Like a std::vector it keeps
// its allocation when it shrinks (to any size but 0, which frees it), and reserve() makes room
// ahead, so that a size that changes from step to step (contact pairs coming and going) costs no
// cudaMalloc and no cudaFree, which waits for the device.

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
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) {
    o.p_ = nullptr, o.n_ = 0, o.cap_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_, n_ = o.n_, cap_ = o.cap_;
      o.p_ = nullptr, o.n_ = 0, o.cap_ = 0;
    }
    return *this;
  }

  /// n elements, contents undefined (kept when n is unchanged); a new allocation only beyond
  /// the capacity; none (a null data()) at 0
  void resize(size_t n) {
    if (n == 0) {
      release();
      return;
    }
    if (n <= cap_) {
      n_ = n;
      return;
    }
    allocate(n);
    n_ = n;
  }
  /// room for n elements without a new allocation; the size stays, the contents are undefined
  /// where it allocates
  void reserve(size_t n) {
    if (n <= cap_) return;
    const size_t keep = n_;
    allocate(n);
    n_ = keep;
  }
  size_t capacity() const { return cap_; }
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
  // cap_ = n elements, contents undefined
  void allocate(size_t n) {
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
    cap_ = n;
  }
  void release() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
    cap_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace slender
