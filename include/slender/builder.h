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

  /// direct access to a part, e.g. to set stiffness overrides or natural curvature
  PartSpec& part(int index);

  /// stiffness of one stretching spring (part edge) [N]
  SceneBuilder& stretch_spring(int part, int edge, Real EA);
  /// stiffnesses of the bend-twist springs centred at a part node [N m^2]; negative = keep
  SceneBuilder& bend_spring(int part, int node, Real EI1, Real EI2, Real GJ);

  /// merge nodes of several parts into one shared node
  SceneBuilder& joint(std::vector<NodeRef> nodes);
  SceneBuilder& fix_node(int part, int index);
  SceneBuilder& fix_edge(int part, int index);  ///< both nodes and the twist
  SceneBuilder& fix_twist(int part, int index);
  SceneBuilder& fix_dofs(int part, int index, bool x, bool y, bool z);

  SceneBuilder& gravity(Vec3 g);
  SceneBuilder& point_load(int part, int index, Vec3 force, TimeFunction time = {});
  SceneBuilder& viscosity(Real eta);
  SceneBuilder& mass_damping(Real alpha);
  SceneBuilder& initial_velocity(int part, int index, Vec3 v);

  IntegratorSpec& integrator() { return spec_.integrator; }
  OutputSpec& output() { return spec_.output; }
  SceneSpec& spec() { return spec_; }

  /// validates (throws InputError) and returns the scene
  SceneSpec build() const;

 private:
  SceneSpec spec_;
};

/// Checks a whole scene: counts, ranges, indices, positive lengths and moduli. Throws
/// InputError naming the file, line and field of the offending entry.
void validate_scene(const SceneSpec& s);

/// Reads a scene from a JSON file (see README "Scene format"); relative paths inside resolve
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

/// Reads "vx vy vz" (space or comma separated) per line; throws InputError with the line.
std::vector<Vec3> read_vector_file(const std::string& path);

}  // namespace slender
