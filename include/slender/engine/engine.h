#pragma once

// The engine: Newton's implicit step of B >= 1 environments of one model, written once over an
// executor X (engine/executor.h), so that the same code runs on the CPU (the host executor,
// host/backend/host_executor.h) and on the GPU (the CUDA executor, kernels/cuda_executor.cuh).
// Every front end runs it: the Simulator with one environment (through the SimulatorEngine seam,
// engine/simulator_engine_on.h), the BatchedSimulator's vectorized batch with B
// (engine/batched_simulator_engine.h).
//
// - State and workspace are env-major flat arrays (q[env * ndof + i]); the model is shared.
// - Every stencil family, the per-DOF terms and the assembly run over all active environments
//   (engine/step_eval.h: frames, families, Young's modulus and part scales, Rayleigh and
//   Kelvin-Voigt damping); norms, potentials and line-search quantities are per-environment
//   reductions, of which the host reads a few scalars per evaluation.
// - Masked Newton (core/newton.h): each environment converges, or fails (then its state is
//   left as it was: nothing is written before it converges), on its own; with one environment
//   the loops run unmasked.
// - The linear solve is a policy (EngineSolve): kBatched, every environment's Jacobian gathered
//   from its local Hessians and solved by one batched call (engine/batch_solve.h: banded LU,
//   dense Cholesky/LU or block-Jacobi CG), an environment it cannot take solved by pivoting
//   sparse LU on the host; or kSystem, one environment's CSR Jacobian solved directly or by a
//   Krylov method (engine/system_solve.h).
// - With one environment (kSystem) the front end may hand each step's inputs
//   (StepInputs: the integrator's coefficients, static load steps included, the natural
//   shape under actuation, point loads, prescribed motion, the plan of a new set of held DOFs),
//   and the engine also runs contact between bodies (its pairs found by X's ContactFinder,
//   engine/contact_pipeline.h, their part of J by engine/contact_jacobian.h), energies from the
//   caller's code (stencils/user_energy.h) and, on host executors, the caller's force callback.
// - The batch (kBatched) computes each environment's inputs at its own time: point loads and
//   forces, the scene's motions or the caller's fixed targets, parts' moduli in time, signals,
//   per-environment natural shapes and physical parameters, the scene's boundary events.
// - Which DOFs are held is state (State::dof_fixed), per environment: the front end's plan
//   follows one environment's set (kSystem); the batch keeps one pattern of every DOF some
//   environment leaves free, an environment's held DOFs in it taking identity rows.
//
// The class below declares the engine and defines its small members; the larger ones are
// defined by seam in three files included at the end: its inputs (engine_inputs.h: actions,
// parameters, states, each step's inputs, boundary events, held DOFs, the plan), its evaluation
// (engine_eval.h: the stencils' views, the contact pairs' pools, the residual and Jacobian at q)
// and its Newton step (engine_newton.h: the loop, the directions, the trial states, a step's end).

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "slender/core/env_switch.h"
#include "slender/core/error.h"
#include "slender/core/integrator.h"
#include "slender/core/newton.h"
#include "slender/core/parallel_for.h"
#include "slender/core/reduce4.h"
#include "slender/core/status.h"
#include "slender/engine/assemble.h"
#include "slender/engine/batch_kelvin_voigt.h"
#include "slender/engine/batch_solve.h"
#include "slender/engine/contact_jacobian.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/matrix_free.h"
#include "slender/engine/model_view.h"
#include "slender/engine/simulator_engine.h"
#include "slender/engine/step_eval.h"
#include "slender/engine/strains.h"
#include "slender/engine/system_solve.h"
#include "slender/engine/user_force.h"
#include "slender/model.h"
#include "slender/state.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/rayleigh.h"
#include "slender/stencils/user_energy.h"

