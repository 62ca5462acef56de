#pragma once

// The plain settings every layer above shares: where an input value came from (for error
// messages), the integrator and its Newton settings, and the backend. Part of the bottom layer:
// includes nothing of Slender but core/small.h.

#include <string>

#include "slender/core/small.h"

namespace slender {

/// Where a scene value came from, for error messages.
struct SourceLoc {
  std::string file;   ///< scene or geometry file ("" when built in code)
  int line = 0;       ///< 1-based, 0 when unknown
  std::string field;  ///< JSON path such as "rods[1].material"
};

enum class IntegratorKind { kImplicitEuler, kImplicitMidpoint, kNewmark, kStatic };

struct NewtonSpec {
  int max_iters = 25;       ///< iterations before a step is declared failed
  Real abs_tol = 1e-8;      ///< on the free-DOF residual norm, scaled per DOF kind [N]
  Real rel_tol = 1e-10;     ///< relative to the first iteration's residual norm
  Real step_tol = 1e-12;    ///< on the Newton step's max-norm [m or rad]
  bool line_search = true;  ///< backtracking on the residual norm
  /// with an iterative linear solver (pcg, pcg-mixed, amg; BiCGSTAB where the Jacobian is not
  /// symmetric), each Newton direction solved only as accurately as the iteration can use
  /// (newton_forcing, core/newton.h) instead of to kKrylovRelTol; the direct solvers are exact
  bool inexact = false;
};

struct IntegratorSpec {
  IntegratorKind kind = IntegratorKind::kImplicitEuler;
  Real dt = 1e-2;         ///< time step [s]; in static mode the load-step size
  Real duration = 1;      ///< simulated time [s]
  Real beta = 0.25;       ///< Newmark beta
  Real gamma = 0.5;       ///< Newmark gamma
  bool adaptive = false;  ///< halve dt when a step fails (down to min_dt), regrow after
  Real min_dt = 0;        ///< smallest dt of adaptive stepping [s]; 0 = dt / 1024
  bool two_d = false;     ///< motion restricted to the x-z plane (y and twist fixed)
  /// energy-consistent forces: the implicit midpoint rule's and Newmark's normal contact forces
  /// (ground and bodies) as the secant of their penalty energy over the step, so that impacts
  /// create no energy (stencils/contact_discrete_gradient.h), and the midpoint rule's
  /// stretching forces as the secant of their energy in l^2 (stencils/rod_stretch.h), which
  /// keeps stiff springs from pumping energy into the motion; false: every force at the step's
  /// unknown (pointwise), as before 2026-11-28
  bool energy_consistent = true;
  NewtonSpec newton;
  SourceLoc loc = {};  ///< the "integrator" block
};

enum class BackendKind { kCpu, kCuda };
/// The kind a name gives ("cpu", "cuda"), as scene files, the command line, the benchmarks and
/// the Python module spell it; false for any other name.
bool backend_from_name(const std::string& name, BackendKind& kind);
/// "cpu" or "cuda"
const char* backend_name(BackendKind kind);

}  // namespace slender
