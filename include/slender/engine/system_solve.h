#pragma once

// The linear solve of one system per Newton iteration over an executor X: the engine's policy
// with one environment (engine/engine.h, kSystem: the Simulator's), beside the batched solves of
// several (engine/batch_solve.h).
// It owns the Jacobian's CSR values for the current assembly plan and solves J dx = f either
// - directly: X's sparse direct solver (the CPU's banded LU, CHOLMOD, LDLT or sparse LU on the
//   host; cuSOLVER's Cholesky or QR on the GPU), one symbolic analysis per pattern; or
// - iteratively: block-Jacobi CG for a symmetric Jacobian, BiCGSTAB otherwise (engine/krylov.h),
//   on these values, or (kMatrixFree) on the caller's products J x and diagonal blocks, with no
//   values at all (engine/matrix_free.h) and no direct fallback;
//   or the same preconditioned by a multigrid V-cycle (kAmg: engine/amg.h, whose hierarchy is
//   built on the host for every matrix); where CG or BiCGSTAB cannot go on, the direct solver
//   takes that matrix (the static and contact parts merged on the host), counted as a fallback.
// Contact between bodies: the contact part of J is assembled on X (engine/contact_jacobian.h),
// beside the static pattern on the iterative path, merged with it into one matrix on the direct
// path (the merged pattern goes to the host for the direct solver's analysis, only when it
// changed).
// The caller evaluates the stencils into its pools and calls assemble() with them; the values
// stay here until the next assemble.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "slender/core/env_switch.h"
#include "slender/core/integrator.h"
#include "slender/core/newton.h"
#include "slender/core/pcg.h"
#include "slender/core/reduce4.h"
#include "slender/core/status.h"
#include "slender/engine/amg.h"
#include "slender/engine/assemble.h"
#include "slender/engine/contact_jacobian.h"
#include "slender/engine/krylov.h"
#include "slender/engine/linear_solver.h"
#include "slender/engine/matrix_free.h"
#include "slender/model.h"

namespace slender {

namespace stepper {

template <class X>
class SystemSolveOn {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;
  template <class T>
  using Const = typename X::template ConstArray<T>;
  using DirectSolver = typename X::DirectSolver;

  /// `kind`: the caller's choice (kAuto: direct below X::kPcgAutoThreshold unknowns, else
  /// iterative); `symmetric`: whether the Jacobian is symmetric from the start
  SystemSolveOn(LinearSolverKind kind, bool symmetric) : kind_(kind), symmetric_(symmetric) {}

  /// the assembly plan whose pattern the values follow: the solver stays where the pattern does
  /// (new contact pairs often leave it as it was), else a new symbolic analysis (the direct
  /// path) or new preconditioner blocks (the iterative path)
  void use_plan(std::shared_ptr<const AssemblyPlan> plan) {
    const AssemblyPlan& p = *plan;
    nfree_ = p.nfree;
    nnz_ = p.nnz();
    row_ptr_.upload(p.row_ptr);
    col_.upload(p.col);
    diag_slot_.upload(p.diag_slot);
    slot_src_adr_.upload(p.slot_src_adr);
    slot_src_.upload(p.slot_src);
    const bool same_pattern =
        (direct_ || iterative_) && plan_ && p.row_ptr == plan_->row_ptr && p.col == plan_->col;
    plan_ = std::move(plan);
    amg_stale_ = true;  // the multigrid is built again for a new plan (its pattern may differ)
    if (same_pattern) return;  // the solver, and where the values live, stay
    // the iterative path: CG for a symmetric Jacobian, BiCGSTAB otherwise
    iterative_ = linear_solver_iterative(kind_) ||
                 (kind_ == LinearSolverKind::kAuto && p.nfree >= X::kPcgAutoThreshold);
    direct_.reset();
    merged_ = false;
    std::vector<int>().swap(mrow_h_);
    std::vector<int>().swap(mcol_h_);
    ++pattern_version_;
    if (!iterative_) {
      direct_ = make_direct(p.row_ptr, p.col);
    } else {
      // blocks: consecutive free rows within one aligned triple of global DOFs (as the CPU's)
      std::vector<int> block_row{0};
      for (int r = 1; r < p.nfree; ++r)
        if (p.free_dof[r] / 3 != p.free_dof[r - 1] / 3) block_row.push_back(r);
      block_row.push_back(p.nfree);
      nblock_ = long(block_row.size()) - 1;
      block_row_.upload(block_row);
      std::vector<int> row_block(static_cast<size_t>(p.nfree));
      for (long b = 0; b < nblock_; ++b)
        for (int r = block_row[size_t(b)]; r < block_row[size_t(b) + 1]; ++r)
          row_block[size_t(r)] = int(b);
      row_block_.upload(row_block);
      if (matrix_free()) {  // (no matrix: no column runs for its rows)
        free_dof_.upload(p.free_dof);
        mf_entry_.resize(size_t(p.nfree));
      } else {
        const ColumnRuns runs(p.row_ptr, p.col);
        run_ptr_.upload(runs.run_ptr);
        run_col_.upload(runs.run_col);
        run_len_.upload(runs.run_len);
      }
      block_inv_.resize(9 * size_t(nblock_));
      block_ok_.resize(size_t(nblock_));
    }
    size_values();
  }

