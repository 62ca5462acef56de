#pragma once

// The caller's force (core/force.h) as the engine evaluates it: at a configuration q with the
// velocity the step gives it, into a per-DOF force, and its Jacobian into the free-DOF CSR
// values. Host memory only: the stepper calls it on executors whose buffers the host reads (the
// host executor), and the engine's reactions (engine_queries.h) call it at the state.

#include <algorithm>
#include <vector>

#include "slender/core/error.h"
#include "slender/core/force.h"

namespace slender {

struct UserForce {
  ForceCallback fn;
  std::vector<Real> force;  // the last evaluation's force (ndof)
  std::vector<Real> u;      // the velocity it was evaluated at (ndof)
  ForceEval e;              // the last evaluation (its Jacobian entries)

  explicit operator bool() const { return bool(fn); }

  /// F(t, q, u) into `force` (u: ndof values, or null for u_hat + c_u (q - q_hat))
  void call(Real t,
            int ndof,
            const Real* q,
            const Real* u_at,
            const Real* q_hat,
            const Real* u_hat,
            Real c_u,
            bool want_jacobian) {
    if (!u_at) {
      u.resize(size_t(ndof));
      for (int i = 0; i < ndof; ++i)
        u[i] = u_hat[i] + c_u * (q[i] - q_hat[i]);
      u_at = u.data();
    }
    force.assign(size_t(ndof), 0);
    e.t = t;
    e.ndof = ndof;
    e.q = q;
    e.u = u_at;
    e.force = force.data();
    e.want_jacobian = want_jacobian;
    e.jac_row.clear();
    e.jac_col.clear();
    e.jac_dq.clear();
    e.jac_du.clear();
    fn(e);
    SLENDER_CHECK(e.jac_row.size() == e.jac_col.size() && e.jac_row.size() == e.jac_dq.size() &&
                      e.jac_row.size() == e.jac_du.size(),
                  "force callback: the Jacobian's entry lists differ in length");
  }

  /// -(dF/dq + c_u dF/du) of the last evaluation into the free-DOF Jacobian's CSR values
  /// (dof_free: the free row of each DOF or -1; row_ptr, col: the pattern)
  void add_jacobian(Real c_u,
                    int ndof,
                    const int* dof_free,
                    const int* row_ptr,
                    const int* col,
                    Real* val) const {
    for (size_t k = 0; k < e.jac_row.size(); ++k) {
      const int row = e.jac_row[k], cl = e.jac_col[k];
      SLENDER_CHECK(row >= 0 && row < ndof && cl >= 0 && cl < ndof,
                    "force callback: Jacobian entry (", row, ", ", cl, ") outside the ", ndof,
                    " DOFs");
      const int r = dof_free[row], cf = dof_free[cl];
      if (r < 0 || cf < 0) continue;  // a fixed DOF: no unknown there
      const int* b = col + row_ptr[r];
      const int* end = col + row_ptr[r + 1];
      const int* at = std::lower_bound(b, end, cf);
      SLENDER_CHECK(at != end && *at == cf, "force callback: Jacobian entry (DOF ", row, ", DOF ",
                    cl, ") couples DOFs that no stencil couples (outside the Jacobian's pattern)");
      val[at - col] -= e.jac_dq[k] + c_u * e.jac_du[k];
    }
  }
};

}  // namespace slender
