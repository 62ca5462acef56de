#pragma once

// The engine's evaluation (engine/engine.h): the views of the stencils' inputs, the contact
// pairs and their pools, and the residual, potentials and Jacobians of every environment at q.
// Included by engine.h after the class; not a header of its own.

#include "slender/engine/engine.h"

namespace slender {

template <class X>
void Engine<X>::find_contacts(Real dt) {
  SLENDER_CHECK(contacts_, "find_contacts: the model has no contact between bodies");
  const bool ch = contacts_->find(q_.data(), u_.data(), dt);
  point_view_at_pairs();
  if (!ch) return;
  // the contact part's pattern on the executor (the direct path: the merged pattern, which
  // alone goes to the host, for the solver's analysis)
  size_contact_pools();
  system_->build_contact(mv_);
}

template <class X>
EvalView Engine<X>::eval_view(const Real* q, const Real* d1, const Real* ref) {
  EvalView ev{};
  ev.nenv = nenv_;
  ev.q = q;
  ev.edge_d1 = d1;
  ev.bend_ref_twist = ref;
  ev.bend_kappa_bar = kappa_.data();
  ev.bend_tau_bar = tau_.data();
  ev.hinge_phi_bar = phi_.data();
  ev.mid_kappa_bar = mid_kappa_.data();
  ev.edge_stretch_bar = stretch_.data();
  ev.natural_per_env = 1;
  ev.sedge_tau0 = tau0_.data();
  ev.signal = signal_.size() ? signal_.data() : nullptr;
  return ev;
}

template <class X>
EvalView Engine<X>::step_eval_view(const Real* q) {
  EvalView ev = eval_view(q, d1_cur_.data(), ref_cur_.data());
  ev.q_hat = q_hat_.data();
  ev.u_hat = u_hat_.data();
  ev.c_u = c_.c_u;
  const ContactStepCoeffs cs = contact_step();
  if (cs.a > 0) {  // the secant normal contact forces from the step's start
    ev.q_start = q_.data();
    ev.contact_a = cs.a;
    ev.contact_w = contact_secant_off_ ? 0 : cs.w;
    ev.contact_hm = cs.hm;
    ev.contact_cu = cs.cu;
  }
  if (stretch_secant_on(spec_)) {  // the energy-momentum stretching from the step's start
    ev.q_start = q_.data();
    ev.stretch_secant = 1;
  }
  return ev;
}

template <class X>
void Engine<X>::point_view_at_pairs() {
  const ContactFinder& c = *contacts_;
  const bool friction = model_->contact_friction();
  mv_.npair = c.nee();
  mv_.pair_node = c.nee() ? c.ee_node() : nullptr;
  mv_.pair_d = c.nee() ? c.ee_d() : nullptr;
  mv_.pair_mu = c.nee() && friction ? c.ee_mu() : nullptr;
  mv_.npt = c.npt();
  mv_.pt_node = c.npt() ? c.pt_node() : nullptr;
  mv_.pt_d = c.npt() ? c.pt_d() : nullptr;
  mv_.pt_mu = c.npt() && friction ? c.pt_mu() : nullptr;
}

template <class X>
void Engine<X>::size_contact_pools() {
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
  grow(flags_, pd_.energy_pool);
  grow(g_pool_, pd_.grad_pool);
  if (matrix_free_) {
    grow(prod_pool_, pd_.grad_pool);
  } else {
    grow(h_pool_, pd_.hess_pool);
  }
}

template <class X>
void Engine<X>::eval_families(const EvalView& ev, unsigned want) {
  const EnvPools p = pools();  // (the Hessians written only with kHess in want)
  // every family; the ground with each environment's own friction coefficient
  for_each_family([&](auto binding, Family f, long grain) {
    using Bd = decltype(binding);
    if constexpr (std::is_same_v<Bd, GroundBinding>) {
      eval_ground(ev, want);
    } else {
      se_.template eval_family<Bd>(mv_, p, f, ev, want, grain);
    }
  });
  se_.scale_elastic(mv_, p, want);
  eval_user_energies(ev, want);
}

template <class X>
void Engine<X>::check_matrix_free(const Model& m) const {
  const char* what = matrix_free_refusal(m);
  SLENDER_CHECK(!what,
                "the matrix-free solver (matrix-free) evaluates the stencils' Hessians in each "
                "product and keeps no matrix; ",
                what ? what : "",
                " adds to the Jacobian apart from them: use pcg (or a direct solver)");
}

template <class X>
void Engine<X>::hessian_products(int column) {
  SLENDER_CHECK(jac_q_, "a Jacobian product before any evaluation with a Jacobian");
  const EvalView ev = step_eval_view(jac_q_);
  const long ndof = model_->ndof;
  for_each_family([&](auto binding, Family f, long grain) {
    using Bd = decltype(binding);
    const long n = Bd::count(mv_);
    if (n == 0) return;
    const HessianProductOut<Bd::kDofs> out{prod_pool_.data() + pd_.g_off[f], pd_.grad_pool,
                                           prod_x_.data(), ndof, column};
    // (one environment: X's plain loops, no masked variants)
    if constexpr (std::is_same_v<Bd, GroundBinding>) {
      X::for_each(
          n,
          env_major::GroundProduct{mv_, ev, n, out, mu_.data(), scaled_ ? params_.data() : nullptr},
          kParallelGrainHeavy);
    } else {
      X::for_each(n, HessianProductStencils<Bd>{mv_, ev, n, out}, grain);
    }
  });
  // (each elastic stencil's scales multiply its Hessian, as its gradient's)
  const EnvPools p{nullptr,       prod_pool_.data(), nullptr,   nullptr,   pd_.energy_pool,
                   pd_.grad_pool, pd_.hess_pool,     pd_.e_off, pd_.g_off, pd_.h_off};
  se_.scale_elastic(mv_, p, kGrad);
}

template <class X>
void Engine<X>::jacobian_product(const Real* x, int column, Real* y) {
  const long nf = pd_.nfree;
  if (column < 0) {  // (x of the free rows into the vector of every DOF the stencils read)
    X::fill_zero(prod_x_.data(), size_t(model_->ndof));
    X::for_each(nf, ScatterFreeRows{free_dof_.data(), x, prod_x_.data()});
  }
  hessian_products(column);
  X::for_each(nf, MatrixFreeRows{row_src_adr_.data(), row_src_.data(), free_dof_.data(),
                                 prod_pool_.data(), dof_J_.data(), x, column, y});
  system_->add_contact_residual(prod_pool_.data() + pd_.g_off[kFamContact], y);
}

template <class X>
DofTerms Engine<X>::dof_terms_at(const Real* q, Real c_m, Real c_u, Real load_factor) {
  const Model& m = *model_;
  const Vec3 g = load_factor * m.gravity;
  return DofTerms{m.nnode,
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
                  c_m,
                  c_u,
                  dof_r_.data(),
                  dof_J_.data(),
                  dof_phi_.data(),
                  env_stride(),
                  scaled_ ? params_.data() : nullptr,
                  m.mass_damping_per_part ? dof_alpha_.data() : nullptr,
                  load_factor,
                  m.has_added_mass() ? node_added_mass_.data() : nullptr};
}

template <class X>
void Engine<X>::residual_rows() {
  const Model& m = *model_;
  se_.residual(pd_.nfree, AssembleResidual{row_src_adr_.data(), row_src_.data(), free_dof_.data(),
                                           g_pool_.data(), dof_r_.data(), f_.data(), pd_.nfree,
                                           m.ndof, pd_.grad_pool});
  // the rows of DOFs an environment holds though the pattern has them: no residual
  if (held_)
    se_.run(pd_.nfree,
            env_major::ZeroHeld{pd_.nfree, m.ndof, free_dof_.data(), fixed_env_.data(), f_.data()},
            kParallelGrain);
  if (system_) system_->add_contact_residual(g_pool_.data() + pd_.g_off[kFamContact], f_.data());
}

template <class X>
void Engine<X>::evaluate(const Real* q, std::vector<Real>& r, std::vector<Real>& phi, bool hess) {
  const Clock::time_point t0 = evaluate_begin(q, hess);
  std::vector<Red4>& s = sums_;
  s.resize(size_t(nenv_));
  X::env_reduce(nenv_, eval_sums_len(), eval_sums(), s.data(), red_scratch_);
  evaluate_end(t0, s.data(), r, phi);
}

template <class X>
typename Engine<X>::Clock::time_point Engine<X>::evaluate_begin(const Real* q, bool hess) {
  const Model& m = *model_;
  PhaseTimes& times = *times_;
  auto t0 = Clock::now();
  frames_at(q);
  sync_phase();
  if (phase_timing_) {
    times.frames += seconds_since(t0);
    t0 = Clock::now();
  }
  const EvalView ev = step_eval_view(q);
  // (matrix-free: no Hessians; the products evaluate them at this q, with these frames)
  eval_families(ev, hess && !matrix_free_ ? kGradHess : kGrad);
  if (hess) jac_q_ = q;
  if (m.stiffness_damping) se_.add_stiffness_damping(mv_, pools(hess), ev);
  if (m.kelvin_voigt && c_.c_u > 0) se_.add_kelvin_voigt(mv_, pools(hess), frames(), ev, dt_);
  sync_phase();
  if (phase_timing_) {
    times.eval += seconds_since(t0);
    t0 = Clock::now();
  }
  se_.dof_terms(dof_terms_at(q, c_.c_m, c_.c_u, c_.load_factor));
  if constexpr (X::kHostMemory) {
    // the caller's force at q and its velocity (host memory: the host executor's buffers)
    if (force_) {
      force_.call(c_.t_eval, m.ndof, q, nullptr, q_hat_.data(), u_hat_.data(), c_.c_u, hess);
      Real* rr = dof_r_.data();
      for (int i = 0; i < m.ndof; ++i)
        rr[i] -= force_.force[i];
    }
  }
  residual_rows();
  if (system_ && hess && !matrix_free_) {  // (matrix-free: nothing to assemble)
    system_->assemble(h_pool_.data(), dof_J_.data(), free_dof_.data(),
                      h_pool_.data() + pd_.h_off[kFamContact]);
    if constexpr (X::kHostMemory) {
      if (force_) {
        // (the solver's pattern: the plan's, or merged with the contact part's)
        force_.add_jacobian(c_.c_u, m.ndof, system_->plan().dof_free.data(),
                            system_->pattern_row_ptr().data(), system_->pattern_col().data(),
                            system_->values());
      }
    }
  }
  return t0;
}

template <class X>
env_major::EvalSums Engine<X>::eval_sums() const {
  return env_major::EvalSums{pd_.energy_pool, model_->ndof, pd_.nfree,    e_pool_.data(),
                             dof_phi_.data(), f_.data(),    flags_.data()};
}

template <class X>
long Engine<X>::eval_sums_len() const {
  return std::max({pd_.energy_pool, long(model_->ndof), long(pd_.nfree)});
}

template <class X>
void Engine<X>::evaluate_end(Clock::time_point t0,
                             const Red4* s,
                             std::vector<Real>& r,
                             std::vector<Real>& phi) {
  PhaseTimes& times = *times_;
  if (phase_timing_) {
    times.assemble += seconds_since(t0);
  } else {
    times.eval += seconds_since(t0);
  }
  if (s) take_sums(active_h_, s, r, phi);  // (none: the sums are read later)
}

template <class X>
void Engine<X>::take_sums(const EnvMask& mask,
                          const Red4* s,
                          std::vector<Real>& r,
                          std::vector<Real>& phi) {
  const int B = nenv_;
  degenerate_seen_.resize(size_t(B), 0);
  for (int e = 0; e < B; ++e) {
    if (!mask[e]) continue;
    phi[e] = s[e].s0 + s[e].s1;
    r[e] = std::sqrt(s[e].s2);
    degenerate_seen_[size_t(e)] = s[e].m0 > 0 ? 1 : 0;
  }
}

}  // namespace slender
