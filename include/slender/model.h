#pragma once

// Model: the immutable, shared description of a structure — topology, DOF map, stencil index
// arrays, rest quantities, stiffnesses, masses, loads and the Jacobian's sparsity pattern.
// Arrays are flat (structure of arrays) and named <object>_<field>; each carries its shape.
//
// DOF order (seed 000, eq. 1): q = [x_1 .. x_N, theta^1 .. theta^E]; node i owns q[3i .. 3i+2],
// edge e owns q[3N + e]. Shell mid-edge DOFs (xi) will follow the twists.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "slender/scene.h"
#include "slender/stencils/families.h"
#include "slender/stencils/model_arrays.h"

namespace slender {

class UserEnergy;  // stencils/user_energy.h

/// A point load resolved to a global node.
struct PointLoad {
  int node;
  Vec3 force;         ///< [N]
  TimeFunction time;  ///< F(t) = force * time(t)
};

/// Evaluates a load's time function at t.
Real eval_time_function(const TimeFunction& f, Real t);
/// The same with an extra phase added to a sine's argument [rad] (other kinds ignore it).
Real eval_time_function(const TimeFunction& f, Real t, Real phase);
struct Model;
/// Every part's Young's modulus scale 1 + s(t) at time t (npart; 1 where none is given); throws
/// Error naming the part when one is not positive.
std::vector<Real> part_youngs_scales(const Model& m, Real t);

struct Model;
/// The values of the DOFs the scene's motions move (Model::motion_dof) at time t (nmoved).
void motion_targets(const Model& m, Real t, Real* out);
/// The scene's boundary events (Model::event_*) due before a step of size dt from time t,
/// applied in order to the held-DOF mask `fixed` (ndof): those after the first `done` with
/// event_time <= t + 1e-6 dt. `done` counts them on; the DOFs they leave fixed that were not are
/// appended to `stopped` (when given): their velocity is to be set to zero. Returns whether any
/// event was due.
bool apply_boundary_events(
    const Model& m, Real t, Real dt, int& done, unsigned char* fixed, std::vector<int>* stopped);
/// Fixes (fix = true) or releases the given DOFs in the held-DOF mask `fixed` (ndof); the DOFs
/// that become fixed are appended to `stopped` (when given). Throws slender::Error for a DOF out
/// of range or a release of a DOF that cannot be released (Model::dof_locked).
void set_dofs_fixed(const Model& m,
                    const std::vector<int>& dofs,
                    bool fix,
                    unsigned char* fixed,
                    std::vector<int>* stopped);
/// Adds every point load at time t, times `factor` (a static step's load factor), to f (ndof):
/// f[3 node + k] += (factor F(t)) force[k], the loads in the model's order. The one evaluation of
/// the point loads of every engine's step.
void add_point_loads(const Model& m, Real t, Real factor, Real* f);

/// The model's signals at time t times `factor` (a static step's load factor) into out
/// (kMaxSignals values, 0 past the model's): signal k is factor * gain_k * s_k(t)
/// (Model::signal_gain, Model::signals). Where `value` is given and set[k] != 0, signal k is
/// factor * value[k] instead: the caller's value of that load (an action: Simulator::
/// set_load_value, BatchedSimulator::set_load_values; value and set of kMaxSignals entries).
void eval_signals(const Model& m,
                  Real t,
                  Real factor,
                  Real* out,
                  const Real* value = nullptr,
                  const unsigned char* set = nullptr);
/// The signal of entry `entry` (0-based, in the scene's order) of the family scene field
/// forces.<field> (Model::signal_field, signal_entry): the load an action sets. Throws
/// slender::Error naming the field and its entries when no entry of that field has a signal.
int load_signal(const Model& m, const std::string& field, int entry);

/// The scene fields of the families that keep their own tables (forces.<field>), in family
/// order: what the scene reader accepts and checks.
std::vector<FamilySceneInfo> family_scene_fields();

/// For a family's build (families.h): the index of the part that entry `in` names in `field`;
/// throws InputError naming the scene file, line and field when the part does not exist.
int input_part(const Model& m, const FamilyInput& in, const char* field);
/// For a family's build: the signal of entry `in`'s time function `field` (added to
/// m.signals; a constant 1 when the entry gives none), times `gain` (Model::signal_gain: a
/// family whose rows are per unit of an amplitude, such as a pressure chamber's per pascal,
/// gives the amplitude; 1 for the others). A signal is its gain times its function times the
/// static mode's load factor, so that a family's load ramps as gravity and the point loads do.
/// Throws InputError past kMaxSignals.
int input_signal(Model& m, const FamilyInput& in, const char* field, Real gain = 1);
/// For a family's build: the value of number `field` of entry `in`, or `fallback`.
Real input_number(const Model& m, const FamilyInput& in, const char* field, Real fallback);
/// For a family's build: the 3-vector `field` of entry `in` (FieldKind::kVec3), or `fallback`.
Vec3 input_vec3(const Model& m, const FamilyInput& in, const char* field, const Vec3& fallback);
/// For a family's build: the numbers of list `field` of entry `in` (FieldKind::kNumbers; one
/// number given alone is a list of one), or `fallback`.
std::vector<Real> input_numbers(const Model& m,
                                const FamilyInput& in,
                                const char* field,
                                const std::vector<Real>& fallback);
/// For a family's build: the string `field` of entry `in` (FieldKind::kWord), or `fallback`;
/// the family checks it against its choices.
std::string input_word(const Model& m,
                       const FamilyInput& in,
                       const char* field,
                       const std::string& fallback);
/// Throws InputError naming entry `in`'s scene file, line and `field`.
[[noreturn]] void input_error(const Model& m,
                              const FamilyInput& in,
                              const char* field,
                              const std::string& message);

/// The largest natural turning angle of a rod at a node [rad]: 0.9 pi. A scene's natural
/// curvature kappa [1/m] turns the rod by |kappa| dl at an interior node (dl: the node's Voronoi
/// length, the mean of its two edges' lengths); a bend-twist stencil's discrete natural
/// curvature (kappa1, kappa2), as the batch's actions and the actuation callbacks give it, by
/// phi = 2 atan(|kappa| / 2). At pi the rod folds back on itself: a natural shape near it is no
/// rod's, and its steps do not converge. Larger values are refused up front.
constexpr Real kMaxNaturalTurn = Real(0.9) * Real(3.14159265358979323846);
/// The largest norm of a stencil's discrete natural curvature: 2 tan(kMaxNaturalTurn / 2), 12.6.
Real max_natural_kappa_bar();

/// The ActuatedSpring::component of a rod edge's natural stretch.
constexpr int kActuatedStretch = 7;

/// One driven natural value: spring `index` of a family, rest value, spatial phase.
struct ActuatedSpring {
  int actuation;    ///< index into scene.actuation
  int index;        ///< hinge, bend-twist stencil, mid-edge triangle or rod edge
  int component;    ///< 0, 1: kappa1, kappa2; 2: twist; 3: hinge angle; 4 + k: the mid-edge
                    ///< triangle's curvature component k; kActuatedStretch: a rod edge's stretch
  Real scale;       ///< converts the amplitude to the stencil's value (Voronoi length, 1, or the
                    ///< component of a unit curvature)
  Real phase;       ///< a sine's spatial phase [rad]
  int column = -1;  ///< its column of the actuation's series (-1: none)
};

/// Where time t falls in an actuation's time series: its row and weight w, each column's
/// value being series_value(s, row, w, k) (w = 0 at and beyond the ends: the end rows held).
void series_position(const ActuationSeries& s, Real t, int& row, Real& w);
/// column k's value at (row, w) of series_position: v[row][k] + w (v[row + 1][k] - v[row][k])
inline Real series_value(const ActuationSeries& s, int row, Real w, int k) {
  const Real a = s.value[size_t(row) * size_t(s.columns) + size_t(k)];
  if (w == 0) return a;
  const Real b = s.value[(size_t(row) + 1) * size_t(s.columns) + size_t(k)];
  return a + w * (b - a);
}

/// What actuation `act` adds to spring `a`'s natural value at time t: envelope(t) amplitude
/// scale s(t), s the spring's series column at (row, w) (series_position of act.series at t) or
/// the time function at the spring's phase.
inline Real actuated_value(
    const ActuationSpec& act, const ActuatedSpring& a, Real t, int row, Real w) {
  const Real envelope = act.ramp_in > 0 ? (t / act.ramp_in < 1 ? t / act.ramp_in : Real(1)) : 1;
  const Real st = a.column >= 0 ? series_value(act.series, row, w, a.column)
                                : eval_time_function(act.time, t, a.phase);
  return envelope * act.amplitude * a.scale * st;
}

/// The natural shape the stencils see at an evaluation time: the model's rest values with the
/// scene's actuation applied; an actuation callback may change it further (views into the
/// simulator, valid during the call).
struct NaturalShape {
  Real* bend_kappa_bar;  ///< discrete natural curvatures kappa1, kappa2 [-] (nbend x 2)
  Real* bend_tau_bar;    ///< natural twists [rad]                          (nbend)
  Real* hinge_phi_bar;   ///< natural hinge angles [rad]                    (nhinge)
  int nbend, nhinge;
  /// actuated natural curvature of the mid-edge triangles, components along each triangle's
  /// edge normals [1/m] (nmid x 3; 0 at rest): midedge_curvature_components gives them for a
  /// curvature tensor
  Real* mid_kappa_bar;
  int nmid;
  /// natural stretch of every rod edge [-] (nedge; 1 at rest): the edge's natural length is its
  /// rest length (Model::edge_l_bar) times this; each value finite and positive
  Real* edge_stretch_bar;
  int nedge;
};
/// The natural value a spring's component drives (ActuatedSpring::component, index): kappa1 or
/// kappa2 (0, 1), the twist (2), the hinge angle (3), the rod edge's stretch (kActuatedStretch),
/// else mid-edge curvature component - 4 of triangle index: the one place that maps them
inline Real& natural_value(NaturalShape& s, int component, int index) {
  switch (component) {
    case 0:
    case 1:
      return s.bend_kappa_bar[2 * size_t(index) + size_t(component)];
    case 2:
      return s.bend_tau_bar[index];
    case 3:
      return s.hinge_phi_bar[index];
    case kActuatedStretch:
      return s.edge_stretch_bar[index];
    default:
      return s.mid_kappa_bar[3 * size_t(index) + size_t(component - 4)];
  }
}

/// The scene's actuation at time t on a natural shape: every actuated spring's component
/// (Model::actuated) set to the model's rest value plus the sum of its actuations' values at t
/// (actuated_value, in the order of Model::actuated); the other values are left as they are.
/// Throws slender::Error naming the actuation's file, line and field where a natural stretch
/// would not be finite and positive. The one computation of the scene's actuation: the
/// Simulator's and the vectorized batch's (engine/engine_inputs.h, per environment at its own
/// time). `row`, `w`: scratch (series positions, one per actuation).
void apply_scene_actuation(
    const Model& m, Real t, NaturalShape& shape, std::vector<int>& row, std::vector<Real>& w);

/// Free-DOF CSR pattern of the Newton Jacobian and, for every stored value, the list of
/// contributions (indices into the concatenated local-Hessian pool) summed in a fixed order.
struct AssemblyPlan {
  int nfree = 0;                  ///< number of free DOFs
  std::vector<int> dof_free;      ///< free index of each DOF, -1 if fixed   (ndof)
  std::vector<int> free_dof;      ///< DOF of each free index                (nfree)
  std::vector<int> row_ptr;       ///< CSR row pointers, full symmetric      (nfree + 1)
  std::vector<int> col;           ///< CSR column indices                    (nnz)
  std::vector<int> diag_slot;     ///< slot of each free DOF's diagonal      (nfree)
  std::vector<int> slot_src_adr;  ///< first source of each slot             (nnz + 1)
  std::vector<int> slot_src;      ///< index into the local-Hessian pool     (nsrc)
  std::vector<int> row_src_adr;   ///< first gradient source of each free DOF (nfree + 1)
  std::vector<int> row_src;       ///< index into the local-gradient pool    (ngsrc)
  long hess_pool = 0;             ///< length of the local-Hessian pool (sum of n_k * dofs_k^2)
  long grad_pool = 0;             ///< length of the local-gradient pool (sum of n_k * dofs_k)
  long energy_pool = 0;           ///< number of stencils of all families
  long h_off[kNumFamilies] = {};  ///< each family's offset in the Hessian pool
  long g_off[kNumFamilies] = {};  ///< each family's offset in the gradient pool
  long e_off[kNumFamilies] = {};  ///< each family's offset in the energy and flag pools
  /// each of the model's user energies' offsets in the pools (after the families that keep
  /// their layout, before the contact pairs)
  std::vector<long> user_h_off, user_g_off, user_e_off;
  int nnz() const { return int(col.size()); }
};

struct Model {
  // counts
  int nnode = 0;  ///< nodes
  int nedge = 0;  ///< rod edges (each has a twist DOF)
  int nbend = 0;  ///< bend-twist stencils (pairs of edges meeting at a node)
  int ndof = 0;   ///< 3 nnode + nedge
  int npart = 0;  ///< parts (rods, networks)

