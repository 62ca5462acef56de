// BatchedSimulator: two engines.
// - per environment (CPU): one Simulator per environment over the shared Model (the model's
//   arrays are not copied), stepped in parallel on the host's threads across environments; each
//   environment runs its own Newton iteration single-threaded, so that the cores are busy with
//   whole environments rather than with small loops;
// - vectorized (CPU or CUDA): the engine (include/slender/engine/engine.h) with B environments,
//   one masked Newton iteration over all of them, every environment's Jacobian solved by one
//   batched call per iteration (banded LU, dense Cholesky/LU or PCG:
//   include/slender/engine/batch_solve.h).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <sstream>

#include "model/model_internal.h"
#include "runtime/memory_budget.h"
#include "slender/backend.h"
#include "slender/batch.h"
#include "slender/control.h"
#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/batched_simulator_engine.h"
#include "slender/engine/memory_tally.h"
#include "slender/info.h"
#include "slender/stencils/ground_contact.h"

namespace slender {

struct BatchedSimulator::Impl {
  std::shared_ptr<const Model> model;
  IntegratorSpec spec;
  LinearSolverKind solver;
  BatchEngine engine = BatchEngine::kPerEnvironment;
  BackendKind backend = BackendKind::kCpu;
  int nenv = 0;
  std::vector<StepStatus> status;
  std::vector<StepReport> reports;
  PhaseTimes vec_times;  // the vectorized engine's (wall times: eval, solve, line search)

  // per-environment engine
  std::vector<std::unique_ptr<Simulator>> envs;
  // actions (env-major), empty when not set
  std::vector<Real> kappa, tau, phi, mid, stretch, force;
  State initial;

  // the feedback controllers of every environment (control.h), or null; a step's commands
  // are pending from their compute to the step's end (the per-environment engine's callbacks
  // write those); the strains they read (nenv x count x width) and the times
  std::unique_ptr<StrainController> ctrl;
  bool ctrl_pending = false;
  std::vector<Real> ctrl_bend, ctrl_stretch, ctrl_hinge, ctrl_times;
  // the vectorized engine's natural values under control: the caller's host actions (empty:
  // the model's), whether the last one came from device memory (no host copy), and the arrays
  // sent with each step: curvature, twist, hinge angle, stretch
  std::array<std::vector<Real>, 4> base, sent;
  std::array<bool, 4> base_on_device = {false, false, false, false};

  // vectorized engine, with a host copy of the state for observations
  std::unique_ptr<BatchedSimulatorEngine> vec;
  std::vector<Real> vq, vu;
  bool host_stale = true;
  mutable std::vector<State> env_states;  // state(env) answers

  // the vectorized engine computes the scene's actuation itself; the controllers' commands
  // reach it as natural-shape actions, which replace the actuation of their kind: a scene with
  // both needs the per-environment batch (whose Simulators add the commands to the actuation)
  void check_controllers_with_actuation() const {
    SLENDER_CHECK(!vec || model->actuated.empty(),
                  "the vectorized batch runs a scene's actuation or its feedback controllers, "
                  "not both (this scene has actuation): use the per-environment batch");
  }
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
      if (!mid.empty())
        std::memcpy(shape.mid_kappa_bar, mid.data() + 3 * size_t(e) * m.nmid,
                    3 * size_t(m.nmid) * sizeof(Real));
      if (!stretch.empty())
        std::memcpy(shape.edge_stretch_bar, stretch.data() + size_t(e) * m.nedge,
                    size_t(m.nedge) * sizeof(Real));
      if (ctrl) ctrl->apply(e, shape, ctrl_pending);
    });
  }
  // the controllers' commands for a step of every environment from the strains at its start
  // (the batch's own queries); the vectorized engine gets the natural values they drive
  void control_begin(const BatchedSimulator& b);
  // a caller's natural action of kind k (0 curvature, 1 twist, 2 hinge angle, 3 stretch): its
  // host copy for the vectorized engine under control
  void keep_base(int k, const Real* v, size_t n, bool on_device) {
    if (!vec) return;
    base_on_device[size_t(k)] = on_device;
    if (on_device) {
      base[size_t(k)].clear();
    } else {
      base[size_t(k)].assign(v, v + n);
    }
  }
  // the twists (velocity: their velocities) of every environment from v (nenv x nedge)
  void set_twists(const Real* v, bool velocity);
  void check_env(int e) const {
    SLENDER_CHECK(e >= 0 && e < nenv, "environment ", e, " out of range [0, ", nenv, ")");
  }
  // the vectorized engine's q and u on the host
  void sync() {
    if (vec && host_stale) {
      vec->download_qu(vq, vu);
      host_stale = false;
    }
  }
  const Real* env_q(int e) {
    if (vec) {
      sync();
      return vq.data() + size_t(e) * model->ndof;
    }
    return envs[e]->state().q.data();
  }
  const Real* env_u(int e) {
    if (vec) {
      sync();
      return vu.data() + size_t(e) * model->ndof;
    }
    return envs[e]->state().u.data();
  }
};

