#pragma once

// The Newton step of both backends, written once over an executor X: the state lives in X's
// memory across steps; frames, every stencil family, the per-DOF terms and the assembly of the
// residual and the CSR Jacobian run as X's loops over the shared functors
// (include/slender/stencils, include/slender/core); the linear solve is X's direct sparse solver
// (the CPU's banded LU, CHOLMOD, LDLT or sparse LU on the host; cuSOLVER's Cholesky or QR on the
// GPU) or block-Jacobi CG / BiCGSTAB on X; norms, potentials and
// line-search quantities are X's reductions, of which the host reads a few scalars per
// evaluation to run the Newton loop of include/slender/core/newton.h. The linear solve is the
// policy of engine/system_solve.h (one system: direct or Krylov). Contact sub-pairs are found
// by X's ContactFinder (the host's pair finder, or engine/contact_pipeline.h on the GPU): the
// front end sees them only when they change, to build the assembly plan (the direct path), or
// never (the PCG path assembles the contact part on X: engine/contact_jacobian.h).
//
// Executors (engine/executor.h): the host one (host/backend/host_executor.h; the CPU backend,
// host/backend/host_stepper.cpp) and the CUDA one (kernels/cuda_executor.cuh; the CUDA backend,
// kernels/cuda_stepper.cu).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "slender/core/integrator.h"
#include "slender/core/newton.h"
#include "slender/core/parallel_for.h"
#include "slender/core/pcg.h"
#include "slender/core/reduce4.h"
#include "slender/engine/assemble.h"
#include "slender/engine/contact_jacobian.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/engine/device_stepper.h"
#include "slender/engine/executor.h"
#include "slender/engine/krylov.h"
#include "slender/engine/step_eval.h"
#include "slender/engine/system_solve.h"
#include "slender/engine/user_force.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"
#include "slender/stencils/kelvin_voigt.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/rayleigh.h"
#include "slender/stencils/user_energy.h"

namespace slender {

namespace stepper {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- reduction functors ---------------------------------------------------------------------

// s0: sum of stencil energies, s1: sum of per-DOF potentials, s2: |f|^2
struct EvalSums {
  const Real* e;
  long ne;
  const Real* dphi;
  long nd;
  const Real* f;
  long nf;
  SLENDER_HD Red4 operator()(long i) const {
    Red4 r{0, 0, 0, 0};
    if (i < ne) r.s0 = e[i];
    if (i < nd) r.s1 = dphi[i];
    if (i < nf) r.s2 = f[i] * f[i];
    return r;
  }
};

// s0: number of entries with the bit set
struct CountFlags {
  const unsigned* flags;
  unsigned bit;
  SLENDER_HD Red4 operator()(long i) const {
    return Red4{(flags[i] & bit) ? Real(1) : Real(0), 0, 0, 0};
  }
};

// reduction result slots
enum Slot { kSlotEval, kSlotDot, kSlotFlags, kNumSlots };

// the scalar parts of an assembly plan
struct PlanDims {
  int nfree = 0;
  long energy_pool = 0, grad_pool = 0, hess_pool = 0;
  long e_off[kNumFamilies] = {}, g_off[kNumFamilies] = {}, h_off[kNumFamilies] = {};
};

template <class X>
class StepperOn final : public DeviceStepper {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;
  // an array the stepper only reads, of the model or of the current plan: a copy in X's memory,
  // or, where the host reads X's memory, a view of the host's array (no copy)
  template <class T>
  using Const = typename X::template ConstArray<T>;
  using ContactFinder = typename X::ContactFinder;

