// The CUDA backend's Newton step: include/slender/engine/stepper.h over the CUDA executor below.
// Loops are kernels of the shared functors (kernels/launch.cuh), reductions deterministic CUB
// passes (reduce.cuh), the direct solve cuSOLVER's sparse Cholesky or QR (DeviceSparseSolver),
// contact pairs found by the CUDA executor of the contact pipeline (contact_exec.cuh). CI runs the
// same stepper code on the host executor (host/backend/host_stepper.cpp).

#include <memory>
#include <string>
#include <vector>

#include "contact_exec.cuh"
#include "device_buffer.cuh"
#include "device_model.h"
#include "device_solver.h"
#include "launch.cuh"
#include "reduce.cuh"
#include "slender/backend.h"
#include "slender/engine/stepper.h"

namespace slender {

namespace {

static_assert(stepper::kReducePartials >= kReduceBlocks, "reduction workspace too small");

struct CudaStepExec {
  template <class T>
  using Buffer = DeviceBuffer<T>;
  template <class T>
  using ConstArray = DeviceBuffer<T>;  // a copy on the device
  using ContactExec = contact::CudaContactExec;
  using DirectSolver = DeviceSparseSolver;
  using ModelData = DeviceModel;
  static constexpr const char* kPcgName = "cuda-pcg";
  static constexpr const char* kBicgName = "cuda-bicgstab";
  // above this many free DOFs kAuto takes the iterative path (a first guess: the sparse
  // Cholesky's fill grows faster than the matrix on shell meshes; to be tuned on a GPU)
  static constexpr int kPcgAutoThreshold = 250000;
  static constexpr bool kHostMemory = false;

  // cuSOLVER's Cholesky (QR when not symmetric) whatever the kind
  static std::unique_ptr<DirectSolver> make_direct_solver(int n,
                                                          const std::vector<int>& row_ptr,
                                                          const std::vector<int>& col,
                                                          bool symmetric,
                                                          LinearSolverKind) {
    return std::make_unique<DirectSolver>(n, row_ptr, col, symmetric);
  }
  static std::string direct_name(const DirectSolver*, bool symmetric) {
    return symmetric ? "cusolver-chol" : "cusolver-qr";
  }
  // cuSOLVER reads the stepper's own value buffer
  static Real* solver_values(DirectSolver*) { return nullptr; }

  template <class F>
  static void for_each(long n, const F& f, long /*grain: the host's*/ = 0) {
    parallel_for_cuda(n, f);
  }
  template <class F>
  static void reduce4(long n, const F& f, Red4* partial, Red4* out) {
    reduce4_async(n, f, partial, out);
  }
  template <class T>
  static void to_host(T* host, const T* src, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemcpy(host, src, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  template <class T>
  static void copy(T* dst, const T* src, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice));
  }
  template <class T>
  static void fill_zero(T* p, size_t n) {
    if (n > 0) SLENDER_CUDA_CHECK(cudaMemset(p, 0, n * sizeof(T)));
  }
  static void sync() { SLENDER_CUDA_CHECK(cudaDeviceSynchronize()); }
  static int current_device() { return cuda_current_device(); }
  using OnDevice = CudaDeviceScope;
};

}  // namespace

std::unique_ptr<DeviceStepper> cuda_module_make_stepper(std::shared_ptr<const Model> model,
                                                        const IntegratorSpec& spec,
                                                        LinearSolverKind solver) {
  return std::make_unique<stepper::StepperOn<CudaStepExec>>(std::move(model), spec, solver);
}

}  // namespace slender
