// CPU backend of the Simulator: implicit integrators with Newton's method on the free DOFs (the
// integrators' formulation is in include/slender/core/integrator.h). With the CUDA backend
// selected, the Newton step runs on the device (kernels/cuda_stepper.cu) and this class keeps the
// host side: contact candidates, actuation, point loads and the host copy of the state.

#include "slender/simulator.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "contact/pairs.h"
#include "model/model_internal.h"
#include "slender/core/error.h"
#include "slender/core/integrator.h"
#include "slender/core/newton.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/assemble.h"
#include "slender/engine/device_stepper.h"
#include "slender/engine/linear_solver.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"

namespace slender {

bool linear_solver_from_name(const std::string& name, LinearSolverKind& kind) {
  static const std::pair<const char*, LinearSolverKind> kinds[] = {
      {"auto", LinearSolverKind::kAuto},
      {"cholmod", LinearSolverKind::kCholmod},
      {"eigen-ldlt", LinearSolverKind::kEigenLdlt},
      {"sparse-lu", LinearSolverKind::kSparseLu},
      {"pcg", LinearSolverKind::kPcg},
      {"banded", LinearSolverKind::kBanded},
      {"dense", LinearSolverKind::kDense}};
  for (const auto& [n, k] : kinds)
    if (name == n) {
      kind = k;
      return true;
    }
  return false;
}

const char* linear_solver_names() {
  return "auto, cholmod, eigen-ldlt, sparse-lu, pcg, banded, dense";
}

const char* to_string(StepStatus s) {
  switch (s) {
    case StepStatus::kConverged:
      return "converged";
    case StepStatus::kMaxIters:
      return "max-iterations";
    case StepStatus::kLineSearchFailed:
      return "line-search-failed";
    case StepStatus::kNonFinite:
      return "non-finite";
    case StepStatus::kLinearSolveFailed:
      return "linear-solve-failed";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

struct Simulator::Impl {
  std::shared_ptr<const Model> model;
  IntegratorSpec spec;
  State state;
  ModelView mv;                               // the model's arrays plus this step's contact pairs
  std::unique_ptr<cpu::LinearSolver> solver;  // the CPU backend's (created when first needed)
  LinearSolverKind solver_kind;
  bool symmetric = true;  // whether the Jacobian is symmetric (no friction, no drag)
  PhaseTimes times;

  // CUDA backend: the device runs the step and holds the state; `state` is the host copy,
  // refreshed when a query needs it
  std::unique_ptr<DeviceStepper> device;
  bool host_stale = false;
  bool loads_dirty = false;  // external forces changed since the device last saw them
  long plan_version = 0, device_plan_version = 0;  // contact plans built / known to the device

  // rod-rod contact: candidate pairs of the step and the assembly plan that includes them
  contact::ContactPairFinder pair_finder;        // the host's (CPU backend)
  contact::ContactPairLists pairs, fresh_pairs;  // this step's sub-pairs, the next candidates
  bool host_pairs_replaced = false;  // a host evaluation found `pairs` since the device did
  AssemblyPlan contact_plan;
  AssemblyPlanCache plan_cache;             // the static families' sorted contributions
  std::vector<int> prev_row_ptr, prev_col;  // the pattern the solver was analysed for
  const AssemblyPlan* plan_ptr = nullptr;   // the model's plan, or contact_plan
  const AssemblyPlan& plan() const { return *plan_ptr; }

  // workspace, sized once
  std::vector<Real> y, y_trial, q_hat, u_hat, f_time;
  Real c_u = 0;  // du/dq of the step being solved (drag reads it)
  // the natural shape at the evaluation time: rest values with actuation applied
  std::vector<Real> nat_kappa_bar, nat_tau_bar, nat_phi_bar;
  ActuationCallback actuation_callback;
  bool natural_touched = false;  // a callback ran since the natural values were the rest values
  ForceCallback force_callback;  // the caller's state-dependent force (ForceEval), or none
  ForceEval force_eval;          // its last evaluation (force and Jacobian entries)
  std::vector<Real> force, force_u;
  std::vector<Real> external_forces;  // (nnode x 3) or empty
  // prescribed motion: the caller's targets of every fixed DOF (nfixed, or empty), and this
  // step's targets and slot map (the caller's, the scene's motions' or none: null)
  std::vector<Real> fixed_targets, motion_value;
  const int* motion_slot = nullptr;
  const Real* motion_target = nullptr;
  EnvParams params;
  std::vector<Real> env_mass;  // the model's DOF masses times params.density_scale (ndof)
  const Real* dof_mass() const { return env_mass.data(); }
  Vec3 gravity() const { return params.override_gravity ? params.gravity : model->gravity; }
  Real mass_damping() const {
    return params.mass_damping >= 0 ? params.mass_damping : model->mass_damping;
  }
  bool friction() const {
    return model->friction() || (model->ground.enabled && params.ground_friction > 0);
  }
  std::vector<Real> d1_cur, t_cur, ref_cur;
  std::vector<Real> e_pool, g_pool, h_pool;
  std::vector<unsigned> flag_pool;
  std::vector<Real> dof_r, dof_J, dof_phi, f, dx;
  Real phi = 0;  // incremental potential of the last evaluation

  Impl(std::shared_ptr<const Model> m,
       const IntegratorSpec& s,
       LinearSolverKind kind,
       BackendKind backend)
      : model(std::move(m)), spec(s), state(initial_state(*model)), mv(host_view(*model)) {
    const Model& md = *model;
    if (backend == BackendKind::kCuda) device = make_device_stepper(model, spec, kind);
    // a non-symmetric Jacobian needs LU (banded or sparse); kAuto chooses between them
    symmetric = !md.nonsymmetric();
    if (!symmetric && kind != LinearSolverKind::kAuto && kind != LinearSolverKind::kBanded)
      kind = LinearSolverKind::kSparseLu;
    env_mass = md.dof_mass;
    solver_kind = kind;
    plan_ptr = &md.plan;
    if (!device) solver = std::make_unique<cpu::LinearSolver>(md.plan, kind, symmetric);
    y.resize(md.ndof);
    y_trial.resize(md.ndof);
    q_hat.resize(md.ndof);
    u_hat.resize(md.ndof);
    f_time.resize(md.ndof);
    d1_cur.resize(3 * size_t(md.nedge));
    t_cur.resize(3 * size_t(md.nedge));
    ref_cur.resize(md.nbend);
    e_pool.resize(md.plan.energy_pool);
    flag_pool.resize(md.plan.energy_pool);
    g_pool.resize(md.plan.grad_pool);
    h_pool.resize(md.plan.hess_pool);
    dof_r.resize(md.ndof);
    dof_J.resize(md.ndof);
    dof_phi.resize(md.ndof);
    nat_kappa_bar = md.bend_kappa_bar;
    nat_tau_bar = md.bend_tau_bar;
    nat_phi_bar = md.hinge_phi_bar;
    f.resize(md.plan.nfree);
    dx.resize(md.plan.nfree);
  }

  // a Jacobian that is (or may become) non-symmetric: LU from here on, since the symmetric
  // factorizations read one triangle (banded LU and kAuto's choice already handle it)
  void take_lu() {
    if (!symmetric) return;
    symmetric = false;
    if (solver_kind != LinearSolverKind::kAuto && solver_kind != LinearSolverKind::kBanded)
      solver_kind = LinearSolverKind::kSparseLu;
    solver.reset();
  }

  cpu::LinearSolver& cpu_solver() {
    if (!solver) solver = std::make_unique<cpu::LinearSolver>(plan(), solver_kind, symmetric);
    return *solver;
  }

  // the host copy of the state, current
  void sync_host() {
    if (device && host_stale) device->download_state(state);
    host_stale = false;
  }

  // frames of configuration q from the step-start frames in `state`
  void update_frames(const Real* q) {
    const Model& m = *model;
    parallel_for_host(m.nedge,
                      TransportFrames{mv, q, state.edge_d1.data(), state.edge_t.data(),
                                      d1_cur.data(), t_cur.data()},
                      kParallelGrainMedium);
    parallel_for_host(m.nbend,
                      ReferenceTwists{mv, d1_cur.data(), t_cur.data(), state.bend_ref_twist.data(),
                                      ref_cur.data()},
                      kParallelGrainMedium);
  }

  EvalView eval_view(const Real* q) const {
    EvalView ev{};
    ev.nenv = 1;
    ev.q = q;
    ev.edge_d1 = d1_cur.data();
    ev.bend_ref_twist = ref_cur.data();
    ev.bend_kappa_bar = nat_kappa_bar.data();
    ev.bend_tau_bar = nat_tau_bar.data();
    ev.hinge_phi_bar = nat_phi_bar.data();
    ev.natural_per_env = 0;
    ev.q_hat = q_hat.data();
    ev.u_hat = u_hat.data();
    ev.c_u = c_u;
    ev.sedge_tau0 = state.sedge_tau0.data();
    return ev;
  }

  // the natural shape at time t: the rest values plus every actuation's contribution (they
  // add up where several drive one spring), then the callback
  void apply_actuation(Real t) {
    const Model& m = *model;
    // a callback may have changed any natural value: start from the rest values, so that what
    // it set does not outlive it (a cleared action, a removed callback)
    if (natural_touched) {
      nat_kappa_bar = m.bend_kappa_bar;
      nat_tau_bar = m.bend_tau_bar;
      nat_phi_bar = m.hinge_phi_bar;
      natural_touched = false;
    }
    for (const ActuatedSpring& a : m.actuated) {
      switch (a.component) {
        case 0:
        case 1:
          nat_kappa_bar[2 * a.index + a.component] = m.bend_kappa_bar[2 * a.index + a.component];
          break;
        case 2:
          nat_tau_bar[a.index] = m.bend_tau_bar[a.index];
          break;
        default:
          nat_phi_bar[a.index] = m.hinge_phi_bar[a.index];
          break;
      }
    }
    for (const ActuatedSpring& a : m.actuated) {
      const ActuationSpec& act = m.scene.actuation[a.actuation];
      const Real envelope = act.ramp_in > 0 ? std::min(Real(1), t / act.ramp_in) : Real(1);
      const Real v = envelope * act.amplitude * a.scale * eval_time_function(act.time, t, a.phase);
      switch (a.component) {
        case 0:
        case 1:
          nat_kappa_bar[2 * a.index + a.component] += v;
          break;
        case 2:
          nat_tau_bar[a.index] += v;
          break;
        default:
          nat_phi_bar[a.index] += v;
          break;
      }
    }
    if (actuation_callback) {
      NaturalShape shape{nat_kappa_bar.data(), nat_tau_bar.data(), nat_phi_bar.data(), m.nbend,
                         m.nhinge};
      actuation_callback(t, shape);
      natural_touched = true;
    }
  }

  // one family's local energies, gradients and (optionally) Hessians at the view's q
  template <class B>
  void eval_family(Family f, const EvalView& ev, unsigned want, long grain) {
    const AssemblyPlan& p = plan();
    const long n = B::count(mv);
    const LocalBuffers<B::kDofs> buf{e_pool.data() + p.e_off[f],
                                     g_pool.data() + p.g_off[f],
                                     h_pool.data() + p.h_off[f],
                                     flag_pool.data() + p.e_off[f],
                                     n,
                                     0,
                                     0,
                                     0};
    parallel_for_host(n, EvalStencils<B>{mv, ev, n, want, buf}, grain);
  }

  // every stencil at q (frames current)
  void eval_stencils(const Real* q, unsigned want) {
    eval_all_families(q, want);
    // a Young's modulus scale multiplies every elastic family's energy, gradient and Hessian
    const Real s = params.youngs_scale;
    if (s == 1) return;
    const AssemblyPlan& p = plan();
    const Family a = kFamElasticBegin, b = kFamElasticEnd;
    for (long i = p.e_off[a]; i < p.e_off[b]; ++i)
      e_pool[i] *= s;
    for (long i = p.g_off[a]; i < p.g_off[b]; ++i)
      g_pool[i] *= s;
    if (want & kHess)
      for (long i = p.h_off[a]; i < p.h_off[b]; ++i)
        h_pool[i] *= s;
  }

  void eval_all_families(const Real* q, unsigned want) {
    const EvalView ev = eval_view(q);
    for_each_family([&](auto binding, Family f, long grain) {
      eval_family<decltype(binding)>(f, ev, want, grain);
    });
  }

  // residual (and Jacobian values) at configuration q; returns the residual norm
  Real evaluate(const Real* q, const StepCoeffs& c, bool with_jacobian) {
    const Model& m = *model;
    const AssemblyPlan& p = plan();
    auto t0 = Clock::now();
    update_frames(q);
    times.frames += seconds_since(t0);

    t0 = Clock::now();
    eval_stencils(q, with_jacobian ? kGradHess : kGrad);
    times.eval += seconds_since(t0);

    t0 = Clock::now();
    const Vec3 g = c.load_factor * gravity();
    parallel_for_host(
        m.ndof, DofTerms{m.nnode, q, q_hat.data(), u_hat.data(), f_time.data(), dof_mass(),
                         m.node_dl.data(), m.node_volume.data(), m.buoyancy_density, g[0], g[1],
                         g[2], m.viscosity, mass_damping(), c.c_m, c.c_u, dof_r.data(),
                         dof_J.data(), dof_phi.data()});
    if (force_callback) {
      call_force(c.t_eval, q, c.c_u, with_jacobian);
      for (int i = 0; i < m.ndof; ++i)
        dof_r[i] -= force[i];
    }
    parallel_for_host(p.nfree,
                      AssembleResidual{p.row_src_adr.data(), p.row_src.data(), p.free_dof.data(),
                                       g_pool.data(), dof_r.data(), f.data()});
    if (with_jacobian) {
      Real* val = cpu_solver().values();
      parallel_for_host(
          p.nnz(), AssembleJacobian{p.slot_src_adr.data(), p.slot_src.data(), h_pool.data(), val});
      parallel_for_host(p.nfree,
                        AddDiagonal{p.diag_slot.data(), p.free_dof.data(), dof_J.data(), val});
      if (force_callback) add_force_jacobian(c.c_u, val);
    }
    times.assemble += seconds_since(t0);
    // incremental potential: the line search's merit function
    phi = 0;
    for (Real v : e_pool)
      phi += v;
    for (Real v : dof_phi)
      phi += v;
    Real s = 0;
    for (Real v : f)
      s += v * v;
    return std::sqrt(s);
  }

  // the caller's force at configuration q (velocity u_hat + c_u (q - q_hat)) and time t, into
  // `force` and force_eval's Jacobian entries
  void call_force(Real t, const Real* q, Real c_u_eval, bool want_jacobian) {
    const Model& m = *model;
    force_u.resize(m.ndof);
    for (int i = 0; i < m.ndof; ++i)
      force_u[i] = u_hat[i] + c_u_eval * (q[i] - q_hat[i]);
    call_force_at(t, q, force_u.data(), want_jacobian);
  }
  void call_force_at(Real t, const Real* q, const Real* u, bool want_jacobian) {
    const Model& m = *model;
    force.assign(m.ndof, 0);
    ForceEval& e = force_eval;
    e.t = t;
    e.ndof = m.ndof;
    e.q = q;
    e.u = u;
    e.force = force.data();
    e.want_jacobian = want_jacobian;
    e.jac_row.clear();
    e.jac_col.clear();
    e.jac_dq.clear();
    e.jac_du.clear();
    force_callback(e);
    SLENDER_CHECK(e.jac_row.size() == e.jac_col.size() && e.jac_row.size() == e.jac_dq.size() &&
                      e.jac_row.size() == e.jac_du.size(),
                  "force callback: the Jacobian's entry lists differ in length");
  }
  // -(dF/dq + c_u dF/du) of the caller's force into the free-DOF Jacobian values
  void add_force_jacobian(Real c_u_eval, Real* val) {
    const Model& m = *model;
    const AssemblyPlan& p = plan();
    const ForceEval& e = force_eval;
    for (size_t k = 0; k < e.jac_row.size(); ++k) {
      const int row = e.jac_row[k], col = e.jac_col[k];
      SLENDER_CHECK(row >= 0 && row < m.ndof && col >= 0 && col < m.ndof,
                    "force callback: Jacobian entry (", row, ", ", col, ") outside the ", m.ndof,
                    " DOFs");
      const int r = p.dof_free[row], cf = p.dof_free[col];
      if (r < 0 || cf < 0) continue;  // a fixed DOF: no unknown there
      const int* b = p.col.data() + p.row_ptr[r];
      const int* end = p.col.data() + p.row_ptr[r + 1];
      const int* at = std::lower_bound(b, end, cf);
      SLENDER_CHECK(at != end && *at == cf, "force callback: Jacobian entry (DOF ", row, ", DOF ",
                    col, ") couples DOFs that no stencil couples (outside the Jacobian's pattern)");
      val[at - p.col.data()] -= e.jac_dq[k] + c_u_eval * e.jac_du[k];
    }
  }

  // this step's prescribed motion: the caller's targets of every fixed DOF, else the scene's
  // motions at the step's end t_end, else none (the fixed DOFs stay)
  void prescribe(Real t_end) {
    const Model& m = *model;
    motion_slot = nullptr;
    motion_target = nullptr;
    if (!fixed_targets.empty()) {
      motion_slot = m.dof_fixed_slot.data();
      motion_target = fixed_targets.data();
    } else if (!m.motion_dof.empty()) {
      motion_value.resize(m.motion_dof.size());
      motion_targets(m, t_end, motion_value.data());
      motion_slot = m.dof_motion_slot.data();
      motion_target = motion_value.data();
    }
  }

  StepCoeffs prepare(Real dt) {
    const Model& m = *model;
    const StepCoeffs c = step_coeffs(spec, state.time, dt);
    prescribe(state.time + dt);
    parallel_for_host(m.ndof,
                      Predict{spec.kind, dt, spec.beta, spec.gamma, state.q.data(), state.u.data(),
                              state.a.data(), m.dof_fixed.data(), q_hat.data(), u_hat.data(), 0,
                              motion_slot, motion_target, 0});
    c_u = c.c_u;
    apply_actuation(c.t_eval);
    point_loads(c);
    return c;
  }

  // f_time: the point loads at the step's evaluation time
  void point_loads(const StepCoeffs& c) {
    std::fill(f_time.begin(), f_time.end(), 0);
    for (size_t i = 0; i < external_forces.size(); ++i)
      f_time[i] = external_forces[i];
    for (const PointLoad& pl : model->point_loads) {
      const Real s = c.load_factor * eval_time_function(pl.time, c.t_eval);
      for (int k = 0; k < 3; ++k)
        f_time[3 * pl.node + k] += s * pl.force[k];
    }
  }

  // y <- y - alpha dx on the free DOFs, into `out`
  void take_step(const std::vector<Real>& from, Real alpha, std::vector<Real>& out) const {
    const AssemblyPlan& p = plan();
    out = from;
    parallel_for_host(p.nfree, ApplyNewtonStep{p.free_dof.data(), dx.data(), alpha, out.data()});
  }

  // rod and shell contact: candidate pairs for a step of size dt from the current state (surfaces
  // within the tolerance plus twice the distance the fastest node covers in a step), and the
  // assembly plan and solver for them when they changed
  // (on_device: by the device from its state, for a device step; else by the host from `state`,
  // for the host's own evaluations)
  void update_contacts(Real dt, bool on_device = false) {
    if (!model->contact.enabled) return;
    const auto t0 = Clock::now();
    find_contacts(dt, on_device);
    times.contacts += seconds_since(t0);
  }

  void find_contacts(Real dt, bool on_device) {
    if (on_device) {
      // on the device: the lists come back only when they changed, or when the host's copy was
      // replaced by a host evaluation since (the plan must be the device's pairs')
      const bool force = host_pairs_replaced;
      host_pairs_replaced = false;
      if (!device->find_contacts(dt, force, fresh_pairs)) return;
    } else {
      if (device) host_pairs_replaced = true;
      pair_finder.find(*model, state.q.data(), state.u.data(), dt, fresh_pairs);
      if (fresh_pairs.ee_node == pairs.ee_node && fresh_pairs.pt_node == pairs.pt_node &&
          plan_ptr == &contact_plan) {
        std::swap(pairs, fresh_pairs);  // the same pairs: d and mu are theirs too
        point_view_at_pairs();
        return;
      }
    }
    std::swap(pairs, fresh_pairs);
    point_view_at_pairs();
    adopt_pair_plan();
  }

  void point_view_at_pairs() {
    mv.npair = pairs.nee();
    mv.pair_node = pairs.ee_node.data();
    mv.pair_d = pairs.ee_d.data();
    mv.npt = pairs.npt();
    mv.pt_node = pairs.pt_node.data();
    mv.pt_d = pairs.pt_d.data();
    const bool friction = model->contact_friction();
    mv.pair_mu = friction ? pairs.ee_mu.data() : nullptr;
    mv.pt_mu = friction ? pairs.pt_mu.data() : nullptr;
  }

  // the assembly plan (and the solver, when the pattern changed) for new pairs
  void adopt_pair_plan() {
    const Model& m = *model;
    // the pattern the current solver was analysed for
    const AssemblyPlan& current = plan();
    prev_row_ptr = current.row_ptr;
    prev_col = current.col;
    build_assembly_plan(m, mv, contact_plan, plan_cache);
    plan_ptr = &contact_plan;
    ++plan_version;
    e_pool.resize(contact_plan.energy_pool);
    flag_pool.resize(contact_plan.energy_pool);
    g_pool.resize(contact_plan.grad_pool);
    h_pool.resize(contact_plan.hess_pool);
    // new pairs often couple nodes that were coupled already: the same sparsity pattern keeps
    // the solver and its symbolic analysis
    if (solver && contact_plan.row_ptr == prev_row_ptr && contact_plan.col == prev_col) return;
    solver.reset();
    if (!device) solver = std::make_unique<cpu::LinearSolver>(contact_plan, solver_kind, symmetric);
  }

  // one step on the device: the host prepares what is cheap here (actuation, point loads, the
  // assembly plan when the contact pairs the device found changed) and the device runs the
  // Newton step
  StepReport step_device(Real dt) {
    const Model& m = *model;
    DeviceStepInputs in;
    if (m.contact.enabled) {
      update_contacts(dt, true);  // on the device; the host state stays as stale as it was
      // the host's plan, unless the device assembles the contact part itself (its PCG path)
      in.plan_changed = !device->assembles_contact() && plan_version != device_plan_version;
      in.plan = &plan();
    }
    in.dt = dt;
    in.c = step_coeffs(spec, state.time, dt);
    c_u = in.c.c_u;
    if (!m.actuated.empty() || actuation_callback) {
      apply_actuation(in.c.t_eval);
      in.natural_changed = true;
      in.bend_kappa_bar = nat_kappa_bar.data();
      in.bend_tau_bar = nat_tau_bar.data();
      in.hinge_phi_bar = nat_phi_bar.data();
    }
    if (!m.point_loads.empty() || !external_forces.empty() || loads_dirty) {
      loads_dirty = false;
      point_loads(in.c);
      in.loads_changed = true;
      in.f_time = f_time.data();
    }
    prescribe(state.time + dt);
    if (motion_target) {
      in.target = motion_target;
      in.target_fixed = motion_slot == m.dof_fixed_slot.data();
    }
    DeviceStepWarnings warn;
    const StepReport rep = device->step(in, times, warn);
    device_plan_version = plan_version;
    state.warn_degenerate += warn.degenerate;
    state.warn_linear_fallback += warn.linear_fallback;
    state.warn_line_search += warn.line_search;
    if (rep.ok()) {
      state.time += dt;
      ++state.step;
      host_stale = true;
    }
    return rep;
  }

  StepReport step(Real dt) {
    SLENDER_CHECK(dt > 0 && std::isfinite(dt), "time step must be positive, got ", dt);
    if (device) return step_device(dt);
    update_contacts(dt);
    const AssemblyPlan& p = plan();
    StepReport rep;
    rep.dt = dt;
    const StepCoeffs c = prepare(dt);

    // predictor: free DOFs start at q_hat, fixed ones where they are
    y = q_hat;
    const Real r0 = evaluate(y.data(), c, true);
    const bool ok = newton_iterations(
        spec.newton, friction() || bool(force_callback), r0, rep, times, state.warn_line_search,
        [&] {
          NewtonDirection d;
          auto t0 = Clock::now();
          cpu::LinearSolver& ls = cpu_solver();
          const bool factored = ls.factorize();
          times.factor += seconds_since(t0);
          ++times.factorizations;
          t0 = Clock::now();
          d.solved = factored && ls.solve(f.data(), dx.data());
          times.solve += seconds_since(t0);
          // after the solve: CG that does not converge falls back to the direct path there
          if (ls.used_fallback()) ++state.warn_linear_fallback;
          for (int k = 0; d.solved && k < p.nfree; ++k) {
            d.slope += dx[k] * f[k];
            d.dx_max = std::max(d.dx_max, std::fabs(dx[k]));
          }
          return d;
        },
        [&](Real a) {
          take_step(y, a, y_trial);
          return evaluate(y_trial.data(), c, true);
        },
        [&] { return phi; }, [&] { std::swap(y, y_trial); });
    if (!ok) return rep;  // the state is untouched
    finalize(dt, c);
    ++times.steps;
    return rep;
  }

  // the converged y becomes the new state
  void finalize(Real dt, const StepCoeffs& c) {
    const Model& m = *model;
    std::vector<Real>& q = state.q;
    parallel_for_host(
        m.ndof, FinalizeStep{spec.kind, dt, c.c_m, c.c_u, y.data(), q_hat.data(), u_hat.data(),
                             dof_mass(), m.dof_fixed.data(), q.data(), state.u.data(),
                             state.a.data(), 0, motion_slot, motion_target, 0});
    // frames of the new configuration become the next step's start
    update_frames(q.data());
    state.edge_d1 = d1_cur;
    state.edge_t = t_cur;
    state.bend_ref_twist = ref_cur;
    // mid-edge frames of the new configuration; the xi DOFs keep their values
    parallel_for_host(m.nsedge, MidEdgeFrames{mv, q.data(), state.sedge_tau0.data()},
                      kParallelGrainMedium);
    state.time += dt;
    ++state.step;
    count_degenerate();
  }

  void count_degenerate() {
    for (unsigned fl : flag_pool)
      if (fl & kDegenerate) ++state.warn_degenerate;
  }

  // frames of the current state (they are the step-start frames) for energies and strains
  void frames_of_state() {
    d1_cur = state.edge_d1;
    t_cur = state.edge_t;
    ref_cur = state.bend_ref_twist;
  }
};

Simulator::Simulator(std::shared_ptr<const Model> model)
    : Simulator(model, model->scene.integrator, LinearSolverKind::kAuto, model->scene.backend) {}

Simulator::Simulator(std::shared_ptr<const Model> model,
                     const IntegratorSpec& integrator,
                     LinearSolverKind solver,
                     BackendKind backend) {
  SLENDER_CHECK(model != nullptr, "Simulator needs a model");
  impl_ = std::make_unique<Impl>(std::move(model), integrator, solver, backend);
  if (impl_->spec.kind == IntegratorKind::kNewmark) {
    // consistent initial acceleration: M a0 = F(q0, u0) - grad E(q0) on free DOFs
    Impl& s = *impl_;
    const Model& m = *s.model;
    s.q_hat = s.state.q;
    s.u_hat = s.state.u;
    std::fill(s.f_time.begin(), s.f_time.end(), 0);
    for (const PointLoad& pl : m.point_loads) {
      const Real v = eval_time_function(pl.time, 0);
      for (int k = 0; k < 3; ++k)
        s.f_time[3 * pl.node + k] += v * pl.force[k];
    }
    s.frames_of_state();
    s.apply_actuation(0);
    s.eval_stencils(s.state.q.data(), kGrad);
    const Vec3 g = m.gravity;
    parallel_for_host(
        m.ndof, DofTerms{m.nnode, s.state.q.data(), s.q_hat.data(), s.u_hat.data(), s.f_time.data(),
                         m.dof_mass.data(), m.node_dl.data(), m.node_volume.data(),
                         m.buoyancy_density, g[0], g[1], g[2], m.viscosity, m.mass_damping, 0, 0,
                         s.dof_r.data(), s.dof_J.data(), s.dof_phi.data()});
    parallel_for_host(m.plan.nfree, AssembleResidual{m.plan.row_src_adr.data(),
                                                     m.plan.row_src.data(), m.plan.free_dof.data(),
                                                     s.g_pool.data(), s.dof_r.data(), s.f.data()});
    for (int r = 0; r < m.plan.nfree; ++r) {
      const int i = m.plan.free_dof[r];
      s.state.a[i] = m.dof_mass[i] > 0 ? -s.f[r] / m.dof_mass[i] : 0;
    }
  }
  if (impl_->device) impl_->device->upload_state(impl_->state);
}

Simulator::~Simulator() = default;

StepReport Simulator::step() { return impl_->step(impl_->spec.dt); }
StepReport Simulator::step(Real dt) { return impl_->step(dt); }
const Model& Simulator::model() const { return *impl_->model; }
const State& Simulator::state() const {
  impl_->sync_host();
  return impl_->state;
}
const IntegratorSpec& Simulator::integrator() const { return impl_->spec; }
std::string Simulator::linear_solver_name() const {
  return impl_->device ? impl_->device->solver_name() : impl_->cpu_solver().name();
}
BackendKind Simulator::backend() const {
  return impl_->device ? BackendKind::kCuda : BackendKind::kCpu;
}
void Simulator::set_phase_timing(bool on) {
  if (impl_->device) impl_->device->set_phase_timing(on);
}
const PhaseTimes& Simulator::phase_times() const { return impl_->times; }
void Simulator::set_actuation(ActuationCallback callback) {
  impl_->actuation_callback = std::move(callback);
}
void Simulator::set_force_callback(ForceCallback callback, bool symmetric) {
  Impl& s = *impl_;
  SLENDER_CHECK(!s.device || !callback,
                "force callbacks run on the CPU backend only; this simulator runs on CUDA");
  s.force_callback = std::move(callback);
  if (s.force_callback && !symmetric) s.take_lu();  // a Jacobian that may be non-symmetric
}
void Simulator::set_external_forces(std::vector<Real> forces) {
  const Model& m = *impl_->model;
  SLENDER_CHECK(forces.empty() || forces.size() == 3 * size_t(m.nnode), "external forces need ",
                3 * m.nnode, " values (nnode x 3), got ", forces.size());
  impl_->external_forces = std::move(forces);
  impl_->loads_dirty = true;
}
void Simulator::set_fixed_targets(std::vector<Real> values) {
  const Model& m = *impl_->model;
  SLENDER_CHECK(values.empty() || values.size() == m.fixed_dof.size(), "fixed-DOF targets need ",
                m.fixed_dof.size(), " values (one per fixed DOF, Model::fixed_dof), got ",
                values.size());
  for (size_t j = 0; j < values.size(); ++j)
    SLENDER_CHECK(std::isfinite(values[j]), "fixed-DOF target ", j, " (DOF ", m.fixed_dof[j],
                  ") is not finite");
  impl_->fixed_targets = std::move(values);
}
const EnvParams& Simulator::params() const { return impl_->params; }
void Simulator::set_params(const EnvParams& p) {
  Impl& s = *impl_;
  const Model& m = *s.model;
  SLENDER_CHECK(p.youngs_scale > 0 && std::isfinite(p.youngs_scale),
                "youngs_scale must be positive, got ", p.youngs_scale);
  SLENDER_CHECK(p.density_scale > 0 && std::isfinite(p.density_scale),
                "density_scale must be positive, got ", p.density_scale);
  SLENDER_CHECK(std::isfinite(p.ground_friction) && std::isfinite(p.mass_damping),
                "ground_friction and mass_damping must be finite");
  SLENDER_CHECK(
      std::isfinite(p.gravity[0]) && std::isfinite(p.gravity[1]) && std::isfinite(p.gravity[2]),
      "gravity must be finite");
  if (s.device) s.device->set_params(p);  // first: it may refuse, and nothing has changed
  s.params = p;
  for (int i = 0; i < m.ndof; ++i)
    s.env_mass[i] = p.density_scale * m.dof_mass[i];
  s.mv.ground.mu = p.ground_friction >= 0 ? p.ground_friction : m.ground.friction;
  s.mv.mass_scale = p.density_scale;  // the contact dashpots' masses
  if (s.friction()) s.take_lu();      // ground friction makes the Jacobian non-symmetric
}

void Simulator::residual(Real dt,
                         const std::vector<Real>& y,
                         std::vector<Real>& f,
                         std::vector<Real>* jacobian) const {
  Impl& s = *impl_;
  SLENDER_CHECK(int(y.size()) == s.model->ndof, "configuration has ", y.size(), " DOFs, not ",
                s.model->ndof);
  s.sync_host();
  s.update_contacts(dt);
  const AssemblyPlan& p = s.plan();
  const StepCoeffs c = s.prepare(dt);
  s.evaluate(y.data(), c, jacobian != nullptr);
  f = s.f;
  if (!jacobian) return;
  jacobian->assign(size_t(p.nfree) * p.nfree, 0);
  const Real* val = s.cpu_solver().values();
  for (int r = 0; r < p.nfree; ++r)
    for (int k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      (*jacobian)[size_t(r) * p.nfree + p.col[k]] = val[k];
}

void Simulator::set_state(const State& s) {
  const Model& m = *impl_->model;
  SLENDER_CHECK(s.nenv == 1 && state_fits(m, s), "state does not match the model's sizes");
  impl_->state = s;
  impl_->host_stale = false;
  if (impl_->device) impl_->device->upload_state(s);
}

namespace {

// adds every local gradient of family B (from its part of the gradient pool) to g (ndof)
template <class B>
void scatter_gradients(const ModelView& mv, const Real* pool, std::vector<Real>& g) {
  const long n = B::count(mv);
  int dofs[B::kDofs];
  for (long k = 0; k < n; ++k) {
    B::dofs(mv, k, dofs);
    for (int a = 0; a < B::kDofs; ++a)
      g[dofs[a]] += pool[k * B::kDofs + a];
  }
}

}  // namespace

std::vector<Real> Simulator::reactions() const {
  Impl& s = *impl_;
  s.sync_host();
  // a device that assembles the contact part itself never hands the host its pairs: found here
  if (s.device && s.device->assembles_contact()) s.update_contacts(s.spec.dt);
  const Model& m = *s.model;
  const AssemblyPlan& p = s.plan();
  s.frames_of_state();
  s.apply_actuation(s.state.time);
  // static problem at the current state: no inertia, no velocity terms
  std::fill(s.q_hat.begin(), s.q_hat.end(), 0);
  std::fill(s.u_hat.begin(), s.u_hat.end(), 0);
  s.c_u = 0;
  s.eval_stencils(s.state.q.data(), kGrad);
  std::vector<Real> g(m.ndof, 0);
  for_each_family([&](auto binding, Family f, long) {
    if (family_in_reactions(f))
      scatter_gradients<decltype(binding)>(s.mv, s.g_pool.data() + p.g_off[f], g);
  });
  // external loads at the current time
  for (int n = 0; n < m.nnode; ++n)
    for (int c = 0; c < 3; ++c)
      g[3 * n + c] -= (m.node_mass[n] - m.buoyancy_density * m.node_volume[n]) * m.gravity[c];
  for (const PointLoad& pl : m.point_loads) {
    const Real v = eval_time_function(pl.time, s.state.time);
    for (int c = 0; c < 3; ++c)
      g[3 * pl.node + c] -= v * pl.force[c];
  }
  if (s.force_callback) {
    s.call_force_at(s.state.time, s.state.q.data(), s.state.u.data(), false);
    for (int i = 0; i < m.ndof; ++i)
      g[i] -= s.force[i];
  }
  for (int i = 0; i < m.ndof; ++i)
    if (!m.dof_fixed[i]) g[i] = 0;
  return g;
}

Energies Simulator::energies() const {
  Impl& s = *impl_;
  s.sync_host();
  const Model& m = *s.model;
  s.frames_of_state();
  s.apply_actuation(s.state.time);
  s.eval_stencils(s.state.q.data(), kEnergy);
  Energies en;
  for (int e = 0; e < m.nedge; ++e)
    en.stretch += s.e_pool[e];
  // split bend and twist: evaluate the twist part from the strains
  const EvalView ev = s.eval_view(s.state.q.data());
  for (int k = 0; k < m.nbend; ++k) {
    LocalEval<11> r;
    RodBendTwist::Strains st;
    RodBendTwistBinding::eval(s.mv, ev, 0, k, kEnergy, r, &st);
    const Real dt = st.tau - s.nat_tau_bar[k];
    const Real twist = 0.5 * m.bend_GJ[k] / m.bend_dl[k] * dt * dt;
    en.twist += s.params.youngs_scale * twist;
    en.bend += s.params.youngs_scale * (r.E - twist);
  }
  for (int i = 0; i < m.ndof; ++i)
    en.kinetic += 0.5 * s.dof_mass()[i] * s.state.u[i] * s.state.u[i];
  for (int n = 0; n < m.nnode; ++n)
    for (int c = 0; c < 3; ++c)
      en.gravity -= s.params.density_scale * m.node_mass[n] * s.gravity()[c] * s.state.q[3 * n + c];
  return en;
}

std::vector<Real> Simulator::shell_bending_energy_density() const {
  Impl& s = *impl_;
  const Model& m = *s.model;
  std::vector<Real> out(m.ntri, 0);
  if (m.ntri == 0) return out;
  s.sync_host();
  s.frames_of_state();
  s.apply_actuation(s.state.time);
  s.eval_stencils(s.state.q.data(), kEnergy);
  const Real* eh = s.e_pool.data() + m.plan.e_off[kFamHinge];
  for (int k = 0; k < m.nhinge; ++k)
    for (int a = 0; a < 2; ++a)
      out[m.sedge_tri[2 * m.hinge_sedge[k] + a]] += 0.5 * eh[k];
  const Real* em = s.e_pool.data() + m.plan.e_off[kFamMidEdge];
  for (int k = 0; k < m.nmid; ++k)
    out[m.mid_tri[k]] += em[k];
  for (int t = 0; t < m.ntri; ++t)
    out[t] /= m.tri_area_bar[t];
  return out;
}

std::vector<Real> Simulator::bend_strains() const {
  Impl& s = *impl_;
  s.sync_host();
  const Model& m = *s.model;
  s.frames_of_state();
  s.apply_actuation(s.state.time);
  const EvalView ev = s.eval_view(s.state.q.data());
  std::vector<Real> out(3 * size_t(m.nbend));
  for (int k = 0; k < m.nbend; ++k) {
    LocalEval<11> r;
    RodBendTwist::Strains st;
    RodBendTwistBinding::eval(s.mv, ev, 0, k, kEnergy, r, &st);
    // strains are reported in the stencil's own orientation
    out[3 * k] = st.kappa1;
    out[3 * k + 1] = st.kappa2;
    out[3 * k + 2] = st.tau;
  }
  return out;
}

std::vector<Real> Simulator::material_frames() const {
  impl_->sync_host();
  const Impl& s = *impl_;
  const Model& m = *s.model;
  std::vector<Real> out(3 * size_t(m.nedge));
  for (int e = 0; e < m.nedge; ++e) {
    const Vec3 d1 =
        vec3(s.state.edge_d1[3 * e], s.state.edge_d1[3 * e + 1], s.state.edge_d1[3 * e + 2]);
    const Vec3 t =
        vec3(s.state.edge_t[3 * e], s.state.edge_t[3 * e + 1], s.state.edge_t[3 * e + 2]);
    Vec3 m1, m2;
    material_frame(d1, t, s.state.q[m.edge_dof(e)], m1, m2);
    for (int c = 0; c < 3; ++c)
      out[3 * e + c] = m1[c];
  }
  return out;
}

}  // namespace slender
