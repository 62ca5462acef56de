// The Simulator: the front end of one environment. It owns the engine
// (engine/simulator_engine_on.h, the Newton step written once over an executor: the host one for
// the CPU backend, the CUDA one for the CUDA backend) and keeps the host side: the step's inputs
// (actuation, point loads, prescribed motion, the assembly plan of a new set of held DOFs) and
// the host copy of the state; contact between bodies is the engine's alone. Its queries (energies,
// strains, reactions, the shells' bending energy density, Newmark's initial acceleration) are the
// engine's, on its executor (engine/engine_queries.h), with the inputs of the state's time that
// this side computes.

#include "slender/simulator.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "backend/host_executor.h"
#include "model/model_internal.h"
#include "runtime/memory_budget.h"
#include "slender/control.h"
#include "slender/core/error.h"
#include "slender/core/integrator.h"
#include "slender/core/parallel_for.h"
#include "slender/core/pcg.h"
#include "slender/engine/assemble.h"
#include "slender/engine/memory_tally.h"
#include "slender/engine/simulator_engine.h"
#include "slender/engine/strains.h"
#include "slender/engine/user_force.h"
#include "slender/info.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/user_energy.h"

namespace slender {

bool linear_solver_from_name(const std::string& name, LinearSolverKind& kind) {
  static const std::pair<const char*, LinearSolverKind> kinds[] = {
      {"auto", LinearSolverKind::kAuto},
      {"cholmod", LinearSolverKind::kCholmod},
      {"eigen-ldlt", LinearSolverKind::kEigenLdlt},
      {"sparse-lu", LinearSolverKind::kSparseLu},
      {"pcg", LinearSolverKind::kPcg},
      {"banded", LinearSolverKind::kBanded},
      {"dense", LinearSolverKind::kDense},
      {"amg", LinearSolverKind::kAmg},
      {"pcg-mixed", LinearSolverKind::kPcgMixed},
      {"matrix-free", LinearSolverKind::kMatrixFree}};
  for (const auto& [n, k] : kinds)
    if (name == n) {
      kind = k;
      return true;
    }
  return false;
}

const char* linear_solver_names() {
  return "auto, cholmod, eigen-ldlt, sparse-lu, pcg, banded, dense, amg, pcg-mixed, matrix-free";
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
  State state;   // the host copy of the engine's state, refreshed when a query needs it
  ModelView mv;  // the model's arrays (host)
  PhaseTimes times;

  // the engine (engine/simulator_engine_on.h) on the host executor (CPU backend) or on the CUDA
  // one; it holds the state and runs the step
  std::unique_ptr<SimulatorEngine> engine;
  bool on_cuda = false;
  bool host_stale = false;
  bool loads_dirty = false;  // external forces changed since the engine last saw them
  long plan_version = 0, engine_plan_version = 0;  // plans built / known to the engine

  // the plan in use: the model's, or that of another set of held DOFs (a new object for each)
  std::shared_ptr<const AssemblyPlan> plan_now;
  // the held DOFs: the state's (State::dof_fixed); the set the plan was built for (empty: the
  // model's)
  std::vector<unsigned char> plan_fixed;
  bool fixed_dirty = false;  // the state's set is not the plan's (it follows at the next step)
  const unsigned char* fixed_now() const { return state_fixed(*model, state); }

  // the step's inputs, computed on the host
  std::vector<Real> f_time;
  std::vector<Real> part_scale;  // each part's Young's modulus scale at the step's t_eval
  // the caller's factor of each part's modulus (set_part_youngs_scale); empty: all 1. Once set,
  // every step sends the parts' scales (so that clearing it reaches the engine)
  std::vector<Real> part_factor;
  bool part_factor_used = false;
  // each part's Young's modulus scale at time t: its time function times the caller's factor
  std::vector<Real> part_scales_at(Real t) const {
    std::vector<Real> ps = model->youngs_time_part.empty()
                               ? std::vector<Real>(size_t(model->npart), 1)
                               : part_youngs_scales(*model, t);
    for (size_t i = 0; i < part_factor.size(); ++i)
      ps[i] *= part_factor[i];
    return ps;
  }
  bool parts_scaled() const { return !model->youngs_time_part.empty() || part_factor_used; }
  // the natural shape at the evaluation time: rest values with actuation applied
  std::vector<Real> nat_kappa_bar, nat_tau_bar, nat_phi_bar, nat_mid_kappa, nat_stretch;
  std::vector<Real> stretch_action;  // the caller's natural stretch (nedge), or empty
  bool stretch_action_used = false;  // set once: every later step sends the natural shape
  std::vector<int> series_row;       // each actuation's series position at the evaluation time
  std::vector<Real> series_w;
  ActuationCallback actuation_callback;
  // the feedback controllers (the scene's, or set_controllers'), or null; a step's commands
  // are pending from their compute to the step's end; the strains they read
  std::unique_ptr<StrainController> ctrl;
  bool ctrl_pending = false;
  std::vector<Real> ctrl_bend, ctrl_stretch, ctrl_hinge;
  bool natural_touched = false;  // a callback ran since the natural values were the rest values
  UserForce force;               // the caller's force (the engine has its own copy)
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

  Impl(std::shared_ptr<const Model> m,
       const IntegratorSpec& s,
       LinearSolverKind kind,
       BackendKind backend)
      : model(std::move(m)), spec(s), state(initial_state(*model)), mv(host_view(*model)) {
    const Model& md = *model;
    on_cuda = backend == BackendKind::kCuda;
    engine = on_cuda ? make_simulator_engine_on_cuda(model, spec, kind)
                     : make_host_simulator_engine(model, spec, kind);
    // the host's loops cost nothing to time phase by phase
    if (!on_cuda) engine->set_phase_timing(true);
    env_mass = md.dof_mass;
    plan_now = std::shared_ptr<const AssemblyPlan>(model, &md.plan);
    f_time.resize(md.ndof);
    nat_kappa_bar = md.bend_kappa_bar;
    nat_tau_bar = md.bend_tau_bar;
    nat_phi_bar = md.hinge_phi_bar;
    nat_mid_kappa.assign(3 * size_t(md.nmid), 0);
    nat_stretch.assign(size_t(md.nedge), 1);
  }

  // the host copy of the state, current
  void sync_host() {
    if (host_stale) engine->download_state(state);
    host_stale = false;
  }

  // the caller's values of the families' signals (set_load_value) and where they apply
  // (kMaxSignals each), or empty
  std::vector<Real> signal_value;
  std::vector<unsigned char> signal_set;
  const Real* signal_values() const { return signal_value.empty() ? nullptr : signal_value.data(); }
  const unsigned char* signal_set_ptr() const {
    return signal_set.empty() ? nullptr : signal_set.data();
  }

  // whether the natural shape may differ from the model's (actuation, the caller's stretch,
  // a callback): then each step computes it and sends it with its inputs
  bool natural_driven() const {
    return !model->actuated.empty() || actuation_callback || stretch_action_used || ctrl;
  }

  // the strains the controllers read, by the engine's queries at the current state
  StrainReadings ctrl_readings() {
    StrainReadings y;
    auto query = [&](StrainKind kind, std::vector<Real>& out) -> const Real* {
      if (!ctrl->reads(kind)) return nullptr;
      out.resize(size_t(strain_count(mv, kind) * strain_width(kind)));
      if (!out.empty()) engine->strains(kind, out.data());
      return out.data();
    };
    y.bend_twist = query(StrainKind::kBendTwist, ctrl_bend);
    y.stretch = query(StrainKind::kStretch, ctrl_stretch);
    y.hinge = query(StrainKind::kHingeAngle, ctrl_hinge);
    return y;
  }

  // the natural shape at time t: the rest values plus every actuation's contribution (they
  // add up where several drive one spring), the caller's natural stretch, then the callback
  void apply_actuation(Real t) {
    const Model& m = *model;
    // a callback or an action may have changed any natural value: start from the rest values,
    // so that what it set does not outlive it (a cleared action, a removed callback)
    if (natural_touched) {
      nat_kappa_bar = m.bend_kappa_bar;
      nat_tau_bar = m.bend_tau_bar;
      nat_phi_bar = m.hinge_phi_bar;
      std::fill(nat_mid_kappa.begin(), nat_mid_kappa.end(), Real(0));
      std::fill(nat_stretch.begin(), nat_stretch.end(), Real(1));
      natural_touched = false;
    }
    // the natural arrays as the actuation, the controllers and the actuation callback see them
    NaturalShape shape{nat_kappa_bar.data(),
                       nat_tau_bar.data(),
                       nat_phi_bar.data(),
                       m.nbend,
                       m.nhinge,
                       nat_mid_kappa.data(),
                       m.nmid,
                       nat_stretch.data(),
                       m.nedge};
    apply_scene_actuation(m, t, shape, series_row, series_w);
    if (!stretch_action.empty()) {
      std::copy(stretch_action.begin(), stretch_action.end(), nat_stretch.begin());
      natural_touched = true;
    }
    // the controllers' commands on their springs: a step's pending ones, else those in effect
    if (ctrl) {
      ctrl->apply(0, shape, ctrl_pending);
      natural_touched = true;
    }
    if (actuation_callback) {
      actuation_callback(t, shape);
      natural_touched = true;
      for (int e = 0; e < m.nedge; ++e)
        if (!(nat_stretch[size_t(e)] > 0 && std::isfinite(nat_stretch[size_t(e)])))
          throw Error("natural stretch set by the actuation callback at t = " + std::to_string(t) +
                      " s: rod edge " + std::to_string(e) + " has " +
                      std::to_string(nat_stretch[size_t(e)]) +
                      "; a natural stretch must be finite and positive");
      // what the callback set: finite, and no turn of the rod beyond kMaxNaturalTurn
      const Real kmax = max_natural_kappa_bar();
      for (int b = 0; b < m.nbend; ++b) {
        const Real k1 = nat_kappa_bar[2 * b], k2 = nat_kappa_bar[2 * b + 1];
        if (!(std::hypot(k1, k2) <= kmax))
          throw Error("natural curvature set by the actuation callback at t = " +
                      std::to_string(t) + " s: stencil " + std::to_string(b) + " has (" +
                      std::to_string(k1) + ", " + std::to_string(k2) +
                      "); a stencil's natural curvature must be finite with a norm of at most " +
                      std::to_string(kmax) + " (a turn of 0.9 pi at the node)");
      }
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

  // f_time: the point loads at the step's evaluation time
  void point_loads(const StepCoeffs& c) {
    std::fill(f_time.begin(), f_time.end(), 0);
    for (size_t i = 0; i < external_forces.size(); ++i)
      f_time[i] = external_forces[i];
    add_point_loads(*model, c.t_eval, c.load_factor, f_time.data());
  }

  // the contact pairs of a step of size dt from the state and their part of the Jacobian, found
  // and built by the engine on its state and executor
  void update_contacts(Real dt) {
    if (!model->contact.enabled) return;
    const auto t0 = Clock::now();
    engine->find_contacts(dt);  // (the host state stays as stale as it was)
    times.contacts += seconds_since(t0);
  }

  // what the engine needs for a step of size dt from the state: the plan of a new set of held
  // DOFs, the integrator's coefficients, the natural shape, the loads, the prescribed motion
  StepInputs inputs(Real dt) {
    const Model& m = *model;
    StepInputs in;
    if (fixed_dirty) {
      fixed_dirty = false;
      plan_fixed = state.dof_fixed;
      plan_now = assembly_plan_for(model, fixed_now());
      ++plan_version;
    }
    // the pairs on the engine's plan; a new plan's free rows take them over
    update_contacts(dt);
    if (plan_version != engine_plan_version) {
      in.plan_changed = true;
      in.plan = plan_now;
    }
    in.dt = dt;
    in.c = step_coeffs(spec, state.time, dt);
    inputs_at(in);
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
    return in;
  }

  // the state's held DOFs changed: the engine takes them now and stops `stop` (their velocity
  // and acceleration 0, here too where the host copy is current); the plans follow at the next
  // step when the set is not theirs
  void fixed_changed(const std::vector<int>& stop) {
    engine->set_fixed(fixed_now(), stop);
    if (!host_stale)
      for (int d : stop)
        state.u[size_t(d)] = state.a[size_t(d)] = 0;
    fixed_dirty = state.dof_fixed != plan_fixed;
  }

  // fixes or releases DOFs now (set_dofs_fixed's checks, before anything changes)
  void change_fixed(const std::vector<int>& dofs, bool fix) {
    const Model& m = *model;
    std::vector<unsigned char> f(fixed_now(), fixed_now() + m.ndof);
    std::vector<int> stop;
    set_dofs_fixed(m, dofs, fix, f.data(), &stop);
    set_state_fixed(m, f.data(), state);
    fixed_changed(stop);
  }

  // the scene's boundary events due before a step of size dt from the state
  void apply_events(Real dt) {
    const Model& m = *model;
    const int done = state.events_done;
    if (done >= int(m.event_time.size()) || m.event_time[size_t(done)] > state.time + 1e-6 * dt)
      return;
    std::vector<unsigned char> f(fixed_now(), fixed_now() + m.ndof);
    std::vector<int> stop;
    apply_boundary_events(m, state.time, dt, state.events_done, f.data(), &stop);
    set_state_fixed(m, f.data(), state);
    fixed_changed(stop);
  }

  // one step: the host prepares what is cheap here (actuation, point loads, the assembly plan
  // when the contact pairs the engine found or the held DOFs changed) and the engine runs the
  // Newton step
  StepReport step(Real dt) {
    SLENDER_CHECK(dt > 0 && std::isfinite(dt), "time step must be positive, got ", dt);
    apply_events(dt);
    // the controllers' commands for this step, from the strains at its start; kept only when
    // the step converges
    if (ctrl) {
      ctrl->compute(0, state.time, dt, ctrl_readings());
      ctrl_pending = true;
    }
    StepWarnings warn;
    StepReport rep;
    try {
      const StepInputs in = inputs(dt);
      rep = engine->step(in, times, warn);
    } catch (...) {
      ctrl_pending = false;
      throw;
    }
    if (ctrl && rep.ok()) ctrl->commit(0);
    ctrl_pending = false;
    engine_plan_version = plan_version;
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

  // the twist angles (velocity: their velocities) of every rod edge become v (nedge) now
  void set_twists(const std::vector<Real>& v, bool velocity) {
    const Model& m = *model;
    const char* what = velocity ? "twist velocities" : "twist angles";
    SLENDER_CHECK(v.size() == size_t(m.nedge), what, " need ", m.nedge,
                  " values (one per rod edge), got ", v.size());
    for (size_t k = 0; k < v.size(); ++k)
      SLENDER_CHECK(std::isfinite(v[k]), what, ": the value of edge ", k, " is not finite (", v[k],
                    ")");
    sync_host();
    std::copy(v.begin(), v.end(), (velocity ? state.u : state.q).begin() + 3 * m.nnode);
    engine->upload_state(state);
  }

  // the inputs at in.c.t_eval that a step and a query share: the natural shape under actuation
  // (where it may differ from the model's), the parts' scales, the caller's signal values
  void inputs_at(StepInputs& in) {
    const Real t = in.c.t_eval;
    if (natural_driven()) {
      apply_actuation(t);
      in.natural_changed = true;
      in.bend_kappa_bar = nat_kappa_bar.data();
      in.bend_tau_bar = nat_tau_bar.data();
      in.hinge_phi_bar = nat_phi_bar.data();
      in.mid_kappa_bar = nat_mid_kappa.data();
      in.edge_stretch_bar = nat_stretch.data();
    }
    if (parts_scaled()) {
      part_scale = part_scales_at(t);
      in.part_scale_changed = true;
      in.part_scale = part_scale.data();
    }
    in.signal_value = signal_values();
    in.signal_set = signal_set_ptr();
  }

  // the inputs of a query of the state at its time: the natural shape, the parts' scales and
  // the signals there; with `loads`, the point loads (whole, without a static run's load
  // factor) and the caller's external forces
  StepInputs query_inputs(bool loads) {
    const Real t = state.time;
    StepInputs in;
    in.dt = spec.dt;
    in.c.t_eval = t;
    in.c.load_factor = load_factor_at(spec, t);
    inputs_at(in);
    if (loads) {
      StepCoeffs whole;  // (the loads whole: no static run's factor)
      whole.t_eval = t;
      point_loads(whole);
      in.loads_changed = true;
      in.f_time = f_time.data();
      loads_dirty = true;  // the engine's loads come with the next step again
    }
    return in;
  }

  // M a0 = F(q0, u0) - grad E(q0) on the free DOFs: Newmark's consistent initial acceleration,
  // by the engine (engine_queries.h); the host copy takes it
  void newmark_start() {
    engine->newmark_start(query_inputs(true));
    engine->download_state(state);
  }
};

Simulator::Simulator(std::shared_ptr<const Model> model)
    : Simulator(model, model->scene.integrator, LinearSolverKind::kAuto, model->scene.backend) {}

Simulator::Simulator(std::shared_ptr<const Model> model,
                     const IntegratorSpec& integrator,
                     LinearSolverKind solver,
                     BackendKind backend) {
  SLENDER_CHECK(model != nullptr, "Simulator needs a model");
  host_threads();  // a bad SLENDER_THREADS is reported here, not at the first large loop
  // a model whose simulator would not fit is refused before anything is allocated (issue 49);
  // on the CPU, where the estimate is of the host's arrays. The estimate (a symbolic
  // factorization) is made only for a model of a MiB or more where the memory available is
  // under 16 times the model's (a simulator takes 3 to 6 times its model's memory: a rod network,
  // a grid of rods), so that small models and the batches' simulators pay nothing for it
  const Model& m = *model;
  const double model_bytes = double(m.memory_bytes());
  // (the memory available read only for such a model: a batch's small simulators pay nothing)
  const bool sized = backend == BackendKind::kCpu && model_bytes >= double(1 << 20);
  const double available = sized ? double(available_memory_bytes()) : 0;
  if (sized && available < 16 * model_bytes + double(256 << 20)) {
    // without a Jacobian in memory (--solver matrix-free), where the model allows it
    const bool free_ok = !matrix_free_refusal(m) && solver != LinearSolverKind::kMatrixFree;
    const double need = memory_estimate(m, integrator, solver);
    const double need_free =
        free_ok ? memory_estimate(m, integrator, LinearSolverKind::kMatrixFree) : 0;
    if (solver == LinearSolverKind::kAuto && free_ok && need > available &&
        need_free <= available) {
      // auto: a model whose assembled Jacobian would not fit takes the matrix-free solver
      // (the solver's name says so: linear_solver_name, slender run's first line)
      solver = LinearSolverKind::kMatrixFree;
    } else {
      require_memory("model",
                     "a simulator of '" + m.scene.name + "' (" + std::to_string(m.ndof) +
                         " DOFs, " + std::to_string(m.plan.nnz()) + " Jacobian nonzeros)",
                     need,
                     "its state, Jacobian, factorization and workspaces; the model itself holds " +
                         format_bytes(model_bytes),
                     [&](double) {
                       return free_ok && need_free < need
                                  ? "the matrix-free solver (--solver matrix-free) would need " +
                                        format_bytes(need_free)
                                  : std::string();
                     });
    }
  }
  impl_ = std::make_unique<Impl>(std::move(model), integrator, solver, backend);
  if (!m.scene.controllers.empty())
    impl_->ctrl = std::make_unique<StrainController>(impl_->model, m.scene.controllers);
  impl_->engine->upload_state(impl_->state);
  if (impl_->spec.kind == IntegratorKind::kNewmark) impl_->newmark_start();
}

Simulator::~Simulator() = default;

double Simulator::memory_estimate(const Model& m,
                                  const IntegratorSpec& spec,
                                  LinearSolverKind solver) {
  // one environment: everything the tally counts is this Simulator's
  MemoryTally exec, host;
  tally_engine_memory(m, 1, spec, solver, /*batched=*/false, /*device=*/false, exec, host);
  const AssemblyPlan& p = m.plan;
  const double nd = m.ndof, n = p.nfree;
  // the system solve (engine/system_solve.h): on the host the direct path (X::kPcgAutoThreshold
  // is never reached), whose solver holds the values, unless the caller asks for the Krylov one:
  // its values, preconditioner blocks and vectors (BiCGSTAB's seven; kAmg's multigrid hierarchy
  // is not counted); the Krylov workspace's reductions either way
  const bool symmetric = !engine_nonsymmetric(m, spec) && solver != LinearSolverKind::kSparseLu;
  const bool iterative = linear_solver_iterative(solver);
  if (iterative) {
    long nblock = p.nfree > 0 ? 1 : 0;
    for (int r = 1; r < p.nfree; ++r)
      nblock += p.free_dof[r] / 3 != p.free_dof[r - 1] / 3 ? 1 : 0;
    host.once<int>(nblock + 1.0);
    host.once<int>(n);  // each row's block (the fused CG's)
    if (solver == LinearSolverKind::kMatrixFree) {
      host.once<Real>(n);  // a block column's entries (no values, no column runs)
    } else {
      host.once<Real>(double(p.nnz()));
      const double runs = double(ColumnRuns::count(p.row_ptr, p.col));  // (core/pcg.h)
      host.once<int>(n + 1 + runs);
      host.once<unsigned char>(runs);
    }
    host.once<Real>(9.0 * nblock);
    host.once<unsigned char>(double(nblock));
    if (solver == LinearSolverKind::kPcgMixed) {  // the single-precision copies
      host.once<float>(double(p.nnz()));
      host.once<float>(9.0 * nblock);
    }
    for (int k = 0; k < 7; ++k)
      host.once<Real>(n);
  } else {
    host.shared +=
        cpu::LinearSolver::memory_bytes(p, cpu::direct_solver_kind(solver, symmetric), symmetric);
    host.blocks += 4;
  }
  host.once<Red4>(double(stepper::KrylovOn<HostExecutor>::workspace_reductions()));
  // the objects: this one, its Impl, the stepper with its engine
  host.once<char>(sizeof(Simulator));
  host.once<char>(sizeof(Impl));
  host.once<char>(double(host_stepper_object_bytes()));
  // the host's copy of the state (q, u, a, frames, twists, mid-edge frames, held DOFs)
  host.shared += double(state_bytes_per_env(m));
  host.blocks += 7;
  host.once<unsigned char>(nd);
  // DOF masses, loads, the query's predictor; the natural shape under actuation; part scales
  // and factors; forces, fixed targets, motions; the queries' pools; the plans' held DOFs
  for (int k = 0; k < 4; ++k)
    host.once<Real>(nd);
  for (double c : {2.0 * m.nbend, double(m.nbend), double(m.nhinge), 3.0 * m.nmid, double(m.nedge)})
    host.once<Real>(c);
  if (m.npart > 0) {
    host.once<Real>(m.npart);
    host.once<Real>(m.npart);
  }
  host.once<Real>(3.0 * m.nnode);
  host.once<Real>(double(m.fixed_dof.size()));
  host.once<Real>(double(m.motion_dof.size()));
  host.once<Real>(double(p.energy_pool));
  host.once<unsigned>(double(p.energy_pool));
  host.once<Real>(double(p.grad_pool));
  host.once<unsigned char>(nd);
  // contact between bodies on the direct path, from the first pair that adds an entry: the
  // static and contact parts merged into one matrix on the executor (each entry's column,
  // static slot and contact entry; each row's count, pointer and diagonal entry), at least the
  // static pattern's size, and its pattern on the host (kept, and the download compared with
  // it; engine/contact_jacobian.h). The contact part's own arrays grow with the pairs, as on
  // the Krylov path.
  if (m.contact.enabled && !iterative) {
    for (int k = 0; k < 3; ++k) {
      exec.once<int>(double(p.nnz()));
      exec.once<int>(n + 1);
    }
    for (int k = 0; k < 2; ++k) {
      host.once<int>(double(p.nnz()));
      host.once<int>(n + 1);
    }
  }
  return exec.total(1) + host.total(1);
}

StepReport Simulator::step() { return impl_->step(impl_->spec.dt); }
StepReport Simulator::step(Real dt) { return impl_->step(dt); }
const Model& Simulator::model() const { return *impl_->model; }
const State& Simulator::state() const {
  impl_->sync_host();
  return impl_->state;
}
Real Simulator::time() const { return impl_->state.time; }
const IntegratorSpec& Simulator::integrator() const { return impl_->spec; }
std::string Simulator::linear_solver_name() const { return impl_->engine->solver_name(); }
bool Simulator::inexact_newton() const { return impl_->engine->inexact_newton(); }
BackendKind Simulator::backend() const {
  return impl_->on_cuda ? BackendKind::kCuda : BackendKind::kCpu;
}
void Simulator::set_phase_timing(bool on) {
  if (impl_->on_cuda) impl_->engine->set_phase_timing(on);
}
const PhaseTimes& Simulator::phase_times() const { return impl_->times; }
void Simulator::set_actuation(ActuationCallback callback) {
  impl_->actuation_callback = std::move(callback);
}
StrainController* Simulator::controller() { return impl_->ctrl.get(); }
const StrainController* Simulator::controller() const { return impl_->ctrl.get(); }
void Simulator::set_controllers(std::vector<ControllerSpec> specs) {
  Impl& s = *impl_;
  std::unique_ptr<StrainController> c;
  if (!specs.empty()) c = std::make_unique<StrainController>(s.model, std::move(specs));
  s.ctrl = std::move(c);
  s.natural_touched = true;  // the next step starts from the rest shape
}
void Simulator::set_natural_stretch(std::vector<Real> stretch) {
  Impl& s = *impl_;
  const Model& m = *s.model;
  SLENDER_CHECK(stretch.empty() || stretch.size() == size_t(m.nedge), "natural stretch needs ",
                m.nedge, " values (one per rod edge), got ", stretch.size());
  for (size_t e = 0; e < stretch.size(); ++e)
    SLENDER_CHECK(std::isfinite(stretch[e]) && stretch[e] > 0, "natural stretch of rod edge ", e,
                  " must be finite and positive, got ", stretch[e]);
  s.stretch_action_used = s.stretch_action_used || !stretch.empty();
  s.stretch_action = std::move(stretch);
  s.natural_touched = true;  // the next step starts from the rest shape
}
void Simulator::set_force_callback(ForceCallback callback, bool symmetric) {
  Impl& s = *impl_;
  s.engine->set_force_callback(callback, symmetric);  // first: CUDA refuses one
  s.force.fn = std::move(callback);
}
void Simulator::set_external_forces(std::vector<Real> forces) {
  const Model& m = *impl_->model;
  SLENDER_CHECK(forces.empty() || forces.size() == 3 * size_t(m.nnode), "external forces need ",
                3 * m.nnode, " values (nnode x 3), got ", forces.size());
  for (size_t i = 0; i < forces.size(); ++i)
    if (!std::isfinite(forces[i]))
      throw Error("external force on node " + std::to_string(i / 3) + ", component " +
                  std::to_string(i % 3) + " is " + std::to_string(forces[i]) +
                  ": forces must be finite");
  impl_->external_forces = std::move(forces);
  impl_->loads_dirty = true;
}
void Simulator::set_part_youngs_scale(std::vector<Real> scale) {
  const Model& m = *impl_->model;
  SLENDER_CHECK(scale.empty() || scale.size() == size_t(m.npart), "part modulus factors need ",
                m.npart, " values (one per part), got ", scale.size());
  for (size_t i = 0; i < scale.size(); ++i)
    SLENDER_CHECK(std::isfinite(scale[i]) && scale[i] > 0, "part ", i,
                  "'s modulus factor must be finite and positive, got ", scale[i]);
  impl_->part_factor_used = impl_->part_factor_used || !scale.empty();
  impl_->part_factor = std::move(scale);
}
void Simulator::set_load_value(const std::string& field, int entry, Real value) {
  Impl& s = *impl_;
  const int k = load_signal(*s.model, field, entry);
  SLENDER_CHECK(std::isfinite(value), "the load value of forces.", field, "[", entry,
                "] must be finite, got ", value);
  if (s.signal_value.empty()) {
    s.signal_value.assign(kMaxSignals, 0);
    s.signal_set.assign(kMaxSignals, 0);
  }
  s.signal_value[size_t(k)] = value;
  s.signal_set[size_t(k)] = 1;
}
void Simulator::clear_load_values() {
  impl_->signal_value.clear();
  impl_->signal_set.clear();
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
  // the engine checks the values (Engine::set_params, the batch's check too) and may refuse:
  // first, so that nothing here has changed when it does
  s.engine->set_params(p);
  s.params = p;
  for (int i = 0; i < m.ndof; ++i) {
    const Real ma = m.has_added_mass() && i < 3 * m.nnode ? m.node_added_mass[size_t(i / 3)] : 0;
    s.env_mass[i] = scaled_inertial_mass(p.density_scale, m.dof_mass[i], ma);
  }
  s.mv.ground.mu = p.ground_friction >= 0 ? p.ground_friction : m.ground.friction;
  s.mv.mass_scale = p.density_scale;  // the contact dashpots' masses
}

void Simulator::residual(Real dt,
                         const std::vector<Real>& y,
                         std::vector<Real>& f,
                         std::vector<Real>* jacobian) const {
  Impl& s = *impl_;
  SLENDER_CHECK(int(y.size()) == s.model->ndof, "configuration has ", y.size(), " DOFs, not ",
                s.model->ndof);
  SLENDER_CHECK(dt > 0 && std::isfinite(dt), "time step must be positive, got ", dt);
  const StepInputs in = s.inputs(dt);
  s.engine->residual(in, y.data(), f, jacobian);
  s.engine_plan_version = s.plan_version;
}

void Simulator::set_state(const State& s) {
  Impl& si = *impl_;
  const Model& m = *si.model;
  SLENDER_CHECK(s.nenv == 1 && state_fits(m, s), "state does not match the model's sizes");
  check_state_finite(s, "state");
  si.state = s;
  set_state_fixed(m, state_fixed(m, s), si.state);  // (0 or 1, empty for the model's set)
  si.host_stale = false;
  si.engine->upload_state(s);
  si.fixed_changed({});
}

void Simulator::fix_dofs(const std::vector<int>& dofs) { impl_->change_fixed(dofs, true); }
void Simulator::release_dofs(const std::vector<int>& dofs) { impl_->change_fixed(dofs, false); }

namespace {
// the DOFs of the given nodes' positions
std::vector<int> node_dofs(const Model& m, const std::vector<int>& nodes) {
  std::vector<int> dofs;
  for (int n : nodes) {
    SLENDER_CHECK(n >= 0 && n < m.nnode, "node ", n, " out of range [0, ", m.nnode, ")");
    for (int c = 0; c < 3; ++c)
      dofs.push_back(3 * n + c);
  }
  return dofs;
}
}  // namespace

void Simulator::fix_nodes(const std::vector<int>& nodes) {
  fix_dofs(node_dofs(*impl_->model, nodes));
}
void Simulator::release_nodes(const std::vector<int>& nodes) {
  release_dofs(node_dofs(*impl_->model, nodes));
}
std::vector<unsigned char> Simulator::dof_fixed() const {
  const unsigned char* f = impl_->fixed_now();
  return std::vector<unsigned char>(f, f + impl_->model->ndof);
}

void Simulator::set_twist_angles(const std::vector<Real>& theta) {
  impl_->set_twists(theta, false);
}
void Simulator::set_twist_velocities(const std::vector<Real>& omega) {
  impl_->set_twists(omega, true);
}

std::vector<Real> Simulator::strains(StrainKind kind) const {
  Impl& s = *impl_;
  const long n = strain_count(s.mv, kind) * strain_width(kind);
  std::vector<Real> out(static_cast<size_t>(n));
  if (n > 0) s.engine->strains(kind, out.data());
  return out;
}

std::vector<Real> Simulator::reactions() const {
  Impl& s = *impl_;
  // the state's pairs, found now
  s.update_contacts(s.spec.dt);
  std::vector<Real> g(size_t(s.model->ndof));
  s.engine->reactions(s.query_inputs(true), g.data());
  return g;
}

Energies Simulator::energies() const {
  Impl& s = *impl_;
  return s.engine->energies(s.query_inputs(false));
}

std::vector<Real> Simulator::shell_bending_energy_density() const {
  Impl& s = *impl_;
  std::vector<Real> out(size_t(s.model->ntri), 0);
  if (!out.empty()) s.engine->shell_bending_energy_density(s.query_inputs(false), out.data());
  return out;
}

std::vector<Real> Simulator::bend_strains() const { return strains(StrainKind::kBendTwist); }

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
