#pragma once

// The vectorized batched Newton step: B environments of one model advanced together, every
// loop over (environment, item) at once, so that the same code runs on the CPU (HostExecutor,
// host/batch/vector_engine.cpp) and on the GPU (the CUDA executor, kernels/vector_batch.cu).
//
// - State and workspace are env-major flat arrays (q[env * ndof + i]); the model is shared.
// - Every stencil family, the per-DOF terms and the assembly run over all active environments;
//   each environment's Jacobian is gathered from its local Hessians and solved by the batched
//   linear solve of include/slender/engine/batch_solve.h (banded LU, dense Cholesky/LU or PCG, one
//   call per Newton iteration for all environments).
// - Masked Newton: the host keeps each environment's scalars (residual norms, potentials, line
//   search state) and the kernels skip environments that are done; an environment converges,
//   or fails (then its state is left as it was: nothing is written before it converges), on its
//   own. The Newton loop is that of every engine (core/newton.h, which the Simulator's stepper
//   runs with one environment), so a batch reproduces single runs.
// Scope: rods, shells (hinge and mid-edge bending, whose frame vectors tau0 are refreshed per
// environment after each step as the Simulator does) and rod-shell structures, without contact
// pairs between bodies and without scene actuation; ground contact and friction (a friction
// coefficient per environment), RFT and aerodynamic drag, point loads, per-environment natural
// curvature, twist and hinge angles, external forces and physical parameters; Rayleigh damping
// (part alphas, beta), Kelvin-Voigt damping (batch_kelvin_voigt.h) and parts' moduli in time.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "slender/core/error.h"
#include "slender/core/integrator.h"
#include "slender/core/newton.h"
#include "slender/core/parallel_for.h"
#include "slender/core/reduce4.h"
#include "slender/core/status.h"
#include "slender/engine/assemble.h"
#include "slender/engine/batch_kelvin_voigt.h"
#include "slender/engine/batch_solve.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/model_view.h"
#include "slender/engine/step_eval.h"
#include "slender/model.h"
#include "slender/state.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/rayleigh.h"

namespace slender {

namespace vec {

/// the bend-twist strains (kappa1, kappa2, tau in the stencil's orientation, as
/// Simulator::bend_strains reports them) of the state: one (environment, stencil) per index
struct BendStrains {
  ModelView m;
  EvalView s;
  Real* out;  // (nenv x nbend x 3)
  SLENDER_HD void operator()(long i) const {
    const int env = int(i / m.nbend);
    const long k = i % m.nbend;
    LocalEval<11> r;
    RodBendTwist::Strains st;
    RodBendTwistBinding::eval(m, s, env, k, kEnergy, r, &st);
    out[3 * i] = st.kappa1;
    out[3 * i + 1] = st.kappa2;
    out[3 * i + 2] = st.tau;
  }
};

/// ground contact and friction with each environment's own friction coefficient: one
/// (environment, node) per index (EvalStencils<GroundBinding> with mu per environment)
struct EvalGround {
  ModelView m;
  EvalView s;
  long n;
  LocalBuffers<3> out;
  const Real* mu;      // (nenv)
  const Real* params;  // per environment: density scale first, stride 5 (null: 1)
  SLENDER_HD void operator()(long t) const {
    const int env = int(t / n);
    const long k = t % n;
    LocalEval<3> r;
    GroundBinding::eval_with_friction(m, s, env, k, kGradHess, mu[env], r,
                                      params ? params[5 * env] : Real(1));
    out.store(env, k, r, kGradHess);
  }
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

/// per environment: s0 the incremental potential (stencil energies, then per-DOF potentials, in
/// index order), s2 |f|^2
struct EvalSums {
  long energy_pool;
  int ndof, nfree;
  const Real* e_pool;
  const Real* dof_phi;
  const Real* f;
  SLENDER_HD Red4 operator()(long e, long i) const {
    Red4 r{0, 0, 0, 0};
    if (i < energy_pool) {
      r.s0 = e_pool[e * energy_pool + i];
    } else if (i < energy_pool + ndof) {
      r.s0 = dof_phi[e * ndof + (i - energy_pool)];
    }
    if (i < nfree) {
      const Real v = f[e * nfree + i];
      r.s2 = v * v;
    }
    return r;
  }
};

/// per environment: s0 dx . f, m0 max |dx|
struct SlopeMax {
  int nfree;
  const Real* dx;
  const Real* f;
  const unsigned char* ok = nullptr;  // (nenv) the solve's flags, summed into s1 when given
  SLENDER_HD Red4 operator()(long e, long i) const {
    const Real d = dx[e * nfree + i];
    const Real solved = ok && i == 0 && ok[e] ? Real(1) : Real(0);
    return Red4{d * f[e * nfree + i], solved, 0, ::fabs(d)};
  }
};

/// the values of an action array given in the executor's memory that are not finite, per
/// environment (nenv x len)
struct NonFiniteCount {
  long len;
  const Real* v;
  SLENDER_HD Red4 operator()(long e, long i) const {
    return Red4{is_finite(v[e * len + i]) ? Real(0) : Real(1), 0, 0, 0};
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

}  // namespace vec

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

/// The engine over an executor X (engine/executor.h: loops and per-environment loops,
/// per-environment reductions, transfers, ModelData, and the batch's policies kInterleaved,
/// kLanes and kPcgCheckEvery).
template <class X>
class VectorNewton {
 public:
  // the engine's loops (vec::each_heavy: on the host threaded from kParallelGrainHeavy items)
  template <class F>
  static void each(long n, const F& f) {
    vec::each_heavy<X>(n, f);
  }
  template <class T>
  using Buffer = typename X::template Buffer<T>;