BatchedSimulator::BatchedSimulator(std::shared_ptr<const Model> model, int nenv)
    : BatchedSimulator(model, nenv, model->scene.integrator) {}

BatchedSimulator::BatchedSimulator(std::shared_ptr<const Model> model,
                                   int nenv,
                                   const IntegratorSpec& integrator,
                                   LinearSolverKind solver,
                                   BatchEngine engine,
                                   BackendKind backend)
    : impl_(std::make_unique<Impl>()) {
  SLENDER_CHECK(model != nullptr, "BatchedSimulator needs a model");
  SLENDER_CHECK(nenv >= 1, "a batch needs at least one environment, got ", nenv);
  host_threads();  // a bad SLENDER_THREADS is reported here, not at the first large loop
  // the batch's memory, estimated and refused before anything is allocated
  if (backend == BackendKind::kCuda) engine = BatchEngine::kVectorized;
  require_memory(memory_estimate(*model, nenv, integrator, solver, engine, backend), nenv, engine,
                 backend);
  Impl& s = *impl_;
  s.model = std::move(model);
  s.spec = integrator;
  s.solver = solver;
  s.nenv = nenv;
  s.backend = backend;
  s.engine = backend == BackendKind::kCuda ? BatchEngine::kVectorized : engine;
  if (s.engine == BatchEngine::kVectorized) {
    // the initial state of a Simulator (Newmark's consistent acceleration included)
    s.initial = Simulator(s.model, integrator, LinearSolverKind::kAuto).state();
    s.vec = backend == BackendKind::kCuda
                ? make_cuda_batched_engine(s.model, nenv, integrator, s.initial, solver)
                : make_host_batched_engine(s.model, nenv, integrator, s.initial, solver);
  } else {
    s.envs.resize(nenv);
    for (int e = 0; e < nenv; ++e) {
      s.envs[e] = std::make_unique<Simulator>(s.model, integrator, solver, BackendKind::kCpu);
      s.envs[e]->set_controllers({});  // the batch's controllers act (install_actuation)
      s.install_actuation(e);
    }
    s.initial = s.envs[0]->state();
  }
  if (!s.model->scene.controllers.empty()) {
    s.check_controllers_with_actuation();
    s.ctrl = std::make_unique<StrainController>(s.model, s.model->scene.controllers, nenv);
  }
  s.status.assign(nenv, StepStatus::kConverged);
  s.reports.resize(nenv);
}

BatchedSimulator::~BatchedSimulator() = default;

BatchMemory BatchedSimulator::memory_estimate(const Model& m,
                                              int nenv,
                                              const IntegratorSpec& integrator,
                                              LinearSolverKind solver,
                                              BatchEngine engine,
                                              BackendKind backend) {
  SLENDER_CHECK(nenv >= 1, "a batch needs at least one environment, got ", nenv);
  const bool cuda = backend == BackendKind::kCuda;
  if (cuda) engine = BatchEngine::kVectorized;
  // the batch's own arrays: per environment its statuses and reports, (the vectorized engine)
  // the host copies of q and u and the state(env) answers; once the initial state
  MemoryTally host;
  host.env<StepStatus>(1);
  host.env<StepReport>(1);
  host.shared += double(state_bytes_per_env(m));
  host.blocks += 7;
  BatchMemory b;
  if (engine == BatchEngine::kVectorized) {
    MemoryTally exec;
    tally_engine_memory(m, nenv, integrator, solver, /*batched=*/true, cuda, exec, host);
    host.env<Real>(m.ndof);
    host.env<Real>(m.ndof);
    host.env<State>(1);
    if (cuda) {
      b.device_per_env = exec.per_env;
      b.device_fixed = exec.shared;  // (the device allocator's blocks cost no host memory)
    } else {
      host.per_env += exec.per_env;
      host.shared += exec.shared;
      host.blocks += exec.blocks;
    }
  } else {
    // one Simulator each, its pointer, actuation (a callback holding its environment) and
    // natural-shape actions, and a step's exception slot
    host.per_env += Simulator::memory_estimate(m, integrator, solver);
    host.env<std::unique_ptr<Simulator>>(1);
    host.per_env += MemoryTally::kHeapBlockBytes + 32;  // the callback's captures
    host.env<Real>(2.0 * m.nbend);
    host.env<Real>(m.nbend);
    host.env<Real>(m.nhinge);
    host.env<Real>(3.0 * m.nmid);
    host.env<Real>(m.nedge);
    host.env<std::exception_ptr>(1);
  }
  b.host_per_env = host.per_env;
  b.host_fixed = host.fixed();
  return b;
}