  /// the contact part of J, assembled on X (contact between bodies; `plan`: the one in use,
  /// whose free rows it uses); `renew`: a new one for a plan of other free rows (another set of
  /// held DOFs), whose pattern build_contact makes
  void contact_part(const AssemblyPlan& plan, int ndof, bool renew = false) {
    // (a merged pattern's solver stays until build_contact compares the new pattern with it)
    if (!contact_ || renew) contact_ = std::make_unique<contact::ContactJacobian<X>>(plan, ndof);
  }

  /// J_c's pattern for the pairs of view `v` (executor pointers), and on the direct path the
  /// merged pattern and, where that changed, the direct solver's analysis of it
  void build_contact(const ModelView& v) {
    contact_->build(v);
    if (iterative_) return;
    if (contact_->nnz() == 0) {
      if (!merged_) return;
      // no pair adds an entry: the plan's pattern
      merged_ = false;
      std::vector<int>().swap(mrow_h_);
      std::vector<int>().swap(mcol_h_);
      new_direct(plan_->row_ptr, plan_->col);
      return;
    }
    contact_->merge(row_ptr_.data(), col_.data());
    std::vector<int> rp(size_t(nfree_) + 1), col(size_t(contact_->merged_nnz()));
    X::to_host(rp.data(), contact_->merged_row_ptr(), rp.size());
    X::to_host(col.data(), contact_->merged_col(), col.size());
    const bool same = merged_ && direct_ && rp == mrow_h_ && col == mcol_h_;
    merged_ = true;
    if (same) return;  // the analysis of the last merged pattern holds
    mrow_h_ = std::move(rp);
    mcol_h_ = std::move(col);
    new_direct(mrow_h_, mcol_h_);
  }

  /// the direct path's pattern on the host (the plan's, or merged with the contact part's) and
  /// a number that changes with it
  const std::vector<int>& pattern_row_ptr() const { return merged_ ? mrow_h_ : plan_->row_ptr; }
  const std::vector<int>& pattern_col() const { return merged_ ? mcol_h_ : plan_->col; }
  long pattern_version() const { return pattern_version_; }

  /// a Jacobian that is (or may become) non-symmetric from here on: LU or QR on the direct
  /// path, BiCGSTAB on the iterative one
  void make_nonsymmetric() {
    if (!symmetric_) return;
    symmetric_ = false;
    direct_.reset();  // a Cholesky solver (the direct path, or the iterative one's fallback)
    if (!iterative_) new_direct(pattern_row_ptr(), pattern_col());
    size_values();
  }

  bool symmetric() const { return symmetric_; }
  bool iterative() const { return iterative_; }
  /// kMatrixFree's Jacobian: `product`(x, y) sets y = J x over the free rows; `column`(c, y)
  /// sets y[r] to the entry of row r in column c (0, 1, 2) of its aligned triple, within the
  /// diagonal block of r's (the caller evaluates both at the last evaluation with a Jacobian)
  void set_matrix_free(std::function<void(const Real*, Real*)> product,
                       std::function<void(int, Real*)> column) {
    product_ = std::move(product);
    block_column_ = std::move(column);
  }
  bool matrix_free() const { return kind_ == LinearSolverKind::kMatrixFree; }
  /// the relative residual of the next Krylov solves (inexact Newton's forcing, core/newton.h);
  /// kKrylovRelTol unless set
  void set_krylov_tol(Real t) { krylov_.set_rel_tol(t); }
  const AssemblyPlan& plan() const { return *plan_; }
  std::string name() const {
    if (iterative_)
      return std::string(symmetric_ ? X::kPcgName : X::kBicgName) +
             (kind_ == LinearSolverKind::kAmg        ? "-amg"
              : kind_ == LinearSolverKind::kPcgMixed ? "-mixed"
              : matrix_free()                        ? "-matrix-free"
                                                     : "");
    return X::direct_name(direct_.get(), symmetric_);
  }

