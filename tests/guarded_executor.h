#pragma once

// A host executor whose memory the host cannot read (issue 51's and 47's CPU side): the CUDA
// executor's contract checked without a GPU. Guarded<Base> runs Base's loops, reductions and
// solvers (HostExecutor's, or a test's executor with the GPU's choices), with kHostMemory false
// as on the device, on buffers, read-only arrays and a model whose bytes live in one arena of
// pages that are mapped PROT_NONE except while an executor call runs. Code of the engine, its
// front ends or the adjoint that reads or writes X's memory on the host (where on a GPU it
// would read a device pointer) stops with SIGSEGV at that line, under a debugger or in a
// sanitizer's report; the transfers (upload, download, to_host) are the only way in or out.
// The arena is process-wide: one thread at a time may run an executor call (the tests here
// make one engine at a time; the loops' own OpenMP threads run inside the call).

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/host_executor.h"
#include "slender/core/error.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/engine/engine.h"
#include "slender/engine/model_view.h"
#include "slender/engine/simulator_engine.h"

namespace slender {
namespace guarded {

/// the pages behind every guarded allocation: reserved once (64 GiB of address space, no
/// memory), handed out in blocks of 64 bytes times a power of two (the small ones cut from a
/// shared page, so that the pages open() and close() change are few), reused after a free, and
/// accessible only between open() and close()
class Arena {
 public:
  static Arena& get() {
    static Arena a;
    return a;
  }
  void* alloc(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const int c = size_class(bytes);
    if (free_[c].empty()) {
      // a new block of the class's size, or for the classes under a page a page cut into them
      const std::size_t len = std::max(class_bytes(c), page_);
      SLENDER_CHECK(top_ + len <= kReserve, "guarded arena: out of address space");
      char* p = base_ + top_;
      top_ += len;
      // (the span open and close change grows by whole huge pages)
      const std::size_t span = (top_ + kHuge - 1) / kHuge * kHuge;
      if (span > span_) {
        if (depth_ > 0) protect(base_ + span_, span - span_, PROT_READ | PROT_WRITE);
        // (flags of its own, so that the span stays one mapping apart from the reserve's rest:
        // a toggle then neither splits nor merges mappings)
        madvise(base_, span, MADV_DONTDUMP);
        span_ = span;
      }
      for (std::size_t off = len; off >= class_bytes(c); off -= class_bytes(c))
        free_[c].push_back(p + off - class_bytes(c));
    }
    void* p = free_[c].back();
    free_[c].pop_back();
    return p;
  }
  void free(void* p, std::size_t bytes) {
    if (!p) return;
    std::lock_guard<std::mutex> lock(mu_);
    const int c = size_class(bytes);
    free_[c].push_back(p);
  }
  /// the arena's pages readable and writable until the matching close (nested calls count)
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    if (depth_++ == 0 && span_ > 0) protect(base_, span_, PROT_READ | PROT_WRITE);
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--depth_ == 0 && span_ > 0) protect(base_, span_, PROT_NONE);
  }
  bool is_open() const { return depth_ > 0; }
  /// the bytes of address space handed out so far (what open and close change)
  std::size_t high_water() const { return top_; }
  /// whether p points into the arena
  bool holds(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= base_ && c < base_ + kReserve;
  }