void BatchedSimulator::require_memory(const BatchMemory& need,
                                      long nenv,
                                      BatchEngine engine,
                                      BackendKind backend,
                                      const std::string& field) {
  const std::string what = "a batch of " + std::to_string(nenv) + " environments (the " +
                           (engine == BatchEngine::kVectorized ? "vectorized" : "per-environment") +
                           " engine)";
  // the most environments that fit in `available` bytes of which `fixed` are taken once
  auto most = [](double available, double fixed, double per_env) {
    const double k = per_env > 0 ? std::floor((available - fixed) / per_env) : 0;
    return k >= 1 ? "at most " + std::to_string(long(std::min(k, 2e18))) + " environments fit"
                  : std::string("not even one environment fits");
  };
  slender::require_memory(
      field, what, need.host(double(nenv)),
      format_bytes(need.host_per_env) + " per environment and " + format_bytes(need.host_fixed) +
          " once",
      [&](double available) { return most(available, need.host_fixed, need.host_per_env); });
  if (backend != BackendKind::kCuda) return;
  std::size_t free_bytes = 0, total_bytes = 0;
  cuda_device_memory(free_bytes, total_bytes);
  const double dev = need.device(double(nenv));
  if (dev <= double(free_bytes)) return;
  AvailableMemory a;
  a.bytes = free_bytes;
  a.limit = "free on the CUDA device, of " + format_bytes(double(total_bytes));
  throw MemoryLimitError(
      field,
      memory_refusal(field, what + " on the GPU", dev,
                     format_bytes(need.device_per_env) + " per environment and " +
                         format_bytes(need.device_fixed) + " once",
                     a, most(double(free_bytes), need.device_fixed, need.device_per_env)),
      dev, double(free_bytes));
}

int BatchedSimulator::nenv() const { return impl_->nenv; }
const Model& BatchedSimulator::model() const { return *impl_->model; }
const IntegratorSpec& BatchedSimulator::integrator() const { return impl_->spec; }
BatchEngine BatchedSimulator::engine() const { return impl_->engine; }
BackendKind BatchedSimulator::backend() const { return impl_->backend; }
std::string BatchedSimulator::solver_name() const {
  return impl_->vec ? impl_->vec->solver_name() : impl_->envs[0]->linear_solver_name();
}

namespace {
// an action's values must be finite: a NaN would fail every step of its environment
// (n = nenv x per values: the message names the environment and the index in it)
void check_finite_action(const Real* v, size_t n, const char* what, size_t per = 0) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) {
      std::ostringstream o;
      o << what << ": ";
      if (per > 0)
        o << "environment " << i / per << ", value " << i % per;
      else
        o << "value " << i;
      o << " is " << v[i] << ": actions must be finite";
      throw Error(o.str());
    }
}

// natural curvatures (nenv x nbend x 2): finite, and no turn beyond kMaxNaturalTurn
void check_natural_curvature(const Real* v, size_t nenv, size_t nbend) {
  check_finite_action(v, 2 * nenv * nbend, "natural curvature", 2 * nbend);
  const Real kmax = max_natural_kappa_bar();
  for (size_t i = 0; i < nenv * nbend; ++i)
    if (!(std::hypot(v[2 * i], v[2 * i + 1]) <= kmax)) {
      std::ostringstream o;
      o << "natural curvature: environment " << i / nbend << ", stencil " << i % nbend << " has ("
        << v[2 * i] << ", " << v[2 * i + 1]
        << "): a stencil's natural curvature must have a norm of at most " << kmax
        << " (a turn of the rod by 0.9 pi at its node; docs/failures.md)";
      throw Error(o.str());
    }
}