  StepperOn(std::shared_ptr<const Model> model, const IntegratorSpec& spec, LinearSolverKind kind)
      : device_(X::current_device()),
        model_(std::move(model)),
        spec_(spec),
        dm_(*model_),
        se_(*model_, 1),
        solve_(kind, !model_->nonsymmetric() && kind != LinearSolverKind::kSparseLu) {
    const Model& m = *model_;
    dv_ = dm_.view();
    d_dof_mass_.upload(m.dof_mass);
    gravity_ = m.gravity;
    mass_damping_ = m.mass_damping;
    d_dof_fixed_.upload(m.dof_fixed);
    d_fixed_slot_.upload(m.dof_fixed_slot);
    d_motion_slot_.upload(m.dof_motion_slot);
    d_node_dl_.upload(m.node_dl);
    d_node_volume_.upload(m.node_volume);
    const size_t nd = size_t(m.ndof);
    for (Buffer<Real>* b :
         {&q_, &u_, &a_, &y_, &y_trial_, &q_hat_, &u_hat_, &f_time_, &dof_r_, &dof_J_, &dof_phi_})
      b->resize(nd);
    f_time_.fill_zero();
    d1_.resize(3 * size_t(m.nedge));
    t_.resize(3 * size_t(m.nedge));
    d1_cur_.resize(3 * size_t(m.nedge));
    t_cur_.resize(3 * size_t(m.nedge));
    ref_.resize(size_t(m.nbend));
    ref_cur_.resize(size_t(m.nbend));
    tau0_.resize(3 * size_t(m.nsedge));
    kappa_bar_.upload(m.bend_kappa_bar);
    tau_bar_.upload(m.bend_tau_bar);
    phi_bar_.upload(m.hinge_phi_bar);
    if (!m.signals.empty()) {  // the signals at t = 0 until a step sets its own
      Real sv[kMaxSignals];
      eval_signals(m, 0, 1, sv);
      signal_.upload(sv, kMaxSignals);
    }
    partial_.resize(kReducePartials);
    slots_.resize(kNumSlots);
    friction_ = m.friction();
    if (m.mass_damping_per_part) d_dof_alpha_.upload(m.dof_mass_damping);
    use_plan(std::shared_ptr<const AssemblyPlan>(model_, &m.plan));
    if (m.contact.enabled) {
      contacts_ = std::make_unique<ContactFinder>(m);
      // the iterative path keeps the model's plan and assembles the contact part on its own
      contact_jacobian_ = solve_.contact_part(m.plan, m.ndof);
    }
    // the state arrays are sized; their first contents come from the owner's upload_state
  }

  StepReport step(const DeviceStepInputs& in,
                  PhaseTimes& times,
                  DeviceStepWarnings& warn) override {
    const typename X::OnDevice on(device_);
    const Model& m = *model_;
    times_ = &times;
    predict(in);
    const StepCoeffs& c = in.c;
    const Real dt = in.dt;
    StepReport rep;
    rep.dt = dt;
    X::copy(y_.data(), q_hat_.data(), size_t(m.ndof));
    const Real r0 = evaluate(y_.data(), c, true);
    const int nfree = pd_.nfree;
    // one environment through the Newton loop of every engine; the line search measures the
    // residual where the forces have no potential
    std::vector<Real> r{r0}, phi{phi_};
    const EnvMask done = newton_iterations(
        spec_.newton, EnvMask(1, 1), EnvMask(1, friction_ || bool(force_)), r, phi, &rep,
        &warn.line_search, times.line_search,
        [&](const EnvMask&, std::vector<NewtonDirection>& d) {
          bool fallback = false;
          d[0] = NewtonDirection{};
          d[0].solved = linear_solve(fallback);
          if (fallback) ++warn.linear_fallback;
          // slope, a non-finite direction (the CPU's solve fails on one) and max |dx|
          if (d[0].solved && nfree > 0) {
            X::reduce4(nfree, DotMax{dx_.data(), f_.data()}, partial_.data(), slot(kSlotDot));
            const Red4 dm = read_slot(kSlotDot);
            d[0].solved = dm.s1 == 0;
            d[0].slope = dm.s0;
            d[0].dx_max = dm.m0;
          }
        },
        [&](const EnvMask&, const std::vector<Real>& alpha, std::vector<Real>& r_new,
            std::vector<Real>& phi_new) {
          take_step(alpha[0]);
          r_new[0] = evaluate(y_trial_.data(), c, true);
          phi_new[0] = phi_;
        },
        [&](const EnvMask& mask) {
          if (mask[0]) std::swap(y_, y_trial_);
        });
    times.newton_iters += rep.iterations;
    const bool ok = done[0] != 0;
    if (!ok) return rep;  // the device state is untouched
    finalize(dt, c, warn);
    ++times.steps;
    return rep;
  }

