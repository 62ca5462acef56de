// The engine (include/slender/engine/engine.h) on the host executor (backend/host_executor.h),
// instantiated once for both front ends: the CPU backend's Simulator (engine/simulator_engine_on.h)
// and the vectorized batch on the CPU (engine/batched_simulator_engine.h). The same engine runs on
// the GPU with the CUDA executor (kernels/cuda_engine.cu), so that CI tests the CUDA backend's step
// logic on the CPU. Also here: the maker a Simulator with BackendKind::kCuda calls
// (make_simulator_engine_on_cuda).

#include <atomic>
#include <memory>

#include "backend/host_executor.h"
#include "slender/engine/batched_simulator_engine.h"
#include "slender/engine/simulator_engine_on.h"

namespace slender {

// every member of the host executor's engine, compiled here once (the adjoint,
// host_adjoint.cpp, uses these and does not compile its own)
template class Engine<HostExecutor>;

namespace {

std::atomic<SimulatorEngineMaker> g_maker{nullptr};

}  // namespace

std::unique_ptr<SimulatorEngine> make_host_simulator_engine(std::shared_ptr<const Model> model,
                                                            const IntegratorSpec& spec,
                                                            LinearSolverKind solver) {
  return std::make_unique<stepper::SimulatorEngineOn<HostExecutor>>(std::move(model), spec, solver);
}

size_t host_stepper_object_bytes() { return sizeof(stepper::SimulatorEngineOn<HostExecutor>); }

SimulatorEngineMaker set_simulator_engine_maker(SimulatorEngineMaker maker) {
  return g_maker.exchange(maker);
}

std::unique_ptr<SimulatorEngine> make_simulator_engine_on_cuda(std::shared_ptr<const Model> model,
                                                               const IntegratorSpec& spec,
                                                               LinearSolverKind solver) {
  const SimulatorEngineMaker maker = g_maker.load();
  return maker ? maker(std::move(model), spec, solver)
               : make_cuda_simulator_engine(std::move(model), spec, solver);
}

std::unique_ptr<BatchedSimulatorEngine> make_host_batched_engine(std::shared_ptr<const Model> model,
                                                                 int nenv,
                                                                 const IntegratorSpec& spec,
                                                                 const State& initial,
                                                                 LinearSolverKind solver) {
  return std::make_unique<BatchedSimulatorEngineOn<HostExecutor>>(std::move(model), nenv, spec,
                                                                  initial, solver);
}

}  // namespace slender
