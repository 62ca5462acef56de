#pragma once

// What a step reports, the wall time of its phases, the per-environment physical parameters and
// the linear solver kinds: the types the Newton engines and the public API share. Part of the
// bottom layer: includes nothing of Slender but core/small.h.

#include <string>

#include "slender/core/small.h"

namespace slender {

enum class StepStatus {
  kConverged,          ///< residual or step below tolerance
  kMaxIters,           ///< no convergence within NewtonSpec::max_iters
  kLineSearchFailed,   ///< no step length reduced the residual
  kNonFinite,          ///< a residual or state value became NaN/Inf
  kLinearSolveFailed,  ///< the Jacobian could not be factorized, even by sparse LU
};
/// (inline: every library layer names a status, the CUDA module's adjoint too)
inline const char* to_string(StepStatus s) {
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

struct StepReport {
  StepStatus status = StepStatus::kConverged;
  int iterations = 0;  ///< Newton iterations taken
  Real residual = 0;   ///< final free-DOF residual norm
  Real residual0 = 0;  ///< first iteration's residual norm
  Real dt = 0;         ///< the step size used [s]
  bool ok() const { return status == StepStatus::kConverged; }
};

/// Wall time per phase, accumulated over steps [s].
struct PhaseTimes {
  Real frames = 0, eval = 0, assemble = 0, factor = 0, solve = 0, line_search = 0;
  Real contacts = 0;  ///< contact candidates: broad phase, sub-pairs, assembly plan (host)
  long newton_iters = 0, steps = 0, factorizations = 0;
  long linear_iters = 0;     ///< iterations of an iterative linear solver (PCG, BiCGSTAB)
  long krylov_restarts = 0;  ///< BiCGSTAB restarts after a breakdown (the device stepper)
};

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
/// DOF the iterative path, every other kind cuSOLVER's direct one; on the CPU backend kAuto is
/// always direct).
/// kAuto: banded LU when the Jacobian orders into a narrow band (rods), else CHOLMOD (or
/// Eigen's LDLT) for symmetric and sparse LU for non-symmetric Jacobians.
/// kPcg: block-Jacobi conjugate gradients (the direct path when CG cannot converge); a
/// non-symmetric Jacobian takes BiCGSTAB (the engine's iterative path, on both backends).
/// kDense: the vectorized batch's dense Cholesky / pivoting LU (BatchedSimulator); a Simulator
/// (and so the per-environment batch) takes it as its sparse direct factorization, CHOLMOD or
/// LDLT for symmetric and sparse LU for non-symmetric Jacobians: the same exact solve without
/// n^2 memory.
/// kAmg: kPcg's Krylov solves preconditioned by a smoothed-aggregation multigrid V-cycle
/// (engine/amg.h) instead of block Jacobi: iterations that stay nearly flat as a shell's mesh is
/// refined, where block Jacobi's grow like the square root of the unknowns. A Simulator's only
/// (the vectorized batch refuses it).
/// kPcgMixed: kPcg with the matrix and the preconditioner's blocks kept in single precision
/// (the vectors, the residual and the updates in double; the same tolerance): fewer bytes a
/// matrix product, for memory-bound Krylov solves (issue 48). A Simulator's only.
/// kMatrixFree: kPcg's Krylov solves (block-Jacobi CG, BiCGSTAB where the Jacobian is not
/// symmetric) without a Jacobian in memory: each product J x evaluates every stencil's local
/// Hessian again and multiplies it by x there (engine/matrix_free.h), so that neither the
/// local-Hessian pool nor the CSR values exist. For models too large for the memory an
/// assembled Jacobian takes (a rod network of 10^6 nodes within twice its model's memory),
/// at the cost of a stencil evaluation for each Krylov iteration. A Simulator's only, with no
/// direct fallback; it refuses what adds to the matrix besides the stencils (Rayleigh and
/// Kelvin-Voigt damping, energies and force callbacks from the caller's code).
enum class LinearSolverKind {
  kAuto,
  kCholmod,
  kEigenLdlt,
  kSparseLu,
  kPcg,
  kBanded,
  kDense,
  kAmg,
  kPcgMixed,
  kMatrixFree
};
/// whether the kind solves by Krylov iterations (kPcg, kAmg, kPcgMixed, kMatrixFree)
inline bool linear_solver_iterative(LinearSolverKind k) {
  return k == LinearSolverKind::kPcg || k == LinearSolverKind::kAmg ||
         k == LinearSolverKind::kPcgMixed || k == LinearSolverKind::kMatrixFree;
}
/// The kind a name gives ("auto", "cholmod", "eigen-ldlt", "sparse-lu", "pcg", "banded",
/// "dense", "amg", "pcg-mixed", "matrix-free"), as the command line, the benchmarks and the Python
/// module spell it; false for any other name.
bool linear_solver_from_name(const std::string& name, LinearSolverKind& kind);
/// The names linear_solver_from_name accepts, comma-separated (for error messages).
const char* linear_solver_names();

/// The energies of a state [J] by kind (Simulator::energies, the engine's query in
/// engine/engine_queries.h). The potential of gravity is -sum m g.x. Stretch: the rods' edges
/// and the shells' membrane springs; bend: the rods' bending and the shells' (hinge, mid-edge).
struct Energies {
  Real kinetic = 0, stretch = 0, bend = 0, twist = 0, gravity = 0;
  Real user = 0;  ///< the energies from the caller's code (with_energies)
  /// the potentials of the loads (the families whose kTraits.energy is EnergyKind::kLoad: a
  /// pressure's -p V)
  Real load = 0;
  Real total() const { return kinetic + stretch + bend + twist + gravity + user + load; }
};

/// The strains a simulator reports of its current state, each per element of its kind:
/// kStretch the axial strain l / l_bar - 1 of every rod edge [-] (nedge); kBendTwist the
/// material curvatures kappa1, kappa2 [-] (discrete: 2 tan(phi / 2) of the turning angle phi)
/// and the twist tau [rad] of every bend-twist stencil in its own orientation (nbend x 3);
/// kHingeAngle the signed dihedral angle of every hinge [rad] (nhinge); kShapeOperator the
/// mid-edge shape operator Lambda of every mid-edge triangle, a symmetric world-frame 3 x 3
/// tensor [1/m], row-major (nmid x 3 x 3).
enum class StrainKind { kStretch, kBendTwist, kHingeAngle, kShapeOperator };

}  // namespace slender
