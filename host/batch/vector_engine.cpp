// The vectorized batch engine on the CPU: the host executor (std::vector buffers, threaded
// loops, per-environment reductions in index order).

#include "batch/vector_engine.h"

#include <algorithm>

#include "slender/core/parallel_for.h"

namespace slender {

namespace {

struct HostExec {
  // the loops run on the host: the model's own arrays
  struct ModelArrays {
    explicit ModelArrays(const Model& m) : v(host_view(m)) {}
    const ModelView& view() const { return v; }
    ModelView v;
  };
  template <class T>
  struct Buffer {
    std::vector<T> v;
    void resize(size_t n) { v.resize(n); }
    T* data() { return v.data(); }
    const T* data() const { return v.data(); }
    size_t size() const { return v.size(); }
  };
  template <class F>
  static void for_each(long n, const F& f) {
    parallel_for_host(n, f, kParallelGrainHeavy);
  }
  // one heavy item per environment (a factorization): threaded from two environments on
  template <class F>
  static void for_each_env(long n, const F& f) {
    parallel_for_host(n, f, 2);
  }
  // per environment, the items in index order (the CPU Simulator's summation order)
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
};

}  // namespace

std::unique_ptr<VectorEngine> make_host_vector_engine(std::shared_ptr<const Model> model,
                                                      int nenv,
                                                      const IntegratorSpec& spec,
                                                      const State& initial,
                                                      LinearSolverKind solver) {
  return std::make_unique<VectorEngineOf<HostExec>>(std::move(model), nenv, spec, initial, solver);
}

}  // namespace slender
