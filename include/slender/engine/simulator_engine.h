#pragma once

// The seam between the front ends (Simulator) and the engine: the engine (engine/engine.h with one
// environment, engine/simulator_engine_on.h, over an executor) owns the state and runs the whole
// Newton step; the front end hands it, per step, what it computes cheaply on the host (the
// integrator's coefficients, the natural shape under actuation, point loads, the assembly plan of
// a new set of held DOFs) and asks for the state only when a recorder does. The contact pairs and
// their part of the Jacobian are the engine's, on its executor (engine/contact_pipeline.h,
// engine/contact_jacobian.h); the front end never sees them. Two executors: the host one
// (host/backend/host_engine.cpp: the CPU backend) and the CUDA one (kernels/cuda_engine.cu, in the
// CUDA module, which backend/cuda_loader.cpp loads on first use). (Until 2026-11-29 this seam was
// the DeviceStepper, after the CUDA stepper it was first written for; it is the CPU backend's too.)

#include <memory>
#include <string>
#include <vector>

#include "slender/core/force.h"
#include "slender/core/integrator.h"
#include "slender/core/status.h"
#include "slender/model.h"
#include "slender/state.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// What the host hands the device for one step (host pointers, valid during the call).
struct StepInputs {
  Real dt = 0;
  StepCoeffs c;
  // the natural shape at the evaluation time, uploaded when `natural_changed` (actuation)
  bool natural_changed = false;
  const Real* bend_kappa_bar = nullptr;    // (nbend x 2)
  const Real* bend_tau_bar = nullptr;      // (nbend)
  const Real* hinge_phi_bar = nullptr;     // (nhinge)
  const Real* mid_kappa_bar = nullptr;     // (nmid x 3), the mid-edge actuation
  const Real* edge_stretch_bar = nullptr;  // (nedge), the rod edges' natural stretch
  // every part's Young's modulus scale at the evaluation time (npart), uploaded when
  // `part_scale_changed` (parts whose modulus follows a time function, or the caller's factors
  // of Simulator::set_part_youngs_scale)
  bool part_scale_changed = false;
  const Real* part_scale = nullptr;
  // point loads at the evaluation time, uploaded when `loads_changed`
  bool loads_changed = false;
  const Real* f_time = nullptr;  // (ndof)
  // the caller's values of the families' signals (Simulator::set_load_value): kMaxSignals
  // values, and where they replace the signals' time functions (null: nowhere)
  const Real* signal_value = nullptr;
  const unsigned char* signal_set = nullptr;
  // prescribed motion at the step's end (null: none), uploaded every step: one value per fixed
  // DOF (Model::fixed_dof) when `target_fixed`, else per DOF the scene's motions move
  // (Model::motion_dof)
  const Real* target = nullptr;
  bool target_fixed = false;
  // after a change of the held DOFs (set_fixed), the assembly plan of the new set, uploaded and
  // analysed when `plan_changed` (an executor whose memory the host reads keeps it, shared, and
  // reads it in place: the owner builds a new plan rather than change this one); the contact
  // pairs' part is the stepper's own
  bool plan_changed = false;
  std::shared_ptr<const AssemblyPlan> plan;
};

/// Warning counts of one step (added to the State's counters by the host).
struct StepWarnings {
  long degenerate = 0, linear_fallback = 0, line_search = 0;
};

