#pragma once

// SceneBuilder: the C++ way to write a scene. It produces the same SceneSpec as the JSON reader
// (read_scene_file), and build() runs the same validation, so a scene made in code and one read
// from a file behave identically.

#include <string>
#include <vector>

#include "slender/scene.h"

namespace slender {

class SceneBuilder {
 public:
  SceneBuilder& name(std::string n);
  /// adds a material and returns its index
  int material(std::string name, Real density, Real youngs_modulus, Real poisson_ratio);

  /// circular cross-section of radius r [m]
  static CrossSection circle(Real r);
  /// rectangular cross-section, width along m1 and height along m2 [m]
  static CrossSection rectangle(Real width, Real height);

  /// straight rod from a to b with n >= 2 nodes; returns the part index
  int straight_rod(std::string name, Vec3 a, Vec3 b, int nodes, int material, CrossSection cs);
  /// rod through the given nodes in order (closed adds an edge from the last node to the first)
  int polyline_rod(std::string name,
                   std::vector<Vec3> nodes,
                   int material,
                   CrossSection cs,
                   bool closed = false);
  /// rod along the given corner points, each segment split into edges no longer than
  /// max_edge_length
  int polyline_rod_resampled(std::string name,
                             const std::vector<Vec3>& corners,
                             Real max_edge_length,
                             int material,
                             CrossSection cs);
  /// helix about `axis` through `center` (first node at center + radius * an axis-normal
  /// direction), with contour length `length`, `pitch` [m per turn] and n nodes
  int helix_rod(std::string name,
                Vec3 center,
                Vec3 axis,
                Real radius,
                Real pitch,
                Real length,
                int nodes,
                int material,
                CrossSection cs);
  /// a network of rod edges from a MAT-DiSMech geometry text file (nodes, edges; triangles are
  /// kept for the shell capability)
  int geometry_file(std::string name, const std::string& path, int material, CrossSection cs);
  /// a network of rod edges given in code (node ids 0-based)
  int network(std::string name,
              std::vector<Vec3> nodes,
              std::vector<std::array<int, 2>> edges,
              int material,
              CrossSection cs);

  // shells: one part of nodes and triangles (no rod edges), wound counterclockwise about the
  // shell's normal, of thickness h [m] and bending model; docs/scene_format.md "Shells" gives
  // each mesh's node numbering

  /// parallelogram origin + s u_side + t v_side (s, t in [0, 1]), normal u_side x v_side,
  /// edges about edge_length [m]: structured = a grid with each cell split along one diagonal,
  /// otherwise a triangular (near equilateral) lattice of rows along u_side. A strip is a
  /// rectangle with a long side.
  int rectangle_shell(std::string name,
                      Vec3 origin,
                      Vec3 u_side,
                      Vec3 v_side,
                      Real edge_length,
                      bool structured,
                      int material,
                      Real thickness,
                      ShellBending bending = ShellBending::kHinge);
  /// disk of the given radius about center, normal to `normal`: a center node and concentric
  /// rings of 6k nodes
  int disk_shell(std::string name,
                 Vec3 center,
                 Vec3 normal,
                 Real radius,
                 Real edge_length,
                 int material,
                 Real thickness,
                 ShellBending bending = ShellBending::kHinge);
  /// regular hexagon with circumradius `side` (first corner at center + side e1), made of 6
  /// equilateral sectors, each split into equal triangles
  int hexagon_shell(std::string name,
                    Vec3 center,
                    Vec3 normal,
                    Real side,
                    Real edge_length,
                    int material,
                    Real thickness,
                    ShellBending bending = ShellBending::kHinge);
  /// open hemisphere: pole at center + radius axis, rim on the equator, normals outward
  int hemisphere_shell(std::string name,
                       Vec3 center,
                       Vec3 axis,
                       Real radius,
                       Real edge_length,
                       int material,
                       Real thickness,
                       ShellBending bending = ShellBending::kHinge);
  /// a shell of these nodes and triangles (0-based, counterclockwise about the normal); the
  /// JSON {"type": "mesh"} and Python's SceneBuilder.mesh_shell
  int mesh_shell(std::string name,
                 std::vector<Vec3> nodes,
                 std::vector<std::array<int, 3>> triangles,
                 int material,
                 Real thickness,
                 ShellBending bending = ShellBending::kHinge);
  /// a shell from a mesh file (read_mesh_file: .obj, .ply or MAT-DiSMech .txt), which must
  /// have triangles; rod edges in the file (OBJ `l`, PLY `edge`, `*Edges`) stay rod edges of the
  /// same part, with cross-section cs
  int mesh_file_shell(std::string name,
                      const std::string& path,
                      int material,
                      Real thickness,
                      ShellBending bending = ShellBending::kHinge,
                      CrossSection cs = {});

