#pragma once

// The host executor of ContactPipeline (engine/contact_pipeline.h): the passes as OpenMP loops
// (parallel_for_host), sequential scans and reductions, stable sorts. The CPU backend does not
// use it (its ContactPairFinder is faster on a CPU); tests run the GPU's passes with it.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "backend/host_buffer.h"
#include "slender/core/parallel_for.h"

namespace slender::contact {

struct HostContactExec {
  template <class T>
  using Buffer = HostBuffer<T>;
  template <class F>
  void for_each(long n, const F& f) const {
    parallel_for_host(n, f, kParallelGrainMedium);
  }
  long exclusive_scan(const int* in, int* out, long n) const {
    long s = 0;
    for (long i = 0; i < n; ++i) {
      out[i] = int(s);
      s += in[i];
    }
    return s;
  }
  void sort_keys(std::uint64_t* k, long n) const { std::sort(k, k + n); }
  void sort_pairs(std::uint64_t* k, int* v, long n) {
    pairs_.resize(size_t(n));
    for (long i = 0; i < n; ++i)
      pairs_[size_t(i)] = {k[i], v[i]};
    std::stable_sort(pairs_.begin(), pairs_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (long i = 0; i < n; ++i)
      k[i] = pairs_[size_t(i)].first, v[i] = pairs_[size_t(i)].second;
  }
  template <class T, class F, class Op>
  T reduce(long n, const F& f, T init, const Op& op) const {
    T acc = init;
    for (long i = 0; i < n; ++i)
      acc = op(acc, f(i));
    return acc;
  }
  template <class T>
  void upload(Buffer<T>& b, const std::vector<T>& h) const {
    b.v = h;
  }
  template <class T>
  void download(const T* src, T* host, long n) const {
    std::copy(src, src + n, host);
  }
  template <class T>
  void fill_zero(T* p, long n) const {
    std::fill(p, p + n, T(0));
  }

 private:
  std::vector<std::pair<std::uint64_t, int>> pairs_;
};

}  // namespace slender::contact
