// The adjoint of a rollout (include/slender/adjoint.h) on the host executor: the engine layer's
// RolloutAdjointOn (include/slender/engine/adjoint.h) with the CPU's loops and solvers.

#include "backend/host_executor.h"
#include "slender/adjoint.h"
#include "slender/engine/adjoint.h"
#include "slender/engine/model_view.h"

namespace slender {
// the host executor's engine is compiled once, in host_engine.cpp
extern template class Engine<HostExecutor>;
}  // namespace slender

namespace slender {

struct RolloutAdjoint::Impl {
  Impl(std::shared_ptr<const Model> model, const IntegratorSpec& spec, const RolloutOptions& opt)
      : on(std::move(model), spec, opt) {}
  RolloutAdjointOn<HostExecutor> on;
};

RolloutAdjoint::RolloutAdjoint(std::shared_ptr<const Model> model,
                               const IntegratorSpec& integrator,
                               RolloutOptions options)
    : impl_(std::make_unique<Impl>(std::move(model), integrator, options)) {}
RolloutAdjoint::~RolloutAdjoint() = default;

State RolloutAdjoint::run(const State& initial,
                          int steps,
                          const RolloutActions& actions,
                          const RolloutParams& params,
                          std::vector<Real>* q,
                          std::vector<Real>* u) {
  return impl_->on.run(initial, steps, actions, params, q, u);
}

RolloutGradient RolloutAdjoint::gradient(const RolloutLossGradient& loss) {
  return impl_->on.gradient(loss);
}

RolloutGradient RolloutAdjoint::gradient(const std::vector<Real>& dq, const std::vector<Real>& du) {
  const Model& m = impl_->on.model();
  const size_t nd = size_t(m.ndof);
  for (const std::vector<Real>* v : {&dq, &du})
    SLENDER_CHECK(v->empty() || v->size() % nd == 0,
                  "gradient: dL/dq and dL/du need (N + 1) x ndof values, got ", v->size(),
                  " (ndof = ", nd, ")");
  const size_t nq = dq.size() / std::max<size_t>(nd, 1), nu = du.size() / std::max<size_t>(nd, 1);
  bool checked = false;
  return impl_->on.gradient([&](int n, const Real*, const Real*, Real* gq, Real* gu) {
    if (!checked) {  // n = N first
      SLENDER_CHECK(dq.empty() || nq == size_t(n) + 1, "gradient: dL/dq has ", nq,
                    " states, the rollout ", n + 1);
      SLENDER_CHECK(du.empty() || nu == size_t(n) + 1, "gradient: dL/du has ", nu,
                    " states, the rollout ", n + 1);
      checked = true;
    }
    for (size_t i = 0; i < nd && !dq.empty(); ++i)
      gq[i] += dq[size_t(n) * nd + i];
    for (size_t i = 0; i < nd && !du.empty(); ++i)
      gu[i] += du[size_t(n) * nd + i];
  });
}

double RolloutAdjoint::checkpoint_bytes() const { return impl_->on.checkpoint_bytes(); }
double RolloutAdjoint::segment_bytes() const { return impl_->on.segment_bytes(); }
long RolloutAdjoint::recomputed_steps() const { return impl_->on.recomputed_steps(); }

State transported_state(const Model& m, const State& base, const std::vector<Real>& q) {
  SLENDER_CHECK(state_fits(m, base), "transported_state: the state does not fit the model");
  SLENDER_CHECK(q.size() == size_t(m.ndof), "transported_state: q has ", q.size(),
                " values, the model ", m.ndof, " DOFs");
  SLENDER_CHECK(m.nmid == 0, "transported_state: mid-edge shells are not supported");
  const ModelView mv = host_view(m);
  State s = base;
  s.q = q;
  const TransportFrames tf{
      mv, s.q.data(), base.edge_d1.data(), base.edge_t.data(), s.edge_d1.data(), s.edge_t.data()};
  for (long i = 0; i < m.nedge; ++i)
    tf(i);
  const ReferenceTwists rt{mv, s.edge_d1.data(), s.edge_t.data(), base.bend_ref_twist.data(),
                           s.bend_ref_twist.data()};
  for (long k = 0; k < m.nbend; ++k)
    rt(k);
  return s;
}

}  // namespace slender