 private:
  static constexpr std::size_t kReserve = std::size_t(64) << 30;
  // transparent huge pages where the kernel gives them (madvise): a toggle then changes one
  // entry per 2 MiB, not one per 4 KiB page (with 4 KiB pages the iterative solvers' tests ran
  // 20x slower, nearly all of it in mprotect)
  static constexpr std::size_t kHuge = std::size_t(2) << 20;
  static constexpr int kClasses = 40;
  Arena() {
    page_ = std::size_t(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, kReserve + kHuge, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    SLENDER_CHECK(p != MAP_FAILED, "guarded arena: mmap of the address space failed");
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    base_ = reinterpret_cast<char*>((a + kHuge - 1) / kHuge * kHuge);
    madvise(base_, kReserve, MADV_HUGEPAGE);  // (a hint: without it, only slower)
  }
  int size_class(std::size_t bytes) const {
    int c = 0;
    while (class_bytes(c) < bytes)
      ++c;
    return c;
  }
  // 64 bytes times a power of two (several to a page under a page's size)
  static std::size_t class_bytes(int c) { return std::size_t(64) << c; }
  static void protect(void* p, std::size_t len, int prot) {
    SLENDER_CHECK(mprotect(p, len, prot) == 0, "guarded arena: mprotect failed");
  }

  std::mutex mu_;
  char* base_ = nullptr;
  std::size_t page_ = 4096, top_ = 0, span_ = 0;
  int depth_ = 0;
  std::vector<void*> free_[kClasses];
};

/// the arena open for a scope (an executor call)
struct Open {
  Open() { Arena::get().open(); }
  ~Open() { Arena::get().close(); }
  Open(const Open&) = delete;
  Open& operator=(const Open&) = delete;
};

/// DeviceBuffer's interface on the arena (as HostBuffer's: a new size poisons the contents)
template <class T>
class Buffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold plain data");

 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  ~Buffer() { release(); }

  void resize(std::size_t n) {
    if (n == n_) return;
    grow(n);
    n_ = n;
    Open o;
    const T bad = poison();
    std::fill(p_, p_ + n, bad);
  }
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    std::vector<T> keep(n_);
    download_to(keep.data());
    const std::size_t n0 = n_;
    grow(n);
    Open o;
    std::copy(keep.begin(), keep.end(), p_);
    n_ = n0;
  }
  std::size_t capacity() const { return cap_; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void upload(const T* host, std::size_t n) {
    counts::add(counts::uploads);
    if (n > cap_) grow(n);
    n_ = n;
    Open o;
    std::copy(host, host + n, p_);
  }
  void download(std::vector<T>& host) const {
    counts::add(counts::host_reads);
    host.resize(n_);
    download_to(host.data());
  }
  void fill_zero() {
    counts::add(counts::launches);
    Open o;
    std::fill(p_, p_ + n_, T{});
  }

 private:
  // room for n (the contents not kept)
  void grow(std::size_t n) {
    if (n <= cap_) return;
    counts::add(counts::allocations);
    release();
    p_ = static_cast<T*>(Arena::get().alloc(n * sizeof(T)));
    cap_ = n;
  }
  void release() {
    if (p_) Arena::get().free(p_, cap_ * sizeof(T));
    p_ = nullptr;
    n_ = cap_ = 0;
  }
  void swap(Buffer& o) {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
  }
  void download_to(T* h) const {
    Open o;
    std::copy(p_, p_ + n_, h);
  }
  static T poison() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::quiet_NaN();
    } else {
      unsigned char bytes[sizeof(T)];
      std::memset(bytes, 0xA5, sizeof(T));
      T t;
      std::memcpy(&t, bytes, sizeof(T));
      return t;
    }
  }

  T* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
};

/// a read-only array: a copy in the arena (as the CUDA executor's ConstArray)
template <class T>
struct ConstArray {
  Buffer<T> b;
  void upload(const std::vector<T>& host) { b.upload(host); }
  const T* data() const { return b.data(); }
  std::size_t size() const { return b.size(); }
  void reserve(std::size_t n) { b.reserve(n); }
  std::size_t capacity() const { return b.capacity(); }
};

/// the model's arrays copied into the arena (as DeviceModel's)
class Model {
 public:
  explicit Model(const slender::Model& m) {
    view_ = copied_view(m, [this](const auto& a) { return up(a); });
  }
  const ModelView& view() const { return view_; }

 private:
  struct Holder {
    virtual ~Holder() = default;
  };
  template <class T>
  struct Typed : Holder {
    Buffer<T> b;
  };
  template <class T>
  const T* up(const std::vector<T>& v) {
    if (v.empty()) return nullptr;
    auto h = std::make_unique<Typed<T>>();
    h->b.upload(v);
    const T* p = h->b.data();
    owned_.push_back(std::move(h));
    return p;
  }
  std::vector<std::unique_ptr<Holder>> owned_;
  ModelView view_{};
};

