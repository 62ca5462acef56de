#pragma once

// What the engine allocates, tallied from the sizes of its arrays before any of them is: the
// BatchedSimulator compares the tally of a batch with the memory available and refuses a batch
// that would not fit (host/batch/batched_simulator.cpp, host/runtime/memory_budget.h), instead
// of ending in std::bad_alloc or an abort after seconds of allocation.
// - tally_engine_memory: the engine (engine/engine.h, with its StepEval) with B environments,
//   the arrays in the order its constructor, use_plan and its steps allocate them;
// - tally_batched_solve_memory: the vectorized batch's solver (engine/batch_solve.h: the band,
//   the dense matrices or the PCG vectors of every environment);
// - Simulator::memory_estimate (host/simulator/simulator.cpp): one Simulator on the CPU, its engine
//   (one environment), linear solver (cpu::LinearSolver::memory_bytes: the band, or the sparse
//   factor's fill from a symbolic factorization) and host-side arrays.
// A new array in those classes belongs in their tally here too; tests/physics/
// batch_memory_test.cpp holds the tally against the heap's growth for both engines.

#include <algorithm>
#include <string>

#include "slender/core/integrator.h"
#include "slender/core/newton.h"
#include "slender/core/reduce4.h"
#include "slender/core/status.h"
#include "slender/engine/batch_solve.h"
#include "slender/engine/engine.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/model_view.h"
#include "slender/engine/ordering.h"
#include "slender/engine/strains.h"
#include "slender/model.h"
#include "slender/state.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"

