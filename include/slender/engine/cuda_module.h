#pragma once

// The seam between Slender and its CUDA backend, which is a separate shared library
// (libslender_cuda.so, built from kernels/) that host/backend/cuda_loader.cpp loads on the first
// request for CUDA: a CPU run never maps a CUDA library. The module exports one C function,
// slender_cuda_module(), which returns this table; the loader checks its version and layout
// stamp, then forwards cuda_device_count(), make_cuda_simulator_engine() and the rest to it.

#include <cstddef>
#include <initializer_list>
#include <memory>

#include "slender/core/status.h"
#include "slender/engine/adjoint_engine.h"
#include "slender/engine/batched_simulator_engine.h"
#include "slender/engine/simulator_engine.h"
#include "slender/model.h"

namespace slender {

/// bumped whenever the table or a type it passes changes
constexpr int kCudaModuleVersion = 3;

/// a stamp of the types the module and the library exchange: a module built against other
/// headers is refused rather than trusted
constexpr unsigned long cuda_module_layout() {
  unsigned long h = 0;
  for (unsigned long s :
       {sizeof(Model), sizeof(State), sizeof(IntegratorSpec), sizeof(RolloutOptions),
        sizeof(RolloutActions), sizeof(RolloutParams), sizeof(RolloutGradient)})
    h = h * 131ul + s;
  return h;
}

struct CudaModule {
  int version;
  unsigned long layout;
  int (*device_count)();
  int (*device_of)(const void* p);
  std::unique_ptr<SimulatorEngine> (*make_simulator_engine)(std::shared_ptr<const Model> model,
                                                            const IntegratorSpec& spec,
                                                            LinearSolverKind solver);
  std::unique_ptr<BatchedSimulatorEngine> (*make_batched_engine)(std::shared_ptr<const Model> model,
                                                                 int nenv,
                                                                 const IntegratorSpec& spec,
                                                                 const State& initial,
                                                                 LinearSolverKind solver);
  /// the free and total memory of the current device [bytes] (cudaMemGetInfo)
  void (*device_memory)(std::size_t* free_bytes, std::size_t* total_bytes);
  /// the adjoint of a rollout over the CUDA executor (engine/adjoint.h)
  std::unique_ptr<RolloutAdjointEngine> (*make_rollout_adjoint)(std::shared_ptr<const Model> model,
                                                                const IntegratorSpec& spec,
                                                                const RolloutOptions& options);
};

/// the module's entry point (extern "C", looked up by name)
using CudaModuleEntry = const CudaModule* (*)();
constexpr const char* kCudaModuleEntryName = "slender_cuda_module";
constexpr const char* kCudaModuleFileName = "libslender_cuda.so";

}  // namespace slender
