#pragma once

// The seam between BatchedSimulator's vectorized batch and the engine, as
// engine/simulator_engine.h is the Simulator's: the engine (include/slender/engine/engine.h) with
// B environments and its batched solves, run by an executor: on the CPU (make_host_batched_engine,
// host/backend/host_engine.cpp) or the GPU (make_cuda_batched_engine, kernels/cuda_engine.cu, in
// the CUDA module that backend/cuda_loader.cpp loads on first use). (Until 2026-11-29 it was the
// VectorEngine, after the vectorized engine it was first written for.)

#include <memory>
#include <string>
#include <vector>

#include "slender/engine/engine.h"

namespace slender {

class BatchedSimulatorEngine {
 public:
  virtual ~BatchedSimulatorEngine() = default;
  /// the natural-shape actions from the host or, with in_executor, from the executor's memory
  /// (a device array on the GPU)
  virtual void set_natural_curvature(const Real* k, bool in_executor) = 0;
  virtual void set_natural_twist(const Real* t, bool in_executor) = 0;
  virtual void set_natural_hinge_angle(const Real* phi, bool in_executor) = 0;
  virtual void set_natural_midedge_curvature(const Real* c, bool in_executor) = 0;
  virtual void set_natural_stretch(const Real* s, bool in_executor) = 0;
  virtual void clear_natural_shape() = 0;
  virtual void set_forces(const Real* f) = 0;
  virtual void clear_forces() = 0;
  virtual void set_fixed_targets(const Real* v) = 0;
  virtual void clear_fixed_targets() = 0;
  /// each environment's factor of each part's Young's modulus (nenv x npart)
  virtual void set_part_youngs_scale(const Real* s) = 0;
  virtual void clear_part_youngs_scale() = 0;
  /// each environment's value of signal k (nenv) in place of its time function; back to the
  /// time functions
  virtual void set_signal_values(int k, const Real* v) = 0;
  virtual void clear_signal_values() = 0;
  virtual void set_params(int env, const EnvParams& p) = 0;
  virtual const EnvParams& params(int env) const = 0;
  virtual void set_state(int env, const State& s) = 0;
  /// the environments with mask[e] set take state s (one upload, masked copies)
  virtual void reset(const std::vector<unsigned char>& mask, const State& s) = 0;
  virtual void get_state(int env, State& s) = 0;
  /// every environment's bend-twist strains (nenv x nbend x 3), computed on the executor
  virtual void bend_strains(Real* out) = 0;
  /// every environment's strains of one kind (nenv x count x width), computed on the executor
  virtual void strains(StrainKind kind, Real* out) = 0;
  /// every environment's energies by kind at its state (nenv), computed on the executor
  /// (engine/engine_queries.h) with its inputs at its own time
  virtual std::vector<Energies> energies() = 0;
  /// fixes (fix) or releases DOFs of environment env from its next step on (Engine::fix_dofs)
  virtual void fix_dofs(int env, const std::vector<int>& dofs, bool fix) = 0;
  /// environment env's held DOFs (ndof, host)
  virtual const unsigned char* fixed(int env) const = 0;
  /// the twist angles (velocity: their velocities) of environment env's edges [rad, rad/s]
  /// become `v` (nedge) now
  virtual void set_twists(int env, const Real* v, bool velocity) = 0;
  virtual VectorStepResult step(Real dt, const std::vector<unsigned char>& mask) = 0;
  /// q and u of every environment (nenv x ndof each)
  virtual void download_qu(std::vector<Real>& q, std::vector<Real>& u) = 0;
  virtual const std::vector<Real>& times() const = 0;
  /// the live q and u arrays (nenv x ndof, env-major) in the executor's memory
  virtual const Real* q_data() const = 0;
  virtual const Real* u_data() const = 0;
  /// the batched linear solver in use ("banded-lu", "banded-lu-lanes", "dense-cholesky",
  /// "dense-lu", "pcg")
  virtual std::string solver_name() const = 0;
};

/// the executor-independent wrapper; every call that reaches the executor runs with the device
/// the engine was built on current (X::OnDevice: a CUDA device, nothing on the host)
template <class X>
class BatchedSimulatorEngineOn final : public BatchedSimulatorEngine {
 public:
  BatchedSimulatorEngineOn(std::shared_ptr<const Model> model,
                           int nenv,
                           const IntegratorSpec& spec,
                           const State& initial,
                           LinearSolverKind solver)
      : device_(X::current_device()),
        nt_(std::move(model), nenv, spec, initial, solver, EngineSolve::kBatched) {}
  // (from the host)
  void set_natural_curvature(const Real* k) { set_natural_curvature(k, false); }
  void set_natural_twist(const Real* t) { set_natural_twist(t, false); }
  void set_natural_hinge_angle(const Real* phi) { set_natural_hinge_angle(phi, false); }
  void set_natural_midedge_curvature(const Real* c) { set_natural_midedge_curvature(c, false); }
  void set_natural_stretch(const Real* s) { set_natural_stretch(s, false); }
  void set_natural_curvature(const Real* k, bool in_executor) override {
    const typename X::OnDevice on(device_);
    nt_.set_natural_curvature(k, in_executor);
  }
  void set_natural_twist(const Real* t, bool in_executor) override {
    const typename X::OnDevice on(device_);
    nt_.set_natural_twist(t, in_executor);
  }
  void set_natural_hinge_angle(const Real* phi, bool in_executor) override {
    const typename X::OnDevice on(device_);
    nt_.set_natural_hinge_angle(phi, in_executor);
  }
  void set_natural_midedge_curvature(const Real* c, bool in_executor) override {
    const typename X::OnDevice on(device_);
    nt_.set_natural_midedge_curvature(c, in_executor);
  }
  void set_natural_stretch(const Real* s, bool in_executor) override {
    const typename X::OnDevice on(device_);
    nt_.set_natural_stretch(s, in_executor);
  }
  void clear_natural_shape() override {
    const typename X::OnDevice on(device_);
    nt_.clear_natural_shape();
  }
  void set_forces(const Real* f) override {
    const typename X::OnDevice on(device_);
    nt_.set_forces(f);
  }
  void clear_forces() override {
    const typename X::OnDevice on(device_);
    nt_.clear_forces();
  }
  void set_fixed_targets(const Real* v) override {
    const typename X::OnDevice on(device_);
    nt_.set_fixed_targets(v);
  }
  void set_part_youngs_scale(const Real* s) override { nt_.set_part_youngs_scale(s); }
  void clear_part_youngs_scale() override { nt_.clear_part_youngs_scale(); }
  void set_signal_values(int k, const Real* v) override { nt_.set_signal_values(k, v); }
  void clear_signal_values() override { nt_.clear_signal_values(); }
  void clear_fixed_targets() override {
    const typename X::OnDevice on(device_);
    nt_.clear_fixed_targets();
  }
  void set_params(int env, const EnvParams& p) override {
    const typename X::OnDevice on(device_);
    nt_.set_params(env, p);
  }
  const EnvParams& params(int env) const override { return nt_.params(env); }
  // the calls that change the state end with the executor's work done, so that live views of
  // it (DLPack, on any consumer stream) never see a step, reset or upload half-way
  void set_state(int env, const State& s) override {
    const typename X::OnDevice on(device_);
    nt_.set_state(env, s);
    X::sync();
  }
  void reset(const std::vector<unsigned char>& mask, const State& s) override {
    const typename X::OnDevice on(device_);
    nt_.reset(mask, s);
    X::sync();
  }
  void get_state(int env, State& s) override {
    const typename X::OnDevice on(device_);
    nt_.get_state(env, s);
  }
  void bend_strains(Real* out) override {
    const typename X::OnDevice on(device_);
    nt_.bend_strains(out);
  }
  void strains(StrainKind kind, Real* out) override {
    const typename X::OnDevice on(device_);
    nt_.strains(kind, out);
  }
  std::vector<Energies> energies() override {
    const typename X::OnDevice on(device_);
    return nt_.energies();
  }
  void fix_dofs(int env, const std::vector<int>& dofs, bool fix) override {
    const typename X::OnDevice on(device_);
    nt_.fix_dofs(env, dofs, fix);
    X::sync();
  }
  const unsigned char* fixed(int env) const override { return nt_.fixed(env); }
  void set_twists(int env, const Real* v, bool velocity) override {
    const typename X::OnDevice on(device_);
    nt_.set_twists(env, v, velocity);
    X::sync();
  }
  VectorStepResult step(Real dt, const std::vector<unsigned char>& mask) override {
    const typename X::OnDevice on(device_);
    VectorStepResult r = nt_.step(dt, mask);
    X::sync();
    return r;
  }
  void download_qu(std::vector<Real>& q, std::vector<Real>& u) override {
    const typename X::OnDevice on(device_);
    const size_t n = size_t(nt_.nenv()) * nt_.model().ndof;
    q.resize(n);
    u.resize(n);
    X::download_at(nt_.q(), 0, q.data(), n);
    X::download_at(nt_.u(), 0, u.data(), n);
  }
  const std::vector<Real>& times() const override { return nt_.times(); }
  const Real* q_data() const override { return nt_.q().data(); }
  const Real* u_data() const override { return nt_.u().data(); }
  std::string solver_name() const override { return nt_.solver_name(); }

 private:
  int device_;
  Engine<X> nt_;
};

std::unique_ptr<BatchedSimulatorEngine> make_host_batched_engine(std::shared_ptr<const Model> model,
                                                                 int nenv,
                                                                 const IntegratorSpec& spec,
                                                                 const State& initial,
                                                                 LinearSolverKind solver);
std::unique_ptr<BatchedSimulatorEngine> make_cuda_batched_engine(std::shared_ptr<const Model> model,
                                                                 int nenv,
                                                                 const IntegratorSpec& spec,
                                                                 const State& initial,
                                                                 LinearSolverKind solver);

}  // namespace slender