  /// the Jacobian's CSR values on X: in the direct solver's own storage where the executor's
  /// solver offers it (the host's: no copy before each factorization), else here
  Real* values() {
    if (!iterative_ && direct_) {
      if (Real* v = X::solver_values(direct_.get())) return v;
    }
    return val_.data();
  }

  /// the values from the stencils' local Hessians (h_pool, the plan's layout) and the per-DOF
  /// diagonal (dof_J, ndof; free_dof: the plan's free DOFs on X, the caller's copy); the contact
  /// part from its Hessians (h_contact) where X assembles it
  void assemble(const Real* h_pool, const Real* dof_J, const int* free_dof, const Real* h_contact) {
    if (matrix_free()) return;  // (no values: the products evaluate the stencils)
    assemble_into(h_pool, dof_J, free_dof, h_contact, values());
    if (contact_ && iterative_) contact_->assemble(h_contact);
  }
  /// the same values (the direct path's pattern: pattern_row_ptr, pattern_col) into `val`
  void assemble_into(const Real* h_pool,
                     const Real* dof_J,
                     const int* free_dof,
                     const Real* h_contact,
                     Real* val) {
    if (merged_) {
      contact_->assemble_merged(slot_src_adr_.data(), slot_src_.data(), h_pool, h_contact, val);
      X::for_each(nfree_, AddDiagonal{contact_->merged_diag(), free_dof, dof_J, val});
      return;
    }
    X::for_each(nnz_, AssembleJacobian{slot_src_adr_.data(), slot_src_.data(), h_pool, val});
    X::for_each(nfree_, AddDiagonal{diag_slot_.data(), free_dof, dof_J, val});
  }

  /// the contact part's residual entries (where X assembles the contact part)
  void add_contact_residual(const Real* g_contact, Real* f) {
    if (contact_) contact_->add_residual(g_contact, f);
  }

  /// dx = J^-1 f; false when even the fallback failed. `fallback` as the CPU counts it: a
  /// direct factorization instead of the preconditioner (an indefinite block) or QR instead of
  /// Cholesky. Into `times`: factor (the preconditioner's set-up included), solve, Krylov
  /// iterations and restarts
  /// With `status` (where set_deferred asked for it): a band's solve status left on X for the
  /// caller to read with the direction's slope (DirectSolver::solve_deferred: 1 solved, 0 not
  /// finite, 2 a pivot too small, then solve_after_pivot on the values assembled again), or null
  /// where the solve finished here.
  bool solve(
      const Real* f, Real* dx, PhaseTimes& times, bool& fallback, const int** status = nullptr) {
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t0) {
      return std::chrono::duration<double>(Clock::now() - t0).count();
    };
    if (status) *status = nullptr;
    if (nfree_ == 0) return true;
    if (matrix_free()) return solve_matrix_free(f, dx, times, fallback);
    if (iterative_) {
      auto t0 = Clock::now();
      if (pcg_setup()) {
        times.factor += since(t0);
        t0 = Clock::now();
        const long it0 = krylov_.iterations();
        auto apply = [this](const Real* x, Real* y) { apply_matrix(x, y); };
        auto precond = [this](const Real* in, Real* out) { precondition(in, out); };
        const bool ok = !symmetric_
                            ? krylov_.bicgstab(nfree_, f, dx, apply, precond, times.krylov_restarts)
                        : fused_cg() ? cg_fused(f, dx)
                                     : krylov_.cg(nfree_, f, dx, apply, precond);
        times.solve += since(t0);
        const long its = krylov_.iterations() - it0;
        times.linear_iters += its;
        if (kind_ == LinearSolverKind::kAmg) amg_track(ok, its);
        if (ok) return true;
        if (krylov_.trace()) krylov_.trace_failure(symmetric_, nfree_, its);
      }
      // CG or BiCGSTAB cannot go on (an indefinite block, a breakdown, or too slow): the direct
      // path for this matrix, counted as a fallback (as the CPU counts it)
      fallback = true;
      if (has_contact()) return merged_direct_solve(f, dx);
      if (!direct_) direct_ = make_direct(plan_->row_ptr, plan_->col);
    }
    auto t0 = Clock::now();
    const bool factored = direct_->factorize(values());
    times.factor += since(t0);
    t0 = Clock::now();
    const bool solved = factored && (status && !iterative_ ? direct_->solve_deferred(f, dx, *status)
                                                           : direct_->solve(f, dx));
    times.solve += since(t0);
    // after the solve: a factorization the solve finds unusable falls back there
    if (direct_->used_fallback()) fallback = true;
    return solved;
  }

