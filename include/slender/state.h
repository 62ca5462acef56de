#pragma once

// State: everything that changes in time, per environment (env-major: q[env * ndof + i]).
// B = 1 is a single scene; the batched issue widens nenv.

#include <string>
#include <vector>

#include "slender/core/hd.h"
#include "slender/stencils/model_arrays.h"

namespace slender {

struct Model;

struct State {
  int nenv = 1;
  int ndof = 0;
  Real time = 0;  ///< simulated time [s]
  long step = 0;  ///< completed steps
  // q, u, a, edge_d1, edge_t, bend_ref_twist, sedge_tau0, each (nenv x count x width): the one
  // list in include/slender/stencils/model_arrays.h
  SLENDER_STATE_ARRAYS(SLENDER_ARRAY_MEMBER)

  /// the DOFs held now (ndof, 1 = fixed) where they differ from the model's (Model::dof_fixed):
  /// a boundary event or a fix / release call changed them; empty = the model's set
  std::vector<unsigned char> dof_fixed;
  /// how many of the scene's boundary events (Model::event_time, in order) have been applied
  int events_done = 0;

  // warning counters (as MuJoCo keeps them): they never stop a run, but a run reports them
  long warn_degenerate = 0;       ///< stencils evaluated on a zero-length edge
  long warn_linear_fallback = 0;  ///< linear solves that fell back (docs/failures.md)
  long warn_line_search = 0;      ///< line searches that hit their smallest step
};

/// The state at t = 0 of one environment: initial positions, zero twist, initial velocities,
/// initial reference frames.
State initial_state(const Model& m);

/// Whether a state's arrays (one environment's) have the model's sizes (dof_fixed: empty or
/// ndof) and its count of applied events is within the model's.
bool state_fits(const Model& m, const State& s);
/// Throws slender::Error naming `who` (such as "state" or "environment 2's state"), the array
/// and the index of the first value of s (its time, then its arrays) that is NaN or infinite.
void check_state_finite(const State& s, const std::string& who);

/// The held DOFs of a state (ndof): its own set, or the model's.
const unsigned char* state_fixed(const Model& m, const State& s);
/// Stores the held DOFs `fixed` (ndof) in s: empty where they are the model's set.
void set_state_fixed(const Model& m, const unsigned char* fixed, State& s);

}  // namespace slender