  /// every environment starts at `initial` (a Simulator's initial state carries Newmark's
  /// consistent initial acceleration); `solver` as for BatchedSimulator (auto, banded, dense,
  /// pcg)
  VectorNewton(std::shared_ptr<const Model> model,
               int nenv,
               const IntegratorSpec& spec,
               const State& initial,
               LinearSolverKind solver = LinearSolverKind::kAuto)
      : model_(std::move(model)),
        spec_(spec),
        nenv_(nenv),
        model_arrays_(*model_),
        se_(*model_, nenv) {
    const Model& m = *model_;
    SLENDER_CHECK(nenv >= 1, "a batch needs at least one environment, got ", nenv);
    SLENDER_CHECK(!m.contact.enabled,
                  "the vectorized batch runs models without contact between bodies (this scene "
                  "enables rod/shell contact); use the per-environment batch");
    SLENDER_CHECK(m.user_energies.empty(),
                  "the vectorized batch runs the model's own stencil families; this model has "
                  "energies from the caller's code (use the per-environment batch)");
    SLENDER_CHECK(m.actuated.empty(),
                  "the vectorized batch takes the natural shape from its actions; this scene "
                  "has its own actuation (use the per-environment batch)");
    SLENDER_CHECK(spec.kind != IntegratorKind::kStatic,
                  "the vectorized batch steps in time; static load stepping needs the "
                  "per-environment batch");
    plan_ = m.plan;
    solver_ =
        std::make_unique<VectorLinearSolve<X>>(plan_, m.ndof, nenv, solver, !m.nonsymmetric());
    // the model's arrays where the executor runs (X::ModelData: the host view itself, or the
    // device copy of every array, kernels/device_model.h)
    mv_ = model_arrays_.view();
    up(m.dof_mass, dof_mass_);
    up(m.dof_fixed, dof_fixed_);
    up(m.dof_fixed_slot, fixed_slot_);
    up(m.dof_motion_slot, motion_slot_);
    up(m.node_dl, node_dl_);
    up(m.node_volume, node_volume_);
    if (m.mass_damping_per_part) up(m.dof_mass_damping, dof_alpha_);
    parts_scaled_ = !m.youngs_time_part.empty();  // each part's modulus in time
    up(plan_.free_dof, free_dof_);
    up(plan_.row_src_adr, row_src_adr_);
    up(plan_.row_src, row_src_);
    const size_t B = size_t(nenv), nd = size_t(m.ndof), nf = size_t(plan_.nfree);
    for (Buffer<Real>* b :
         {&q_, &u_, &a_, &y_, &y_trial_, &q_hat_, &u_hat_, &f_time_, &dof_r_, &dof_J_, &dof_phi_})
      b->resize(B * nd);
    for (Buffer<Real>* b : {&f_, &dx_})
      b->resize(B * nf);
    d1_.resize(B * 3 * m.nedge);
    t_.resize(B * 3 * m.nedge);
    d1_cur_.resize(B * 3 * m.nedge);
    t_cur_.resize(B * 3 * m.nedge);
    ref_.resize(B * m.nbend);
    ref_cur_.resize(B * m.nbend);
    kappa_.resize(B * 2 * m.nbend);
    tau_.resize(B * m.nbend);
    phi_.resize(B * m.nhinge);
    tau0_.resize(B * 3 * m.nsedge);
    if (!m.signals.empty()) {  // the signals at t = 0 until a step sets each environment's
      std::vector<Real> sv(B * kMaxSignals);
      for (size_t e = 0; e < size_t(B); ++e)
        eval_signals(m, 0, 1, sv.data() + e * kMaxSignals);
      X::upload(signal_, sv.data(), sv.size());
    }
    e_pool_.resize(B * size_t(plan_.energy_pool));
    flags_.resize(B * size_t(plan_.energy_pool));
    g_pool_.resize(B * size_t(plan_.grad_pool));
    h_pool_.resize(B * size_t(plan_.hess_pool));
    active_.resize(B);
    se_.set_active(active_.data());  // (every loop of the evaluation masked)
    alpha_.resize(B);
    active_h_.assign(B, 0);
    // every environment with the model's ground friction
    mu_h_.assign(B, mv_.ground.mu);
    X::upload(mu_, mu_h_.data(), B);
    friction_.assign(B, m.friction() ? 1 : 0);
    warn_.assign(3 * B, 0);
    // every environment at the initial state and the model's natural shape
    for (int e = 0; e < nenv; ++e)
      set_state(e, initial);
    clear_natural_shape();
    clear_forces();
  }

