#pragma once

// The Simulator's side of the seam (engine/simulator_engine.h): the engine (engine/engine.h) with
// one environment over an executor X, its linear solve one system per Newton iteration
// (engine/system_solve.h: X's direct sparse solver, or block-Jacobi CG / BiCGSTAB on X), the
// front end's inputs taken each step, and contact between bodies, the caller's energies and
// force callback. Executors (engine/executor.h): the host one (host/backend/host_executor.h; the
// CPU backend's stepper is made in host/backend/host_engine.cpp) and the CUDA one
// (kernels/cuda_executor.cuh; the CUDA backend's, in kernels/cuda_engine.cu). Every call runs
// with the device current at construction current again (X::OnDevice: a CUDA device, nothing on
// the host).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "slender/engine/engine.h"
#include "slender/engine/simulator_engine.h"

namespace slender {

namespace stepper {

template <class X>
class SimulatorEngineOn final : public SimulatorEngine {
 public:
  SimulatorEngineOn(std::shared_ptr<const Model> model,
                    const IntegratorSpec& spec,
                    LinearSolverKind kind)
      : device_(X::current_device()),
        // the state's arrays come from the owner's upload_state
        engine_(model, 1, spec, initial_state(*model), kind, EngineSolve::kSystem) {}

  StepReport step(const StepInputs& in, PhaseTimes& times, StepWarnings& warn) override {
    const typename X::OnDevice on(device_);
    return engine_.step_with(in, times, warn);
  }
  void residual(const StepInputs& in,
                const Real* y,
                std::vector<Real>& f,
                std::vector<Real>* jacobian) override {
    const typename X::OnDevice on(device_);
    engine_.residual(in, y, f, jacobian);
  }
  void set_force_callback(ForceCallback fn, bool symmetric) override {
    const typename X::OnDevice on(device_);
    engine_.set_force_callback(std::move(fn), symmetric);
  }
  void upload_state(const State& s) override {
    const typename X::OnDevice on(device_);
    engine_.set_arrays(0, s);
  }
  void download_state(State& s) override {
    const typename X::OnDevice on(device_);
    engine_.get_arrays(0, s);
  }
  void set_fixed(const unsigned char* fixed, const std::vector<int>& stop) override {
    const typename X::OnDevice on(device_);
    engine_.set_fixed(0, fixed);
    engine_.stop(0, stop);
  }
  void strains(StrainKind kind, Real* out) override {
    const typename X::OnDevice on(device_);
    engine_.strains(kind, out);
  }
  Energies energies(const StepInputs& in) override {
    const typename X::OnDevice on(device_);
    return engine_.energies(in)[0];
  }
  void reactions(const StepInputs& in, Real* out) override {
    const typename X::OnDevice on(device_);
    engine_.reactions(in, out);
  }
  void shell_bending_energy_density(const StepInputs& in, Real* out) override {
    const typename X::OnDevice on(device_);
    engine_.shell_bending_energy_density(in, out);
  }
  void newmark_start(const StepInputs& in) override {
    const typename X::OnDevice on(device_);
    engine_.newmark_start(in);
  }
  std::string solver_name() const override { return engine_.solver_name(); }
  bool inexact_newton() const override { return engine_.inexact_newton(); }
  void set_phase_timing(bool on) override { engine_.set_phase_timing(on); }
  void set_params(const EnvParams& p) override {
    const typename X::OnDevice on(device_);
    engine_.set_params(0, p);
  }
  void find_contacts(Real dt) override {
    const typename X::OnDevice on(device_);
    engine_.find_contacts(dt);
  }

 private:
  int device_;  // the device current at construction, current again in every call
  Engine<X> engine_;
};

}  // namespace stepper

}  // namespace slender
