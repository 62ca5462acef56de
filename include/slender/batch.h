#pragma once

// Batched environments: B simulations of one shared Model, each with its own state, actions and
// physical parameters, stepped together (in parallel on all CPU cores). Each environment runs
// its own Newton iteration: converged environments stop iterating, and an environment whose
// step fails is flagged and keeps its state from before the step (rolled back) while the others
// go on. Actions and observations are flat env-major arrays, so that bindings (numpy, DLPack)
// hand them over without a per-environment loop on the caller's side.

#include <memory>
#include <string>
#include <vector>

#include "slender/model.h"
#include "slender/simulator.h"

namespace slender {

class StrainController;

/// How a batch steps its environments.
enum class BatchEngine {
  /// one Simulator per environment, environments in parallel on the CPU cores: every model,
  /// every solver, per-environment parameters
  kPerEnvironment,
  /// one Newton iteration over all environments at once (masked: each converges on its own),
  /// every environment's Jacobian solved by one batched call per iteration: banded LU (rods:
  /// half-bandwidth <= 24 in reverse Cuthill-McKee order), dense Cholesky or pivoting LU (up to
  /// 1024 free DOFs: shells, rod-shell structures) or block-Jacobi PCG (larger symmetric
  /// systems), chosen automatically or by the solver argument (auto, banded, dense, pcg).
  /// Rods, shells and rod-shell models without contact between bodies and not static; the
  /// scene's actuation at each environment's own time (not together with feedback
  /// controllers); every EnvParams field per environment. The CUDA backend always uses it.
  kVectorized,
};

/// The memory a batch needs, estimated before anything is allocated
/// (BatchedSimulator::memory_estimate) [bytes].
struct BatchMemory {
  double host_per_env = 0;    ///< host memory per environment
  double host_fixed = 0;      ///< host memory once: shared arrays, the allocator's blocks
  double device_per_env = 0;  ///< device memory per environment (the CUDA backend; else 0)
  double device_fixed = 0;    ///< device memory once: the model's copy, shared arrays
  double host(double nenv) const { return host_fixed + nenv * host_per_env; }
  double device(double nenv) const { return device_fixed + nenv * device_per_env; }
};

class BatchedSimulator {
 public:
  /// nenv environments of `model`, all at its initial state, with the scene's integrator.
  /// `solver`: for the per-environment engine, each Simulator's; for the vectorized engine kAuto
  /// (banded, else dense, else pcg), kBanded, kDense or kPcg (other kinds throw). The batch's
  /// memory is estimated first (memory_estimate): a batch that would not fit in the memory
  /// available (host/runtime/memory_budget.h: MemAvailable, the cgroup's limit, RLIMIT_AS, or
  /// SLENDER_MEMORY_LIMIT; on the CUDA backend also the device's free memory) is refused with a
  /// MemoryLimitError naming nenv, the estimate, the memory available and the most environments
  /// that fit, before anything is allocated.
  BatchedSimulator(std::shared_ptr<const Model> model, int nenv);
  BatchedSimulator(std::shared_ptr<const Model> model,
                   int nenv,
                   const IntegratorSpec& integrator,
                   LinearSolverKind solver = LinearSolverKind::kAuto,
                   BatchEngine engine = BatchEngine::kPerEnvironment,
                   BackendKind backend = BackendKind::kCpu);
  ~BatchedSimulator();

  /// the memory a batch of these arguments needs, estimated from the sizes of the arrays its
  /// engine allocates (engine/memory_tally.h), without allocating them: per environment its
  /// state and workspace (the vectorized engine's pools and batched band, dense or PCG storage;
  /// the per-environment engine's Simulator with its Jacobian, factorization and host arrays),
  /// and once what the environments share. It counts what the batch allocates as it is used
  /// (parameters, actions, observations) too. Throws as the constructor does for a model or
  /// solver the engine cannot take.
  static BatchMemory memory_estimate(const Model& model,
                                     int nenv,
                                     const IntegratorSpec& integrator,
                                     LinearSolverKind solver = LinearSolverKind::kAuto,
                                     BatchEngine engine = BatchEngine::kPerEnvironment,
                                     BackendKind backend = BackendKind::kCpu);
  /// throws MemoryLimitError when nenv environments of `need` do not fit in the memory
  /// available: the message names `field` (the caller's name for the count: "nenv", or
  /// Python's "num_envs"), the estimate, the memory available and the most environments that
  /// fit. The constructor calls it; a front end that adds memory of its own per environment
  /// (the Python module's observation buffers) calls it first with that added.
  static void require_memory(const BatchMemory& need,
                             long nenv,
                             BatchEngine engine,
                             BackendKind backend,
                             const std::string& field = "nenv");
  BatchedSimulator(const BatchedSimulator&) = delete;
  BatchedSimulator& operator=(const BatchedSimulator&) = delete;