// a natural-shape action of n values: from the engine's memory (the CUDA backend) the vectorized
// engine checks and copies it on its executor (to_engine(v, true)); from the host (or the CPU
// backend's "engine memory", which is host memory) it is checked here, then goes to the
// vectorized engine (to_engine(v, false)) or is kept for the per-environment one (host)
template <class ToEngine>
void natural_action(const Real* v,
                    size_t n,
                    BatchedSimulator::ArrayPlace where,
                    BackendKind backend,
                    bool vectorized,
                    const char* what,
                    ToEngine to_engine,
                    std::vector<Real>& host) {
  if (where == BatchedSimulator::ArrayPlace::kEngine && backend != BackendKind::kCpu) {
    SLENDER_CHECK(vectorized, what,
                  " from device memory needs the vectorized engine (BatchEngine::kVectorized); "
                  "the per-environment engine takes host arrays");
    return to_engine(v, true);
  }
  check_finite_action(v, n, what);
  if (vectorized) return to_engine(v, false);
  host.assign(v, v + n);
}
// whether an action's array is in device memory
bool on_device(BatchedSimulator::ArrayPlace where, BackendKind backend) {
  return where == BatchedSimulator::ArrayPlace::kEngine && backend != BackendKind::kCpu;
}
}  // namespace

void BatchedSimulator::set_natural_curvature(const Real* kappa, ArrayPlace where) {
  Impl& s = *impl_;
  if (where == ArrayPlace::kHost || backend() == BackendKind::kCpu)
    check_natural_curvature(kappa, size_t(nenv()), size_t(s.model->nbend));
  natural_action(
      kappa, 2 * size_t(nenv()) * s.model->nbend, where, backend(), s.vec != nullptr,
      "natural curvature", [&](const Real* v, bool e) { s.vec->set_natural_curvature(v, e); },
      s.kappa);
  s.keep_base(0, kappa, 2 * size_t(nenv()) * s.model->nbend, on_device(where, backend()));
}
void BatchedSimulator::set_natural_twist(const Real* tau, ArrayPlace where) {
  Impl& s = *impl_;
  natural_action(
      tau, size_t(nenv()) * s.model->nbend, where, backend(), s.vec != nullptr, "natural twist",
      [&](const Real* v, bool e) { s.vec->set_natural_twist(v, e); }, s.tau);
  s.keep_base(1, tau, size_t(nenv()) * s.model->nbend, on_device(where, backend()));
}
void BatchedSimulator::set_natural_hinge_angle(const Real* phi, ArrayPlace where) {
  Impl& s = *impl_;
  natural_action(
      phi, size_t(nenv()) * s.model->nhinge, where, backend(), s.vec != nullptr,
      "natural hinge angle", [&](const Real* v, bool e) { s.vec->set_natural_hinge_angle(v, e); },
      s.phi);
  s.keep_base(2, phi, size_t(nenv()) * s.model->nhinge, on_device(where, backend()));
}
void BatchedSimulator::set_natural_midedge_curvature(const Real* c, ArrayPlace where) {
  Impl& s = *impl_;
  natural_action(
      c, 3 * size_t(nenv()) * s.model->nmid, where, backend(), s.vec != nullptr,
      "natural mid-edge curvature",
      [&](const Real* v, bool e) { s.vec->set_natural_midedge_curvature(v, e); }, s.mid);
}
void BatchedSimulator::set_natural_stretch(const Real* v, ArrayPlace where) {
  Impl& s = *impl_;
  const size_t n = size_t(nenv()) * s.model->nedge;
  if (where == ArrayPlace::kHost || backend() == BackendKind::kCpu)
    for (size_t i = 0; i < n; ++i)
      if (!(v[i] > 0) || !std::isfinite(v[i])) {
        std::ostringstream o;
        o << "natural stretch: environment " << i / s.model->nedge << ", rod edge "
          << i % s.model->nedge << " has " << v[i]
          << ": a natural stretch (natural length / rest length) must be finite and positive";
        throw Error(o.str());
      }
  natural_action(
      v, n, where, backend(), s.vec != nullptr, "natural stretch",
      [&](const Real* a, bool e) { s.vec->set_natural_stretch(a, e); }, s.stretch);
  s.keep_base(3, v, n, on_device(where, backend()));
}
void BatchedSimulator::set_external_forces(const Real* f) {
  Impl& s = *impl_;
  check_finite_action(f, 3 * size_t(nenv()) * s.model->nnode, "external force");
  if (s.vec) return s.vec->set_forces(f);
  const size_t n = 3 * size_t(s.model->nnode);
  for (int e = 0; e < nenv(); ++e)
    s.envs[e]->set_external_forces(std::vector<Real>(f + e * n, f + (e + 1) * n));
}
void BatchedSimulator::set_fixed_targets(const Real* values) {
  Impl& s = *impl_;
  if (s.vec) return s.vec->set_fixed_targets(values);
  const size_t n = s.model->fixed_dof.size();
  for (int e = 0; e < nenv(); ++e)
    s.envs[e]->set_fixed_targets(std::vector<Real>(values + e * n, values + (e + 1) * n));
}
void BatchedSimulator::set_part_youngs_scale(const Real* scale) {
  Impl& s = *impl_;
  const size_t np = size_t(s.model->npart);
  for (int e = 0; e < nenv(); ++e)
    for (size_t i = 0; i < np; ++i) {
      const Real v = scale[e * np + i];
      SLENDER_CHECK(std::isfinite(v) && v > 0, "environment ", e, ", part ", i, " ('",
                    s.model->scene.parts[i].name,
                    "'): a modulus factor must be finite and positive, got ", v);
    }
  if (s.vec) return s.vec->set_part_youngs_scale(scale);
  for (int e = 0; e < nenv(); ++e)
    s.envs[e]->set_part_youngs_scale(std::vector<Real>(scale + e * np, scale + (e + 1) * np));
}