namespace slender {

namespace env_major {

/// ground contact and friction with each environment's own friction coefficient and density
/// scale: one (environment, node) per index (EvalStencils<GroundBinding> with mu per
/// environment)
struct EvalGround {
  ModelView m;
  EvalView s;
  long n;
  LocalBuffers<3> out;
  const Real* mu;      // (nenv)
  const Real* params;  // per environment: density scale first, stride 5 (null: 1)
  unsigned want = kGradHess;
  /// node k of environment env with its friction coefficient and density scale
  SLENDER_HD static void local(const ModelView& m,
                               const EvalView& s,
                               int env,
                               long k,
                               unsigned want,
                               const Real* mu,
                               const Real* params,
                               LocalEval<3>& r) {
    GroundBinding::eval_with_friction(m, s, env, k, want, mu[env], r,
                                      params ? params[5 * env] : Real(1));
  }
  SLENDER_HD void operator()(long t) const {
    const int env = int(t / n);
    const long k = t % n;
    LocalEval<3> r;
    local(m, s, env, k, want, mu, params, r);
    out.store(env, k, r, want);
  }
};

/// EvalGround's local Hessians times a vector (or their diagonal blocks' column): the
/// matrix-free Jacobian's ground part (engine/matrix_free.h)
struct GroundProduct {
  ModelView m;
  EvalView s;
  long n;
  HessianProductOut<3> out;
  const Real* mu;      // (nenv)
  const Real* params;  // per environment: density scale first, stride 5 (null: 1)
  SLENDER_HD void operator()(long t) const {
    const int env = int(t / n);
    const long k = t % n;
    LocalEval<3> r;
    EvalGround::local(m, s, env, k, kGradHess, mu, params, r);
    int dof[3];
    GroundBinding::dofs(m, k, dof);
    out.store(env, k, dof, r);
  }
};

/// out[e, free_dof[r]] = -f[e, r]: the negated free residual rows into per-DOF slots
struct NegScatterFree {
  int nfree, ndof;
  const int* free_dof;
  const Real* f;  // (nenv x nfree)
  Real* out;      // (nenv x ndof)
  SLENDER_HD void at(long e, long r) const { out[e * ndof + free_dof[r]] = -f[e * nfree + r]; }
  SLENDER_HD void operator()(long i) const { at(i / nfree, i % nfree); }
};

/// out[e, free_dof[r]] -= alpha[e] dx[e, r] (out holds the step's start)
struct NewtonStep {
  int nfree, ndof;
  const int* free_dof;
  const Real* dx;
  const Real* alpha;  // (nenv)
  Real* out;          // (nenv x ndof)
  SLENDER_HD void at(long e, long r) const {
    out[e * ndof + free_dof[r]] -= alpha[e] * dx[e * nfree + r];
  }
  SLENDER_HD void operator()(long i) const { at(i / nfree, i % nfree); }
};

/// u = a = 0 at (environment, DOF) pairs: the DOFs a fix stops, one pair per index
struct StopDofs {
  long ndof;
  const int* env_dof;  // (n x 2)
  Real* u;             // (nenv x ndof)
  Real* a;             // (nenv x ndof)
  SLENDER_HD void operator()(long j) const {
    const long i = long(env_dof[2 * j]) * ndof + env_dof[2 * j + 1];
    u[i] = 0;
    a[i] = 0;
  }
};

/// per environment: s0 the stencils' energies, s1 the per-DOF potentials (each in index order;
/// the incremental potential is s0 + s1), s2 |f|^2, m0 1 if a stencil is degenerate (kDegenerate
/// among its flags: the step's end counts them only then); max(energy_pool, ndof, nfree) items
struct EvalSums {
  long energy_pool;
  int ndof, nfree;
  const Real* e_pool;
  const Real* dof_phi;
  const Real* f;
  const unsigned* flags;
  SLENDER_HD Red4 operator()(long e, long i) const {
    Red4 r{0, 0, 0, 0};
    if (i < energy_pool) {
      r.s0 = e_pool[e * energy_pool + i];
      r.m0 = (flags[e * energy_pool + i] & kDegenerate) ? Real(1) : Real(0);
    }
    if (i < ndof) r.s1 = dof_phi[e * ndof + i];
    if (i < nfree) {
      const Real v = f[e * nfree + i];
      r.s2 = v * v;
    }
    return r;
  }
};

/// per environment: s0 dx . f, s2 the number of entries of dx that are not finite, m0 max |dx|;
/// s1 the solve's flag (ok: 1 or 0) or its deferred status (status: DirectSolver::solve_deferred's
/// 0, 1 or 2), where one is given
struct SlopeMax {
  int nfree;
  const Real* dx;
  const Real* f;
  const unsigned char* ok = nullptr;  // (nenv) the solve's flags
  const int* status = nullptr;        // (nenv) the solve's deferred status
  SLENDER_HD Red4 operator()(long e, long i) const {
    const Real d = dx[e * nfree + i];
    Real s1 = 0;
    if (i == 0) s1 = status ? Real(status[e]) : ok && ok[e] ? Real(1) : Real(0);
    return Red4{d * f[e * nfree + i], s1, d - d == 0 ? Real(0) : Real(1), ::fabs(d)};
  }
};

/// out[e] = a[e], out[n + e] = b[e] and, with c, out[2 n + e] = c[e]: per-environment
/// reductions side by side, for one read
struct PackSums {
  const Red4* a;
  const Red4* b;
  const Red4* c;
  Red4* out;
  int n;
  SLENDER_HD void operator()(long e) const {
    out[e] = a[e];
    out[n + e] = b[e];
    if (c) out[2 * n + e] = c[e];
  }
};

/// the values of an action array given in the executor's memory that are not finite (s0) and
/// those that are not positive (s1: NaN included), per environment (nenv x len)
struct NonFiniteCount {
  long len;
  const Real* v;
  SLENDER_HD Red4 operator()(long e, long i) const {
    const Real x = v[e * len + i];
    return Red4{is_finite(x) ? Real(0) : Real(1), x > 0 ? Real(0) : Real(1), 0, 0};
  }
};

/// per environment: s0 number of stencils flagged degenerate
struct DegenerateCount {
  long energy_pool;
  const unsigned* flags;
  SLENDER_HD Red4 operator()(long e, long i) const {
    return Red4{(flags[e * energy_pool + i] & kDegenerate) ? Real(1) : Real(0), 0, 0, 0};
  }
};

}  // namespace env_major

/// Per-environment outcome of one vectorized step.
struct VectorStepResult {
  std::vector<StepReport> reports;  // (nenv)
  long degenerate = 0, line_search_warnings = 0, linear_fallbacks = 0;
  VecSolveStats solve;  // the batched linear solves' counters
  /// wall time of the step's phases [s]: eval (every evaluation: frames, stencils, residual,
  /// reductions; the line search's included), solve (the Jacobians' gather, factorization and
  /// solve, fallbacks included), line_search (its trials and evaluations). Each phase ends in a
  /// read of its results on the host, so the times hold on the GPU too.
  PhaseTimes times;
};

/// The scalar parts of an assembly plan: the free rows and the pools' layout (the contact
/// families' grow with the pairs).
struct PlanDims {
  int nfree = 0;
  long energy_pool = 0, grad_pool = 0, hess_pool = 0;
  long e_off[kNumFamilies] = {}, g_off[kNumFamilies] = {}, h_off[kNumFamilies] = {};
  static PlanDims of(const AssemblyPlan& p) {
    PlanDims d;
    d.nfree = p.nfree;
    d.energy_pool = p.energy_pool;
    d.grad_pool = p.grad_pool;
    d.hess_pool = p.hess_pool;
    std::copy(p.e_off, p.e_off + kNumFamilies, d.e_off);
    std::copy(p.g_off, p.g_off + kNumFamilies, d.g_off);
    std::copy(p.h_off, p.h_off + kNumFamilies, d.h_off);
    return d;
  }
};

/// whether the engine's Jacobian is not symmetric: the model's forces (friction, drag,
/// anisotropic RFT), or the midpoint rule's energy-momentum stretching of rods
inline bool engine_nonsymmetric(const Model& m, const IntegratorSpec& spec) {
  return m.nonsymmetric() || (stretch_secant_on(spec) && m.nedge > 0);
}

/// throws slender::Error, saying why, for a model or integrator the vectorized batch cannot run
inline void check_batched_model(const Model& m, const IntegratorSpec& spec) {
  SLENDER_CHECK(!m.contact.enabled,
                "the vectorized batch runs models without contact between bodies (this scene "
                "enables rod/shell contact); use the per-environment batch");
  SLENDER_CHECK(m.user_energies.empty(),
                "the vectorized batch runs the model's own stencil families; this model has "
                "energies from the caller's code (use the per-environment batch)");
  SLENDER_CHECK(spec.kind != IntegratorKind::kStatic,
                "the vectorized batch steps in time; static load stepping needs the "
                "per-environment batch");
}

/// How the engine solves its Newton systems.
enum class EngineSolve {
  kBatched,  ///< every environment's at once (engine/batch_solve.h)
  kSystem,   ///< one environment's CSR system, directly or by Krylov (engine/system_solve.h)
};

/// The engine over an executor X (engine/executor.h: loops and per-environment loops,
/// per-environment reductions, transfers, ModelData, the direct solvers, the contact finder,
/// and the batch's policies kInterleaved, kLanes and kPcgCheckEvery).
template <class X>
class RolloutAdjointOn;

template <class X>
class Engine {
  // the adjoint of a rollout (engine/adjoint.h) linearizes converged steps with the engine's
  // own inputs, evaluation, pools and plan
  friend class RolloutAdjointOn<X>;

 public:
  // the engine's loops (env_major::each_heavy: on the host threaded from kParallelGrainHeavy items)
  template <class F>
  static void each(long n, const F& f) {
    env_major::each_heavy<X>(n, f);
  }
  template <class T>
  using Buffer = typename X::template Buffer<T>;
  // an array the engine only reads, of the model or of the current plan: a copy in X's memory,
  // or, where the host reads X's memory, a view of the host's array (no copy)
  template <class T>
  using Const = typename X::template ConstArray<T>;
  using ContactFinder = typename X::ContactFinder;

