// Answers for a build without CUDA (Warp's stub pattern): no devices, and a clear error with
// the fix when the CUDA backend is asked for.

#include "backend/device_stepper.h"
#include "batch/vector_engine.h"
#include "slender/backend.h"
#include "slender/core/error.h"

namespace slender {

int cuda_device_count() { return 0; }
bool built_with_cuda() { return false; }
int cuda_device_of(const void*) { return 0; }
void require_cuda_backend() {
  throw Error(
      "the CUDA backend was asked for, but Slender was built without CUDA; "
      "reconfigure with -DSLENDER_WITH_CUDA=ON");
}

std::unique_ptr<DeviceStepper> make_cuda_stepper(std::shared_ptr<const Model>,
                                                 const IntegratorSpec&,
                                                 LinearSolverKind) {
  require_cuda_backend();
  return nullptr;
}

std::unique_ptr<VectorEngine> make_cuda_vector_engine(
    std::shared_ptr<const Model>, int, const IntegratorSpec&, const State&, LinearSolverKind) {
  require_cuda_backend();
  return nullptr;
}

}  // namespace slender
