#pragma once

// SceneSpec: the plain-data description of a simulation, produced by the JSON scene reader
// (host/io/scene_json.cpp) or by the C++ SceneBuilder (builder.h), and consumed by
// build_model() (model.h). It holds geometry per part (a rod or a network read from a geometry
// file) in part-local numbering; joints merge part nodes into shared global nodes.

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "slender/core/small.h"
#include "slender/core/spec.h"

namespace slender {

/// Where a spec value came from, for error messages ("file:line: field").

struct Material {
  std::string name;
  Real density = 0;         ///< [kg/m^3]
  Real youngs_modulus = 0;  ///< E [Pa]
  Real poisson_ratio = 0;   ///< nu [-], G = E / (2 (1 + nu))
  SourceLoc loc = {};       ///< where the material was declared
};

struct CrossSection {
  enum class Kind { kCircle, kRectangle };
  Kind kind = Kind::kCircle;
  Real radius = 0;  ///< circle radius [m]
  Real width = 0;   ///< rectangle side along the first material director m1 [m]
  Real height = 0;  ///< rectangle side along m2 [m]
};

/// Optional stiffness values that replace those derived from material and cross-section.
/// A negative value means "derive it".
struct StiffnessOverride {
  Real EA = -1;   ///< axial [N]
  Real EI1 = -1;  ///< bending, curvature kappa1 (bending in the t-m1 plane) [N m^2]
  Real EI2 = -1;  ///< bending, curvature kappa2 [N m^2]
  Real GJ = -1;   ///< torsion [N m^2]
};

/// Stiffness of one stretching spring (a part edge), replacing the part's value.
struct StretchSpringOverride {
  int edge = 0;  ///< part-local edge (negative counts from the end)
  Real EA = -1;  ///< [N]
  SourceLoc loc;
};

/// Stiffnesses of the bend-twist springs centred at one part node; a negative value keeps the
/// part's value.
struct BendSpringOverride {
  int node = 0;                      ///< part-local node (negative counts from the end)
  Real EI1 = -1, EI2 = -1, GJ = -1;  ///< [N m^2]
  SourceLoc loc;
};

/// How a shell resists bending (seed 000 §3.3).
enum class ShellBending {
  kHinge,    ///< dihedral angle at every interior edge (eq. 17)
  kMidEdge,  ///< discrete shape operator with mid-edge normals (eqs. 18-20), one xi DOF per edge
};

/// How a shell resists stretching (its membrane): docs/numerics.md "Shell membrane".
enum class MembraneModel {
  /// a spring on every triangle edge (seed 000 eq. 10, the papers' model): the stiffness E h of
  /// the material, but the lattice's own Poisson ratio (1/3 on an equilateral mesh)
  kSprings = 0,
  /// constant-strain triangles, St Venant-Kirchhoff in plane stress (the material's E and nu)
  kStvk = 1,
  /// constant-strain triangles, compressible neo-Hookean in plane stress (E and nu in [0, 0.5])
  kNeoHookean = 2,
};

/// How the hinges of a hinge-bending shell get their stiffness k_b (docs/numerics.md).
enum class HingeStiffness {
  /// k_b = (2 / sqrt 3) E h^3 / 12 on every hinge: seed 000's eq. 17 with its rigidity doubled,
  /// the plate rigidity E h^3 / 12 on an equilateral mesh (the default, as before 2026-11-28)
  kPapers,
  /// k_b = D_h l_bar^2 / (A_1 + A_2) from the hinge's edge and its two triangles' rest areas
  /// (the discrete-shells weighting), D_h = E h^3 / (12 (1 - 1/9)): free strips bend with E I
  /// on a lattice whatever the mesh size; exact cylindrical bending at D_h on any lattice
  kGeometric,
};

/// Time dependence of a point load: F(t) = force * s(t).
struct TimeFunction {
  enum class Kind { kConstant, kSine, kRamp, kTable, kSma };
  Kind kind = Kind::kConstant;
  Real frequency = 0;  ///< kSine: s = offset + amplitude sin(2 pi f t + phase) [Hz]
  Real amplitude = 1;
  Real phase = 0;  ///< [rad]
  Real offset = 0;
  Real ramp_time = 0;                      ///< kRamp: s = min(t / ramp_time, 1) [s]
  std::vector<std::array<Real, 2>> table;  ///< kTable: (t, s) rows, linear in between, held at ends
  /// kSma: the actuating-cooling cycle of a shape-memory-alloy actuator (Huang et al., seed 003,
  /// eq. 7) as the relative change s = f(t') - 1 of a natural curvature or a modulus, with
  /// t' = t - start (taken modulo `period` when it is > 0; s = 0 before start) and
  ///   f(t') = 1 + (n - 1) t' / t0                            for t' < t0,
  ///   f(t') = n + (1 - n) / (1 + exp(-tau (t' - t_bar)))     for t' >= t0
  Real sma_n = 1, sma_tau = 0, sma_t_bar = 0, sma_t0 = 0, sma_start = 0, sma_period = 0;
};

/// One rod or one network of rod edges (from a geometry file), with one material and section.
/// A part with triangles is (also) a shell of the given thickness.
struct PartSpec {
  std::string name;
  SourceLoc loc;                              ///< where the part was declared
  std::vector<Vec3> nodes;                    ///< node positions [m] (n x 3)
  std::vector<std::array<int, 2>> edges;      ///< part-local node ids of each rod edge (e x 2)
  std::vector<std::array<int, 3>> triangles;  ///< part-local shell triangles (t x 3), unused yet
  int material = -1;                          ///< index into SceneSpec::materials
  CrossSection section;
  StiffnessOverride stiffness;
  /// optional first-edge direction for m1 (projected onto the plane normal to the edge);
  /// all zero = automatic
  Vec3 frame_normal = Vec3{{0, 0, 0}};
  /// optional natural curvature per interior node of a rod (kappa1, kappa2) [1/m]; empty =
  /// stress-free initial shape. Only for rods (polyline parts), one entry per bend stencil.
  std::vector<std::array<Real, 2>> natural_curvature;
  /// optional natural twist per interior node [rad/m]; empty = from the initial shape
  std::vector<Real> natural_twist;
  /// optional initial twist angle theta of each rod edge of the part (its twist DOF at t = 0)
  /// [rad]; empty = 0. The natural shape stays that of theta = 0: a non-zero theta twists the
  /// rod against it (rods and networks)
  std::vector<Real> initial_twist_angle;
  /// optional initial twist velocity omega = d theta / dt of each rod edge [rad/s]; empty = 0
  std::vector<Real> initial_twist_velocity;
  bool is_rod = true;  ///< generated rod (edges consecutive) vs network from a file
  Real thickness = 0;  ///< shell thickness h [m]; required (> 0) when the part has triangles
  /// the shell's thickness for contact [m] (> 0), or 0: the thickness h. Two shells touch when
  /// their mid-surfaces are the sum of their half contact thicknesses apart (h for equal
  /// sheets), a shell and the ground at half of it; Py-DiSMech's contact distance is 2 h
  Real contact_thickness = 0;
  ShellBending bending = ShellBending::kHinge;  ///< shell bending model
  /// shell membrane model; the default for new scenes is the neo-Hookean triangle (the papers'
  /// scenes name "springs")
  MembraneModel membrane = MembraneModel::kNeoHookean;
  /// the hinges' stiffness (hinge bending only)
  HingeStiffness hinge_stiffness = HingeStiffness::kPapers;
  /// the stretching law of the part's rod edges: Hookean (default), neo-Hookean or the one-term
  /// Ogden law of exponent alpha (seed 004, eq. 12); `scale` multiplies the axial stiffness EA
  /// (Bartholdt's c_e), which is the law's stiffness at small strain
  struct StretchLaw {
    enum Kind { kHookean, kNeoHookean, kOgden } kind = kHookean;
    Real alpha = 0;  ///< the Ogden exponent (kOgden; nonzero)
    Real scale = 1;  ///< > 0
  } stretch_law;
  /// the part's Young's modulus in time, E(t) = E (1 + s(t)) (every stiffness of its elastic
  /// stencils: stretching, bending, twisting, shell stretching and bending); none when absent
  bool youngs_in_time = false;
  TimeFunction youngs_time;
  /// alpha of mass-proportional damping F = -alpha M u of this part's DOFs [1/s]; < 0: the
  /// scene's ForcesSpec::mass_damping
  Real mass_damping = -1;
  /// beta of stiffness-proportional (Rayleigh) damping F = -beta K u of this part's elastic
  /// stencils [s]; < 0: the scene's ForcesSpec::stiffness_damping
  Real stiffness_damping = -1;
  /// eta of Kelvin-Voigt strain-rate damping of this part's elastic stencils (stretching,
  /// bending and twisting of rods; stretching and bending of shells), the viscous stress
  /// eta d(strain)/dt beside the elastic E strain [Pa s]; < 0: the scene's
  /// ForcesSpec::kelvin_voigt
  Real kelvin_voigt = -1;
  /// per-spring stiffness overrides (after the part's own values)
  std::vector<StretchSpringOverride> stretch_springs;
  std::vector<BendSpringOverride> bend_springs;
};

/// A reference to a node: part and part-local index (negative counts from the end).
struct NodeRef {
  int part = -1;
  int index = 0;
  SourceLoc loc;
};

/// A reference to an edge of a part (part-local edge index; negative counts from the end).
struct EdgeRef {
  int part = -1;
  int index = 0;
  SourceLoc loc;
};

/// Several part nodes that become one node of the structure (a rod-rod joint).
struct JointSpec {
  std::vector<NodeRef> nodes;
  SourceLoc loc;
};

struct FixedDofSpec {
  NodeRef node;
  std::array<bool, 3> fix = {true, true, true};  ///< which of x, y, z are fixed
};

/// Prescribed motion of fixed DOFs: the listed nodes' positions x(t) = x0 + s(t) translation
/// (only the components with a non-zero translation move; each must be fixed) and the listed
/// edges' twist angles theta(t) = s(t) twist (each twist must be fixed). s(0) = 0 starts from
/// the initial configuration; a step of size dt takes the DOFs to their values at t + dt.
struct MotionSpec {
  std::vector<NodeRef> nodes;
  std::vector<EdgeRef> edges;
  Vec3 translation = Vec3{{0, 0, 0}};  ///< [m]
  Real twist = 0;                      ///< [rad]
  TimeFunction time;                   ///< s(t)
  SourceLoc loc;
};

/// DOFs named as the boundary block names them (fixed_nodes, fixed_edges, fixed_twist,
/// fixed_dofs): what a boundary event fixes or releases.
struct DofSelection {
  std::vector<NodeRef> nodes;  ///< positions (fixed_nodes)
  std::vector<EdgeRef> edges;  ///< both nodes and the twist (fixed_edges by "edges")
  /// shell edges by their nodes: the nodes and the mid-edge xi of every shell edge joining two
  /// of them (fixed_edges by "nodes")
  std::vector<std::vector<NodeRef>> shell_edges;
  std::vector<EdgeRef> twist;      ///< the twist only (fixed_twist)
  std::vector<FixedDofSpec> dofs;  ///< some of x, y, z (fixed_dofs)
  bool empty() const {
    return nodes.empty() && edges.empty() && shell_edges.empty() && twist.empty() && dofs.empty();
  }
};

/// A change of the boundary conditions at a time (boundary.events): before the first step that
/// starts at or after `time`, the selected DOFs are fixed (each held where it is then, its
/// velocity set to zero) or released (free from then on, with the velocity it has).
struct BoundaryEvent {
  Real time = 0;         ///< [s], >= 0
  bool release = false;  ///< false: fix, true: release
  DofSelection select;
  SourceLoc loc;
};

/// A point mass at a node (a payload, a marker plate, a sensor): it adds to the node's lumped
/// mass, so inertia, gravity, buoyancy's weight, mass damping and the ground's automatic
/// stiffness all see it. No rotational inertia: a node carries no rotation in the discrete
/// rods (their edges' twist does).
struct PointMassSpec {
  NodeRef node;
  Real mass = 0;       ///< [kg], > 0
  SourceLoc loc = {};  ///< where the mass was declared
};

struct PointLoadSpec {
  NodeRef node;
  Vec3 force = Vec3{{0, 0, 0}};  ///< [N]
  TimeFunction time;
  SourceLoc loc = {};  ///< where the load was declared
};

/// Contact with a rigid ground and Coulomb friction (seed 000 §5.2, eqs. 25-26; seed 003 for
/// inclined and uneven ground). A node touches the ground at the distance of its radius (rods)
/// or half thickness (shells).
struct GroundSpec {
  bool enabled = false;
  bool wavy = false;  ///< false: a plane; true: z = offset + A sin(2 pi x / Lx + phase_x)
                      ///< sin(2 pi y / Ly + phase_y)
  Vec3 point = Vec3{{0, 0, 0}};   ///< plane: a point on it [m]
  Vec3 normal = Vec3{{0, 0, 1}};  ///< plane: normal towards the free side
  Real amplitude = 0, length_x = 0, length_y = 0, phase_x = 0, phase_y = 0, offset = 0;
  Real stiffness = 0;  ///< k_c [N/m] (energy k_c s^2); 0 = automatic from mass and gravity
  Real contact_distance = 1e-3;  ///< delta: width of the smooth contact layer [m]
  Real friction = 0;             ///< mu [-]
  Real slip_velocity = 1e-3;     ///< nu: below it friction grows from stick to slip [m/s]
  /// coefficient of restitution e in [0, 1] of the normal dashpot (contact_damping.h); 1 = none
  Real restitution = 1;
  SourceLoc loc;
};

/// Contact (the implicit contact model, seed 000 §4, eqs. 21-22; seed 001 §III-B for the
/// types): non-adjacent rod edges, rod edges and shell triangles, and shell triangles (as their
/// vertex-triangle and edge-edge pairs) closer than their contact distance (2 r0 rod-rod,
/// r0 + h/2 rod-shell, h shell-shell) plus the tolerance repel smoothly.
/// Coulomb friction coefficient between two materials (either order).
struct FrictionPairSpec {
  int material_a = -1, material_b = -1;  ///< indices into SceneSpec::materials
  Real mu = 0;                           ///< [-]
  SourceLoc loc;
};

struct ContactSpec {
  bool enabled = false;
  Real stiffness = 0;     ///< k_c [N/m] of the energy k_c s^2; 0 = automatic from the masses
  Real tolerance = 1e-3;  ///< delta: width of the smooth contact layer [m], K1 = 15 / delta
  /// Coulomb friction between bodies (seed 000 eq. 23): mu for every pair of materials not in
  /// friction_pairs; 0 = none
  Real friction = 0;
  Real slip_velocity = 1e-3;  ///< nu: below it friction grows from stick to slip [m/s]
  /// coefficient of restitution e in [0, 1] of the normal dashpot (contact_damping.h); 1 = none
  Real restitution = 1;
  std::vector<FrictionPairSpec> friction_pairs;
  SourceLoc loc;
};

/// One entry of a family's scene field (forces.<field>): its values by field name (a family's
/// kFields say which it takes). Read from a scene, or built in code with the setters.
struct FamilyInput {
  std::string field;  ///< the family's scene field, such as "pressure"
  std::vector<std::pair<std::string, Real>> numbers;
  std::vector<std::pair<std::string, std::string>> parts;  ///< part names
  std::vector<std::pair<std::string, TimeFunction>> times;
  std::vector<std::pair<std::string, Vec3>> vectors;
  std::vector<std::pair<std::string, std::string>> words;
  std::vector<std::pair<std::string, std::vector<Real>>> lists;  ///< lists of numbers
  SourceLoc loc = {};                                            ///< where the entry was declared