  // shells: triangles, their unique edges, hinges
  int ntri = 0;    ///< shell triangles
  int nsedge = 0;  ///< shell edges (each unique edge of the triangles)
  int nhinge = 0;  ///< hinges (interior shell edges of hinge-bending parts)
  // mid-edge bending (seed 000 §3.3.2): one xi DOF per edge of a mid-edge part, after the twists
  int nxi = 0;   ///< xi DOFs
  int nmid = 0;  ///< mid-edge bending triangles

  // the per-element arrays (nodes, rod edges, bend-twist stencils, shells, DOFs, parts), each
  // of count x width values: the one list in include/slender/stencils/model_arrays.h
  SLENDER_VIEW_ARRAYS(SLENDER_ARRAY_MEMBER)
  SLENDER_HOST_ARRAYS(SLENDER_ARRAY_MEMBER)
  /// each family's own rows, by Family (stencils/family_table.h): empty for the families that
  /// read the arrays above
  std::array<FamilyTable, kMaxFamilies> tables;
  /// the time functions the family tables refer to by index (at most kMaxSignals); their values
  /// at the evaluation time reach the stencils as EvalView::signal (set_signals)
  std::vector<TimeFunction> signals;
  /// each signal's amplitude (input_signal's gain; 1 for most families), its family's scene
  /// field and the index of its entry among that field's entries (load_signal)
  std::vector<Real> signal_gain;
  std::vector<std::string> signal_field;
  std::vector<int> signal_entry;

