// The adjoint of a rollout (include/slender/adjoint.h) on the host executor: the engine layer's
// RolloutAdjointOn (include/slender/engine/adjoint.h) with the CPU's loops and solvers; with
// RolloutOptions::backend kCuda, the CUDA backend's (make_cuda_rollout_adjoint).

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

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
      : on(opt.backend == BackendKind::kCuda
               ? make_cuda_rollout_adjoint(std::move(model), spec, opt)
               : std::make_unique<RolloutAdjointEngineOn<HostExecutor>>(
                     std::move(model), spec, opt)) {}
  std::unique_ptr<RolloutAdjointEngine> on;
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
  return impl_->on->run(initial, steps, actions, params, q, u);
}

RolloutGradient RolloutAdjoint::gradient(const RolloutLossGradient& loss) {
  return impl_->on->gradient(loss);
}

RolloutGradient RolloutAdjoint::gradient(const std::vector<Real>& dq, const std::vector<Real>& du) {
  const Model& m = impl_->on->model();
  const size_t nd = size_t(m.ndof);
  for (const std::vector<Real>* v : {&dq, &du})
    SLENDER_CHECK(v->empty() || v->size() % nd == 0,
                  "gradient: dL/dq and dL/du need (N + 1) x ndof values, got ", v->size(),
                  " (ndof = ", nd, ")");
  const size_t nq = dq.size() / std::max<size_t>(nd, 1), nu = du.size() / std::max<size_t>(nd, 1);
  bool checked = false;
  return impl_->on->gradient([&](int n, const Real*, const Real*, Real* gq, Real* gu) {
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

double RolloutAdjoint::checkpoint_bytes() const { return impl_->on->checkpoint_bytes(); }
double RolloutAdjoint::segment_bytes() const { return impl_->on->segment_bytes(); }
long RolloutAdjoint::recomputed_steps() const { return impl_->on->recomputed_steps(); }

namespace {

// f(e) for every environment on the host's threads (one each at most; serial: one after another,
// the CUDA backend's engines sharing their device); the first exception, named by its
// environment, is rethrown
template <class F>
void each_environment(int nenv, bool serial, const F& f) {
  std::vector<std::exception_ptr> errors(size_t(std::max(nenv, 0)));
  parallel_for_host(
      nenv,
      [&](long e) {
        try {
          f(int(e));
        } catch (...) {
          errors[size_t(e)] = std::current_exception();
        }
      },
      serial ? std::max(nenv, 1) : 1);
  for (int e = 0; e < nenv; ++e) {
    if (!errors[size_t(e)]) continue;
    try {
      std::rethrow_exception(errors[size_t(e)]);
    } catch (const std::exception& x) {
      throw Error("environment " + std::to_string(e) + ": " + x.what());
    }
  }
}

}  // namespace

BatchRolloutAdjoint::BatchRolloutAdjoint(std::shared_ptr<const Model> model,
                                         int nenv,
                                         const IntegratorSpec& integrator,
                                         RolloutOptions options)
    : model_(std::move(model)), serial_(options.backend == BackendKind::kCuda) {
  SLENDER_CHECK(model_, "BatchRolloutAdjoint needs a model");
  SLENDER_CHECK(nenv >= 1, "BatchRolloutAdjoint needs at least one environment, got ", nenv);
  envs_.reserve(size_t(nenv));
  for (int e = 0; e < nenv; ++e)
    envs_.push_back(std::make_unique<RolloutAdjoint>(model_, integrator, options));
}
BatchRolloutAdjoint::~BatchRolloutAdjoint() = default;

int BatchRolloutAdjoint::nenv() const { return int(envs_.size()); }

std::vector<State> BatchRolloutAdjoint::run(const std::vector<State>& initial,
                                            int steps,
                                            const std::vector<RolloutActions>& actions,
                                            const std::vector<RolloutParams>& params,
                                            std::vector<Real>* q,
                                            std::vector<Real>* u) {
  const int B = nenv();
  auto fits = [B](size_t n, const char* what) {
    SLENDER_CHECK(n == 1 || n == size_t(B), "BatchRolloutAdjoint::run: ", what, " holds ", n,
                  " entries; it needs one, or one per environment (", B, ")");
  };
  fits(initial.size(), "initial");
  fits(actions.size(), "actions");
  fits(params.size(), "params");
  auto pick = [](const auto& v, int e) -> const auto& { return v.size() == 1 ? v[0] : v[e]; };
  const size_t per = size_t(steps + 1) * size_t(model_->ndof);
  std::vector<State> out(static_cast<size_t>(B));
  std::vector<std::vector<Real>> qe(static_cast<size_t>(B)), ue(qe);
  steps_ = -1;
  each_environment(B, serial_, [&](int e) {
    out[size_t(e)] =
        envs_[size_t(e)]->run(pick(initial, e), steps, pick(actions, e), pick(params, e),
                              q ? &qe[size_t(e)] : nullptr, u ? &ue[size_t(e)] : nullptr);
  });
  steps_ = steps;
  for (auto [dst, src] : {std::pair{q, &qe}, std::pair{u, &ue}}) {
    if (!dst) continue;
    dst->resize(size_t(B) * per);
    for (int e = 0; e < B; ++e)
      std::copy((*src)[size_t(e)].begin(), (*src)[size_t(e)].end(), dst->begin() + e * per);
  }
  return out;
}

std::vector<RolloutGradient> BatchRolloutAdjoint::gradient(const std::vector<Real>& dq,
                                                           const std::vector<Real>& du) {
  const int B = nenv();
  SLENDER_CHECK(steps_ >= 0, "BatchRolloutAdjoint::gradient: run the rollouts first");
  const size_t per = size_t(steps_ + 1) * size_t(model_->ndof);
  for (const std::vector<Real>* v : {&dq, &du})
    SLENDER_CHECK(v->empty() || v->size() == size_t(B) * per,
                  "BatchRolloutAdjoint::gradient: dL/dq and dL/du need nenv x (N + 1) x ndof = ",
                  size_t(B) * per, " values, got ", v->size());
  std::vector<RolloutGradient> out(static_cast<size_t>(B));
  each_environment(B, serial_, [&](int e) {
    auto part = [&](const std::vector<Real>& v) {
      return v.empty() ? std::vector<Real>()
                       : std::vector<Real>(v.begin() + e * per, v.begin() + (e + 1) * per);
    };
    out[size_t(e)] = envs_[size_t(e)]->gradient(part(dq), part(du));
  });
  return out;
}

State transported_state(const Model& m, const State& base, const std::vector<Real>& q) {
  SLENDER_CHECK(state_fits(m, base), "transported_state: the state does not fit the model");
  SLENDER_CHECK(q.size() == size_t(m.ndof), "transported_state: q has ", q.size(),
                " values, the model ", m.ndof, " DOFs");
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
  // the mid-edge frame vectors of q (a clamped edge's kept), as a step's end refreshes them
  const MidEdgeFrames mf{mv, s.q.data(), s.sedge_tau0.data()};
  for (long e = 0; e < m.nsedge && m.nmid > 0; ++e)
    mf(e);
  return s;
}

}  // namespace slender