  /// after a deferred status of 2: the direct solver's sparse path for the values assembled
  /// again (the band's fallback, counted as one by the caller)
  bool solve_after_pivot(const Real* f, Real* dx, PhaseTimes& times) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = direct_->solve_after_pivot(f, dx);
    times.factor += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return ok;
  }
  /// the direct solvers' order of reads (DirectSolver::set_deferred): a band's status left on X
  /// for the caller (solve's `status`)
  void set_deferred(bool on) {
    deferred_ = on;
    if (direct_) direct_->set_deferred(on);
  }

  /// J (nfree x nfree, row-major) on the host, the contact part included: from the last assemble
  void dense_on_host(std::vector<Real>& jacobian) {
    SLENDER_CHECK(!matrix_free(),
                  "the matrix-free solver keeps no Jacobian to read: ask with "
                  "pcg or a direct solver");
    const int n = nfree_;
    const AmgCsr m = merged_on_host();
    jacobian.assign(size_t(n) * size_t(n), 0);
    for (int r = 0; r < n; ++r)
      for (int k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k)
        jacobian[size_t(r) * n + m.col[k]] += m.val[k];
  }

  /// the node positions (X's memory, the first `dofs` of the DOF vector) whose rigid motions the
  /// multigrid's coarse levels represent; read at its next build
  void set_geometry(const Real* y, int dofs) {
    geometry_ = y;
    geometry_dofs_ = dofs;
  }

 private:
  // the iterative path's contact part (J_c apart from the static values)
  bool has_contact() const { return iterative_ && contact_ && contact_->nnz() > 0; }

  std::unique_ptr<DirectSolver> make_direct(const std::vector<int>& row_ptr,
                                            const std::vector<int>& col) const {
    std::unique_ptr<DirectSolver> s =
        X::make_direct_solver(int(row_ptr.size()) - 1, row_ptr, col, symmetric_, kind_);
    s->set_deferred(deferred_);
    return s;
  }
  // the direct path's solver for a new pattern, and the values' room
  void new_direct(const std::vector<int>& row_ptr, const std::vector<int>& col) {
    direct_.reset();  // (first: its factor's memory)
    direct_ = make_direct(row_ptr, col);
    ++pattern_version_;
    size_values();
  }
  void size_values() {
    const bool own = !matrix_free() && (iterative_ || !direct_ || !X::solver_values(direct_.get()));
    const long n = merged_ ? contact_->merged_nnz() : nnz_;
    val_.resize(own ? size_t(n) : 0);
  }

  // J_c, which the executor assembles (the iterative path), copied to the host
  AmgCsr contact_csr_on_host() const {
    const auto& cj = *contact_;
    AmgCsr c;
    c.nrow = c.ncol = nfree_;
    c.row_ptr.resize(size_t(nfree_) + 1);
    c.col.resize(size_t(cj.nnz()));
    c.val.resize(size_t(cj.nnz()));
    X::to_host(c.row_ptr.data(), cj.row_ptr(), c.row_ptr.size());
    X::to_host(c.col.data(), cj.col(), c.col.size());
    X::to_host(c.val.data(), cj.val(), c.val.size());
    return c;
  }

  // the iterative path's fallback with contact: the static and contact matrices merged on the
  // host (rare: CG met an indefinite block or did not converge), factorized by the direct solver
  bool merged_direct_solve(const Real* f, Real* dx) {
    const AmgCsr m = merged_on_host();
    const std::unique_ptr<DirectSolver> solver = make_direct(m.row_ptr, m.col);
    Buffer<Real> dval;
    dval.upload(m.val);
    return solver->factorize(dval.data()) && solver->solve(f, dx);
  }