  /// direct access to a part, e.g. to set stiffness overrides or natural curvature
  PartSpec& part(int index);

  /// a shell part's membrane model (PartSpec::membrane; default neo-Hookean, the papers'
  /// scenes use MembraneModel::kSprings)
  SceneBuilder& membrane(int part, MembraneModel model);
  /// stiffness of one stretching spring (part edge) [N]
  SceneBuilder& stretch_spring(int part, int edge, Real EA);
  /// stiffnesses of the bend-twist springs centred at a part node [N m^2]; negative = keep
  SceneBuilder& bend_spring(int part, int node, Real EI1, Real EI2, Real GJ);

  /// merge nodes of several parts into one shared node
  SceneBuilder& joint(std::vector<NodeRef> nodes);
  SceneBuilder& fix_node(int part, int index);
  SceneBuilder& fix_edge(int part, int index);  ///< both nodes and the twist
  /// a rod end built in at the node itself (index: the part's end node, 0 or -1): the node, the
  /// tangent and the material frame there held (fix_edge(part, 0) builds in at the first edge's
  /// middle)
  SceneBuilder& clamp(int part, int index);
  /// a shell clamp: these part nodes fixed, and the mid-edge xi of every shell edge between two
  /// of them (a hinge shell has no edge DOF: its nodes only)
  SceneBuilder& fix_shell_edges(int part, const std::vector<int>& nodes);
  SceneBuilder& fix_twist(int part, int index);
  SceneBuilder& fix_dofs(int part, int index, bool x, bool y, bool z);
  /// prescribed motion of fixed nodes and twists (see MotionSpec)
  SceneBuilder& motion(MotionSpec m);
  /// a change of the fixed DOFs at a time: the selection fixed or released (see BoundaryEvent)
  SceneBuilder& event(BoundaryEvent e);

  SceneBuilder& gravity(Vec3 g);
  SceneBuilder& point_load(int part, int index, Vec3 force, TimeFunction time = {});
  /// an entry of a stencil family's own scene field (forces.<in.field>), for example
  /// FamilyInput{"pressure"}.part("part", "balloon").number("pressure", 2e3); checked against
  /// the family's fields when the model is built
  SceneBuilder& family_input(FamilyInput in);
  SceneBuilder& viscosity(Real eta);
  SceneBuilder& mass_damping(Real alpha);
  /// beta of stiffness-proportional (Rayleigh) damping of every part [s] (a part's own:
  /// part(i).stiffness_damping)
  SceneBuilder& stiffness_damping(Real beta);
  /// eta of Kelvin-Voigt strain-rate damping of every part [Pa s] (a part's own:
  /// part(i).kelvin_voigt)
  SceneBuilder& kelvin_voigt(Real eta);
  /// drive natural hinge angles, curvatures or twists in time (see ActuationSpec)
  SceneBuilder& actuate(ActuationSpec a);
  /// a feedback controller on a natural strain (see ControllerSpec, docs/control.md)
  SceneBuilder& controller(ControllerSpec c);
  /// contact between rods (see ContactSpec)
  SceneBuilder& contact(ContactSpec c);
  /// a rigid ground with contact and Coulomb friction (see GroundSpec)
  SceneBuilder& ground(GroundSpec g);
  /// buoyancy: gravity acts on m - rho_med V (seed 000 §5.1) [kg/m^3]
  SceneBuilder& buoyancy(Real medium_density);
  /// a force per length f [N/m] (world frame) on the rod edges of a part, f s(t): each node gets
  /// f times its share of the part's rest length (see DistributedLoadSpec)
  SceneBuilder& distributed_load(int part, Vec3 force_per_length, TimeFunction time = {});
  /// added mass C_a rho_med V on each node of the parts (empty: every part), rho_med the
  /// buoyancy's medium density: inertia only, not the weight (see AddedMassSpec)
  SceneBuilder& added_mass(Real coefficient, std::vector<int> parts = {});
  /// aerodynamic drag on shell triangles (seed 000 eq. 29): C_D [-] and rho_med [kg/m^3]
  SceneBuilder& aerodynamic_drag(Real coefficient, Real medium_density);
  /// resistive force theory on rod edges: drag per length and velocity along (tangential) and
  /// across (normal) the rod [N s/m^2]
  SceneBuilder& resistive_force(Real tangential, Real normal);
  SceneBuilder& initial_velocity(int part, int index, Vec3 v);
  /// a point mass [kg] at a node of a part (index negative: from the end), see PointMassSpec
  SceneBuilder& point_mass(int part, int index, Real mass);
  /// the initial twist angle theta [rad] and velocity omega [rad/s] of every rod edge of a part
  /// (one value each, or one per part edge; empty: 0), see PartSpec::initial_twist_angle
  SceneBuilder& initial_twist(int part, std::vector<Real> angle, std::vector<Real> velocity = {});