/// the host's direct solvers, reading and writing the arena inside their calls
class DirectSolver : public HostDirectSolver {
 public:
  using HostDirectSolver::HostDirectSolver;
  bool factorize(const Real* val) {
    Open o;
    return HostDirectSolver::factorize(val);
  }
  bool solve(const Real* b, Real* x) {
    Open o;
    return HostDirectSolver::solve(b, x);
  }
  bool solve_deferred(const Real* b, Real* x, const int*& status) {
    Open o;
    return HostDirectSolver::solve_deferred(b, x, status);
  }
  bool solve_after_pivot(const Real* b, Real* x) {
    Open o;
    return HostDirectSolver::solve_after_pivot(b, x);
  }
};

}  // namespace guarded

/// Base's loops and solvers on guarded memory (see the file's opening comment)
template <class Base = HostExecutor>
struct Guarded : Base {
  template <class T>
  using Buffer = guarded::Buffer<T>;
  template <class T>
  using ConstArray = guarded::ConstArray<T>;
  using ModelData = guarded::Model;
  static constexpr bool kHostMemory = false;

  template <class T>
  static void upload(Buffer<T>& b, const T* h, size_t n) {
    b.upload(h, n);
  }
  template <class T>
  static void upload_at(Buffer<T>& b, size_t off, const T* h, size_t n) {
    if (n > 0) counts::add(counts::uploads);
    guarded::Open o;
    std::copy(h, h + n, b.data() + off);
  }
  template <class T>
  static void download_at(const Buffer<T>& b, size_t off, T* h, size_t n) {
    if (n > 0) counts::add(counts::host_reads);
    guarded::Open o;
    std::copy(b.data() + off, b.data() + off + n, h);
  }
  template <class T>
  static void to_host(T* host, const T* src, size_t n) {
    guarded::Open o;
    Base::to_host(host, src, n);
  }
  template <class T>
  static void copy(T* dst, const T* src, size_t n) {
    guarded::Open o;
    Base::copy(dst, src, n);
  }
  template <class T>
  static void fill_zero(T* p, size_t n) {
    guarded::Open o;
    Base::fill_zero(p, n);
  }
  template <class F>
  static void for_each(long n, const F& f, long grain = kParallelGrain) {
    guarded::Open o;
    Base::for_each(n, f, grain);
  }
  template <class F>
  static void for_each_env(long n, const F& f) {
    guarded::Open o;
    Base::for_each_env(n, f);
  }
  template <class F>
  static void for_each_env_columns(int nenv, const F& f) {
    guarded::Open o;
    Base::for_each_env_columns(nenv, f);
  }
  template <class F>
  static void for_each_env_columns_staged(int nenv, const F& f) {
    guarded::Open o;
    Base::for_each_env_columns_staged(nenv, f);
  }
  template <class F>
  static void reduce4(long n, const F& f, Red4* partial, Red4* out) {
    guarded::Open o;
    Base::reduce4(n, f, partial, out);
  }
  template <class F>
  static void map_reduce4(long n, const F& f, Red4* partial, Red4* out) {
    guarded::Open o;
    Base::map_reduce4(n, f, partial, out);
  }
  // per environment in index order (HostExecutor's reduce_envs), into host memory or a buffer
  template <class F>
  static void env_reduce(int nenv, long len, const F& f, Red4* out, Buffer<Red4>&) {
    guarded::Open o;
    Base::reduce_envs(nenv, len, f, out);
    counts::add(counts::host_reads);
  }
  template <class F>
  static void env_reduce_to(int nenv, long len, const F& f, Buffer<Red4>& out) {
    if (out.size() < size_t(nenv)) out.resize(size_t(nenv));
    guarded::Open o;
    Base::reduce_envs(nenv, len, f, out.data());
  }
  template <class T, class F, class Op>
  T reduce(long n, const F& f, T init, const Op& op) const {
    guarded::Open o;
    return Base::reduce(n, f, init, op);
  }
  long exclusive_scan(const int* in, int* out, long n) const {
    guarded::Open o;
    return Base::exclusive_scan(in, out, n);
  }
  void sort_keys(std::uint64_t* k, long n) const {
    guarded::Open o;
    Base::sort_keys(k, n);
  }
  void sort_pairs(std::uint64_t* k, int* v, long n) {
    guarded::Open o;
    Base::sort_pairs(k, v, n);
  }