class SimulatorEngine {
 public:
  virtual ~SimulatorEngine() = default;
  /// one Newton step; on failure the device state is unchanged
  virtual StepReport step(const StepInputs& in, PhaseTimes& times, StepWarnings& warn) = 0;
  /// the free-DOF residual of a step with these inputs from the current state, at the
  /// configuration y (ndof, host memory), into f (nfree); with `jacobian`, also its Jacobian,
  /// dense and row-major (nfree x nfree). The state is unchanged.
  virtual void residual(const StepInputs& in,
                        const Real* y,
                        std::vector<Real>& f,
                        std::vector<Real>* jacobian) = 0;
  /// the caller's state-dependent force (core/force.h), evaluated with every residual; an empty
  /// function removes it. symmetric = false: its Jacobian may be non-symmetric (LU from then on).
  /// Executors whose memory the host cannot read (CUDA) refuse a callback with slender::Error.
  virtual void set_force_callback(ForceCallback fn, bool symmetric) = 0;
  /// the contact sub-pairs of a step of size dt from the executor's state
  /// (contact::ContactPipeline), and the contact part of the Jacobian for them, both on the
  /// executor (the pairs never reach the host)
  virtual void find_contacts(Real dt) = 0;
  /// this simulator's physical parameters (Simulator::set_params: mass and stiffness scales,
  /// gravity, damping, ground friction; ground friction makes the Jacobian non-symmetric)
  virtual void set_params(const EnvParams& p) = 0;
  /// the device state becomes s (every array of State, one env); the owner calls it once before
  /// the first step (the Simulator, with its initial state)
  virtual void upload_state(const State& s) = 0;
  /// the held DOFs from the next step on (ndof, host, 0 or 1; null: the model's set), and the
  /// DOFs whose velocity and acceleration become 0 now (those a fix newly holds); the plan of
  /// the new set comes with the next step's inputs (StepInputs::plan)
  virtual void set_fixed(const unsigned char* fixed, const std::vector<int>& stop) = 0;
  /// the strains of one kind (core/status.h's StrainKind) of the device state into out (host;
  /// count x width values, engine/strains.h)
  virtual void strains(StrainKind kind, Real* out) = 0;
  /// The queries of the device state with the inputs of its time (engine/engine_queries.h:
  /// the natural shape, part scales, signals; the loads where `loads_changed`): its energies
  /// by kind; its support reactions (ndof, host); every triangle's shell bending energy per
  /// rest area (ntri, host); Newmark's consistent initial acceleration into the state's a
  virtual Energies energies(const StepInputs& in) = 0;
  virtual void reactions(const StepInputs& in, Real* out) = 0;
  virtual void shell_bending_energy_density(const StepInputs& in, Real* out) = 0;
  virtual void newmark_start(const StepInputs& in) = 0;
  /// the host copy: q, u, a, frames, reference twists, mid-edge frame vectors of `s` are
  /// overwritten (time, step and counters are the host's)
  virtual void download_state(State& s) = 0;
  /// name of the linear solver ("cuda-banded-lu", "cusolver-chol", "cusolver-qr", "cuda-pcg",
  /// "cuda-bicgstab")
  virtual std::string solver_name() const = 0;
  /// whether the steps take inexact Newton (NewtonSpec::inexact with an iterative solve)
  virtual bool inexact_newton() const = 0;
  /// synchronize the device at phase boundaries so that PhaseTimes splits frames, evaluation
  /// and assembly (off: they are counted together under eval)
  virtual void set_phase_timing(bool on) = 0;
};

/// The CUDA stepper (throws slender::Error with the reason when it cannot run here).
std::unique_ptr<SimulatorEngine> make_cuda_simulator_engine(std::shared_ptr<const Model> model,
                                                            const IntegratorSpec& spec,
                                                            LinearSolverKind solver);

/// The CPU backend: the same stepper code (engine/simulator_engine_on.h) on the host executor, with
/// the CPU's linear solvers (host/backend/host_engine.cpp); `solver` chooses among them as
/// LinearSolverKind says.
std::unique_ptr<SimulatorEngine> make_host_simulator_engine(std::shared_ptr<const Model> model,
                                                            const IntegratorSpec& spec,
                                                            LinearSolverKind solver);
/// the bytes of the host stepper object itself, its arrays apart (Simulator::memory_estimate)
size_t host_stepper_object_bytes();

using SimulatorEngineMaker = std::unique_ptr<SimulatorEngine> (*)(std::shared_ptr<const Model>,
                                                                  const IntegratorSpec&,
                                                                  LinearSolverKind);
/// What a Simulator with BackendKind::kCuda runs: make_cuda_simulator_engine, unless a test put
/// another maker (make_host_simulator_engine) in its place. Returns the previous maker; nullptr
/// restores make_cuda_simulator_engine.
SimulatorEngineMaker set_simulator_engine_maker(SimulatorEngineMaker maker);
std::unique_ptr<SimulatorEngine> make_simulator_engine_on_cuda(std::shared_ptr<const Model> model,
                                                               const IntegratorSpec& spec,
                                                               LinearSolverKind solver);

}  // namespace slender