void BatchedSimulator::set_load_values(const std::string& field, int entry, const Real* values) {
  Impl& s = *impl_;
  const int k = load_signal(*s.model, field, entry);
  for (int e = 0; e < nenv(); ++e)
    SLENDER_CHECK(std::isfinite(values[e]), "environment ", e, ": the load value of forces.", field,
                  "[", entry, "] must be finite, got ", values[e]);
  if (s.vec) return s.vec->set_signal_values(k, values);
  for (int e = 0; e < nenv(); ++e)
    s.envs[e]->set_load_value(field, entry, values[e]);
}

void BatchedSimulator::clear_actions() {
  Impl& s = *impl_;
  for (auto& b : s.base)
    b.clear();
  s.base_on_device = {false, false, false, false};
  if (s.vec) {
    s.vec->clear_natural_shape();
    s.vec->clear_forces();
    s.vec->clear_fixed_targets();
    s.vec->clear_part_youngs_scale();
    s.vec->clear_signal_values();
    return;
  }
  s.kappa.clear();
  s.tau.clear();
  s.phi.clear();
  s.mid.clear();
  s.stretch.clear();
  for (auto& env : s.envs) {
    env->set_external_forces({});
    env->set_fixed_targets({});
    env->set_part_youngs_scale({});
    env->clear_load_values();
  }
}

void BatchedSimulator::fix_dofs(int env, const std::vector<int>& dofs) {
  Impl& s = *impl_;
  s.check_env(env);
  if (!s.vec) return s.envs[env]->fix_dofs(dofs);
  s.vec->fix_dofs(env, dofs, true);
  s.host_stale = true;
}
void BatchedSimulator::release_dofs(int env, const std::vector<int>& dofs) {
  Impl& s = *impl_;
  s.check_env(env);
  if (!s.vec) return s.envs[env]->release_dofs(dofs);
  s.vec->fix_dofs(env, dofs, false);
}
std::vector<unsigned char> BatchedSimulator::dof_fixed(int env) const {
  const Impl& s = *impl_;
  s.check_env(env);
  if (!s.vec) return s.envs[env]->dof_fixed();
  const unsigned char* f = s.vec->fixed(env);
  return std::vector<unsigned char>(f, f + s.model->ndof);
}

