#pragma once

// The seam between RolloutAdjoint (slender/adjoint.h) and the adjoint over an executor
// (engine/adjoint.h's RolloutAdjointOn<X>, wrapped as RolloutAdjointEngineOn<X>): the host
// executor's in the library (host/backend/host_adjoint.cpp), the CUDA executor's in
// libslender_cuda.so (kernels/cuda_engine.cu; engine/cuda_module.h's make_rollout_adjoint).

#include <memory>
#include <vector>

#include "slender/adjoint.h"

namespace slender {

class RolloutAdjointEngine {
 public:
  virtual ~RolloutAdjointEngine() = default;
  virtual const Model& model() const = 0;
  virtual State run(const State& initial,
                    int steps,
                    const RolloutActions& actions,
                    const RolloutParams& params,
                    std::vector<Real>* q,
                    std::vector<Real>* u) = 0;
  virtual RolloutGradient gradient(const RolloutLossGradient& loss) = 0;
  virtual double checkpoint_bytes() const = 0;
  virtual double segment_bytes() const = 0;
  virtual long recomputed_steps() const = 0;
};

/// the CUDA backend's adjoint (the rollout and each step's linearization on the GPU; throws
/// slender::Error where this build has no CUDA or no device is visible);
/// host/backend/cuda_loader.cpp
std::unique_ptr<RolloutAdjointEngine> make_cuda_rollout_adjoint(std::shared_ptr<const Model> model,
                                                                const IntegratorSpec& spec,
                                                                const RolloutOptions& options);

}  // namespace slender
