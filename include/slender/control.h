#pragma once

// Feedback control on natural strains (seed 001 §IV-10, §VII; docs/control.md): proportional-
// integral controllers that measure the strains of a part's springs through the engine's strain
// queries (Simulator::strains, BatchedSimulator::strains) and set their natural strains through
// the simulators' natural-shape input, before every step. Control logic only: the strains are
// the engine's, the natural values the engine's input; nothing here evaluates physics.
//
// Per spring k of a controller, at a step from t to t + dt (units: ControllerSpec):
//   y     = the measured strain, smoothed along the springs (spatial_smoothing passes)
//   y_f  <- y_f + dt / (tau_f + dt) (y - y_f)         first-order filter (y_f = y at the start)
//   e     = r(t) - y_f
//   z'    = z + ki e dt                               integral term
//   v     = b + kp e + z',  b = r(t + dt) (or the rest value: feedforward off) within the limits
//   u     = clamp(v, limits), then |u - u_prev| <= rate_limit dt
//   z     = z' (none); z unless |v - u| > 0 and ki e pushes further into the limit (clamp);
//           z' + dt / T_t (u - v) (back-calculation; T_t = tracking_time, else kp / ki (at
//           least dt), else dt)
// The natural value of the spring over the step is u (a curvature or twist times the spring's
// Voronoi length, a stretch 1 + u, a hinge angle u). A step that fails leaves the controller
// as it was (compute, then commit when the step converged).

#include <memory>
#include <string>
#include <vector>

#include "slender/core/status.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace slender {

/// One environment's measured strains as the engine's strain queries give them; null where no
/// controller reads that kind (StrainController::reads).
struct StrainReadings {
  const Real* bend_twist = nullptr;  ///< kappa1, kappa2, tau of every bend stencil (nbend x 3)
  const Real* stretch = nullptr;     ///< l / l_bar - 1 of every rod edge (nedge)
  const Real* hinge = nullptr;       ///< angle of every hinge [rad] (nhinge)
};

/// The controllers of a simulator (one environment) or of a batch (nenv environments, each with
/// its own state, gains and references). Arrays of a controller c are env-major,
/// (nenv x springs(c)), in the spring's unit (ControllerSpec).
class StrainController {
 public:
  /// `specs` on `model`'s springs for nenv environments. Throws InputError naming the entry's
  /// file, line and field for a controller that takes no spring, a profile or gains of another
  /// size than 1 (gains) or the number of springs, or a spring that another controller or an
  /// actuation drives too.
  StrainController(std::shared_ptr<const Model> model,
                   std::vector<ControllerSpec> specs,
                   int nenv = 1);
  ~StrainController();
  StrainController(const StrainController&) = delete;
  StrainController& operator=(const StrainController&) = delete;

  int size() const;  ///< controllers
  int nenv() const { return nenv_; }
  const ControllerSpec& spec(int c) const;
  /// the controller's name (its spec's, or controller<c>)
  const std::string& name(int c) const;
  /// the index of the controller named `name`, or -1
  int find(const std::string& name) const;
  int springs(int c) const;
  /// the model index of each spring: bend stencil, rod edge or hinge (springs(c)), ascending
  const std::vector<int>& spring_index(int c) const;
  /// whether some controller reads strains of this kind
  bool reads(StrainKind kind) const;
  /// whether some controller sets natural values of this kind of ActuatedSpring::component:
  /// 0, 1 (kappa1, kappa2), 2 (twist), 3 (hinge angle), kActuatedStretch
  bool drives(int component) const;

  /// environment env's gains of controller c: kp [-] and ki [1/s], each one value (every
  /// spring) or one per spring, >= 0 and finite; throws slender::Error otherwise
  void set_gains(int c, int env, const std::vector<Real>& kp, const std::vector<Real>& ki);
  const std::vector<Real>& kp(int c) const;  ///< (nenv x springs)
  const std::vector<Real>& ki(int c) const;
  /// every environment's reference values of controller c (nenv x springs(c), finite) in place
  /// of its reference function, from the next step until clear_reference
  void set_reference(int c, const Real* values);
  /// environment env's reference values of controller c (springs(c)), the others unchanged
  void set_reference(int c, int env, const Real* values);
  /// back to the reference function: every environment's, or env's
  void clear_reference(int c);
  void clear_reference(int c, int env);
  /// the reference of spring k of controller c in environment env at time t
  Real reference_at(int c, int env, int k, Real t) const;

  /// environment env's controllers back to their start: no filter history, no integral, the
  /// command the rest value (gains and references stay)
  void reset(int env);
  /// environment env's commands for a step from t to t + dt from the strains y at t: held
  /// apart (pending) until commit(env)
  void compute(int env, Real t, Real dt, const StrainReadings& y);
  /// the last compute of env becomes the controllers' state (its step converged)
  void commit(int env);
  /// the commands in effect written into env's natural values of the controlled springs:
  /// those of the last compute (pending) or the committed ones
  void apply(int env, NaturalShape& shape, bool pending) const;

  // the committed state (nenv x springs(c))
  const std::vector<Real>& command(int c) const;    ///< u: the natural strain set
  const std::vector<Real>& error(int c) const;      ///< e = r(t) - y_f of the last update
  const std::vector<Real>& reference(int c) const;  ///< r(t) of the last update
  const std::vector<Real>& measured(int c) const;   ///< y_f, the filtered measurement
  const std::vector<Real>& integral(int c) const;   ///< z, the integral term of the command
  /// 1 where the last command was limited (its limits or its rate)
  const std::vector<unsigned char>& limited(int c) const;
  /// the time of env's last committed update (the start of its step) [s]; -1: none yet
  Real time(int env) const { return time_[size_t(env)]; }

  /// environment env's committed state as plain values, for checkpoints (checkpoint.h): its
  /// time, then per controller whether it has started, then per spring its filtered
  /// measurement, integral, command, error, reference and limited flag (0 or 1); state_size()
  /// values. Gains and references set from code are the caller's, as for the simulator
  size_t state_size() const;
  void save_state(int env, Real* out) const;
  /// the values of save_state back into environment env (its pending compute dropped); throws
  /// slender::Error for a value that is not finite or a flag that is not 0 or 1, and then
  /// leaves the controllers as they were
  void load_state(int env, const Real* values);
  /// controllers.csv's columns after the time: per controller NAME_error_rms, then per spring
  /// j (in spring_index order) NAME_command_j and NAME_error_j
  std::vector<std::string> csv_columns() const;
  /// their values for env at time t with the strains y at t: the commands in effect and the
  /// errors r(t) - y (unfiltered)
  void csv_row(int env, Real t, const StrainReadings& y, std::vector<Real>& row) const;

 private:
  struct Ctl;  // one controller: its springs, their units and rest values, state per env
  Real measure(const Ctl& c, int k, const StrainReadings& y) const;
  std::shared_ptr<const Model> model_;
  int nenv_ = 1;
  std::vector<Ctl> ctl_;
  std::vector<Real> time_, time_pending_;
};

}  // namespace slender
