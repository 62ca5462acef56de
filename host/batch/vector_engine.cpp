// The vectorized batch engine on the CPU: VectorNewton run by the host executor
// (backend/host_executor.h).

#include "backend/host_executor.h"
#include "slender/engine/batch_engine.h"

namespace slender {

std::unique_ptr<VectorEngine> make_host_vector_engine(std::shared_ptr<const Model> model,
                                                      int nenv,
                                                      const IntegratorSpec& spec,
                                                      const State& initial,
                                                      LinearSolverKind solver) {
  return std::make_unique<VectorEngineOf<HostExecutor>>(std::move(model), nenv, spec, initial,
                                                        solver);
}

}  // namespace slender