  int nenv() const;
  const Model& model() const;
  /// the integrator the environments step with
  const IntegratorSpec& integrator() const;
  BatchEngine engine() const;
  BackendKind backend() const;
  /// the linear solver in use: the vectorized engine's batched solver ("banded-lu",
  /// "banded-lu-lanes" on the GPU when a warp factorizes each environment's band,
  /// "dense-cholesky", "dense-lu", "dense-cholesky+lu" when environments differ, "pcg"), or
  /// environment 0's Simulator's (Simulator::linear_solver_name)
  std::string solver_name() const;

  // ---- actions: they hold from the next step on until changed or cleared ----------------------
  /// where an action array lives: in host memory, or in the engine's own memory, that is the
  /// CUDA device the batch runs on (a torch or CuPy array's device pointer: copied on the
  /// device, no trip through the host) or, on the CPU backend, host memory again. kEngine on
  /// the CUDA backend needs the vectorized engine
  enum class ArrayPlace { kHost, kEngine };
  /// natural curvatures kappa1, kappa2 of every bend-twist stencil (nenv x nbend x 2): they
  /// replace the scene's natural shape and actuation
  void set_natural_curvature(const Real* kappa, ArrayPlace where = ArrayPlace::kHost);
  /// natural twists (nenv x nbend) [rad]
  void set_natural_twist(const Real* tau, ArrayPlace where = ArrayPlace::kHost);
  /// natural hinge angles (nenv x nhinge) [rad]
  void set_natural_hinge_angle(const Real* phi, ArrayPlace where = ArrayPlace::kHost);
  /// actuated natural curvature of the mid-edge triangles (nenv x nmid x 3), the components
  /// along each triangle's edge normals [1/m] (midedge_curvature_components gives them for a
  /// curvature tensor; 0 is the rest shape)
  void set_natural_midedge_curvature(const Real* c, ArrayPlace where = ArrayPlace::kHost);
  /// natural stretch of every rod edge (nenv x nedge) [-], each finite and positive: an edge's
  /// natural length becomes its rest length (Model::edge_l_bar) times the value (1: the rest
  /// shape; 0.9: a muscle-like contraction by 10 %)
  void set_natural_stretch(const Real* s, ArrayPlace where = ArrayPlace::kHost);
  /// external forces on the nodes (nenv x nnode x 3) [N]
  void set_external_forces(const Real* f);
  /// prescribed motion of the fixed DOFs (nenv x nfixed, Model::fixed_dof order): each
  /// environment's values at the end of each following step (Simulator::set_fixed_targets);
  /// they replace the scene's motions
  void set_fixed_targets(const Real* values);
  /// each part's Young's modulus times a factor per environment (nenv x npart, finite, > 0):
  /// every stiffness of the part's elastic stencils (Simulator::set_part_youngs_scale), so that
  /// a policy can stiffen or soften a limb. Both engines (the vectorized one with the
  /// per-environment engine's bits)
  void set_part_youngs_scale(const Real* scale);
  /// each environment's value of the load of entry `entry` of the family scene field
  /// forces.<field> (values: nenv, finite), in place of its signal from the next step on
  /// (Simulator::set_load_value: a pressure chamber's pressure [Pa], a wrench's or a shell
  /// pressure's factor). Both engines (the vectorized one with the per-environment one's bits)
  void set_load_values(const std::string& field, int entry, const Real* values);
  /// back to the scene's natural shape, actuation, loads (and their time functions), motions
  /// and part moduli
  void clear_actions();