  bool pcg_setup() {
    if (kind_ == LinearSolverKind::kAmg) {
      const bool refresh = amg_refresh_ && !has_contact();
      if (amg_.ready() && !amg_stale_ && amg_uses_ < (refresh ? kAmgReuseRefreshed : kAmgReuse)) {
        // the hierarchy of an earlier matrix: its finest smoother from this one, and with the
        // Galerkin refresh its coarse matrices, smoothers and coarsest inverse too (where a
        // coarse block is no longer positive definite, built again below)
        if (!block_jacobi_setup()) return false;
        if (!refresh || amg_.refresh(row_ptr_.data(), col_.data(), values())) {
          ++amg_uses_;
          amg_fresh_ = false;
          amg_.refresh_finest(block_inv_.data());
          return true;
        }
      }
      amg_uses_ = 0;
      amg_stale_ = false;
      amg_fresh_ = true;
      return amg_setup();
    }
    if (!block_jacobi_setup()) return false;
    if (mixed()) to_single();
    return true;
  }

  // kPcgMixed: the matrix (and its contact part) and the preconditioner's blocks in single
  // precision, copied from the double ones of this Newton iteration
  bool mixed() const { return kind_ == LinearSolverKind::kPcgMixed; }
  void to_single() {
    auto copy = [](const Real* from, long n, Buffer<float>& to) {
      to.resize(size_t(n));
      X::for_each(n, ToSingle{from, to.data()});
    };
    copy(val_.data(), nnz_, valf_);
    copy(block_inv_.data(), 9 * nblock_, block_invf_);
    if (has_contact()) copy(contact_->val(), contact_->nnz(), cvalf_);
  }

  bool block_jacobi_setup() {
    if (has_contact()) {
      const auto& cj = *contact_;
      X::for_each(nblock_, BlockJacobiSetupSum{row_ptr_.data(), col_.data(), val_.data(),
                                               cj.row_ptr(), cj.col(), cj.val(), block_row_.data(),
                                               block_inv_.data(), block_ok_.data()});
    } else {
      X::for_each(nblock_,
                  BlockJacobiSetup{row_ptr_.data(), col_.data(), val_.data(), block_row_.data(),
                                   block_inv_.data(), block_ok_.data()});
    }
    Red4 bad{};
    X::env_reduce(1, nblock_, env_major::CountZeros{nblock_, block_ok_.data()}, &bad, scratch_);
    return bad.s0 == 0;
  }