void BatchedSimulator::Impl::set_twists(const Real* v, bool velocity) {
  const size_t ne = size_t(model->nedge);
  check_finite_action(v, size_t(nenv) * ne, velocity ? "twist velocity" : "twist angle");
  for (int e = 0; e < nenv; ++e) {
    const Real* ve = v + size_t(e) * ne;
    if (vec) {
      vec->set_twists(e, ve, velocity);
    } else if (velocity) {
      envs[size_t(e)]->set_twist_velocities(std::vector<Real>(ve, ve + ne));
    } else {
      envs[size_t(e)]->set_twist_angles(std::vector<Real>(ve, ve + ne));
    }
  }
  host_stale = true;
}

void BatchedSimulator::set_twist_angles(const Real* theta) { impl_->set_twists(theta, false); }
void BatchedSimulator::set_twist_velocities(const Real* omega) { impl_->set_twists(omega, true); }

void BatchedSimulator::set_params(int env, const EnvParams& p) {
  impl_->check_env(env);
  if (impl_->vec) return impl_->vec->set_params(env, p);
  impl_->envs[env]->set_params(p);
}
const EnvParams& BatchedSimulator::params(int env) const {
  impl_->check_env(env);
  return impl_->vec ? impl_->vec->params(env) : impl_->envs[env]->params();
}

void BatchedSimulator::reset(const std::vector<unsigned char>& mask) {
  reset(mask, impl_->initial);
}
void BatchedSimulator::reset(const std::vector<unsigned char>& mask, const State& state) {
  Impl& s = *impl_;
  SLENDER_CHECK(mask.empty() || int(mask.size()) == nenv(), "reset mask has ", mask.size(),
                " entries for ", nenv(), " environments");
  std::vector<unsigned char> mk(nenv(), 1);
  for (int e = 0; e < nenv() && !mask.empty(); ++e)
    mk[e] = mask[e] ? 1 : 0;
  if (s.vec) {
    s.vec->reset(mk, state);  // one upload of the state and masked copies on the executor
    s.host_stale = true;
  } else {
    for (int e = 0; e < nenv(); ++e)
      if (mk[e]) s.envs[e]->set_state(state);
  }
  for (int e = 0; e < nenv(); ++e)
    if (mk[e]) s.status[e] = StepStatus::kConverged;
  if (s.ctrl)
    for (int e = 0; e < nenv(); ++e)
      if (mk[e]) s.ctrl->reset(e);
}
void BatchedSimulator::set_state(int env, const State& st) {
  Impl& s = *impl_;
  s.check_env(env);
  check_state_finite(st, "environment " + std::to_string(env) + "'s state");
  if (s.vec) {
    s.vec->set_state(env, st);
    s.host_stale = true;
    return;
  }
  s.envs[env]->set_state(st);
}
const State& BatchedSimulator::state(int env) const {
  Impl& s = *impl_;
  s.check_env(env);
  if (!s.vec) return s.envs[env]->state();
  s.env_states.resize(nenv());
  s.vec->get_state(env, s.env_states[env]);
  return s.env_states[env];
}

