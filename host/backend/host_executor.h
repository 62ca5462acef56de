#pragma once

// The host executor (include/slender/engine/executor.h): OpenMP loops over the engines'
// functors, reductions in index order, the CPU's direct solvers (cpu::LinearSolver: banded LU,
// CHOLMOD, LDLT, sparse LU), std::vector buffers, views of the host's read-only arrays. It runs
// the CPU backend, and in CI every engine the GPU runs.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/executor_counts.h"
#include "backend/host_buffer.h"
#include "model/model_internal.h"
#include "slender/core/parallel_for.h"
#include "slender/core/reduce4.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/engine/linear_solver.h"

namespace slender {

/// the CPU's direct solvers behind the executor's DirectSolver interface
class HostDirectSolver {
 public:
  HostDirectSolver(int n,
                   const std::vector<int>& row_ptr,
                   const std::vector<int>& col,
                   bool symmetric,
                   LinearSolverKind kind) {
    nnz_ = int(col.size());
    solver_ = std::make_unique<cpu::LinearSolver>(
        n, row_ptr, col, cpu::direct_solver_kind(kind, symmetric), symmetric);
  }
  std::string name() const { return solver_->name(); }
  // val: the solver's own values (the stepper assembled there) or a copy's
  bool factorize(const Real* val) {
    counts::add(counts::direct_calls);
    if (val != solver_->values()) std::copy(val, val + nnz_, solver_->values());
    if (deferred_ && solver_->banded()) {  // (the pivot's test goes with the solve's status)
      status_ = solver_->factorize(/*band_only=*/true) ? 1 : 2;
      return true;
    }
    return solver_->factorize();
  }
  bool solve(const Real* b, Real* x) {
    if (deferred_ && solver_->banded() && status_ == 2) return solve_after_pivot(b, x);
    counts::add(counts::direct_calls);
    return solver_->solve(b, x);
  }
  // The device band's order (DeviceSparseSolver), where set_deferred asked for it: the band's
  // solve launched and its status left where the caller reads it with the direction's slope (1
  // solved, 0 a result not finite, 2 no solve: a pivot too small, solve_after_pivot's case);
  // status null where the band is not the solve (then as solve())
  void set_deferred(bool on) { deferred_ = on; }
  bool solve_deferred(const Real* b, Real* x, const int*& status) {
    status = nullptr;
    if (!deferred_ || !solver_->banded()) return solve(b, x);
    counts::add(counts::direct_calls);
    status = &status_;
    if (status_ != 2) status_ = solver_->solve(b, x) ? 1 : 0;
    return true;
  }
  // the sparse direct path for the values assembled again after a deferred status of 2
  bool solve_after_pivot(const Real* b, Real* x) {
    counts::add(counts::direct_calls, 2);
    return solver_->factorize_sparse() && solver_->solve(b, x);
  }
  bool used_fallback() const { return solver_->used_fallback(); }
  Real* values() { return solver_->values(); }

 private:
  int nnz_ = 0;
  std::unique_ptr<cpu::LinearSolver> solver_;
  bool deferred_ = false;
  int status_ = 1;  // (the deferred solve's)
};

struct HostExecutor {
  // ---- memory ----
  template <class T>
  using Buffer = HostBuffer<T>;
  template <class T>
  using ConstArray = HostView<T>;
  struct ModelData {
    explicit ModelData(const Model& m) : v(host_view(m)) {}
    const ModelView& view() const { return v; }
    ModelView v;
  };
  static constexpr bool kHostMemory = true;

  template <class T>
  static void upload(Buffer<T>& b, const T* h, size_t n) {
    b.upload(h, n);
  }
  template <class T>
  static void upload_at(Buffer<T>& b, size_t off, const T* h, size_t n) {
    if (n > 0) counts::add(counts::uploads);
    std::copy(h, h + n, b.v.begin() + off);
  }
  template <class T>
  static void download_at(const Buffer<T>& b, size_t off, T* h, size_t n) {
    if (n > 0) counts::add(counts::host_reads);
    std::copy(b.v.begin() + off, b.v.begin() + off + n, h);
  }
  template <class T>
  static void to_host(T* host, const T* src, size_t n) {
    if (n > 0) counts::add(counts::host_reads);
    std::copy(src, src + n, host);
  }
  template <class T>
  static void copy(T* dst, const T* src, size_t n) {
    if (n > 0) counts::add(counts::launches);
    std::copy(src, src + n, dst);
  }
  template <class T>
  static void fill_zero(T* p, size_t n) {
    if (n > 0) counts::add(counts::launches);
    std::fill(p, p + n, T{});
  }

  // ---- loops ----
  template <class F>
  static void for_each(long n, const F& f, long grain = kParallelGrain) {
    if (n > 0) counts::add(counts::launches);
    parallel_for_host(n, f, grain);
  }
  // one heavy item per environment (a factorization): one thread per environment
  template <class F>
  static void for_each_env(long n, const F& f) {
    if (n > 0) counts::add(counts::launches);
    parallel_for_host(n, f, 1);
  }
  // one thread per environment's factorization (no groups of cooperating lanes)
  static constexpr int kLanes = 1;
  static constexpr bool kStagedColumns = false;  // (no lanes: nothing to stage for)
  static void sync() { counts::add(counts::syncs); }
  static int current_device() { return 0; }
  struct OnDevice {
    explicit OnDevice(int) {}
  };