  // loads
  Vec3 gravity = Vec3{{0, 0, 0}};      ///< [m/s^2]
  Real viscosity = 0;                  ///< eta [Pa s]
  Real mass_damping = 0;               ///< alpha [1/s]
  bool stiffness_damping = false;      ///< some part has Rayleigh stiffness damping (beta > 0)
  bool kelvin_voigt = false;           ///< some part has Kelvin-Voigt damping (eta > 0)
  bool mass_damping_per_part = false;  ///< some part gives its own alpha (dof_mass_damping)
  /// parts whose Young's modulus follows a time function (PartSpec::youngs_time): their index
  /// and function; empty: every modulus is constant
  std::vector<int> youngs_time_part;
  std::vector<TimeFunction> youngs_time;
  Real buoyancy_density = 0;     ///< density of the surrounding medium for buoyancy [kg/m^3]
  Real drag_density = 0;         ///< rho_med of aerodynamic drag on shells [kg/m^3]
  Real drag_coefficient = 0;     ///< C_D of aerodynamic drag [-]
  Real rft_tangential = 0;       ///< RFT drag per length along a rod edge [N s/m^2]
  Real rft_normal = 0;           ///< RFT drag per length across a rod edge [N s/m^2]
  ContactSpec contact;           ///< rod and shell contact settings
  Real contact_stiffness = 0;    ///< k_c of rod and shell contact in use [N/m]
  int nmaterial = 0;             ///< materials of the scene
  std::vector<Real> contact_mu;  ///< friction coefficient of each pair of materials (nmat^2)
  /// rest length of rod between edges a and b of one chain part (the shorter way round a
  /// closed one), or -1 if they are not on one chain
  Real rod_gap(int a, int b) const;
  GroundSpec ground;                 ///< the ground, if any (normal made unit)
  Real ground_stiffness = 0;         ///< k_c in use [N/m] (automatic: the heaviest node's)
  Real ground_stiffness_per_kg = 0;  ///< automatic: k_c per kg of a node's mass, else 0
  /// whether the Newton Jacobian may be non-symmetric (drag, friction): then it is solved by LU.
  /// Each family says when it is (its kTraits.symmetric, its binding's symmetric(model)).
  /// some node has an added mass (forces.added_mass; node_added_mass, in dof_mass)
  bool added_mass = false;
  bool has_added_mass() const { return added_mass; }
  bool nonsymmetric() const {
    bool any = false;
    for_each_family([&](auto binding, Family f, long) {
      any = any || !family_symmetric<decltype(binding)>(*this, f);
    });
    return any;
  }
  /// whether any force without a potential acts through friction (ground or contact)
  bool friction() const { return (ground.enabled && ground.friction > 0) || contact_friction(); }
  /// whether any pair of bodies in contact has friction
  bool contact_friction() const {
    if (!contact.enabled) return false;
    for (Real mu : contact_mu)
      if (mu > 0) return true;
    return false;
  }
  /// friction coefficient between parts a and b
  Real part_mu(int a, int b) const {
    return contact_mu[size_t(part_material[a]) * nmaterial + part_material[b]];
  }
  std::vector<PointLoad> point_loads;

