// SceneBuilder (scenes made in code) and validate_scene, the one check that both the builder
// and the JSON reader run before a scene reaches build_model().

#include "slender/builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "io/mesh.h"
#include "slender/core/error.h"
#include "slender/model.h"

namespace slender {

namespace {

// misuse of a builder method, reported at once (no file, no line)
[[noreturn]] void misuse(const std::string& field, const std::string& message) {
  throw InputError("", 0, field, message);
}

PartSpec new_part(std::string name, int material, const CrossSection& cs, bool is_rod) {
  PartSpec p;
  p.name = std::move(name);
  p.material = material;
  p.section = cs;
  p.is_rod = is_rod;
  return p;
}

// rod edges (0,1), (1,2), ..., and (n-1, 0) when closed
void check_node_count(const char* field, double n) {
  // generated rods larger than this are surely a typo, and would exhaust memory (io/mesh.h)
  if (n > double(max_generated_nodes())) {
    misuse(field, "too many nodes (at most " + std::to_string(max_generated_nodes()) + ")");
  }
}

void chain_edges(PartSpec& p, bool closed) {
  const int n = int(p.nodes.size());
  p.edges.clear();
  for (int i = 0; i + 1 < n; ++i) {
    p.edges.push_back({i, i + 1});
  }
  if (closed) {
    p.edges.push_back({n - 1, 0});
  }
}

int add_part(SceneSpec& s, PartSpec p) {
  s.parts.push_back(std::move(p));
  return int(s.parts.size()) - 1;
}

// a shell part: nodes and triangles of a mesh, no rod edges
PartSpec shell_part(
    std::string name, GeometryFile mesh, int material, Real thickness, ShellBending bending) {
  PartSpec p = new_part(std::move(name), material, CrossSection{}, false);
  p.nodes = std::move(mesh.nodes);
  p.triangles = std::move(mesh.triangles);
  p.thickness = thickness;
  p.bending = bending;
  return p;
}

}  // namespace

// ---- SceneBuilder ------------------------------------------------------------------------

SceneBuilder& SceneBuilder::name(std::string n) {
  spec_.name = std::move(n);
  return *this;
}

int SceneBuilder::material(std::string name,
                           Real density,
                           Real youngs_modulus,
                           Real poisson_ratio) {
  Material m;
  m.name = std::move(name);
  m.density = density;
  m.youngs_modulus = youngs_modulus;
  m.poisson_ratio = poisson_ratio;
  spec_.materials.push_back(std::move(m));
  return int(spec_.materials.size()) - 1;
}

CrossSection SceneBuilder::circle(Real r) {
  CrossSection cs;
  cs.kind = CrossSection::Kind::kCircle;
  cs.radius = r;
  return cs;
}

CrossSection SceneBuilder::rectangle(Real width, Real height) {
  CrossSection cs;
  cs.kind = CrossSection::Kind::kRectangle;
  cs.width = width;
  cs.height = height;
  return cs;
}

int SceneBuilder::straight_rod(
    std::string name, Vec3 a, Vec3 b, int nodes, int material, CrossSection cs) {
  if (nodes < 2) {
    misuse("straight_rod.nodes", "a rod needs at least 2 nodes, got " + std::to_string(nodes));
  }
  check_node_count("straight_rod.nodes", nodes);
  PartSpec p = new_part(std::move(name), material, cs, true);
  for (int i = 0; i < nodes; ++i) {
    const Real s = Real(i) / Real(nodes - 1);
    p.nodes.push_back(a + s * (b - a));
  }
  p.nodes.back() = b;  // exact end point
  chain_edges(p, false);
  return add_part(spec_, std::move(p));
}

int SceneBuilder::polyline_rod(
    std::string name, std::vector<Vec3> nodes, int material, CrossSection cs, bool closed) {
  const size_t need = closed ? 3 : 2;
  if (nodes.size() < need) {
    misuse("polyline_rod.nodes", std::string(closed ? "a closed" : "a") + " rod needs at least " +
                                     std::to_string(need) + " nodes, got " +
                                     std::to_string(nodes.size()));
  }
  PartSpec p = new_part(std::move(name), material, cs, true);
  p.nodes = std::move(nodes);
  chain_edges(p, closed);
  return add_part(spec_, std::move(p));
}

int SceneBuilder::polyline_rod_resampled(std::string name,
                                         const std::vector<Vec3>& corners,
                                         Real max_edge_length,
                                         int material,
                                         CrossSection cs) {
  if (corners.size() < 2) {
    misuse("polyline_rod_resampled.corners",
           "a rod needs at least 2 corners, got " + std::to_string(corners.size()));
  }
  if (!(max_edge_length > 0) || !is_finite(max_edge_length)) {
    misuse("polyline_rod_resampled.max_edge_length", "must be positive and finite");
  }
  PartSpec p = new_part(std::move(name), material, cs, true);
  p.nodes.push_back(corners[0]);
  for (size_t c = 0; c + 1 < corners.size(); ++c) {
    const Vec3 a = corners[c], b = corners[c + 1];
    const Real len = norm(b - a);
    if (!(len > 0) || !is_finite(len)) {
      misuse("polyline_rod_resampled.corners", "corners " + std::to_string(c) + " and " +
                                                   std::to_string(c + 1) +
                                                   " coincide or are not finite");
    }
    // equal edges, as few as keep each under the limit; the relative slack keeps an exact
    // multiple (0.1 / 0.01) from gaining an edge through rounding
    const double m_real = std::ceil(len / max_edge_length * (1 - 1e-12));
    check_node_count("polyline_rod_resampled.max_edge_length", double(p.nodes.size()) + m_real);
    const int m = std::max(1, int(m_real));
    for (int k = 1; k < m; ++k) {
      p.nodes.push_back(a + (Real(k) / Real(m)) * (b - a));
    }
    p.nodes.push_back(b);
  }
  chain_edges(p, false);
  return add_part(spec_, std::move(p));
}

int SceneBuilder::helix_rod(std::string name,
                            Vec3 center,
                            Vec3 axis,
                            Real radius,
                            Real pitch,
                            Real length,
                            int nodes,
                            int material,
                            CrossSection cs) {
  if (nodes < 2) {
    misuse("helix_rod.nodes", "a rod needs at least 2 nodes, got " + std::to_string(nodes));
  }
  check_node_count("helix_rod.nodes", nodes);
  const Real axis_len = norm(axis);
  if (!(axis_len > 0) || !is_finite(axis_len)) {
    misuse("helix_rod.axis", "must be a nonzero vector");
  }
  if (!(radius >= 0) || !is_finite(radius)) {
    misuse("helix_rod.radius", "must be >= 0");
  }
  if (!(pitch >= 0) || !is_finite(pitch)) {
    misuse("helix_rod.pitch", "must be >= 0 (the helix rises along +axis)");
  }
  if (!(length > 0) || !is_finite(length)) {
    misuse("helix_rod.length", "must be positive");
  }
  if (!(radius > 0) && !(pitch > 0)) {
    misuse("helix_rod.radius", "radius and pitch are both zero");
  }

  // x(theta) = c + r (cos theta u + sin theta v) + h theta a, with h = pitch / (2 pi): arc length
  // grows by sqrt(r^2 + h^2) per radian, so the contour length fixes the total angle
  const Vec3 a = axis / axis_len;
  const Vec3 u = unit_normal_to(a);
  const Vec3 v = cross(a, u);
  const Real h = pitch / (2 * kPi);
  const Real theta_end = length / std::sqrt(radius * radius + h * h);
  PartSpec p = new_part(std::move(name), material, cs, true);
  for (int i = 0; i < nodes; ++i) {
    const Real t = theta_end * Real(i) / Real(nodes - 1);
    p.nodes.push_back(center + radius * (std::cos(t) * u + std::sin(t) * v) + (h * t) * a);
  }
  chain_edges(p, false);
  return add_part(spec_, std::move(p));
}

int SceneBuilder::geometry_file(std::string name,
                                const std::string& path,
                                int material,
                                CrossSection cs) {
  GeometryFile g = read_geometry_file(path);
  PartSpec p = new_part(std::move(name), material, cs, false);
  p.nodes = std::move(g.nodes);
  p.edges = std::move(g.edges);
  p.triangles = std::move(g.triangles);
  return add_part(spec_, std::move(p));
}

int SceneBuilder::network(std::string name,
                          std::vector<Vec3> nodes,
                          std::vector<std::array<int, 2>> edges,
                          int material,
                          CrossSection cs) {
  PartSpec p = new_part(std::move(name), material, cs, false);
  p.nodes = std::move(nodes);
  p.edges = std::move(edges);
  return add_part(spec_, std::move(p));
}

int SceneBuilder::rectangle_shell(std::string name,
                                  Vec3 origin,
                                  Vec3 u_side,
                                  Vec3 v_side,
                                  Real edge_length,
                                  bool structured,
                                  int material,
                                  Real thickness,
                                  ShellBending bending) {
  return add_part(spec_, shell_part(std::move(name),
                                    rectangle_mesh(origin, u_side, v_side, edge_length, structured),
                                    material, thickness, bending));
}

int SceneBuilder::disk_shell(std::string name,
                             Vec3 center,
                             Vec3 normal,
                             Real radius,
                             Real edge_length,
                             int material,
                             Real thickness,
                             ShellBending bending) {
  return add_part(spec_, shell_part(std::move(name), disk_mesh(center, normal, radius, edge_length),
                                    material, thickness, bending));
}

int SceneBuilder::hexagon_shell(std::string name,
                                Vec3 center,
                                Vec3 normal,
                                Real side,
                                Real edge_length,
                                int material,
                                Real thickness,
                                ShellBending bending) {
  return add_part(
      spec_, shell_part(std::move(name), hexagon_mesh(center, normal, side, edge_length), material,
                        thickness, bending));
}

int SceneBuilder::hemisphere_shell(std::string name,
                                   Vec3 center,
                                   Vec3 axis,
                                   Real radius,
                                   Real edge_length,
                                   int material,
                                   Real thickness,
                                   ShellBending bending) {
  return add_part(spec_,
                  shell_part(std::move(name), hemisphere_mesh(center, axis, radius, edge_length),
                             material, thickness, bending));
}

int SceneBuilder::mesh_shell(std::string name,
                             std::vector<Vec3> nodes,
                             std::vector<std::array<int, 3>> triangles,
                             int material,
                             Real thickness,
                             ShellBending bending) {
  GeometryFile g;
  g.nodes = std::move(nodes);
  g.triangles = std::move(triangles);
  return add_part(spec_, shell_part(std::move(name), std::move(g), material, thickness, bending));
}

int SceneBuilder::mesh_file_shell(std::string name,
                                  const std::string& path,
                                  int material,
                                  Real thickness,
                                  ShellBending bending,
                                  CrossSection cs) {
  GeometryFile g = read_mesh_file(path);
  if (g.triangles.empty()) {
    misuse("mesh_file_shell.path",
           "'" + path + "' has no triangles (for a network of rod edges use geometry_file)");
  }
  std::vector<std::array<int, 2>> edges = std::move(g.edges);
  PartSpec p = shell_part(std::move(name), std::move(g), material, thickness, bending);
  p.edges = std::move(edges);
  p.section = cs;
  return add_part(spec_, std::move(p));
}

PartSpec& SceneBuilder::part(int index) {
  if (index < 0 || index >= int(spec_.parts.size())) {
    misuse("part", "no part " + std::to_string(index) + " (the scene has " +
                       std::to_string(spec_.parts.size()) + " parts)");
  }
  return spec_.parts[size_t(index)];
}

SceneBuilder& SceneBuilder::stretch_spring(int part, int edge, Real EA) {
  this->part(part).stretch_springs.push_back(StretchSpringOverride{edge, EA, SourceLoc{}});
  return *this;
}

SceneBuilder& SceneBuilder::membrane(int part, MembraneModel model) {
  this->part(part).membrane = model;
  return *this;
}

SceneBuilder& SceneBuilder::bend_spring(int part, int node, Real EI1, Real EI2, Real GJ) {
  this->part(part).bend_springs.push_back(BendSpringOverride{node, EI1, EI2, GJ, SourceLoc{}});
  return *this;
}

SceneBuilder& SceneBuilder::joint(std::vector<NodeRef> nodes) {
  JointSpec j;
  j.nodes = std::move(nodes);
  spec_.joints.push_back(std::move(j));
  return *this;
}

SceneBuilder& SceneBuilder::fix_node(int part, int index) {
  spec_.fixed_nodes.push_back(NodeRef{part, index, {}});
  return *this;
}

SceneBuilder& SceneBuilder::fix_edge(int part, int index) {
  spec_.fixed_edges.push_back(EdgeRef{part, index, {}});
  return *this;
}

SceneBuilder& SceneBuilder::clamp(int part, int index) {
  spec_.clamps.push_back(NodeRef{part, index, {}});
  return *this;
}

SceneBuilder& SceneBuilder::fix_shell_edges(int part, const std::vector<int>& nodes) {
  std::vector<NodeRef> group;
  for (int n : nodes)
    group.push_back(NodeRef{part, n, {}});
  spec_.fixed_shell_edges.push_back(std::move(group));
  return *this;
}

SceneBuilder& SceneBuilder::fix_twist(int part, int index) {
  spec_.fixed_twist.push_back(EdgeRef{part, index, {}});
  return *this;
}

SceneBuilder& SceneBuilder::fix_dofs(int part, int index, bool x, bool y, bool z) {
  FixedDofSpec f;
  f.node = NodeRef{part, index, {}};
  f.fix = {x, y, z};
  spec_.fixed_dofs.push_back(f);
  return *this;
}

SceneBuilder& SceneBuilder::motion(MotionSpec m) {
  spec_.motions.push_back(std::move(m));
  return *this;
}

SceneBuilder& SceneBuilder::event(BoundaryEvent e) {
  spec_.events.push_back(std::move(e));
  return *this;
}

SceneBuilder& SceneBuilder::initial_twist(int part,
                                          std::vector<Real> angle,
                                          std::vector<Real> velocity) {
  PartSpec& p = this->part(part);
  // one value: every edge of the part
  if (angle.size() == 1) angle.assign(p.edges.size(), angle[0]);
  if (velocity.size() == 1) velocity.assign(p.edges.size(), velocity[0]);
  p.initial_twist_angle = std::move(angle);
  p.initial_twist_velocity = std::move(velocity);
  return *this;
}

SceneBuilder& SceneBuilder::gravity(Vec3 g) {
  spec_.forces.gravity = g;
  return *this;
}

SceneBuilder& SceneBuilder::family_input(FamilyInput in) {
  spec_.forces.families.push_back(std::move(in));
  return *this;
}

SceneBuilder& SceneBuilder::point_load(int part, int index, Vec3 force, TimeFunction time) {
  PointLoadSpec l;
  l.node = NodeRef{part, index, {}};
  l.force = force;
  l.time = std::move(time);
  spec_.forces.point_loads.push_back(std::move(l));
  return *this;
}

SceneBuilder& SceneBuilder::viscosity(Real eta) {
  spec_.forces.viscosity = eta;
  return *this;
}

SceneBuilder& SceneBuilder::actuate(ActuationSpec a) {
  spec_.actuation.push_back(std::move(a));
  return *this;
}

SceneBuilder& SceneBuilder::controller(ControllerSpec c) {
  spec_.controllers.push_back(std::move(c));
  return *this;
}

SceneBuilder& SceneBuilder::contact(ContactSpec c) {
  c.enabled = true;
  spec_.contact = c;
  return *this;
}

SceneBuilder& SceneBuilder::ground(GroundSpec g) {
  g.enabled = true;
  spec_.forces.ground = g;
  return *this;
}

SceneBuilder& SceneBuilder::buoyancy(Real medium_density) {
  spec_.forces.buoyancy_density = medium_density;
  return *this;
}

SceneBuilder& SceneBuilder::distributed_load(int part, Vec3 force_per_length, TimeFunction time) {
  DistributedLoadSpec l;
  l.part = part;
  l.force_per_length = force_per_length;
  l.time = std::move(time);
  spec_.forces.distributed_loads.push_back(std::move(l));
  return *this;
}

SceneBuilder& SceneBuilder::added_mass(Real coefficient, std::vector<int> parts) {
  spec_.forces.added_mass.coefficient = coefficient;
  spec_.forces.added_mass.parts = std::move(parts);
  spec_.forces.added_mass.given = true;
  return *this;
}

SceneBuilder& SceneBuilder::aerodynamic_drag(Real coefficient, Real medium_density) {
  spec_.forces.drag_coefficient = coefficient;
  spec_.forces.drag_density = medium_density;
  return *this;
}

SceneBuilder& SceneBuilder::resistive_force(Real tangential, Real normal) {
  spec_.forces.rft_tangential = tangential;
  spec_.forces.rft_normal = normal;
  return *this;
}

SceneBuilder& SceneBuilder::stiffness_damping(Real beta) {
  spec_.forces.stiffness_damping = beta;
  return *this;
}

SceneBuilder& SceneBuilder::kelvin_voigt(Real eta) {
  spec_.forces.kelvin_voigt = eta;
  return *this;
}

SceneBuilder& SceneBuilder::mass_damping(Real alpha) {
  spec_.forces.mass_damping = alpha;
  return *this;
}

SceneBuilder& SceneBuilder::initial_velocity(int part, int index, Vec3 v) {
  spec_.initial_velocities.emplace_back(NodeRef{part, index, {}}, v);
  return *this;
}

SceneBuilder& SceneBuilder::point_mass(int part, int index, Real mass) {
  spec_.point_masses.push_back(PointMassSpec{NodeRef{part, index, {}}, mass, {}});
  return *this;
}

SceneSpec SceneBuilder::build() const {
  SceneSpec s = spec_;
  validate_scene(s);
  return s;
}

}  // namespace slender
