// The device stepper (engine/stepper.h) on a host executor: OpenMP loops over the shared
// functors, reductions in index order, the CPU backend's sparse solvers in the place of
// cuSOLVER, the contact pipeline's host executor. It runs the CUDA backend's step logic (plans,
// pools, contact on the executor, the device PCG, prescribed motion, parameters) where no GPU
// exists, so that CI tests that code against the CPU backend; it is not a backend of its own.
// Also here: the maker a Simulator with BackendKind::kCuda calls (make_device_stepper).

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "contact/host_exec.h"
#include "model/model_internal.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/stepper.h"

namespace slender {

namespace {

/// the CPU backend's direct solver behind DeviceSparseSolver's interface
class HostDirectSolver {
 public:
  HostDirectSolver(int n,
                   const std::vector<int>& row_ptr,
                   const std::vector<int>& col,
                   bool symmetric) {
    AssemblyPlan pattern;
    pattern.nfree = n;
    pattern.row_ptr = row_ptr;
    pattern.col = col;
    nnz_ = pattern.nnz();
    // kDense: the sparse direct kind (CHOLMOD or LDLT when symmetric, LU otherwise)
    solver_ = std::make_unique<cpu::LinearSolver>(pattern, LinearSolverKind::kDense, symmetric);
  }
  bool factorize(const Real* val) {
    std::copy(val, val + nnz_, solver_->values());
    return solver_->factorize();
  }
  bool solve(const Real* b, Real* x) { return solver_->solve(b, x); }
  bool used_fallback() const { return solver_->used_fallback(); }

 private:
  int nnz_ = 0;
  std::unique_ptr<cpu::LinearSolver> solver_;
};

struct HostStepExec {
  template <class T>
  using Buffer = HostBuffer<T>;
  using ContactExec = contact::HostContactExec;
  using DirectSolver = HostDirectSolver;
  struct ModelData {
    explicit ModelData(const Model& m) : v(host_view(m)) {}
    const ModelView& view() const { return v; }
    ModelView v;
  };
  static constexpr const char* kCholeskyName = "host-stepper-chol";
  static constexpr const char* kQrName = "host-stepper-lu";
  static constexpr const char* kPcgName = "host-stepper-pcg";
  static constexpr const char* kBicgName = "host-stepper-bicgstab";

  template <class F>
  static void for_each(long n, const F& f) {
    parallel_for_host(n, f, kParallelGrainMedium);
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
