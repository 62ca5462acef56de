#pragma once

// The adjoint of a rollout (slender/adjoint.h, docs/gradients.md): the engine (engine/engine.h)
// with one environment runs N steps (implicit Euler, midpoint or Newmark), keeping checkpoints,
// and the backward sweep linearizes every converged step again with the engine's own inputs,
// evaluation, pools and plan. Below, implicit Euler's; the others' at the end.
//
// Step n solves R(y; x_n, v_n, alpha_n, p) = 0 on the free DOFs, with x_n+1 = y and
// v_n+1 = (y - x_n) / dt. The rods' reference frames are state too: the engine transports them
// from the step's start, so R depends on the start's tangents, and a step's frames on all
// earlier ones. Their one degree of freedom per edge beyond the tangent is a rotation alpha about
// it (relative to the unperturbed trajectory's frames carried to the perturbed tangent), and a
// rotation of the reference director by alpha is a shift of the twist angle by alpha (the
// material frame and the reference twist move together), so dR/dalpha_j = G e_j, G the columns
// of the stencils' Hessian at the twist DOFs. Two transports differ by their holonomy, whose
// first order is transport_holonomy_gradient (stencils/rod_frames.h), h_j = (T_n+1 x T_n) /
// (1 + T_n . T_n+1) for edge j between the step's tangents; with a_j = h_j / l_j(x_n),
// b_j = h_j / l_j(y) and (A dx)_j = a_j . (dx_b - dx_a) over the edge's nodes (B likewise):
//   the frames' rotation at y is alpha_n + A dx_n - B dy, which is also alpha_n+1;
//   dR/dy = J - G B (J: the engine's Jacobian, the stencils' exact Hessian with frames carried
//   from y; the step's frames come from the start, hence - G B);
//   dR/dx_n = -c_m M - V + G A, V = c_u dR/du (the forces that read the velocity
//   u = (y - x_n) / dt: friction, drag, the DOFs' damping);
//   dR/dv_n = -c_m M dt.
// Backwards, with xb, vb, ab the loss's derivatives by x_n+1, v_n+1, alpha_n+1:
//   (J - G B)^T lambda = xb + vb / dt - B^T ab       (on the free DOFs)
//   ab <- ab - G^T lambda
//   xb <- dL/dx_n - vb / dt + c_m M lambda + V^T lambda + A^T ab
//   vb <- dL/dv_n + c_m M dt lambda
//   dL/dp -= lambda^T dR/dp for the step's actions and the parameters.
// The mixed derivatives dR/dp come from the stencils and the per-DOF terms themselves: the rods'
// natural strains by RodBendTwistBinding::natural_strain_grad, the moduli's scales by the elastic
// stencils' forces (linear in E), the density and damping by dof_terms_eval with the parameters'
// coefficients, V by evaluating the non-elastic families again at the same velocity with
// c_u = 0 (their Jacobian is then dF/dq alone).
// The midpoint rule and Newmark (core/integrator.h) solve the same residual in their unknown y
// with their own c_m, c_u and predictor q_hat = q_n + pu u_n + pa a_n, u_hat = u_n + ua a_n;
// the sweep takes the loss's derivative by y through q_n+1, u_n+1 (a_n+1) as each integrator
// forms them (the midpoint rule: q_n+1 = 2 y - q_n, its frames carried from q_n to y and to
// q_n+1 apart; Newmark: a_n+1 = c_m (y - q_hat), an adjoint of its own), and hands lambda's
// share back through q_hat and u_hat (backward_step's Qh, Uh).
// The transpose is solved by the CPU's direct solver (LU on the plan's pattern), and the sweep's
// loops run on the host. On an executor whose memory the host cannot read (the CUDA executor),
// the rollout, its recomputed steps and each step's linearization (the stencils, their pools,
// the Jacobian's values) run on X, and the sweep reads copies of them (host_sync: with Rayleigh
// damping the start's stiffness and frames too, with Kelvin-Voigt damping its anchors, scales
// and the views at z and q_a; the anchors' copy is what kv_at_end moves and puts back).

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "slender/adjoint.h"
#include "slender/core/error.h"
#include "slender/engine/adjoint_engine.h"
#include "slender/engine/engine.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/model_view.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/rod_frames.h"

namespace slender {

/// throws slender::Error naming what the adjoint does not linearize exactly in this model
inline void check_adjoint_model(const Model& m, const IntegratorSpec& spec) {
  SLENDER_CHECK(spec.kind != IntegratorKind::kStatic,
                "gradients through time: the adjoint differentiates implicit Euler, implicit "
                "midpoint and Newmark steps; this scene's integrator is static (integrator.type)");
  // the caller's energies: those of the DOFs' values, a rod's twist angles among them, through
  // their Hessians alone; those that read the rods' frames, as the rods' own bend-twist springs,
  // with the frames' terms (G and their transport term, UserEnergy::reads_frames), unless they
  // read the natural strains, whose actions' derivatives their strains' derivatives do not give
  for (const std::shared_ptr<const UserEnergy>& u : m.user_energies)
    SLENDER_CHECK(!u->reads_natural_strains() || u->gives_natural_strain_grad(),
                  "gradients through time: energy '", u->name(),
                  "' (from the caller's code) may read the rods' natural strains, whose "
                  "derivative it does not give; an energy of the strains alone says so "
                  "(static constexpr bool kReadsNaturalStrains = false in its Energy type), and "
                  "one of their differences from the natural strains alone too "
                  "(kOfStrainDifferences = true)");
}

template <class X>
class RolloutAdjointOn {
 public:
  RolloutAdjointOn(std::shared_ptr<const Model> model,
                   const IntegratorSpec& spec,
                   const RolloutOptions& opt)
      : model_(std::move(model)),
        spec_(spec),
        opt_(opt),
        en_(model_, 1, spec, initial_state(*model_), opt.solver, EngineSolve::kSystem) {
    check_adjoint_model(*model_, spec);
    SLENDER_CHECK(opt.solver != LinearSolverKind::kMatrixFree,
                  "gradients through time read each step's local Hessians, which the "
                  "matrix-free solver does not keep: options.solver pcg, or a direct solver");
    en_.plans_follow_fixed_ = true;  // a boundary event's set of held DOFs takes its own plan
    SLENDER_CHECK(opt.checkpoint_every >= 0, "checkpoint_every must be >= 0, got ",
                  opt.checkpoint_every);
    SLENDER_CHECK(!model_->contact.enabled || !en_.system_->iterative(),
                  "gradients through time with contact between bodies solve each step with a "
                  "direct solver (the pairs' part merged into its matrix); options.solver is "
                  "iterative");
    if constexpr (!X::kHostMemory) hbase_ = host_view(*model_);
  }

  const Model& model() const { return *model_; }

  State run(const State& initial,
            int steps,
            const RolloutActions& a,
            const RolloutParams& p,
            std::vector<Real>* q,
            std::vector<Real>* u) {
    const Model& m = *model_;
    SLENDER_CHECK(steps >= 1, "rollout: steps must be >= 1, got ", steps);
    SLENDER_CHECK(state_fits(m, initial), "rollout: the initial state does not fit the model");
    check_size(a.kappa_bar, size_t(steps) * 2 * m.nbend, "actions.kappa_bar", "N x nbend x 2");
    check_size(a.tau_bar, size_t(steps) * m.nbend, "actions.tau_bar", "N x nbend");
    check_size(a.phi_bar, size_t(steps) * m.nhinge, "actions.phi_bar", "N x nhinge");
    check_size(a.midedge_kappa_bar, size_t(steps) * 3 * m.nmid, "actions.midedge_kappa_bar",
               "N x nmid x 3");
    check_size(a.stretch_bar, size_t(steps) * m.nedge, "actions.stretch_bar", "N x nedge");
    check_size(a.forces, size_t(steps) * 3 * m.nnode, "actions.forces", "N x nnode x 3");
    check_size(a.fixed_targets, size_t(steps) * m.fixed_dof.size(), "actions.fixed_targets",
               "N x nfixed");
    check_size(a.loads, size_t(steps) * m.signals.size(), "actions.loads", "N x nsignal");
    for (const std::vector<Real>* v : {&a.kappa_bar, &a.tau_bar, &a.phi_bar, &a.midedge_kappa_bar,
                                       &a.stretch_bar, &a.forces, &a.fixed_targets, &a.loads})
      for (size_t i = 0; i < v->size(); ++i)
        SLENDER_CHECK(std::isfinite((*v)[i]), "rollout: an action value is not finite (entry ", i,
                      ")");
    check_size(p.part_youngs_scale, size_t(m.npart), "params.part_youngs_scale", "npart");
    for (Real s : p.part_youngs_scale)
      SLENDER_CHECK(s > 0 && std::isfinite(s), "params.part_youngs_scale: ", s,
                    " is not positive and finite");
    SLENDER_CHECK(p.kelvin_voigt_scale > 0 && std::isfinite(p.kelvin_voigt_scale),
                  "params.kelvin_voigt_scale: ", p.kelvin_voigt_scale,
                  " is not positive and finite");
    en_.se_.set_kv_factor(p.kelvin_voigt_scale);
    N_ = steps;
    act_ = a;
    par_ = p;
    dt_ = spec_.dt;
    k_ = opt_.checkpoint_every > 0 ? opt_.checkpoint_every
                                   : std::max(1, int(std::ceil(std::sqrt(double(steps)))));
    EnvParams ep;
    ep.youngs_scale = p.youngs_scale;
    ep.density_scale = p.density_scale;
    ep.mass_damping = p.mass_damping;
    en_.set_params(0, ep);
    if (p.part_youngs_scale.empty()) {
      en_.clear_part_youngs_scale();
    } else {
      en_.set_part_youngs_scale(p.part_youngs_scale.data());
    }
    ckpt_.clear();
    en_.set_state(0, initial);
    if (q) q->assign(size_t(steps + 1) * m.ndof, 0);
    if (u) u->assign(size_t(steps + 1) * m.ndof, 0);
    State s = initial;
    record(0, s, q, u);
    for (int n = 0; n < steps; ++n) {
      if (n % k_ == 0) ckpt_.push_back(s);
      step(n);
      en_.get_state(0, s);
      record(n + 1, s, q, u);
    }
    final_ = s;
    recomputed_ = 0;
    return s;
  }

  RolloutGradient gradient(const RolloutLossGradient& loss) {
    const Model& m = *model_;
    SLENDER_CHECK(N_ > 0, "gradient: run a rollout first");
    const size_t nd = size_t(m.ndof);
    RolloutGradient g;
    g.kappa_bar.assign(size_t(N_) * 2 * m.nbend, 0);
    g.tau_bar.assign(size_t(N_) * m.nbend, 0);
    g.phi_bar.assign(size_t(N_) * m.nhinge, 0);
    g.midedge_kappa_bar.assign(size_t(N_) * 3 * m.nmid, 0);
    g.stretch_bar.assign(size_t(N_) * m.nedge, 0);
    g.forces.assign(size_t(N_) * 3 * m.nnode, 0);
    g.fixed_targets.assign(size_t(N_) * m.fixed_dof.size(), 0);
    g.loads.assign(size_t(N_) * m.signals.size(), 0);
    g.part_youngs_scale.assign(size_t(m.npart), 0);
    grad_ = &g;
    xb_.assign(nd, 0);
    vb_.assign(nd, 0);
    ab_.assign(size_t(m.nedge), 0);
    accb_.assign(nd, 0);
    if (loss) loss(N_, final_.q.data(), final_.u.data(), xb_.data(), vb_.data());
    const int nseg = int(ckpt_.size());
    std::vector<State> seg;
    for (int sg = nseg - 1; sg >= 0; --sg) {
      const int c = sg * k_, e = std::min(c + k_, N_);
      seg.assign(1, ckpt_[size_t(sg)]);
      if (e - c > 1) {
        en_.set_state(0, seg[0]);
        State s = seg[0];
        for (int n = c; n < e - 1; ++n) {
          step(n);
          en_.get_state(0, s);
          seg.push_back(s);
          ++recomputed_;
        }
      }
      seg.push_back(e == N_ ? final_ : ckpt_[size_t(sg + 1)]);
      for (int n = e - 1; n >= c; --n)
        backward_step(n, seg[size_t(n - c)], seg[size_t(n - c + 1)], loss);
    }
    g.q0 = xb_;
    g.u0 = vb_;
    g.a0 = accb_;
    const unsigned char* fixed = en_.fixed(0);
    for (size_t i = 0; i < nd; ++i)
      if (fixed[i]) g.q0[i] = g.u0[i] = g.a0[i] = 0;
    grad_ = nullptr;
    return g;
  }

  double state_bytes() const {
    const Model& m = *model_;
    return double(sizeof(Real)) * (3.0 * m.ndof + 6.0 * m.nedge + m.nbend + 3.0 * m.nsedge) +
           double(m.ndof);
  }
  double checkpoint_bytes() const { return double(ckpt_.size() + 1) * state_bytes(); }
  double segment_bytes() const { return double(std::min(k_, N_) + 1) * state_bytes(); }
  long recomputed_steps() const { return recomputed_; }

 private:
  static void check_size(const std::vector<Real>& v,
                         size_t want,
                         const char* field,
                         const char* layout) {
    SLENDER_CHECK(v.empty() || v.size() == want, "rollout: ", field, " has ", v.size(),
                  " values, expected ", want, " (", layout, ") or none");
  }
  void record(int n, const State& s, std::vector<Real>* q, std::vector<Real>* u) const {
    const size_t nd = size_t(model_->ndof);
    if (q) std::copy(s.q.begin(), s.q.end(), q->begin() + long(size_t(n) * nd));
    if (u) std::copy(s.u.begin(), s.u.end(), u->begin() + long(size_t(n) * nd));
  }

  // step n's actions into the engine
  void set_inputs(int n) {
    const Model& m = *model_;
    // the model's natural shape and the scene's actuation (a function of time alone), then the
    // rollout's actions, each replacing the actuation of its kind
    en_.clear_natural_shape();
    if (!act_.kappa_bar.empty())
      en_.set_natural_curvature(act_.kappa_bar.data() + size_t(n) * 2 * m.nbend);
    if (!act_.tau_bar.empty()) en_.set_natural_twist(act_.tau_bar.data() + size_t(n) * m.nbend);
    if (!act_.phi_bar.empty())
      en_.set_natural_hinge_angle(act_.phi_bar.data() + size_t(n) * m.nhinge);
    if (!act_.midedge_kappa_bar.empty())
      en_.set_natural_midedge_curvature(act_.midedge_kappa_bar.data() + size_t(n) * 3 * m.nmid);
    if (!act_.stretch_bar.empty())
      en_.set_natural_stretch(act_.stretch_bar.data() + size_t(n) * m.nedge);
    if (!act_.forces.empty()) {
      en_.set_forces(act_.forces.data() + size_t(n) * 3 * m.nnode);
    } else {
      en_.clear_forces();
    }
    if (!act_.fixed_targets.empty()) {
      en_.set_fixed_targets(act_.fixed_targets.data() + size_t(n) * m.fixed_dof.size());
    } else {
      en_.clear_fixed_targets();
    }
    en_.clear_signal_values();
    const size_t ns = m.signals.size();
    for (size_t k = 0; k < ns && !act_.loads.empty(); ++k)
      en_.set_signal_values(int(k), act_.loads.data() + size_t(n) * ns + k);
  }