  // kMatrixFree's block Jacobi: the blocks a column at a time from the caller's entries, then
  // inverted in place; a block that is not positive definite takes the inverse of its
  // diagonal's magnitudes instead (there is no matrix to factorize): true where none did
  bool matrix_free_blocks() {
    for (int c = 0; c < 3; ++c) {
      block_column_(c, mf_entry_.data());
      X::for_each(nblock_, MatrixFreeBlockColumn{block_row_.data(), free_dof_.data(),
                                                 mf_entry_.data(), c, block_inv_.data()});
    }
    X::for_each(nblock_,
                BlockJacobiInvertStaged{block_row_.data(), block_inv_.data(), block_ok_.data()});
    Red4 bad{};
    X::env_reduce(1, nblock_, env_major::CountZeros{nblock_, block_ok_.data()}, &bad, scratch_);
    return bad.s0 == 0;
  }
  // kMatrixFree's solve (solve's arguments): block-Jacobi CG (BiCGSTAB for a non-symmetric
  // Jacobian) on the caller's products. With no matrix to fall back on, CG that meets an
  // indefinite Jacobian (contact's) or stalls takes BiCGSTAB on the same products, and a solve
  // that stopped short of its tolerance still gives an inexact Newton direction (core/newton.h)
  // where its residual fell by kForcingMax or more, as inexact Newton's looser solves do. A
  // block replaced, a second solver or a direction short of the tolerance counts as a fallback
  bool solve_matrix_free(const Real* f, Real* dx, PhaseTimes& times, bool& fallback) {
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t0) {
      return std::chrono::duration<double>(Clock::now() - t0).count();
    };
    const auto t0 = Clock::now();
    if (!matrix_free_blocks()) fallback = true;
    times.factor += since(t0);
    auto apply = [this](const Real* x, Real* y) { apply_matrix(x, y); };
    auto precond = [this](const Real* in, Real* out) { precondition(in, out); };
    auto krylov = [&](bool cg) {
      const auto t1 = Clock::now();
      const long it0 = krylov_.iterations();
      const bool ok = cg ? krylov_.cg(nfree_, f, dx, apply, precond)
                         : krylov_.bicgstab(nfree_, f, dx, apply, precond, times.krylov_restarts);
      times.solve += since(t1);
      const long its = krylov_.iterations() - it0;
      times.linear_iters += its;
      if (!ok && krylov_.trace()) krylov_.trace_failure(cg, nfree_, its);
      return ok;
    };
    if (krylov(symmetric_)) return true;
    fallback = true;
    if (symmetric_ && krylov(false)) return true;
    return krylov_.last_relative_residual() <= kForcingMax;
  }

  // the multigrid is built again at the next set-up when its last solve failed, or took more
  // than kAmgStale times the iterations of the first solve after the last build (plus a margin)
  // (iterations counted as to kKrylovRelTol where a solve stopped at another tolerance, by the
  // decades of reduction: inexact Newton's solves stop at their own)
  void amg_track(bool ok, long its) {
    const Real t = krylov_.rel_tol();
    if (t != kKrylovRelTol)
      its = long(std::ceil(Real(its) * std::log(kKrylovRelTol) / std::log(t)));
    if (amg_fresh_) amg_base_its_ = its;
    if (!ok || its > kAmgStale * Real(amg_base_its_) + 10) amg_stale_ = true;
  }

  // the multigrid hierarchy for the current matrix (static and contact parts merged), built on
  // the host; false (the direct fallback follows) where it cannot be built
  bool amg_setup() {
    const AmgCsr a = merged_on_host();
    std::vector<int> block_row;
    block_row_.download(block_row);
    std::vector<Real> y(static_cast<size_t>(geometry_dofs_)), B;
    if (geometry_dofs_ > 0) X::to_host(y.data(), geometry_, y.size());
    const int k = rigid_near_null(plan_->free_dof, y, B);
    AmgHierarchyHost h;
    std::string why;
    AmgOptions options;
    options.trace = krylov_.trace();
    if (!build_amg(a, block_row, B, k, options, h, why)) {
      if (krylov_.trace()) std::fprintf(stderr, "slender: amg set-up: %s\n", why.c_str());
      return false;
    }
    amg_.set(h, amg_refresh_);
    return true;
  }

  // J (static and contact parts) on the host, one CSR (the union of the two patterns)
  AmgCsr merged_on_host() {
    AmgCsr out;
    out.nrow = out.ncol = nfree_;
    out.row_ptr = pattern_row_ptr();
    out.col = pattern_col();
    out.val.resize(out.col.size());
    X::to_host(out.val.data(), values(), out.val.size());
    if (!has_contact()) return out;
    return csr_add(out, 1, contact_csr_on_host(), 1, /*keep_zeros=*/true);
  }

  // out = P^-1 in (block Jacobi, or the multigrid's V-cycle)
  void precondition(const Real* in, Real* out) {
    if (kind_ == LinearSolverKind::kAmg) {
      amg_.apply(in, out, [this](const Real* x, Real* y) { apply_matrix(x, y); });
      return;
    }
    if (mixed()) {
      apply_blocks(block_invf_.data(), in, out);
    } else {
      apply_blocks(block_inv_.data(), in, out);
    }
  }
  template <class V>
  void apply_blocks(const V* inv, const Real* in, Real* out) {
    X::for_each(nblock_, BlockJacobiApplyOf<V>{block_row_.data(), inv, in, out});
  }

  // CG with block Jacobi takes the fused iteration (KrylovOn::cg_fused: the same iterates in
  // fewer launches and passes) on the device; on the host, where it measured no faster (pcg) or
  // slower (pcg-mixed: 1.2x at S9's 200k; bench/results/2026-11-30-fused-cg-epyc-2c.md), only
  // with SLENDER_FUSED_CG=1 (=0 turns it off on the device). The multigrid's V-cycle is not a
  // row's work
  bool fused_cg() const { return kind_ != LinearSolverKind::kAmg && fused_cg_; }
  // dx = J^-1 f by cg_fused (kPcgMixed: the single-precision copies)
  bool cg_fused(const Real* f, Real* dx) {
    if (mixed()) return cg_fused(f, dx, valf_.data(), cvalf_.data(), block_invf_.data());
    return cg_fused(f, dx, val_.data(), contact_values(), block_inv_.data());
  }
  template <class V>
  bool cg_fused(const Real* f, Real* dx, const V* val, const V* contact_val, const V* inv) {
    return krylov_.cg_fused(nfree_, f, dx, rows(val, contact_val), row_block_.data(),
                            block_row_.data(), inv,
                            [this](const Real* in, Real* out) { precondition(in, out); });
  }
  // the contact part's values (double), null without one
  const Real* contact_values() const { return has_contact() ? contact_->val() : nullptr; }
  // the rows of J_static + J_c: the model's part by its column runs, the pairs' by their CSR
  template <class V>
  SystemRowsOf<V> rows(const V* val, const V* contact_val) {
    const bool c = has_contact();
    return SystemRowsOf<V>{row_ptr_.data(),
                           run_ptr_.data(),
                           run_col_.data(),
                           run_len_.data(),
                           val,
                           c ? contact_->row_ptr() : nullptr,
                           c ? contact_->col() : nullptr,
                           c ? contact_val : nullptr};
  }

  // y = J x with J = J_static + J_c (kPcgMixed: their single-precision copies)
  void apply_matrix(const Real* x, Real* y) {
    if (matrix_free()) return product_(x, y);
    if (mixed()) {
      apply_csr(valf_.data(), cvalf_.data(), x, y);
    } else {
      apply_csr(val_.data(), contact_values(), x, y);
    }
  }
  template <class V>
  void apply_csr(const V* val, const V* contact_val, const Real* x, Real* y) {
    X::for_each(nfree_, SystemSpmvOf<V>{rows(val, contact_val), x, y});
  }

  LinearSolverKind kind_;
  bool symmetric_;
  bool iterative_ = false;
  int nfree_ = 0, nnz_ = 0;
  std::shared_ptr<const AssemblyPlan> plan_;  // the plan in use (its pattern on the host)
  Const<int> row_ptr_, col_, diag_slot_, slot_src_adr_, slot_src_;
  Buffer<Real> val_;
  std::unique_ptr<DirectSolver> direct_;
  bool deferred_ = false;  // (set_deferred)
  // the direct path with a contact part that adds entries: the matrix merged on X (merged_),
  // its pattern on the host (that of the direct solver's analysis); a count of the direct
  // path's patterns (a new analysis each)
  bool merged_ = false;
  std::vector<int> mrow_h_, mcol_h_;
  long pattern_version_ = 0;
  // the iterative path: the preconditioner's blocks, the Krylov solves, the contact part
  long nblock_ = 0;
  Buffer<int> block_row_, row_block_;  // the blocks' first rows, and each row's block
  Buffer<int> run_ptr_, run_col_;      // the pattern's columns in runs (core/pcg.h)
  Buffer<unsigned char> run_len_;
  bool fused_cg_ = env_switch("SLENDER_FUSED_CG", !X::kHostMemory);
  Buffer<Real> block_inv_;
  Buffer<float> valf_, block_invf_, cvalf_;  // kPcgMixed's single-precision copies
  Buffer<unsigned char> block_ok_;
  KrylovOn<X> krylov_;  // CG and BiCGSTAB (engine/krylov.h)
  AmgOn<X> amg_;        // kAmg's preconditioner
  // the multigrid's Galerkin refresh at each reuse (AmgOn::refresh), without a contact part
  // (whose pattern may have outgrown the build's). Off unless SLENDER_AMG_REFRESH=1: on the host
  // executor a refresh costs more than the iterations and builds it saves, and on a device it
  // has not run (bench/results/2026-11-30-rest-neighbour-table-xeon-2c.md)
  bool amg_refresh_ = env_switch("SLENDER_AMG_REFRESH", false);
  // its reuse: the solves since the last build, whether the last solve's hierarchy was built
  // for its matrix, whether the next set-up builds, and the first solve's iterations after a
  // build
  int amg_uses_ = 0;
  bool amg_fresh_ = false, amg_stale_ = true;
  long amg_base_its_ = 0;
  // the node positions whose rigid motions its coarse levels carry (set_geometry)
  const Real* geometry_ = nullptr;
  int geometry_dofs_ = 0;
  std::unique_ptr<contact::ContactJacobian<X>> contact_;
  Buffer<Red4> scratch_;  // the reductions' workspace
  // kMatrixFree: the caller's products and block columns, the plan's free DOFs, a column's
  // entries
  std::function<void(const Real*, Real*)> product_;
  std::function<void(int, Real*)> block_column_;
  Const<int> free_dof_;
  Buffer<Real> mf_entry_;
};

}  // namespace stepper

}  // namespace slender