  void residual(const DeviceStepInputs& in,
                const Real* y,
                std::vector<Real>& f,
                std::vector<Real>* jacobian) override {
    const typename X::OnDevice on(device_);
    const Model& m = *model_;
    PhaseTimes scratch;
    times_ = &scratch;
    predict(in);
    y_trial_.upload(y, size_t(m.ndof));
    evaluate(y_trial_.data(), in.c, jacobian != nullptr);
    f_.download(f);
    f.resize(size_t(pd_.nfree));
    if (jacobian) solve_.dense_on_host(*jacobian);
  }

  void set_force_callback(ForceCallback fn, bool symmetric) override {
    if constexpr (X::kHostMemory) {
      const typename X::OnDevice on(device_);
      force_.fn = std::move(fn);
      if (force_ && !symmetric) solve_.make_nonsymmetric();
    } else {
      SLENDER_CHECK(!fn, "force callbacks run on the CPU backend only; this simulator runs on ",
                    "CUDA");
    }
  }

  void upload_state(const State& s) override {
    const typename X::OnDevice on(device_);
    const Model& m = *model_;
    SLENDER_CHECK(state_fits(m, s), "state does not match the model's sizes");
    q_.upload(s.q);
    u_.upload(s.u);
    a_.upload(s.a);
    d1_.upload(s.edge_d1);
    t_.upload(s.edge_t);
    ref_.upload(s.bend_ref_twist);
    tau0_.upload(s.sedge_tau0);
  }

  void download_state(State& s) override {
    const typename X::OnDevice on(device_);
    q_.download(s.q);
    u_.download(s.u);
    a_.download(s.a);
    d1_.download(s.edge_d1);
    t_.download(s.edge_t);
    ref_.download(s.bend_ref_twist);
    tau0_.download(s.sedge_tau0);
  }

  std::string solver_name() const override { return solve_.name(); }
  void set_phase_timing(bool on) override { phase_timing_ = on; }

  void set_params(const EnvParams& p) override {
    const typename X::OnDevice on(device_);
    const Model& m = *model_;
    // ground friction makes the Jacobian non-symmetric: from here on LU or QR on the direct
    // path, BiCGSTAB on the iterative one
    const bool friction = m.friction() || (m.ground.enabled && p.ground_friction > 0);
    friction_ = friction;
    std::vector<Real> mass(m.dof_mass);
    for (Real& v : mass)
      v *= p.density_scale;
    d_dof_mass_.upload(mass);
    se_.set_youngs_scales({p.youngs_scale});
    gravity_ = p.override_gravity ? p.gravity : m.gravity;
    mass_damping_ = p.mass_damping >= 0 ? p.mass_damping : m.mass_damping;
    alpha_override_ = p.mass_damping >= 0;
    dv_.ground.mu = p.ground_friction >= 0 ? p.ground_friction : m.ground.friction;
    dv_.mass_scale = p.density_scale;  // the contact dashpots' masses
    if (friction) solve_.make_nonsymmetric();
  }

  bool assembles_contact() const override { return contact_jacobian_ != nullptr; }

  bool find_contacts(Real dt, bool force, contact::ContactPairLists& changed) override {
    const typename X::OnDevice on(device_);
    SLENDER_CHECK(contacts_, "find_contacts: the model has no contact between bodies");
    const bool ch = contacts_->find(q_.data(), u_.data(), dt);
    point_view_at_pairs();
    if (contact_jacobian_) {
      // the contact part's pattern on the device; the host has nothing to do
      if (ch) {
        size_contact_pools();
        contact_jacobian_->build(dv_);
      }
      return false;
    }
    if (ch || force) contacts_->download(changed);
    return ch || force;
  }