  FamilyInput() = default;
  explicit FamilyInput(std::string field_name) : field(std::move(field_name)) {}
  FamilyInput& number(const std::string& name, Real v) {
    numbers.emplace_back(name, v);
    return *this;
  }
  FamilyInput& part(const std::string& name, const std::string& v) {
    parts.emplace_back(name, v);
    return *this;
  }
  FamilyInput& time(const std::string& name, const TimeFunction& v) {
    times.emplace_back(name, v);
    return *this;
  }
  FamilyInput& vec3(const std::string& name, const Vec3& v) {
    vectors.emplace_back(name, v);
    return *this;
  }
  FamilyInput& word(const std::string& name, const std::string& v) {
    words.emplace_back(name, v);
    return *this;
  }
  FamilyInput& list(const std::string& name, std::vector<Real> v) {
    lists.emplace_back(name, std::move(v));
    return *this;
  }
  /// the value of a field, or null when the entry does not give it
  const Real* find_number(const std::string& name) const {
    for (const auto& kv : numbers)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
  const std::string* find_part(const std::string& name) const {
    for (const auto& kv : parts)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
  const TimeFunction* find_time(const std::string& name) const {
    for (const auto& kv : times)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
  const Vec3* find_vec3(const std::string& name) const {
    for (const auto& kv : vectors)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
  const std::string* find_word(const std::string& name) const {
    for (const auto& kv : words)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
  const std::vector<Real>* find_list(const std::string& name) const {
    for (const auto& kv : lists)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
};

/// A force per length on a rod part (forces.distributed_loads): every rod edge of the part of
/// rest length l_bar gives each of its two nodes l_bar / 2 times the force (its share of the
/// Voronoi length within the part), so the nodes carry f times the part's rest length in all.
/// The load is fixed in the world frame and in size (it does not follow the rod or its current
/// length): a point load per node (Model::point_loads), on every backend.
struct DistributedLoadSpec {
  int part = -1;                            ///< a rod part
  Vec3 force_per_length = Vec3{{0, 0, 0}};  ///< f [N/m], world frame
  TimeFunction time;                        ///< f s(t); default constant 1
  SourceLoc loc = {};                       ///< the entry
};

/// Added mass of a body in a fluid (forces.added_mass): each node of the listed parts gains the
/// inertial mass C_a rho_med V (V its displaced volume, rho_med the buoyancy's medium density,
/// which must be given). Inertia, mass damping and the kinetic energy see it; gravity and
/// buoyancy do not (the accelerated fluid has no weight in the fluid).
struct AddedMassSpec {
  Real coefficient = 0;    ///< C_a [-], 0 or more; 0 = none
  std::vector<int> parts;  ///< the parts it acts on; empty: every part
  bool given = false;      ///< the scene (or the builder) gave it
  SourceLoc loc = {};      ///< the forces.added_mass block
};

struct ForcesSpec {
  Vec3 gravity = Vec3{{0, 0, 0}};  ///< [m/s^2]
  std::vector<PointLoadSpec> point_loads;
  std::vector<DistributedLoadSpec> distributed_loads;  ///< forces per length on rod parts
  AddedMassSpec added_mass;                            ///< added mass in the buoyancy's fluid
  Real viscosity = 0;     ///< eta of viscous drag F = -eta dl u (Eq. 27) [Pa s]
  Real mass_damping = 0;  ///< alpha of mass-proportional damping F = -alpha M u [1/s]
  /// beta of stiffness-proportional (Rayleigh) damping F = -beta K u [s], K the Hessian of the
  /// elastic energy at the step's start; each part may give its own
  Real stiffness_damping = 0;
  /// eta of Kelvin-Voigt strain-rate damping of every part's elastic stencils [Pa s]; each
  /// part may give its own
  Real kelvin_voigt = 0;
  /// buoyancy (seed 000 §5.1): gravity acts on m - rho_med V [kg/m^3]; 0 = none
  Real buoyancy_density = 0;
  /// aerodynamic drag on shell triangles (seed 000 §5.4, eq. 29)
  Real drag_density = 0;      ///< rho_med of the drag [kg/m^3]; 0 = none
  Real drag_coefficient = 0;  ///< C_D [-]
  /// resistive force theory on rod edges: F = -l [c_t (v.t) t + c_n (v - (v.t) t)]
  Real rft_tangential = 0;  ///< c_t [N s/m^2]
  Real rft_normal = 0;      ///< c_n [N s/m^2]
  GroundSpec ground;
  /// the entries of the fields that stencil families read for themselves (families.h,
  /// stencils/family_table.h), such as "pressure", in the scene's order
  std::vector<FamilyInput> families;
  SourceLoc loc = {};  ///< the "forces" block
};

struct OutputSpec {
  std::string dir = "out";         ///< output folder (relative to the working directory)
  int every = 1;                   ///< record every n-th step (CSV files)
  int vtk_every = 0;               ///< VTK frames every n-th step; 0: as `every`
  bool vtk = true;                 ///< VTK PolyData per record and a .pvd series
  bool energies = true;            ///< energies.csv
  std::vector<NodeRef> csv_nodes;  ///< nodes.csv columns: time, x, y, z, vx, vy, vz per node
  /// the camera of the run's pictures (slender render, run --render; docs/rendering.md), which
  /// the simulation itself does not use; none: fitted to the run
  struct Camera {
    bool given = false;
    Real azimuth = 0, elevation = 0;  ///< [deg], about the up direction
    Real distance = 0;                ///< [m]; 0: fitted
    bool has_target = false;
    Vec3 target = Vec3{{0, 0, 0}};  ///< [m]
  } camera;
  SourceLoc loc = {};  ///< the "output" block
};

/// A per-spring time series of an actuation (MAT-DiSMech, seed 000 §6.1): rows of a time and
/// one value per driven spring, linear in time between rows, held beyond the first and last.
struct ActuationSeries {
  std::string file;         ///< the file it was read from ("" when given in code), for messages
  int first_line = 0;       ///< the file's line of the first row
  int columns = 0;          ///< values per row: one per driven spring; 0 = no series
  std::vector<Real> time;   ///< (nrow) strictly increasing [s]
  std::vector<Real> value;  ///< (nrow x columns) s_k(t) of each spring k
  bool given() const { return columns > 0; }
};

/// Actuation by the natural shape (seed 000 §6.1, seed 002 §III-E): a driven natural value
/// = its rest value + the sum over actuations of envelope(t) * amplitude * s(t + phase), with
/// s the time function; for a sine the phase may grow along a direction (a travelling wave).
/// With a series, each spring k follows its own s_k(t) (its column) instead of s.
struct ActuationSpec {
  enum class Target {
    kHingeAngle,     ///< natural hinge angle phi_bar of shell hinges [rad]
    kRodCurvature1,  ///< natural curvature kappa1 of rod bend-twist springs [1/m]
    kRodCurvature2,  ///< natural curvature kappa2 [1/m]
    kRodTwist,       ///< natural twist [rad/m]
    /// natural curvature of mid-edge shell triangles [1/m] (NaturalShape::mid_kappa_bar)
    kMidEdgeCurvature,
    /// natural stretch of rod edges [-]: an edge's natural length is its rest length times
    /// 1 + amplitude s(t) (NaturalShape::edge_stretch_bar)
    kRodStretch,
  };
  Target target = Target::kHingeAngle;
  int part = -1;  ///< the part whose springs are driven
  /// optional selection: springs whose centre (hinge edge midpoint, rod node) lies within
  /// `select_tolerance` of the plane through select_point with normal select_normal; a zero
  /// normal selects every spring of the part
  Vec3 select_point = Vec3{{0, 0, 0}};
  Vec3 select_normal = Vec3{{0, 0, 0}};
  Real select_tolerance = 1e-9;  ///< [m]
  /// [rad] for hinges, [1/m] for curvature, [rad/m] for twist, [-] for stretch (a strain)
  Real amplitude = 1;
  /// kMidEdgeCurvature: the direction of bending (world frame, taken in each triangle's rest
  /// plane), the natural curvature being amplitude d d^T; zero: the same curvature in every
  /// direction (a dome). Positive curls the shell away from its normal (as a sphere whose
  /// normal points out)
  Vec3 direction = Vec3{{0, 0, 0}};
  Real ramp_in = 0;   ///< the drive grows linearly from 0 over this time [s]; 0 = none
  TimeFunction time;  ///< s(t)
  Vec3 wave_origin = Vec3{{0, 0, 0}};     ///< a sine's phase grows from here
  Vec3 wave_direction = Vec3{{0, 0, 0}};  ///< along this (unit) direction
  Real phase_per_length = 0;              ///< by this much [rad/m]
  /// per-spring time series s_k(t) in place of `time` (and of a wave), one column per driven
  /// spring in the model's order of the springs (ActuatedSpring::column)
  ActuationSeries series;
  SourceLoc loc;
};

/// How a controller keeps its integral from winding up while its command is limited.
enum class AntiWindup {
  kNone,  ///< the integral runs on (for comparison: it winds up)
  /// conditional integration: the integral holds while the command is limited and the error
  /// would drive it further into the limit
  kClamp,
  /// back-calculation: the integral also integrates (applied - unlimited command) / T_t, so
  /// that the unlimited command follows the applied one with the tracking time T_t
  kBackCalculation,
};

/// A proportional-integral controller on one natural strain of a part's springs (seed 001
/// §IV-10 and §VII; docs/control.md): before every step it measures the strain y of each spring
/// (the engine's strain query), smooths it along the part and in time, compares it with the
/// reference r(t) and sets the spring's natural strain
///   u = b + kp e + ki integral(e) dt,   e = r(t) - y_f,   b = r(t + dt) (feedforward) or rest
///   (within the limits),
/// limited to [command_min, command_max] and by rate_limit, with anti-windup. Strains are in
/// the scene's units: curvature [1/m], twist [rad/m], stretch as a strain l / l_bar - 1 [-]
/// (the natural stretch is 1 + u), hinge angle [rad].
struct ControllerSpec {
  std::string name;  ///< its columns' prefix in controllers.csv; "" = controller<i>
  /// the controlled strain and springs, and the reference r(t): `target` (kRodCurvature1,
  /// kRodCurvature2, kRodTwist, kRodStretch, kHingeAngle), `part`, the selection, and r(t) =
  /// the rest value + the value an actuation of these fields would add (amplitude, ramp_in,
  /// time, wave, series), times `profile`
  ActuationSpec reference;
  /// a factor per controlled spring on the reference's added value (in the model's order of
  /// the springs); empty = 1 each
  std::vector<Real> profile;
  /// gains, one value for every spring or one per spring, each >= 0 and finite: kp [-],
  /// ki [1/s]
  std::vector<Real> kp = {1}, ki = {0};
  Real filter_time = 0;  ///< tau_f of the measurement's first-order low-pass [s]; 0: none
  /// passes of spatial smoothing of the measurement over neighbouring controlled springs (bend
  /// stencils sharing an edge, rod edges sharing a node, hinges sharing a triangle): each pass
  /// y_k <- y_k / 2 + (the mean of its neighbours) / 2 ([1/4, 1/2, 1/4] along a rod), which
  /// takes the feedback off the springs' zig-zag; 0: none
  int spatial_smoothing = 0;
  Real rate_limit = 0;  ///< the most the command may change per second [unit/s]; 0: none
  Real command_min = -1e300, command_max = 1e300;  ///< the command's limits [unit]
  AntiWindup anti_windup = AntiWindup::kBackCalculation;
  Real tracking_time = 0;   ///< T_t of back-calculation [s]; 0: the step's dt
  bool feedforward = true;  ///< b = r(t + dt); false: b = the spring's rest value
  SourceLoc loc;            ///< the entry (its field: "controllers[i]")
};

/// The whole scene as plain data.
struct SceneSpec {
  std::string name = "scene";
  std::string file;      ///< the scene file ("" when built in code)
  std::string base_dir;  ///< folder that relative paths in the scene refer to
  BackendKind backend = BackendKind::kCpu;
  std::vector<Material> materials;
  std::vector<PartSpec> parts;
  std::vector<JointSpec> joints;
  std::vector<NodeRef> fixed_nodes;
  std::vector<EdgeRef> fixed_edges;  ///< both nodes and the twist
  /// rod ends built in at the node itself: the node, the tangent and the material frame there
  /// held (a fixed ghost edge behind the end; fixed_edges builds in at the first edge's middle)
  std::vector<NodeRef> clamps;
  /// shell clamps: each group's nodes fixed, and the mid-edge xi of every shell edge joining
  /// two nodes of the group (a clamped edge of a mid-edge shell)
  std::vector<std::vector<NodeRef>> fixed_shell_edges;
  std::vector<EdgeRef> fixed_twist;  ///< the twist only
  std::vector<FixedDofSpec> fixed_dofs;
  std::vector<MotionSpec> motions;  ///< prescribed motion of fixed nodes and twists
  /// changes of the fixed DOFs during the run (grasp and release), in the order given
  std::vector<BoundaryEvent> events;
  /// the DOFs fixed from the start (fixed_nodes, fixed_edges, fixed_shell_edges, fixed_twist,
  /// fixed_dofs) as one selection, as a boundary event names its own
  DofSelection fixed_selection() const {
    DofSelection sel;
    sel.nodes = fixed_nodes;
    sel.edges = fixed_edges;
    sel.shell_edges = fixed_shell_edges;
    sel.twist = fixed_twist;
    sel.dofs = fixed_dofs;
    return sel;
  }
  ForcesSpec forces;
  /// initial node velocities: per (node, velocity) pair; nodes not named start at rest
  std::vector<std::pair<NodeRef, Vec3>> initial_velocities;
  /// point masses at nodes (several at one node add up)
  std::vector<PointMassSpec> point_masses;
  std::vector<ActuationSpec> actuation;
  /// feedback controllers on natural strains (their springs driven by no actuation)
  std::vector<ControllerSpec> controllers;
  ContactSpec contact;
  IntegratorSpec integrator;
  OutputSpec output;
};

}  // namespace slender