  int nenv() const { return nenv_; }
  const Model& model() const { return *model_; }

  /// the model's natural shape (and actuation-free) for every environment
  void clear_natural_shape() {
    const Model& m = *model_;
    std::vector<Real> k(size_t(nenv_) * 2 * m.nbend), t(size_t(nenv_) * m.nbend);
    for (int e = 0; e < nenv_; ++e) {
      std::copy(m.bend_kappa_bar.begin(), m.bend_kappa_bar.end(), k.begin() + e * 2 * m.nbend);
      std::copy(m.bend_tau_bar.begin(), m.bend_tau_bar.end(), t.begin() + e * m.nbend);
    }
    X::upload(kappa_, k.data(), k.size());
    X::upload(tau_, t.data(), t.size());
    std::vector<Real> h(size_t(nenv_) * m.nhinge);
    for (int e = 0; e < nenv_; ++e)
      std::copy(m.hinge_phi_bar.begin(), m.hinge_phi_bar.end(), h.begin() + e * m.nhinge);
    X::upload(phi_, h.data(), h.size());
  }
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
  /// the batched linear solver in use (batch_solve.h's names)
  std::string solver_name() const { return solver_->name(); }
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

 private:
  // an action array of len values per environment into dst; one in the executor's memory is
  // checked there first (one reduction: a non-finite value is an error naming its environment,
  // and dst stays as it was), then copied on the executor
  void set_action(
      Buffer<Real>& dst, const Real* src, long len, bool in_executor, const char* what) {
    const size_t n = size_t(nenv_) * size_t(len);
    if (!in_executor) return X::upload(dst, src, n);
    if (n == 0) return;
    std::vector<Red4> bad(static_cast<size_t>(nenv_));
    X::env_reduce(nenv_, len, vec::NonFiniteCount{len, src}, bad.data(), red_scratch_);
    for (int e = 0; e < nenv_; ++e)
      SLENDER_CHECK(bad[e].s0 == 0, what, ": ", long(bad[e].s0), " values of environment ", e,
                    " are not finite");
    X::copy(dst.data(), src, n);
  }

 public:
  /// physical parameters of one environment
  void set_params(int e, const EnvParams& p) {
    const Model& m = *model_;
    SLENDER_CHECK(e >= 0 && e < nenv_, "environment ", e, " out of range");
    SLENDER_CHECK(p.youngs_scale > 0 && std::isfinite(p.youngs_scale),
                  "youngs_scale must be positive, got ", p.youngs_scale);
    SLENDER_CHECK(p.density_scale > 0 && std::isfinite(p.density_scale),
                  "density_scale must be positive, got ", p.density_scale);
    SLENDER_CHECK(std::isfinite(p.ground_friction) && std::isfinite(p.mass_damping) &&
                      std::isfinite(p.gravity[0]) && std::isfinite(p.gravity[1]) &&
                      std::isfinite(p.gravity[2]),
                  "ground_friction, gravity and mass_damping must be finite");
    // ground friction, as the Simulator takes it: the coefficient replaces the model's, and a
    // positive one makes this environment's Jacobian non-symmetric for good
    const bool fr = m.friction() || (m.ground.enabled && p.ground_friction > 0);
    if (fr && !m.nonsymmetric()) solver_->set_nonsymmetric(e);
    friction_[e] = fr ? 1 : 0;
    mu_h_[e] = p.ground_friction >= 0 ? p.ground_friction : m.ground.friction;
    X::upload(mu_, mu_h_.data(), size_t(nenv_));
    ensure_params();
    const Vec3 g = p.override_gravity ? p.gravity : m.gravity;
    Real* ep = params_h_.data() + 5 * size_t(e);
    ep[0] = p.density_scale;
    ep[1] = g[0];
    ep[2] = g[1];
    ep[3] = g[2];
    ep[4] = p.mass_damping >= 0 ? p.mass_damping : m.mass_damping_per_part ? -1 : m.mass_damping;
    yscale_h_[e] = p.youngs_scale;
    env_params_[e] = p;
    X::upload(params_, params_h_.data(), params_h_.size());
    se_.set_youngs_scales(yscale_h_);
    scaled_ = true;
  }
  const EnvParams& params(int e) const {
    static const EnvParams defaults;
    return env_params_.empty() ? defaults : env_params_[e];
  }