  /// every environment starts at `initial` (a Simulator's initial state carries Newmark's
  /// consistent initial acceleration); `solver` as BatchedSimulator (kBatched: auto, banded,
  /// dense, pcg) or the Simulator (kSystem: every LinearSolverKind) take it
  Engine(std::shared_ptr<const Model> model,
         int nenv,
         const IntegratorSpec& spec,
         const State& initial,
         LinearSolverKind solver,
         EngineSolve policy)
      : model_(std::move(model)),
        spec_(spec),
        nenv_(nenv),
        solver_(solver),
        model_arrays_(*model_),
        se_(*model_, nenv) {
    const Model& m = *model_;
    SLENDER_CHECK(nenv >= 1, "a batch needs at least one environment, got ", nenv);
    if (policy == EngineSolve::kBatched) {
      check_batched_model(m, spec);
    } else {
      SLENDER_CHECK(nenv == 1, "one system per Newton iteration: one environment, got ", nenv);
    }
    // the model's arrays where the executor runs (X::ModelData: the host view itself, or the
    // device copy of every array, kernels/device_model.h)
    mv_ = model_arrays_.view();
    dof_mass_.upload(m.dof_mass);
    dof_fixed_.upload(m.dof_fixed);
    fixed_slot_.upload(m.dof_fixed_slot);
    motion_slot_.upload(m.dof_motion_slot);
    node_dl_.upload(m.node_dl);
    node_volume_.upload(m.node_volume);
    if (m.has_added_mass()) node_added_mass_.upload(m.node_added_mass);
    if (m.mass_damping_per_part) dof_alpha_.upload(m.dof_mass_damping);
    parts_scaled_ = !m.youngs_time_part.empty();  // each part's modulus in time
    // (every array of the engine is tallied in engine/memory_tally.h too, from which a batch's
    // memory is estimated before it is allocated: a new one belongs there as well)
    const size_t B = size_t(nenv), nd = size_t(m.ndof);
    for (Buffer<Real>* b :
         {&q_, &u_, &a_, &y_, &y_trial_, &q_hat_, &u_hat_, &f_time_, &dof_r_, &dof_J_, &dof_phi_})
      b->resize(B * nd);
    f_time_.fill_zero();
    d1_.resize(B * 3 * m.nedge);
    t_.resize(B * 3 * m.nedge);
    d1_cur_.resize(B * 3 * m.nedge);
    t_cur_.resize(B * 3 * m.nedge);
    ref_.resize(B * m.nbend);
    ref_cur_.resize(B * m.nbend);
    kappa_.resize(B * 2 * m.nbend);
    tau_.resize(B * m.nbend);
    phi_.resize(B * m.nhinge);
    mid_kappa_.resize(B * 3 * m.nmid);
    stretch_.resize(B * m.nedge);
    for (const ActuatedSpring& a : m.actuated)
      actuated_kind_[a.component <= 1                  ? 0
                     : a.component == 2                ? 1
                     : a.component == 3                ? 2
                     : a.component == kActuatedStretch ? 4
                                                       : 3] = true;
    if (!m.actuated.empty()) {
      // every environment's natural values at rest, where actuate() applies the scene's
      // actuation each step: it resets and drives its springs' components only, so that the
      // others keep these
      for (size_t e = 0; e < size_t(B); ++e) {
        act_kappa_.insert(act_kappa_.end(), m.bend_kappa_bar.begin(), m.bend_kappa_bar.end());
        act_tau_.insert(act_tau_.end(), m.bend_tau_bar.begin(), m.bend_tau_bar.end());
        act_phi_.insert(act_phi_.end(), m.hinge_phi_bar.begin(), m.hinge_phi_bar.end());
      }
      act_mid_.assign(size_t(B) * 3 * m.nmid, 0);
      act_stretch_.assign(size_t(B) * m.nedge, 1);
    }
    tau0_.resize(B * 3 * m.nsedge);
    if (!m.signals.empty()) {  // the signals at t = 0 until a step sets each environment's
      std::vector<Real> sv(B * kMaxSignals);
      for (size_t e = 0; e < size_t(B); ++e)
        eval_signals(m, 0, 1, sv.data() + e * kMaxSignals);
      X::upload(signal_, sv.data(), sv.size());
    }
    active_.resize(B);
    // one environment runs unmasked (the loops of X over the items), several masked
    if (nenv > 1) se_.set_active(active_.data());
    alpha_.resize(B);
    active_h_.assign(B, 0);
    // every environment with the model's ground friction
    mu_h_.assign(B, mv_.ground.mu);
    X::upload(mu_, mu_h_.data(), B);
    friction_.assign(B, m.friction() ? 1 : 0);
    warn_.assign(3 * B, 0);
    // the midpoint rule's and Newmark's energy-consistent contact forces (where there is contact)
    contact_on_ = m.ground.enabled || m.contact.enabled;
    events_done_.assign(B, 0);
    iterated_h_.assign(B, 0);
    pred_red_.resize(B);  // (sized before the first step that reads it with a direction)
    fuse_predictor_read_ = env_switch("SLENDER_FUSED_PREDICTOR_READ", !X::kHostMemory);
    // the solve policy and the model's plan
    if (policy == EngineSolve::kSystem)
      system_ = std::make_unique<stepper::SystemSolveOn<X>>(
          solver, !nonsymmetric(m, spec) && solver != LinearSolverKind::kSparseLu);
    if (system_ && solver == LinearSolverKind::kMatrixFree) {
      check_matrix_free(m);
      matrix_free_ = true;
      system_->set_matrix_free([this](const Real* x, Real* y) { jacobian_product(x, -1, y); },
                               [this](int c, Real* y) { jacobian_product(nullptr, c, y); });
    }
    // (the band's status read with the direction's slope where the predictor's is too)
    if (system_) system_->set_deferred(fuse_predictor_read_);
    use_plan(std::shared_ptr<const AssemblyPlan>(model_, &m.plan));
    if (policy == EngineSolve::kBatched)
      batched_ = std::make_unique<VectorLinearSolve<X>>(*plan_, m.ndof, nenv, solver,
                                                        !nonsymmetric(m, spec));
    if (m.contact.enabled) {
      SLENDER_CHECK(system_, "contact between bodies: one system a step (EngineSolve::kSystem)");
      contacts_ = std::make_unique<ContactFinder>(m);
      // the plan stays the model's (or its held set's); the contact part is assembled apart
      system_->contact_part(m.plan, m.ndof);
    }
    // every environment at the initial state and the model's natural shape
    for (int e = 0; e < nenv; ++e)
      set_state(e, initial);
    clear_natural_shape();
    clear_forces();
  }

  int nenv() const { return nenv_; }
  const Model& model() const { return *model_; }