  // prescribed motion (the scene's motions): the DOFs they move, ascending, each one's value at
  // time t being motion_base + s(t) motion_amount with s the time function of its motion
  std::vector<TimeFunction> motion_time;  ///< (nmotion)
  std::vector<int> motion_dof;            ///< (nmoved)
  std::vector<int> motion_of;             ///< the motion of each moved DOF (nmoved)
  std::vector<Real> motion_base;          ///< (nmoved)
  std::vector<Real> motion_amount;        ///< (nmoved)
  std::vector<int> dof_motion_slot;       ///< index in motion_dof of each DOF, -1 if unmoved (ndof)
  std::vector<int> fixed_dof;             ///< the fixed DOFs, ascending (nfixed)
  std::vector<int> dof_fixed_slot;        ///< index in fixed_dof of each DOF, -1 if free (ndof)
  // the DOFs fixed at t = 0 are dof_fixed; which are fixed later is the state's (State::
  // dof_fixed), changed by the scene's boundary events and the front ends' fix / release calls
  /// 1 where a DOF cannot be released: a clamp at a node holds it (the ghost node and edge and
  /// the clamped node), or two_d does (every y and twist)   (ndof)
  std::vector<unsigned char> dof_locked;
  // the scene's boundary events (boundary.events) by time (in the scene's order at one time):
  // each one's time, whether it releases (else fixes) its DOFs, and its DOFs, ascending
  std::vector<Real> event_time;              ///< [s] (nevent)
  std::vector<unsigned char> event_release;  ///< (nevent)
  std::vector<int> event_dof_adr;  ///< first entry of each event in event_dof (nevent + 1)
  std::vector<int> event_dof;      ///< the events' DOFs
  /// the initial twist angle of each rod edge [rad] (nedge): the twist DOFs of the initial state
  /// (PartSpec::initial_twist_angle; its velocity is in dof_u0)
  std::vector<Real> edge_theta0;