 private:
  // the step's inputs (plan, natural shape, loads, prescribed motion) and the predictor q_hat,
  // u_hat from the state
  void predict(const DeviceStepInputs& in) {
    const Model& m = *model_;
    if (in.plan_changed && in.plan) use_plan(in.plan);
    if (in.natural_changed) {
      kappa_bar_.upload(in.bend_kappa_bar, 2 * size_t(m.nbend));
      tau_bar_.upload(in.bend_tau_bar, size_t(m.nbend));
      phi_bar_.upload(in.hinge_phi_bar, size_t(m.nhinge));
    }
    if (in.loads_changed) f_time_.upload(in.f_time, size_t(m.ndof));
    if (in.part_scale_changed && in.part_scale) se_.set_part_scales(in.part_scale);
    // prescribed motion at the step's end
    motion_slot_ = nullptr;
    if (in.target) {
      const size_t n = in.target_fixed ? m.fixed_dof.size() : m.motion_dof.size();
      target_.upload(in.target, n);
      motion_slot_ = in.target_fixed ? d_fixed_slot_.data() : d_motion_slot_.data();
    }
    c_u_ = in.c.c_u;
    dt_ = in.dt;
    t_eval_ = in.c.t_eval;
    if (!m.signals.empty()) {  // the families' time functions at the evaluation time
      Real sv[kMaxSignals];
      eval_signals(m, t_eval_, in.c.load_factor, sv);
      signal_.upload(sv, kMaxSignals);
    }
    X::for_each(m.ndof, Predict{spec_.kind, in.dt, spec_.beta, spec_.gamma, q_.data(), u_.data(),
                                a_.data(), d_dof_fixed_.data(), q_hat_.data(), u_hat_.data(), 0,
                                motion_slot_, target_.data(), 0});
    // the damping terms' start of the step: the elastic Hessians at q, the Kelvin-Voigt anchors
    if (m.stiffness_damping) se_.keep_start_stiffness(dv_, pools(), frames(), eval_view(q_.data()));
    if (m.kelvin_voigt && c_u_ > 0) se_.keep_kv_anchors(dv_, frames(), eval_view(nullptr));
  }

  // ---- plan, pairs ----------------------------------------------------------------------------

  void use_plan(std::shared_ptr<const AssemblyPlan> plan) {
    const AssemblyPlan& p = *plan;
    pd_.nfree = p.nfree;
    pd_.energy_pool = p.energy_pool;
    pd_.grad_pool = p.grad_pool;
    pd_.hess_pool = p.hess_pool;
    for (int f = 0; f < kNumFamilies; ++f) {
      pd_.e_off[f] = p.e_off[f];
      pd_.g_off[f] = p.g_off[f];
      pd_.h_off[f] = p.h_off[f];
    }
    free_dof_.upload(p.free_dof);
    row_src_adr_.upload(p.row_src_adr);
    row_src_.upload(p.row_src);
    e_pool_.resize(size_t(p.energy_pool));
    flag_pool_.resize(size_t(p.energy_pool));
    g_pool_.resize(size_t(p.grad_pool));
    h_pool_.resize(size_t(p.hess_pool));
    f_.resize(size_t(p.nfree));
    dx_.resize(size_t(p.nfree));
    solve_.use_plan(std::move(plan));
  }

  // the view reads the pipeline's current lists (valid until its next find)
  void point_view_at_pairs() {
    const ContactFinder& c = *contacts_;
    const bool friction = model_->contact_friction();
    dv_.npair = c.nee();
    dv_.pair_node = c.nee() ? c.ee_node() : nullptr;
    dv_.pair_d = c.nee() ? c.ee_d() : nullptr;
    dv_.pair_mu = c.nee() && friction ? c.ee_mu() : nullptr;
    dv_.npt = c.npt();
    dv_.pt_node = c.npt() ? c.pt_node() : nullptr;
    dv_.pt_d = c.npt() ? c.pt_d() : nullptr;
    dv_.pt_mu = c.npt() && friction ? c.pt_mu() : nullptr;
  }