  // ---- feedback controllers on natural strains (control.h, docs/control.md) -------------------
  /// the controllers of every environment (each its own state, gains and references): the
  /// scene's "controllers", or those of set_controllers; null when there are none. Before each
  /// step they read every environment's strains (strains()) and set the natural strains of
  /// their springs, over the scene's actuation and the natural-shape actions above (which then
  /// must come from host memory on the vectorized engine); an environment whose step fails
  /// keeps its controllers' state; reset() resets the reset environments' controllers.
  StrainController* controller();
  const StrainController* controller() const;
  /// replaces the controllers (empty: none); throws InputError as StrainController's
  /// constructor does
  void set_controllers(std::vector<ControllerSpec> specs);

  // ---- boundary conditions and twists of one environment, now ---------------------------------
  /// fixes (release: frees) DOFs of environment env now, as Simulator::fix_dofs and
  /// release_dofs do (a fixed DOF stops and holds where it is, a released one keeps its
  /// velocity); the scene's boundary events act on each environment at its own time. The
  /// vectorized engine steps environments that hold different DOFs with one pattern: that of
  /// every DOF some environment leaves free, each environment's held DOFs in it taking the
  /// identity's rows and columns (its solution there is 0); throws slender::Error as
  /// Simulator::release_dofs
  void fix_dofs(int env, const std::vector<int>& dofs);
  void release_dofs(int env, const std::vector<int>& dofs);
  /// environment env's held DOFs (ndof, 1 = fixed)
  std::vector<unsigned char> dof_fixed(int env) const;
  /// the twist angles [rad] (velocities: [rad/s]) of every environment's rod edges
  /// (nenv x nedge) become the given values now
  void set_twist_angles(const Real* theta);
  void set_twist_velocities(const Real* omega);

  /// physical parameters of one environment (randomization)
  void set_params(int env, const EnvParams& p);
  const EnvParams& params(int env) const;

  /// environments with mask[env] != 0 go back to the model's initial state (mask of nenv; empty
  /// = all); the vectorized engine uploads the state once and copies it on its executor
  void reset(const std::vector<unsigned char>& mask = {});
  /// ... or all to one given state (e.g. another environment's, state(k))
  void reset(const std::vector<unsigned char>& mask, const State& state);
  /// ... or to a given state of one environment
  void set_state(int env, const State& s);
  const State& state(int env) const;

  /// one step of every environment; returns each one's status (kConverged, or why it failed:
  /// then its state is the one from before the step)
  const std::vector<StepStatus>& step();
  /// the last step's reports (nenv)
  const std::vector<StepReport>& reports() const;

  // ---- observations ---------------------------------------------------------------------------
  void positions(Real* out) const;   ///< node positions (nenv x nnode x 3) [m]
  void velocities(Real* out) const;  ///< node velocities (nenv x nnode x 3) [m/s]
  void curvatures(Real* out) const;  ///< kappa1, kappa2, tau per bend stencil (nenv x nbend x 3)
  /// the strains of one kind of every environment (nenv x count x width, Simulator::strains)
  void strains(StrainKind kind, Real* out) const;
  /// every environment's energies by kind at its state and its own time (nenv; as
  /// Simulator::energies: its actuation, part scales and parameters, the actions in effect),
  /// evaluated where the states live (the vectorized engines: one evaluation of every
  /// environment on the executor)
  std::vector<Energies> energies() const;
  void twist_angles(Real* out) const;      ///< theta of every rod edge (nenv x nedge) [rad]
  void twist_velocities(Real* out) const;  ///< omega of every rod edge (nenv x nedge) [rad/s]
  /// 1 where a node is within the ground's contact distance (nenv x nnode); 0 without a ground
  void ground_contacts(unsigned char* out) const;
  /// simulated time of each environment [s] (nenv)
  void times(Real* out) const;
  /// phase times and Newton iterations: the per-environment engine's summed over the
  /// environments (CPU seconds, not wall); the vectorized engine's wall times of its batched
  /// phases (eval with the line search's evaluations, solve, line search)
  PhaseTimes phase_times() const;

  /// Zero-copy access to the live state of the vectorized engine: node i's coordinate c of
  /// environment e is data[e * env_stride + 3 i + c] (device memory when cuda); data is null
  /// for the per-environment engine. Valid until the batch is destroyed; the values change
  /// with every step.
  struct LiveArray {
    const Real* data = nullptr;
    bool cuda = false;
    long env_stride = 0;
  };
  LiveArray live_positions() const;
  LiveArray live_velocities() const;

 private:
  const std::vector<StepStatus>& step_environments();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slender