  /// the model's natural shape (and actuation-free) for every environment
  void clear_natural_shape();
  /// natural curvatures (nenv x nbend x 2), from the host or, with `in_executor`, from the
  /// executor's own memory (a device array on the GPU: copied there, checked there)
  void set_natural_curvature(const Real* k, bool in_executor = false) {
    set_action(kappa_, k, 2 * long(model_->nbend), in_executor, "natural curvature");
  }
  /// natural twists (nenv x nbend) [rad]
  void set_natural_twist(const Real* t, bool in_executor = false) {
    set_action(tau_, t, long(model_->nbend), in_executor, "natural twist");
  }
  /// natural hinge angles (nenv x nhinge) [rad]
  void set_natural_hinge_angle(const Real* phi, bool in_executor = false) {
    set_action(phi_, phi, long(model_->nhinge), in_executor, "natural hinge angle");
  }
  /// actuated natural curvatures of the mid-edge triangles (nenv x nmid x 3), the components
  /// kappa_bar of stencils/shell_midedge.h [1/m]; zero is the rest shape
  void set_natural_midedge_curvature(const Real* c, bool in_executor = false) {
    set_action(mid_kappa_, c, 3 * long(model_->nmid), in_executor, "natural mid-edge curvature");
  }
  /// natural stretch of the rod edges (nenv x nedge) [-]: each edge's natural length is its
  /// rest length times the value (1: the rest shape); every value positive
  void set_natural_stretch(const Real* s, bool in_executor = false) {
    set_action(stretch_, s, long(model_->nedge), in_executor, "natural stretch", true);
  }
  /// the linear solver in use (batch_solve.h's or system_solve.h's names)
  std::string solver_name() const { return system_ ? system_->name() : batched_->name(); }
  /// external forces (nenv x nnode x 3) plus the model's point loads at each step's time
  void set_forces(const Real* f) { forces_.assign(f, f + size_t(nenv_) * 3 * model_->nnode); }
  void clear_forces() { forces_.clear(); }
  /// prescribed motion by the caller: every fixed DOF's value at the end of each following step
  /// (nenv x nfixed, Model::fixed_dof order); they replace the scene's motions until cleared
  void set_fixed_targets(const Real* v) {
    const size_t n = size_t(nenv_) * model_->fixed_dof.size();
    for (size_t j = 0; j < n; ++j)
      SLENDER_CHECK(std::isfinite(v[j]), "fixed-DOF target ", j % model_->fixed_dof.size(),
                    " of environment ", j / model_->fixed_dof.size(), " is not finite");
    X::upload(fixed_target_, v, n);
    user_targets_ = true;
  }
  void clear_fixed_targets() { user_targets_ = false; }
  /// environment e's held DOFs from the next step on (ndof, host, 0 or 1; null: the model's
  /// set), the state left as it is (a State's own set)
  void set_fixed(int e, const unsigned char* fixed) {
    const Model& m = *model_;
    SLENDER_CHECK(e >= 0 && e < nenv_, "environment ", e, " out of range");
    if (!fixed) fixed = m.dof_fixed.data();
    const unsigned char* now = this->fixed(e);
    if (std::equal(now, now + m.ndof, fixed)) return;
    ensure_fixed();
    std::copy(fixed, fixed + m.ndof, fixed_h_.begin() + size_t(e) * m.ndof);
    fixed_stale_ = true;
  }
  /// fixes (fix = true) or releases DOFs of environment e (set_dofs_fixed's checks) from the
  /// next step on: a DOF it newly holds stops now (velocity and acceleration 0) and stays where
  /// it is; a released one keeps its velocity
  void fix_dofs(int e, const std::vector<int>& dofs, bool fix) {
    SLENDER_CHECK(e >= 0 && e < nenv_, "environment ", e, " out of range");
    ensure_fixed();
    std::vector<int> stopped;
    set_dofs_fixed(*model_, dofs, fix, fixed_h_.data() + size_t(e) * model_->ndof, &stopped);
    stop(e, stopped);
    fixed_stale_ = true;
  }
  /// the velocity and acceleration of environment e's DOFs `dofs` become 0 now
  void stop(int e, const std::vector<int>& dofs) {
    if (dofs.empty()) return;
    stop_h_.clear();
    for (int d : dofs)
      stop_h_.insert(stop_h_.end(), {e, d});
    X::upload(stop_, stop_h_.data(), stop_h_.size());
    each(long(dofs.size()), env_major::StopDofs{model_->ndof, stop_.data(), u_.data(), a_.data()});
  }
  /// the twist angles of environment e's rod edges [rad] (velocity: their velocities
  /// [rad/s]) become v (nedge, host) now; the rest of the state stays
  void set_twists(int e, const Real* v, bool velocity) {
    const Model& m = *model_;
    SLENDER_CHECK(e >= 0 && e < nenv_, "environment ", e, " out of range");
    for (int k = 0; k < m.nedge; ++k)
      SLENDER_CHECK(std::isfinite(v[k]), velocity ? "twist velocity" : "twist angle", " of edge ",
                    k, " is not finite (", v[k], ")");
    if (m.nedge > 0)
      X::upload_at(velocity ? u_ : q_, size_t(e) * m.ndof + 3 * size_t(m.nnode), v,
                   size_t(m.nedge));
  }
  /// environment e's held DOFs (ndof, host)
  const unsigned char* fixed(int e) const {
    return fixed_h_.empty() ? model_->dof_fixed.data() : fixed_h_.data() + size_t(e) * model_->ndof;
  }
  /// each environment's factor of each part's Young's modulus (nenv x npart; checked by the
  /// caller); they multiply the parts' moduli in time from the next step on
  void set_part_youngs_scale(const Real* s) {
    part_factor_h_.assign(s, s + size_t(nenv_) * size_t(model_->npart));
    parts_scaled_ = true;
    part_scale_stale_ = true;
  }
  /// back to the factors 1 (the parts' moduli in time, if any, stay)
  void clear_part_youngs_scale() {
    part_factor_h_.clear();
    parts_scaled_ = !model_->youngs_time_part.empty();
    if (!parts_scaled_) se_.clear_part_scales();
    part_scale_stale_ = true;
  }
  /// each environment's value of signal k (nenv, checked by the caller): the load it
  /// multiplies (a pressure chamber's pressure, a wrench's factor) takes it in place of its time
  /// function from the next step on (eval_signals)
  void set_signal_values(int k, const Real* v) {
    SLENDER_CHECK(k >= 0 && k < int(model_->signals.size()), "signal ", k, " out of range");
    if (signal_value_h_.empty()) {
      signal_value_h_.assign(size_t(nenv_) * kMaxSignals, 0);
      signal_set_h_.assign(size_t(nenv_) * kMaxSignals, 0);
    }
    for (int e = 0; e < nenv_; ++e) {
      signal_value_h_[size_t(e) * kMaxSignals + size_t(k)] = v[e];
      signal_set_h_[size_t(e) * kMaxSignals + size_t(k)] = 1;
    }
  }
  /// back to the signals' time functions
  void clear_signal_values() {
    signal_value_h_.clear();
    signal_set_h_.clear();
  }
  /// the caller's state-dependent force (core/force.h; one environment on a host executor),
  /// evaluated with every residual; an empty function removes it. symmetric = false: its
  /// Jacobian may be non-symmetric (LU from then on)
  void set_force_callback(ForceCallback fn, bool symmetric) {
    if constexpr (X::kHostMemory) {
      SLENDER_CHECK(!fn || system_, "force callbacks run with one environment");
      SLENDER_CHECK(!fn || !matrix_free_,
                    "a force callback adds its Jacobian to the assembled matrix, and the "
                    "matrix-free solver assembles none: use --solver pcg (or a direct solver)");
      force_.fn = std::move(fn);
      if (force_ && !symmetric) system_->make_nonsymmetric();
    } else {
      SLENDER_CHECK(!fn, "force callbacks run on the CPU backend only; this simulator runs on ",
                    "CUDA");
    }
  }
  /// synchronize the executor at phase boundaries so that PhaseTimes splits frames, evaluation
  /// and assembly (off: they are counted together under eval)
  void set_phase_timing(bool on) { phase_timing_ = on; }

 private:
  // an action array of len values per environment into dst; one in the executor's memory is
  // checked there first (one reduction: a non-finite value is an error naming its environment,
  // and dst stays as it was), then copied on the executor
  void set_action(Buffer<Real>& dst,
                  const Real* src,
                  long len,
                  bool in_executor,
                  const char* what,
                  bool positive = false);

 public:
  /// physical parameters of one environment
  void set_params(int e, const EnvParams& p);
  const EnvParams& params(int e) const {
    static const EnvParams defaults;
    return env_params_.empty() ? defaults : env_params_[e];
  }

  /// environment e's arrays of s (q, u, a, frames, reference twists, mid-edge frame vectors)
  void set_arrays(int e, const State& s) {
    SLENDER_CHECK(e >= 0 && e < nenv_, "environment ", e, " out of range");
    check_state(s);
    for (const auto& p : state_parts(*this, s))
      X::upload_at(*p.buf, size_t(e) * size_t(p.len), p.v->data(), size_t(p.len));
  }
  /// environment e's state: its arrays, time, step count and warning counters
  void set_state(int e, const State& s) {
    set_arrays(e, s);
    set_counters(e, s);
  }
  /// every environment with mask[e] set takes state s: s is uploaded once and copied into them
  /// by one masked loop per array (no transfer per environment)
  void reset(const std::vector<unsigned char>& mask, const State& s);
  /// every environment's strains of one kind (nenv x count x width, engine/strains.h) into out
  /// (host): one loop on the executor and one download
  void strains(StrainKind kind, Real* out) {
    const long n = strain_count(mv_, kind), w = strain_width(kind), total = long(nenv_) * n;
    if (total == 0) return;
    // the state's frames are those of its configuration
    const EvalView ev = eval_view(q_.data(), d1_.data(), ref_.data());
    strains_.resize(size_t(total * w));
    each(total, env_major::Strains{mv_, ev, kind, n, strains_.data()});
    X::download_at(strains_, 0, out, size_t(total * w));
  }
  /// every environment's bend-twist strains (nenv x nbend x 3)
  void bend_strains(Real* out) { strains(StrainKind::kBendTwist, out); }
  /// environment e's arrays into s (time, step and counters left as they are)
  void get_arrays(int e, State& s) const {
    for (const auto& p : state_parts(*this, s))
      X::download_at(*p.buf, size_t(e) * size_t(p.len), p.v->data(), size_t(p.len));
  }
  void get_state(int e, State& s) const {
    s = initial_state(*model_);
    get_arrays(e, s);
    s.time = time_[e];
    s.step = steps_[e];
    s.warn_degenerate = warn_[3 * e];
    s.warn_linear_fallback = warn_[3 * e + 1];
    s.warn_line_search = warn_[3 * e + 2];
    set_state_fixed(*model_, fixed(e), s);
    s.events_done = events_done_[e];
  }
  const Buffer<Real>& q() const { return q_; }
  const Buffer<Real>& u() const { return u_; }
  const std::vector<Real>& times() const { return time_; }