  // ---- evaluation ------------------------------------------------------------------------------

  Red4* slot(Slot s) { return slots_.data() + s; }
  Red4 read_slot(Slot s) {
    Red4 h{};
    X::to_host(&h, slots_.data() + s, 1);
    return h;
  }

  void sync_phase() {
    if (phase_timing_) X::sync();
  }

  // the pools (the step's evaluation, shared with the vectorized batch: engine/step_eval.h),
  // without Hessians unless `hess`
  EnvPools pools(bool hess = true) {
    return EnvPools{e_pool_.data(),    g_pool_.data(),  hess ? h_pool_.data() : nullptr,
                    flag_pool_.data(), pd_.energy_pool, pd_.grad_pool,
                    pd_.hess_pool,     pd_.e_off,       pd_.g_off,
                    pd_.h_off};
  }
  StepFrames frames() {
    return StepFrames{d1_.data(),     t_.data(),     ref_.data(),
                      d1_cur_.data(), t_cur_.data(), ref_cur_.data()};
  }

  // the frames at y: the step start's transported (d1_cur_, t_cur_) and the reference twists
  void frames_at(const Real* y) { se_.frames_at(dv_, frames(), y); }

  // the families' evaluation view at y (its frames: frames_at(y))
  EvalView eval_view(const Real* y) {
    EvalView ev{};
    ev.nenv = 1;
    ev.q = y;
    ev.edge_d1 = d1_cur_.data();
    ev.bend_ref_twist = ref_cur_.data();
    ev.bend_kappa_bar = kappa_bar_.data();
    ev.bend_tau_bar = tau_bar_.data();
    ev.hinge_phi_bar = phi_bar_.data();
    ev.natural_per_env = 0;
    ev.q_hat = q_hat_.data();
    ev.u_hat = u_hat_.data();
    ev.c_u = c_u_;
    ev.sedge_tau0 = tau0_.data();
    ev.signal = signal_.size() ? signal_.data() : nullptr;
    return ev;
  }

  // every stencil family at y into the pools, the elastic families scaled by the Young's
  // modulus scale and the parts' scales
  void eval_families(const Real* y, unsigned want) {
    const EvalView ev = eval_view(y);
    const EnvPools p = pools();
    for_each_family([&](auto binding, Family f, long grain) {
      se_.template eval_family<decltype(binding)>(dv_, p, f, ev, want, grain);
    });
    se_.scale_elastic(dv_, p, want);
    eval_user_energies(ev, want);
  }

  // the energies from the caller's code (stencils/user_energy.h) at the view's configuration,
  // into their parts of the pools (unscaled)
  void eval_user_energies(const EvalView& ev, unsigned want) {
    const std::vector<std::shared_ptr<const UserEnergy>>& us = model_->user_energies;
    if (us.empty()) return;
    const AssemblyPlan& p = solve_.plan();
    for (size_t i = 0; i < us.size(); ++i)
      us[i]->evaluate(UserEnergyArgs{!X::kHostMemory, dv_, ev, want,
                                     e_pool_.data() + p.user_e_off[i],
                                     g_pool_.data() + p.user_g_off[i],
                                     (want & kHess) ? h_pool_.data() + p.user_h_off[i] : nullptr,
                                     flag_pool_.data() + p.user_e_off[i]});
  }

