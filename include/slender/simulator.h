#pragma once

// Simulator: advances a State of a Model in time with an implicit integrator and Newton's
// method (residual on free DOFs, backtracking line search). A step that fails leaves the state
// exactly as it was and says why in its StepReport.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slender/model.h"
#include "slender/state.h"

namespace slender {

enum class StepStatus {
  kConverged,          ///< residual or step below tolerance
  kMaxIters,           ///< no convergence within NewtonSpec::max_iters
  kLineSearchFailed,   ///< no step length reduced the residual
  kNonFinite,          ///< a residual or state value became NaN/Inf
  kLinearSolveFailed,  ///< the Jacobian could not be factorized, even by sparse LU
};
const char* to_string(StepStatus s);

struct StepReport {
  StepStatus status = StepStatus::kConverged;
  int iterations = 0;  ///< Newton iterations taken
  Real residual = 0;   ///< final free-DOF residual norm
  Real residual0 = 0;  ///< first iteration's residual norm
  Real dt = 0;         ///< the step size used [s]
  bool ok() const { return status == StepStatus::kConverged; }
};

/// Energies of one state [J]. Potential of gravity is -sum m g.x.
struct Energies {
  Real kinetic = 0, stretch = 0, bend = 0, twist = 0, gravity = 0;
  Real total() const { return kinetic + stretch + bend + twist + gravity; }
};

/// Wall time per phase, accumulated over steps [s].
struct PhaseTimes {
  Real frames = 0, eval = 0, assemble = 0, factor = 0, solve = 0, line_search = 0;
  Real contacts = 0;  ///< contact candidates: broad phase, sub-pairs, assembly plan (host)
  long newton_iters = 0, steps = 0, factorizations = 0;
  long linear_iters = 0;     ///< iterations of an iterative linear solver (the batch's PCG)
  long krylov_restarts = 0;  ///< BiCGSTAB restarts after a breakdown (the device stepper)
};

/// The natural shape the stencils see at an evaluation time: the model's rest values with the
/// scene's actuation applied; an actuation callback may change it further (views into the
/// simulator, valid during the call).
struct NaturalShape {
  Real* bend_kappa_bar;  ///< discrete natural curvatures kappa1, kappa2 [-] (nbend x 2)
  Real* bend_tau_bar;    ///< natural twists [rad]                          (nbend)
  Real* hinge_phi_bar;   ///< natural hinge angles [rad]                    (nhinge)
  int nbend, nhinge;
};
/// Called with the evaluation time t [s] (t + dt/2 for the midpoint rule) before every step.
using ActuationCallback = std::function<void(Real t, NaturalShape& shape)>;

/// Physical parameters that may differ between simulators (environments) of one model, for
/// randomization: each is a scale of, or a replacement for, the model's value.
struct EnvParams {
  Real youngs_scale = 1;      ///< multiplies every elastic stiffness (stretch, bend, twist, shells)
  Real density_scale = 1;     ///< multiplies every mass and rotational inertia
  Real ground_friction = -1;  ///< ground Coulomb coefficient; < 0: the model's
  bool override_gravity = false;
  Vec3 gravity = Vec3{{0, 0, 0}};  ///< [m/s^2], when override_gravity
  Real mass_damping = -1;          ///< alpha [1/s]; < 0: the model's
};

/// Which linear solver a Simulator uses (on the CUDA backend: kPcg and kAuto above 250,000 free
/// DOF the iterative path, every other kind cuSOLVER's direct one).
/// kAuto: banded LU when the Jacobian orders into a narrow band (rods), else CHOLMOD (or
/// Eigen's LDLT) for symmetric and sparse LU for non-symmetric Jacobians.
/// kPcg: block-Jacobi conjugate gradients (the direct path when CG cannot converge); a
/// non-symmetric Jacobian takes sparse LU on the CPU and BiCGSTAB on the CUDA backend.
/// kDense: the vectorized batch's dense Cholesky / pivoting LU (BatchedSimulator); a Simulator
/// (and so the per-environment batch) takes it as its sparse direct factorization, CHOLMOD or
/// LDLT for symmetric and sparse LU for non-symmetric Jacobians: the same exact solve without
/// n^2 memory.
enum class LinearSolverKind { kAuto, kCholmod, kEigenLdlt, kSparseLu, kPcg, kBanded, kDense };
/// The kind a name gives ("auto", "cholmod", "eigen-ldlt", "sparse-lu", "pcg", "banded",
/// "dense"), as the command line, the benchmarks and the Python module spell it; false for any
/// other name.
bool linear_solver_from_name(const std::string& name, LinearSolverKind& kind);
/// The names linear_solver_from_name accepts, comma-separated (for error messages).
const char* linear_solver_names();

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

  /// one step of the integrator's dt
  StepReport step();
  /// one step of size dt
  StepReport step(Real dt);

  /// actuation in code: runs after the scene's own actuation, before each step
  void set_actuation(ActuationCallback callback);
  /// external forces on the nodes (nnode x 3) [N], applied from the next step on until changed;
  /// empty = none. Throws slender::Error on a wrong size.
  void set_external_forces(std::vector<Real> forces);
  /// prescribed motion of the fixed DOFs by the caller: their values at the end of each
  /// following step, one per fixed DOF in Model::fixed_dof order (node i's coordinate c is DOF
  /// 3 i + c, edge j's twist DOF 3 nnode + j); over a step a DOF moves at (target - q) / dt.
  /// They replace the scene's motions and hold until changed; empty = back to the scene's
  /// motions (or, without any, fixed DOFs stay where they are). Throws slender::Error on a
  /// wrong size or a value that is not finite.
  void set_fixed_targets(std::vector<Real> values);
  /// physical parameters of this simulator (CPU backend; the CUDA backend throws)
  void set_params(const EnvParams& p);
  const EnvParams& params() const;

  const Model& model() const;
  const State& state() const;
  void set_state(const State& s);
  const IntegratorSpec& integrator() const;
  /// name of the linear solver in use ("cholmod", "eigen-ldlt", "sparse-lu", "pcg"; on the
  /// CUDA backend "cusolver-chol" or "cuda-pcg")
  std::string linear_solver_name() const;
  /// the backend the steps run on
  BackendKind backend() const;
  /// CUDA backend: synchronize the device between phases so that phase_times() splits frames,
  /// stencil evaluation and assembly (off by default: they are counted together under eval,
  /// and the steps run without the extra synchronizations). The CPU backend always splits them.
  void set_phase_timing(bool on);

  Energies energies() const;
  /// material curvatures and twist (kappa1, kappa2, tau) of every bend stencil (nbend x 3)
  std::vector<Real> bend_strains() const;
  /// shell bending energy per rest area of every triangle at the current state [J/m^2] (ntri):
  /// a mid-edge triangle's own energy, or half of each adjacent hinge's
  std::vector<Real> shell_bending_energy_density() const;
  /// material director m1 of every edge at the current state (nedge x 3)
  std::vector<Real> material_frames() const;
  /// Forces the supports exert at the current state: for every fixed DOF, grad E - F of the
  /// static problem (elastic forces against gravity, buoyancy and point loads at the current
  /// time); zero at free DOFs (ndof). With the free DOFs in equilibrium, their sum balances
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
