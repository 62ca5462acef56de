#pragma once

// Simulator: advances a State of a Model in time with an implicit integrator and Newton's
// method (residual on free DOFs, backtracking line search). A step that fails leaves the state
// exactly as it was and says why in its StepReport.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slender/core/force.h"
#include "slender/core/status.h"
#include "slender/model.h"
#include "slender/state.h"

namespace slender {

class StrainController;

/// Called with the evaluation time t [s] (t + dt/2 for the midpoint rule) before every step.
using ActuationCallback = std::function<void(Real t, NaturalShape& shape)>;

class Simulator {
 public:
  /// integrator settings and backend from model->scene
  explicit Simulator(std::shared_ptr<const Model> model);
  /// backend kCuda runs the Newton step on the GPU (the state stays there between steps); it
  /// throws slender::Error when this build has no CUDA or no device is visible
  Simulator(std::shared_ptr<const Model> model,
            const IntegratorSpec& integrator,
            LinearSolverKind solver = LinearSolverKind::kAuto,
            BackendKind backend = BackendKind::kCpu);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  /// the bytes a Simulator of `model` on the CPU backend holds once it steps, estimated
  /// without building it (engine/memory_tally.h): its engine's arrays, its linear solver's
  /// (the band, or the sparse factor's fill from a symbolic factorization) and its own. A model
  /// with contact between bodies holds the pairs it finds besides, which no estimate knows.
  static double memory_estimate(const Model& model,
                                const IntegratorSpec& integrator,
                                LinearSolverKind solver = LinearSolverKind::kAuto);

  /// one step of the integrator's dt
  StepReport step();
  /// one step of size dt
  StepReport step(Real dt);

  /// actuation in code: runs after the scene's own actuation (and the controllers), before
  /// each step
  void set_actuation(ActuationCallback callback);
  /// the feedback controllers on natural strains (control.h, docs/control.md): the scene's
  /// "controllers", or those of set_controllers; null when there are none. Before each step
  /// they read the strains at its start (strains()) and set the natural strains of their
  /// springs for the step, over the scene's actuation and set_natural_stretch; a step that
  /// fails leaves them as they were. set_state leaves them as they are (controller()->reset).
  StrainController* controller();
  const StrainController* controller() const;
  /// replaces the controllers (empty: none); throws InputError as StrainController's
  /// constructor does (a spring no controller takes, sizes, a spring driven twice)
  void set_controllers(std::vector<ControllerSpec> specs);
  /// the natural stretch of every rod edge (nedge, finite and > 0; 1 = the rest length): each
  /// edge's natural length becomes its rest length times the value, from the next step on
  /// until changed, in place of the scene's stretch actuation (an actuation callback runs
  /// after it); empty = back to the scene's. Throws slender::Error on a wrong size or value.
  void set_natural_stretch(std::vector<Real> stretch);
  /// external forces on the nodes (nnode x 3) [N], applied from the next step on until changed;
  /// empty = none. Throws slender::Error on a wrong size.
  void set_external_forces(std::vector<Real> forces);
  /// a state-dependent external force and its Jacobian (ForceEval), added to the scene's loads
  /// from the next step on; null removes it. symmetric = true declares dF/dq + c_u dF/du
  /// symmetric (a spring), so that the symmetric factorizations stay; otherwise the solve takes
  /// LU. The line search then measures the residual (the force has no potential). CPU backend
  /// only: the CUDA backend throws slender::Error.
  void set_force_callback(ForceCallback callback, bool symmetric = false);
  /// prescribed motion of the fixed DOFs by the caller: their values at the end of each
  /// following step, one per fixed DOF in Model::fixed_dof order (node i's coordinate c is DOF
  /// 3 i + c, edge j's twist DOF 3 nnode + j); over a step a DOF moves at (target - q) / dt.
  /// They replace the scene's motions and hold until changed; empty = back to the scene's
  /// motions (or, without any, fixed DOFs stay where they are). Throws slender::Error on a
  /// wrong size or a value that is not finite.
  void set_fixed_targets(std::vector<Real> values);
  /// fixes DOFs now (node i's coordinate c is DOF 3 i + c, edge j's twist 3 nnode + j, a shell
  /// edge's mid-edge xi after the twists): each holds where it is from here on, its velocity
  /// and acceleration set to 0, unless a prescribed motion moves it (one of the model's fixed
  /// DOFs, by the scene's motions or set_fixed_targets). Fixing a held DOF changes nothing. The
  /// Jacobian's pattern and ordering follow from the next step on. Throws slender::Error for a
  /// DOF out of range (and then nothing changes).
  void fix_dofs(const std::vector<int>& dofs);
  /// releases DOFs now: each moves freely from here on, starting with the velocity it has (a
  /// held DOF's is 0, a moved one's that of its motion over the last step: a gripper that lets
  /// go leaves the body moving as it moved), so that no impulse acts at the release. Releasing
  /// a free DOF changes nothing. Throws slender::Error for a DOF out of range or one that stays
  /// fixed (Model::dof_locked: a clamp at a node, two_d).
  void release_dofs(const std::vector<int>& dofs);
  /// fix_dofs / release_dofs of the three coordinates of each node (global node indices)
  void fix_nodes(const std::vector<int>& nodes);
  void release_nodes(const std::vector<int>& nodes);
  /// the DOFs held now (ndof, 1 = fixed): the model's, as the scene's boundary events and the
  /// calls above changed them (State::dof_fixed)
  std::vector<unsigned char> dof_fixed() const;
  /// the twist angles theta of every rod edge [rad] (nedge) become `theta` now (the rest of the
  /// state stays; a held twist is held at its new angle). Throws slender::Error on a wrong size
  /// or a value that is not finite.
  void set_twist_angles(const std::vector<Real>& theta);
  /// the twist velocities omega = d theta / dt of every rod edge [rad/s] (nedge), as above
  void set_twist_velocities(const std::vector<Real>& omega);
  /// each part's Young's modulus times a factor (npart, > 0 and finite), from the next step on
  /// until changed: every stiffness of the part's elastic stencils, on top of the part's modulus
  /// in time and set_params' youngs_scale (Kelvin-Voigt viscosity and Rayleigh beta K stay as
  /// they are); empty = all 1. Throws slender::Error on a wrong size or value.
  void set_part_youngs_scale(std::vector<Real> scale);
  /// the load of entry `entry` (0-based, in the scene's order) of the family scene field
  /// forces.<field> takes `value` in place of its signal (its time function times its
  /// amplitude) from the next step on, until changed: a pressure chamber's pressure p [Pa] (in
  /// place of pressure s(t)); a wrench's, a pressure's or a follower pressure's factor s of its
  /// force and moment or pressure (in place of s(t)). In static mode the load factor
  /// multiplies it as it does the time function. Throws slender::Error for a field or entry
  /// without a load signal (load_signal, model.h) or a value that is not finite.
  void set_load_value(const std::string& field, int entry, Real value);
  /// every load back to its time function
  void clear_load_values();
  /// physical parameters of this simulator (CPU backend; the CUDA backend throws)
  void set_params(const EnvParams& p);
  const EnvParams& params() const;