void BatchedSimulator::Impl::control_begin(const BatchedSimulator& b) {
  const Model& m = *model;
  const size_t ne = size_t(nenv);
  auto query = [&](StrainKind kind, size_t per_env, std::vector<Real>& out) -> const Real* {
    if (!ctrl->reads(kind)) return nullptr;
    out.resize(ne * per_env);
    if (!out.empty()) b.strains(kind, out.data());
    return out.data();
  };
  const size_t nb = 3 * size_t(m.nbend), nst = size_t(m.nedge), nh = size_t(m.nhinge);
  const Real* bend = query(StrainKind::kBendTwist, nb, ctrl_bend);
  const Real* stretch_y = query(StrainKind::kStretch, nst, ctrl_stretch);
  const Real* hinge = query(StrainKind::kHingeAngle, nh, ctrl_hinge);
  ctrl_times.resize(ne);
  b.times(ctrl_times.data());
  for (size_t e = 0; e < ne; ++e) {
    StrainReadings y;
    y.bend_twist = bend ? bend + e * nb : nullptr;
    y.stretch = stretch_y ? stretch_y + e * nst : nullptr;
    y.hinge = hinge ? hinge + e * nh : nullptr;
    ctrl->compute(int(e), ctrl_times[e], spec.dt, y);
  }
  ctrl_pending = true;
  if (!vec) return;
  // the vectorized engine: the natural values of each driven kind, the caller's (or the
  // model's) with the commands on the controlled springs
  static const char* const kWhat[4] = {"natural curvature", "natural twist", "natural hinge angle",
                                       "natural stretch"};
  const bool drive[4] = {ctrl->drives(0) || ctrl->drives(1), ctrl->drives(2), ctrl->drives(3),
                         ctrl->drives(kActuatedStretch)};
  const size_t per[4] = {2 * size_t(m.nbend), size_t(m.nbend), nh, nst};
  for (size_t k = 0; k < 4; ++k) {
    if (!drive[k]) continue;
    SLENDER_CHECK(!base_on_device[k], "the ", kWhat[k],
                  " was set from device memory, which controllers driving it cannot add to: set "
                  "it from host memory, or clear the actions");
    std::vector<Real>& v = sent[k];
    if (!base[k].empty()) {
      v = base[k];
      continue;
    }
    v.resize(ne * per[k]);
    for (size_t e = 0; e < ne; ++e)
      for (size_t i = 0; i < per[k]; ++i)
        v[e * per[k] + i] = k == 0   ? m.bend_kappa_bar[i]
                            : k == 1 ? m.bend_tau_bar[i]
                            : k == 2 ? m.hinge_phi_bar[i]
                                     : Real(1);
  }
  for (size_t e = 0; e < ne; ++e) {
    NaturalShape shape{drive[0] ? sent[0].data() + e * per[0] : nullptr,
                       drive[1] ? sent[1].data() + e * per[1] : nullptr,
                       drive[2] ? sent[2].data() + e * per[2] : nullptr,
                       m.nbend,
                       m.nhinge,
                       nullptr,
                       m.nmid,
                       drive[3] ? sent[3].data() + e * per[3] : nullptr,
                       m.nedge};
    ctrl->apply(int(e), shape, true);
  }
  if (drive[0]) vec->set_natural_curvature(sent[0].data(), false);
  if (drive[1]) vec->set_natural_twist(sent[1].data(), false);
  if (drive[2]) vec->set_natural_hinge_angle(sent[2].data(), false);
  if (drive[3]) vec->set_natural_stretch(sent[3].data(), false);
}

StrainController* BatchedSimulator::controller() { return impl_->ctrl.get(); }
const StrainController* BatchedSimulator::controller() const { return impl_->ctrl.get(); }
void BatchedSimulator::set_controllers(std::vector<ControllerSpec> specs) {
  Impl& s = *impl_;
  std::unique_ptr<StrainController> c;
  if (!specs.empty()) s.check_controllers_with_actuation();
  if (!specs.empty()) c = std::make_unique<StrainController>(s.model, std::move(specs), nenv());
  s.ctrl = std::move(c);
}

const std::vector<StepStatus>& BatchedSimulator::step() {
  Impl& s = *impl_;
  if (!s.ctrl) return step_environments();
  s.control_begin(*this);
  try {
    step_environments();
  } catch (...) {
    s.ctrl_pending = false;
    throw;
  }
  s.ctrl_pending = false;
  for (int e = 0; e < nenv(); ++e)
    if (s.reports[size_t(e)].ok()) s.ctrl->commit(e);
  return s.status;
}

const std::vector<StepStatus>& BatchedSimulator::step_environments() {
  Impl& s = *impl_;
  const int n = nenv();
  if (s.vec) {
    const VectorStepResult r = s.vec->step(s.spec.dt, {});
    s.vec_times.eval += r.times.eval;
    s.vec_times.solve += r.times.solve;
    s.vec_times.line_search += r.times.line_search;
    s.host_stale = true;
    s.vec_times.linear_iters += r.solve.pcg_iterations;
    for (int e = 0; e < n; ++e) {
      s.reports[e] = r.reports[e];
      s.status[e] = r.reports[e].status;
      s.vec_times.newton_iters += r.reports[e].iterations;
      if (r.reports[e].ok()) ++s.vec_times.steps;
    }
    return s.status;
  }
  std::vector<std::exception_ptr> errors(n);
  // one thread per environment at most (their own loops inside then run on one thread each)
  parallel_for_host(
      n,
      [&](long e) {
        try {
          s.reports[e] = s.envs[e]->step();
        } catch (...) {
          errors[e] = std::current_exception();
          s.reports[e] = StepReport{};
          s.reports[e].status = StepStatus::kNonFinite;
        }
        s.status[e] = s.reports[e].status;
      },
      1);
  // an exception is a broken contract (not a failed step): the first one is rethrown
  for (int e = 0; e < n; ++e)
    if (errors[e]) std::rethrow_exception(errors[e]);
  return s.status;
}
const std::vector<StepReport>& BatchedSimulator::reports() const { return impl_->reports; }

