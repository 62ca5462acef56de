#pragma once

// The engine's Newton step (engine/engine.h): a step of every environment (core/newton.h's loop),
// the residual query, the Newton directions (batched, one system, the pivoting fallback), the
// trial states and the end of the converged steps.
// Included by engine.h after the class; not a header of its own.

#include "slender/engine/engine.h"

namespace slender {

template <class X>
VectorStepResult Engine<X>::step(Real dt, const std::vector<unsigned char>& mask) {
  const int B = nenv_;
  // every environment steps from its own time, so coefficients are per step (one dt for all)
  SLENDER_CHECK(mask.empty() || int(mask.size()) == B, "step mask has ", mask.size(),
                " entries for ", B, " environments");
  std::vector<unsigned char> want(B, 1);
  if (!mask.empty()) want = mask;
  step_inputs(want, dt);
  VectorStepResult res;
  newton_step(want, res, res.times);
  return res;
}

template <class X>
void Engine<X>::residual(const StepInputs& in,
                         const Real* y,
                         std::vector<Real>& f,
                         std::vector<Real>* jacobian) {
  const Model& m = *model_;
  SLENDER_CHECK(system_, "residual queries run with one environment");
  PhaseTimes scratch;
  times_ = &scratch;
  take_inputs(in);
  predict();
  X::upload(y_trial_, y, size_t(m.ndof));
  std::vector<Real> r(1), phi(1);
  evaluate(y_trial_.data(), r, phi, jacobian != nullptr);
  f_.download(f);
  f.resize(size_t(pd_.nfree));
  if (jacobian) system_->dense_on_host(*jacobian);
}

template <class X>
void Engine<X>::newton_step(const EnvMask& want, VectorStepResult& res, PhaseTimes& times) {
  const Model& m = *model_;
  const int B = nenv_;
  times_ = &times;
  res.reports.assign(B, StepReport{});
  active_h_ = want;
  push_active();
  predict();
  X::copy(y_.data(), q_hat_.data(), size_t(B) * m.ndof);
  if (inexact()) forcing_r_.assign(size_t(B), 0);  // (no direction yet)
  std::vector<Real> r(B), phi(B);
  // the first directions of the environments likely to iterate, taken before the predictor's
  // sums are read (fused_first_mask), or none
  const EnvMask first = fused_first_mask(want);
  const bool fused = std::any_of(first.begin(), first.end(), [](unsigned char v) { return v; });
  std::vector<NewtonDirection> d_first(fused ? size_t(B) : 0);
  std::vector<Real> r_first(fused ? size_t(B) : 0), phi_first(fused ? size_t(B) : 0);
  std::vector<unsigned char> first_fallback;  // their solves' fallbacks
  if (fused) {
    const Clock::time_point t0 = evaluate_begin(y_.data(), true);
    X::env_reduce_to(B, eval_sums_len(), eval_sums(), pred_red_);
    evaluate_end(t0, nullptr, r, phi);  // (its time; the sums are read with the direction's)
    pred_pending_ = true;
    pred_mask_ = want;
    pred_r_ = &r;
    pred_phi_ = &phi;
    set_forcing(first, nullptr, res.reports.data());
    directions_and_trials(first, d_first, r_first, phi_first, res);
    first_fallback = fallback_h_;
    read_pending_predictor();  // (where the directions' read did not take them)
  } else {
    evaluate(y_.data(), r, phi, true);
  }
  EnvMask took_first(static_cast<size_t>(B), 0);  // those whose first direction Newton took
  bool first_call = true;
  std::vector<long> ls_warn(B, 0);
  // the line search goes by the residual where the forces have no potential
  // (and where contact or stretching forces are the step's secants, whose potential is not
  // evaluated)
  EnvMask no_potential = friction_;
  // (and where a load has none: a moment or a follower wrench, families_have_potential)
  if (force_ || contact_step().a > 0 || stretch_secant_on(spec_) || !families_have_potential(m))
    for (unsigned char& v : no_potential)
      v = 1;
  const EnvMask done = newton_iterations(
      spec_.newton, want, no_potential, r, phi, res.reports.data(), ls_warn.data(),
      times.line_search,
      [&](const EnvMask& running, std::vector<NewtonDirection>& d, std::vector<Real>& r_new,
          std::vector<Real>& phi_new) {
        EnvMask now = running;  // the environments whose directions are taken now
        const bool reuse = first_call && fused;
        if (reuse)
          for (int e = 0; e < B; ++e) {
            took_first[e] = running[e] && first[e];
            if (took_first[e]) now[e] = 0;
          }
        first_call = false;
        if (std::any_of(now.begin(), now.end(), [](unsigned char v) { return v; })) {
          set_forcing(now, &r, res.reports.data());
          directions_and_trials(now, d, r_new, phi_new, res);
          count_directions(now, fallback_h_, res);
        }
        if (reuse) {
          for (int e = 0; e < B; ++e)
            if (took_first[e]) {
              d[e] = d_first[e];
              r_new[e] = r_first[e];
              phi_new[e] = phi_first[e];
            }
          count_directions(took_first, first_fallback, res);
        }
        return true;  // (the full step's trials taken with the directions)
      },
      [&](const EnvMask& mask, const std::vector<Real>& alpha, std::vector<Real>& r_new,
          std::vector<Real>& phi_new) {
        trial(mask, alpha);
        evaluate(y_trial_.data(), r_new, phi_new, true);
      },
      [&](const EnvMask& mask) { accept(mask); });
  for (int e = 0; e < B; ++e) {
    res.reports[e].dt = dt_;
    res.line_search_warnings += ls_warn[e];
    warn_[3 * e + 2] += ls_warn[e];
    if (want[e]) times.newton_iters += res.reports[e].iterations;
    unsigned char& run = iterated_h_[size_t(e)];
    if (want[e]) run = res.reports[e].iterations == 0 ? 0 : run < 255 ? run + 1 : run;
  }
  if (fused) {
    // an environment whose first direction and trial were taken and not used (it converged or
    // failed at its predictor): evaluated at its predictor again, as its non-fused step ends
    EnvMask again(static_cast<size_t>(B), 0);
    bool any = false;
    for (int e = 0; e < B; ++e) {
      again[e] = first[e] && !took_first[e];
      any = any || again[e];
    }
    if (any) {  // (no read: the sums are the predictor's, its degenerate flags kept)
      active_h_ = again;
      push_active();
      evaluate_again();
      for (int e = 0; e < B; ++e)
        if (again[e]) degenerate_seen_[size_t(e)] = pred_degenerate_[size_t(e)];
    }
  }
  clear_forcing();
  finalize(done, res);
}

template <class X>
void Engine<X>::directions_and_trials(const EnvMask& running,
                                      std::vector<NewtonDirection>& d,
                                      std::vector<Real>& r_new,
                                      std::vector<Real>& phi_new,
                                      VectorStepResult& res) {
  if (system_) return system_direction_and_trial(d, r_new, phi_new);
  batch_direction_and_trial(running, d, r_new, phi_new, res);
}

template <class X>
void Engine<X>::batch_direction_and_trial(const EnvMask& running,
                                          std::vector<NewtonDirection>& d,
                                          std::vector<Real>& r_new,
                                          std::vector<Real>& phi_new,
                                          VectorStepResult& res) {
  const int B = nenv_, nf = pd_.nfree;
  auto t0 = Clock::now();
  active_h_ = running;
  push_active();
  std::vector<unsigned char>& okh = ok_h_;
  const bool ok_read =
      batched_->solve(active_h_, active_.data(), h_pool_.data(), dof_J_.data(), f_.data(),
                      dx_.data(), okh, fallback_h_, res.solve, /*defer_ok=*/true);
  X::env_reduce_to(
      B, nf,
      env_major::SlopeMax{nf, dx_.data(), f_.data(), ok_read ? nullptr : batched_->ok_flags()},
      slope_red_);
  times_->solve += seconds_since(t0);
  // every running environment's full step, evaluated before the slopes and flags are read
  // (the slopes apart from sums_, which a fallback's evaluations below use)
  Red4* sm = full_step_trials(running, r_new, phi_new);
  if (!ok_read)
    for (int e = 0; e < B; ++e)
      okh[e] = running[e] && sm[e].s1 > 0 ? 1 : 0;
  // an environment whose system the batched solve could not take: its residual and Jacobian
  // at the iterate again (the trial's evaluation took their place), the pivoting solve, its
  // slope, and its trial again
  EnvMask redo(static_cast<size_t>(B), 0);
  for (int e = 0; e < B; ++e)
    redo[e] = running[e] && !okh[e] ? 1 : 0;
  if (std::any_of(redo.begin(), redo.end(), [](unsigned char v) { return v != 0; })) {
    active_h_ = redo;
    push_active();
    evaluate_again();
    t0 = Clock::now();
    for (int e = 0; e < B; ++e)
      if (redo[e]) {
        okh[e] = pivoting_solve(e) ? 1 : 0;
        fallback_h_[e] = 1;
      }
    std::vector<Red4> again(static_cast<size_t>(B));
    X::env_reduce(B, nf, env_major::SlopeMax{nf, dx_.data(), f_.data()}, again.data(),
                  red_scratch_);
    times_->solve += seconds_since(t0);
    for (int e = 0; e < B; ++e)
      if (redo[e]) sm[e] = again[size_t(e)];
    // (evaluate sets the residual norms and potentials of the environments in redo alone)
    trial(redo, std::vector<Real>(static_cast<size_t>(B), 1));
    evaluate(y_trial_.data(), r_new, phi_new, true);
  }
  for (int e = 0; e < B; ++e)
    if (running[e]) d[e] = NewtonDirection{okh[e] && sm[e].s2 == 0, sm[e].s0, sm[e].m0};
}

template <class X>
void Engine<X>::system_direction_and_trial(std::vector<NewtonDirection>& d,
                                           std::vector<Real>& r_new,
                                           std::vector<Real>& phi_new) {
  const int nf = pd_.nfree;
  bool fallback = false;
  d[0] = NewtonDirection{};
  system_->set_geometry(y_.data(), 3 * model_->nnode);
  // (a band's status, where the solver leaves it on X, read with the slope)
  const int* status = nullptr;
  const bool solved = system_->solve(f_.data(), dx_.data(), *times_, fallback, &status);
  fallback_h_.assign(1, fallback ? 1 : 0);
  if (!solved) return;  // (the step fails: no trial)
  // (no free DOF: a slope and a step of 0, as NewtonDirection's)
  X::env_reduce_to(1, nf, env_major::SlopeMax{nf, dx_.data(), f_.data(), nullptr, status},
                   slope_red_);
  // the full step's trial, evaluated before the slope is read (a non-finite dx's too: the
  // step fails and the trial is ignored)
  Red4 sm = *full_step_trials(EnvMask(1, 1), r_new, phi_new);
  if (status && sm.s1 == 2) {
    // the band met a pivot too small (no solve): the iterate's residual and Jacobian again (the
    // trial's took their place), the sparse path for them, counted as a fallback, then its
    // slope and its trial, as the solve that reads its status at once takes them
    fallback_h_[0] = 1;
    evaluate_again();
    if (!system_->solve_after_pivot(f_.data(), dx_.data(), *times_)) return;
    X::env_reduce_to(1, nf, env_major::SlopeMax{nf, dx_.data(), f_.data()}, slope_red_);
    sm = *full_step_trials(EnvMask(1, 1), r_new, phi_new);
  } else if (status && sm.s1 != 1) {
    return;  // a result not finite: the direction fails (as a solve that reads its status)
  }
  d[0] = NewtonDirection{sm.s2 == 0, sm.s0, sm.m0};
}

template <class X>
Red4* Engine<X>::full_step_trials(const EnvMask& mask,
                                  std::vector<Real>& r_new,
                                  std::vector<Real>& phi_new) {
  const int B = nenv_;
  trial(mask, std::vector<Real>(static_cast<size_t>(B), 1));
  const Clock::time_point t0 = evaluate_begin(y_trial_.data(), true);
  X::env_reduce_to(B, eval_sums_len(), eval_sums(), eval_red_);
  const int lists = pred_pending_ ? 3 : 2;
  pack_red_.resize(3 * size_t(B));  // (room for three lists: a step allocates nothing new when
                                    // its predictor's read joins)
  X::for_each(B,
              env_major::PackSums{slope_red_.data(), eval_red_.data(),
                                  pred_pending_ ? pred_red_.data() : nullptr, pack_red_.data(), B});
  pack_h_.resize(size_t(lists) * size_t(B));
  X::to_host(pack_h_.data(), pack_red_.data(), pack_h_.size());
  // the predictor's first: its degenerate flags give way to the trial's
  if (pred_pending_) take_predictor_sums(pack_h_.data() + 2 * B);
  evaluate_end(t0, pack_h_.data() + B, r_new, phi_new);
  return pack_h_.data();
}

template <class X>
void Engine<X>::read_pending_predictor() {
  if (!pred_pending_) return;
  sums_.resize(size_t(nenv_));
  X::to_host(sums_.data(), pred_red_.data(), sums_.size());
  take_predictor_sums(sums_.data());
}

template <class X>
void Engine<X>::take_predictor_sums(const Red4* s) {
  pred_pending_ = false;
  take_sums(pred_mask_, s, *pred_r_, *pred_phi_);
  pred_degenerate_ = degenerate_seen_;
}

template <class X>
void Engine<X>::evaluate_again() {
  std::vector<Real> unread;  // (evaluate_end without sums: its phase's time alone)
  evaluate_end(evaluate_begin(y_.data(), true), nullptr, unread, unread);
}

template <class X>
bool Engine<X>::inexact() const {
  return spec_.newton.inexact &&
         ((system_ && system_->iterative()) || (batched_ && batched_->kind() == VecSolver::kPcg));
}

template <class X>
void Engine<X>::set_forcing(const EnvMask& now,
                            const std::vector<Real>* r,
                            const StepReport* reps) {
  if (!inexact()) return;
  const size_t B = size_t(nenv_);
  forcing_r_.resize(B, 0);
  forcing_eta_.resize(B, kForcingFirst);
  for (size_t e = 0; e < B; ++e) {
    if (!now[e]) continue;
    if (!r) {  // (the norm not read yet: the step's first norm, at the next direction)
      forcing_eta_[e] = kForcingFirst;
      forcing_r_[e] = -1;
      continue;
    }
    const Real r0 = reps[e].residual0, prev = forcing_r_[e] < 0 ? r0 : forcing_r_[e];
    forcing_eta_[e] = newton_forcing((*r)[e], prev, newton_bound(spec_.newton, r0));
    forcing_r_[e] = (*r)[e];
  }
  if (system_) system_->set_krylov_tol(forcing_eta_[0]);
  if (batched_) batched_->set_krylov_tol(forcing_eta_);
}

template <class X>
void Engine<X>::clear_forcing() {
  if (!inexact()) return;
  if (system_) system_->set_krylov_tol(kKrylovRelTol);
  if (batched_) batched_->set_krylov_tol({});
}

template <class X>
EnvMask Engine<X>::fused_first_mask(const EnvMask& want) const {
  // an environment's first direction is taken ahead after two steps in a row that iterated: a
  // scene at rest that alternates steps with and without iterations (rod_drop on the ground:
  // 841 of its first 2,000 steps converge at their predictor) would waste a direction every
  // other step after one (46 % more direct-solver calls and fewer reads saved, counted on the
  // host), and wastes 0.1 % after two
  constexpr unsigned char kFusedAfter = 2;
  EnvMask first(want.size(), 0);
  // (the caller's force runs on the host, whose reads cost nothing, at every evaluation: a
  // direction taken ahead would call it more often)
  if (!fuse_predictor_read_ || force_ || (system_ && system_->iterative())) return first;
  for (size_t e = 0; e < want.size(); ++e)
    first[e] = want[e] && iterated_h_[e] >= kFusedAfter ? 1 : 0;
  return first;
}

template <class X>
void Engine<X>::count_directions(const EnvMask& mask,
                                 const std::vector<unsigned char>& fallback,
                                 VectorStepResult& res) {
  // (one factorization per Newton iteration, as the CPU counts them)
  if (system_ && mask[0]) ++times_->factorizations;
  for (int e = 0; e < nenv_; ++e)
    if (mask[e] && e < int(fallback.size()) && fallback[size_t(e)]) {
      ++res.linear_fallbacks;
      ++warn_[3 * e + 1];
    }
}

template <class X>
bool Engine<X>::pivoting_solve(int e) {
  const Model& m = *model_;
  const AssemblyPlan& p = *plan_;
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
  // the CSR values as the engine's assembly makes them (engine/assemble.h), on the host
  Real* val = fallback_->values();
  const AssembleJacobian slots{p.slot_src_adr.data(), p.slot_src.data(), fb_h_.data(), val};
  for (int slot = 0; slot < p.nnz(); ++slot)
    slots(slot);
  const AddDiagonal diag{p.diag_slot.data(), p.free_dof.data(), fb_dofJ_.data(), val};
  for (int r = 0; r < p.nfree; ++r)
    diag(r);
  // the identity's rows and columns where e holds a DOF of the pattern (as the batched gather)
  if (held_) {
    const unsigned char* fe = fixed(e);
    for (int r = 0; r < p.nfree; ++r)
      for (int sl = p.row_ptr[r]; sl < p.row_ptr[r + 1]; ++sl)
        if (fe[p.free_dof[r]] || fe[p.free_dof[p.col[sl]]]) val[sl] = p.col[sl] == r ? 1 : 0;
  }
  if (!fallback_->factorize() || !fallback_->solve(fb_f_.data(), fb_dx_.data())) return false;
  X::upload_at(dx_, size_t(e) * p.nfree, fb_dx_.data(), size_t(p.nfree));
  return true;
}

template <class X>
void Engine<X>::trial(const std::vector<unsigned char>& mask, const std::vector<Real>& alpha) {
  const Model& m = *model_;
  active_h_ = mask;
  push_active();
  if (alpha_dev_h_ != alpha) {  // the full step for every environment, mostly
    X::upload(alpha_, alpha.data(), size_t(nenv_));
    alpha_dev_h_ = alpha;
  }
  se_.copy(y_trial_.data(), y_.data(), m.ndof);
  se_.run(pd_.nfree,
          env_major::NewtonStep{pd_.nfree, m.ndof, free_dof_.data(), dx_.data(), alpha_.data(),
                                y_trial_.data()},
          kParallelGrainHeavy);
}

template <class X>
void Engine<X>::newmark_contact_force(FinalizeStep& fin) {
  const Model& m = *model_;
  std::vector<Real> r(nenv_), phi(nenv_);
  contact_secant_off_ = true;
  evaluate(y_.data(), r, phi, false);
  contact_secant_off_ = false;
  contact_force_.resize(size_t(nenv_) * size_t(m.ndof));
  se_.copy(contact_force_.data(), zero_dofs(), m.ndof);
  se_.run(pd_.nfree,
          env_major::NegScatterFree{pd_.nfree, m.ndof, free_dof_.data(), f_.data(),
                                    contact_force_.data()},
          kParallelGrain);
  fin.contact_force = contact_force_.data();
  fin.contact_u = dt_ * (spec_.gamma - 2 * spec_.beta);
  fin.env = scaled_ ? params_.data() : nullptr;
}

template <class X>
void Engine<X>::finalize(const std::vector<unsigned char>& done, VectorStepResult& res) {
  const int B = nenv_;
  if (std::none_of(done.begin(), done.end(), [](unsigned char v) { return v != 0; })) return;
  active_h_ = done;
  push_active();
  FinalizeStep fin{spec_.kind,   dt_,           c_.c_m,        c_.c_u,
                   y_.data(),    q_hat_.data(), u_hat_.data(), dof_mass_.data(),
                   fixed_ptr(),  q_.data(),     u_.data(),     a_.data(),
                   env_stride(), step_slot_,    step_target_,  step_target_stride_};
  fin.fixed_per_env = fixed_per_env_;
  const bool newmark_contact = spec_.kind == IntegratorKind::kNewmark && contact_step().a > 0;
  if (newmark_contact) newmark_contact_force(fin);
  // the state, and the frames of the new configuration as the next step's start
  se_.end_step(mv_, fin, frames(), tau0_.data(), /*midedge=*/true);
  // the degenerate stencils of the last evaluation, counted where it saw one (a host read less
  // a step where none is; Newmark's contact force evaluates the contact stencils once more)
  // (degenerate_seen_: sized by the step's first evaluation)
  bool count = newmark_contact;
  for (int e = 0; e < B; ++e)
    count = count || (done[e] && degenerate_seen_[size_t(e)]);
  if (pd_.energy_pool > 0 && count) {
    std::vector<Red4>& s = sums_;
    s.resize(size_t(B));
    X::env_reduce(B, pd_.energy_pool, env_major::DegenerateCount{pd_.energy_pool, flags_.data()},
                  s.data(), red_scratch_);
    for (int e = 0; e < B; ++e)
      if (done[e]) {
        res.degenerate += long(s[e].s0);
        warn_[3 * e] += long(s[e].s0);
      }
  }
  for (int e = 0; e < B; ++e)
    if (done[e]) {
      time_[e] += dt_;
      ++steps_[e];
      ++times_->steps;
    }
}

}  // namespace slender