  // parts, for output and for resolving references
  std::vector<std::string> part_name;  ///< (npart)
  std::vector<int> part_node_adr;      ///< first entry in part_node of each part (npart + 1)
  std::vector<int> part_node;          ///< global node of each part-local node
  std::vector<int> part_edge_adr;      ///< first entry in part_edge of each part (npart + 1)
  std::vector<int> part_edge;          ///< global edge of each part-local edge

  /// index of the bend stencil that pairs part edges (k-1, k) of a rod, or -1
  std::vector<int> part_bend;  ///< parallel to part_edge: bend at the edge's start node

  std::vector<ActuatedSpring> actuated;  ///< every driven natural value

  /// energies from the caller's code (stencils/user_energy.h), given by with_energies()
  std::vector<std::shared_ptr<const UserEnergy>> user_energies;

  AssemblyPlan plan;
  SceneSpec scene;  ///< the spec the model was built from (integrator, output, names)

  int node_dof(int node) const { return 3 * node; }
  int edge_dof(int edge) const { return 3 * nnode + edge; }
  int xi_dof(int sedge) const { return 3 * nnode + nedge + sedge_xi[sedge]; }
  /// global node of a part-local reference (negative index counts from the end)
  int resolve_node(const NodeRef& r) const;
  int resolve_edge(const EdgeRef& r) const;
  /// bytes held by the model's arrays
  size_t memory_bytes() const;
};

/// The assembly plan (without contact pairs) of the model with the DOFs flagged in `fixed`
/// (ndof) held: the model's own plan (shared with it) when `fixed` is the model's set, else one
/// built for it.
std::shared_ptr<const AssemblyPlan> assembly_plan_for(const std::shared_ptr<const Model>& m,
                                                      const unsigned char* fixed);

/// Builds the model from a validated scene: merges joints, creates stencils with their
/// orientation signs, reference frames, stiffnesses, masses, fixed DOFs and the assembly plan.
/// Throws InputError for problems that need the assembled structure to see (zero-length edges,
/// a joint naming one node twice, ...).
std::shared_ptr<const Model> build_model(const SceneSpec& scene);

/// The model with these energies from the caller's code added to its own
/// (stencils/user_energy.h): a new model (the given one is unchanged) whose assembly plan holds
/// their stencils. Throws Error naming the energy, the stencil and the entry when a stencil's
/// DOF is outside the model's DOFs.
std::shared_ptr<const Model> with_energies(const std::shared_ptr<const Model>& model,
                                           std::vector<std::shared_ptr<const UserEnergy>> energies);

/// The actuation components of a unit natural curvature on every mid-edge triangle (nmid x 3,
/// the layout of NaturalShape::mid_kappa_bar and BatchedSimulator::set_natural_midedge_curvature):
/// bending along `direction` (world frame, taken in each triangle's rest plane: K = d d^T with d
/// the unit in-plane direction), or, for a zero direction, the same in every direction (K = the
/// plane's identity: a dome). Multiply by a curvature [1/m]; positive curls a triangle away from
/// its normal. Throws Error when the direction is normal to a triangle.
std::vector<Real> midedge_curvature_components(const Model& m, const Vec3& direction);

/// Which of the model's listed arrays (stencils/model_arrays.h) do not hold count x width
/// values, and what they hold, comma-separated; empty when all fit.
std::string model_arrays_misfit(const Model& m);

}  // namespace slender
