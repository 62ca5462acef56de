// The CPU backend: the engine (engine/stepper.h) on the host executor: OpenMP loops over the
// shared functors, reductions in index order, the CPU's linear solvers (cpu::LinearSolver: banded
// LU, CHOLMOD, LDLT, sparse LU) on the direct path, the contact pipeline's host executor. The
// same step code runs on the GPU with the CUDA executor (kernels/cuda_stepper.cu), so that CI
// tests the CUDA backend's step logic on the CPU.
// Also here: the maker a Simulator with BackendKind::kCuda calls (make_device_stepper).

#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "contact/host_exec.h"
#include "model/model_internal.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/stepper.h"

namespace slender {

namespace {

/// the CPU's direct solvers behind the executor's DirectSolver interface
class HostDirectSolver {
 public:
  HostDirectSolver(int n,
                   const std::vector<int>& row_ptr,
                   const std::vector<int>& col,
                   bool symmetric,
                   LinearSolverKind kind) {
    AssemblyPlan pattern;
    pattern.nfree = n;
    pattern.row_ptr = row_ptr;
    pattern.col = col;
    nnz_ = pattern.nnz();
    // kPcg's direct path (CG could not go on) and kDense: the sparse direct kind (CHOLMOD or
    // LDLT when symmetric, LU otherwise); a non-symmetric Jacobian needs LU (banded or sparse),
    // between which kAuto chooses
    if (kind == LinearSolverKind::kPcg) kind = LinearSolverKind::kDense;
    if (!symmetric && kind != LinearSolverKind::kAuto && kind != LinearSolverKind::kBanded)
      kind = LinearSolverKind::kSparseLu;
    solver_ = std::make_unique<cpu::LinearSolver>(pattern, kind, symmetric);
  }
  std::string name() const { return solver_->name(); }
  // val: the solver's own values (the stepper assembled there) or a copy's
  bool factorize(const Real* val) {
    if (val != solver_->values()) std::copy(val, val + nnz_, solver_->values());
    return solver_->factorize();
  }
  Real* values() { return solver_->values(); }
  bool solve(const Real* b, Real* x) { return solver_->solve(b, x); }
  bool used_fallback() const { return solver_->used_fallback(); }

 private:
  int nnz_ = 0;
  std::unique_ptr<cpu::LinearSolver> solver_;
};

struct HostStepExec {
  template <class T>
  using Buffer = HostBuffer<T>;
  template <class T>
  using ConstArray = HostView<T>;
  using ContactExec = contact::HostContactExec;
  using DirectSolver = HostDirectSolver;
  struct ModelData {
    explicit ModelData(const Model& m) : v(host_view(m)) {}
    const ModelView& view() const { return v; }
    ModelView v;
  };
  static constexpr const char* kPcgName = "pcg";
  static constexpr const char* kBicgName = "bicgstab";
  // kAuto stays on the direct path at every size (CHOLMOD's fill is affordable on the host)
  static constexpr int kPcgAutoThreshold = INT_MAX;
  static constexpr bool kHostMemory = true;

  static std::unique_ptr<DirectSolver> make_direct_solver(int n,
                                                          const std::vector<int>& row_ptr,
                                                          const std::vector<int>& col,
                                                          bool symmetric,
                                                          LinearSolverKind kind) {
    return std::make_unique<DirectSolver>(n, row_ptr, col, symmetric, kind);
  }
  static std::string direct_name(const DirectSolver* s, bool) { return s ? s->name() : "none"; }
  static Real* solver_values(DirectSolver* s) { return s->values(); }

  template <class F>
  static void for_each(long n, const F& f, long grain = kParallelGrain) {
    parallel_for_host(n, f, grain);
  }
  template <class F>
  static void reduce4(long n, const F& f, Red4*, Red4* out) {
    const Red4Combine op;
    Red4 acc{0, 0, 0, 0};
    for (long i = 0; i < n; ++i)
      acc = op(acc, f(i));
    *out = acc;
  }
  template <class T>
  static void to_host(T* host, const T* src, size_t n) {
    std::copy(src, src + n, host);
  }
  template <class T>
  static void copy(T* dst, const T* src, size_t n) {
    std::copy(src, src + n, dst);
  }
  template <class T>
  static void fill_zero(T* p, size_t n) {
    std::fill(p, p + n, T{});
  }
  static void sync() {}
  static int current_device() { return 0; }
  struct OnDevice {
    explicit OnDevice(int) {}
  };
};

std::atomic<DeviceStepperMaker> g_maker{nullptr};

}  // namespace

std::unique_ptr<DeviceStepper> make_host_stepper(std::shared_ptr<const Model> model,
                                                 const IntegratorSpec& spec,
                                                 LinearSolverKind solver) {
  return std::make_unique<stepper::StepperOn<HostStepExec>>(std::move(model), spec, solver);
}

DeviceStepperMaker set_device_stepper_maker(DeviceStepperMaker maker) {
  return g_maker.exchange(maker);
}

std::unique_ptr<DeviceStepper> make_device_stepper(std::shared_ptr<const Model> model,
                                                   const IntegratorSpec& spec,
                                                   LinearSolverKind solver) {
  const DeviceStepperMaker maker = g_maker.load();
  return maker ? maker(std::move(model), spec, solver)
               : make_cuda_stepper(std::move(model), spec, solver);
}

}  // namespace slender
