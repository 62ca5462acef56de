#pragma once

// Exact gradients through time (docs/gradients.md): the adjoint of a rollout of N implicit
// Euler, implicit midpoint or Newmark steps of one simulation on the CPU. A scalar loss L of
// the states (q_n, u_n), n = 0..N, is differentiated with respect to the actions of every step
// (natural curvatures and twists of the rods' bend-twist springs, natural angles of the shells'
// hinges, natural curvatures of the mid-edge shells' triangles, the rod edges' natural
// stretch, external forces on the nodes,
// the fixed DOFs' targets, the actuators' loads), the material parameters (Young's modulus
// scale of the model and of each part, density scale, mass damping, the Kelvin-Voigt
// retardation times' scale) and the initial state (its free DOFs; Newmark's accelerations
// too). Each converged step is linearized by the implicit-function theorem on its residual
// R(x_n+1; x_n, u_n, p) = 0 (engine/adjoint.h), one solve with the transpose of its exact
// Jacobian per step, backwards;
// checkpointing keeps every k-th state and recomputes the steps in between.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slender/core/status.h"
#include "slender/model.h"
#include "slender/state.h"

namespace slender {

/// The actions of a rollout of N steps, each array for every step (step-major; empty: none, or
/// the model's natural shape at every step).
struct RolloutActions {
  std::vector<Real> kappa_bar;  ///< natural curvatures kappa1, kappa2 [-] (N x nbend x 2)
  std::vector<Real> tau_bar;    ///< natural twists [rad]                  (N x nbend)
  std::vector<Real> phi_bar;    ///< shell hinges' natural angles [rad]    (N x nhinge)
  /// rod edges' natural stretch, each edge's natural length over its rest length [-]
  /// (N x nedge), as set_natural_stretch takes it
  std::vector<Real> stretch_bar;
  /// mid-edge shell triangles' natural curvature components [1/m] (N x nmid x 3), as
  /// set_natural_midedge_curvature takes them (stencils/shell_midedge.h: along t^k t^k / l_bar^k^2)
  std::vector<Real> midedge_kappa_bar;
  std::vector<Real> forces;  ///< external forces on the nodes [N]      (N x nnode x 3)
  /// every fixed DOF's value at the end of each step (N x nfixed, in the model's fixed_dof
  /// order: positions [m], twists [rad]), as Simulator::set_fixed_targets takes them: the
  /// scene's prescribed motions give way to them
  std::vector<Real> fixed_targets;
  /// the actuators' loads at every step, each in place of its time function as
  /// Simulator::set_load_value takes it: a pressure chamber's pressure [Pa], a tendon's tension
  /// [N], the factor of a wrench's, a pressure's or a follower pressure's value (N x nsignal, in
  /// the model's signal order: Model::signal_field, signal_entry)
  std::vector<Real> loads;
};

/// The parameters of a rollout, constant over it.
struct RolloutParams {
  std::vector<Real> part_youngs_scale;  ///< each part's factor (npart, > 0); empty: all 1
  Real youngs_scale = 1;                ///< every elastic stiffness's factor (> 0)
  Real density_scale = 1;               ///< every mass's factor (> 0)
  Real mass_damping = -1;               ///< alpha [1/s]; < 0: the model's
  /// every Kelvin-Voigt retardation time's factor (> 0; the viscosities eta scale with it)
  Real kelvin_voigt_scale = 1;
};

/// dL/d of everything the rollout differentiates (the layouts of RolloutActions and
/// RolloutParams; the actions' arrays have N steps even where the rollout took the model's).
struct RolloutGradient {
  std::vector<Real> q0, u0;  ///< the initial state's free DOFs (ndof; 0 at held DOFs)
  /// the initial state's accelerations (ndof; Newmark's predictor reads them; 0 for the other
  /// integrators and at held DOFs)
  std::vector<Real> a0;
  std::vector<Real> kappa_bar;          ///< (N x nbend x 2)
  std::vector<Real> tau_bar;            ///< (N x nbend)
  std::vector<Real> phi_bar;            ///< (N x nhinge)
  std::vector<Real> midedge_kappa_bar;  ///< (N x nmid x 3)
  std::vector<Real> stretch_bar;        ///< (N x nedge)
  std::vector<Real> forces;             ///< (N x nnode x 3; 0 at held DOFs)
  /// (N x nfixed; 0 where a fixed DOF is released in that step, and for a rollout without
  /// fixed_targets: the scene's motions are then inputs, not differentiated)
  std::vector<Real> fixed_targets;
  std::vector<Real> loads;              ///< (N x nsignal; a slack tendon's: 0)
  std::vector<Real> part_youngs_scale;  ///< (npart)
  Real youngs_scale = 0, density_scale = 0, mass_damping = 0;
  Real kelvin_voigt_scale = 0;  ///< 0 without Kelvin-Voigt damping
};

/// dL/dq_n and dL/du_n of the loss at state n (n = 0..N; q, u: the state's, ndof each): the
/// callee adds them into dq and du (ndof each, zero on entry). Called once per state, from
/// n = N down to 0.
using RolloutLossGradient =
    std::function<void(int n, const Real* q, const Real* u, Real* dq, Real* du)>;

struct RolloutOptions {
  /// keep every k-th state in the forward run and recompute the steps in between during the
  /// backward sweep (1: keep every state, no recomputation; 0: k = ceil(sqrt(N)))
  int checkpoint_every = 1;
  LinearSolverKind solver = LinearSolverKind::kAuto;
  /// kCuda: the rollout, its recomputed steps and each step's linearization on the GPU (the
  /// CUDA backend's engine), the backward sweep and its transposed solve on the host from copies
  /// of the step's arrays (engine/adjoint.h); the constructor throws slender::Error where this
  /// build has no CUDA or no device is visible. On the CPU's stand-in for device memory
  /// (tests/guarded_executor.h) the gradients are the CPU backend's bit for bit; not yet run on
  /// a GPU
  BackendKind backend = BackendKind::kCpu;
};

/// A rollout and its gradient. The model must be one the adjoint linearizes (the constructor
/// throws slender::Error naming what is not): implicit Euler, the midpoint rule or Newmark; no
/// energies from the caller's code of the rods' strains that read the natural strains and do
/// not give their derivative (UserEnergy::gives_natural_strain_grad) (the ground's dashpot,
/// contact between bodies with friction and the pairs' dashpot, Kelvin-Voigt damping of every
/// elastic family under every integrator, Rayleigh
/// stiffness damping (its start's Hessians' own derivative by differences: docs/gradients.md),
/// mid-edge shells and the caller's energies, of the DOFs' values or of the rods' strains, are
/// differentiated; with contact, options.solver must be a direct solver). Boundary events fix and
/// release DOFs as in a run (a held DOF's position carries its adjoint through the steps it is
/// held). The scene's actuation is an input in time, as the loads' time functions are; a natural
/// curvature or twist given as the rollout's action replaces the actuation of its kind, and their
/// gradients are those of the natural values in effect.
class RolloutAdjoint {
 public:
  RolloutAdjoint(std::shared_ptr<const Model> model,
                 const IntegratorSpec& integrator,
                 RolloutOptions options = {});
  ~RolloutAdjoint();
  RolloutAdjoint(const RolloutAdjoint&) = delete;
  RolloutAdjoint& operator=(const RolloutAdjoint&) = delete;