  // ---- reductions ----
  template <class F>
  static void reduce4(long n, const F& f, Red4*, Red4* out) {
    counts::add(counts::launches, 2);  // (the device's two passes)
    const Red4Combine op;
    Red4 acc{0, 0, 0, 0};
    for (long i = 0; i < n; ++i)
      acc = op(acc, f(i));
    *out = acc;
  }
  // f.map(i) for every i (in parallel), then reduce4 of f: counted as the device's one fused
  // pass (reduce4's two launches)
  template <class F>
  static void map_reduce4(long n, const F& f, Red4* partial, Red4* out) {
    parallel_for_host(
        n, [&f](long i) { f.map(i); }, kParallelGrain);
    reduce4(n, f, partial, out);
  }
  // per environment, the items in index order, read by the host (the CUDA executor's
  // env_reduce_to and a copy)
  template <class F>
  static void env_reduce(int nenv, long len, const F& f, Red4* out, Buffer<Red4>&) {
    reduce_envs(nenv, len, f, out);
    counts::add(counts::host_reads);
  }
  // the same left in a buffer (on the device, for the device's next kernels)
  template <class F>
  static void env_reduce_to(int nenv, long len, const F& f, Buffer<Red4>& out) {
    out.v.resize(size_t(nenv));
    reduce_envs(nenv, len, f, out.v.data());
  }
  template <class T, class F, class Op>
  T reduce(long n, const F& f, T init, const Op& op) const {
    counts::add(counts::launches, 2);
    counts::add(counts::host_reads);
    T acc = init;
    for (long i = 0; i < n; ++i)
      acc = op(acc, f(i));
    return acc;
  }
  long exclusive_scan(const int* in, int* out, long n) const {
    if (n <= 0) return 0;
    counts::add(counts::launches, 2);    // (CUB's scan: its initialisation and the scan)
    counts::add(counts::host_reads, 2);  // (the last sum and the last input)
    long s = 0;
    for (long i = 0; i < n; ++i) {
      out[i] = int(s);
      s += in[i];
    }
    return s;
  }
  void sort_keys(std::uint64_t* k, long n) const {
    if (n > 1) counts::add(counts::sorts);
    std::sort(k, k + n);
  }
  void sort_pairs(std::uint64_t* k, int* v, long n) {
    if (n > 1) counts::add(counts::sorts);
    pairs_.resize(size_t(n));
    for (long i = 0; i < n; ++i)
      pairs_[size_t(i)] = {k[i], v[i]};
    std::stable_sort(pairs_.begin(), pairs_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (long i = 0; i < n; ++i)
      k[i] = pairs_[size_t(i)].first, v[i] = pairs_[size_t(i)].second;
  }

  // ---- linear solves and policies ----
  using DirectSolver = HostDirectSolver;
  static std::unique_ptr<DirectSolver> make_direct_solver(int n,
                                                          const std::vector<int>& row_ptr,
                                                          const std::vector<int>& col,
                                                          bool symmetric,
                                                          LinearSolverKind kind) {
    return std::make_unique<DirectSolver>(n, row_ptr, col, symmetric, kind);
  }
  static std::string direct_name(const DirectSolver* s, bool) { return s ? s->name() : "none"; }
  static Real* solver_values(DirectSolver* s) { return s->values(); }
  static constexpr const char* kPcgName = "pcg";
  static constexpr const char* kBicgName = "bicgstab";
  // kAuto stays on the direct path at every size (CHOLMOD's fill is affordable on the host)
  static constexpr int kPcgAutoThreshold = INT_MAX;
  // matrices environment-major: one environment per core, in its own cache lines
  static constexpr bool kInterleaved = false;
  // host reads cost nothing here: batched CG checks for running environments every iteration
  static constexpr int kPcgCheckEvery = 1;

  // ---- contact ----
  // the one pair finder, as on the device
  using ContactFinder = contact::ContactPipeline<HostExecutor>;

 protected:
  // env_reduce's and env_reduce_to's work: counted as the CUDA executor's one kernel, or with one
  // environment its device-wide reduction's two passes
  template <class F>
  static void reduce_envs(int nenv, long len, const F& f, Red4* out) {
    counts::add(counts::launches, nenv == 1 ? 2 : 1);
    const Red4Combine op;
    auto one = [&](int e) {
      Red4 acc{0, 0, 0, 0};
      for (long i = 0; i < len; ++i)
        acc = op(acc, f(e, i));
      out[e] = acc;
    };
    if (nenv < 4) {  // (no parallel region for a few)
      for (int e = 0; e < nenv; ++e)
        one(e);
      return;
    }
    // one thread per kParallelGrainMedium items
    parallel_for_host(nenv, one, std::max(1L, kParallelGrainMedium / std::max(1L, len)));
  }

  std::vector<std::pair<std::uint64_t, int>> pairs_;  // sort_pairs' scratch
};

}  // namespace slender