  void step(int n) {
    set_inputs(n);
    const std::vector<unsigned char> one(1, 1);
    en_.step_inputs(one, dt_);
    take_pairs();
    VectorStepResult r;
    en_.newton_step(one, r, r.times);
    SLENDER_CHECK(r.reports[0].status == StepStatus::kConverged, "rollout: step ", n,
                  " did not converge (", to_string(r.reports[0].status),
                  "): the gradient needs every step converged",
                  spec_.adaptive ? "; the rollout's steps are fixed (the scene's adaptive "
                                   "halving is not differentiated): a smaller integrator.dt or "
                                   "more Newton iterations (newton.max_iters)"
                                 : "");
  }

  // the contact pairs of the step from the engine's state (as the Simulator finds them) and
  // their part of the Jacobian (the engine's: merged with the plan's on the direct path)
  void take_pairs() {
    if (model_->contact.enabled) en_.find_contacts(dt_);
  }

  // the transposed slots of the engine's direct pattern (the plan's, or merged with the contact
  // part's) and the solver of the transposed Jacobian (once per pattern)
  void ensure_solver() {
    const stepper::SystemSolveOn<X>& sys = *en_.system_;
    // (the arrays of the plan in use: one of the same pattern may have replaced the last)
    prow_ = &sys.pattern_row_ptr();
    pcol_ = &sys.pattern_col();
    if (solver_ && pattern_ == sys.pattern_version()) return;
    pattern_ = sys.pattern_version();
    const std::vector<int>& rp = *prow_;
    const std::vector<int>& col = *pcol_;
    const int nf = int(rp.size()) - 1;
    tslot_.assign(col.size(), -1);
    for (int r = 0; r < nf; ++r)
      for (int s = rp[size_t(r)]; s < rp[size_t(r) + 1]; ++s) {
        const int t = find_slot(col[size_t(s)], r);
        SLENDER_CHECK(t >= 0, "adjoint: the Jacobian's pattern is not structurally symmetric");
        tslot_[size_t(s)] = t;
      }
    solver_ = std::make_unique<cpu::LinearSolver>(
        nf, rp, col, cpu::direct_solver_kind(opt_.solver, /*symmetric=*/false),
        /*symmetric=*/false);
  }
  // the slot of (row, col) in that pattern, -1 where it has none
  int find_slot(int row, int col) const {
    const int* c = pcol_->data();
    const int* b = c + (*prow_)[size_t(row)];
    const int* e = c + (*prow_)[size_t(row) + 1];
    const int* it = std::lower_bound(b, e, col);
    return it != e && *it == col ? int(it - c) : -1;
  }

  // v(binding, family, local dofs, local gradient, local Hessian, k) for every stencil of every
  // family in `which` (0: all, 1: elastic, 2: non-elastic) in the engine's pools
  // (and, in `which` 0, the caller's energies' stencils, with a stand-in binding and the family
  // kNumFamilies: functions of the positions, in their own pools)
  template <class V>
  void each_stencil(int which, const V& v) {
    Engine<X>& en = en_;
    if (which == 0 && !model_->user_energies.empty()) {
      const AssemblyPlan& p = *en.plan_;
      const std::vector<std::shared_ptr<const UserEnergy>>& us = model_->user_energies;
      int idx[kUserEnergyMaxDofs];
      for (size_t i = 0; i < us.size(); ++i) {
        const int D = us[i]->dofs_per_stencil();
        const long n = us[i]->count(hmv());
        const Real* g = hg() + p.user_g_off[i];
        const Real* h = hh() + p.user_h_off[i];
        for (long k = 0; k < n; ++k) {
          us[i]->dofs(hmv(), k, idx);
          v(RodStretchBinding{}, kNumFamilies, idx, D, g + k * D, h + k * D * D, k);
        }
      }
    }
    for_each_family([&](auto binding, Family f, long) {
      using Bd = decltype(binding);
      if (which == 1 && !Bd::kTraits.elastic) return;
      if (which == 2 && Bd::kTraits.elastic) return;
      constexpr int D = Bd::kDofs;
      const long n = Bd::count(hmv());
      const Real* g = hg() + en.pd_.g_off[f];
      const Real* h = hh() + en.pd_.h_off[f];
      int idx[D];
      for (long k = 0; k < n; ++k) {
        Bd::dofs(hmv(), k, idx);
        v(binding, f, idx, D, g + k * D, h + k * D * D, k);
      }
    });
  }

  // v(energy, k, local dofs, D, local Hessian) for every stencil of the caller's energies that
  // read the frames (UserEnergy::reads_frames), from the engine's pools
  template <class V>
  void each_frame_energy(const V& v) {
    Engine<X>& en = en_;
    const std::vector<std::shared_ptr<const UserEnergy>>& us = model_->user_energies;
    int idx[kUserEnergyMaxDofs];
    for (size_t i = 0; i < us.size(); ++i) {
      if (!us[i]->reads_frames()) continue;
      const int D = us[i]->dofs_per_stencil();
      const long n = us[i]->count(hmv());
      const Real* h = hh() + en.plan_->user_h_off[i];
      for (long k = 0; k < n; ++k) {
        us[i]->dofs(hmv(), k, idx);
        v(*us[i], k, idx, D, h + k * D * D);
      }
    }
  }
  // v(local dofs, D, transport term) of every stencil of those energies at the step's
  // solution y with the step's frames (UserEnergy::frames_transport_term)
  template <class V>
  void each_frame_transport(const V& v) {
    const EvalView ev = ev_y();
    std::vector<Real> T;
    each_frame_energy([&](const UserEnergy& u, long k, const int* idx, int D, const Real*) {
      T.resize(size_t(D) * size_t(D));
      u.frames_transport_term(hmv(), ev, k, T.data());
      v(idx, D, T.data());
    });
  }

  void backward_step(int n, const State& sn, const State& sn1, const RolloutLossGradient& loss) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    const int nd = m.ndof, nn = m.nnode, ne = m.nedge;
    // the step again: its inputs and predictor from state n, evaluated at its solution
    en.set_state(0, sn);
    set_inputs(n);
    const std::vector<unsigned char> one(1, 1);
    en.step_inputs(one, dt_);
    take_pairs();
    PhaseTimes scratch;
    en.times_ = &scratch;
    en.active_h_ = one;
    en.push_active();
    en.predict();
    // the step's solution y: q_n+1, or under the midpoint rule the step's midpoint (q_n +
    // q_n+1) / 2 (a held DOF's: its predictor, on its path)
    const bool mid = spec_.kind == IntegratorKind::kImplicitMidpoint;
    const bool nmk = spec_.kind == IntegratorKind::kNewmark;
    std::vector<Real>& ys_h = y_h_;
    ys_h = sn1.q;
    if (mid) {
      const unsigned char* fx0 = en.fixed(0);
      const Real* qh0 = en.q_hat_.data();
      // (the predictor's copy before the evaluation)
      if constexpr (!X::kHostMemory) qh0 = host_copy(qh0, nd, hqh_);
      // (a massless DOF, a mid-edge xi, keeps its midpoint value: q_n+1 = y)
      for (int i = 0; i < nd; ++i)
        ys_h[size_t(i)] = fx0[i] ? qh0[i]
                          : m.dof_mass[size_t(i)] == 0
                              ? sn1.q[size_t(i)]
                              : Real(0.5) * (sn.q[size_t(i)] + sn1.q[size_t(i)]);
    }
    X::upload(en.y_, ys_h.data(), size_t(nd));
    std::vector<Real> r(1), phi(1);
    en.evaluate(en.y_.data(), r, phi, true);
    host_sync();
    const AssemblyPlan& p = *en.plan_;
    ensure_solver();
    const int nf = p.nfree;
    const int* dfree = p.dof_free.data();
    // the DOFs held in this step: those the plan leaves out (the engine takes the plan of every
    // set of held DOFs a boundary event makes: plans_follow_fixed_)
    const unsigned char* fx = en.fixed(0);
    for (int i = 0; i < nd; ++i)
      SLENDER_CHECK((dfree[i] < 0) == (fx[i] != 0), "adjoint: step ", n,
                    "'s plan is not its set of held DOFs (DOF ", i, ")");
    auto held = [dfree](int i) { return dfree[i] < 0; };
    const Real c_m = en.c_.c_m, c_u = en.c_.c_u;
    const Real* y = ys_h.data();
    const Real* qh = hq_hat();
    const Real* uh = hu_hat();

    // the frames' holonomy coefficients of every edge: a_j (start), b_j (end), of the transport
    // to y (the stencils' frames) and, where the state's q_n+1 is not y (the midpoint rule), of
    // the transport to q_n+1 (the state's frames: ha1_, hb1_)
    ha_.assign(3 * size_t(ne), 0);
    hb_.assign(3 * size_t(ne), 0);
    if (mid) {
      ha1_.assign(3 * size_t(ne), 0);
      hb1_.assign(3 * size_t(ne), 0);
    }
    auto holonomy = [](const Vec3& t0, const Vec3& t1, Real l0, Real l1, Real* ca, Real* cb) {
      const Vec3 h = transport_holonomy_gradient(t0, t1);
      for (int c = 0; c < 3; ++c) {
        ca[c] = l0 > 0 ? h[c] / l0 : 0;
        cb[c] = l1 > 0 ? h[c] / l1 : 0;
      }
    };
    for (int j = 0; j < ne; ++j) {
      const Vec3 t0 = vec3(sn.edge_t[3 * j], sn.edge_t[3 * j + 1], sn.edge_t[3 * j + 2]);
      const Vec3 t1 = vec3(sn1.edge_t[3 * j], sn1.edge_t[3 * j + 1], sn1.edge_t[3 * j + 2]);
      const int a = m.edge_node[2 * j], b = m.edge_node[2 * j + 1];
      const Real l0 = edge_length(sn.q.data(), a, b), l1 = edge_length(y, a, b);
      Real* ca = ha_.data() + 3 * j;
      Real* cb = hb_.data() + 3 * j;
      if (!mid) {
        holonomy(t0, t1, l0, l1, ca, cb);
        continue;
      }
      const Vec3 ty = l1 > 0 ? (1 / l1) * vec3(y[3 * b] - y[3 * a], y[3 * b + 1] - y[3 * a + 1],
                                               y[3 * b + 2] - y[3 * a + 2])
                             : t0;
      holonomy(t0, ty, l0, l1, ca, cb);
      holonomy(t0, t1, l0, edge_length(sn1.q.data(), a, b), ha1_.data() + 3 * j,
               hb1_.data() + 3 * j);
    }
    const std::vector<Real>& hb1 = mid ? hb1_ : hb_;
    // Kelvin-Voigt damping: its configuration z, its frames and anchors (kv_prepare)
    const bool kv = m.kelvin_voigt && c_u > 0;
    if (kv) kv_prepare(sn);
    // x1t: the loss's derivative by q_n+1 with its frames' (alpha_n+1's) share; the right-hand
    // side dL/dy on the free DOFs through q_n+1, u_n+1 (and Newmark's a_n+1)
    std::vector<Real>& x1t = x1t_;
    x1t = xb_;
    add_edge_transpose(hb1, ab_, 1, x1t);
    std::vector<Real>& rhs = rhs_;
    rhs.assign(size_t(nd), 0);
    for (int i = 0; i < nd; ++i) {
      const size_t k = size_t(i);
      // (under the midpoint rule a massless DOF ends at y, with the velocity (y - q_n) / dt)
      const bool ends_at_y = !mid || m.dof_mass[k] == 0;
      rhs[k] = mid && !ends_at_y ? 2 * x1t[k] + 4 / dt_ * vb_[k]
               : nmk             ? x1t[k] + c_u * vb_[k] + c_m * accb_[k]
                                 : x1t[k] + vb_[k] / dt_;
    }
    // Newmark's energy-consistent contact: the stored acceleration takes the contact forces back
    // out, a_n+1 = c_m (y - q_hat) + R_c / m (R_c the residual's contact share), so a_n+1's
    // adjoint reaches y through R_c too (phi = accb / m; newmark_contact_terms for the rest)
    const bool nec =
        nmk && contact_step_coeffs(spec_, dt_).a > 0 && (m.ground.enabled || m.contact.enabled);
    if (nec) {
      const Real dens = density_scale();
      std::vector<Real>& ph = nec_phi_;
      ph.assign(size_t(nd), 0);
      for (int i = 0; i < nd; ++i)
        if (!held(i) && m.dof_mass[size_t(i)] > 0)
          ph[size_t(i)] = accb_[size_t(i)] / (dens * m.dof_mass[size_t(i)]);
      each_contact_stencil([&](Family, const int* idx, int D, const Real*, const Real* h) {
        for (int b = 0; b < D; ++b) {
          Real t = 0;
          for (int a = 0; a < D; ++a)
            t += ph[size_t(idx[a])] * h[a * D + b];
          rhs[size_t(idx[b])] += t;
        }
      });
    }

    // G: the stencils' Hessian entries in the twist DOFs' columns, (free row, edge, value): the
    // families' and those of the caller's energies that read the frames (a turn of the reference
    // frames leaves an energy of the DOFs' values as it is)
    // (a damped bend-twist spring's pool holds its Kelvin-Voigt Hessian hk too, whose frames
    // are z's: its entries apart, flagged)
    gtrip_.clear();
    auto g_entries = [&](const int* idx, int D, const Real* h, const Real* hk, const Real* hr) {
      for (int b = 0; b < D; ++b) {
        const int j = idx[b] - 3 * nn;
        if (j < 0 || j >= ne) continue;
        for (int a = 0; a < D; ++a) {
          if (held(idx[a])) continue;
          const Real hkv = hk ? hk[a * D + b] : Real(0);
          const Real hel = h[a * D + b] - hkv - (hr ? hr[a * D + b] : Real(0));
          if (hel != 0) gtrip_.push_back({idx[a], j, hel, false});
          if (hkv != 0) gtrip_.push_back({idx[a], j, hkv, true});
        }
      }
    };
    each_stencil(0, [&](auto, Family f, const int* idx, int D, const Real*, const Real* h, long k) {
      if (f == kNumFamilies) return;
      const bool damped = kv && f == kFamBendTwist && !kv_hbt_[size_t(k)].empty();
      // (Rayleigh's share b c_u K reads no frames at y: left out)
      const Real* hr = nullptr;
      if (m.stiffness_damping && f == kFamBendTwist) {
        int id[11];
        const Real b = hbeta()[stencil_part_node<RodBendTwistBinding>(hmv(), k, id)];
        if (b != 0) {
          const Real* K = hstart_stiffness(kFamBendTwist) + k * 121;
          rhk_.resize(121);
          for (int i = 0; i < 121; ++i)
            rhk_[size_t(i)] = b * c_u * K[i];
          hr = rhk_.data();
        }
      }
      g_entries(idx, D, h, damped ? kv_hbt_[size_t(k)].data() : nullptr, hr);
    });
    each_frame_energy([&](const UserEnergy&, long, const int* idx, int D, const Real* h) {
      g_entries(idx, D, h, nullptr, nullptr);
    });

