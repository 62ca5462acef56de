// The engine on guarded memory (guarded_executor.h), compiled once for the suites that run it
// (cpu_backend_tests puts it in the CUDA backend's place; physics_tests' batch and adjoint
// tests), with the adjoint over it (engine/adjoint.h's path for an executor whose memory the
// host cannot read): the makers its header declares.

#include <memory>
#include <utility>

#include "guarded_executor.h"
#include "slender/engine/adjoint.h"
#include "slender/engine/batched_simulator_engine.h"
#include "slender/engine/simulator_engine_on.h"

namespace slender {

template class Engine<GuardedGpuChoices>;
template class RolloutAdjointOn<GuardedGpuChoices>;

std::unique_ptr<SimulatorEngine> make_guarded_simulator_engine(std::shared_ptr<const Model> model,
                                                               const IntegratorSpec& spec,
                                                               LinearSolverKind solver) {
  return std::make_unique<stepper::SimulatorEngineOn<GuardedGpuChoices>>(std::move(model), spec,
                                                                         solver);
}

}  // namespace slender
