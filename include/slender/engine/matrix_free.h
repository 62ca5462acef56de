#pragma once

// The Jacobian without a matrix (LinearSolverKind::kMatrixFree): the engine (engine/engine.h)
// applies J to a vector by evaluating every stencil's local Hessian again at the Newton
// iterate and multiplying it there, so that neither the local-Hessian pool nor the CSR values
// exist. The products land in a pool of the gradients' layout, from which each free row
// gathers its entries through the plan's residual sources (row_src), as the residual does: the
// same fixed order, no atomics. The block-Jacobi preconditioner's 3x3 diagonal blocks come the
// same way, one column of every block at a time (the entries of a stencil's Hessian that couple
// a DOF with the DOF of its own aligned triple in that column).
// Host and device functors; the engine's loops run them over its executor.

#include "slender/core/pcg.h"
#include "slender/core/types.h"
#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// What of model m adds to the Jacobian apart from the stencils, which the matrix-free solver
/// cannot apply (null: nothing): Rayleigh stiffness damping (its Hessians at a step's start are
/// a pool of their own), Kelvin-Voigt damping, energies from the caller's code
inline const char* matrix_free_refusal(const Model& m) {
  if (m.stiffness_damping) return "Rayleigh stiffness damping (its Hessians at a step's start)";
  if (m.kelvin_voigt) return "Kelvin-Voigt damping";
  if (!m.user_energies.empty()) return "an energy from the caller's code";
  return nullptr;
}

/// Where one family's products go: the family's slice of the product pool (the gradient
/// pool's layout), and what is multiplied.
template <int D>
struct HessianProductOut {
  Real* g;          // the family's slice of the product pool (nenv x n x D)
  long g_stride;    // one environment's product pool
  const Real* x;    // the vector of every DOF (nenv x ndof; 0 at the held DOFs), or null
  long ndof;        //
  int column = -1;  // -1: H x; 0, 1, 2: the diagonal blocks' column `column`
  /// stencil k's product from its local Hessian r.H and its global DOFs
  SLENDER_HD void store(int env, long k, const int* dof, const LocalEval<D>& r) const {
    Real* out = g + env * g_stride + k * D;
    if (column < 0) {
      const Real* xe = x + long(env) * ndof;
      Real xl[D];
      for (int b = 0; b < D; ++b)
        xl[b] = xe[dof[b]];
      for (int a = 0; a < D; ++a) {
        Real s = 0;
        for (int b = 0; b < D; ++b)
          s += r.H.a[a * D + b] * xl[b];
        out[a] = s;
      }
      return;
    }
    for (int a = 0; a < D; ++a) {
      Real s = 0;
      for (int b = 0; b < D; ++b)
        if (dof[b] / 3 == dof[a] / 3 && dof[b] % 3 == column) s += r.H.a[a * D + b];
      out[a] = s;
    }
  }
};

/// One family's local Hessians times x (or their diagonal blocks' column): one
/// (env, stencil) pair per index, as EvalStencils evaluates them.
template <class B>
struct HessianProductStencils {
  ModelView m;
  EvalView s;
  long n;  // B::count(m)
  HessianProductOut<B::kDofs> out;
  SLENDER_HD void operator()(long t) const {
    const int env = int(t / n);
    const long k = t % n;
    LocalEval<B::kDofs> r;
    B::eval(m, s, env, k, kGradHess, r);
    int dof[B::kDofs];
    B::dofs(m, k, dof);
    out.store(env, k, dof, r);
  }
};

/// Each free row of J x from the products (column < 0), or its entry in its diagonal block's
/// column `column` (x null): the per-DOF diagonal and the row's product-pool sources, in the
/// plan's order. One row per index (one environment).
struct MatrixFreeRows {
  const int* row_src_adr;  // (nfree + 1)
  const int* row_src;      // indices into the product pool
  const int* free_dof;     // (nfree)
  const Real* prod;        // the product pool
  const Real* dof_J;       // the per-DOF diagonal (ndof)
  const Real* x;           // (nfree), null for a column
  int column;
  Real* y;  // (nfree)
  SLENDER_HD void operator()(long row) const {
    const int d = free_dof[row];
    Real s = column < 0 ? dof_J[d] * x[row] : (d % 3 == column ? dof_J[d] : Real(0));
    for (int j = row_src_adr[row]; j < row_src_adr[row + 1]; ++j)
      s += prod[row_src[j]];
    y[row] = s;
  }
};

/// x of the free rows into the vector of every DOF (whose held DOFs stay 0)
struct ScatterFreeRows {
  const int* free_dof;
  const Real* x;
  Real* out;
  SLENDER_HD void operator()(long row) const { out[free_dof[row]] = x[row]; }
};

/// Column `column` of each diagonal block from its rows' entries (MatrixFreeRows): the block's
/// row whose DOF is that column of the aligned triple, if the block has it. One block per index;
/// the blocks' 3x3 row-major storage (as BlockJacobiSetup's), inverted in place after the three
/// columns by BlockJacobiInvertStaged.
struct MatrixFreeBlockColumn {
  const int* block_row;  // (nblock + 1)
  const int* free_dof;   // (nfree)
  const Real* entry;     // (nfree)
  int column;
  Real* blocks;  // (nblock x 9)
  SLENDER_HD void operator()(long b) const {
    const int r0 = block_row[b], m = block_row[b + 1] - r0;
    int j = -1;
    for (int i = 0; i < m; ++i)
      if (free_dof[r0 + i] % 3 == column) j = i;
    if (j < 0) return;
    for (int i = 0; i < m; ++i)
      blocks[9 * b + 3 * i + j] = entry[r0 + i];
  }
};

/// The blocks staged by MatrixFreeBlockColumn inverted in place (as BlockJacobiSetup inverts
/// the CSR's); where a block is not positive definite, ok[b] = 0 and the inverse of its
/// diagonal's magnitudes in its place (1 for a zero), so that the preconditioner stays positive
/// definite (the matrix-free solver has no matrix to fall back on).
struct BlockJacobiInvertStaged {
  const int* block_row;
  Real* inv;  // (nblock x 9): the blocks in, their inverses out
  unsigned char* ok;
  SLENDER_HD void operator()(long b) const {
    const int m = block_row[b + 1] - block_row[b];
    Real a[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        a[i][j] = inv[9 * b + 3 * i + j];
    ok[b] = invert_spd_block(a, m, inv + 9 * b) ? 1 : 0;
    if (ok[b]) return;
    for (int i = 0; i < 9; ++i)
      inv[9 * b + i] = 0;
    for (int i = 0; i < m; ++i) {
      const Real d = a[i][i] < 0 ? -a[i][i] : a[i][i];
      inv[9 * b + 4 * i] = d > 0 ? 1 / d : Real(1);
    }
  }
};

}  // namespace slender