  using DirectSolver = guarded::DirectSolver;
  static std::unique_ptr<DirectSolver> make_direct_solver(int n,
                                                          const std::vector<int>& row_ptr,
                                                          const std::vector<int>& col,
                                                          bool symmetric,
                                                          LinearSolverKind kind) {
    return std::make_unique<DirectSolver>(n, row_ptr, col, symmetric, kind);
  }
  static std::string direct_name(const DirectSolver* s, bool) { return s ? s->name() : "none"; }
  // (as the CUDA executor's: the solver keeps its own values, assembled into the engine's)
  static Real* solver_values(DirectSolver*) { return nullptr; }

  using ContactFinder = contact::ContactPipeline<Guarded<Base>>;
};

/// The CUDA executor's choices run by the host executor (interleaved band and dense matrices,
/// batched CG's reads every 8 iterations, factorizations on 5 lanes, where the GPU has a warp's
/// 32, run one after the other in reverse, a staging area per environment as the GPU's shared
/// memory) ...
struct GpuChoices : HostExecutor {
  static constexpr bool kInterleaved = true;
  static constexpr int kPcgCheckEvery = 8;
  static constexpr int kLanes = 5;
  static constexpr bool kStagedColumns = true;
  static long staged_capacity() { return 1L << 20; }
  template <class F>
  static void for_each_env_columns(int nenv, const F& f) {
    for (int e = 0; e < nenv; ++e) {
      if (!f.wanted(e)) continue;
      const Real floor = f.begin(e);  // (on the GPU every lane reads it before a barrier)
      bool good = true;
      for (int k = 0; good && k < f.columns(); ++k)
        for (int ph = 0; good && ph < f.phases(); ++ph)
          for (int lane = kLanes - 1; lane >= 0; --lane)
            good = f.column(e, k, ph, floor, lane, kLanes) && good;
      if (good) {
        f.finish(e);
      } else {
        f.fail(e);
      }
    }
  }
  template <class F>
  static void for_each_env_columns_staged(int nenv, const F& f) {
    std::vector<Real> stage;
    for (int e = 0; e < nenv; ++e) {
      if (!f.wanted(e)) continue;
      // what a kernel finds in shared memory: the last environment's leftovers, here NaNs
      stage.assign(size_t(f.stage_size()), std::numeric_limits<Real>::quiet_NaN());
      for (int ph = 0; ph < f.stage_phases(); ++ph)
        for (int lane = kLanes - 1; lane >= 0; --lane)
          f.stage(e, stage.data(), ph, lane, kLanes);
      const Real floor = f.begin_staged(stage.data());
      bool good = true;
      for (int k = 0; good && k < f.columns(); ++k)
        for (int ph = 0; good && ph < f.phases(); ++ph)
          for (int lane = kLanes - 1; lane >= 0; --lane)
            good = f.column_staged(stage.data(), k, ph, floor, lane, kLanes) && good;
      if (good) {
        f.finish_staged(e, stage.data());
      } else {
        f.fail(e);
      }
    }
  }
};

/// ... on guarded memory: the best stand-in for the CUDA executor on a CPU
using GuardedGpuChoices = Guarded<GpuChoices>;

// its engine, compiled once in guarded_engine.cpp (the test library slender_test_guarded)
extern template class Engine<GuardedGpuChoices>;

/// a Simulator's engine on it: set_simulator_engine_maker puts it in the CUDA backend's place
std::unique_ptr<SimulatorEngine> make_guarded_simulator_engine(std::shared_ptr<const Model> model,
                                                               const IntegratorSpec& spec,
                                                               LinearSolverKind solver);

}  // namespace slender
