#pragma once

// The host executors' buffer (the vectorized batch's and the contact pipeline's): a std::vector
// behind the Buffer interface the executor-generic code uses (resize, data, size).

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
};

}  // namespace slender