namespace slender {

/// Bytes of arrays as an engine allocates them: per environment (an array of B x count values
/// adds count values here) and once, and the heap blocks they take.
struct MemoryTally {
  /// what the host's allocator adds to each block: glibc's malloc keeps an 8-byte header and
  /// rounds a block up to a multiple of 16 bytes (8 more on average)
  static constexpr double kHeapBlockBytes = 16;
  double per_env = 0;  ///< bytes per environment
  double shared = 0;   ///< bytes once
  double blocks = 0;   ///< heap blocks (each array of all environments is one)
  /// an array of `count` values of T per environment
  template <class T>
  void env(double count) {
    per_env += count * sizeof(T);
    blocks += 1;
  }
  /// an array of `count` values of T, once
  template <class T>
  void once(double count) {
    shared += count * sizeof(T);
    blocks += 1;
  }
  /// the bytes that do not grow with the environments (the shared arrays, every block's cost)
  double fixed() const { return shared + blocks * kHeapBlockBytes; }
  /// bytes for nenv environments
  double total(double nenv) const { return fixed() + nenv * per_env; }
};

/// The batched solver's arrays (engine/batch_solve.h, VectorLinearSolve) for `plan` and nenv
/// environments: X's memory into exec, the host's into host. Returns the solver it would choose
/// (choose_vector_solver: throws, as the solver does, when the request cannot be served). On a
/// device the banded solve may stage the band in shared memory instead (a few thousand
/// environments at most): the tally keeps the band in global memory, an upper bound.
inline VecSolver tally_batched_solve_memory(const AssemblyPlan& plan,
                                            int nenv,
                                            LinearSolverKind requested,
                                            bool symmetric,
                                            MemoryTally& exec,
                                            MemoryTally& host) {
  const int n = plan.nfree;
  const double nnz = double(plan.nnz());
  BandLayout layout;
  if (n > 0) layout = band_layout(n, plan.row_ptr, plan.col);
  const VecSolver kind = choose_vector_solver(requested, n, layout.w, nenv, symmetric);
  host.once<int>(double(layout.order.size()));  // the layout the solver keeps
  host.once<int>(double(layout.band_pos.size()));
  // the gather's slot sources and each slot's DOFs (made on the host first: 3 arrays)
  exec.once<int>(double(plan.slot_src_adr.size()));
  exec.once<int>(double(plan.slot_src.size()));
  for (int k = 0; k < 3; ++k) {
    exec.once<int>(nnz);
    host.once<int>(nnz);
  }
  exec.env<unsigned char>(1);  // ok_, mask_
  exec.env<unsigned char>(1);
  host.env<unsigned char>(1);  // mask_h_, chol_h_
  host.env<unsigned char>(1);
  switch (kind) {
    case VecSolver::kBanded:
      exec.once<int>(n);  // order_, pos_
      exec.once<int>(nnz);
      exec.env<Real>(double(layout.band_size));  // band_, x_
      exec.env<Real>(n);
      break;
    case VecSolver::kDense:
      exec.once<int>(nnz);  // pos_ (made on the host first)
      host.once<int>(nnz);
      exec.env<Real>(double(n) * n);  // dense_, piv_, chol_, lu_only_
      exec.env<int>(n);
      exec.env<unsigned char>(1);
      exec.env<unsigned char>(1);
      break;
    case VecSolver::kPcg: {
      long nblock = n > 0 ? 1 : 0;
      for (int r = 1; r < n; ++r)
        nblock += plan.free_dof[r] / 3 != plan.free_dof[r - 1] / 3 ? 1 : 0;
      exec.once<int>(n + 1.0);  // row_ptr_, col_, block_row_
      exec.once<int>(nnz);
      exec.once<int>(nblock + 1.0);
      exec.env<Real>(nnz);  // val_, inv_, block_ok_, r_, z_, p_, Ap_
      exec.env<Real>(9.0 * nblock);
      exec.env<unsigned char>(double(nblock));
      for (int k = 0; k < 4; ++k)
        exec.env<Real>(n);
      for (int k = 0; k < 3; ++k)  // rz_, stop_, coef_
        exec.env<Real>(1);
      exec.env<int>(1);            // iters_
      for (int k = 0; k < 3; ++k)  // red_, bad_, count_
        exec.env<Red4>(1);
      break;
    }
  }
  return kind;
}

/// The engine's arrays (engine/engine.h with its StepEval, engine/step_eval.h) for nenv
/// environments: X's memory into exec, the host's into host (on the CPU both are the host's).
/// `device`: X keeps copies of the model's arrays (the CUDA executor) rather than views of them.
/// With policy kBatched the batched solver's arrays too (tally_batched_solve_memory); kSystem's
/// solve (one environment) is the front end's to add. Everything a batch allocates as it is used
/// is counted: the per-environment parameters, held DOFs, forces, fixed targets and part factors
/// (set when first set), strains, and a step's per-environment scalars.
inline void tally_engine_memory(const Model& m,
                                int nenv,
                                const IntegratorSpec& spec,
                                LinearSolverKind solver,
                                bool batched,
                                bool device,
                                MemoryTally& exec,
                                MemoryTally& host) {
  if (batched) check_batched_model(m, spec);  // (before the solver's choice, as the engine)
  const AssemblyPlan& p = m.plan;
  const double nd = m.ndof, ne = m.nedge, nb = m.nbend, nh = m.nhinge, nmid = m.nmid,
               nse = m.nsedge, nn = m.nnode, np = m.npart;
  const double nfixed = double(m.fixed_dof.size()), nmoved = double(m.motion_dof.size());
  // the model's arrays: a view on the host, a device copy of them (and of the DOF arrays the
  // engine reads besides) on a device; memory_bytes (every array of the model) bounds them
  if (device) exec.once<char>(double(m.memory_bytes()));
  // StepEval: the Young's modulus scales, the part scales, the stiffness-damping Hessians at a
  // step's start, the Kelvin-Voigt anchors
  exec.env<Real>(1);
  if (m.npart > 0) exec.env<Real>(np);
  if (m.stiffness_damping)
    exec.env<Real>(double(p.h_off[kFamElasticEnd] - p.h_off[kFamElasticBegin]));
  if (m.kelvin_voigt) {
    exec.env<Real>(double(p.e_off[kFamElasticEnd] - p.e_off[kFamElasticBegin]));
    exec.env<Real>(nd);  // kv_qa_, kv_z_
    exec.env<Real>(nd);
    exec.env<Real>(3 * ne);  // kv_d1_, kv_t_, kv_ref_
    exec.env<Real>(3 * ne);
    exec.env<Real>(nb);
    // the anchors: edge and shell-edge lengths, curvatures, twists, hinge angles, shape
    // operators, membrane terms
    for (double c : {ne, nse, 2 * nb, nb, nh, 9 * nmid})
      exec.env<Real>(c);
    exec.env<Real>(double(m.tables[kFamMembrane].rows) *
                   ShellMembraneBinding<kFamMembrane>::kReals);
    exec.once<Real>(ne);
  }
  // the state and the step's per-DOF workspace: q, u, a, y, y_trial, q_hat, u_hat, f_time,
  // dof_r, dof_J, dof_phi
  for (int k = 0; k < 11; ++k)
    exec.env<Real>(nd);
  // frames and twists, at the step's start and now; natural shapes (the edges' stretch
  // last); mid-edge frames
  for (int k = 0; k < 4; ++k)
    exec.env<Real>(3 * ne);
  for (double c : {nb, nb, 2 * nb, nb, nh, 3 * nmid, ne, 3 * nse})
    exec.env<Real>(c);
  if (!m.signals.empty()) {
    exec.env<Real>(kMaxSignals);
    host.env<Real>(kMaxSignals);  // sig_scratch_, and the constructor's
    host.env<Real>(kMaxSignals);  // the caller's signal values and where they apply
    host.env<unsigned char>(kMaxSignals);
  }
  // per-environment scalars: active_, alpha_, mu_ (X); active_h_, active_dev_h_,
  // alpha_dev_h_, mu_h_, friction_, warn_ (3), events_done_, time_, steps_, ok_h_,
  // fallback_h_, sums_, the parameters (params_h_ x 5, yscale_h_, env_params_; params_ x 5 in X)
  exec.env<unsigned char>(1);
  exec.env<Real>(1);
  exec.env<Real>(1);
  exec.env<Real>(5);
  host.env<unsigned char>(1);
  host.env<unsigned char>(1);
  host.env<Real>(1);
  host.env<Real>(1);
  host.env<unsigned char>(1);
  host.env<long>(3);
  host.env<int>(1);
  host.env<Real>(1);
  host.env<long>(1);
  host.env<unsigned char>(1);
  host.env<unsigned char>(1);
  host.env<Red4>(1);
  host.env<Real>(5);
  host.env<Real>(1);
  host.env<EnvParams>(1);
  if (device) exec.env<Red4>(1);  // the reductions' results (on the host: written in place)
  // the Newton loop's reductions: a direction's slopes, a trial's and the predictor's sums and
  // the three packed for one read (X), their host copy, and whether each environment's last
  // step iterated (fused_first_mask)
  exec.env<Red4>(6);
  host.env<Red4>(3);
  host.env<unsigned char>(1);
  // held DOFs per environment (a fix, a release, a boundary event): host and X
  host.env<unsigned char>(nd);
  exec.env<unsigned char>(nd);
  // the assembly plan's pools and the free-DOF residual and step: energies, flags, gradients,
  // Hessians (the largest part for most models), f, dx; the plan's residual sources (X's copy)
  exec.env<Real>(double(p.energy_pool));
  exec.env<unsigned>(double(p.energy_pool));
  exec.env<Real>(double(p.grad_pool));
  if (solver == LinearSolverKind::kMatrixFree && !batched) {
    // no Hessians: the products' pool (the gradients' layout) and the vector they multiply
    exec.env<Real>(double(p.grad_pool));
    exec.env<Real>(nd);
  } else {
    exec.env<Real>(double(p.hess_pool));
  }
  exec.env<Real>(p.nfree);
  exec.env<Real>(p.nfree);
  if (device) {
    exec.once<int>(double(p.free_dof.size()));
    exec.once<int>(double(p.row_src_adr.size()));
    exec.once<int>(double(p.row_src.size()));
  }
  // the caller's forces (host) and a step's loads (host, then X's f_time), its fixed targets,
  // the scene's motions at each environment's step end, the part factors and scales
  host.env<Real>(3 * nn);
  host.env<Real>(nd);
  if (nfixed > 0) exec.env<Real>(nfixed);
  if (nmoved > 0) {
    exec.env<Real>(nmoved);
    host.env<Real>(nmoved);
  }
  if (m.npart > 0) {
    host.env<Real>(np);
    host.env<Real>(np);
  }
  // strains of the largest kind, asked for by the front end
  const ModelView mv = host_view(m);
  double strains = 0;
  for (StrainKind k : {StrainKind::kStretch, StrainKind::kBendTwist, StrainKind::kHingeAngle,
                       StrainKind::kShapeOperator})
    strains = std::max(strains, double(strain_count(mv, k)) * strain_width(k));
  if (strains > 0) exec.env<Real>(strains);
  // Newmark's contact forces (with contact) and the zeros they start from
  if (spec.kind == IntegratorKind::kNewmark && (m.ground.enabled || m.contact.enabled)) {
    exec.env<Real>(nd);
    exec.env<Real>(nd);
  }
  // reset: the mask (X) and one state array at a time
  exec.env<unsigned char>(1);
  exec.once<Real>(std::max({nd, 3 * ne, 3 * nse}));
  // a step's per-environment scalars on the host: its reports, the Newton loop's
  // (core/newton.h: phase, iterations, directions, alpha, best alpha and residual, r0, phi0,
  // r_new, phi_new), the line search's warnings, the masks
  host.env<StepReport>(1);
  host.env<NewtonDirection>(1);
  host.env<int>(1);
  for (int k = 0; k < 11; ++k)
    host.env<Real>(1);
  host.env<long>(1);
  for (int k = 0; k < 4; ++k)
    host.env<unsigned char>(1);
  // the constructor's natural shapes on the host (curvatures, twists, hinge angles)
  host.env<Real>(2 * nb);
  host.env<Real>(nb);
  host.env<Real>(nh);
  if (batched) {
    tally_batched_solve_memory(p, nenv, solver, !engine_nonsymmetric(m, spec), exec, host);
    // the pivoting fallback for an environment the batched solve cannot take: its local
    // Hessians, DOF terms, residual and step on the host, and a sparse LU of one environment
    host.once<Real>(double(p.hess_pool));
    host.once<Real>(nd);
    host.once<Real>(p.nfree);
    host.once<Real>(p.nfree);
    host.shared += cpu::LinearSolver::memory_bytes(p, LinearSolverKind::kSparseLu, false);
  }
}

}  // namespace slender
