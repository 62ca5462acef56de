#pragma once

// The engine's inputs (engine/engine.h): the natural shape and the other actions, the
// environments' parameters and states, each step's inputs (loads, part scales, signals, motions;
// a front end's StepInputs), the boundary events and the held DOFs, the assembly plan.
// Included by engine.h after the class; not a header of its own.

#include "slender/engine/engine.h"

namespace slender {

template <class X>
void Engine<X>::clear_natural_shape() {
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
  mid_kappa_.fill_zero();
  const std::vector<Real> ones(size_t(nenv_) * m.nedge, Real(1));
  X::upload(stretch_, ones.data(), ones.size());
  std::fill(action_kind_, action_kind_ + kNaturalKinds, false);  // the scene's actuation again
}

template <class X>
void Engine<X>::set_action(Buffer<Real>& dst,
                           const Real* src,
                           long len,
                           bool in_executor,
                           const char* what,
                           bool positive) {
  const size_t n = size_t(nenv_) * size_t(len);
  // the action replaces the scene's actuation of its kind of natural value
  action_kind_[natural_kind_of(dst)] = true;
  if (!in_executor) return X::upload(dst, src, n);
  if (n == 0) return;
  std::vector<Red4> bad(static_cast<size_t>(nenv_));
  X::env_reduce(nenv_, len, env_major::NonFiniteCount{len, src}, bad.data(), red_scratch_);
  for (int e = 0; e < nenv_; ++e) {
    SLENDER_CHECK(bad[e].s0 == 0, what, ": ", long(bad[e].s0), " values of environment ", e,
                  " are not finite");
    SLENDER_CHECK(!positive || bad[e].s1 == 0, what, ": ", long(bad[e].s1),
                  " values of environment ", e, " are not positive");
  }
  X::copy(dst.data(), src, n);
}

template <class X>
void Engine<X>::set_params(int e, const EnvParams& p) {
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
  // positive one makes this environment's Jacobian non-symmetric for good (from here on LU
  // or QR on the direct path, BiCGSTAB on the iterative one)
  const bool fr = m.friction() || (m.ground.enabled && p.ground_friction > 0);
  if (fr) {
    if (system_) system_->make_nonsymmetric();
    if (batched_ && !nonsymmetric(m, spec_)) batched_->set_nonsymmetric(e);
  }
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
  if (nenv_ == 1) mv_.mass_scale = p.density_scale;  // the contact dashpots' masses
}

template <class X>
void Engine<X>::reset(const std::vector<unsigned char>& mask, const State& s) {
  SLENDER_CHECK(int(mask.size()) == nenv_, "reset mask has ", mask.size(), " entries for ", nenv_,
                " environments");
  check_state(s);
  X::upload(reset_mask_, mask.data(), mask.size());
  const unsigned char* mk = reset_mask_.data();
  for (const auto& p : state_parts(*this, s)) {
    X::upload(reset_src_, p.v->data(), p.v->size());
    each(long(nenv_) * p.len,
         env_major::Masked<env_major::Broadcast>{
             env_major::Broadcast{p.buf->data(), reset_src_.data(), p.len}, mk, p.len});
  }
  for (int e = 0; e < nenv_; ++e)
    if (mask[e]) set_counters(e, s);
}

template <class X>
void Engine<X>::step_inputs(const std::vector<unsigned char>& want, Real dt) {
  const Model& m = *model_;
  const int B = nenv_, nd = m.ndof;
  c_ = step_coeffs(spec_, 0, dt);  // c_m, c_u: the same at every time
  dt_ = dt;
  // the scene's boundary events due at each environment's time, and the held DOFs where the
  // executor and the plan follow them
  if (!m.event_time.empty()) apply_events(want, dt);
  if (fixed_stale_) refresh_fixed();
  // each environment's evaluation time and loads' factor
  eval_t_.resize(size_t(B));
  eval_lf_.resize(size_t(B));
  for (int e = 0; e < B; ++e) {
    const StepCoeffs ce = step_coeffs(spec_, time_[e], dt);
    eval_t_[size_t(e)] = ce.t_eval;
    eval_lf_[size_t(e)] = ce.load_factor;
  }
  // point loads and forces there; without any, the loads stay zero on the executor (no transfer
  // of nenv x ndof zeros every step)
  const bool loads = !m.point_loads.empty() || !forces_.empty();
  std::vector<Real>& ft = ft_scratch_;
  if (loads || !loads_zero_) ft.assign(size_t(B) * nd, 0);
  for (int e = 0; loads && e < B; ++e) {
    Real* fe = ft.data() + size_t(e) * nd;
    add_point_loads(m, eval_t_[size_t(e)], eval_lf_[size_t(e)], fe);
    if (!forces_.empty())
      for (int k = 0; k < 3 * m.nnode; ++k)
        fe[k] += forces_[size_t(e) * 3 * m.nnode + k];
  }
  if (loads || !loads_zero_) X::upload(f_time_, ft.data(), ft.size());
  loads_zero_ = !loads;
  // each part's modulus scale (every step for moduli in time, else only after the caller's
  // factors changed), the families' time functions and the scene's actuation there
  const bool scales = parts_scaled_ && (part_scale_stale_ || !m.youngs_time_part.empty());
  if (scales) part_scale_stale_ = false;
  inputs_at(eval_t_, eval_lf_, scales);

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
}

template <class X>
void Engine<X>::inputs_at(const std::vector<Real>& t, const std::vector<Real>& lf, bool scales) {
  const Model& m = *model_;
  const int B = nenv_;
  // each part's modulus scale at each environment's time t[e]
  if (scales) {
    const int np = m.npart;
    std::vector<Real>& ps = ps_scratch_;
    ps.assign(size_t(B) * np, 1);
    for (int e = 0; e < B; ++e) {
      if (!m.youngs_time_part.empty()) {
        const std::vector<Real> pt = part_youngs_scales(m, t[size_t(e)]);
        std::copy(pt.begin(), pt.end(), ps.begin() + size_t(e) * np);
      }
      for (int i = 0; i < np && !part_factor_h_.empty(); ++i)
        ps[size_t(e) * np + i] *= part_factor_h_[size_t(e) * np + i];
    }
    se_.set_part_scales(ps.data());
  }
  // the families' time functions there, with the loads' factor lf[e]
  if (!m.signals.empty()) {
    std::vector<Real>& sv = sig_scratch_;
    sv.assign(size_t(B) * kMaxSignals, 0);
    const bool values = !signal_value_h_.empty();
    for (int e = 0; e < B; ++e) {
      const size_t o = size_t(e) * kMaxSignals;
      eval_signals(m, t[size_t(e)], lf[size_t(e)], sv.data() + o,
                   values ? signal_value_h_.data() + o : nullptr,
                   values ? signal_set_h_.data() + o : nullptr);
    }
    X::upload(signal_, sv.data(), sv.size());
  }
  // the scene's actuation there (the kinds no action replaces)
  if (!m.actuated.empty()) actuate_at(t);
}

template <class X>
void Engine<X>::inputs_at_state() {
  c_ = StepCoeffs{};
  eval_lf_.resize(time_.size());
  for (size_t e = 0; e < time_.size(); ++e)
    eval_lf_[e] = load_factor_at(spec_, time_[e]);
  inputs_at(time_, eval_lf_, parts_scaled_);
}

template <class X>
void Engine<X>::take_inputs(const StepInputs& in) {
  const Model& m = *model_;
  if (fixed_stale_) refresh_fixed();  // (the plan of the held DOFs comes with the inputs)
  if (in.plan_changed && in.plan) use_plan(in.plan);
  if (in.natural_changed) {
    X::upload(kappa_, in.bend_kappa_bar, 2 * size_t(m.nbend));
    X::upload(tau_, in.bend_tau_bar, size_t(m.nbend));
    X::upload(phi_, in.hinge_phi_bar, size_t(m.nhinge));
    if (in.mid_kappa_bar) X::upload(mid_kappa_, in.mid_kappa_bar, 3 * size_t(m.nmid));
    if (in.edge_stretch_bar) X::upload(stretch_, in.edge_stretch_bar, size_t(m.nedge));
  }
  if (in.loads_changed) X::upload(f_time_, in.f_time, size_t(m.ndof));
  if (in.part_scale_changed && in.part_scale) se_.set_part_scales(in.part_scale);
  // prescribed motion at the step's end
  step_slot_ = nullptr;
  step_target_ = nullptr;
  step_target_stride_ = 0;
  if (in.target) {
    const size_t n = in.target_fixed ? m.fixed_dof.size() : m.motion_dof.size();
    X::upload(target_, in.target, n);
    step_slot_ = in.target_fixed ? fixed_slot_.data() : motion_slot_.data();
    step_target_ = target_.data();
  }
  c_ = in.c;
  dt_ = in.dt;
  if (!m.signals.empty()) {  // the families' time functions at the evaluation time
    Real sv[kMaxSignals];
    eval_signals(m, c_.t_eval, c_.load_factor, sv, in.signal_value, in.signal_set);
    X::upload(signal_, sv, kMaxSignals);
  }
}

template <class X>
void Engine<X>::ensure_params() {
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

template <class X>
void Engine<X>::use_plan(std::shared_ptr<const AssemblyPlan> plan) {
  const AssemblyPlan& p = *plan;
  const size_t B = size_t(nenv_);
  pd_ = PlanDims::of(p);
  // room for a quarter more than the plan needs wherever it needs more than there is: a contact
  // pair that comes or goes changes the plan, often every step of a contact phase, and each new
  // size was a cudaMalloc and a cudaFree (which waits for the device) on the GPU
  auto room = [](auto& buf, size_t n) {
    if (buf.capacity() < n) buf.reserve(n + n / 4);
  };
  auto put = [&](auto& buf, const std::vector<int>& host) {
    room(buf, host.size());
    buf.upload(host);
  };
  auto sized = [&](auto& buf, size_t n) {
    room(buf, n);
    buf.resize(n);
  };
  put(free_dof_, p.free_dof);
  put(row_src_adr_, p.row_src_adr);
  put(row_src_, p.row_src);
  sized(e_pool_, B * size_t(p.energy_pool));
  sized(flags_, B * size_t(p.energy_pool));
  sized(g_pool_, B * size_t(p.grad_pool));
  sized(h_pool_, matrix_free_ ? 0 : B * size_t(p.hess_pool));
  if (matrix_free_) {  // (one environment)
    sized(prod_pool_, size_t(p.grad_pool));
    sized(prod_x_, size_t(model_->ndof));
  }
  sized(f_, B * size_t(p.nfree));
  sized(dx_, B * size_t(p.nfree));
  plan_ = plan;
  if (system_) system_->use_plan(std::move(plan));
  // the contact part on the new plan's free rows (a new set of held DOFs; the constructor's
  // first plan comes before the contact finder and its part)
  if (contacts_) {
    size_contact_pools();  // (the plan's dimensions end before the contact families)
    system_->contact_part(*plan_, model_->ndof, /*renew=*/true);
    system_->build_contact(mv_);
  }
}

template <class X>
void Engine<X>::apply_events(const EnvMask& want, Real dt) {
  const Model& m = *model_;
  std::vector<int> stopped;
  for (int e = 0; e < nenv_; ++e) {
    const int done = events_done_[e];
    if (!want[e] || done >= int(m.event_time.size()) ||
        m.event_time[size_t(done)] > time_[e] + 1e-6 * dt)
      continue;
    ensure_fixed();
    stopped.clear();
    apply_boundary_events(m, time_[e], dt, events_done_[e], fixed_h_.data() + size_t(e) * m.ndof,
                          &stopped);
    stop(e, stopped);
    fixed_stale_ = true;
  }
}

template <class X>
void Engine<X>::refresh_fixed() {
  fixed_stale_ = false;
  const Model& m = *model_;
  const size_t nd = size_t(m.ndof), B = size_t(nenv_);
  bool model_set = true;
  for (size_t e = 0; e < B && model_set; ++e)
    model_set = std::equal(m.dof_fixed.begin(), m.dof_fixed.end(), fixed_h_.begin() + long(e * nd));
  fixed_per_env_ = !model_set;
  if (fixed_per_env_) X::upload(fixed_env_, fixed_h_.data(), fixed_h_.size());
  if (system_) {
    // one system: the front end's plan follows its set (StepInputs::plan), or, where the engine
    // runs without one (the rollout adjoint), the plan of the set held now
    if (plans_follow_fixed_) {
      const unsigned char* f = fixed_h_.data();
      bool same = true;
      for (size_t i = 0; i < nd && same; ++i)
        same = (plan_->dof_free[i] < 0) == (f[i] != 0);
      if (!same) use_plan(assembly_plan_for(model_, f));
    }
    return;
  }
  std::vector<unsigned char> all(nd, 1);
  for (size_t e = 0; e < B; ++e)
    for (size_t i = 0; i < nd; ++i)
      all[i] = all[i] && fixed_h_[e * nd + i];
  bool same = true;
  for (size_t i = 0; i < nd && same; ++i)
    same = (plan_->dof_free[i] < 0) == (all[i] != 0);
  if (!same) {
    use_plan(assembly_plan_for(model_, all.data()));
    batched_ =
        std::make_unique<VectorLinearSolve<X>>(*plan_, m.ndof, nenv_, solver_, !m.nonsymmetric());
    for (int e = 0; e < nenv_; ++e)
      if (friction_[e] && !m.nonsymmetric()) batched_->set_nonsymmetric(e);
    fallback_.reset();
  }
  held_ = false;
  for (size_t e = 0; e < B && !held_; ++e)
    for (int r = 0; r < plan_->nfree && !held_; ++r)
      held_ = fixed_h_[e * nd + size_t(plan_->free_dof[r])] != 0;
  batched_->set_fixed(held_ ? fixed_env_.data() : nullptr);
}

template <class X>
int Engine<X>::natural_kind_of(const Buffer<Real>& b) const {
  return &b == &kappa_ ? 0 : &b == &tau_ ? 1 : &b == &phi_ ? 2 : &b == &mid_kappa_ ? 3 : 4;
}

template <class X>
void Engine<X>::actuate_at(const std::vector<Real>& t) {
  const Model& m = *model_;
  bool any = false;
  for (int k = 0; k < kNaturalKinds; ++k)
    any = any || (actuated_kind_[k] && !action_kind_[k]);
  if (!any) return;  // every actuated kind is the caller's
  const size_t B = size_t(nenv_), nk = 2 * size_t(m.nbend), nt = size_t(m.nbend),
               nh = size_t(m.nhinge), nm = 3 * size_t(m.nmid), ns = size_t(m.nedge);
  for (size_t e = 0; e < B; ++e) {
    NaturalShape shape{act_kappa_.data() + e * nk,
                       act_tau_.data() + e * nt,
                       act_phi_.data() + e * nh,
                       m.nbend,
                       m.nhinge,
                       act_mid_.data() + e * nm,
                       m.nmid,
                       act_stretch_.data() + e * ns,
                       m.nedge};
    apply_scene_actuation(m, t[e], shape, act_row_, act_w_);
  }
  Buffer<Real>* dst[kNaturalKinds] = {&kappa_, &tau_, &phi_, &mid_kappa_, &stretch_};
  const std::vector<Real>* src[kNaturalKinds] = {&act_kappa_, &act_tau_, &act_phi_, &act_mid_,
                                                 &act_stretch_};
  for (int k = 0; k < kNaturalKinds; ++k)
    if (actuated_kind_[k] && !action_kind_[k]) X::upload(*dst[k], src[k]->data(), src[k]->size());
}

}  // namespace slender