  const Model& model() const;
  /// the state (on the engine's side between steps: downloaded on the first call after a step)
  const State& state() const;
  /// the state's time [s] (kept on the host: no download)
  Real time() const;
  void set_state(const State& s);
  const IntegratorSpec& integrator() const;
  /// name of the linear solver in use ("cholmod", "eigen-ldlt", "sparse-lu", "pcg"; on the
  /// CUDA backend "cuda-banded-lu", "cusolver-chol" or "cuda-pcg")
  std::string linear_solver_name() const;
  /// whether the steps take inexact Newton: the integrator's newton.inexact, where the linear
  /// solve is iterative (a direct solver is exact, and the setting does nothing there)
  bool inexact_newton() const;
  /// the backend the steps run on
  BackendKind backend() const;
  /// CUDA backend: synchronize the device between phases so that phase_times() splits frames,
  /// stencil evaluation and assembly (off by default: they are counted together under eval,
  /// and the steps run without the extra synchronizations). The CPU backend always splits them.
  void set_phase_timing(bool on);

  Energies energies() const;
  /// material curvatures and twist (kappa1, kappa2, tau) of every bend stencil (nbend x 3)
  std::vector<Real> bend_strains() const;
  /// the strains of one kind at the current state (core/status.h's StrainKind: count x width
  /// values), evaluated by the engine where the state lives
  std::vector<Real> strains(StrainKind kind) const;
  /// shell bending energy per rest area of every triangle at the current state [J/m^2] (ntri):
  /// a mid-edge triangle's own energy, or half of each adjacent hinge's
  std::vector<Real> shell_bending_energy_density() const;
  /// material director m1 of every edge at the current state (nedge x 3)
  std::vector<Real> material_frames() const;
  /// Forces the supports exert at the current state: for every fixed DOF, grad E - F of the
  /// static problem (elastic forces against gravity, buoyancy, point loads at the current time,
  /// the external forces of set_external_forces and the force callback's); zero at free DOFs
  /// (ndof). With the free DOFs in equilibrium, their sum balances
  /// the applied loads.
  std::vector<Real> reactions() const;

  /// wall time per phase, accumulated over all steps
  const PhaseTimes& phase_times() const;

  /// For tests and debugging: the Newton residual f (nfree) of a step of size dt at the
  /// configuration y (ndof), frames transported from the current state, and optionally the
  /// dense Jacobian (nfree x nfree, row-major). The state is not changed.
  void residual(Real dt,
                const std::vector<Real>& y,
                std::vector<Real>& f,
                std::vector<Real>* jacobian) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slender
