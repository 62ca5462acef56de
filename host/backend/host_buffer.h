#pragma once

// The host executors' buffer (the vectorized batch's, the contact pipeline's and the host
// stepper's): a std::vector behind the interface of DeviceBuffer (kernels/device_buffer.cuh)
// that the executor-generic code uses.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/executor_counts.h"

namespace slender {

template <class T>
struct HostBuffer {
  std::vector<T> v;
  /// as DeviceBuffer's: a new size keeps nothing and leaves the contents undefined, here
  /// poisoned (NaN, or bytes 0xA5) so that CI catches executor-generic code that reads a buffer
  /// before writing it, which on a GPU would read garbage
  void resize(std::size_t n) {
    if (n == v.size()) return;
    if (n > v.capacity()) counts::add(counts::allocations);
    v.assign(n, poison());
  }
  /// room for n elements, so that resizing or uploading up to n allocates nothing (as
  /// DeviceBuffer's); the size and contents stay
  void reserve(std::size_t n) {
    if (n <= v.capacity()) return;
    counts::add(counts::allocations);
    v.reserve(n);
  }
  std::size_t capacity() const { return v.capacity(); }
  T* data() { return v.data(); }
  const T* data() const { return v.data(); }
  std::size_t size() const { return v.size(); }
  // (counted as the CUDA executor's copies and fill: backend/executor_counts.h)
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void upload(const T* host, std::size_t n) {
    counts::add(counts::uploads);
    if (n > v.capacity()) counts::add(counts::allocations);
    v.assign(host, host + n);
  }
  void download(std::vector<T>& host) const {
    counts::add(counts::host_reads);
    host = v;
  }
  void fill_zero() {
    counts::add(counts::launches);
    std::fill(v.begin(), v.end(), T{});
  }

 private:
  static T poison() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::quiet_NaN();
    } else {
      static_assert(std::is_trivially_copyable_v<T>, "device buffers hold plain data");
      unsigned char bytes[sizeof(T)];
      std::memset(bytes, 0xA5, sizeof(T));
      T t;
      std::memcpy(&t, bytes, sizeof(T));
      return t;
    }
  }
};

/// An array the host executors only read, held by reference: the view of a host vector that
/// outlives its use (the model's, a plan the reader keeps shared), where the CUDA executor keeps
/// a DeviceBuffer copy (upload copies there, points here).
template <class T>
struct HostView {
  const T* p = nullptr;
  std::size_t n = 0;
  void upload(const std::vector<T>& host) {
    counts::add(counts::uploads);  // (the CUDA executor copies)
    p = host.data();
    n = host.size();
  }
  const T* data() const { return p; }
  std::size_t size() const { return n; }
  void reserve(std::size_t) {}  // (a view holds no memory of its own)
  std::size_t capacity() const { return n; }
};

}  // namespace slender