  void set_state(int e, const State& s) {
    const Model& m = *model_;
    SLENDER_CHECK(e >= 0 && e < nenv_, "environment ", e, " out of range");
    check_state(s);
    X::upload_at(q_, size_t(e) * m.ndof, s.q.data(), m.ndof);
    X::upload_at(u_, size_t(e) * m.ndof, s.u.data(), m.ndof);
    X::upload_at(a_, size_t(e) * m.ndof, s.a.data(), m.ndof);
    X::upload_at(d1_, size_t(e) * 3 * m.nedge, s.edge_d1.data(), 3 * m.nedge);
    X::upload_at(t_, size_t(e) * 3 * m.nedge, s.edge_t.data(), 3 * m.nedge);
    X::upload_at(ref_, size_t(e) * m.nbend, s.bend_ref_twist.data(), m.nbend);
    X::upload_at(tau0_, size_t(e) * 3 * m.nsedge, s.sedge_tau0.data(), 3 * m.nsedge);
    set_counters(e, s);
  }
  /// every environment with mask[e] set takes state s: s is uploaded once and copied into them
  /// by one masked loop per array (no transfer per environment)
  void reset(const std::vector<unsigned char>& mask, const State& s) {
    const Model& m = *model_;
    SLENDER_CHECK(int(mask.size()) == nenv_, "reset mask has ", mask.size(), " entries for ", nenv_,
                  " environments");
    check_state(s);
    X::upload(reset_mask_, mask.data(), mask.size());
    const unsigned char* mk = reset_mask_.data();
    auto take = [&](Buffer<Real>& dst, const std::vector<Real>& src, long len) {
      X::upload(reset_src_, src.data(), src.size());
      each(long(nenv_) * len, vec::Masked<vec::Broadcast>{
                                  vec::Broadcast{dst.data(), reset_src_.data(), len}, mk, len});
    };
    take(q_, s.q, m.ndof);
    take(u_, s.u, m.ndof);
    take(a_, s.a, m.ndof);
    take(d1_, s.edge_d1, 3L * m.nedge);
    take(t_, s.edge_t, 3L * m.nedge);
    take(ref_, s.bend_ref_twist, m.nbend);
    take(tau0_, s.sedge_tau0, 3L * m.nsedge);
    for (int e = 0; e < nenv_; ++e)
      if (mask[e]) set_counters(e, s);
  }
  /// every environment's bend-twist strains (nenv x nbend x 3) into out (host): one loop on
  /// the executor and one download
  void bend_strains(Real* out) {
    const Model& m = *model_;
    const long n = long(nenv_) * m.nbend;
    if (n == 0) return;
    // the state's frames are those of its configuration
    const EvalView ev = eval_view(q_.data(), d1_.data(), ref_.data());
    strains_.resize(size_t(3 * n));
    each(n, vec::BendStrains{mv_, ev, strains_.data()});
    X::download_at(strains_, 0, out, size_t(3 * n));
  }
  void get_state(int e, State& s) const {
    const Model& m = *model_;
    s = initial_state(m);
    X::download_at(q_, size_t(e) * m.ndof, s.q.data(), m.ndof);
    X::download_at(u_, size_t(e) * m.ndof, s.u.data(), m.ndof);
    X::download_at(a_, size_t(e) * m.ndof, s.a.data(), m.ndof);
    X::download_at(d1_, size_t(e) * 3 * m.nedge, s.edge_d1.data(), 3 * m.nedge);
    X::download_at(t_, size_t(e) * 3 * m.nedge, s.edge_t.data(), 3 * m.nedge);
    X::download_at(ref_, size_t(e) * m.nbend, s.bend_ref_twist.data(), m.nbend);
    X::download_at(tau0_, size_t(e) * 3 * m.nsedge, s.sedge_tau0.data(), 3 * m.nsedge);
    s.time = time_[e];
    s.step = steps_[e];
    s.warn_degenerate = warn_[3 * e];
    s.warn_linear_fallback = warn_[3 * e + 1];
    s.warn_line_search = warn_[3 * e + 2];
  }
  const Buffer<Real>& q() const { return q_; }
  const Buffer<Real>& u() const { return u_; }
  const std::vector<Real>& times() const { return time_; }