  // residual and Jacobian values at y (device); returns |f|, sets phi_
  Real evaluate(const Real* y, const StepCoeffs& c, bool with_jacobian) {
    const Model& m = *model_;
    PhaseTimes& times = *times_;
    auto t0 = Clock::now();
    frames_at(y);
    sync_phase();
    if (phase_timing_) {
      times.frames += seconds_since(t0);
      t0 = Clock::now();
    }
    eval_families(y, with_jacobian ? kGradHess : kGrad);
    if (m.stiffness_damping) se_.add_stiffness_damping(dv_, pools(with_jacobian), eval_view(y));
    if (m.kelvin_voigt && c_u_ > 0)
      se_.add_kelvin_voigt(dv_, pools(with_jacobian), frames(), eval_view(y), dt_);
    sync_phase();
    if (phase_timing_) {
      times.eval += seconds_since(t0);
      t0 = Clock::now();
    }

    const Vec3 g = c.load_factor * gravity_;
    DofTerms dof_terms{m.nnode,
                       y,
                       q_hat_.data(),
                       u_hat_.data(),
                       f_time_.data(),
                       d_dof_mass_.data(),
                       d_node_dl_.data(),
                       d_node_volume_.data(),
                       m.buoyancy_density,
                       g[0],
                       g[1],
                       g[2],
                       m.viscosity,
                       mass_damping_,
                       c.c_m,
                       c.c_u,
                       dof_r_.data(),
                       dof_J_.data(),
                       dof_phi_.data()};
    // the parts' own alphas, unless set_params gave one for all
    if (m.mass_damping_per_part && !alpha_override_) dof_terms.dof_alpha = d_dof_alpha_.data();
    se_.dof_terms(dof_terms);
    if constexpr (X::kHostMemory) {
      // the caller's force at y and its velocity (host memory: the host executor's buffers)
      if (force_) {
        force_.call(t_eval_, m.ndof, y, nullptr, q_hat_.data(), u_hat_.data(), c_u_, with_jacobian);
        Real* r = dof_r_.data();
        for (int i = 0; i < m.ndof; ++i)
          r[i] -= force_.force[i];
      }
    }
    se_.residual(pd_.nfree, AssembleResidual{row_src_adr_.data(), row_src_.data(), free_dof_.data(),
                                             g_pool_.data(), dof_r_.data(), f_.data()});
    solve_.add_contact_residual(g_pool_.data() + pd_.g_off[kFamContact], f_.data());
    if (with_jacobian) {
      solve_.assemble(h_pool_.data(), dof_J_.data(), h_pool_.data() + pd_.h_off[kFamContact]);
      if constexpr (X::kHostMemory) {
        if (force_) {
          const AssemblyPlan& p = solve_.plan();
          force_.add_jacobian(c_u_, m.ndof, p.dof_free.data(), p.row_ptr.data(), p.col.data(),
                              solve_.values());
        }
      }
    }
    const long n = std::max({pd_.energy_pool, long(m.ndof), long(pd_.nfree)});
    X::reduce4(n,
               EvalSums{e_pool_.data(), pd_.energy_pool, dof_phi_.data(), long(m.ndof), f_.data(),
                        long(pd_.nfree)},
               partial_.data(), slot(kSlotEval));
    const Red4 s = read_slot(kSlotEval);
    if (phase_timing_) {
      times.assemble += seconds_since(t0);
    } else {
      times.eval += seconds_since(t0);
    }
    phi_ = s.s0 + s.s1;
    return std::sqrt(s.s2);
  }

  void take_step(Real alpha) {
    X::copy(y_trial_.data(), y_.data(), size_t(model_->ndof));
    X::for_each(pd_.nfree, ApplyNewtonStep{free_dof_.data(), dx_.data(), alpha, y_trial_.data()});
  }

  // ---- linear solve ----------------------------------------------------------------------------

  // dx = J^-1 f by the solve policy (engine/system_solve.h); false when even the fallback failed
  bool linear_solve(bool& fallback) {
    ++times_->factorizations;  // one per Newton iteration, as the CPU counts them
    return solve_.solve(f_.data(), dx_.data(), *times_, fallback);
  }

  // the pools' contact families for the pipeline's current pairs (the static families keep the
  // model plan's layout; the contact families are the last two); pools grow, never shrink
  void size_contact_pools() {
    const Family a = kFamContact, b = kFamContactPointTri;
    const long npair = contacts_->nee(), npt = contacts_->npt();
    pd_.e_off[b] = pd_.e_off[a] + npair;
    pd_.g_off[b] = pd_.g_off[a] + 12 * npair;
    pd_.h_off[b] = pd_.h_off[a] + 144 * npair;
    pd_.energy_pool = pd_.e_off[b] + npt;
    pd_.grad_pool = pd_.g_off[b] + 12 * npt;
    pd_.hess_pool = pd_.h_off[b] + 144 * npt;
    auto grow = [](auto& buf, long n) {
      if (long(buf.size()) < n) buf.resize(size_t(n + n / 4));
    };
    grow(e_pool_, pd_.energy_pool);
    grow(flag_pool_, pd_.energy_pool);
    grow(g_pool_, pd_.grad_pool);
    grow(h_pool_, pd_.hess_pool);
  }