    // the exact Jacobian J + G B on the engine's pattern, transposed into the solver
    vals_.assign(tslot_.size(), 0);
    if constexpr (X::kHostMemory) {
      en.system_->assemble_into(en.h_pool_.data(), en.dof_J_.data(), en.free_dof_.data(),
                                en.h_pool_.data() + en.pd_.h_off[kFamContact], vals_.data());
    } else {  // (assembled on X, copied)
      vals_x_.resize(vals_.size());
      en.system_->assemble_into(en.h_pool_.data(), en.dof_J_.data(), en.free_dof_.data(),
                                en.h_pool_.data() + en.pd_.h_off[kFamContact], vals_x_.data());
      X::to_host(vals_.data(), vals_x_.data(), vals_.size());
    }
    // the bend-twist stencils' part of the Jacobian that their symmetric Hessian leaves out
    // (their frames come from the step's start), scaled as the stencil
    const Real ys = youngs_scale();
    const std::vector<int>& node_part = m.node_part;
    if (m.nbend > 0) {
      const EvalView ev = ev_y();
      int idx[11];
      Mat<11, 11> A;
      for (int k = 0; k < m.nbend; ++k) {
        const Real sc = stencil_scale(stencil_part_node<RodBendTwistBinding>(hmv(), k, idx));
        bend_asym(ev, k, sc, A);
        for (int a = 0; a < 9; ++a) {
          const int row = dfree[idx[a]];
          if (row < 0) continue;
          for (int b = 0; b < 9; ++b) {
            const int col = dfree[idx[b]];
            if (col < 0 || A(a, b) == 0) continue;
            const int slot = find_slot(row, col);
            SLENDER_CHECK(slot >= 0, "adjoint: a bend-twist term leaves the Jacobian's pattern");
            vals_[size_t(slot)] += A(a, b);
          }
        }
      }
    }
    // ... and of the caller's energies that read the frames (unscaled, as their pools)
    each_frame_transport([&](const int* idx, int D, const Real* T) {
      for (int a = 0; a < D; ++a) {
        const int row = dfree[idx[a]];
        if (row < 0) continue;
        for (int b = 0; b < D; ++b) {
          const int col = dfree[idx[b]];
          if (col < 0 || T[a * D + b] == 0) continue;
          const int slot = find_slot(row, col);
          SLENDER_CHECK(slot >= 0,
                        "adjoint: an energy's frames term leaves the Jacobian's pattern");
          vals_[size_t(slot)] += T[a * D + b];
        }
      }
    });
    for (const GEntry& t : gtrip_) {
      const int row = dfree[t.dof];
      const int na = m.edge_node[2 * t.edge], nb = m.edge_node[2 * t.edge + 1];
      for (int side = 0; side < 2; ++side) {
        const int node = side ? nb : na;
        const Real sign = side ? 1 : -1;
        const std::vector<Real>& hbt = t.kv ? hbz_ : hb_;
        for (int c = 0; c < 3; ++c) {
          const int col = dfree[3 * node + c];
          const Real v = t.h * sign * hbt[3 * size_t(t.edge) + c];
          if (col < 0 || v == 0) continue;
          const int slot = find_slot(row, col);
          SLENDER_CHECK(slot >= 0, "adjoint: the frames' term leaves the Jacobian's pattern");
          vals_[size_t(slot)] += v;
        }
      }
    }
    Real* tv = solver_->values();
    for (size_t s = 0; s < tslot_.size(); ++s)
      tv[s] = vals_[size_t(tslot_[size_t(s)])];
    SLENDER_CHECK(solver_->factorize(), "adjoint: the transposed Jacobian of step ", n,
                  " could not be factorized");
    rf_.resize(size_t(nf));
    lf_.resize(size_t(nf));
    for (int rr = 0; rr < nf; ++rr)
      rf_[size_t(rr)] = rhs[size_t(p.free_dof[rr])];
    SLENDER_CHECK(nf == 0 || solver_->solve(rf_.data(), lf_.data()),
                  "adjoint: the transposed solve of step ", n, " failed");
    // lambda on every DOF (0 at the held ones)
    std::vector<Real>& lam = lam_;
    lam.assign(size_t(nd), 0);
    for (int rr = 0; rr < nf; ++rr)
      lam[size_t(p.free_dof[rr])] = lf_[size_t(rr)];

    RolloutGradient& g = *grad_;
    // ab <- ab - G^T lambda (ab_in_: alpha_n+1's adjoint, which reaches q_n through the
    // transport to q_n+1)
    if (mid) ab_in_ = ab_;
    for (const GEntry& t : gtrip_) {
      if (t.kv) continue;  // (z's frames: kv_terms)
      ab_[size_t(t.edge)] -= t.h * lam[size_t(t.dof)];
    }

    // the actions: natural strains (the stencil's scale: the model's and its part's), forces
    if (m.nbend > 0) {
      const EvalView ev = ev_y();
      // lambda . dR/d(natural strain c of bend-twist stencil k) = d, into its gradient
      auto strain_grad = [&](long k, int c, Real d) {
        if (c < 2) {
          g.kappa_bar[(size_t(n) * m.nbend + size_t(k)) * 2 + c] -= d;
        } else {
          g.tau_bar[size_t(n) * m.nbend + size_t(k)] -= d;
        }
      };
      int idx[11];
      for (int k = 0; k < m.nbend; ++k) {
        const Real sc = stencil_scale(stencil_part_node<RodBendTwistBinding>(hmv(), k, idx));
        for (int c = 0; c < 3; ++c) {
          LocalEval<11> le;
          RodBendTwistBinding::natural_strain_grad(hmv(), ev, 0, k, c, le);
          Real d = 0;
          for (int a = 0; a < 11; ++a)
            d += le.g[a] * lam[size_t(idx[a])];
          strain_grad(k, c, sc * d);
        }
      }
      // ... and the caller's strain energies that read them (unscaled, as their pools)
      Real ug[kUserEnergyMaxDofs];
      int uidx[kUserEnergyMaxDofs];
      for (const std::shared_ptr<const UserEnergy>& u : m.user_energies) {
        if (!u->reads_frames() || !u->reads_natural_strains()) continue;
        const long nu = u->count(hmv());
        for (long k = 0; k < nu; ++k) {
          u->dofs(hmv(), k, uidx);
          for (int c = 0; c < 3; ++c) {
            if (!u->natural_strain_grad(hmv(), ev, k, c, ug)) continue;
            Real d = 0;
            for (int a = 0; a < u->dofs_per_stencil(); ++a)
              d += ug[a] * lam[size_t(uidx[a])];
            strain_grad(k, c, d);
          }
        }
      }
    }
    // the hinges' natural angles (E = kb / 2 (phi - phi_bar)^2, scaled as the stencil)
    if (m.nhinge > 0) {
      const EvalView ev = ev_y();
      int idx[12];
      for (int k = 0; k < m.nhinge; ++k) {
        const Real sc = stencil_scale(stencil_part_node<ShellHingeBinding>(hmv(), k, idx));
        LocalEval<12> le;
        ShellHingeBinding::natural_angle_grad(hmv(), ev, 0, k, le);
        Real d = 0;
        for (int a = 0; a < 12; ++a)
          d += le.g[a] * lam[size_t(idx[a])];
        g.phi_bar[size_t(n) * m.nhinge + k] -= sc * d;
      }
    }
    // the rod edges' natural stretch (the factor of the rest length) and, under the midpoint
    // rule, their energy-momentum secant's start q_n (start_: q_n's adjoint directly, not
    // through the predictor); both scaled as the stencil
    start_.assign(size_t(nd), 0);
    if (ne > 0) {
      const EvalView ev = ev_y();
      const bool secant = mid && stretch_secant_on(spec_);
      int idx[6];
      Vec<6> dg;
      Mat<6, 6> D;
      for (int k = 0; k < ne; ++k) {
        const Real sc = stencil_scale(stencil_part_node<RodStretchBinding>(hmv(), k, idx));
        const bool any =
            RodStretchBinding::adjoint_terms(hmv(), ev, 0, k, dg, secant ? &D : nullptr);
        if (secant)
          for (int bb = 0; bb < 6; ++bb) {
            Real t = 0;
            for (int a = 0; a < 6; ++a)
              t += D(a, bb) * lam[size_t(idx[a])];
            start_[size_t(idx[bb])] -= sc * t;
          }
        if (!any) continue;
        Real d = 0;
        for (int a = 0; a < 6; ++a)
          d += dg[a] * lam[size_t(idx[a])];
        g.stretch_bar[size_t(n) * ne + k] -= sc * d;
      }
    }
    for (int i = 0; i < 3 * nn; ++i)
      g.forces[size_t(n) * 3 * nn + i] += lam[size_t(i)];
    // the actuators' loads: the families that read a signal take it linearly (a tendon's
    // tension where it is taut), so that a stencil's derivative by signal k is its gradient's
    // change when the signal grows by delta, over delta (1; half the way to 0 from a negative
    // one, so that a slack tendon stays slack); the other stencils do not change, bit for bit
    if (!m.signals.empty() && !act_.loads.empty()) load_gradients(n, lam);

    // Kelvin-Voigt damping: its forces at z and their derivatives by the anchors (kv_at_end)
    if (kv) {
      kv_at_end(lam);
      // the retardation times' scale: the damping forces are linear in it
      for (const std::vector<Real>& v : kv_dot_)
        for (Real d : v)
          g.kelvin_voigt_scale -= d / par_.kelvin_voigt_scale;
    }

    // the moduli's scales: the elastic stencils' forces are linear in them (the Kelvin-Voigt
    // forces in their pools are not: their retardation times are the model's)
    each_stencil(1, [&](auto binding, Family f, const int* idx, int D, const Real* gl, const Real*,
                        long k) {
      using Bd = decltype(binding);
      Real d = 0;
      for (int a = 0; a < D; ++a)
        d += gl[a] * lam[size_t(idx[a])];
      if (kv && !kv_dot_[size_t(f)].empty()) d -= kv_dot_[size_t(f)][size_t(k)];
      g.youngs_scale -= d / ys;
      if (m.npart > 0 && !par_.part_youngs_scale.empty()) {
        int id[Bd::kDofs];
        const int pt = node_part[size_t(stencil_part_node<Bd>(hmv(), k, id))];
        g.part_youngs_scale[size_t(pt)] -= d / par_.part_youngs_scale[size_t(pt)];
      } else if (m.npart > 0) {
        int id[Bd::kDofs];
        g.part_youngs_scale[size_t(node_part[size_t(stencil_part_node<Bd>(hmv(), k, id))])] -= d;
      }
    });

    // the per-DOF terms: inertial masses, and the derivatives by the density scale and the mass
    // damping (dof_terms_eval with those parameters' coefficients)
    const Real rho = par_.density_scale;
    const Real* ep = en.scaled_ ? en.params_h_.data() : nullptr;
    const Vec3 grav = en.c_.load_factor * m.gravity;
    mass_.assign(size_t(nd), 0);
    std::vector<Real>& uy = uy_;
    uy.assign(static_cast<size_t>(nd), 0);
    for (int i = 0; i < nd; ++i) {
      const Real ma = m.has_added_mass() && i < 3 * nn ? m.node_added_mass[size_t(i / 3)] : 0;
      const Real m0 = m.dof_mass[size_t(i)];
      DofTermParams dp;
      dp.mass = ep ? scaled_inertial_mass(ep[0], m0, ma) : m0;
      mass_[size_t(i)] = dp.mass;
      const Real alpha = ep && ep[4] >= 0          ? ep[4]
                         : m.mass_damping_per_part ? m.dof_mass_damping[size_t(i)]
                                                   : m.mass_damping;
      uy[size_t(i)] = uh[i] + c_u * (y[i] - qh[i]);
      if (dfree[i] < 0) continue;
      const Real li = lam[size_t(i)];
      Real rr, jj, pp;
      // by the density scale: the body's mass in inertia, weight and damping
      DofTermParams dr;
      dr.mass = m0 - ma;
      dr.weight = i < 3 * nn ? m0 - ma : 0;
      dr.gravity = i < 3 * nn ? (ep ? en.c_.load_factor * ep[1 + i % 3] : grav[i % 3]) : 0;
      dr.drag = 0;
      dr.damping = alpha;
      dr.c_m = c_m;
      dr.c_u = c_u;
      dof_terms_eval(y[i], qh[i], uh[i], 0, dr, rr, jj, pp);
      g.density_scale -= li * rr;
      // by the mass damping alpha: m u
      DofTermParams da;
      da.mass = dp.mass;
      da.weight = 0;
      da.gravity = 0;
      da.drag = 0;
      da.damping = 1;
      da.c_m = 0;
      da.c_u = c_u;
      dof_terms_eval(y[i], qh[i], uh[i], 0, da, rr, jj, pp);
      g.mass_damping -= li * rr;
    }
    // the ground's automatic stiffness (k_c proportional to the node's mass): its forces are
    // linear in the density scale
    if (hmv().ground_on && hmv().ground.k_per_kg > 0) {
      const Real* gg = hg() + en.pd_.g_off[kFamGround];
      for (int k = 0; k < nn; ++k)
        for (int c = 0; c < 3; ++c)
          g.density_scale -= gg[3 * k + c] * lam[size_t(3 * k + c)] / rho;
    }

    // the ground's dashpot: its normal, activation and coefficient come from the step's start
    // q_n (ground_dashpot_start_derivative: -(dg/dq_s)^T lambda into q_n's adjoint, below); with
    // a fixed stiffness its force goes as the square root of the density scale (with the
    // automatic one, linearly: above)
    std::vector<Real>& dash = dash_;
    dash.assign(size_t(nd), 0);
    // (Newmark's energy-consistent contact: its dashpots' start is q_n, newmark_contact_terms)
    if (hmv().ground_on && hmv().ground.zeta > 0 && !nec) {
      GroundContact::Params gp = hmv().ground;
      gp.c_u = c_u;
      gp.dashpot = true;
      const Real dens = density_scale();
      for (int k = 0; k < nn; ++k) {
        if (dfree[3 * k] < 0 && dfree[3 * k + 1] < 0 && dfree[3 * k + 2] < 0) continue;
        gp.mass = m.node_mass[size_t(k)] * dens;
        // the node touches the ground at its radius (as GroundBinding moves the ground)
        gp.ground = hmv().ground.ground;
        const Real rad = m.node_contact_radius[size_t(k)];
        if (gp.ground.shape == GroundShape::kPlane) {
          gp.ground.p0 += rad * gp.ground.n;
        } else {
          gp.ground.offset += rad;
        }
        Vec3 x;
        for (int c = 0; c < 3; ++c) {
          x[c] = y[3 * k + c];
          gp.q_hat[c] = qh[3 * k + c];
          gp.u_hat[c] = uh[3 * k + c];
        }
        Vec3 gd;
        Mat3 dg;
        if (!ground_dashpot_start_derivative(x, gp, gd, dg)) continue;
        for (int j = 0; j < 3; ++j) {
          Real sjt = 0;
          for (int i = 0; i < 3; ++i)
            sjt += dg(i, j) * lam[size_t(3 * k + i)];
          dash[size_t(3 * k + j)] -= sjt;
        }
        if (!(hmv().ground.k_per_kg > 0))
          for (int i = 0; i < 3; ++i)
            g.density_scale -= Real(0.5) * gd[i] * lam[size_t(3 * k + i)] / rho;
      }
    }

    // the midpoint rule's secant ground force: its normal force psi reads the distance at the
    // step's start x0 = q_n (start_, as the stretching secant's)
    if (mid && hmv().ground_on && contact_step_coeffs(spec_, dt_).a > 0)
      add_ground_secant_start(lam.data(), density_scale());

