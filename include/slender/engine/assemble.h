#pragma once

// Assembly functors (host and device): the residual and the CSR values of the free-DOF
// Jacobian are gathered from the local stencil results through precomputed source lists,
// summed in a fixed order, so that assembly is deterministic and needs no atomics.

#include "slender/core/types.h"
#include "slender/stencils/external.h"

namespace slender {

/// Per-DOF inertia and external forces: one DOF per index. With stride = ndof the per-DOF arrays
/// (q, q_hat, u_hat, f_time, r, J, phi) hold several environments (env-major) and the model's
/// arrays (mass, node_dl, node_volume) are shared.
/// A DOF's inertial mass in an environment of density scale `scale`: the scale multiplies the
/// body's own mass, not the fluid's added mass `ma` that `mass` includes (with ma = 0, the bits
/// of scale * mass). DofTerms and Simulator::set_params both take it from here.
SLENDER_HD SLENDER_INLINE Real scaled_inertial_mass(Real scale, Real mass, Real ma) {
  return scale * (mass - ma) + ma;
}

struct DofTerms {
  int nnode;
  const Real* q;            // (ndof)
  const Real* q_hat;        // predicted DOFs of the integrator (ndof)
  const Real* u_hat;        // velocity offset of the integrator (ndof)
  const Real* f_time;       // time-dependent point loads at the evaluation time (ndof)
  const Real* mass;         // lumped masses (ndof)
  const Real* node_dl;      // Voronoi lengths (nnode)
  const Real* node_volume;  // displaced volumes (nnode)
  Real rho_med;             // buoyancy medium density [kg/m^3]
  Real gx, gy, gz;          // gravity [m/s^2]
  Real eta, alpha;          // viscosity [Pa s], mass damping [1/s]
  Real c_m, c_u;            // integrator coefficients
  Real* r;                  // residual of each DOF (ndof)
  Real* J;                  // diagonal Jacobian of each DOF (ndof)
  Real* phi;                // incremental potential of each DOF (ndof)
  long stride = 0;          // ndof for env-major arrays, 0 for one environment
  // each environment's density scale, gravity and mass damping (nenv x 5:
  // scale, gx, gy, gz, alpha), replacing the shared values; null = the shared values. A
  // negative alpha there: the environment keeps the model's (dof_alpha, or alpha)
  const Real* env = nullptr;
  // each DOF's mass damping alpha (ndof, of one environment; a part's own), replacing `alpha`;
  // null: `alpha`
  const Real* dof_alpha = nullptr;
  // the static load step's factor on each environment's gravity (env; gx, gy, gz come with it)
  Real load_factor = 1;
  // each node's added mass (nnode; Model::node_added_mass): part of `mass` (the inertia, the
  // mass damping) but not of the weight, nor scaled by an environment's density scale; null:
  // none
  const Real* added_mass = nullptr;
  SLENDER_HD void operator()(long i) const {
    const long k = stride ? i % stride : i;
    const Real* ep = env ? env + 5 * (stride ? i / stride : 0) : nullptr;
    DofTermParams p;
    const Real ma = added_mass && k < 3L * nnode ? added_mass[k / 3] : 0;
    // (with ma = 0 the same bits as without an added mass)
    p.mass = ep ? scaled_inertial_mass(ep[0], mass[k], ma) : mass[k];
    p.damping = ep && ep[4] >= 0 ? ep[4] : (dof_alpha ? dof_alpha[k] : alpha);
    p.c_m = c_m;
    p.c_u = c_u;
    if (k < 3L * nnode) {
      const int c = int(k % 3);
      p.gravity = ep ? load_factor * ep[1 + c] : (c == 0 ? gx : (c == 1 ? gy : gz));
      p.drag = eta * node_dl[k / 3];
      p.weight = (ep ? ep[0] * (mass[k] - ma) : mass[k] - ma) - rho_med * node_volume[k / 3];
    } else {
      p.weight = 0;
      p.gravity = 0;
      p.drag = 0;
    }
    dof_terms_eval(q[i], q_hat[i], u_hat[i], f_time[i], p, r[i], J[i], phi[i]);
  }
};

/// f[row] = per-DOF term + sum of the stencil gradient entries of that row: one row per index.
struct AssembleResidual {
  const int* row_src_adr;  // (nfree + 1)
  const int* row_src;      // indices into the gradient pool
  const int* free_dof;     // (nfree)
  const Real* g_pool;      // (nenv x grad_pool)
  const Real* dof_r;       // (nenv x ndof)
  Real* f;                 // (nenv x nfree)
  // one environment's nfree, ndof and gradient pool for env-major arrays (one (environment,
  // row) pair per index); 0 for one environment (one row per index)
  int nfree = 0, ndof = 0;
  long grad_pool = 0;
  SLENDER_HD SLENDER_INLINE void at(long e, long row) const {
    const Real* g = g_pool + e * grad_pool;
    Real s = dof_r[e * ndof + free_dof[row]];
    for (int j = row_src_adr[row]; j < row_src_adr[row + 1]; ++j)
      s += g[row_src[j]];
    f[e * nfree + row] = s;
  }
  SLENDER_HD void operator()(long i) const {
    if (nfree > 0) {
      at(i / nfree, i % nfree);
    } else {
      at(0, i);
    }
  }
};

/// CSR value of one slot: sum of its Hessian-pool sources (plus the per-DOF diagonal).
struct AssembleJacobian {
  const int* slot_src_adr;  // (nnz + 1)
  const int* slot_src;      // indices into the Hessian pool
  const Real* h_pool;
  Real* val;  // (nnz)
  SLENDER_HD void operator()(long slot) const {
    Real s = 0;
    for (int j = slot_src_adr[slot]; j < slot_src_adr[slot + 1]; ++j)
      s += h_pool[slot_src[j]];
    val[slot] = s;
  }
};

/// Adds each free DOF's diagonal term: one row per index.
struct AddDiagonal {
  const int* diag_slot;  // (nfree)
  const int* free_dof;   // (nfree)
  const Real* dof_J;     // (ndof)
  Real* val;             // (nnz)
  SLENDER_HD void operator()(long row) const { val[diag_slot[row]] += dof_J[free_dof[row]]; }
};

/// v[i] *= s (a Young's modulus scale on the elastic families' pools)
struct ScaleValues {
  Real* v;
  Real s;
  SLENDER_HD void operator()(long i) const { v[i] *= s; }
};

}  // namespace slender