  /// one step of size dt for every environment in `mask` (all when empty), each from its own
  /// time with its own inputs (the batch)
  VectorStepResult step(Real dt, const std::vector<unsigned char>& mask = {});

  /// the step's inputs of size dt for every environment in `want` at its own time (step's
  /// first part; the adjoint, engine/adjoint.h, takes them again to linearize a step)
  void step_inputs(const std::vector<unsigned char>& want, Real dt);

  /// one step of the only environment with the front end's inputs (the Simulator: its
  /// coefficients, natural shape, loads, part scales, prescribed motion and plan); on failure
  /// the state is unchanged. The counters of `times` and `warn` are added to.
  StepReport step_with(const StepInputs& in, PhaseTimes& times, StepWarnings& warn) {
    take_inputs(in);
    VectorStepResult res;
    newton_step(EnvMask(1, 1), res, times);
    warn.degenerate += res.degenerate;
    warn.linear_fallback += res.linear_fallbacks;
    warn.line_search += res.line_search_warnings;
    return res.reports[0];
  }

  /// the free-DOF residual of a step with these inputs from the current state, at the
  /// configuration y (ndof, host memory), into f (nfree); with `jacobian`, also its Jacobian,
  /// dense and row-major (nfree x nfree). The state is unchanged. (One environment, kSystem.)
  void residual(const StepInputs& in,
                const Real* y,
                std::vector<Real>& f,
                std::vector<Real>* jacobian);

  /// the contact sub-pairs of a step of size dt from the state (one environment), and where
  /// they changed (always on the first call) the contact part's pattern (engine/system_solve.h)
  void find_contacts(Real dt);

  // ---- queries of the state (engine/engine_queries.h) ------------------------------------------
  // Each evaluates the stencils once at every environment's state (its configuration and
  // frames; no velocity terms), scaled as a step scales them, with the inputs `in` of the
  // state's time (the natural shape, part scales and signals; c.t_eval the state's time,
  // c.load_factor its signals' factor; the loads in f_time where `loads_changed`), and reduces
  // on the executor. Contact acts through the pairs the last step found.

  /// every environment's energies by kind (nenv)
  std::vector<Energies> energies(const StepInputs& in);
  /// ... each at its own time with the batch's inputs there (its actuation, part scales,
  /// signals, and the caller's actions in effect)
  std::vector<Energies> energies();
  /// the support reactions (nenv x ndof, host): at every held DOF, grad E - F of the static
  /// problem (the internal forces of the families in the reactions and of the caller's
  /// energies, against gravity and buoyancy, the loads in `in` and the caller's force); 0 at
  /// the free DOFs
  void reactions(const StepInputs& in, Real* out);
  /// every triangle's shell bending energy per rest area (nenv x ntri, host): half of each
  /// adjacent hinge's energy and its mid-edge stencil's
  void shell_bending_energy_density(const StepInputs& in, Real* out);
  /// Newmark's consistent initial acceleration of every environment into its state's a on the
  /// free DOFs: M a = F(q, u) - grad E(q), with the loads of `in` whole and the
  /// energy-consistent contact forces left out
  void newmark_start(const StepInputs& in);
  /// whether the steps take inexact Newton (NewtonSpec::inexact, and an iterative solve)
  bool inexact_newton() const { return inexact(); }

 private:
  // the per-DOF functors' stride: ndof over env-major arrays, 0 for one environment (their
  // plain form, without a division per DOF)
  long env_stride() const { return nenv_ > 1 ? model_->ndof : 0; }

  using Clock = std::chrono::steady_clock;
  static double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  // the front end's inputs of a step (one environment): the plan, the natural shape, loads,
  // part scales, prescribed motion, the coefficients and the signals at the evaluation time
  void take_inputs(const StepInputs& in);
  // the scene's actuation of every environment at its time t[e], uploaded for the kinds no
  // action replaces
  void actuate_at(const std::vector<Real>& t);
  // every environment's inputs at its time t[e] with the loads' factor lf[e]: the parts' scales
  // (with `scales`), the signals and the scene's actuation (step_inputs' at the evaluation
  // times, inputs_at_state's at the state's)
  void inputs_at(const std::vector<Real>& t, const std::vector<Real>& lf, bool scales);
  // the inputs of a query of every environment's state at its own time (the batch's): the
  // parts' scales, the signals and the scene's actuation there; the next step computes its own
  void inputs_at_state();
  // the kind of natural value a natural-shape buffer holds (actuated_kind_'s index)
  int natural_kind_of(const Buffer<Real>& b) const;

  // the predictor q_hat, u_hat of every environment from its state, and the damping terms'
  // start of the step: the elastic Hessians at q, the Kelvin-Voigt anchors
  void predict() {
    const Model& m = *model_;
    Predict pr{spec_.kind,   dt_,        spec_.beta,   spec_.gamma,        q_.data(),
               u_.data(),    a_.data(),  fixed_ptr(),  q_hat_.data(),      u_hat_.data(),
               env_stride(), step_slot_, step_target_, step_target_stride_};
    pr.fixed_per_env = fixed_per_env_;
    each(long(nenv_) * m.ndof, pr);
    if (m.stiffness_damping)
      se_.keep_start_stiffness(mv_, pools(), frames(), step_eval_view(q_.data()));
    if (m.kelvin_voigt && c_.c_u > 0) se_.keep_kv_anchors(mv_, frames(), step_eval_view(nullptr));
  }

  // Newton's iterations of every environment in `want` (the loop of every engine,
  // core/newton.h, masked) from the predictor, and the end of the steps that converged
  void newton_step(const EnvMask& want, VectorStepResult& res, PhaseTimes& times);

  // the stencils of every environment at its state into the pools (want: kEnergy, kGrad),
  // with the velocity terms of the state where `newmark` (q_hat = q, u_hat = u), else none;
  // the view it used in query_view_
  void eval_at_state(const StepInputs& in, unsigned want, bool newmark);
  // ... with the inputs in place (dt: the step size whose contact coefficients Newmark's start
  // leaves out)
  void eval_state(unsigned want, bool newmark, Real dt);
  // the energies of the evaluation at the state, its inputs in place
  std::vector<Energies> energies_of_state();

  // every environment's evaluation view at configuration q with reference directors d1 and
  // twists ref (each environment's own natural shape; no integrator offsets)
  EvalView eval_view(const Real* q, const Real* d1, const Real* ref);

  // the view of a step's evaluation at q (its frames from frames_at(q)): the integrator's
  // offsets and du/dq for the ground's friction
  EvalView step_eval_view(const Real* q);

