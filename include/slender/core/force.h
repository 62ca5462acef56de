#pragma once

// The caller's state-dependent external force: what the callback is handed and what it gives
// back (the extension point for forces: docs/extending.md). Part of the bottom layer: the
// engine evaluates it, the front ends (Simulator, Python) take it from the caller.

#include <functional>
#include <vector>

#include "slender/core/small.h"

namespace slender {

/// A state-dependent external force written by the caller, with its Jacobian (the extension
/// point for forces: docs/extending.md). The callback runs at every Newton evaluation of a step
/// (and for residual() and reactions()) on the host, between the engine's parallel loops.
struct ForceEval {
  Real t = 0;                  ///< time at which the step's loads are evaluated [s]
  int ndof = 0;                ///< the model's DOFs
  const Real* q = nullptr;     ///< configuration being evaluated (ndof) [m, rad]
  const Real* u = nullptr;     ///< its velocity u(q) = u_hat + c_u (q - q_hat) (ndof)
  Real* force = nullptr;       ///< (ndof), zero on entry: add the force on each DOF [N, N m]
  bool want_jacobian = false;  ///< whether add_jacobian is read (else it may be skipped)
  /// dF[row]/dq[col] and dF[row]/du[col] (accumulated); entries on fixed DOFs are dropped. A
  /// free entry must couple DOFs a stencil couples already (a node's own coordinates always
  /// are); one outside the Jacobian's pattern fails the step with an error that names it.
  void add_jacobian(int row, int col, Real dF_dq, Real dF_du = 0) {
    jac_row.push_back(row);
    jac_col.push_back(col);
    jac_dq.push_back(dF_dq);
    jac_du.push_back(dF_du);
  }
  std::vector<int> jac_row, jac_col;
  std::vector<Real> jac_dq, jac_du;
};
using ForceCallback = std::function<void(ForceEval& e)>;

}  // namespace slender
