// The CUDA backend's Newton step: include/slender/engine/stepper.h over the CUDA executor
// (cuda_executor.cuh). CI runs the same stepper code on the host executor
// (host/backend/host_stepper.cpp).

#include <memory>

#include "cuda_executor.cuh"
#include "slender/backend.h"
#include "slender/engine/stepper.h"

namespace slender {

static_assert(stepper::kReducePartials >= kReduceBlocks, "reduction workspace too small");

std::unique_ptr<DeviceStepper> cuda_module_make_stepper(std::shared_ptr<const Model> model,
                                                        const IntegratorSpec& spec,
                                                        LinearSolverKind solver) {
  return std::make_unique<stepper::StepperOn<CudaExecutor>>(std::move(model), spec, solver);
}

}  // namespace slender