  // the arrays of one environment's state: where each lives here (env-major), in a State, and
  // its length per environment (E: this engine, const or not; S: a State, const or not)
  template <class E, class S>
  static auto state_parts(E& en, S& s) {
    const Model& m = *en.model_;
    using Buf = std::remove_pointer_t<decltype(&en.q_)>;
    using Vec = std::remove_pointer_t<decltype(&s.q)>;
    struct Part {
      Buf* buf;
      Vec* v;
      long len;
    };
    return std::array<Part, 7>{{{&en.q_, &s.q, m.ndof},
                                {&en.u_, &s.u, m.ndof},
                                {&en.a_, &s.a, m.ndof},
                                {&en.d1_, &s.edge_d1, 3L * m.nedge},
                                {&en.t_, &s.edge_t, 3L * m.nedge},
                                {&en.ref_, &s.bend_ref_twist, m.nbend},
                                {&en.tau0_, &s.sedge_tau0, 3L * m.nsedge}}};
  }

  void check_state(const State& s) const {
    SLENDER_CHECK(state_fits(*model_, s), "state does not match the model's sizes");
  }
  // environment e's time, step count and warning counters from s
  void set_counters(int e, const State& s) {
    if (int(time_.size()) != nenv_) time_.assign(nenv_, 0);
    if (int(steps_.size()) != nenv_) steps_.assign(nenv_, 0);
    time_[e] = s.time;
    steps_[e] = s.step;
    warn_[3 * e] = s.warn_degenerate;
    warn_[3 * e + 1] = s.warn_linear_fallback;
    warn_[3 * e + 2] = s.warn_line_search;
    events_done_[e] = s.events_done;
    set_fixed(e, state_fixed(*model_, s));
  }

  // every environment with the model's parameters (before the first set_params)
  void ensure_params();

  // ---- plan, pairs ----------------------------------------------------------------------------

  // the assembly plan (the model's, or one with the contact pairs): the pools' layout, the
  // residual's sources, and the solve policy's pattern
  void use_plan(std::shared_ptr<const AssemblyPlan> plan);

  // ---- held DOFs --------------------------------------------------------------------------------

  // the held DOFs the step's functors read: each environment's where any differs from the
  // model's, else the model's
  const unsigned char* fixed_ptr() const {
    return fixed_per_env_ ? fixed_env_.data() : dof_fixed_.data();
  }

  // a host copy of every environment's held DOFs (before the first change)
  void ensure_fixed() {
    if (!fixed_h_.empty()) return;
    const Model& m = *model_;
    fixed_h_.resize(size_t(nenv_) * m.ndof);
    for (int e = 0; e < nenv_; ++e)
      std::copy(m.dof_fixed.begin(), m.dof_fixed.end(), fixed_h_.begin() + size_t(e) * m.ndof);
  }

  // the scene's boundary events due before a step of size dt of each environment in `want`
  void apply_events(const EnvMask& want, Real dt);

  // the held DOFs on the executor after a change; the batch's plan covers every DOF that some
  // environment leaves free (the environments that hold one of them take the identity's row
  // and column there), and is the model's where every environment holds the model's set (one
  // environment: the front end's plan follows its set)
  void refresh_fixed();

  // the view reads the pipeline's current lists (valid until its next find)
  void point_view_at_pairs();

  // the pools' contact families for the pipeline's current pairs (the static families keep the
  // model plan's layout; the contact families are the last two); pools grow, never shrink
  void size_contact_pools();

  // ---- evaluation ------------------------------------------------------------------------------

  void sync_phase() {
    if (phase_timing_) X::sync();
  }

  // every environment's pools (the step's evaluation: engine/step_eval.h), without Hessians
  // unless `hess`
  EnvPools pools(bool hess = true) {
    return EnvPools{e_pool_.data(), g_pool_.data(),  hess ? h_pool_.data() : nullptr,
                    flags_.data(),  pd_.energy_pool, pd_.grad_pool,
                    pd_.hess_pool,  pd_.e_off,       pd_.g_off,
                    pd_.h_off};
  }
  StepFrames frames() {
    return StepFrames{d1_.data(),     t_.data(),     ref_.data(),
                      d1_cur_.data(), t_cur_.data(), ref_cur_.data()};
  }

  // every active environment's directors and reference twists moved from its step's start to
  // q (into d1_cur_, t_cur_, ref_cur_)
  void frames_at(const Real* q) { se_.frames_at(mv_, frames(), q); }

  // ground contact and friction, each environment with its own coefficient
  void eval_ground(const EvalView& ev, unsigned want) {
    const long n = GroundBinding::count(mv_);
    if (n == 0) return;
    const LocalBuffers<3> buf = pools().template family<3>(kFamGround, n);
    se_.run(n,
            env_major::EvalGround{mv_, ev, n, buf, mu_.data(), scaled_ ? params_.data() : nullptr,
                                  want},
            kParallelGrainHeavy);
  }

  // the energies from the caller's code (stencils/user_energy.h) at the view's configuration,
  // into their parts of the pools (unscaled; one environment)
  void eval_user_energies(const EvalView& ev, unsigned want) {
    const std::vector<std::shared_ptr<const UserEnergy>>& us = model_->user_energies;
    if (us.empty()) return;
    const AssemblyPlan& p = *plan_;
    for (size_t i = 0; i < us.size(); ++i)
      us[i]->evaluate(UserEnergyArgs{!X::kHostMemory, mv_, ev, want,
                                     e_pool_.data() + p.user_e_off[i],
                                     g_pool_.data() + p.user_g_off[i],
                                     (want & kHess) ? h_pool_.data() + p.user_h_off[i] : nullptr,
                                     flags_.data() + p.user_e_off[i]});
  }

  // every family's stencils at the view's configuration into the pools, scaled (Young's
  // modulus, parts), and the energies from the caller's code
  void eval_families(const EvalView& ev, unsigned want);
  // the matrix-free Jacobian at the last evaluation with one (engine/matrix_free.h): y = J x
  // over the free rows (column < 0), or column `column` (0, 1, 2) of every diagonal block's
  // rows into y (x unread)
  void jacobian_product(const Real* x, int column, Real* y);
  // every family's local Hessians at jac_q_ times prod_x_ (column < 0) or their diagonal
  // blocks' column into prod_pool_, scaled as the elastic families' gradients are
  void hessian_products(int column);
  // what the matrix-free solver cannot take: refused with the reason
  void check_matrix_free(const Model& m) const;
  // the per-DOF terms at configuration q with the integrator's coefficients c_m, c_u and the
  // loads' factor (inertia, weight and buoyancy, drag, damping, the point loads of f_time_)
  DofTerms dof_terms_at(const Real* q, Real c_m, Real c_u, Real load_factor);
  // the free rows' residual f from the per-DOF terms and the gradient pool (the rows an
  // environment holds zeroed, the contact part the solve policy assembles added)
  void residual_rows();

  // residual norms and potentials at q (env-major) for the active environments (active_, as
  // uploaded last), with the Jacobians' local parts (and, on the kSystem path, the assembled
  // Jacobian) when `hess`; the pools, residuals and frames of the other environments are left
  // alone
  void evaluate(const Real* q, std::vector<Real>& r, std::vector<Real>& phi, bool hess);
  // evaluate's two halves: the stencils, the residual and the Jacobian at q (the phases'
  // clock, started), then, from the per-environment sums `s` (env_major::EvalSums, which the
  // caller reduced), the residual norms and potentials (s null: the phase's time alone)
  Clock::time_point evaluate_begin(const Real* q, bool hess);
  env_major::EvalSums eval_sums() const;
  long eval_sums_len() const;
  void evaluate_end(Clock::time_point t0,
                    const Red4* s,
                    std::vector<Real>& r,
                    std::vector<Real>& phi);
  // the residual norms and potentials of the environments in mask from their sums s
  void take_sums(const EnvMask& mask, const Red4* s, std::vector<Real>& r, std::vector<Real>& phi);

  // ---- Newton directions -----------------------------------------------------------------------