  /// one step of size dt for every environment in `mask` (all when empty)
  VectorStepResult step(Real dt, const std::vector<unsigned char>& mask = {}) {
    const Model& m = *model_;
    const NewtonSpec& ns = spec_.newton;
    const int B = nenv_, nd = m.ndof;
    VectorStepResult res;
    res.reports.assign(B, StepReport{});
    // every environment steps from its own time, so coefficients are per step (one dt for all)
    SLENDER_CHECK(mask.empty() || int(mask.size()) == B, "step mask has ", mask.size(),
                  " entries for ", B, " environments");
    std::vector<unsigned char> want(B, 1);
    if (!mask.empty()) want = mask;
    c_ = step_coeffs(spec_, 0, dt);  // c_m, c_u: the same at every time
    dt_ = dt;
    // point loads and forces at each environment's evaluation time; without any, the loads stay
    // zero on the executor (no transfer of nenv x ndof zeros every step)
    const bool loads = !m.point_loads.empty() || !forces_.empty();
    std::vector<Real>& ft = ft_scratch_;
    if (loads || !loads_zero_) ft.assign(size_t(B) * nd, 0);
    for (int e = 0; loads && e < B; ++e) {
      const StepCoeffs ce = step_coeffs(spec_, time_[e], dt);
      Real* fe = ft.data() + size_t(e) * nd;
      add_point_loads(m, ce.t_eval, ce.load_factor, fe);
      if (!forces_.empty())
        for (int k = 0; k < 3 * m.nnode; ++k)
          fe[k] += forces_[size_t(e) * 3 * m.nnode + k];
    }
    if (loads || !loads_zero_) X::upload(f_time_, ft.data(), ft.size());
    loads_zero_ = !loads;
    // each part's modulus scale at each environment's evaluation time: every step for moduli in
    // time, else only after the caller's factors changed
    if (parts_scaled_ && (part_scale_stale_ || !m.youngs_time_part.empty())) {
      part_scale_stale_ = false;
      const int np = m.npart;
      std::vector<Real>& ps = ps_scratch_;
      ps.assign(size_t(B) * np, 1);
      for (int e = 0; e < B; ++e) {
        if (!m.youngs_time_part.empty()) {
          const std::vector<Real> t =
              part_youngs_scales(m, step_coeffs(spec_, time_[e], dt).t_eval);
          std::copy(t.begin(), t.end(), ps.begin() + size_t(e) * np);
        }
        for (int i = 0; i < np && !part_factor_h_.empty(); ++i)
          ps[size_t(e) * np + i] *= part_factor_h_[size_t(e) * np + i];
      }
      se_.set_part_scales(ps.data());
    }
    // the families' time functions at each environment's evaluation time
    if (!m.signals.empty()) {
      std::vector<Real>& sv = sig_scratch_;
      sv.assign(size_t(B) * kMaxSignals, 0);
      for (int e = 0; e < B; ++e) {
        const StepCoeffs ce = step_coeffs(spec_, time_[e], dt);
        eval_signals(m, ce.t_eval, ce.load_factor, sv.data() + e * kMaxSignals);
      }
      X::upload(signal_, sv.data(), sv.size());
    }

    // prescribed motion at each environment's step end: the caller's targets, else the scene's
    // motions (none: the fixed DOFs stay)
    step_slot_ = nullptr;
    step_target_ = nullptr;
    step_target_stride_ = 0;
    if (user_targets_) {
      step_slot_ = fixed_slot_.data();
      step_target_ = fixed_target_.data();
      step_target_stride_ = long(m.fixed_dof.size());
    } else if (!m.motion_dof.empty()) {
      const size_t nm = m.motion_dof.size();
      std::vector<Real>& tv = tv_scratch_;
      tv.resize(size_t(B) * nm);
      for (int e = 0; e < B; ++e)
        motion_targets(m, time_[e] + dt, tv.data() + size_t(e) * nm);
      X::upload(motion_target_, tv.data(), tv.size());
      step_slot_ = motion_slot_.data();
      step_target_ = motion_target_.data();
      step_target_stride_ = long(nm);
    }
    each(long(B) * nd, Predict{spec_.kind, dt, spec_.beta, spec_.gamma, q_.data(), u_.data(),
                               a_.data(), dof_fixed_.data(), q_hat_.data(), u_hat_.data(), nd,
                               step_slot_, step_target_, step_target_stride_});
    X::copy(y_.data(), q_hat_.data(), size_t(B) * nd);

    // Newton's iterations of every environment in `want`: the loop of every engine
    // (core/newton.h), masked
    std::vector<Real> r(B), phi(B);
    active_h_ = want;
    push_active();
    // the damping terms' start of the step: the elastic Hessians at q, the Kelvin-Voigt anchors
    if (m.stiffness_damping)
      se_.keep_start_stiffness(mv_, pools(), frames(), step_eval_view(q_.data()));
    if (m.kelvin_voigt && c_.c_u > 0) se_.keep_kv_anchors(mv_, frames(), step_eval_view(nullptr));
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t0) {
      return std::chrono::duration<double>(Clock::now() - t0).count();
    };
    auto t0 = Clock::now();
    evaluate(y_.data(), r, phi);
    res.times.eval += since(t0);
    std::vector<long> ls_warn(B, 0);
    const EnvMask done = newton_iterations(
        ns, want, friction_, r, phi, res.reports.data(), ls_warn.data(), res.times.line_search,
        [&](const EnvMask& running, std::vector<NewtonDirection>& d) {
          directions(running, d, res);
        },
        [&](const EnvMask& mask, const std::vector<Real>& alpha, std::vector<Real>& r_new,
            std::vector<Real>& phi_new) {
          trial(mask, alpha);
          const auto t1 = Clock::now();
          evaluate(y_trial_.data(), r_new, phi_new);
          res.times.eval += since(t1);
        },
        [&](const EnvMask& mask) { accept(mask); });
    for (int e = 0; e < B; ++e) {
      res.reports[e].dt = dt;
      res.line_search_warnings += ls_warn[e];
      warn_[3 * e + 2] += ls_warn[e];
    }
    finalize(done, dt, res);
    return res;
  }

 private:
  template <class T>
  void up(const std::vector<T>& h, Buffer<T>& d) {
    X::upload(d, h.data(), h.size());
  }

  // every environment's evaluation view at configuration q with reference directors d1 and
  // twists ref (each environment's own natural shape; no integrator offsets)
  EvalView eval_view(const Real* q, const Real* d1, const Real* ref) {
    EvalView ev{};
    ev.nenv = nenv_;
    ev.q = q;
    ev.edge_d1 = d1;
    ev.bend_ref_twist = ref;
    ev.bend_kappa_bar = kappa_.data();
    ev.bend_tau_bar = tau_.data();
    ev.hinge_phi_bar = phi_.data();
    ev.natural_per_env = 1;
    ev.sedge_tau0 = tau0_.data();
    ev.signal = signal_.size() ? signal_.data() : nullptr;
    return ev;
  }