  // ---- the end of a converged step ------------------------------------------------------------

  void finalize(Real dt, const StepCoeffs& c, DeviceStepWarnings& warn) {
    // the state, and the frames of the new configuration as the next step's start
    se_.end_step(dv_,
                 FinalizeStep{spec_.kind, dt, c.c_m, c.c_u, y_.data(), q_hat_.data(), u_hat_.data(),
                              d_dof_mass_.data(), d_dof_fixed_.data(), q_.data(), u_.data(),
                              a_.data(), 0, motion_slot_, target_.data(), 0},
                 frames(), tau0_.data(), /*midedge=*/true);
    if (pd_.energy_pool > 0) {
      X::reduce4(pd_.energy_pool, CountFlags{flag_pool_.data(), unsigned(kDegenerate)},
                 partial_.data(), slot(kSlotFlags));
      warn.degenerate += long(read_slot(kSlotFlags).s0);
    }
  }

  int device_;  // the device current at construction, current again in every call
  std::shared_ptr<const Model> model_;
  IntegratorSpec spec_;
  typename X::ModelData dm_;
  ModelView dv_{};  // the device model's view plus this step's pairs
  StepEval<X> se_;  // the step's stencil evaluation, scales and damping terms (one environment)
  PlanDims pd_;
  PhaseTimes* times_ = nullptr;
  bool phase_timing_ = false;
  bool friction_ = false;  // a friction force (the model's, or ground friction set_params set)
  // mass damping per part (Model::mass_damping_per_part): each DOF's alpha, unless set_params
  // replaced it for all
  bool alpha_override_ = false;
  Const<Real> d_dof_alpha_;
  // parameters (set_params): the model's unless set
  Vec3 gravity_;
  Real mass_damping_ = 0;
  Real c_u_ = 0, dt_ = 0, t_eval_ = 0, phi_ = 0;
  UserForce force_;  // the caller's force (host executors only)

  // model arrays the view does not hold
  Buffer<Real> d_dof_mass_;  // times the density scale
  Const<Real> d_node_dl_, d_node_volume_;
  Const<unsigned char> d_dof_fixed_;
  // prescribed motion: the model's slot maps, this step's targets and the map they use (null:
  // no motion this step)
  Const<int> d_fixed_slot_, d_motion_slot_;
  Buffer<Real> target_;
  Buffer<Real> signal_;  // the model's signals at the step's evaluation time (kMaxSignals)
  const int* motion_slot_ = nullptr;
  // state
  Buffer<Real> q_, u_, a_, d1_, t_, ref_, tau0_;
  // step workspace
  Buffer<Real> y_, y_trial_, q_hat_, u_hat_, f_time_, d1_cur_, t_cur_, ref_cur_;
  Buffer<Real> kappa_bar_, tau_bar_, phi_bar_;
  Buffer<Real> e_pool_, g_pool_, h_pool_, dof_r_, dof_J_, dof_phi_, f_, dx_;
  Buffer<unsigned> flag_pool_;
  // plan
  Const<int> free_dof_, row_src_adr_, row_src_;
  // contact pairs, found on the device
  std::unique_ptr<ContactFinder> contacts_;
  // the contact part of J assembled on the device (the PCG path), else the host's merged plan
  contact::ContactJacobian<X>* contact_jacobian_ = nullptr;  // (the solve policy's)
  // reductions
  Buffer<Red4> partial_, slots_;
  // solvers
  SystemSolveOn<X> solve_;  // the linear solve (engine/system_solve.h): the plan in use, J
};

}  // namespace stepper

}  // namespace slender
