// The CUDA module's entry point: the table that host/backend/cuda_loader.cpp looks up by name
// after loading libslender_cuda.so (include/slender/engine/cuda_module.h).

#include "slender/engine/cuda_module.h"

namespace slender {

// the module's implementations (device_info.cu, cuda_engine.cu)
int cuda_module_device_count();
int cuda_module_device_of(const void* p);
void cuda_module_device_memory(std::size_t* free_bytes, std::size_t* total_bytes);
std::unique_ptr<SimulatorEngine> cuda_module_make_simulator_engine(
    std::shared_ptr<const Model> model, const IntegratorSpec& spec, LinearSolverKind solver);
std::unique_ptr<BatchedSimulatorEngine> cuda_module_make_batched_engine(
    std::shared_ptr<const Model> model,
    int nenv,
    const IntegratorSpec& spec,
    const State& initial,
    LinearSolverKind solver);
std::unique_ptr<RolloutAdjointEngine> cuda_module_make_rollout_adjoint(
    std::shared_ptr<const Model> model, const IntegratorSpec& spec, const RolloutOptions& options);

}  // namespace slender

extern "C" __attribute__((visibility("default"))) const slender::CudaModule* slender_cuda_module() {
  static const slender::CudaModule table{slender::kCudaModuleVersion,
                                         slender::cuda_module_layout(),
                                         &slender::cuda_module_device_count,
                                         &slender::cuda_module_device_of,
                                         &slender::cuda_module_make_simulator_engine,
                                         &slender::cuda_module_make_batched_engine,
                                         &slender::cuda_module_device_memory,
                                         &slender::cuda_module_make_rollout_adjoint};
  return &table;
}
