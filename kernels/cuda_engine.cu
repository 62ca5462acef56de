// The engine (include/slender/engine/engine.h) over the CUDA executor (cuda_executor.cuh: one
// thread per item, per-environment reductions with one block per environment in a fixed order, so
// that two runs give the same bits), instantiated once for both front ends: the CUDA backend's
// Simulator (engine/stepper.h) and the vectorized batch (engine/batch_engine.h). CI runs the same
// engine on the host executor (host/backend/host_engine.cpp).

#include <memory>

#include "cuda_executor.cuh"
#include "slender/backend.h"
#include "slender/engine/batch_engine.h"
#include "slender/engine/stepper.h"

namespace slender {

static_assert(stepper::kReducePartials >= kReduceBlocks, "reduction workspace too small");

std::unique_ptr<DeviceStepper> cuda_module_make_stepper(std::shared_ptr<const Model> model,
                                                        const IntegratorSpec& spec,
                                                        LinearSolverKind solver) {
  return std::make_unique<stepper::StepperOn<CudaExecutor>>(std::move(model), spec, solver);
}

std::unique_ptr<VectorEngine> cuda_module_make_vector_engine(std::shared_ptr<const Model> model,
                                                             int nenv,
                                                             const IntegratorSpec& spec,
                                                             const State& initial,
                                                             LinearSolverKind solver) {
  return std::make_unique<VectorEngineOf<CudaExecutor>>(std::move(model), nenv, spec, initial,
                                                        solver);
}

}  // namespace slender