void BatchedSimulator::positions(Real* out) const {
  Impl& s = *impl_;
  const size_t n = 3 * size_t(s.model->nnode);
  for (int e = 0; e < nenv(); ++e)
    std::memcpy(out + e * n, s.env_q(e), n * sizeof(Real));
}
void BatchedSimulator::velocities(Real* out) const {
  Impl& s = *impl_;
  const size_t n = 3 * size_t(s.model->nnode);
  for (int e = 0; e < nenv(); ++e)
    std::memcpy(out + e * n, s.env_u(e), n * sizeof(Real));
}
void BatchedSimulator::curvatures(Real* out) const {
  Impl& s = *impl_;
  if (s.vec) return s.vec->bend_strains(out);  // every environment at once, one download
  const size_t n = 3 * size_t(s.model->nbend);
  for (int e = 0; e < nenv(); ++e) {
    const std::vector<Real> k = s.envs[e]->bend_strains();
    std::copy(k.begin(), k.end(), out + e * n);
  }
}
void BatchedSimulator::strains(StrainKind kind, Real* out) const {
  Impl& s = *impl_;
  if (s.vec) return s.vec->strains(kind, out);  // every environment at once, one download
  for (int e = 0; e < nenv(); ++e) {
    const std::vector<Real> k = s.envs[e]->strains(kind);
    std::copy(k.begin(), k.end(), out + size_t(e) * k.size());
  }
}
std::vector<Energies> BatchedSimulator::energies() const {
  Impl& s = *impl_;
  if (s.vec) return s.vec->energies();
  std::vector<Energies> out(static_cast<size_t>(nenv()));
  for (int e = 0; e < nenv(); ++e)
    out[size_t(e)] = s.envs[e]->energies();
  return out;
}
void BatchedSimulator::twist_angles(Real* out) const {
  Impl& s = *impl_;
  const Model& m = *s.model;
  for (int e = 0; e < nenv(); ++e)
    std::copy(s.env_q(e) + 3 * m.nnode, s.env_q(e) + m.ndof - m.nxi, out + size_t(e) * m.nedge);
}
void BatchedSimulator::twist_velocities(Real* out) const {
  Impl& s = *impl_;
  const Model& m = *s.model;
  for (int e = 0; e < nenv(); ++e)
    std::copy(s.env_u(e) + 3 * m.nnode, s.env_u(e) + m.ndof - m.nxi, out + size_t(e) * m.nedge);
}
void BatchedSimulator::ground_contacts(unsigned char* out) const {
  Impl& s = *impl_;
  const Model& m = *s.model;
  const size_t nn = size_t(m.nnode);
  if (!m.ground.enabled) {
    std::fill(out, out + nenv() * nn, 0);
    return;
  }
  const GroundContact::Params gp = host_view(m).ground;
  for (int e = 0; e < nenv(); ++e) {
    const Real* q = s.env_q(e);
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
  if (impl_->vec) return impl_->vec_times;
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
    t.linear_iters += p.linear_iters;
  }
  return t;
}

BatchedSimulator::LiveArray BatchedSimulator::live_positions() const {
  LiveArray a;
  if (!impl_->vec) return a;
  a.data = impl_->vec->q_data();
  a.cuda = impl_->backend == BackendKind::kCuda;
  a.env_stride = impl_->model->ndof;
  return a;
}
BatchedSimulator::LiveArray BatchedSimulator::live_velocities() const {
  LiveArray a = live_positions();
  if (a.data) a.data = impl_->vec->u_data();
  return a;
}

void BatchedSimulator::times(Real* out) const {
  const Impl& s = *impl_;
  for (int e = 0; e < nenv(); ++e)
    out[e] = s.vec ? s.vec->times()[e] : s.envs[e]->state().time;
}

}  // namespace slender
