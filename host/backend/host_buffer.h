#pragma once

// The host executors' buffer (the vectorized batch's, the contact pipeline's and the host
// stepper's): a std::vector behind the interface of DeviceBuffer (kernels/device_buffer.cuh)
// that the executor-generic code uses.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace slender {

template <class T>
struct HostBuffer {
  std::vector<T> v;
  void resize(std::size_t n) { v.resize(n); }
  T* data() { return v.data(); }
  const T* data() const { return v.data(); }
  std::size_t size() const { return v.size(); }
  void upload(const std::vector<T>& host) { v = host; }
  void upload(const T* host, std::size_t n) { v.assign(host, host + n); }
  void download(std::vector<T>& host) const { host = v; }
  void fill_zero() { std::fill(v.begin(), v.end(), T{}); }
};

}  // namespace slender