  // active_ on the executor = active_h_, uploaded only when it changed (most Newton iterations
  // and line-search trials keep the same environments: a host transfer saved on the GPU)
  void push_active() {
    if (active_dev_h_ == active_h_) return;
    X::upload(active_, active_h_.data(), size_t(nenv_));
    active_dev_h_ = active_h_;
  }

  // the Newton directions of the running environments (their slopes and max |dx|) and each
  // one's full step evaluated, its residual norm and potential in r_new and phi_new: the
  // directions' and the trials' reductions read in one transfer, where they took two (a trial
  // whose direction failed is evaluated and ignored: newton_iterations' direction)
  void directions_and_trials(const EnvMask& running,
                             std::vector<NewtonDirection>& d,
                             std::vector<Real>& r_new,
                             std::vector<Real>& phi_new,
                             VectorStepResult& res);
  // the only environment (kSystem): dx = J^-1 f by the solve policy (a failed solve takes no
  // trial; a non-finite dx fails the direction, as the CPU's solve does)
  void system_direction_and_trial(std::vector<NewtonDirection>& d,
                                  std::vector<Real>& r_new,
                                  std::vector<Real>& phi_new);
  // the batch: one batched solve, the slopes with its flags; an environment the batched solve
  // could not take is evaluated at its iterate again (its trial took the residual and the
  // Jacobian's place), solved by pivoting LU, and its trial evaluated again
  void batch_direction_and_trial(const EnvMask& running,
                                 std::vector<NewtonDirection>& d,
                                 std::vector<Real>& r_new,
                                 std::vector<Real>& phi_new,
                                 VectorStepResult& res);
  // the full steps of the environments in `mask` evaluated (r_new, phi_new), their sums read
  // with the slopes the caller reduced into slope_red_ (nenv of them), which this returns (the
  // host's copy, pack_h_), and with the predictor's sums where they are pending
  Red4* full_step_trials(const EnvMask& mask, std::vector<Real>& r_new, std::vector<Real>& phi_new);
  // the linear fallbacks (fallback: the directions' solves', per environment; and, one system,
  // the factorizations) counted for the environments in mask: those whose directions the Newton
  // loop takes
  void count_directions(const EnvMask& mask,
                        const std::vector<unsigned char>& fallback,
                        VectorStepResult& res);

  // ---- the predictor's sums read with the first direction's ------------------------------------
  // A step evaluates its predictor, whose residual norm decides whether Newton iterates at all,
  // then each iteration reads a direction's slope with its full step's sums (one host read an
  // iteration: full_step_trials). Where the executor reads across a bus, the first direction of
  // the environments likely to iterate (those whose last two steps did) is taken before the
  // predictor's sums are read, and they travel with the first iteration's: a step of one
  // iteration reads the host once. An environment that turns out converged (or failed) at its
  // predictor ignores its direction and its trial, and is evaluated at its predictor again at
  // the step's end (no read: its sums and degenerate flags are the predictor's), so that the
  // step leaves the pools and flags its plain run leaves: the iterates, states and reports are
  // the same bits either way (tests/cpu/predictor_read_test.cpp). Not on an
  // iterative one-system solve (its Krylov loop reads the host anyway, and the multigrid counts
  // its solves), nor with the caller's force (a host executor's: called at every evaluation).
  // With it, a band's solve leaves its status for the same read (SystemSolveOn::set_deferred).
  // SLENDER_FUSED_PREDICTOR_READ=1 or 0 forces both on or off (default: on where X's memory is
  // not the host's).
  EnvMask fused_first_mask(const EnvMask& want) const;
  // inexact Newton (NewtonSpec::inexact, with an iterative solve): the relative residual to which
  // the next Newton directions of the environments in `now` are solved (newton_forcing), from
  // their residual norms r (the current iterates'; null: the step's first directions, taken
  // before the predictor's norm is read) and reps' first norms; a direction's norm is kept for
  // the next one. off (the default): the solvers' own kKrylovRelTol
  bool inexact() const;
  void set_forcing(const EnvMask& now, const std::vector<Real>* r, const StepReport* reps);
  void clear_forcing();
  // per environment: the norm at its last direction this step (0: none yet; -1: the step's
  // first norm, not read when that direction was taken) and the forcing set for it
  std::vector<Real> forcing_r_, forcing_eta_;
  // the predictor's sums, when pending, read on their own (a first direction that failed
  // before its trial), into the step's r and phi
  void read_pending_predictor();
  // the predictor's sums s (read) into the step's r and phi, and its degenerate flags kept
  void take_predictor_sums(const Red4* s);
  // the active environments evaluated at their iterates y_ again, the Jacobian too, where their
  // sums there are known (the trial's evaluation took the pools' and the residual's place):
  // nothing read
  void evaluate_again();
  bool fuse_predictor_read_ = false;
  bool pred_pending_ = false;
  EnvMask pred_mask_;  // the environments the predictor was evaluated for
  // the step's residual norms and potentials, which its sums fill when read
  std::vector<Real>* pred_r_ = nullptr;
  std::vector<Real>* pred_phi_ = nullptr;
  Buffer<Red4> pred_red_;  // its sums, left on the executor
  // per environment: how many of its last steps in a row took a Newton iteration (up to 255)
  std::vector<unsigned char> iterated_h_;
  std::vector<unsigned char> pred_degenerate_;  // the predictor's degenerate flags (take_sums')
  // dx[e] = J_e^-1 f[e] by sparse LU on the host from environment e's local Hessians (the
  // pivoting fallback of the batched solve); false when even that fails
  bool pivoting_solve(int e);

  // y_trial = y - alpha dx for the environments in mask
  void trial(const std::vector<unsigned char>& mask, const std::vector<Real>& alpha);

  // y = y_trial for the environments in mask
  void accept(const EnvMask& mask) {
    const Model& m = *model_;
    active_h_ = mask;
    push_active();
    if (nenv_ == 1) return std::swap(y_, y_trial_);  // (no copy)
    se_.copy(y_.data(), y_trial_.data(), m.ndof);
  }

  // whether the Jacobian is not symmetric: the model's forces, or the midpoint rule's
  // energy-momentum stretching of rods (stencils/rod_stretch.h)
  static bool nonsymmetric(const Model& m, const IntegratorSpec& spec) {
    return engine_nonsymmetric(m, spec);
  }

  // ---- the end of the converged steps ----------------------------------------------------------

  // Newmark's energy-consistent contact (core/integrator.h, contact_step_coeffs): the contact
  // forces w F of the converged steps (the active environments), per DOF, for the finalize to
  // keep their impulse out of the stored acceleration. They are the residual's contact part: the
  // residual without it at y is r0 = c_m M (y - q_hat) + grad E - F, and with it r0 + w F = 0 to
  // Newton's tolerance, so w F = -r0 on the free DOFs (exact to the tolerance the step converged
  // to, as the stored acceleration c_m (y - q_hat) itself).
  void newmark_contact_force(FinalizeStep& fin);
  // nenv x ndof zeros (a source for copies)
  const Real* zero_dofs() {
    const size_t n = size_t(nenv_) * size_t(model_->ndof);
    if (zeros_.size() != n) {
      zeros_.resize(n);
      zeros_.fill_zero();
    }
    return zeros_.data();
  }

  void finalize(const std::vector<unsigned char>& done, VectorStepResult& res);

