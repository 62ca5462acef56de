// The CPU backend: the engine (engine/stepper.h) on the host executor (backend/host_executor.h).
// The same step code runs on the GPU with the CUDA executor (kernels/cuda_stepper.cu), so that CI
// tests the CUDA backend's step logic on the CPU.
// Also here: the maker a Simulator with BackendKind::kCuda calls (make_device_stepper).

#include <atomic>
#include <memory>

#include "backend/host_executor.h"
#include "slender/engine/stepper.h"

namespace slender {

namespace {

std::atomic<DeviceStepperMaker> g_maker{nullptr};

}  // namespace

std::unique_ptr<DeviceStepper> make_host_stepper(std::shared_ptr<const Model> model,
                                                 const IntegratorSpec& spec,
                                                 LinearSolverKind solver) {
  return std::make_unique<stepper::StepperOn<HostExecutor>>(std::move(model), spec, solver);
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