  // the view of a step's evaluation at q (its frames from frames_at(q)): the integrator's
  // offsets and du/dq for the ground's friction
  EvalView step_eval_view(const Real* q) {
    EvalView ev = eval_view(q, d1_cur_.data(), ref_cur_.data());
    ev.q_hat = q_hat_.data();
    ev.u_hat = u_hat_.data();
    ev.c_u = c_.c_u;
    return ev;
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
  }

  // every environment with the model's parameters (before the first set_params)
  void ensure_params() {
    if (!params_h_.empty()) return;
    const Model& m = *model_;
    params_h_.resize(5 * size_t(nenv_));
    for (int e = 0; e < nenv_; ++e) {
      Real* ep = params_h_.data() + 5 * size_t(e);
      ep[0] = 1;
      ep[1] = m.gravity[0];
      ep[2] = m.gravity[1];
      ep[3] = m.gravity[2];
      ep[4] = m.mass_damping_per_part ? -1 : m.mass_damping;  // (-1: the parts' own alphas)
    }
    yscale_h_.assign(nenv_, 1);
    env_params_.assign(nenv_, EnvParams{});
  }

  // dx[e] = J_e^-1 f[e] by sparse LU on the host from environment e's local Hessians (the
  // pivoting fallback of the banded solve); false when even that fails
  bool pivoting_solve(int e) {
    const Model& m = *model_;
    const AssemblyPlan& p = plan_;
    if (!fallback_) {
      fallback_ =
          std::make_unique<cpu::LinearSolver>(p, LinearSolverKind::kSparseLu, /*symmetric=*/false);
    }
    fb_h_.resize(size_t(p.hess_pool));
    fb_dofJ_.resize(size_t(m.ndof));
    fb_f_.resize(size_t(p.nfree));
    fb_dx_.resize(size_t(p.nfree));
    X::download_at(h_pool_, size_t(e) * p.hess_pool, fb_h_.data(), size_t(p.hess_pool));
    X::download_at(dof_J_, size_t(e) * m.ndof, fb_dofJ_.data(), size_t(m.ndof));
    X::download_at(f_, size_t(e) * p.nfree, fb_f_.data(), size_t(p.nfree));
    Real* val = fallback_->values();
    for (int slot = 0; slot < p.nnz(); ++slot) {
      Real v = 0;
      for (int j = p.slot_src_adr[slot]; j < p.slot_src_adr[slot + 1]; ++j)
        v += fb_h_[p.slot_src[j]];
      val[slot] = v;
    }
    for (int r = 0; r < p.nfree; ++r)
      val[p.diag_slot[r]] += fb_dofJ_[p.free_dof[r]];
    if (!fallback_->factorize() || !fallback_->solve(fb_f_.data(), fb_dx_.data())) return false;
    X::upload_at(dx_, size_t(e) * p.nfree, fb_dx_.data(), size_t(p.nfree));
    return true;
  }

  // active_ on the executor = active_h_, uploaded only when it changed (most Newton iterations
  // and line-search trials keep the same environments: a host transfer saved on the GPU)
  void push_active() {
    if (active_dev_h_ == active_h_) return;
    X::upload(active_, active_h_.data(), size_t(nenv_));
    active_dev_h_ = active_h_;
  }

  // the Newton directions of the running environments: every running environment's Jacobian,
  // one batched solve; then the slopes and max |dx| (one host read with the solve's flags)
  void directions(const EnvMask& running, std::vector<NewtonDirection>& d, VectorStepResult& res) {
    const int B = nenv_, nf = plan_.nfree;
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    active_h_ = running;
    push_active();
    std::vector<unsigned char>& okh = ok_h_;
    const bool ok_read =
        solver_->solve(active_h_, active_.data(), h_pool_.data(), dof_J_.data(), f_.data(),
                       dx_.data(), okh, fallback_h_, res.solve, /*defer_ok=*/true);
    std::vector<Red4> sm(B);
    X::env_reduce(B, nf,
                  vec::SlopeMax{nf, dx_.data(), f_.data(), ok_read ? nullptr : solver_->ok_flags()},
                  sm.data(), red_scratch_);
    if (!ok_read)
      for (int e = 0; e < B; ++e)
        okh[e] = active_h_[e] && sm[e].s1 > 0 ? 1 : 0;
    // a system the batched solve could not take (a band or dense pivot too small, CG that did
    // not converge): that environment's Jacobian solved by pivoting sparse LU on the host, as
    // the CPU's direct solvers fall back (and its slope taken again)
    bool fell_back = false;
    for (int e = 0; e < B; ++e) {
      if (!running[e]) continue;
      if (!okh[e]) {
        okh[e] = pivoting_solve(e) ? 1 : 0;
        fallback_h_[e] = 1;
        fell_back = true;
      }
      if (fallback_h_[e]) {
        ++res.linear_fallbacks;
        ++warn_[3 * e + 1];
      }
    }
    if (fell_back)
      X::env_reduce(B, nf, vec::SlopeMax{nf, dx_.data(), f_.data()}, sm.data(), red_scratch_);
    res.times.solve += std::chrono::duration<double>(Clock::now() - t0).count();
    for (int e = 0; e < B; ++e)
      if (running[e]) d[e] = NewtonDirection{okh[e] != 0, sm[e].s0, sm[e].m0};
  }

