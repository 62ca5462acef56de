// The engine (include/slender/engine/engine.h) over the CUDA executor (cuda_executor.cuh: one
// thread per item, per-environment reductions with one block per environment in a fixed order, so
// that two runs give the same bits), instantiated once for both front ends: the CUDA backend's
// Simulator (engine/simulator_engine_on.h), the vectorized batch
// (engine/batched_simulator_engine.h) and the adjoint of a rollout (engine/adjoint.h). CI runs the
// same engine on the host executor (host/backend/host_engine.cpp).

#include <memory>

#include "cuda_executor.cuh"
#include "slender/backend.h"
#include "slender/engine/adjoint.h"
#include "slender/engine/batched_simulator_engine.h"
#include "slender/engine/simulator_engine_on.h"

namespace slender {

static_assert(stepper::kReducePartials >= kReduceBlocks, "reduction workspace too small");

std::unique_ptr<SimulatorEngine> cuda_module_make_simulator_engine(
    std::shared_ptr<const Model> model, const IntegratorSpec& spec, LinearSolverKind solver) {
  return std::make_unique<stepper::SimulatorEngineOn<CudaExecutor>>(std::move(model), spec, solver);
}

std::unique_ptr<BatchedSimulatorEngine> cuda_module_make_batched_engine(
    std::shared_ptr<const Model> model,
    int nenv,
    const IntegratorSpec& spec,
    const State& initial,
    LinearSolverKind solver) {
  return std::make_unique<BatchedSimulatorEngineOn<CudaExecutor>>(std::move(model), nenv, spec,
                                                                  initial, solver);
}

// the adjoint of a rollout: the engine's steps and linearizations here, its sweep on the host
// (engine/adjoint.h)
std::unique_ptr<RolloutAdjointEngine> cuda_module_make_rollout_adjoint(
    std::shared_ptr<const Model> model, const IntegratorSpec& spec, const RolloutOptions& options) {
  return std::make_unique<RolloutAdjointEngineOn<CudaExecutor>>(std::move(model), spec, options);
}

}  // namespace slender