  IntegratorSpec& integrator() { return spec_.integrator; }
  OutputSpec& output() { return spec_.output; }
  SceneSpec& spec() { return spec_; }

  /// validates (throws InputError) and returns the scene
  SceneSpec build() const;

 private:
  SceneSpec spec_;
};

/// The largest node coordinate a scene may have [m]: beyond it the squares of lengths and areas,
/// and so the energies, overflow.
constexpr Real kMaxCoordinate = 1e50;

/// Checks a whole scene: counts, ranges, indices, positive lengths and moduli, coordinates
/// within kMaxCoordinate, Newton tolerances that can be met. Throws InputError naming the file,
/// line and field of the offending entry. (build_model checks what follows from them: masses,
/// stiffnesses, lengths and areas finite and positive.)
void validate_scene(const SceneSpec& s);

/// Checks controllers for the scene `s` as validate_scene checks its own (gains >= 0 and one
/// or one per spring, limits, times, the reference's fields); throws InputError naming the
/// entry's file, line and field. What needs the model (the springs, the profile's and the
/// gains' sizes, overlaps) is checked when a controller is made (control.h).
void validate_controllers(const SceneSpec& s, const std::vector<ControllerSpec>& controllers);
/// Controllers from JSON text, a list as a scene's "controllers" field holds (docs/control.md),
/// for the scene `scene` whose parts they name; read and checked as the scene reader does, the
/// errors naming `file`, the line and the field. Relative series files resolve against
/// scene.base_dir.
std::vector<ControllerSpec> read_controllers_text(const std::string& text,
                                                  const SceneSpec& scene,
                                                  const std::string& file = "<controllers>");

/// Reads a scene from a JSON file (see docs/scene_format.md); relative paths inside resolve
/// against the scene's folder. Throws InputError on any problem.
SceneSpec read_scene_file(const std::string& path);
/// Same, from JSON text; `file` names the source in messages and `base_dir` resolves paths.
SceneSpec read_scene_text(const std::string& text,
                          const std::string& file,
                          const std::string& base_dir);

/// Geometry read from a MAT-DiSMech text file (node ids converted to 0-based).
struct GeometryFile {
  std::vector<Vec3> nodes;
  std::vector<std::array<int, 2>> edges;
  std::vector<std::array<int, 3>> triangles;
};
/// Reads the `*Nodes`, `*Edges`, `*Triangles` layout; throws InputError with the line.
GeometryFile read_geometry_file(const std::string& path);

/// Reads a mesh by extension: Wavefront .obj (v, f with v, v/vt, v/vt/vn or v//vn, l as rod
/// edges; 1-based or negative relative indices), ASCII .ply (vertex x y z, face vertex_indices,
/// edge vertex1 vertex2) or MAT-DiSMech .txt (read_geometry_file). Polygons are split into a fan
/// of triangles about their first vertex. Ids become 0-based. Throws InputError with the line.
GeometryFile read_mesh_file(const std::string& path);

/// Reads "vx vy vz" (space or comma separated) per line; throws InputError with the line.
std::vector<Vec3> read_vector_file(const std::string& path);

}  // namespace slender