  // y_trial = y - alpha dx for the environments in mask
  void trial(const std::vector<unsigned char>& mask, const std::vector<Real>& alpha) {
    const Model& m = *model_;
    active_h_ = mask;
    push_active();
    if (alpha_dev_h_ != alpha) {  // the full step for every environment, mostly
      X::upload(alpha_, alpha.data(), size_t(nenv_));
      alpha_dev_h_ = alpha;
    }
    se_.copy(y_trial_.data(), y_.data(), m.ndof);
    se_.run(plan_.nfree,
            vec::NewtonStep{plan_.nfree, m.ndof, free_dof_.data(), dx_.data(), alpha_.data(),
                            y_trial_.data()},
            kParallelGrainHeavy);
  }

  // y = y_trial for the environments in mask
  void accept(const EnvMask& mask) {
    const Model& m = *model_;
    active_h_ = mask;
    push_active();
    se_.copy(y_.data(), y_trial_.data(), m.ndof);
  }

  // residual norms and potentials at q (env-major) for the active environments (active_, as
  // uploaded last); the pools, residuals and frames of the other environments are left alone
  void evaluate(const Real* q, std::vector<Real>& r, std::vector<Real>& phi) {
    const Model& m = *model_;
    const int B = nenv_;
    frames_at(q);
    const EvalView ev = step_eval_view(q);
    const EnvPools p = pools();
    // every family (the contact pairs' are empty here); the ground with each environment's own
    // friction coefficient
    for_each_family([&](auto binding, Family f, long grain) {
      using B = decltype(binding);
      if constexpr (std::is_same_v<B, GroundBinding>) {
        eval_ground(ev);
      } else {
        se_.template eval_family<B>(mv_, p, f, ev, kGradHess, grain);
      }
    });
    se_.scale_elastic(mv_, p, kGradHess);
    if (m.stiffness_damping) se_.add_stiffness_damping(mv_, p, ev);
    if (m.kelvin_voigt && c_.c_u > 0) se_.add_kelvin_voigt(mv_, p, frames(), ev, dt_);
    const Vec3 g = m.gravity;
    se_.dof_terms(DofTerms{m.nnode,
                           q,
                           q_hat_.data(),
                           u_hat_.data(),
                           f_time_.data(),
                           dof_mass_.data(),
                           node_dl_.data(),
                           node_volume_.data(),
                           m.buoyancy_density,
                           g[0],
                           g[1],
                           g[2],
                           m.viscosity,
                           m.mass_damping,
                           c_.c_m,
                           c_.c_u,
                           dof_r_.data(),
                           dof_J_.data(),
                           dof_phi_.data(),
                           m.ndof,
                           scaled_ ? params_.data() : nullptr,
                           m.mass_damping_per_part ? dof_alpha_.data() : nullptr});
    se_.residual(plan_.nfree, AssembleResidual{row_src_adr_.data(), row_src_.data(),
                                               free_dof_.data(), g_pool_.data(), dof_r_.data(),
                                               f_.data(), plan_.nfree, m.ndof, plan_.grad_pool});
    const long len = std::max(plan_.energy_pool + long(m.ndof), long(plan_.nfree));
    std::vector<Red4> s(B);
    X::env_reduce(B, len,
                  vec::EvalSums{plan_.energy_pool, m.ndof, plan_.nfree, e_pool_.data(),
                                dof_phi_.data(), f_.data()},
                  s.data(), red_scratch_);
    for (int e = 0; e < B; ++e) {
      if (!active_h_[e]) continue;
      phi[e] = s[e].s0;
      r[e] = std::sqrt(s[e].s2);
    }
  }

  // every environment's pools (the step's evaluation, shared with the stepper:
  // engine/step_eval.h) and frames
  EnvPools pools() {
    return EnvPools{e_pool_.data(),    g_pool_.data(),  h_pool_.data(),  flags_.data(),
                    plan_.energy_pool, plan_.grad_pool, plan_.hess_pool, plan_.e_off,
                    plan_.g_off,       plan_.h_off};
  }
  StepFrames frames() {
    return StepFrames{d1_.data(),     t_.data(),     ref_.data(),
                      d1_cur_.data(), t_cur_.data(), ref_cur_.data()};
  }

  // every active environment's directors and reference twists moved from its step's start to
  // q (into d1_cur_, t_cur_, ref_cur_)
  void frames_at(const Real* q) { se_.frames_at(mv_, frames(), q); }

