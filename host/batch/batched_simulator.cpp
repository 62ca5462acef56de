// BatchedSimulator on the CPU: one Simulator per environment over the shared Model (the model's
// arrays are not copied), stepped in parallel with OpenMP across environments; each environment
// runs its own Newton iteration single-threaded, so that the cores are busy with whole
// environments rather than with small loops.

#include <algorithm>
#include <cstring>
#include <exception>

#include "model/model_internal.h"
#include "slender/batch.h"
#include "slender/core/error.h"
#include "slender/stencils/ground_contact.h"

namespace slender {

struct BatchedSimulator::Impl {
  std::shared_ptr<const Model> model;
  IntegratorSpec spec;
  LinearSolverKind solver;
  std::vector<std::unique_ptr<Simulator>> envs;
  std::vector<StepStatus> status;
  std::vector<StepReport> reports;
  // actions (env-major), empty when not set
  std::vector<Real> kappa, tau, phi, force;
  State initial;

  void install_actuation(int e) {
    const Model& m = *model;
    envs[e]->set_actuation([this, e, &m](Real, NaturalShape& shape) {
      if (!kappa.empty())
        std::memcpy(shape.bend_kappa_bar, kappa.data() + 2 * size_t(e) * m.nbend,
                    2 * size_t(m.nbend) * sizeof(Real));
      if (!tau.empty())
        std::memcpy(shape.bend_tau_bar, tau.data() + size_t(e) * m.nbend,
                    size_t(m.nbend) * sizeof(Real));
      if (!phi.empty())
        std::memcpy(shape.hinge_phi_bar, phi.data() + size_t(e) * m.nhinge,
                    size_t(m.nhinge) * sizeof(Real));
    });
  }
  void check_env(int e) const {
    SLENDER_CHECK(e >= 0 && e < int(envs.size()), "environment ", e, " out of range [0, ",
                  envs.size(), ")");
  }
};

BatchedSimulator::BatchedSimulator(std::shared_ptr<const Model> model, int nenv)
    : BatchedSimulator(model, nenv, model->scene.integrator) {}

BatchedSimulator::BatchedSimulator(std::shared_ptr<const Model> model,
                                   int nenv,
                                   const IntegratorSpec& integrator,
                                   LinearSolverKind solver)
    : impl_(std::make_unique<Impl>()) {
  SLENDER_CHECK(model != nullptr, "BatchedSimulator needs a model");
  SLENDER_CHECK(nenv >= 1, "a batch needs at least one environment, got ", nenv);
  Impl& s = *impl_;
  s.model = std::move(model);
  s.spec = integrator;
  s.solver = solver;
  s.envs.resize(nenv);
  for (int e = 0; e < nenv; ++e) {
    s.envs[e] = std::make_unique<Simulator>(s.model, integrator, solver, BackendKind::kCpu);
    s.install_actuation(e);
  }
  s.initial = s.envs[0]->state();
  s.status.assign(nenv, StepStatus::kConverged);
  s.reports.resize(nenv);
}

BatchedSimulator::~BatchedSimulator() = default;

int BatchedSimulator::nenv() const { return int(impl_->envs.size()); }
const Model& BatchedSimulator::model() const { return *impl_->model; }

void BatchedSimulator::set_natural_curvature(const Real* kappa) {
  const Model& m = *impl_->model;
  impl_->kappa.assign(kappa, kappa + 2 * size_t(nenv()) * m.nbend);
}
void BatchedSimulator::set_natural_twist(const Real* tau) {
  const Model& m = *impl_->model;
  impl_->tau.assign(tau, tau + size_t(nenv()) * m.nbend);
}
void BatchedSimulator::set_natural_hinge_angle(const Real* phi) {
  const Model& m = *impl_->model;
  impl_->phi.assign(phi, phi + size_t(nenv()) * m.nhinge);
}
void BatchedSimulator::set_external_forces(const Real* f) {
  Impl& s = *impl_;
  const size_t n = 3 * size_t(s.model->nnode);
  for (int e = 0; e < nenv(); ++e)
    s.envs[e]->set_external_forces(std::vector<Real>(f + e * n, f + (e + 1) * n));
}
void BatchedSimulator::clear_actions() {
  Impl& s = *impl_;
  s.kappa.clear();
  s.tau.clear();
  s.phi.clear();
  for (auto& env : s.envs)
    env->set_external_forces({});
}

void BatchedSimulator::set_params(int env, const EnvParams& p) {
  impl_->check_env(env);
  impl_->envs[env]->set_params(p);
}
const EnvParams& BatchedSimulator::params(int env) const {
  impl_->check_env(env);
  return impl_->envs[env]->params();
}

void BatchedSimulator::reset(const std::vector<unsigned char>& mask) {
  Impl& s = *impl_;
  SLENDER_CHECK(mask.empty() || int(mask.size()) == nenv(), "reset mask has ", mask.size(),
                " entries for ", nenv(), " environments");
  for (int e = 0; e < nenv(); ++e)
    if (mask.empty() || mask[e]) {
      s.envs[e]->set_state(s.initial);
      s.status[e] = StepStatus::kConverged;
    }
}
void BatchedSimulator::set_state(int env, const State& st) {
  impl_->check_env(env);
  impl_->envs[env]->set_state(st);
}
const State& BatchedSimulator::state(int env) const {
  impl_->check_env(env);
  return impl_->envs[env]->state();
}

const std::vector<StepStatus>& BatchedSimulator::step() {
  Impl& s = *impl_;
  const int n = nenv();
  std::vector<std::exception_ptr> errors(n);
#pragma omp parallel for schedule(dynamic, 1)
  for (int e = 0; e < n; ++e) {
    try {
      s.reports[e] = s.envs[e]->step();
    } catch (...) {
      errors[e] = std::current_exception();
      s.reports[e] = StepReport{};
      s.reports[e].status = StepStatus::kNonFinite;
    }
    s.status[e] = s.reports[e].status;
  }
  // an exception is a broken contract (not a failed step): the first one is rethrown
  for (int e = 0; e < n; ++e)
    if (errors[e]) std::rethrow_exception(errors[e]);
  return s.status;
}
const std::vector<StepReport>& BatchedSimulator::reports() const { return impl_->reports; }

void BatchedSimulator::positions(Real* out) const {
  const Impl& s = *impl_;
  const size_t n = 3 * size_t(s.model->nnode);
  for (int e = 0; e < nenv(); ++e)
    std::memcpy(out + e * n, s.envs[e]->state().q.data(), n * sizeof(Real));
}
void BatchedSimulator::velocities(Real* out) const {
  const Impl& s = *impl_;
  const size_t n = 3 * size_t(s.model->nnode);
  for (int e = 0; e < nenv(); ++e)
    std::memcpy(out + e * n, s.envs[e]->state().u.data(), n * sizeof(Real));
}
void BatchedSimulator::curvatures(Real* out) const {
  const Impl& s = *impl_;
  const size_t n = 3 * size_t(s.model->nbend);
  for (int e = 0; e < nenv(); ++e) {
    const std::vector<Real> k = s.envs[e]->bend_strains();
    std::copy(k.begin(), k.end(), out + e * n);
  }
}
void BatchedSimulator::ground_contacts(unsigned char* out) const {
  const Impl& s = *impl_;
  const Model& m = *s.model;
  const size_t nn = size_t(m.nnode);
  if (!m.ground.enabled) {
    std::fill(out, out + nenv() * nn, 0);
    return;
  }
  const GroundContact::Params gp = host_view(m).ground;
  for (int e = 0; e < nenv(); ++e) {
    const std::vector<Real>& q = s.envs[e]->state().q;
    for (size_t k = 0; k < nn; ++k) {
      Vec3 grad;
      Mat3 hess;
      const Real d =
          ground_distance(gp.ground, vec3(q[3 * k], q[3 * k + 1], q[3 * k + 2]), grad, hess);
      out[e * nn + k] = d - m.node_contact_radius[k] <= gp.delta ? 1 : 0;
    }
  }
}
PhaseTimes BatchedSimulator::phase_times() const {
  PhaseTimes t;
  for (const auto& env : impl_->envs) {
    const PhaseTimes& p = env->phase_times();
    t.frames += p.frames;
    t.eval += p.eval;
    t.assemble += p.assemble;
    t.factor += p.factor;
    t.solve += p.solve;
    t.line_search += p.line_search;
    t.contacts += p.contacts;
    t.newton_iters += p.newton_iters;
    t.steps += p.steps;
    t.factorizations += p.factorizations;
  }
  return t;
}

void BatchedSimulator::times(Real* out) const {
  for (int e = 0; e < nenv(); ++e)
    out[e] = impl_->envs[e]->state().time;
}

}  // namespace slender
