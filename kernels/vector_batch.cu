// The vectorized batch engine on the GPU: include/slender/engine/batch_newton.h run by the CUDA
// executor (cuda_executor.cuh: one thread per item, per-environment reductions with one block per
// environment in a fixed order, so that two runs give the same bits).

#include "cuda_executor.cuh"
#include "slender/backend.h"
#include "slender/engine/batch_engine.h"
#include "slender/engine/device_stepper.h"

namespace slender {

std::unique_ptr<VectorEngine> cuda_module_make_vector_engine(std::shared_ptr<const Model> model,
                                                             int nenv,
                                                             const IntegratorSpec& spec,
                                                             const State& initial,
                                                             LinearSolverKind solver) {
  return std::make_unique<VectorEngineOf<CudaExecutor>>(std::move(model), nenv, spec, initial,
                                                        solver);
}

}  // namespace slender
