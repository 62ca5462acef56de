#pragma once

// The host executor of the vectorized batch (include/slender/engine/batch_newton.h): std::vector
// buffers, threaded loops, per-environment reductions in index order (the host stepper's summation
// order). A header so that tests can run the engine's GPU layout on the host (a subclass with
// kInterleaved = true).

#include <algorithm>
#include <vector>

#include "backend/host_buffer.h"
#include "model/model_internal.h"
#include "slender/core/parallel_for.h"
#include "slender/core/reduce4.h"
#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

struct HostExec {
  // matrices environment-major: one environment per core, in its own cache lines
  static constexpr bool kInterleaved = false;
  // the loops run on the host: the model's own arrays
  struct ModelArrays {
    explicit ModelArrays(const Model& m) : v(host_view(m)) {}
    const ModelView& view() const { return v; }
    ModelView v;
  };
  template <class T>
  using Buffer = HostBuffer<T>;
  template <class F>
  static void for_each(long n, const F& f) {
    parallel_for_host(n, f, kParallelGrainHeavy);
  }
  // one heavy item per environment (a factorization): threaded from two environments on
  template <class F>
  static void for_each_env(long n, const F& f) {
    parallel_for_host(n, f, 2);
  }
  // per environment, the items in index order (the host stepper's summation order)
  template <class F>
  static void env_reduce(int nenv, long len, const F& f, Red4* out, Buffer<Red4>&) {
    const Red4Combine op;
#pragma omp parallel for schedule(static) if (nenv >= 4)
    for (int e = 0; e < nenv; ++e) {
      Red4 acc{0, 0, 0, 0};
      for (long i = 0; i < len; ++i)
        acc = op(acc, f(e, i));
      out[e] = acc;
    }
  }
  // per environment into a buffer of the executor's (as env_reduce)
  template <class F>
  static void env_reduce_to(int nenv, long len, const F& f, Buffer<Red4>& out) {
    out.v.resize(size_t(nenv));
    env_reduce(nenv, len, f, out.v.data(), out);
  }
  // host reads cost nothing here: batched CG checks for running environments every iteration
  static constexpr int kPcgCheckEvery = 1;
  // one thread per environment's factorization (no groups of cooperating lanes)
  static constexpr int kLanes = 1;
  template <class T>
  static void upload(Buffer<T>& b, const T* h, size_t n) {
    b.v.resize(n);
    std::copy(h, h + n, b.v.begin());
  }
  template <class T>
  static void upload_at(Buffer<T>& b, size_t off, const T* h, size_t n) {
    std::copy(h, h + n, b.v.begin() + off);
  }
  template <class T>
  static void download_at(const Buffer<T>& b, size_t off, T* h, size_t n) {
    std::copy(b.v.begin() + off, b.v.begin() + off + n, h);
  }
  static void copy(Real* dst, const Real* src, size_t n) { std::copy(src, src + n, dst); }
  static void sync() {}
  // no devices to keep apart
  static int current_device() { return 0; }
  struct OnDevice {
    explicit OnDevice(int) {}
  };
};

}  // namespace slender