  std::shared_ptr<const Model> model_;
  IntegratorSpec spec_;
  int nenv_;
  LinearSolverKind solver_;             // the caller's choice (the batched solve's, again for a
                                        // new plan)
  typename X::ModelData model_arrays_;  // after model_: built from it
  ModelView mv_{};                      // the model's view plus this step's contact pairs
  StepEval<X> se_;                      // the step's stencil evaluation, scales and damping terms
  // the plan in use (its pattern on the host) and its pools' dimensions
  std::shared_ptr<const AssemblyPlan> plan_;
  PlanDims pd_;
  // the solve policy: one of them
  std::unique_ptr<VectorLinearSolve<X>> batched_;
  std::unique_ptr<stepper::SystemSolveOn<X>> system_;
  StepCoeffs c_;
  // the energy-consistent contact forces of this step (none: a = 0), where there is contact;
  // the contact's weight set to 0 for one evaluation (Newmark's finalize), the per-DOF contact
  // forces and zeros
  ContactStepCoeffs contact_step() const {
    return contact_on_ ? contact_step_coeffs(spec_, dt_) : ContactStepCoeffs{};
  }
  bool contact_on_ = false;
  bool contact_secant_off_ = false;
  Buffer<Real> contact_force_, zeros_;
  Real dt_ = 0;  // this step's
  PhaseTimes* times_ = nullptr;
  bool phase_timing_ = false;
  std::vector<Real> forces_, time_;
  std::vector<Real> ft_scratch_;   // the loads of a step on the host
  std::vector<Real> sig_scratch_;  // the signals of a step on the host
  // the caller's signal values (set_signal_values) and where they apply (nenv x kMaxSignals
  // each), or empty
  std::vector<Real> signal_value_h_;
  std::vector<unsigned char> signal_set_h_;
  // prescribed motion: the model's slot maps, the caller's targets (nenv x nfixed), the scene's
  // motions' of this step (nenv x nmoved, from tv_scratch_) or the front end's (target_), and
  // this step's choice
  Const<int> fixed_slot_, motion_slot_;
  Buffer<Real> fixed_target_, motion_target_, target_;
  bool user_targets_ = false;
  std::vector<Real> tv_scratch_;
  const int* step_slot_ = nullptr;
  const Real* step_target_ = nullptr;
  long step_target_stride_ = 0;
  Buffer<Real> strains_;  // bend_strains' results on the executor
  // the queries' (engine_queries.h): their view, the bend-twist split, the reactions' sorted
  // keys and sources and results, each triangle's hinges and mid-edge stencil, the densities
  EvalView query_view_{};
  Buffer<Real> bt_split_, reac_, shell_density_;
  Buffer<std::uint64_t> reac_key_;
  Buffer<int> reac_src_, shell_src_;
  X xq_;  // (its sorts keep their scratch)
  // reset: which environments take the state, and one array of it at a time
  Buffer<unsigned char> reset_mask_;
  Buffer<Real> reset_src_;
  bool loads_zero_ = false;  // f_time_ holds zeros (no loads last step)
  std::vector<unsigned char> active_h_;
  // what active_ and alpha_ hold on the executor (uploads only on change)
  std::vector<unsigned char> active_dev_h_;
  std::vector<Real> alpha_dev_h_;
  // model arrays the view does not hold
  Const<Real> dof_mass_, node_dl_, node_volume_, dof_alpha_, node_added_mass_;
  // each part's Young's modulus scale (in time, times the caller's factors): per environment
  std::vector<Real> part_factor_h_, ps_scratch_;  // the caller's factors (nenv x npart) or empty
  bool parts_scaled_ = false;
  bool part_scale_stale_ = false;  // the caller's factors changed since the last upload
  Const<unsigned char> dof_fixed_;
  // the held DOFs (State::dof_fixed): each environment's on the host (nenv x ndof; empty:
  // every environment's are the model's), on the executor where any differs from the model's
  // (fixed_env_), whether that copy is behind the host's, and whether some environment holds a
  // DOF of the plan's pattern (its rows are the identity's); the scene's events applied
  std::vector<unsigned char> fixed_h_;
  Buffer<unsigned char> fixed_env_;
  bool fixed_per_env_ = false, fixed_stale_ = false, held_ = false;
  // one system without a front end (the rollout adjoint): the engine takes the plan of each new
  // set of held DOFs itself
  bool plans_follow_fixed_ = false;
  std::vector<int> events_done_;
  std::vector<int> stop_h_;  // (environment, DOF) pairs a fix stops
  Buffer<int> stop_;
  Const<int> free_dof_, row_src_adr_, row_src_;
  // state and workspace
  Buffer<Real> q_, u_, a_, y_, y_trial_, q_hat_, u_hat_, f_time_, dof_r_, dof_J_, dof_phi_;
  Buffer<Real> f_, dx_;
  Buffer<Real> d1_, t_, d1_cur_, t_cur_, ref_, ref_cur_, kappa_, tau_, phi_, mid_kappa_, tau0_;
  Buffer<Real> stretch_;  // the rod edges' natural stretch (nenv x nedge)
  // the scene's actuation (Model::actuated) in the batch, at each environment's evaluation
  // time (apply_scene_actuation), of the kinds of natural value (curvature, twist, hinge angle,
  // mid-edge curvature, stretch: natural_kind_of) that it drives and no action replaces
  static constexpr int kNaturalKinds = 5;
  bool actuated_kind_[kNaturalKinds] = {}, action_kind_[kNaturalKinds] = {};
  std::vector<Real> act_kappa_, act_tau_, act_phi_, act_mid_, act_stretch_;  // (host, nenv x ...)
  std::vector<int> act_row_;
  std::vector<Real> act_w_;
  // each environment's evaluation time and loads' factor (a step's, or the state's for a query)
  std::vector<Real> eval_t_, eval_lf_;
  Buffer<Real> signal_;  // the model's signals at each environment's evaluation time (nenv x 8)
  Buffer<Real> e_pool_, g_pool_, h_pool_;
  Buffer<unsigned> flags_;
  // the matrix-free Jacobian (LinearSolverKind::kMatrixFree: no h_pool_, no CSR values): the
  // stencils' Hessian products (the gradient pool's layout), the vector of every DOF they
  // multiply, and the iterate of the last evaluation with a Jacobian, at which they evaluate
  bool matrix_free_ = false;
  Buffer<Real> prod_pool_, prod_x_;
  const Real* jac_q_ = nullptr;
  Buffer<unsigned char> active_;
  std::vector<unsigned char> ok_h_, fallback_h_;  // the last solve's outcome (nenv)
  // each environment's warning counters: degenerate, linear fallback, line search (nenv x 3)
  std::vector<long> warn_;
  Buffer<Real> alpha_;
  Buffer<Red4> red_scratch_;
  std::vector<Red4> sums_;  // per-environment reductions read on the host
  // the directions' slopes and the trials' sums left on the executor, and both packed for one
  // read (full_step_trials)
  Buffer<Red4> slope_red_, eval_red_, pack_red_;
  std::vector<Red4> pack_h_;
  // per environment: whether its last evaluation flagged a degenerate stencil (EvalSums's m0)
  std::vector<unsigned char> degenerate_seen_;
  // per-environment parameters (set_params): density scale, gravity, damping; Young's scale
  bool scaled_ = false;
  std::vector<Real> params_h_, yscale_h_;
  std::vector<EnvParams> env_params_;
  Buffer<Real> params_;
  // ground friction coefficient of each environment, and whether friction acts in it (then the
  // line search goes by the residual only)
  std::vector<Real> mu_h_;
  Buffer<Real> mu_;
  std::vector<unsigned char> friction_;
  std::vector<long> steps_;
  // contact pairs, found on the executor (their part of J: the solve policy's)
  std::unique_ptr<ContactFinder> contacts_;
  UserForce force_;  // the caller's force (host executors, one environment)
  // the pivoting fallback for an environment whose band has too small a pivot
  std::unique_ptr<cpu::LinearSolver> fallback_;
  std::vector<Real> fb_h_, fb_dofJ_, fb_f_, fb_dx_;
};

}  // namespace slender

// the members defined by seam (declared in the class above)
#include "slender/engine/engine_eval.h"
#include "slender/engine/engine_inputs.h"
#include "slender/engine/engine_newton.h"
#include "slender/engine/engine_queries.h"