    // the contact pairs, each at the step's start: under the midpoint rule the secant normal
    // force reads their distance there (contact_pair_secant_start_derivative, into start_); their
    // dashpots take their normal, activation and reduced mass there
    // (pair_dashpot_start_derivative, into dash), and their force goes as the square root of the
    // density scale (the reduced mass; the contact stiffness is the model's)
    const bool pair_secant = mid && contact_step_coeffs(spec_, dt_).a > 0;
    const bool pair_dashpot = hmv().contact_zeta > 0 && c_u > 0 && !nec;
    if ((pair_secant || pair_dashpot) && hmv().npair + hmv().npt > 0) {
      const ModelView& mv = hmv();
      const EvalView ev = ev_y();
      auto pairs = [&](auto distance, long npair, const int* pnode, const Real* pd,
                       const Real* pmu) {
        using Distance = decltype(distance);
        for (long k = 0; k < npair; ++k) {
          const int* node = pnode + 4 * k;
          Real lam_l[12];
          for (int a = 0; a < 4; ++a)
            for (int i = 0; i < 3; ++i)
              lam_l[3 * a + i] = lam[size_t(3 * node[a] + i)];
          Vec<12> dg, gd;
          if (pair_secant && detail::contact_pair_secant_start_derivative<Distance>(
                                 mv, ev, 0, node, pd[k], pmu ? pmu[k] : 0, dg, gd)) {
            Real sl = 0;
            for (int j = 0; j < 12; ++j)
              sl += dg[j] * lam_l[j];
            for (int j = 0; j < 12; ++j)
              start_[size_t(3 * node[j / 3] + j % 3)] -= sl * gd[j];
          }
          if (!pair_dashpot) continue;
          Vec<12> xl, uu;
          for (int a = 0; a < 4; ++a)
            for (int i = 0; i < 3; ++i) {
              const size_t dof = size_t(3 * node[a] + i);
              xl[3 * a + i] = qh[dof] - uh[dof] / c_u;
              uu[3 * a + i] = uy[dof];
            }
          Mat<12, 12> dd;
          if (!detail::pair_dashpot_start_derivative<Distance>(mv, node, pd[k], xl, uu, gd, dd))
            continue;
          for (int j = 0; j < 12; ++j) {
            Real sjt = 0;
            for (int i = 0; i < 12; ++i)
              sjt += dd(i, j) * lam_l[i];
            dash[size_t(3 * node[j / 3] + j % 3)] -= sjt;
            g.density_scale -= Real(0.5) * gd[j] * lam_l[j] / rho;
          }
        }
      };
      pairs(detail::EdgeEdgeDistanceFn{}, mv.npair, mv.pair_node, mv.pair_d, mv.pair_mu);
      pairs(detail::PointTriangleDistanceFn{}, mv.npt, mv.pt_node, mv.pt_d, mv.pt_mu);
    }

    // V^T lambda: the forces that read the velocity, their Jacobian with c_u and without
    std::vector<Real>& w = w_;
    w.assign(size_t(nd), 0);
    for (int i = 0; i < nd; ++i)
      if (dfree[i] >= 0) w[size_t(i)] = (hdof_j()[i] - c_m * mass_[size_t(i)]) * lam[size_t(i)];
    bool any = false;
    auto add_ht = [&](Real sign) {
      each_stencil(2, [&](auto, Family, const int* idx, int D, const Real*, const Real* h, long) {
        any = true;
        for (int b = 0; b < D; ++b) {
          Real s = 0;
          for (int a = 0; a < D; ++a)
            s += h[a * D + b] * lam[size_t(idx[a])];
          w[size_t(idx[b])] += sign * s;
        }
      });
    };
    add_ht(1);
    if (any) {
      X::upload(u_y_, uy.data(), uy.size());
      EvalView ev0 = en.step_eval_view(en.y_.data());
      ev0.c_u = 0;
      ev0.u_hat = u_y_.data();
      const EnvPools pl = en.pools();
      for_each_family([&](auto binding, Family f, long grain) {
        using Bd = decltype(binding);
        if constexpr (!Bd::kTraits.elastic) {
          if constexpr (std::is_same_v<Bd, GroundBinding>) {
            en.eval_ground(ev0, kGradHess);
          } else {
            en.se_.template eval_family<Bd>(en.mv_, pl, f, ev0, kGradHess, grain);
          }
        }
      });
      host_sync_pools();
      add_ht(-1);
    }

    // the held DOFs' columns of the exact Jacobian against lambda: a held DOF stays where it is
    // (q_n+1 = q_n, its velocity 0 whatever q_n), so its position at step n reaches the free
    // rows through those columns (at a fixed velocity: the non-elastic stencils' Hessians
    // without c_u, as re-evaluated above), the bend-twist transport term and the frames' term
    std::vector<Real>& col = held_col_;
    col.assign(size_t(nd), 0);
    bool held_any = false;
    for (int i = 0; i < nd && !held_any; ++i)
      held_any = held(i);
    if (held_any) {
      each_stencil(0, [&](auto, Family, const int* idx, int D, const Real*, const Real* h, long) {
        for (int b = 0; b < D; ++b) {
          if (idx[b] < 0 || !held(idx[b])) continue;
          Real s = 0;
          for (int a = 0; a < D; ++a)
            if (idx[a] >= 0) s += h[a * D + b] * lam[size_t(idx[a])];
          col[size_t(idx[b])] += s;
        }
      });
      if (m.nbend > 0) {
        const EvalView ev = ev_y();
        int idx[11];
        Mat<11, 11> A;
        for (int k = 0; k < m.nbend; ++k) {
          const Real sc = stencil_scale(stencil_part_node<RodBendTwistBinding>(hmv(), k, idx));
          bool touches = false;  // (the term again only for the stencils at a held node)
          for (int b = 0; b < 9 && !touches; ++b)
            touches = held(idx[b]);
          if (!touches) continue;
          bend_asym(ev, k, sc, A);
          for (int b = 0; b < 9; ++b) {
            if (!held(idx[b])) continue;
            for (int a = 0; a < 9; ++a)
              col[size_t(idx[b])] += A(a, b) * lam[size_t(idx[a])];
          }
        }
      }
      each_frame_transport([&](const int* idx, int D, const Real* T) {
        for (int b = 0; b < D; ++b) {
          if (!held(idx[b])) continue;
          for (int a = 0; a < D; ++a)
            col[size_t(idx[b])] += T[a * D + b] * lam[size_t(idx[a])];
        }
      });
      for (const GEntry& t : gtrip_) {
        const int na = m.edge_node[2 * t.edge], nb = m.edge_node[2 * t.edge + 1];
        for (int side = 0; side < 2; ++side) {
          const int node = side ? nb : na;
          const Real sign = side ? 1 : -1;
          const std::vector<Real>& hbt = t.kv ? hbz_ : hb_;
          for (int c = 0; c < 3; ++c)
            if (held(3 * node + c))
              col[size_t(3 * node + c)] +=
                  t.h * sign * hbt[3 * size_t(t.edge) + c] * lam[size_t(t.dof)];
        }
      }
    }
    if (nec) newmark_contact_terms(lam, col);
    // Rayleigh stiffness damping: its share of V^T lambda, of the held columns, and its start's
    // Hessians' dependence on q_n, alpha_n and the natural strains (rayleigh_terms)
    if (m.stiffness_damping && c_u > 0) rayleigh_terms(n, sn, lam, uy, w, col);
    // Kelvin-Voigt: the adjoint of its anchor q_a = q_hat - u_hat / c_u (into dash, the
    // dashpots' start, the same point), of the start's frames (kv_ab_) and tangents (kv_x_)
    if (kv) kv_terms(n, sn, lam, dash);
    // the state's adjoints at step n. Through the residual, every DOF's predictor q_hat, u_hat
    // (Qh, Uh): the inertia, the forces that read the velocity u = u_hat + c_u (y - q_hat)
    // (w = V^T lambda) and the dashpots' start q_s = q_hat - u_hat / c_u (dash). A free DOF's
    // q_hat = q_n + pu u_n + pa a_n, u_hat = u_n + ua a_n, and q_n+1, u_n+1 (a_n+1) follow from
    // y and the predictor: implicit Euler q_n+1 = y, u_n+1 = (y - q_n) / dt; the midpoint rule
    // q_n+1 = 2 y - q_n, u_n+1 = 4 (y - q_n) / dt - u_n; Newmark q_n+1 = y,
    // u_n+1 = u_hat + c_u (y - q_hat), a_n+1 = c_m (y - q_hat).
    // A held DOF stays where it is (q_hat = q_n, u_hat = 0: its position carries its adjoint at
    // n + 1 less its columns' share, at a fixed velocity: col), or a prescribed motion (the
    // rollout's targets, else the scene's motions) moves it to x1, an input: q_n+1 = x1,
    // u_hat = u_n+1 = (x1 - q_n) / dt and q_hat = y on the path (x1; under the midpoint rule
    // (q_n + x1) / 2). Its velocity and acceleration at n carry no adjoint.
    const Real b = spec_.beta, gm = spec_.gamma;
    const Real pu = mid ? dt_ / 2 : dt_;
    const Real pa = nmk ? dt_ * dt_ * (Real(0.5) - b) : 0, ua = nmk ? dt_ * (1 - gm) : 0;
    const Real hy = mid ? Real(0.5) : Real(1);  // dq_hat/dx1 of a moved held DOF
    const bool targets = !act_.fixed_targets.empty();
    const int* moved = targets                     ? m.dof_fixed_slot.data()
                       : m.dof_motion_slot.empty() ? nullptr
                                                   : m.dof_motion_slot.data();
    const size_t nfix = m.fixed_dof.size();
    for (int i = 0; i < nd; ++i) {
      const size_t k = size_t(i);
      const Real x1 = x1t[k], v1 = vb_[k], a1 = accb_[k];
      if (held(i)) {
        const Real Qh = dash[k] - col[k], Uh = -(w[k] + dash[k]) / c_u;
        if (moved && moved[i] >= 0) {
          if (targets)
            g.fixed_targets[size_t(n) * nfix + size_t(moved[i])] =
                x1 + v1 / dt_ + hy * Qh + Uh / dt_;
          xb_[k] = -v1 / dt_ + (1 - hy) * Qh - Uh / dt_;
        } else {
          xb_[k] = x1 + Qh;
        }
        vb_[k] = accb_[k] = 0;
        continue;
      }
      Real Qh = c_m * mass_[k] * lam[k] + w[k] + dash[k], Uh = -(w[k] + dash[k]) / c_u;
      Real xq = 0, xu = 0;  // q_n+1's and u_n+1's own dependence on q_n, u_n
      if (mid && m.dof_mass[k] > 0) {
        xq = -x1 - 4 / dt_ * v1;
        xu = -v1;
      } else if (nmk) {
        Qh -= c_u * v1 + c_m * a1;
        Uh += v1;
      } else {
        xq = -v1 / dt_;
      }
      xb_[k] = Qh + xq;
      vb_[k] = pu * Qh + Uh + xu;
      accb_[k] = pa * Qh + ua * Uh;
    }
    // alpha_n's share of q_n's adjoint: through the transports to y and to q_n+1
    if (mid) {
      add_edge_transpose(ha1_, ab_in_, 1, xb_);
      for (int j = 0; j < ne; ++j)
        ab_in_[size_t(j)] = ab_[size_t(j)] - ab_in_[size_t(j)];
      add_edge_transpose(ha_, ab_in_, 1, xb_);
    } else {
      add_edge_transpose(ha_, ab_, 1, xb_);
    }
    for (int i = 0; i < nd; ++i)
      xb_[size_t(i)] += start_[size_t(i)];
    if (m.stiffness_damping && c_u > 0) add_start_share(rx_, rab_);
    if (kv) add_start_share(kv_x_, kv_ab_);
    // the mid-edge shells' frame vectors tau0: the step's start's, a function of q_n
    // (MidEdgeFrames), read by the bending stencils at y (q_n's adjoint directly)
    if (m.nmid > 0) midedge_frames_and_curvatures(n, sn, lam);
    if (loss) loss(n, sn.q.data(), sn.u.data(), xb_.data(), vb_.data());
  }