  /// N = steps steps of the integrator's dt from `initial` with these actions and parameters;
  /// keeps the checkpoints for gradient(). With q and u, every state's (N + 1) x ndof. Throws
  /// slender::Error on sizes that do not fit, or naming the step that failed to converge.
  State run(const State& initial,
            int steps,
            const RolloutActions& actions = {},
            const RolloutParams& params = {},
            std::vector<Real>* q = nullptr,
            std::vector<Real>* u = nullptr);
  /// dL of the last run's loss by the backward sweep
  RolloutGradient gradient(const RolloutLossGradient& loss);
  /// the same for a loss given as arrays dL/dq_n, dL/du_n ((N + 1) x ndof each; empty: 0)
  RolloutGradient gradient(const std::vector<Real>& dq, const std::vector<Real>& du);

  /// the bytes the last run keeps for the backward sweep (its checkpoints) and those the sweep
  /// holds besides (the states of one segment between checkpoints)
  double checkpoint_bytes() const;
  double segment_bytes() const;
  /// the number of steps run in the backward sweeps' recomputation (0 with checkpoint_every 1)
  long recomputed_steps() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The gradients of a batch of rollouts of one model, each environment with its own initial
/// state, actions and parameters: one RolloutAdjoint per environment (the per-environment
/// batch's way), the environments run and swept in parallel on the host's threads (each one's
/// own loops then on one thread). Each environment's results are bit for bit those of a
/// RolloutAdjoint given the same inputs.
class BatchRolloutAdjoint {
 public:
  BatchRolloutAdjoint(std::shared_ptr<const Model> model,
                      int nenv,
                      const IntegratorSpec& integrator,
                      RolloutOptions options = {});
  ~BatchRolloutAdjoint();
  BatchRolloutAdjoint(const BatchRolloutAdjoint&) = delete;
  BatchRolloutAdjoint& operator=(const BatchRolloutAdjoint&) = delete;
  int nenv() const;
  /// N = steps steps of every environment from initial[e] with actions[e] and params[e] (each
  /// list holds nenv entries, or one for every environment); every environment's final state.
  /// With q and u, every environment's states (nenv x (N + 1) x ndof). A failure (a step that
  /// does not converge, sizes that do not fit) throws slender::Error naming the environment.
  std::vector<State> run(const std::vector<State>& initial,
                         int steps,
                         const std::vector<RolloutActions>& actions,
                         const std::vector<RolloutParams>& params,
                         std::vector<Real>* q = nullptr,
                         std::vector<Real>* u = nullptr);
  /// every environment's gradient of the last run's loss given as arrays dL/dq_n, dL/du_n
  /// (nenv x (N + 1) x ndof each; empty: 0)
  std::vector<RolloutGradient> gradient(const std::vector<Real>& dq, const std::vector<Real>& du);

 private:
  std::shared_ptr<const Model> model_;
  std::vector<std::unique_ptr<RolloutAdjoint>> envs_;
  int steps_ = -1;
  bool serial_ = false;  // (the CUDA backend's: one environment after another)
};

/// `base` moved to the configuration q (ndof): its frames transported by parallel transport
/// (the directors, tangents, reference twists), its mid-edge frame vectors those of q (a clamped
/// edge's kept, as a step's end does), its velocities and time kept. This is the
/// perturbation of the initial state the gradient's q0 is the derivative for.
State transported_state(const Model& model, const State& base, const std::vector<Real>& q);

}  // namespace slender