  // ground contact and friction, each environment with its own coefficient
  void eval_ground(const EvalView& ev) {
    const long n = GroundBinding::count(mv_);
    if (n == 0) return;
    const EnvPools p = pools();
    const LocalBuffers<3> buf = p.family<3>(kFamGround, n);
    se_.run(n, vec::EvalGround{mv_, ev, n, buf, mu_.data(), scaled_ ? params_.data() : nullptr},
            kParallelGrainHeavy);
  }

  void finalize(const std::vector<unsigned char>& done, Real dt, VectorStepResult& res) {
    const Model& m = *model_;
    const int B = nenv_;
    active_h_ = done;
    push_active();
    // the state, and the frames of the new configuration as the next step's start; the
    // mid-edge frames only where xi DOFs read them
    se_.end_step(
        mv_,
        FinalizeStep{spec_.kind, dt, c_.c_m, c_.c_u, y_.data(), q_hat_.data(), u_hat_.data(),
                     dof_mass_.data(), dof_fixed_.data(), q_.data(), u_.data(), a_.data(), m.ndof,
                     step_slot_, step_target_, step_target_stride_},
        frames(), tau0_.data(), m.nxi > 0);
    if (plan_.energy_pool > 0) {
      std::vector<Red4> s(B);
      X::env_reduce(B, plan_.energy_pool, vec::DegenerateCount{plan_.energy_pool, flags_.data()},
                    s.data(), red_scratch_);
      for (int e = 0; e < B; ++e)
        if (done[e]) {
          res.degenerate += long(s[e].s0);
          warn_[3 * e] += long(s[e].s0);
        }
    }
    for (int e = 0; e < B; ++e)
      if (done[e]) {
        time_[e] += dt;
        ++steps_[e];
      }
  }

  std::shared_ptr<const Model> model_;
  IntegratorSpec spec_;
  int nenv_;
  typename X::ModelData model_arrays_;  // after model_: built from it
  AssemblyPlan plan_;
  std::unique_ptr<VectorLinearSolve<X>> solver_;
  ModelView mv_{};
  StepCoeffs c_;
  Real dt_ = 0;  // this step's
  std::vector<Real> forces_, time_;
  std::vector<Real> ft_scratch_;   // the loads of a step on the host
  std::vector<Real> sig_scratch_;  // the signals of a step on the host
  // prescribed motion: the model's slot maps, the caller's targets (nenv x nfixed) or the
  // scene's motions' of this step (nenv x nmoved, from tv_scratch_), and this step's choice
  Buffer<int> fixed_slot_, motion_slot_;
  Buffer<Real> fixed_target_, motion_target_;
  bool user_targets_ = false;
  std::vector<Real> tv_scratch_;
  const int* step_slot_ = nullptr;
  const Real* step_target_ = nullptr;
  long step_target_stride_ = 0;
  Buffer<Real> strains_;  // bend_strains' results on the executor
  // reset: which environments take the state, and one array of it at a time
  Buffer<unsigned char> reset_mask_;
  Buffer<Real> reset_src_;
  bool loads_zero_ = false;  // f_time_ holds zeros (no loads last step)
  std::vector<unsigned char> active_h_;
  // what active_ and alpha_ hold on the executor (uploads only on change)
  std::vector<unsigned char> active_dev_h_;
  std::vector<Real> alpha_dev_h_;
  // model arrays the view does not hold, and the plan
  Buffer<Real> dof_mass_, node_dl_, node_volume_, dof_alpha_;
  StepEval<X> se_;  // the step's stencil evaluation, scales and damping terms (masked)
  // each part's Young's modulus scale (in time, times the caller's factors): per environment
  std::vector<Real> part_factor_h_, ps_scratch_;  // the caller's factors (nenv x npart) or empty
  bool parts_scaled_ = false;
  bool part_scale_stale_ = false;  // the caller's factors changed since the last upload
  Buffer<unsigned char> dof_fixed_;
  Buffer<int> free_dof_, row_src_adr_, row_src_;
  // state and workspace
  Buffer<Real> q_, u_, a_, y_, y_trial_, q_hat_, u_hat_, f_time_, dof_r_, dof_J_, dof_phi_;
  Buffer<Real> f_, dx_;
  Buffer<Real> d1_, t_, d1_cur_, t_cur_, ref_, ref_cur_, kappa_, tau_, phi_, tau0_;
  Buffer<Real> signal_;  // the model's signals at each environment's evaluation time (nenv x 8)
  Buffer<Real> e_pool_, g_pool_, h_pool_;
  Buffer<unsigned> flags_;
  Buffer<unsigned char> active_;
  std::vector<unsigned char> ok_h_, fallback_h_;  // the last solve's outcome (nenv)
  // each environment's warning counters: degenerate, linear fallback, line search (nenv x 3)
  std::vector<long> warn_;
  Buffer<Real> alpha_;
  Buffer<Red4> red_scratch_;
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
  // the pivoting fallback for an environment whose band has too small a pivot
  std::unique_ptr<cpu::LinearSolver> fallback_;
  std::vector<Real> fb_h_, fb_dofJ_, fb_f_, fb_dx_;
};

}  // namespace slender