  // xb += -(dtau0/dq_n)^T (lambda . dg/dtau0) over the mid-edge stencils (their pools at y), and
  // their natural curvatures' gradients at step n (both: shell_midedge_adjoint_terms)
  void midedge_frames_and_curvatures(int n, const State& sn, const std::vector<Real>& lam) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    const EvalView ev = ev_y();
    const Real* g = hg() + en.pd_.g_off[kFamMidEdge];
    const Real* h = hh() + en.pd_.h_off[kFamMidEdge];
    std::vector<Real>& tb = tau0_bar_;
    tb.assign(3 * size_t(m.nsedge), 0);
    // (a damped triangle's pools hold its Kelvin-Voigt share, at z: where z is not y, that
    // share's terms apart, at z, with its force's own derivatives, (s / dt) of e's)
    const bool kvz = m.kelvin_voigt && en.c_.c_u > 0 && kv_w_ != 1;
    const KvAnchors an = hkv_anchors();
    const ModelView kmv = kv_model_view<ShellMidEdgeBinding>(hmv(), an);
    const Real* ks = kvz ? hkv_scale(kFamMidEdge) : nullptr;
    const bool ray = m.stiffness_damping && en.c_.c_u > 0;
    const Real* Kr = ray ? hstart_stiffness(kFamMidEdge) : nullptr;
    const Real* rbeta = ray ? hbeta() : nullptr;
    int idx[12];
    for (int k = 0; k < m.nmid; ++k) {
      ShellMidEdgeBinding::dofs(hmv(), k, idx);
      Vec<12> gl, ll, Hl;
      for (int a = 0; a < 12; ++a) {
        gl[a] = g[12 * k + a];
        ll[a] = lam[size_t(idx[a])];
      }
      for (int a = 0; a < 12; ++a) {
        Real t = 0;
        for (int b = 0; b < 12; ++b)
          t += h[144 * size_t(k) + 12 * a + b] * ll[b];
        Hl[a] = t;
      }
      // (Rayleigh's share b K u of the pools reads tau0 through K at the step's start, not at y:
      // out, rayleigh_terms takes it)
      const Real rb = Kr ? rbeta[stencil_part_node<ShellMidEdgeBinding>(hmv(), k, idx)] : 0;
      if (rb != 0) {
        const Real* Kk = Kr + 144 * size_t(k);
        for (int a = 0; a < 12; ++a) {
          Real tu = 0, tl = 0;
          for (int b = 0; b < 12; ++b) {
            tu += Kk[12 * a + b] * uy_[size_t(idx[b])];
            tl += Kk[12 * a + b] * ll[b];
          }
          gl[a] -= rb * tu;
          Hl[a] -= rb * en.c_.c_u * tl;
        }
      }
      Real dk[3], dkz[3] = {0, 0, 0};
      Vec3 d[3], dz[3] = {vec3(0, 0, 0), vec3(0, 0, 0), vec3(0, 0, 0)};
      if (ks && ks[k] != 0) {
        LocalEval<12> r;
        r.g.set_zero();
        r.H.set_zero();
        ShellMidEdgeBinding::eval(kmv, kv_eval_view(kvz_, an), 0, k, kGradHess, r);
        const Real sg = ks[k] / dt_, sh = ks[k] * en.c_.c_u;
        Vec<12> gz, Hlz;
        for (int a = 0; a < 12; ++a) {
          Real t = 0;
          for (int b = 0; b < 12; ++b)
            t += r.H(a, b) * ll[b];
          gz[a] = sg * r.g[a];
          Hlz[a] = sg * t;
          gl[a] -= gz[a];
          Hl[a] -= sh * t;
        }
        ShellMidEdgeBinding::adjoint_terms(kmv, kvz_, 0, k, gz, Hlz, ll, dz, dkz);
      }
      if (!ShellMidEdgeBinding::adjoint_terms(hmv(), ev, 0, k, gl, Hl, ll, d, dk)) continue;
      for (int c = 0; c < 3; ++c)
        grad_->midedge_kappa_bar[(size_t(n) * m.nmid + size_t(k)) * 3 + size_t(c)] -=
            dk[c] + dkz[c];
      const int t = m.mid_tri[size_t(k)];
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c)
          tb[3 * size_t(m.tri_edge[3 * size_t(t) + a]) + c] -= d[a][c] + dz[a][c];
    }
    for (int e = 0; e < m.nsedge; ++e)
      mid_edge_frame_adjoint(hmv(), sn.q.data(), e,
                             vec3(tb[3 * size_t(e)], tb[3 * size_t(e) + 1], tb[3 * size_t(e) + 2]),
                             xb_.data());
  }

  // dL/d(load k) of step n for every signal k: -lambda . (g(s + delta e_k) - g(s)) / delta over
  // the non-elastic stencils but the ground's and the contact pairs' (which read no signal),
  // evaluated one by one at the step's solution (host memory)
  void load_gradients(int n, const std::vector<Real>& lam) {
    const Model& m = *model_;
    const size_t ns = m.signals.size();
    Real base[kMaxSignals], plus[kMaxSignals];
    std::copy(hsignal(), hsignal() + kMaxSignals, base);
    EvalView ev = ev_y();
    Real delta[kMaxSignals], d[kMaxSignals] = {};
    for (size_t k = 0; k < ns; ++k)
      delta[k] = base[k] < 0 ? -base[k] / 2 : Real(1);
    // (each stencil evaluated once at the signals and once with each signal grown)
    for_each_family([&](auto binding, Family, long) {
      using Bd = decltype(binding);
      if constexpr (!Bd::kTraits.elastic && !std::is_same_v<Bd, GroundBinding> &&
                    !std::is_same_v<Bd, ContactEdgeEdgeBinding> &&
                    !std::is_same_v<Bd, ContactPointTriangleBinding>) {
        constexpr int D = Bd::kDofs;
        const long count = Bd::count(hmv());
        int idx[D];
        for (long j = 0; j < count; ++j) {
          Bd::dofs(hmv(), j, idx);
          LocalEval<D> g0;
          g0.g.set_zero();
          ev.signal = base;
          Bd::eval(hmv(), ev, 0, j, kGrad, g0);
          for (size_t k = 0; k < ns; ++k) {
            std::copy(base, base + kMaxSignals, plus);
            plus[k] += delta[k];
            LocalEval<D> g1;
            g1.g.set_zero();
            ev.signal = plus;
            Bd::eval(hmv(), ev, 0, j, kGrad, g1);
            for (int a = 0; a < D; ++a)
              if (idx[a] >= 0) d[k] += (g1.g[a] - g0.g[a]) * lam[size_t(idx[a])];
          }
        }
      }
    });
    for (size_t k = 0; k < ns; ++k)
      grad_->loads[size_t(n) * ns + k] -= d[k] / delta[k];
  }

  // v(family, local dofs, D, local gradient, local Hessian) of every contact stencil (the
  // ground's nodes, the pairs) from the engine's pools
  template <class V>
  void each_contact_stencil(const V& v) {
    each_stencil(2, [&](auto, Family f, const int* idx, int D, const Real* g, const Real* h, long) {
      if (f == kFamGround || f == kFamContact || f == kFamContactPointTri) v(f, idx, D, g, h);
    });
  }

  // Newmark's energy-consistent contact (contact_discrete_gradient.h; trapezoidal Newmark): each
  // contact stencil acts at x = x0 + hm (y - x0), x0 = q_n, with the step's mean velocity
  // u = c (x - x0), its normal force the secant from its distance at x0, weighted w in the
  // residual. With J_x, J_u its derivatives by x and u, the pools hold dR/dy = H = w hm (J_x +
  // c J_u), and dR/dx0 = w ((1 - hm) J_x - c hm J_u) + w dg/dD0 grad D0^T = P0 / hm - H + the
  // secant's, P0 = w hm J_x (the stencils again with du/dx left out: contact_fixed_velocity).
  // The stored acceleration's share: psi = lambda - phi (phi = accb / m: a_n+1 = ... + R_c / m),
  // so q_n's adjoint (start_) takes -psi . dR_c/dx0, and the density scale -phi . R_c / rho (the
  // mass divides R_c) plus phi . dR_c/drho (the ground's automatic stiffness, linear in it).
  void newmark_contact_terms(const std::vector<Real>& lam, std::vector<Real>& col) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    const size_t nd = size_t(m.ndof);
    const std::vector<Real>& ph = nec_phi_;
    std::vector<Real>& psi = nec_psi_;
    psi.resize(nd);
    for (size_t i = 0; i < nd; ++i)
      psi[i] = lam[i] - ph[i];
    const ContactStepCoeffs cs = contact_step_coeffs(spec_, dt_);
    const Real hm = cs.hm, w = cs.w;
    const Real dens = density_scale();
    RolloutGradient& g = *grad_;
    // psi^T H (the pools as evaluated at y) and the density's share
    // (a held DOF's y is its start or its path's x1: phi . H reaches it as lambda . H does,
    // through its column, col)
    const bool auto_k = hmv().ground_on && hmv().ground.k_per_kg > 0;
    const unsigned char* fx = en.fixed(0);
    each_contact_stencil([&](Family f, const int* idx, int D, const Real* gl, const Real* h) {
      for (int b = 0; b < D; ++b) {
        Real t = 0, tp = 0;
        for (int a = 0; a < D; ++a) {
          t += psi[size_t(idx[a])] * h[a * D + b];
          tp += ph[size_t(idx[a])] * h[a * D + b];
        }
        start_[size_t(idx[b])] += t;
        if (fx[idx[b]]) col[size_t(idx[b])] -= tp;
        const Real r = gl[b] * ph[size_t(idx[b])] / par_.density_scale;
        g.density_scale -= (f == kFamGround && auto_k) ? 0 : r;
      }
    });
    // the secants' start: -(psi . w dg/dD0) grad D0
    const EvalView ev = ev_y();
    const ModelView& mv = hmv();
    if (mv.ground_on) add_ground_secant_start(psi.data(), dens);
    auto pairs = [&](auto distance, long npair, const int* pnode, const Real* pd, const Real* pmu) {
      using Distance = decltype(distance);
      for (long k = 0; k < npair; ++k) {
        const int* node = pnode + 4 * k;
        Vec<12> dg, gd;
        if (!detail::contact_pair_secant_start_derivative<Distance>(mv, ev, 0, node, pd[k],
                                                                    pmu ? pmu[k] : 0, dg, gd))
          continue;
        Real sl = 0;
        for (int j = 0; j < 12; ++j)
          sl += dg[j] * psi[size_t(3 * node[j / 3] + j % 3)];
        for (int j = 0; j < 12; ++j)
          start_[size_t(3 * node[j / 3] + j % 3)] -= sl * gd[j];
      }
    };
    pairs(detail::EdgeEdgeDistanceFn{}, mv.npair, mv.pair_node, mv.pair_d, mv.pair_mu);
    pairs(detail::PointTriangleDistanceFn{}, mv.npt, mv.pt_node, mv.pt_d, mv.pt_mu);
    // the dashpots: their normal, activation and (reduced) mass at the start x0 = q_n, their
    // velocity the mean one at x: -psi^T w dg_d/dx0 into q_n's, and their force's square root
    // of the density (with the ground's automatic stiffness, linear: in the pool's term above)
    if (mv.ground_on && mv.ground.zeta > 0)
      for (int k = 0; k < m.nnode; ++k) {
        ContactView<3> cv;
        GroundContact::Params p;
        GroundBinding::setup(mv, ev, 0, k, kGrad, hmu()[0], dens, cv, p);
        Vec3 gdp;
        Mat3 dd;
        if (!ground_dashpot_start_derivative(cv.x, p, gdp, dd)) continue;
        for (int j = 0; j < 3; ++j) {
          Real t = 0;
          for (int i = 0; i < 3; ++i)
            t += dd(i, j) * psi[size_t(3 * k + i)];
          start_[size_t(3 * k + j)] -= w * t;
          if (!(mv.ground.k_per_kg > 0))
            g.density_scale -= Real(0.5) * w * gdp[j] * psi[size_t(3 * k + j)] / par_.density_scale;
        }
      }
    auto dashpots = [&](auto distance, long npair, const int* pnode, const Real* pd,
                        const Real* pmu) {
      using Distance = decltype(distance);
      for (long k = 0; k < npair; ++k) {
        const int* node = pnode + 4 * k;
        // (the pair's start x0 and mean velocity as its binding takes them)
        detail::ContactPairSetup<Distance> ps;
        ps.at(mv, ev, 0, node, pmu ? pmu[k] : 0, kGrad);
        Vec<12> gdp;
        Mat<12, 12> dd;
        if (!detail::pair_dashpot_start_derivative<Distance>(mv, node, pd[k], ps.cv.x0, ps.cv.u,
                                                             gdp, dd))
          continue;
        for (int j = 0; j < 12; ++j) {
          const size_t dof = size_t(3 * node[j / 3] + j % 3);
          Real t = 0;
          for (int i = 0; i < 12; ++i)
            t += dd(i, j) * psi[size_t(3 * node[i / 3] + i % 3)];
          start_[dof] -= w * t;
          g.density_scale -= Real(0.5) * w * gdp[j] * psi[dof] / par_.density_scale;
        }
      }
    };
    if (mv.contact_zeta > 0) {
      dashpots(detail::EdgeEdgeDistanceFn{}, mv.npair, mv.pair_node, mv.pair_d, mv.pair_mu);
      dashpots(detail::PointTriangleDistanceFn{}, mv.npt, mv.pt_node, mv.pt_d, mv.pt_mu);
    }
    // -psi^T P0 / hm: the contact stencils again, their mean velocity's derivative by x left out
    // (their pools hold P0 from here on; nothing after reads them)
    // (on X: its own view and model view)
    EvalView evf = en.step_eval_view(en.y_.data());
    evf.contact_fixed_velocity = 1;
    const EnvPools pl = en.pools();
    if (mv.ground_on) en.eval_ground(evf, kGradHess);
    if (mv.npair > 0)
      en.se_.template eval_family<ContactEdgeEdgeBinding>(en.mv_, pl, kFamContact, evf, kGradHess,
                                                          kParallelGrainHeavy);
    if (mv.npt > 0)
      en.se_.template eval_family<ContactPointTriangleBinding>(en.mv_, pl, kFamContactPointTri, evf,
                                                               kGradHess, kParallelGrainHeavy);
    host_sync_pools();
    each_contact_stencil([&](Family, const int* idx, int D, const Real*, const Real* h) {
      for (int b = 0; b < D; ++b) {
        Real t = 0;
        for (int a = 0; a < D; ++a)
          t += psi[size_t(idx[a])] * h[a * D + b];
        start_[size_t(idx[b])] -= t / hm;
      }
    });
  }

  // Rayleigh stiffness damping (stencils/rayleigh.h): each elastic stencil's force b K u(y), K
  // its Hessian at the step's start q_n (scaled as the stencil: Young's and the part's scales;
  // with q_n's frames, its mid-edge frame vectors tau0 and the step's natural shape), u = u_hat
  // + c_u (y - q_hat). Its terms: dR/dy = b c_u K (in the pools, but out of G: the force reads
  // no frames at y); the forces that read the velocity, V^T lambda (w) += b c_u K lambda, and at
  // a held DOF none at a fixed velocity (col); and K's own dependence on the start: lambda . b
  // dK/dp u for p the start's DOFs, its frames (alpha_n: a twist DOF's share), tau0 (through
  // mid_edge_frame_adjoint) and the natural strains, a third derivative of the energies, which
  // the stencils do not give: taken by fourth-order central differences of each stencil's own
  // Hessian (steps 1e-3 of its size, of a radian and of its strains' scale; their truncation is
  // about 1e-12 of the term, their round-off 1e-13).
  void rayleigh_terms(int n,
                      const State& sn,
                      const std::vector<Real>& lam,
                      const std::vector<Real>& uy,
                      std::vector<Real>& w,
                      std::vector<Real>& col) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    const int nn = m.nnode, ne = m.nedge;
    const size_t nd = size_t(m.ndof);
    const Real c_u = en.c_.c_u;
    const Real* beta = hbeta();
    const unsigned char* fx = en.fixed(0);
    // the start as keep_start_stiffness saw it, in scratch copies the differences move
    const StepFrames fr = hframes();
    auto copy = [](std::vector<Real>& v, const Real* p, size_t k) {
      v.assign(p ? p : nullptr, p ? p + k : nullptr);
    };
    rq_ = sn.q;
    copy(rd1_, fr.d1, 3 * size_t(ne));
    copy(rt_, fr.t, 3 * size_t(ne));
    copy(rref_, fr.ref, size_t(m.nbend));
    rd1c_ = rd1_;
    rtc_ = rt_;
    rrefc_ = rref_;
    EvalView ev = ev_y();  // (the step's view, at q_n)
    ev.q = rq_.data();
    if (ev.q_start) ev.q_start = rq_.data();  // (the secant's start moves with q_n)
    copy(rtau0_, ev.sedge_tau0, 3 * size_t(m.nsedge));
    copy(rkap_, ev.bend_kappa_bar, 2 * size_t(m.nbend));
    copy(rtw_, ev.bend_tau_bar, size_t(m.nbend));
    copy(rphi_, ev.hinge_phi_bar, size_t(m.nhinge));
    copy(rmid_, ev.mid_kappa_bar, 3 * size_t(m.nmid));
    copy(rstr_, ev.edge_stretch_bar, size_t(ne));
    ev.edge_d1 = rd1c_.data();
    ev.bend_ref_twist = rrefc_.data();
    if (ev.sedge_tau0) ev.sedge_tau0 = rtau0_.data();
    if (ev.bend_kappa_bar) ev.bend_kappa_bar = rkap_.data();
    if (ev.bend_tau_bar) ev.bend_tau_bar = rtw_.data();
    if (ev.hinge_phi_bar) ev.hinge_phi_bar = rphi_.data();
    if (ev.mid_kappa_bar) ev.mid_kappa_bar = rmid_.data();
    if (ev.edge_stretch_bar) ev.edge_stretch_bar = rstr_.data();
    ModelView mv = hmv();
    mv.two_d = 0;
    rx_.assign(nd, 0);
    rab_.assign(size_t(ne), 0);
    std::vector<Real>& tb = tau0_bar_;
    tb.assign(3 * size_t(m.nsedge), 0);
    RolloutGradient& g = *grad_;
    // positions held for good and not moved (the 2D mode's y, a clamp's node): their adjoint
    // reaches nothing but their own held chain, whose initial entry is 0 (a twist's is also its
    // frames' alpha_n: kept)
    std::vector<unsigned char>& idle = ridle_;
    idle.assign(nd, 0);
    if (act_.fixed_targets.empty())
      for (int i = 0; i < 3 * nn; ++i)
        idle[size_t(i)] = m.dof_locked[size_t(i)] &&
                          (m.dof_motion_slot.empty() || m.dof_motion_slot[size_t(i)] < 0);
    for_each_elastic_family([&](auto binding, Family f, long) {
      using Bd = decltype(binding);
      constexpr int D = Bd::kDofs;
      constexpr bool bend = std::is_same_v<Bd, RodBendTwistBinding>;
      constexpr bool mid = std::is_same_v<Bd, ShellMidEdgeBinding>;
      const long count = Bd::count(mv);
      const Real* K = hstart_stiffness(f);
      int idx[D];
      for (long k = 0; k < count; ++k) {
        const int node = stencil_part_node<Bd>(mv, k, idx);
        const Real b = beta[node];
        if (b == 0) continue;
        const Real sc = stencil_scale(node);
        const Real* Kk = K + k * D * D;
        Real ll[D], ul[D];
        for (int a = 0; a < D; ++a) {
          ll[a] = idx[a] >= 0 ? lam[size_t(idx[a])] : 0;
          ul[a] = idx[a] >= 0 ? uy[size_t(idx[a])] : 0;
        }
        // V^T lambda, and nothing at a held DOF at a fixed velocity
        for (int c = 0; c < D; ++c) {
          if (idx[c] < 0) continue;
          Real t = 0;
          for (int a = 0; a < D; ++a)
            t += Kk[a * D + c] * ll[a];
          w[size_t(idx[c])] += b * c_u * t;
          if (fx[idx[c]]) col[size_t(idx[c])] -= b * c_u * t;
        }
        // b lambda . K(p) u with the stencil's scale, by differences in one number p
        auto form = [&]() {
          LocalEval<D> r;
          r.g.set_zero();
          r.H.set_zero();
          Bd::eval(mv, ev, 0, k, kGradHess, r);
          Real s = 0;
          for (int a = 0; a < D; ++a) {
            Real t = 0;
            for (int c = 0; c < D; ++c)
              t += r.H(a, c) * ul[c];
            s += ll[a] * t;
          }
          return b * sc * s;
        };
        // the rods' frames at q_n moved with a node (parallel transport from the unmoved ones)
        auto frames = [&](bool moved) {
          if constexpr (bend) {
            for (int e2 = 0; e2 < 2; ++e2) {
              const int e = mv.bend_edge[2 * k + e2];
              if (moved) {
                TransportFrames{
                    mv, rq_.data(), rd1_.data(), rt_.data(), rd1c_.data(), rtc_.data()}(e);
              } else {
                for (int c = 0; c < 3; ++c) {
                  rd1c_[3 * size_t(e) + c] = rd1_[3 * size_t(e) + c];
                  rtc_[3 * size_t(e) + c] = rt_[3 * size_t(e) + c];
                }
              }
            }
            rrefc_[size_t(k)] = rref_[size_t(k)];
            if (moved)
              ReferenceTwists{mv, rd1c_.data(), rtc_.data(), rref_.data(), rrefc_.data()}(k);
          }
        };
        auto diff = [&](Real& v, Real h, bool position) {
          const Real v0 = v;
          Real fv[4];
          const Real step[4] = {h, -h, 2 * h, -2 * h};
          for (int s = 0; s < 4; ++s) {
            v = v0 + step[s];
            if (position) frames(true);
            fv[s] = form();
          }
          v = v0;
          if (position) frames(false);
          return (8 * (fv[0] - fv[1]) - (fv[2] - fv[3])) / (12 * h);
        };
        // the stencil's size: its nodes' largest distance from its first
        Real size = 0;
        for (int a = 1; a < D && idx[a] >= 0 && idx[a] < 3 * nn; ++a)
          if (a % 3 == 0)
            size = std::max(size, std::sqrt(sq(rq_[size_t(idx[a])] - rq_[size_t(idx[0])]) +
                                            sq(rq_[size_t(idx[a] + 1)] - rq_[size_t(idx[0] + 1)]) +
                                            sq(rq_[size_t(idx[a] + 2)] - rq_[size_t(idx[0] + 2)])));
        if (!(size > 0)) continue;
        for (int a = 0; a < D; ++a) {
          if (idx[a] < 0 || idle[size_t(idx[a])]) continue;
          const bool position = idx[a] < 3 * nn;
          const Real d = diff(rq_[size_t(idx[a])], Real(1e-3) * (position ? size : 1), position);
          rx_[size_t(idx[a])] -= d;
          const int j = idx[a] - 3 * nn;
          if (j >= 0 && j < ne) rab_[size_t(j)] -= d;
        }
        // the natural strains of the step (kappa and tau of the rods' springs, the hinges'
        // angles, the mid-edge curvatures, the rod edges' stretch)
        const Real kscale = 1 / size;
        if constexpr (bend) {
          for (int c = 0; c < 2; ++c)
            g.kappa_bar[(size_t(n) * m.nbend + size_t(k)) * 2 + size_t(c)] -=
                diff(rkap_[2 * size_t(k) + size_t(c)], Real(1e-3) * kscale, false);
          g.tau_bar[size_t(n) * m.nbend + size_t(k)] -=
              diff(rtw_[size_t(k)], Real(1e-3) * kscale, false);
        } else if constexpr (std::is_same_v<Bd, ShellHingeBinding>) {
          g.phi_bar[size_t(n) * m.nhinge + size_t(k)] -= diff(rphi_[size_t(k)], Real(1e-3), false);
        } else if constexpr (std::is_same_v<Bd, RodStretchBinding>) {
          if (!rstr_.empty())
            g.stretch_bar[size_t(n) * ne + size_t(k)] -= diff(rstr_[size_t(k)], Real(1e-4), false);
        } else if constexpr (mid) {
          for (int c = 0; c < 3; ++c)
            g.midedge_kappa_bar[(size_t(n) * m.nmid + size_t(k)) * 3 + size_t(c)] -=
                diff(rmid_[3 * size_t(k) + size_t(c)], Real(1e-3) * kscale, false);
          // tau0 of its edges (functions of q_n: mid_edge_frame_adjoint below)
          const int t = m.mid_tri[size_t(k)];
          for (int a = 0; a < 3; ++a) {
            const size_t e = size_t(m.tri_edge[3 * size_t(t) + size_t(a)]);
            for (int c = 0; c < 3; ++c)
              tb[3 * e + size_t(c)] -= diff(rtau0_[3 * e + size_t(c)], Real(1e-3), false);
          }
        }
      }
    });
    for (int e = 0; e < m.nsedge; ++e)
      mid_edge_frame_adjoint(hmv(), sn.q.data(), e,
                             vec3(tb[3 * size_t(e)], tb[3 * size_t(e) + 1], tb[3 * size_t(e) + 2]),
                             rx_.data());
  }
  static Real sq(Real v) { return v * v; }

  // the part of bend-twist spring k's Jacobian at y that its symmetric Hessian leaves out (its
  // frames come from the step's start: transport_asym), scaled by sc; with Kelvin-Voigt damping,
  // also its damping force's part (kv_bend_asym)
  void bend_asym(const EvalView& ev, long k, Real sc, Mat<11, 11>& A) {
    RodBendTwistBinding::transport_asym(hmv(), ev, 0, k, A);
    A *= sc;
    if (!(model_->kelvin_voigt && en_.c_.c_u > 0)) return;
    Mat<11, 11> B;
    const Real s = kv_bend_asym(k, B);
    if (s == 0) return;
    for (int i = 0; i < 11 * 11; ++i)
      A.a[i] += s * B.a[i];
  }

  // Kelvin-Voigt damping (stencils/kelvin_voigt.h): each damped stencil's force is
  // (s / dt) grad e(z; anchors), e its own energy at z = q_a + w (y - q_a), w = c_u dt, with its
  // frames carried there from the step's start, and its natural strains replaced by its strains
  // at the anchor q_a = q_hat - u_hat / c_u (a stretched edge's rest length by its length there,
  // and its scale tau l_a / l_bar with it). Implicit Euler: q_a = q_n, w = 1, z = y; the midpoint
  // rule: q_a = q_n, w = 2, z = q_n+1; Newmark: w = gamma / beta, and q_a reads the start's
  // velocity and acceleration. The sweep's terms:
  // - dR/dy: the pools' share s c_u d2e/dz2, the frames' transport term at z (kv_bend_asym,
  //   scaled s w / dt) and the twist columns' holonomy at z (G's entries flagged kv, hbz_);
  // - q_a's adjoint (dash, the dashpots' start, which is the same point): z's share, (1 - w) /
  //   w of lambda . dR/dy's damping terms (kv_terms), and the anchors' (kv_anchor_share);
  // - the start's frames (alpha_n, kv_ab_) and tangents (kv_x_): those of z's frames and of
  //   q_a's (the anchors' twists), by their holonomies (haz_, haa_; at q_a = q_n none).
  // The force is affine in each anchor, so its derivative by one is its change when the anchor
  // grows (by 1, an edge's length by itself), exactly: kv_at_end takes lambda . F (kv_dot_, for
  // the moduli) and lambda . dF/d(anchor) (kv_coef_) of every stencil at z.

  // z's view, the holonomies of the start's frames carried to z and to q_a, and each damped
  // bend-twist spring's Hessian share at z (kv_hbt_)
  void kv_prepare(const State& sn) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    kv_w_ = en.c_.c_u * dt_;
    const EvalView kd =
        en.se_.kv_end_view(en.mv_, en.frames(), en.step_eval_view(en.y_.data()), dt_);
    if constexpr (X::kHostMemory) {
      kvz_ = kd;
    } else {
      kvz_ = mirror_view(kd, kvz_arrays_);
    }
    const Real* z = kvz_.q;
    const Real* qa = hkv_position();
    const size_t ne = size_t(m.nedge);
    haz_.assign(3 * ne, 0);
    hbz_.assign(3 * ne, 0);
    haa_.assign(3 * ne, 0);
    hba_.assign(3 * ne, 0);
    for (size_t j = 0; j < ne; ++j) {
      const Vec3 t0 = vec3(sn.edge_t[3 * j], sn.edge_t[3 * j + 1], sn.edge_t[3 * j + 2]);
      const int a = m.edge_node[2 * j], b = m.edge_node[2 * j + 1];
      const Real l0 = edge_length(sn.q.data(), a, b);
      holonomy_to(t0, l0, z, a, b, haz_.data() + 3 * j, hbz_.data() + 3 * j);
      holonomy_to(t0, l0, qa, a, b, haa_.data() + 3 * j, hba_.data() + 3 * j);
    }
    const KvAnchors an = hkv_anchors();
    const ModelView mv = kv_model_view<RodBendTwistBinding>(hmv(), an);
    const EvalView ev = kv_eval_view(kvz_, an);
    const Real* sc = hkv_scale(kFamBendTwist);
    kv_hbt_.resize(size_t(m.nbend));
    for (int k = 0; k < m.nbend; ++k) {
      std::vector<Real>& hk = kv_hbt_[size_t(k)];
      hk.clear();
      if (sc[k] == 0) continue;
      LocalEval<11> r;
      r.g.set_zero();
      r.H.set_zero();
      RodBendTwistBinding::eval(mv, ev, 0, k, kGradHess, r);
      hk.resize(121);
      for (int i = 0; i < 121; ++i)
        hk[size_t(i)] = sc[k] * en.c_.c_u * r.H.a[i];
    }
  }
  // the holonomy coefficients (as backward_step's) of the transport from tangent t0 (edge
  // length l0) to the edge a-b of configuration q
  static void holonomy_to(
      const Vec3& t0, Real l0, const Real* q, int a, int b, Real* ca, Real* cb) {
    const Real l1 = edge_length(q, a, b);
    const Vec3 t1 = l1 > 0 ? (1 / l1) * vec3(q[3 * b] - q[3 * a], q[3 * b + 1] - q[3 * a + 1],
                                             q[3 * b + 2] - q[3 * a + 2])
                           : t0;
    const Vec3 h = transport_holonomy_gradient(t0, t1);
    for (int c = 0; c < 3; ++c) {
      ca[c] = l0 > 0 ? h[c] / l0 : 0;
      cb[c] = l1 > 0 ? h[c] / l1 : 0;
    }
  }
  // the damped spring k's transport term at z into B, and its scale s w / dt (0: not damped)
  Real kv_bend_asym(long k, Mat<11, 11>& B) {
    const Real s = hkv_scale(kFamBendTwist)[k];
    if (s == 0) return 0;
    const KvAnchors a = hkv_anchors();
    RodBendTwistBinding::transport_asym(kv_model_view<RodBendTwistBinding>(hmv(), a),
                                        kv_eval_view(kvz_, a), 0, k, B);
    return s * kv_w_ / dt_;
  }
  template <class Bd, class F>
  void kv_each(Family f, const F& fn) {
    const Real* sc = hkv_scale(f);
    const long n = Bd::count(hmv());
    for (long k = 0; k < n; ++k)
      if (sc[k] != 0) fn(k, sc[k]);
  }
  template <class Bd>
  Real kv_dot(
      const KvAnchors& a, const EvalView& ev, long k, Real s, const std::vector<Real>& lam) {
    constexpr int D = Bd::kDofs;
    LocalEval<D> r;
    r.g.set_zero();
    Bd::eval(kv_model_view<Bd>(hmv(), a), kv_eval_view(ev, a), 0, k, kGrad, r);
    int idx[D];
    Bd::dofs(hmv(), k, idx);
    Real d = 0;
    for (int i = 0; i < D; ++i)
      d += r.g[i] * lam[size_t(idx[i])];
    return s / dt_ * d;
  }
  void kv_at_end(const std::vector<Real>& lam) {
    const EvalView& ev = kvz_;
    KvAnchors a = hkv_anchors();
    for (auto& v : kv_dot_)
      v.clear();
    for (auto& v : kv_coef_)
      v.clear();
    // family Bd's nc anchors of stencil k at anchor(k, c); a length anchor (stretching: scale
    // tau l_a / l_bar) grows by itself and its scale with it, a strain anchor grows by 1
    auto family = [&](auto binding, Family f, int nc, bool length, const auto& anchor) {
      using Bd = decltype(binding);
      const size_t n = size_t(Bd::count(hmv()));
      kv_dot_[size_t(f)].assign(n, 0);
      kv_coef_[size_t(f)].assign(size_t(nc) * n, 0);
      kv_each<Bd>(f, [&](long k, Real s) {
        const Real d0 = kv_dot<Bd>(a, ev, k, s, lam);
        kv_dot_[size_t(f)][size_t(k)] = d0;
        for (int c = 0; c < nc; ++c) {
          Real& an = anchor(k, c);
          const Real v = an, delta = length ? v : Real(1);
          an = v + delta;
          const Real d1 = kv_dot<Bd>(a, ev, k, length ? s * (v + delta) / v : s, lam);
          an = v;
          kv_coef_[size_t(f)][size_t(nc) * size_t(k) + size_t(c)] = (d1 - d0) / delta;
        }
      });
    };
    family(RodStretchBinding{}, kFamStretch, 1, true,
           [&](long k, int) -> Real& { return a.edge_len[k]; });
    family(ShellStretchBinding{}, kFamShellStretch, 1, true,
           [&](long k, int) -> Real& { return a.sedge_len[k]; });
    family(RodBendTwistBinding{}, kFamBendTwist, 3, false,
           [&](long k, int c) -> Real& { return c < 2 ? a.kappa[2 * k + c] : a.twist[k]; });
    family(ShellHingeBinding{}, kFamHinge, 1, false,
           [&](long k, int) -> Real& { return a.phi[k]; });
    family(ShellMidEdgeBinding{}, kFamMidEdge, 9, false,
           [&](long k, int c) -> Real& { return a.lambda[9 * k + c]; });
    // the membrane triangles: their anchor is the rest metric (g11, g22, g12), which their laws
    // do not read linearly: its derivative from the law's own (shell_membrane_rest_metric_
    // derivative, exact)
    using Mb = ShellMembraneBinding<kFamMembrane>;
    const size_t nm = size_t(Mb::count(hmv()));
    kv_dot_[kFamMembrane].assign(nm, 0);
    kv_coef_[kFamMembrane].assign(3 * nm, 0);
    const ModelView mmv = kv_model_view<Mb>(hmv(), a);
    kv_each<Mb>(kFamMembrane, [&](long k, Real s) {
      kv_dot_[kFamMembrane][size_t(k)] = kv_dot<Mb>(a, ev, k, s, lam);
      int idx[9];
      Mb::dofs(hmv(), k, idx);
      Vec<9> x, ll;
      detail::gather_positions<3>(ev.q, mmv.table[kFamMembrane].i + Mb::kInts * k, x);
      for (int i = 0; i < 9; ++i)
        ll[i] = lam[size_t(idx[i])];
      Real d[3];
      shell_membrane_rest_metric_derivative(x, Mb::params(mmv, k), ll, d);
      for (int c = 0; c < 3; ++c)
        kv_coef_[kFamMembrane][3 * size_t(k) + size_t(c)] = s / dt_ * d[c];
    });
  }

  // q_a's adjoint into dash (-lambda . dR/dq_a), the start's frames' into kv_ab_ and its
  // tangents' into kv_x_ (the sweep adds both after routing its own)
  void kv_terms(int n, const State& sn, const std::vector<Real>& lam, std::vector<Real>& dash) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    const size_t nd = size_t(m.ndof), ne = size_t(m.nedge);
    const Real w = kv_w_;
    kv_x_.assign(nd, 0);
    std::vector<Real>& az = kv_az_;  // z's frames' alpha adjoint, per edge
    std::vector<Real>& aa = kv_aa_;  // q_a's (the anchors' twists)
    az.assign(ne, 0);
    aa.assign(ne, 0);
    // z's frames: dR/dalpha_n = (1 / w) of their twist columns' share (the pools' is s c_u)
    for (const GEntry& t : gtrip_)
      if (t.kv) az[size_t(t.edge)] -= t.h / w * lam[size_t(t.dof)];
    // z's share of q_a's adjoint: with y held, dz/dq_a = 1 - w, so -lambda . dR/dq_a is (w - 1)
    // / w of lambda . (the damping terms of dR/dy)
    if (w != 1) {
      std::vector<Real>& u = kv_u_;
      u.assign(nd, 0);
      const KvAnchors an = hkv_anchors();
      auto hessians = [&](auto binding, Family f) {
        using Bd = decltype(binding);
        constexpr int D = Bd::kDofs;
        const ModelView mv = kv_model_view<Bd>(hmv(), an);
        const EvalView ev = kv_eval_view(kvz_, an);
        int idx[D];
        kv_each<Bd>(f, [&](long k, Real s) {
          LocalEval<D> r;
          r.g.set_zero();
          r.H.set_zero();
          Bd::eval(mv, ev, 0, k, kGradHess, r);
          Bd::dofs(hmv(), k, idx);
          for (int b = 0; b < D; ++b) {
            Real t = 0;
            for (int a = 0; a < D; ++a)
              t += r.H(a, b) * lam[size_t(idx[a])];
            u[size_t(idx[b])] += s * en.c_.c_u * t;
          }
        });
      };
      hessians(RodStretchBinding{}, kFamStretch);
      hessians(ShellStretchBinding{}, kFamShellStretch);
      hessians(ShellHingeBinding{}, kFamHinge);
      hessians(ShellMidEdgeBinding{}, kFamMidEdge);
      hessians(ShellMembraneBinding<kFamMembrane>{}, kFamMembrane);
      int idx[11];
      Mat<11, 11> B;
      for (int k = 0; k < m.nbend; ++k) {
        const std::vector<Real>& hk = kv_hbt_[size_t(k)];
        if (hk.empty()) continue;
        RodBendTwistBinding::dofs(hmv(), k, idx);
        const Real s = kv_bend_asym(k, B);
        for (int b = 0; b < 11; ++b) {
          Real t = 0;
          for (int a = 0; a < 11; ++a)
            t +=
                (hk[size_t(11 * a + b)] + (a < 9 && b < 9 ? s * B(a, b) : 0)) * lam[size_t(idx[a])];
          u[size_t(idx[b])] += t;
        }
      }
      for (const GEntry& t : gtrip_) {
        if (!t.kv) continue;
        const int na = m.edge_node[2 * t.edge], nb = m.edge_node[2 * t.edge + 1];
        for (int c = 0; c < 3; ++c) {
          const Real v = t.h * hbz_[3 * size_t(t.edge) + c] * lam[size_t(t.dof)];
          u[size_t(3 * nb + c)] += v;
          u[size_t(3 * na + c)] -= v;
        }
      }
      for (size_t i = 0; i < nd; ++i)
        dash[i] += (w - 1) / w * u[i];
    }
    kv_anchor_share(n, sn, dash, aa);
    // the frames' adjoints: alpha_n's, and through their holonomies the start's tangents' and
    // q_a's (at q_a = q_n those vanish)
    add_edge_transpose(haz_, az, 1, kv_x_);
    add_edge_transpose(haa_, aa, 1, kv_x_);
    add_edge_transpose(hba_, aa, 1, dash);
    kv_ab_.resize(ne);
    for (size_t j = 0; j < ne; ++j)
      kv_ab_[j] = az[j] + aa[j];
  }

  // the anchors' share: lambda . dF/d(anchor) (kv_coef_) times the anchors' gradients at q_a
  // with q_a's frames, -v into q_a's adjoint (dash) and a twist DOF's share also into its
  // edge's frames' (aa)
  void kv_anchor_share(int n, const State& sn, std::vector<Real>& dash, std::vector<Real>& aa) {
    const Model& m = *model_;
    Engine<X>& en = en_;
    const int nn = m.nnode;
    const Real* qd = en.se_.kv_anchor_position();  // (X's; q: the host's)
    const Real* q = hkv_position();
    kva_d1_.resize(3 * size_t(m.nedge));
    kva_t_.resize(3 * size_t(m.nedge));
    kva_ref_.resize(size_t(m.nbend));
    en.se_.frames_at(en.mv_, en.frames(), qd, kva_d1_.data(), kva_t_.data(), kva_ref_.data());
    EvalView ev = en.step_eval_view(qd);
    ev.edge_d1 = kva_d1_.data();
    ev.bend_ref_twist = kva_ref_.data();
    if constexpr (!X::kHostMemory) ev = mirror_view(ev, kva_arrays_);
    std::vector<Real>& v = kv_v_;
    v.assign(size_t(m.ndof), 0);
    auto lengths = [&](Family f, const int* node, long n) {
      for (long k = 0; k < n; ++k) {
        const Real c = kv_coef_[size_t(f)].empty() ? 0 : kv_coef_[size_t(f)][size_t(k)];
        if (c == 0) continue;
        const int na = node[2 * k], nb = node[2 * k + 1];
        const Real l = edge_length(q, na, nb);
        for (int i = 0; i < 3; ++i) {
          const Real u = (q[3 * nb + i] - q[3 * na + i]) / l;
          v[size_t(3 * nb + i)] += c * u;
          v[size_t(3 * na + i)] -= c * u;
        }
      }
    };
    lengths(kFamStretch, m.edge_node.data(), m.nedge);
    lengths(kFamShellStretch, m.sedge_node.data(), m.nsedge);
    if (!kv_coef_[kFamBendTwist].empty()) {
      int idx[11];
      for (int k = 0; k < m.nbend; ++k)
        for (int c = 0; c < 3; ++c) {
          const Real cf = kv_coef_[kFamBendTwist][3 * size_t(k) + c];
          if (cf == 0) continue;
          LocalEval<11> r;
          r.g.set_zero();
          RodBendTwistBinding::eval_with(hmv(), ev, 0, k, RodStrainComponent{c}, kGrad, r);
          RodBendTwistBinding::dofs(hmv(), k, idx);
          for (int i = 0; i < 11; ++i)
            v[size_t(idx[i])] += cf * r.g[i];
        }
    }
    if (!kv_coef_[kFamHinge].empty()) {
      int idx[12];
      for (int k = 0; k < m.nhinge; ++k) {
        const Real cf = kv_coef_[kFamHinge][size_t(k)];
        if (cf == 0) continue;
        Vec<12> x, gphi;
        detail::gather_positions<4>(q, m.hinge_node.data() + 4 * k, x);
        shell_hinge_angle_grad(x, gphi);
        ShellHingeBinding::dofs(hmv(), k, idx);
        for (int i = 0; i < 12; ++i)
          v[size_t(idx[i])] += cf * gphi[i];
      }
    }
    if (!kv_coef_[kFamMembrane].empty()) {
      // a membrane triangle's anchors are its metric's entries at q_a, m11 = |e1|^2,
      // m22 = |e2|^2, m12 = e1 . e2
      using Mb = ShellMembraneBinding<kFamMembrane>;
      const long nm = Mb::count(hmv());
      int idx[9];
      for (long k = 0; k < nm; ++k) {
        const Real* c = kv_coef_[kFamMembrane].data() + 3 * size_t(k);
        if (c[0] == 0 && c[1] == 0 && c[2] == 0) continue;
        Mb::dofs(hmv(), k, idx);
        Vec<9> x;
        detail::gather_positions<3>(q, hmv().table[kFamMembrane].i + Mb::kInts * k, x);
        const Vec3 e1 = x.segment<3>(3) - x.segment<3>(0), e2 = x.segment<3>(6) - x.segment<3>(0);
        const Vec3 g1 = 2 * c[0] * e1 + c[2] * e2, g2 = 2 * c[1] * e2 + c[2] * e1;
        for (int i = 0; i < 3; ++i) {
          v[size_t(idx[3 + i])] += g1[i];
          v[size_t(idx[6 + i])] += g2[i];
          v[size_t(idx[i])] -= g1[i] + g2[i];
        }
      }
    }
    if (!kv_coef_[kFamMidEdge].empty()) {
      // a triangle's anchor is its shape operator less the actuation at q_a, Lambda'
      // (KvAnchorMidEdge), and lambda . dF/d(anchor) is a 3 x 3 M (kv_coef_): the share is the
      // gradient of phi = <M, Lambda'(q_a)>, the stencil's own gradient with kb = 1 / (2 A_bar),
      // nu = 0 and Lambda_bar = Lambda' - M (g = 2 kb A_bar <C D, dLambda'/dq>, here D = M);
      // phi reads tau0 (the start's, a function of q_n) and kappa_bar through B^k alone
      // (shell_midedge_xi_chain)
      std::vector<Real>& tb = tau0_bar_;
      tb.assign(3 * size_t(m.nsedge), 0);
      int idx[12];
      for (int k = 0; k < m.nmid; ++k) {
        const Real* M = kv_coef_[kFamMidEdge].data() + 9 * size_t(k);
        bool any = false;
        for (int i = 0; i < 9; ++i)
          any = any || M[i] != 0;
        if (!any) continue;
        Vec<12> x;
        ShellMidedge::Params p;
        ShellMidEdgeBinding::local(hmv(), ev, 0, k, x, p);
        LocalEval<12> r;
        Mat3 L;
        shell_midedge_eval(x, p, kEnergy, r, &L);
        if (r.flags & kDegenerate) continue;
        p.kb = 1 / (2 * p.A_bar);
        p.nu = 0;
        for (int i = 0; i < 9; ++i)
          p.Lambda_bar.a[i] = L.a[i] - M[i];
        r.g.set_zero();
        shell_midedge_eval(x, p, kGrad, r);
        ShellMidEdgeBinding::dofs(hmv(), k, idx);
        for (int i = 0; i < 12; ++i)
          v[size_t(idx[i])] += r.g[i];
        const Real gxi[3] = {r.g[9], r.g[10], r.g[11]};
        Vec3 dt[3];
        Real dk[3];
        if (!shell_midedge_xi_chain(x, p, gxi, dt, dk)) continue;
        const int t = m.mid_tri[size_t(k)];
        for (int a = 0; a < 3; ++a) {
          grad_->midedge_kappa_bar[(size_t(n) * m.nmid + size_t(k)) * 3 + size_t(a)] -= dk[a];
          for (int c = 0; c < 3; ++c)
            tb[3 * size_t(m.tri_edge[3 * size_t(t) + a]) + c] -= dt[a][c];
        }
      }
      for (int e = 0; e < m.nsedge; ++e)
        mid_edge_frame_adjoint(
            hmv(), sn.q.data(), e,
            vec3(tb[3 * size_t(e)], tb[3 * size_t(e) + 1], tb[3 * size_t(e) + 2]), kv_x_.data());
    }
    for (int i = 0; i < m.ndof; ++i) {
      dash[size_t(i)] -= v[size_t(i)];
      const int j = i - 3 * nn;
      if (j >= 0 && j < m.nedge) aa[size_t(j)] -= v[size_t(i)];
    }
  }

  // the damping terms' shares of q_n's adjoint (x, ndof) and of alpha_n's (ab, nedge), added
  // after the sweep's own
  // the secant ground force's share of the step's start adjoint against v (the adjoint, or
  // Newmark's psi): start_ -= (v . dg) gd at each node, dg its force's derivative by the start's
  // distance and gd that distance's gradient (GroundBinding::secant_start_derivative, at y)
  void add_ground_secant_start(const Real* v, Real dens) {
    const EvalView ev = ev_y();
    for (int k = 0; k < model_->nnode; ++k) {
      Vec3 dg, gd;
      if (!GroundBinding::secant_start_derivative(hmv(), ev, 0, k, hmu()[0], dens, dg, gd))
        continue;
      Real sl = 0;
      for (int i = 0; i < 3; ++i)
        sl += dg[i] * v[3 * k + i];
      for (int i = 0; i < 3; ++i)
        start_[size_t(3 * k + i)] -= sl * gd[i];
    }
  }
  void add_start_share(const std::vector<Real>& x, const std::vector<Real>& ab) {
    for (size_t i = 0; i < x.size(); ++i)
      xb_[i] += x[i];
    for (size_t j = 0; j < ab.size(); ++j)
      ab_[j] += ab[j];
  }

  // the scales the engine's pools carry (environment 0's): Young's modulus scale, and with it
  // the part's of the node that names a stencil (stencil_part_node); the density scale
  Real youngs_scale() const { return en_.yscale_h_.empty() ? Real(1) : en_.yscale_h_[0]; }
  Real stencil_scale(int node) const {
    const Real ps = en_.parts_scaled_ && !en_.ps_scratch_.empty()
                        ? en_.ps_scratch_[size_t(model_->node_part[size_t(node)])]
                        : Real(1);
    return youngs_scale() * ps;
  }
  Real density_scale() const { return en_.scaled_ ? en_.params_h_[0] : Real(1); }

  static Real edge_length(const Real* q, int a, int b) {
    const Real dx = q[3 * b] - q[3 * a], dy = q[3 * b + 1] - q[3 * a + 1],
               dz = q[3 * b + 2] - q[3 * a + 2];
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  }
  // out += sign (C^T v) for the edge operator (C dx)_j = c_j . (dx_b - dx_a)
  void add_edge_transpose(const std::vector<Real>& coef,
                          const std::vector<Real>& v,
                          Real sign,
                          std::vector<Real>& out) const {
    const Model& m = *model_;
    for (int j = 0; j < m.nedge; ++j) {
      const int a = m.edge_node[2 * j], b = m.edge_node[2 * j + 1];
      for (int c = 0; c < 3; ++c) {
        const Real t = sign * v[size_t(j)] * coef[3 * size_t(j) + c];
        out[size_t(3 * b + c)] += t;
        out[size_t(3 * a + c)] -= t;
      }
    }
  }

  // ---- the host's view of X's memory -------------------------------------------------------
  // The sweep's loops run on the host. On an executor whose memory the host cannot read (the
  // CUDA executor's device memory), they read copies of what the engine's last evaluation left
  // there (the pools, the predictor, the per-DOF Jacobian, the pairs, the view at y), taken by
  // host_sync after each evaluation the sweep makes; on the host executor X's own arrays.
  const ModelView& hmv() const {
    if constexpr (X::kHostMemory) {
      return en_.mv_;
    } else {
      return hmv_;
    }
  }
  template <class B>
  const Real* host_of(const B& b, const std::vector<Real>& copy) const {
    if constexpr (X::kHostMemory) {
      (void)copy;
      return b.data();
    } else {
      (void)b;
      return copy.data();
    }
  }
  const Real* hg() const { return host_of(en_.g_pool_, hg_); }
  const Real* hh() const { return host_of(en_.h_pool_, hh_); }
  const Real* hq_hat() const { return host_of(en_.q_hat_, hqh_); }
  const Real* hu_hat() const { return host_of(en_.u_hat_, huh_); }
  const Real* hdof_j() const { return host_of(en_.dof_J_, hdj_); }
  const Real* hmu() const { return host_of(en_.mu_, hmu_); }
  const Real* hsignal() const { return host_of(en_.signal_, hsig_); }
  // Rayleigh damping's: each node's beta, the elastic Hessians at the step's start (family f's
  // first), the step's start frames (d1, t, ref)
  const Real* hbeta() {
    if constexpr (X::kHostMemory) {
      return en_.se_.stiffness_beta();
    } else {
      return hbeta_.data();
    }
  }
  const Real* hstart_stiffness(Family f) {
    if constexpr (X::kHostMemory) {
      return en_.se_.start_stiffness(f);
    } else {
      const AssemblyPlan& p = model_->plan;
      return hkst_.data() + (p.h_off[f] - p.h_off[kFamElasticBegin]);
    }
  }
  // Kelvin-Voigt damping's: the anchors (a copy the sweep may move and put back), each family's
  // scales, the anchor configuration q_a
  KvAnchors hkv_anchors() {
    if constexpr (X::kHostMemory) {
      return en_.se_.kv_anchors();
    } else {
      return hkva_;
    }
  }
  const Real* hkv_scale(Family f) {
    if constexpr (X::kHostMemory) {
      return en_.se_.kv_scale_of(f);
    } else {
      return hkvs_[size_t(f)].data();
    }
  }
  const Real* hkv_position() {
    if constexpr (X::kHostMemory) {
      return en_.se_.kv_anchor_position();
    } else {
      return hqa_.data();
    }
  }
  StepFrames hframes() {
    if constexpr (X::kHostMemory) {
      return en_.frames();
    } else {
      return StepFrames{hd1_.data(), ht_.data(), href_.data(), nullptr, nullptr, nullptr};
    }
  }
  // the step's view at its solution y (the stencils' frames, natural shape, predictor, signals)
  EvalView ev_y() {
    if constexpr (X::kHostMemory) {
      return en_.step_eval_view(en_.y_.data());
    } else {
      return hev_y_;
    }
  }
  // n values of X's memory at p copied into h; the copy's pointer (null for a null p)
  template <class T>
  static const T* host_copy(const T* p, long n, std::vector<T>& h) {
    h.resize(size_t(std::max(n, 0L)));
    if (!p || n <= 0) return p ? h.data() : nullptr;
    X::to_host(h.data(), p, size_t(n));
    return h.data();
  }
  // a view of X's memory copied to the host (13 arrays in v): each of its arrays, one
  // environment's
  EvalView mirror_view(const EvalView& e, std::vector<Real>* v) const {
    const Model& m = *model_;
    auto reals = [](const Real* p, long n, std::vector<Real>& h) { return host_copy(p, n, h); };
    const long nd = m.ndof;
    EvalView h = e;
    h.q = reals(e.q, nd, v[0]);
    h.edge_d1 = reals(e.edge_d1, 3L * m.nedge, v[1]);
    h.bend_ref_twist = reals(e.bend_ref_twist, m.nbend, v[2]);
    h.bend_kappa_bar = reals(e.bend_kappa_bar, 2L * m.nbend, v[3]);
    h.bend_tau_bar = reals(e.bend_tau_bar, m.nbend, v[4]);
    h.hinge_phi_bar = reals(e.hinge_phi_bar, m.nhinge, v[5]);
    h.mid_kappa_bar = reals(e.mid_kappa_bar, 3L * m.nmid, v[6]);
    h.q_hat = reals(e.q_hat, nd, v[7]);
    h.u_hat = reals(e.u_hat, nd, v[8]);
    h.sedge_tau0 = reals(e.sedge_tau0, 3L * m.nsedge, v[9]);
    h.signal = reals(e.signal, kMaxSignals, v[10]);
    h.q_start = reals(e.q_start, nd, v[11]);
    h.edge_stretch_bar = reals(e.edge_stretch_bar, m.nedge, v[12]);
    return h;
  }
  // the copies of the pools alone, after an evaluation of some families at the same step (the
  // non-elastic ones at a fixed velocity, the contact stencils' P0), which changes nothing else
  void host_sync_pools() {
    if constexpr (!X::kHostMemory) {
      host_copy(en_.g_pool_.data(), long(en_.g_pool_.size()), hg_);
      host_copy(en_.h_pool_.data(), long(en_.h_pool_.size()), hh_);
    }
  }
  // the copies of the engine's arrays after the step's evaluation at y (nothing on the host
  // executor)
  void host_sync() {
    if constexpr (!X::kHostMemory) {
      Engine<X>& en = en_;
      auto grab = [](const auto& b, std::vector<Real>& h) {
        host_copy(b.data(), long(b.size()), h);
      };
      host_sync_pools();
      grab(en.q_hat_, hqh_);
      grab(en.u_hat_, huh_);
      grab(en.dof_J_, hdj_);
      grab(en.mu_, hmu_);
      grab(en.signal_, hsig_);
      // the engine's model view (its scalars, which the inputs set: the dashpots' mass scale)
      // with the model's host arrays, and the contact pairs the step found (in X's memory)
      const ModelView& d = en.mv_;
      hmv_ = d;
#define SLENDER_HOST_POINTER(type, name, count, width, doc) hmv_.name = hbase_.name;
      SLENDER_VIEW_ARRAYS(SLENDER_HOST_POINTER)
#undef SLENDER_HOST_POINTER
      for (int f = 0; f < kMaxFamilies; ++f)
        hmv_.table[f] = hbase_.table[f];
      auto ints = [](const int* p, long n, std::vector<int>& h) { return host_copy(p, n, h); };
      auto reals = [](const Real* p, long n, std::vector<Real>& h) { return host_copy(p, n, h); };
      hmv_.npair = d.npair;
      hmv_.npt = d.npt;
      hmv_.pair_node = ints(d.pair_node, 4 * long(d.npair), hpn_);
      hmv_.pt_node = ints(d.pt_node, 4 * long(d.npt), hptn_);
      hmv_.pair_d = reals(d.pair_d, long(d.npair), hpd_);
      hmv_.pt_d = reals(d.pt_d, long(d.npt), hptd_);
      hmv_.pair_mu = reals(d.pair_mu, long(d.npair), hpmu_);
      hmv_.pt_mu = reals(d.pt_mu, long(d.npt), hptmu_);
      // the view at y, array by array
      const Model& m = *model_;
      hev_y_ = mirror_view(en.step_eval_view(en.y_.data()), hev_arrays_);
      // Rayleigh damping's start: beta, the stiffness, the frames
      if (m.stiffness_damping) {
        const AssemblyPlan& p = m.plan;
        reals(en.se_.stiffness_beta(), m.nnode, hbeta_);
        reals(en.se_.start_stiffness(kFamElasticBegin),
              p.h_off[kFamElasticEnd] - p.h_off[kFamElasticBegin], hkst_);
        const StepFrames fr = en.frames();
        reals(fr.d1, 3L * m.nedge, hd1_);
        reals(fr.t, 3L * m.nedge, ht_);
        reals(fr.ref, m.nbend, href_);
      }
      // Kelvin-Voigt damping's anchors (set at the step's start), scales and q_a
      if (m.kelvin_voigt) {
        const KvAnchors a = en.se_.kv_anchors();
        std::vector<Real>* v = hkv_arrays_;
        KvAnchors& h = hkva_;
        h = a;
        h.edge_len = const_cast<Real*>(reals(a.edge_len, m.nedge, v[0]));
        h.sedge_len = const_cast<Real*>(reals(a.sedge_len, m.nsedge, v[1]));
        h.kappa = const_cast<Real*>(reals(a.kappa, 2L * m.nbend, v[2]));
        h.twist = const_cast<Real*>(reals(a.twist, m.nbend, v[3]));
        h.phi = const_cast<Real*>(reals(a.phi, m.nhinge, v[4]));
        h.lambda = const_cast<Real*>(reals(a.lambda, 9L * m.nmid, v[5]));
        h.membrane = const_cast<Real*>(reals(a.membrane, a.membrane_len, v[6]));
        h.zero = reals(a.zero, m.nedge, v[7]);
        for_each_elastic_family([&](auto binding, Family f, long) {
          using Bd = decltype(binding);
          reals(en.se_.kv_scale_of(f), Bd::count(hmv_), hkvs_[size_t(f)]);
        });
        reals(en.se_.kv_anchor_position(), m.ndof, hqa_);
      }
    }
  }

  struct GEntry {
    int dof, edge;
    Real h;
    bool kv;  // a damped spring's Kelvin-Voigt share, whose frames are z's
  };

  std::shared_ptr<const Model> model_;
  IntegratorSpec spec_;
  RolloutOptions opt_;
  Engine<X> en_;
  int N_ = 0, k_ = 1;
  Real dt_ = 0;
  RolloutActions act_;
  RolloutParams par_;
  std::vector<State> ckpt_;
  State final_;
  long recomputed_ = 0;
  RolloutGradient* grad_ = nullptr;
  std::vector<Real> xb_, vb_, ab_, accb_, ha_, hb_, ha1_, hb1_, x1t_, ab_in_, y_h_, tau0_bar_,
      start_, rhs_, vals_, rf_, lf_, lam_, mass_, w_, uy_, held_col_;
  std::vector<Real> dash_;  // the ground's and the pairs' dashpots' term of q_n's adjoint
  std::vector<Real> nec_phi_, nec_psi_;  // Newmark's energy-consistent contact (phi, psi)
  // Kelvin-Voigt: each family's lambda . F and lambda . dF/d(anchor) per stencil, the anchors'
  // share, z's view and w, the holonomies to z and to q_a, the damped bend-twist springs'
  // Hessian shares, the frames' and tangents' adjoints (kv_terms)
  std::vector<Real> kv_dot_[kNumFamilies], kv_coef_[kNumFamilies], kv_v_, kv_u_, kv_az_, kv_aa_,
      kv_ab_, kv_x_, haz_, hbz_, haa_, hba_;
  std::vector<std::vector<Real>> kv_hbt_;
  EvalView kvz_{};
  Real kv_w_ = 1;
  typename X::template Buffer<Real> kva_d1_, kva_t_, kva_ref_;
  // Rayleigh: the start's scratch copies (positions, frames, tau0, natural strains) and the
  // terms of q_n's and alpha_n's adjoints (rayleigh_terms)
  std::vector<Real> rq_, rd1_, rt_, rref_, rd1c_, rtc_, rrefc_, rtau0_, rkap_, rtw_, rphi_, rmid_,
      rstr_, rx_, rab_, rhk_;
  std::vector<unsigned char> ridle_;
  std::vector<GEntry> gtrip_;
  // the transposed slots of the engine's direct pattern (its row pointers and columns, and the
  // number of that pattern: stepper::SystemSolveOn::pattern_version)
  std::vector<int> tslot_;
  const std::vector<int>* prow_ = nullptr;
  const std::vector<int>* pcol_ = nullptr;
  long pattern_ = -1;
  std::unique_ptr<cpu::LinearSolver> solver_;
  typename X::template Buffer<Real> u_y_;
  // the host's copies of X's memory (host_sync; empty on the host executor): the pools, the
  // predictor, the per-DOF Jacobian, friction and signals, the pairs' lists, the view at y's
  // arrays, and the Jacobian's values assembled on X
  ModelView hmv_{}, hbase_{};
  std::vector<Real> hg_, hh_, hqh_, huh_, hdj_, hmu_, hsig_, hpd_, hptd_, hpmu_, hptmu_;
  std::vector<int> hpn_, hptn_;
  EvalView hev_y_{};
  std::vector<Real> hbeta_, hkst_, hd1_, ht_, href_;  // (Rayleigh's)
  // (Kelvin-Voigt's: the anchors and their arrays, each family's scales, q_a, the view at z and
  // at q_a)
  KvAnchors hkva_{};
  std::vector<Real> hkv_arrays_[8], hkvs_[kNumFamilies], hqa_, kvz_arrays_[13], kva_arrays_[13];
  std::vector<Real> hev_arrays_[13];
  typename X::template Buffer<Real> vals_x_;
};

/// RolloutAdjointOn<X> behind the seam RolloutAdjoint holds (engine/adjoint_engine.h)
template <class X>
class RolloutAdjointEngineOn final : public RolloutAdjointEngine {
 public:
  RolloutAdjointEngineOn(std::shared_ptr<const Model> model,
                         const IntegratorSpec& spec,
                         const RolloutOptions& opt)
      : device_(X::current_device()), on_(std::move(model), spec, opt) {}
  const Model& model() const override { return on_.model(); }
  State run(const State& initial,
            int steps,
            const RolloutActions& a,
            const RolloutParams& p,
            std::vector<Real>* q,
            std::vector<Real>* u) override {
    const typename X::OnDevice on(device_);
    return on_.run(initial, steps, a, p, q, u);
  }
  RolloutGradient gradient(const RolloutLossGradient& loss) override {
    const typename X::OnDevice on(device_);
    return on_.gradient(loss);
  }
  double checkpoint_bytes() const override { return on_.checkpoint_bytes(); }
  double segment_bytes() const override { return on_.segment_bytes(); }
  long recomputed_steps() const override { return on_.recomputed_steps(); }

 private:
  int device_;
  RolloutAdjointOn<X> on_;
};

}  // namespace slender
