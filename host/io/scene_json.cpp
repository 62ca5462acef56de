// Scene files: JSON (docs/scene_format.md) to SceneSpec. Every part, reference, load and joint
// keeps the file, line and JSON path it came from, so that validate_scene() can point at it.

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "io/input_file.h"
#include "io/json.h"
#include "io/text_rows.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"

namespace slender {

bool backend_from_name(const std::string& name, BackendKind& kind) {
  if (name != "cpu" && name != "cuda") return false;
  kind = name == "cuda" ? BackendKind::kCuda : BackendKind::kCpu;
  return true;
}

const char* backend_name(BackendKind kind) { return kind == BackendKind::kCuda ? "cuda" : "cpu"; }

namespace {

std::string indexed(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class SceneReader {
 public:
  SceneReader(std::string file, std::string base_dir)
      : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

  SceneSpec read(const JsonValue& root);

 private:
  SourceLoc loc(const JsonValue& v, const std::string& path) const {
    return SourceLoc{file_, v.line, path};
  }

  // a path from the scene, relative to the scene's folder, that must name a readable file
  std::string input_file(const JsonObject& o, const std::string& key) const {
    const std::string given = o.string(key);
    std::filesystem::path p(given);
    if (p.is_relative() && !base_dir_.empty()) {
      p = std::filesystem::path(base_dir_) / p;
    }
    const std::string resolved = p.string();
    std::error_code ec;
    if (given.empty() || !std::filesystem::exists(resolved, ec)) {
      o.fail(key, "cannot open file '" + given + "' (looked for '" + resolved + "')");
    }
    // a regular file within the readers' limit (a FIFO is not opened: it would block)
    try {
      check_input_file(resolved, kMaxGeometryFileBytes, "the file");
    } catch (const InputError& e) {
      o.fail(key, "'" + given + "': " + e.message());
    }
    if (!std::ifstream(resolved)) {
      o.fail(key, "cannot open file '" + given + "' (looked for '" + resolved + "')");
    }
    return resolved;
  }

  void read_materials(const JsonObject& root);
  void read_friction_pairs(const JsonObject& contact);
  void read_rod(const JsonValue& v, const std::string& path);
  void read_network(const JsonValue& v, const std::string& path);
  void read_common(const JsonObject& o, PartSpec& p);
  void read_identity(const JsonObject& o, PartSpec& p);
  void read_section(const JsonObject& o, PartSpec& p, const std::string& hint);
  void read_shell_properties(const JsonObject& o, PartSpec& p);
  void read_shell(const JsonValue& v, const std::string& path);
  void read_mesh(const JsonObject& mesh, PartSpec& p);
  std::vector<Vec3> points(const JsonObject& o, const std::string& key) const;
  template <size_t N>
  std::vector<std::array<int, N>> index_rows(const JsonObject& o, const std::string& key) const;
  void read_springs(const JsonObject& o, PartSpec& p);
  void read_shape(const JsonObject& shape, PartSpec& p);
  void read_natural_shape(const JsonObject& o, PartSpec& p, bool closed);
  void read_initial_velocity(const JsonObject& o, int part);
  void read_initial_twist(const JsonObject& o, PartSpec& p) const;
  void add_part(const JsonObject& o, PartSpec p);

  int part_of(const JsonObject& o) const;
  NodeRef node_ref(const JsonObject& o, const std::string& key) const;
  std::vector<NodeRef> node_list(const JsonObject& o, const std::string& key) const;
  void read_joints(const JsonObject& root);
  void read_point_masses(const JsonObject& root);
  void read_selection(const JsonObject& b, DofSelection& sel) const;
  void read_boundary(const JsonObject& b);
  void read_forces(const JsonObject& f);
  void read_actuation(const JsonValue& list);
  void read_actuation_fields(const JsonObject& o, ActuationSpec& a) const;
  std::vector<Real> numbers_or_one(const JsonObject& o, const std::string& key) const;
  ControllerSpec read_controller(const JsonObject& o) const;
  TimeFunction read_time(const JsonObject& t) const;
  void read_family_field(const JsonObject& f, const FamilySceneInfo& fam);
  void read_integrator(const JsonObject& g);
  void read_output(const JsonObject& o);

 public:
  void read_controllers(const JsonValue& list);
  // the parts a controller may name (read_controllers_text: a model's scene), by name
  void set_part_names(const std::vector<PartSpec>& parts) {
    for (const PartSpec& p : parts) {
      s_.parts.emplace_back();
      s_.parts.back().name = p.name;
    }
  }
  std::vector<ControllerSpec> take_controllers() { return std::move(s_.controllers); }

 private:
  std::string file_;
  std::string base_dir_;
  SceneSpec s_;
};

// ---- materials and parts -----------------------------------------------------------------

void SceneReader::read_materials(const JsonObject& root) {
  const JsonValue& list = root.array("materials");
  for (size_t i = 0; i < list.array.size(); ++i) {
    const JsonObject o(list.array[i], file_, indexed("materials", i));
    o.allow_only({"name", "density", "youngs_modulus", "poisson_ratio"});
    Material m;
    m.name = o.string("name");
    for (const Material& other : s_.materials) {
      if (other.name == m.name) {
        o.fail("name", "duplicate material name '" + m.name + "' (first at line " +
                           std::to_string(other.loc.line) + ")");
      }
    }
    m.density = o.number("density");
    m.youngs_modulus = o.number("youngs_modulus");
    m.poisson_ratio = o.number("poisson_ratio");
    m.loc = loc(o.value(), o.path());
    s_.materials.push_back(std::move(m));
  }
}

// "friction_pairs": [{"materials": ["a", "b"], "mu": 0.3}, ...]
void SceneReader::read_friction_pairs(const JsonObject& contact) {
  const JsonValue& list = contact.array("friction_pairs");
  for (size_t i = 0; i < list.array.size(); ++i) {
    const JsonObject o(list.array[i], file_, indexed(contact.path_of("friction_pairs"), i));
    o.allow_only({"materials", "mu"});
    const JsonValue& names = o.array("materials");
    if (names.array.size() != 2) o.fail("materials", "needs exactly two material names");
    FrictionPairSpec fp;
    int* idx[2] = {&fp.material_a, &fp.material_b};
    for (int a = 0; a < 2; ++a) {
      const std::string path = o.path_of("materials") + "[" + std::to_string(a) + "]";
      const std::string& name = json_string(names.array[a], file_, path);
      for (size_t k = 0; k < s_.materials.size(); ++k)
        if (s_.materials[k].name == name) *idx[a] = int(k);
      if (*idx[a] < 0) {
        json_fail(file_, names.array[a], path, "unknown material '" + name + "'");
      }
    }
    fp.mu = o.number("mu");
    fp.loc = loc(o.value(), o.path());
    s_.contact.friction_pairs.push_back(fp);
  }
}

// name, source location and material: shared by every part
void SceneReader::read_identity(const JsonObject& o, PartSpec& p) {
  p.name = o.string("name");
  p.loc = loc(o.value(), o.path());

  const std::string material = o.string("material");
  p.material = -1;
  for (size_t k = 0; k < s_.materials.size(); ++k) {
    if (s_.materials[k].name == material) {
      p.material = int(k);
    }
  }
  if (p.material < 0) {
    o.fail("material", "unknown material '" + material + "'");
  }
  // the part's Young's modulus in time: {"time": s(t)}, E (1 + s(t))
  if (o.has("youngs_modulus")) {
    const JsonObject y = o.object("youngs_modulus");
    y.allow_only({"time"});
    p.youngs_in_time = true;
    p.youngs_time = read_time(y.object("time"));
  }
  // the part's own damping, alpha and beta (a negative value in the spec means "the scene's",
  // so a negative one given here is refused here)
  if (o.has("damping")) {
    const JsonObject d = o.object("damping");
    d.allow_only({"mass_proportional", "stiffness_proportional", "kelvin_voigt"});
    p.mass_damping = d.number_or("mass_proportional", -1);
    if (d.has("mass_proportional") && !(p.mass_damping >= 0)) {
      d.fail("mass_proportional", "must be 0 or more [1/s]");
    }
    p.stiffness_damping = d.number_or("stiffness_proportional", -1);
    if (d.has("stiffness_proportional") && !(p.stiffness_damping >= 0)) {
      d.fail("stiffness_proportional", "must be 0 or more [s]");
    }
    p.kelvin_voigt = d.number_or("kelvin_voigt", -1);
    if (d.has("kelvin_voigt") && !(p.kelvin_voigt >= 0)) {
      d.fail("kelvin_voigt", "must be 0 or more [Pa s]");
    }
  }
}

// exactly one of radius and cross_section; `hint` explains why a missing one is needed
void SceneReader::read_section(const JsonObject& o, PartSpec& p, const std::string& hint) {
  if (o.has("radius") == o.has("cross_section")) {
    o.fail("radius", o.has("radius") ? "give either radius or cross_section, not both"
                                     : "missing required field (or give cross_section)" + hint);
  }
  if (o.has("radius")) {
    p.section = SceneBuilder::circle(o.number("radius"));
  } else {
    const JsonObject cs = o.object("cross_section");
    cs.allow_only({"width", "height"});
    p.section = SceneBuilder::rectangle(cs.number("width"), cs.number("height"));
  }
}

// material, cross-section, stiffness overrides and frame: shared by rods and networks
void SceneReader::read_common(const JsonObject& o, PartSpec& p) {
  read_identity(o, p);
  read_section(o, p, "");

  // overrides must be positive here: in the spec a negative value means "derive it"
  if (o.has("stiffness")) {
    const JsonObject k = o.object("stiffness");
    k.allow_only({"EA", "EI1", "EI2", "GJ"});
    const std::pair<const char*, Real*> fields[4] = {{"EA", &p.stiffness.EA},
                                                     {"EI1", &p.stiffness.EI1},
                                                     {"EI2", &p.stiffness.EI2},
                                                     {"GJ", &p.stiffness.GJ}};
    for (const auto& [key, out] : fields) {
      if (!k.has(key)) continue;
      *out = k.number(key);
      if (!(*out > 0)) {
        k.fail(key, "stiffness must be positive");
      }
    }
  }
  p.frame_normal = o.vec3_or("frame_normal", p.frame_normal);
  if (o.has("springs")) read_springs(o.object("springs"), p);
  // the rod edges' stretching law: {"law": "hookean" | "neo_hookean" | "ogden", "alpha" (ogden),
  // "scale" (a factor on EA, Bartholdt's c_e)}
  if (o.has("stretching")) {
    const JsonObject s = o.object("stretching");
    s.allow_only({"law", "alpha", "scale"});
    PartSpec::StretchLaw& law = p.stretch_law;
    const std::string name = s.string("law");
    if (name == "hookean") {
      law.kind = PartSpec::StretchLaw::kHookean;
    } else if (name == "neo_hookean") {
      law.kind = PartSpec::StretchLaw::kNeoHookean;
    } else if (name == "ogden") {
      law.kind = PartSpec::StretchLaw::kOgden;
    } else {
      s.fail("law",
             "unknown stretching law '" + name + "' (expected hookean, neo_hookean or ogden)");
    }
    law.alpha = s.number_or("alpha", 0);  // validate_scene checks the values
    law.scale = s.number_or("scale", 1);
  }
}

// per-spring stiffness overrides: {"stretch": [{"edge", "EA"}], "bend_twist": [{"node", ...}]}
void SceneReader::read_springs(const JsonObject& o, PartSpec& p) {
  o.allow_only({"stretch", "bend_twist"});
  if (o.has("stretch")) {
    const JsonValue& list = o.array("stretch");
    for (size_t i = 0; i < list.array.size(); ++i) {
      const JsonObject e(list.array[i], file_, o.path() + ".stretch[" + std::to_string(i) + "]");
      e.allow_only({"edge", "EA"});
      StretchSpringOverride r;
      r.edge = e.integer("edge");
      r.EA = e.number("EA");
      if (!(r.EA > 0)) e.fail("EA", "stiffness must be positive");
      r.loc = loc(e.value(), e.path());
      p.stretch_springs.push_back(r);
    }
  }
  if (o.has("bend_twist")) {
    const JsonValue& list = o.array("bend_twist");
    for (size_t i = 0; i < list.array.size(); ++i) {
      const JsonObject e(list.array[i], file_, o.path() + ".bend_twist[" + std::to_string(i) + "]");
      e.allow_only({"node", "EI1", "EI2", "GJ"});
      BendSpringOverride r;
      r.node = e.integer("node");
      const std::pair<const char*, Real*> fields[3] = {
          {"EI1", &r.EI1}, {"EI2", &r.EI2}, {"GJ", &r.GJ}};
      for (const auto& [key, out] : fields) {
        if (!e.has(key)) continue;
        *out = e.number(key);
        if (!(*out > 0)) e.fail(key, "stiffness must be positive");
      }
      r.loc = loc(e.value(), e.path());
      p.bend_springs.push_back(r);
    }
  }
}

void SceneReader::add_part(const JsonObject& o, PartSpec p) {
  for (const PartSpec& other : s_.parts) {
    if (other.name == p.name) {
      o.fail("name", "duplicate part name '" + p.name + "' (first at " + other.loc.field +
                         ", line " + std::to_string(other.loc.line) + ")");
    }
  }
  s_.parts.push_back(std::move(p));
}

void SceneReader::read_rod(const JsonValue& v, const std::string& path) {
  const JsonObject o(v, file_, path);
  o.allow_only({"name", "material", "radius", "cross_section", "shape", "stiffness", "frame_normal",
                "natural_curvature", "natural_twist", "initial_velocity", "springs", "damping",
                "stretching", "youngs_modulus", "initial_twist_angle", "initial_twist_velocity"});
  PartSpec p;
  read_common(o, p);
  read_shape(o.object("shape"), p);
  read_natural_shape(o, p, p.edges.size() == p.nodes.size());
  read_initial_twist(o, p);
  add_part(o, std::move(p));
  read_initial_velocity(o, int(s_.parts.size()) - 1);
}

void SceneReader::read_network(const JsonValue& v, const std::string& path) {
  const JsonObject o(v, file_, path);
  o.allow_only({"name",
                "material",
                "radius",
                "cross_section",
                "file",
                "nodes",
                "edges",
                "triangles",
                "stiffness",
                "frame_normal",
                "initial_velocity",
                "springs",
                "thickness",
                "bending",
                "membrane",
                "hinge_stiffness",
                "contact_thickness",
                "damping",
                "stretching",
                "youngs_modulus",
                "initial_twist_angle",
                "initial_twist_velocity"});
  PartSpec p;
  read_common(o, p);
  p.is_rod = false;
  // its geometry: a MAT-DiSMech file, or given in place: "nodes" ([x, y, z] each), "edges" and
  // "triangles" (0-based node indices; validate_scene checks them)
  if (o.has("file") == o.has("nodes")) {
    o.fail(o.has("file") ? "nodes" : "file",
           o.has("file") ? "give either a geometry \"file\" or \"nodes\", not both"
                         : "a network needs a geometry \"file\" or its \"nodes\" and \"edges\"");
  }
  if (o.has("file")) {
    if (o.has("edges") || o.has("triangles")) {
      o.fail(o.has("edges") ? "edges" : "triangles", "only with \"nodes\", not with a \"file\"");
    }
    GeometryFile g = read_geometry_file(input_file(o, "file"));
    p.nodes = std::move(g.nodes);
    p.edges = std::move(g.edges);
    p.triangles = std::move(g.triangles);
  } else {
    p.nodes = points(o, "nodes");
    if (o.has("edges")) p.edges = index_rows<2>(o, "edges");
    if (o.has("triangles")) p.triangles = index_rows<3>(o, "triangles");
  }

  // triangles make the network a rod + shell structure (validate_scene asks for the
  // thickness); without triangles there is no shell to describe
  if (p.triangles.empty() && (o.has("thickness") || o.has("bending") || o.has("membrane") ||
                              o.has("hinge_stiffness") || o.has("contact_thickness"))) {
    const char* key = o.has("thickness")         ? "thickness"
                      : o.has("bending")         ? "bending"
                      : o.has("membrane")        ? "membrane"
                      : o.has("hinge_stiffness") ? "hinge_stiffness"
                                                 : "contact_thickness";
    o.fail(key, o.has("file") ? "only for geometry files with *Triangles (this one has none)"
                              : "only for networks with \"triangles\" (this one has none)");
  }
  read_shell_properties(o, p);
  read_initial_twist(o, p);
  add_part(o, std::move(p));
  read_initial_velocity(o, int(s_.parts.size()) - 1);
}

// "thickness" (validate_scene checks it), "bending": "hinge" (default) or "mid_edge", for
// hinges "hinge_stiffness": "papers" (default) or "geometric", and "membrane": "neo_hookean"
// (default), "stvk" or "springs" (validate_scene checks the material's Poisson ratio against
// the law)
void SceneReader::read_shell_properties(const JsonObject& o, PartSpec& p) {
  p.thickness = o.number_or("thickness", 0);
  p.contact_thickness = o.number_or("contact_thickness", 0);
  const std::string bending = o.string_or("bending", "hinge");
  if (bending == "hinge") {
    p.bending = ShellBending::kHinge;
  } else if (bending == "mid_edge") {
    p.bending = ShellBending::kMidEdge;
  } else {
    o.fail("bending", "unknown bending model '" + bending + "' (expected hinge or mid_edge)");
  }
  const std::string membrane = o.string_or("membrane", "neo_hookean");
  if (membrane == "neo_hookean") {
    p.membrane = MembraneModel::kNeoHookean;
  } else if (membrane == "stvk") {
    p.membrane = MembraneModel::kStvk;
  } else if (membrane == "springs") {
    p.membrane = MembraneModel::kSprings;
  } else {
    o.fail("membrane",
           "unknown membrane model '" + membrane + "' (expected neo_hookean, stvk or springs)");
  }
  if (o.has("hinge_stiffness")) {
    if (p.bending != ShellBending::kHinge) {
      o.fail("hinge_stiffness", "only for \"bending\": \"hinge\" (this part bends by mid_edge)");
    }
    const std::string k = o.string("hinge_stiffness");
    if (k == "papers") {
      p.hinge_stiffness = HingeStiffness::kPapers;
    } else if (k == "geometric") {
      p.hinge_stiffness = HingeStiffness::kGeometric;
    } else {
      o.fail("hinge_stiffness",
             "unknown hinge stiffness '" + k + "' (expected papers or geometric)");
    }
  }
}

void SceneReader::read_shell(const JsonValue& v, const std::string& path) {
  const JsonObject o(v, file_, path);
  o.allow_only({"name", "material", "thickness", "bending", "membrane", "hinge_stiffness", "mesh",
                "radius", "cross_section", "initial_velocity", "contact_thickness", "damping",
                "youngs_modulus"});
  PartSpec p;
  read_identity(o, p);
  o.require("thickness");
  read_shell_properties(o, p);
  read_mesh(o.object("mesh"), p);

  // a cross-section only for rod edges from a mesh file
  if (!p.edges.empty()) {
    read_section(o, p, ": the mesh file has rod edges");
  } else if (o.has("radius") || o.has("cross_section")) {
    const char* key = o.has("radius") ? "radius" : "cross_section";
    o.fail(key, "only for mesh files with rod edges (this mesh has none)");
  }
  add_part(o, std::move(p));
  read_initial_velocity(o, int(s_.parts.size()) - 1);
}

// the mesh generators are SceneBuilder's, as for rod shapes; the builder's argument errors move
// to the mesh's line and key ("disk_shell.radius" -> "radius")
void SceneReader::read_mesh(const JsonObject& mesh, PartSpec& p) {
  const std::string type = mesh.string("type");
  SceneBuilder b;
  try {
    if (type == "rectangle") {
      mesh.allow_only({"type", "origin", "u", "v", "edge_length", "structured"});
      b.rectangle_shell(p.name, mesh.vec3_or("origin", Vec3::zero()), mesh.vec3("u"),
                        mesh.vec3("v"), mesh.number("edge_length"),
                        mesh.boolean_or("structured", true), 0, p.thickness, p.bending);
    } else if (type == "disk") {
      mesh.allow_only({"type", "center", "normal", "radius", "edge_length"});
      b.disk_shell(p.name, mesh.vec3_or("center", Vec3::zero()), mesh.vec3("normal"),
                   mesh.number("radius"), mesh.number("edge_length"), 0, p.thickness, p.bending);
    } else if (type == "hexagon") {
      mesh.allow_only({"type", "center", "normal", "side", "edge_length"});
      b.hexagon_shell(p.name, mesh.vec3_or("center", Vec3::zero()), mesh.vec3("normal"),
                      mesh.number("side"), mesh.number("edge_length"), 0, p.thickness, p.bending);
    } else if (type == "hemisphere") {
      mesh.allow_only({"type", "center", "axis", "radius", "edge_length"});
      b.hemisphere_shell(p.name, mesh.vec3_or("center", Vec3::zero()), mesh.vec3("axis"),
                         mesh.number("radius"), mesh.number("edge_length"), 0, p.thickness,
                         p.bending);
    } else if (type == "file") {
      mesh.allow_only({"type", "path"});
      b.mesh_file_shell(p.name, input_file(mesh, "path"), 0, p.thickness, p.bending);
    } else if (type == "mesh") {
      // given in place: "nodes" ([x, y, z] each) and "triangles" (0-based node indices)
      mesh.allow_only({"type", "nodes", "triangles"});
      if (const JsonValue* t = mesh.find("triangles"); t && t->is_array() && t->array.empty()) {
        mesh.fail("triangles", "the mesh has no triangles (a shell needs at least one)");
      }
      b.mesh_shell(p.name, points(mesh, "nodes"), index_rows<3>(mesh, "triangles"), 0, p.thickness,
                   p.bending);
    } else {
      mesh.fail("type", "unknown mesh type '" + type +
                            "' (expected rectangle, disk, hexagon, hemisphere, file or mesh)");
    }
  } catch (const InputError& e) {
    // only the builder's own argument errors have neither file nor line
    if (!e.file().empty() || e.line() != 0) {
      throw;
    }
    mesh.fail(e.field().substr(e.field().find('.') + 1), e.message());
  }
  PartSpec& made = b.spec().parts[0];
  p.is_rod = false;
  p.nodes = std::move(made.nodes);
  p.edges = std::move(made.edges);
  p.triangles = std::move(made.triangles);
}

// a list of points [[x, y, z], ...] under `key`
std::vector<Vec3> SceneReader::points(const JsonObject& o, const std::string& key) const {
  const JsonValue& pts = o.array(key);
  std::vector<Vec3> x;
  x.reserve(pts.array.size());
  for (size_t i = 0; i < pts.array.size(); ++i) {
    x.push_back(json_vec3(pts.array[i], file_, indexed(o.path_of(key), i)));
  }
  return x;
}

// a list of index rows [[i, j], ...] (N integers each) under `key`
template <size_t N>
std::vector<std::array<int, N>> SceneReader::index_rows(const JsonObject& o,
                                                        const std::string& key) const {
  const JsonValue& rows = o.array(key);
  std::vector<std::array<int, N>> out(rows.array.size());
  for (size_t i = 0; i < rows.array.size(); ++i) {
    const std::string path = indexed(o.path_of(key), i);
    const JsonValue& row = json_array(rows.array[i], file_, path);
    if (row.array.size() != N) {
      throw InputError(file_, row.line, path,
                       "expected " + std::to_string(N) + " node indices, got " +
                           std::to_string(row.array.size()));
    }
    for (size_t k = 0; k < N; ++k)
      out[i][k] = json_int(row.array[k], file_, indexed(path, k));
  }
  return out;
}

// the rod generators are SceneBuilder's, so a JSON rod and a built rod are the same bits; the
// builder's own argument errors are moved to the shape's line and key
void SceneReader::read_shape(const JsonObject& shape, PartSpec& p) {
  const std::string type = shape.string("type");
  SceneBuilder b;
  try {
    if (type == "straight") {
      shape.allow_only({"type", "start", "end", "nodes"});
      b.straight_rod(p.name, shape.vec3("start"), shape.vec3("end"), shape.integer("nodes"), 0,
                     p.section);
    } else if (type == "nodes" || type == "file") {
      std::vector<Vec3> x;
      if (type == "nodes") {
        shape.allow_only({"type", "points", "closed"});
        x = points(shape, "points");
      } else {
        shape.allow_only({"type", "path", "closed"});
        x = read_vector_file(input_file(shape, "path"));
      }
      b.polyline_rod(p.name, std::move(x), 0, p.section, shape.boolean_or("closed", false));
    } else if (type == "polyline") {
      shape.allow_only({"type", "points", "max_edge_length"});
      std::vector<Vec3> x = points(shape, "points");
      if (shape.has("max_edge_length")) {
        b.polyline_rod_resampled(p.name, x, shape.number("max_edge_length"), 0, p.section);
      } else {
        b.polyline_rod(p.name, std::move(x), 0, p.section);
      }
    } else if (type == "helix") {
      shape.allow_only({"type", "center", "axis", "radius", "pitch", "length", "nodes"});
      b.helix_rod(p.name, shape.vec3_or("center", Vec3::zero()), shape.vec3("axis"),
                  shape.number("radius"), shape.number("pitch"), shape.number("length"),
                  shape.integer("nodes"), 0, p.section);
    } else {
      shape.fail("type", "unknown shape type '" + type +
                             "' (expected straight, polyline, nodes, helix or file)");
    }
  } catch (const InputError& e) {
    // only the builder's own argument errors have neither file nor line
    if (!e.file().empty() || e.line() != 0) {
      throw;
    }
    // "polyline_rod.nodes" -> the JSON key that holds that argument
    std::string key = e.field().substr(e.field().find('.') + 1);
    if (key == "corners" || (key == "nodes" && type != "straight" && type != "helix")) {
      key = type == "file" ? "path" : "points";
    }
    shape.fail(key, e.message());
  }
  PartSpec& made = b.spec().parts[0];
  p.nodes = std::move(made.nodes);
  p.edges = std::move(made.edges);
}

void SceneReader::read_natural_shape(const JsonObject& o, PartSpec& p, bool closed) {
  const size_t n = p.nodes.size();
  const size_t interior = closed ? n : (n >= 2 ? n - 2 : 0);
  if (const JsonValue* k = o.find("natural_curvature")) {
    const std::string path = o.path_of("natural_curvature");
    if (k->is_object()) {
      const JsonObject u(*k, file_, path);
      u.allow_only({"uniform"});
      const std::vector<double> v =
          json_numbers(u.require("uniform"), file_, u.path_of("uniform"), 2);
      p.natural_curvature.assign(interior, {v[0], v[1]});
    } else {
      const JsonValue& list = json_array(*k, file_, path);
      for (size_t i = 0; i < list.array.size(); ++i) {
        const std::vector<double> v = json_numbers(list.array[i], file_, indexed(path, i), 2);
        p.natural_curvature.push_back({v[0], v[1]});
      }
    }
  }
  if (const JsonValue* t = o.find("natural_twist")) {
    const std::string path = o.path_of("natural_twist");
    if (t->is_object()) {
      const JsonObject u(*t, file_, path);
      u.allow_only({"uniform"});
      p.natural_twist.assign(interior, u.number("uniform"));
    } else {
      const JsonValue& list = json_array(*t, file_, path);
      for (size_t i = 0; i < list.array.size(); ++i) {
        p.natural_twist.push_back(json_number(list.array[i], file_, indexed(path, i)));
      }
    }
  }
}

// the initial twist angle and velocity of the part's rod edges: {"uniform": v}, or one number
// per edge
void SceneReader::read_initial_twist(const JsonObject& o, PartSpec& p) const {
  auto read = [&](const char* key, std::vector<Real>& out) {
    const JsonValue* t = o.find(key);
    if (!t) return;
    const std::string path = o.path_of(key);
    if (p.edges.empty()) o.fail(key, "the part has no rod edges (a twist belongs to a rod edge)");
    if (t->is_object()) {
      const JsonObject u(*t, file_, path);
      u.allow_only({"uniform"});
      out.assign(p.edges.size(), u.number("uniform"));
      return;
    }
    const JsonValue& list = json_array(*t, file_, path);
    if (list.array.size() != p.edges.size()) {
      o.fail(key, "has " + std::to_string(list.array.size()) + " entries, the part " +
                      std::to_string(p.edges.size()) + " rod edges (one per edge, or " +
                      "{\"uniform\": value})");
    }
    for (size_t i = 0; i < list.array.size(); ++i)
      out.push_back(json_number(list.array[i], file_, indexed(path, i)));
  };
  read("initial_twist_angle", p.initial_twist_angle);
  read("initial_twist_velocity", p.initial_twist_velocity);
}

// one (node, velocity) pair per node of the part: uniform, or one file row per node
void SceneReader::read_initial_velocity(const JsonObject& o, int part) {
  const JsonValue* v = o.find("initial_velocity");
  if (!v) return;
  const std::string path = o.path_of("initial_velocity");
  const size_t n = s_.parts[size_t(part)].nodes.size();
  std::vector<Vec3> u;
  if (v->is_object()) {
    const JsonObject f(*v, file_, path);
    f.allow_only({"file"});
    u = read_vector_file(input_file(f, "file"));
    if (u.size() != n) {
      f.fail("file", "the velocity file has " + std::to_string(u.size()) +
                         " rows but the part has " + std::to_string(n) + " nodes");
    }
  } else {
    u.assign(n, json_vec3(*v, file_, path));
  }
  for (size_t i = 0; i < n; ++i) {
    s_.initial_velocities.emplace_back(NodeRef{part, int(i), loc(*v, path)}, u[i]);
  }
}

// ---- references --------------------------------------------------------------------------

int SceneReader::part_of(const JsonObject& o) const {
  const std::string name = o.string("part");
  for (size_t k = 0; k < s_.parts.size(); ++k) {
    if (s_.parts[k].name == name) {
      return int(k);
    }
  }
  std::string names;
  for (const PartSpec& p : s_.parts) {
    names += (names.empty() ? "" : ", ") + p.name;
  }
  o.fail("part", "unknown part '" + name + "' (parts: " + names + ")");
}

NodeRef SceneReader::node_ref(const JsonObject& o, const std::string& key) const {
  NodeRef r;
  r.part = part_of(o);
  r.index = o.integer(key);
  r.loc = loc(o.require(key), o.path_of(key));
  return r;
}

// {"part": name, key: [i, j, ...]} -> one reference per index
std::vector<NodeRef> SceneReader::node_list(const JsonObject& o, const std::string& key) const {
  const int part = part_of(o);
  const JsonValue& list = o.array(key);
  std::vector<NodeRef> out;
  for (size_t i = 0; i < list.array.size(); ++i) {
    const std::string path = indexed(o.path_of(key), i);
    out.push_back(NodeRef{part, json_int(list.array[i], file_, path), loc(list.array[i], path)});
  }
  return out;
}

void SceneReader::read_joints(const JsonObject& root) {
  const JsonValue& list = root.array("joints");
  for (size_t j = 0; j < list.array.size(); ++j) {
    const std::string path = indexed("joints", j);
    const JsonValue& members = json_array(list.array[j], file_, path);
    JointSpec joint;
    joint.loc = loc(members, path);
    for (size_t k = 0; k < members.array.size(); ++k) {
      const JsonObject r(members.array[k], file_, indexed(path, k));
      r.allow_only({"part", "node"});
      joint.nodes.push_back(node_ref(r, "node"));
    }
    s_.joints.push_back(std::move(joint));
  }
}

// "point_masses": [{"part": name, "node": i, "mass": kg}, ...]
void SceneReader::read_point_masses(const JsonObject& root) {
  const JsonValue& list = root.array("point_masses");
  for (size_t i = 0; i < list.array.size(); ++i) {
    const JsonObject o(list.array[i], file_, indexed("point_masses", i));
    o.allow_only({"part", "node", "mass"});
    PointMassSpec pm;
    pm.node = node_ref(o, "node");
    pm.mass = o.number("mass");
    pm.loc = loc(o.value(), o.path());
    s_.point_masses.push_back(pm);
  }
}

// the DOF selections of the boundary block and of its events: fixed_nodes, fixed_edges,
// fixed_twist, fixed_dofs
void SceneReader::read_selection(const JsonObject& b, DofSelection& sel) const {
  auto each = [&](const char* key, auto&& f) {
    if (!b.has(key)) return;
    const JsonValue& list = b.array(key);
    for (size_t i = 0; i < list.array.size(); ++i) {
      f(JsonObject(list.array[i], file_, indexed(b.path_of(key), i)));
    }
  };
  each("fixed_nodes", [&](const JsonObject& o) {
    o.allow_only({"part", "nodes"});
    for (const NodeRef& r : node_list(o, "nodes")) {
      sel.nodes.push_back(r);
    }
  });
  // rod edges by index ("edges": both nodes and the twist), or shell edges by their nodes
  // ("nodes": a clamp, the nodes and the mid-edge xi of the edges between them)
  each("fixed_edges", [&](const JsonObject& o) {
    o.allow_only({"part", "edges", "nodes"});
    if (o.has("edges") == o.has("nodes")) {
      o.fail(o.has("edges") ? "nodes" : "edges",
             "give either \"edges\" (a rod's edges) or \"nodes\" (a shell's clamped nodes)");
    }
    if (o.has("nodes")) {
      sel.shell_edges.push_back(node_list(o, "nodes"));
      return;
    }
    for (const NodeRef& r : node_list(o, "edges")) {
      sel.edges.push_back({r.part, r.index, r.loc});
    }
  });
  each("fixed_twist", [&](const JsonObject& o) {
    o.allow_only({"part", "edges"});
    for (const NodeRef& r : node_list(o, "edges")) {
      sel.twist.push_back({r.part, r.index, r.loc});
    }
  });
  each("fixed_dofs", [&](const JsonObject& o) {
    o.allow_only({"part", "node", "components"});
    FixedDofSpec f;
    f.node = node_ref(o, "node");
    f.fix = {false, false, false};
    const std::string c = o.string("components");
    for (const char ch : c) {
      const int k = ch == 'x' ? 0 : ch == 'y' ? 1 : ch == 'z' ? 2 : -1;
      if (k < 0 || f.fix[size_t(k)]) {
        o.fail("components", "expected a non-repeating subset of \"xyz\", got \"" + c + "\"");
      }
      f.fix[size_t(k)] = true;
    }
    if (c.empty()) {
      o.fail("components", "expected a non-empty subset of \"xyz\"");
    }
    sel.dofs.push_back(f);
  });
}

void SceneReader::read_boundary(const JsonObject& b) {
  b.allow_only(
      {"fixed_nodes", "fixed_edges", "clamps", "fixed_twist", "fixed_dofs", "motions", "events"});
  auto each = [&](const char* key, auto&& f) {
    if (!b.has(key)) return;
    const JsonValue& list = b.array(key);
    for (size_t i = 0; i < list.array.size(); ++i) {
      f(JsonObject(list.array[i], file_, indexed(b.path_of(key), i)));
    }
  };
  DofSelection fixed;
  read_selection(b, fixed);
  s_.fixed_nodes = std::move(fixed.nodes);
  s_.fixed_edges = std::move(fixed.edges);
  s_.fixed_shell_edges = std::move(fixed.shell_edges);
  s_.fixed_twist = std::move(fixed.twist);
  s_.fixed_dofs = std::move(fixed.dofs);
  // a rod end built in at the node itself
  each("clamps", [&](const JsonObject& o) {
    o.allow_only({"part", "node"});
    s_.clamps.push_back(node_ref(o, "node"));
  });
  // changes of the fixed DOFs in time: {"time", "fix" or "release": a selection}
  each("events", [&](const JsonObject& o) {
    o.allow_only({"time", "fix", "release"});
    BoundaryEvent ev;
    ev.loc = loc(o.value(), o.path());
    ev.time = o.number("time");
    if (o.has("fix") == o.has("release")) {
      o.fail(o.has("fix") ? "release" : "fix",
             "an event either fixes (\"fix\": {...}) or releases (\"release\": {...}) DOFs");
    }
    ev.release = o.has("release");
    const char* key = ev.release ? "release" : "fix";
    const JsonObject sel = o.object(key);
    if (sel.has("clamps")) {
      sel.fail("clamps",
               "a clamp at a node (its ghost edge) does not let go; clamp the rod's end edge with "
               "fixed_edges to fix and release it");
    }
    sel.allow_only({"fixed_nodes", "fixed_edges", "fixed_twist", "fixed_dofs"});
    read_selection(sel, ev.select);
    if (ev.select.empty()) {
      o.fail(key,
             "selects no DOFs (give fixed_nodes, fixed_edges, fixed_twist or fixed_dofs "
             "entries)");
    }
    s_.events.push_back(std::move(ev));
  });
  // prescribed motion of fixed nodes and twists: {"part", "nodes", "edges", "translation",
  // "twist", "time"}
  each("motions", [&](const JsonObject& o) {
    o.allow_only({"part", "nodes", "edges", "translation", "twist", "time"});
    MotionSpec mo;
    mo.loc = loc(o.value(), o.path());
    if (!o.has("nodes") && !o.has("edges")) o.fail("nodes", "a motion needs nodes or edges");
    if (o.has("nodes")) mo.nodes = node_list(o, "nodes");
    if (o.has("edges")) {
      for (const NodeRef& r : node_list(o, "edges"))
        mo.edges.push_back({r.part, r.index, r.loc});
    }
    mo.translation = o.vec3_or("translation", mo.translation);
    mo.twist = o.number_or("twist", mo.twist);
    if (o.has("nodes") && !o.has("translation"))
      o.fail("translation", "a motion of nodes needs a translation [m]");
    if (o.has("edges") && !o.has("twist")) o.fail("twist", "a motion of edges needs a twist [rad]");
    if (o.has("time")) mo.time = read_time(o.object("time"));
    s_.motions.push_back(std::move(mo));
  });
}

// ---- forces, integrator, output ----------------------------------------------------------

TimeFunction SceneReader::read_time(const JsonObject& t) const {
  TimeFunction f;
  const std::string type = t.string("type");
  if (type == "constant") {
    t.allow_only({"type"});
  } else if (type == "sine") {
    t.allow_only({"type", "frequency", "amplitude", "phase", "offset"});
    f.kind = TimeFunction::Kind::kSine;
    f.frequency = t.number("frequency");
    f.amplitude = t.number_or("amplitude", f.amplitude);
    f.phase = t.number_or("phase", f.phase);
    f.offset = t.number_or("offset", f.offset);
  } else if (type == "ramp") {
    t.allow_only({"type", "duration"});
    f.kind = TimeFunction::Kind::kRamp;
    f.ramp_time = t.number("duration");
  } else if (type == "table") {
    t.allow_only({"type", "rows", "file"});
    f.kind = TimeFunction::Kind::kTable;
    if (t.has("rows") == t.has("file")) {
      t.fail("rows", "give either rows or file");
    }
    if (t.has("rows")) {
      const JsonValue& rows = t.array("rows");
      for (size_t r = 0; r < rows.array.size(); ++r) {
        const std::vector<double> v =
            json_numbers(rows.array[r], file_, indexed(t.path_of("rows"), r), 2);
        f.table.push_back({v[0], v[1]});
      }
    } else {
      for (const std::vector<double>& v : read_number_table(input_file(t, "file"), 2)) {
        f.table.push_back({v[0], v[1]});
      }
    }
  } else if (type == "sma") {
    t.allow_only({"type", "n", "tau", "t_bar", "t0", "start", "period"});
    f.kind = TimeFunction::Kind::kSma;
    f.sma_n = t.number("n");
    f.sma_tau = t.number("tau");
    f.sma_t_bar = t.number("t_bar");
    f.sma_t0 = t.number("t0");
    f.sma_start = t.number_or("start", 0);
    f.sma_period = t.number_or("period", 0);
  } else {
    t.fail("type",
           "unknown time function '" + type + "' (expected constant, sine, ramp, table or sma)");
  }
  return f;
}

// an actuation's target (a controller's strain) by its scene name; false for another name
bool target_from_name(const std::string& name, ActuationSpec::Target& t) {
  static const std::pair<const char*, ActuationSpec::Target> kNames[] = {
      {"hinge_angle", ActuationSpec::Target::kHingeAngle},
      {"rod_curvature1", ActuationSpec::Target::kRodCurvature1},
      {"rod_curvature2", ActuationSpec::Target::kRodCurvature2},
      {"rod_twist", ActuationSpec::Target::kRodTwist},
      {"midedge_curvature", ActuationSpec::Target::kMidEdgeCurvature},
      {"rod_stretch", ActuationSpec::Target::kRodStretch}};
  for (const auto& kv : kNames)
    if (name == kv.first) {
      t = kv.second;
      return true;
    }
  return false;
}

// the fields an actuation and a controller's reference share: part, amplitude (or series),
// ramp_in, time, select, wave
void SceneReader::read_actuation_fields(const JsonObject& o, ActuationSpec& a) const {
  a.part = part_of(o);
  // a per-spring time series (a CSV file) in place of the time function: the amplitude is
  // then optional (1: the file's values as they are)
  if (o.has("series")) {
    for (const char* k : {"time", "wave"})
      if (o.has(k))
        o.fail(k,
               "not with \"series\": the series gives each driven spring its own values "
               "in time");
    a.series = read_series_file(input_file(o, "series"), o.path_of("series"));
    a.amplitude = o.number_or("amplitude", 1);
  } else {
    a.amplitude = o.number("amplitude");
  }
  a.ramp_in = o.number_or("ramp_in", a.ramp_in);
  if (o.has("time")) a.time = read_time(o.object("time"));
  if (o.has("select")) {
    const JsonObject sel = o.object("select");
    sel.allow_only({"point", "normal", "tolerance"});
    a.select_point = sel.vec3("point");
    a.select_normal = sel.vec3("normal");
    a.select_tolerance = sel.number_or("tolerance", a.select_tolerance);
  }
  if (o.has("wave")) {
    const JsonObject w = o.object("wave");
    w.allow_only({"origin", "direction", "phase_per_length"});
    a.wave_origin = w.vec3_or("origin", a.wave_origin);
    a.wave_direction = w.vec3("direction");
    a.phase_per_length = w.number("phase_per_length");
  }
}

// natural-shape actuation: [{"target", "part", "amplitude", "time", "select", "wave"}]
void SceneReader::read_actuation(const JsonValue& list) {
  for (size_t i = 0; i < list.array.size(); ++i) {
    const JsonObject o(list.array[i], file_, "actuation[" + std::to_string(i) + "]");
    o.allow_only({"target", "part", "amplitude", "ramp_in", "time", "select", "wave", "direction",
                  "series"});
    ActuationSpec a;
    a.loc = loc(o.value(), o.path());
    const std::string target = o.string("target");
    if (!target_from_name(target, a.target)) {
      o.fail("target", "unknown target '" + target +
                           "' (expected hinge_angle, midedge_curvature, rod_curvature1, "
                           "rod_curvature2, rod_twist, rod_stretch)");
    }
    if (o.has("direction")) {
      if (a.target != ActuationSpec::Target::kMidEdgeCurvature) {
        o.fail("direction", "only for target midedge_curvature");
      }
      a.direction = o.vec3("direction");
      if (norm(a.direction) == 0) {
        o.fail("direction",
               "must not be zero (leave it out for the same curvature in every "
               "direction)");
      }
    }
    read_actuation_fields(o, a);
    s_.actuation.push_back(a);
  }
}

// a number or an array of numbers (one per spring)
std::vector<Real> SceneReader::numbers_or_one(const JsonObject& o, const std::string& key) const {
  const JsonValue& v = o.require(key);
  if (v.is_number()) return {v.number};
  if (!v.is_array()) o.fail(key, "must be a number or an array of numbers (one per spring)");
  if (v.array.empty()) o.fail(key, "must not be empty");
  std::vector<Real> out;
  for (size_t i = 0; i < v.array.size(); ++i)
    out.push_back(json_number(v.array[i], file_, indexed(o.path_of(key), i)));
  return out;
}

// feedback controllers on natural strains (docs/control.md): [{"strain", "part", reference
// fields as an actuation's, "profile", "kp", "ki", "filter_time", "spatial_smoothing",
// "rate_limit", "limits", "anti_windup", "tracking_time", "feedforward"}]
void SceneReader::read_controllers(const JsonValue& list) {
  for (size_t i = 0; i < list.array.size(); ++i) {
    const JsonObject o(list.array[i], file_, "controllers[" + std::to_string(i) + "]");
    s_.controllers.push_back(read_controller(o));
  }
}

ControllerSpec SceneReader::read_controller(const JsonObject& o) const {
  o.allow_only({"name", "strain", "part", "amplitude", "ramp_in", "time", "select", "wave",
                "series", "profile", "kp", "ki", "filter_time", "spatial_smoothing", "rate_limit",
                "limits", "anti_windup", "tracking_time", "feedforward"});
  ControllerSpec c;
  c.loc = loc(o.value(), o.path());
  c.reference.loc = c.loc;
  c.name = o.string_or("name", "");
  const std::string strain = o.string("strain");
  if (!target_from_name(strain, c.reference.target) ||
      c.reference.target == ActuationSpec::Target::kMidEdgeCurvature) {
    o.fail("strain", "unknown strain '" + strain +
                         "' (expected rod_curvature1, rod_curvature2, rod_twist, rod_stretch or "
                         "hinge_angle)");
  }
  read_actuation_fields(o, c.reference);
  if (o.has("profile")) c.profile = numbers_or_one(o, "profile");
  if (o.has("kp")) c.kp = numbers_or_one(o, "kp");
  if (o.has("ki")) c.ki = numbers_or_one(o, "ki");
  c.filter_time = o.number_or("filter_time", c.filter_time);
  c.spatial_smoothing = o.integer_or("spatial_smoothing", c.spatial_smoothing);
  c.rate_limit = o.number_or("rate_limit", c.rate_limit);
  if (o.has("limits")) {
    const std::vector<double> v = json_numbers(o.require("limits"), file_, o.path_of("limits"), 2);
    c.command_min = v[0];
    c.command_max = v[1];
  }
  const std::string aw = o.string_or("anti_windup", "back_calculation");
  if (aw == "none") {
    c.anti_windup = AntiWindup::kNone;
  } else if (aw == "clamp") {
    c.anti_windup = AntiWindup::kClamp;
  } else if (aw == "back_calculation") {
    c.anti_windup = AntiWindup::kBackCalculation;
  } else {
    o.fail("anti_windup",
           "unknown anti-windup '" + aw + "' (expected back_calculation, clamp or none)");
  }
  c.tracking_time = o.number_or("tracking_time", c.tracking_time);
  c.feedforward = o.boolean_or("feedforward", c.feedforward);
  return c;
}

// a family's field: one entry (an object) or a list of them, each with the family's fields
void SceneReader::read_family_field(const JsonObject& f, const FamilySceneInfo& fam) {
  const JsonValue& v = f.require(fam.field);
  if (!v.is_object() && !v.is_array()) f.fail(fam.field, "must be an object or a list of objects");
  const size_t n = v.is_array() ? v.array.size() : 1;
  std::vector<const char*> names;
  for (const FamilyField* d = fam.begin; d != fam.end; ++d)
    names.push_back(d->name);
  for (size_t i = 0; i < n; ++i) {
    const std::string path = v.is_array() ? indexed(f.path_of(fam.field), i) : f.path_of(fam.field);
    const JsonValue& ov = v.is_array() ? v.array[i] : v;
    if (!ov.is_object()) throw InputError(file_, ov.line, path, "must be an object");
    const JsonObject o(ov, file_, path);
    o.allow_only(names);
    FamilyInput in;
    in.field = fam.field;
    in.loc = loc(o.value(), o.path());
    for (const FamilyField* d = fam.begin; d != fam.end; ++d) {
      if (!o.has(d->name)) {
        if (d->required) o.fail(d->name, "missing (required)");
        continue;
      }
      switch (d->kind) {
        case FieldKind::kNumber:
          in.number(d->name, o.number(d->name));
          break;
        case FieldKind::kPart:
          in.part(d->name, o.string(d->name));
          break;
        case FieldKind::kTime:
          in.time(d->name, read_time(o.object(d->name)));
          break;
        case FieldKind::kVec3:
          in.vec3(d->name, o.vec3(d->name));
          break;
        case FieldKind::kWord:
          in.word(d->name, o.string(d->name));
          break;
        case FieldKind::kNumbers: {
          // one number, or a list of them
          const JsonValue& lv = o.require(d->name);
          const std::string lp = o.path_of(d->name);
          std::vector<Real> values;
          if (lv.is_number()) {
            values.push_back(lv.number);
          } else {
            if (!lv.is_array() || lv.array.empty())
              json_fail(file_, lv, lp, "must be a number or a non-empty list of numbers");
            for (size_t k = 0; k < lv.array.size(); ++k)
              values.push_back(json_number(lv.array[k], file_, indexed(lp, k)));
          }
          in.list(d->name, std::move(values));
          break;
        }
      }
    }
    s_.forces.families.push_back(std::move(in));
  }
}

void SceneReader::read_forces(const JsonObject& f) {
  // the built-in fields, then those of the families that read their own (family_table.h)
  const std::vector<FamilySceneInfo> families = family_scene_fields();
  std::vector<const char*> allowed = {
      "gravity",          "point_loads",     "viscous_drag", "damping",           "buoyancy",
      "aerodynamic_drag", "resistive_force", "ground",       "distributed_loads", "added_mass"};
  for (const FamilySceneInfo& fam : families)
    allowed.push_back(fam.field);
  f.allow_only(allowed);
  ForcesSpec& out = s_.forces;
  for (const FamilySceneInfo& fam : families)
    if (f.has(fam.field)) read_family_field(f, fam);
  out.loc = loc(f.value(), f.path());
  out.gravity = f.vec3_or("gravity", out.gravity);
  if (f.has("point_loads")) {
    const JsonValue& list = f.array("point_loads");
    for (size_t i = 0; i < list.array.size(); ++i) {
      const JsonObject o(list.array[i], file_, indexed(f.path_of("point_loads"), i));
      o.allow_only({"part", "node", "force", "time"});
      PointLoadSpec l;
      l.node = node_ref(o, "node");
      l.force = o.vec3("force");
      if (o.has("time")) {
        l.time = read_time(o.object("time"));
      }
      l.loc = loc(o.value(), o.path());
      out.point_loads.push_back(std::move(l));
    }
  }
  if (f.has("distributed_loads")) {
    const JsonValue& list = f.array("distributed_loads");
    for (size_t i = 0; i < list.array.size(); ++i) {
      const JsonObject o(list.array[i], file_, indexed(f.path_of("distributed_loads"), i));
      o.allow_only({"part", "force_per_length", "time"});
      DistributedLoadSpec l;
      l.part = part_of(o);
      l.force_per_length = o.vec3("force_per_length");
      if (o.has("time")) {
        l.time = read_time(o.object("time"));
      }
      l.loc = loc(o.value(), o.path());
      out.distributed_loads.push_back(std::move(l));
    }
  }
  if (f.has("added_mass")) {
    const JsonObject d = f.object("added_mass");
    d.allow_only({"coefficient", "parts"});
    AddedMassSpec& am = out.added_mass;
    am.given = true;
    am.loc = loc(d.value(), d.path());
    am.coefficient = d.number("coefficient");
    if (d.has("parts")) {
      const JsonValue& names = d.array("parts");
      for (size_t i = 0; i < names.array.size(); ++i) {
        const std::string path = indexed(d.path_of("parts"), i);
        const std::string& name = json_string(names.array[i], file_, path);
        int part = -1;
        for (size_t k = 0; k < s_.parts.size(); ++k)
          if (s_.parts[k].name == name) part = int(k);
        if (part < 0) json_fail(file_, names.array[i], path, "unknown part '" + name + "'");
        am.parts.push_back(part);
      }
    }
  }
  if (f.has("viscous_drag")) {
    const JsonObject d = f.object("viscous_drag");
    d.allow_only({"viscosity"});
    out.viscosity = d.number("viscosity");
  }
  if (f.has("damping")) {
    const JsonObject d = f.object("damping");
    d.allow_only({"mass_proportional", "stiffness_proportional", "kelvin_voigt"});
    out.mass_damping = d.number_or("mass_proportional", 0);
    out.stiffness_damping = d.number_or("stiffness_proportional", 0);
    out.kelvin_voigt = d.number_or("kelvin_voigt", 0);
  }
  if (f.has("buoyancy")) {
    const JsonObject d = f.object("buoyancy");
    d.allow_only({"medium_density"});
    out.buoyancy_density = d.number("medium_density");
  }
  if (f.has("ground")) {
    const JsonObject g = f.object("ground");
    g.allow_only({"type", "point", "normal", "amplitude", "length_x", "length_y", "phase_x",
                  "phase_y", "offset", "stiffness", "contact_distance", "friction", "slip_velocity",
                  "restitution"});
    GroundSpec& gr = out.ground;
    gr.enabled = true;
    gr.loc = loc(g.value(), g.path());
    const std::string type = g.string_or("type", "plane");
    if (type == "plane") {
      gr.point = g.vec3_or("point", gr.point);
      gr.normal = g.vec3_or("normal", gr.normal);
    } else if (type == "wavy") {
      gr.wavy = true;
      gr.amplitude = g.number("amplitude");
      gr.length_x = g.number_or("length_x", 0);
      gr.length_y = g.number_or("length_y", 0);
      gr.phase_x = g.number_or("phase_x", 0);
      gr.phase_y = g.number_or("phase_y", 0);
      gr.offset = g.number_or("offset", 0);
    } else {
      g.fail("type", "unknown ground type '" + type + "' (expected plane or wavy)");
    }
    gr.stiffness = g.number_or("stiffness", gr.stiffness);
    gr.contact_distance = g.number_or("contact_distance", gr.contact_distance);
    gr.friction = g.number_or("friction", gr.friction);
    gr.slip_velocity = g.number_or("slip_velocity", gr.slip_velocity);
    gr.restitution = g.number_or("restitution", gr.restitution);
  }
  if (f.has("aerodynamic_drag")) {
    const JsonObject d = f.object("aerodynamic_drag");
    d.allow_only({"coefficient", "medium_density"});
    out.drag_coefficient = d.number("coefficient");
    out.drag_density = d.number("medium_density");
  }
  if (f.has("resistive_force")) {
    const JsonObject d = f.object("resistive_force");
    d.allow_only({"tangential", "normal"});
    out.rft_tangential = d.number("tangential");
    out.rft_normal = d.number("normal");
  }
}

void SceneReader::read_integrator(const JsonObject& g) {
  g.allow_only({"type", "dt", "duration", "beta", "gamma", "adaptive", "min_dt", "two_d",
                "energy_consistent", "newton"});
  IntegratorSpec& out = s_.integrator;
  out.loc = loc(g.value(), g.path());
  const std::string type = g.string_or("type", "implicit_euler");
  const std::pair<const char*, IntegratorKind> kinds[4] = {
      {"implicit_euler", IntegratorKind::kImplicitEuler},
      {"implicit_midpoint", IntegratorKind::kImplicitMidpoint},
      {"newmark", IntegratorKind::kNewmark},
      {"static", IntegratorKind::kStatic}};
  bool known = false;
  for (const auto& [name, kind] : kinds) {
    if (type == name) {
      out.kind = kind;
      known = true;
    }
  }
  if (!known) {
    g.fail("type", "unknown integrator '" + type +
                       "' (expected implicit_euler, implicit_midpoint, newmark or static)");
  }
  out.dt = g.number_or("dt", out.dt);
  out.duration = g.number_or("duration", out.duration);
  out.beta = g.number_or("beta", out.beta);
  out.gamma = g.number_or("gamma", out.gamma);
  out.adaptive = g.boolean_or("adaptive", out.adaptive);
  out.min_dt = g.number_or("min_dt", out.min_dt);
  out.two_d = g.boolean_or("two_d", out.two_d);
  out.energy_consistent = g.boolean_or("energy_consistent", out.energy_consistent);
  if (g.has("newton")) {
    const JsonObject n = g.object("newton");
    n.allow_only({"max_iters", "abs_tol", "rel_tol", "step_tol", "line_search", "inexact"});
    out.newton.max_iters = n.integer_or("max_iters", out.newton.max_iters);
    out.newton.abs_tol = n.number_or("abs_tol", out.newton.abs_tol);
    out.newton.rel_tol = n.number_or("rel_tol", out.newton.rel_tol);
    out.newton.step_tol = n.number_or("step_tol", out.newton.step_tol);
    out.newton.line_search = n.boolean_or("line_search", out.newton.line_search);
    out.newton.inexact = n.boolean_or("inexact", out.newton.inexact);
  }
}

void SceneReader::read_output(const JsonObject& o) {
  o.allow_only({"dir", "every", "vtk_every", "vtk", "energies", "nodes", "camera"});
  OutputSpec& out = s_.output;
  out.loc = loc(o.value(), o.path());
  out.dir = o.string_or("dir", out.dir);
  out.every = o.integer_or("every", out.every);
  out.vtk_every = o.integer_or("vtk_every", out.vtk_every);
  out.vtk = o.boolean_or("vtk", out.vtk);
  out.energies = o.boolean_or("energies", out.energies);
  if (o.has("nodes")) {
    const JsonValue& list = o.array("nodes");
    for (size_t i = 0; i < list.array.size(); ++i) {
      const JsonObject r(list.array[i], file_, indexed(o.path_of("nodes"), i));
      r.allow_only({"part", "node"});
      out.csv_nodes.push_back(node_ref(r, "node"));
    }
  }
  // the pictures' camera (read by the renderer; checked here like every field)
  if (o.has("camera")) {
    const JsonObject c = o.object("camera");
    c.allow_only({"azimuth", "elevation", "distance", "target"});
    OutputSpec::Camera& cam = out.camera;
    cam.given = true;
    cam.azimuth = c.number("azimuth");
    cam.elevation = c.number("elevation");
    if (!(std::fabs(cam.elevation) <= 90)) {
      c.fail("elevation", "must be within [-90, 90] degrees");
    }
    cam.distance = c.number_or("distance", 0);
    if (c.has("distance") && !(cam.distance > 0 && std::isfinite(cam.distance))) {
      c.fail("distance", "must be a positive number of metres");
    }
    if (c.has("target")) {
      if (!c.has("distance")) {
        c.fail("target", "a camera's target needs its distance too");
      }
      cam.has_target = true;
      cam.target = c.vec3("target");
    }
  }
}

// ---- the whole scene ---------------------------------------------------------------------

SceneSpec SceneReader::read(const JsonValue& root_value) {
  const JsonObject root(root_value, file_, "");
  root.allow_only({"name", "description", "backend", "materials", "rods", "networks", "shells",
                   "joints", "point_masses", "boundary", "forces", "actuation", "controllers",
                   "contact", "integrator", "output"});
  s_.file = file_;
  s_.base_dir = base_dir_;
  const std::string stem = std::filesystem::path(file_).stem().string();
  s_.name = root.string_or("name", stem.empty() ? s_.name : stem);
  if (root.has("description")) {
    root.string("description");
  }

  const std::string backend = root.string_or("backend", "cpu");
  if (!backend_from_name(backend, s_.backend))
    root.fail("backend", "unknown backend '" + backend + "' (expected cpu or cuda)");

  // parts first (rods, networks, then shells, in file order): everything else refers to them
  // by name
  read_materials(root);
  if (root.has("rods")) {
    const JsonValue& rods = root.array("rods");
    for (size_t i = 0; i < rods.array.size(); ++i) {
      read_rod(rods.array[i], indexed("rods", i));
    }
  }
  if (root.has("networks")) {
    const JsonValue& nets = root.array("networks");
    for (size_t i = 0; i < nets.array.size(); ++i) {
      read_network(nets.array[i], indexed("networks", i));
    }
  }
  if (root.has("shells")) {
    const JsonValue& shells = root.array("shells");
    for (size_t i = 0; i < shells.array.size(); ++i) {
      read_shell(shells.array[i], indexed("shells", i));
    }
  }
  if (!root.has("rods") && !root.has("networks") && !root.has("shells")) {
    root.fail("rods", "missing required field (a scene needs rods, networks or shells)");
  }
  if (root.has("joints")) {
    read_joints(root);
  }
  if (root.has("point_masses")) {
    read_point_masses(root);
  }
  if (root.has("actuation")) {
    read_actuation(root.array("actuation"));
  }
  if (root.has("controllers")) {
    read_controllers(root.array("controllers"));
  }
  if (root.has("contact")) {
    const JsonObject c = root.object("contact");
    c.allow_only(
        {"stiffness", "tolerance", "friction", "slip_velocity", "friction_pairs", "restitution"});
    s_.contact.enabled = true;
    s_.contact.loc = loc(c.value(), c.path());
    s_.contact.stiffness = c.number_or("stiffness", s_.contact.stiffness);
    s_.contact.tolerance = c.number_or("tolerance", s_.contact.tolerance);
    s_.contact.friction = c.number_or("friction", s_.contact.friction);
    s_.contact.slip_velocity = c.number_or("slip_velocity", s_.contact.slip_velocity);
    s_.contact.restitution = c.number_or("restitution", s_.contact.restitution);
    if (c.has("friction_pairs")) read_friction_pairs(c);
  }
  if (root.has("boundary")) {
    read_boundary(root.object("boundary"));
  }
  if (root.has("forces")) {
    read_forces(root.object("forces"));
  }
  if (root.has("integrator")) {
    read_integrator(root.object("integrator"));
  }
  if (root.has("output")) {
    read_output(root.object("output"));
  }

  validate_scene(s_);
  return std::move(s_);
}

}  // namespace

SceneSpec read_scene_text(const std::string& text,
                          const std::string& file,
                          const std::string& base_dir) {
  const JsonValue root = parse_json(text, file);
  return SceneReader(file, base_dir).read(root);
}

std::vector<ControllerSpec> read_controllers_text(const std::string& text,
                                                  const SceneSpec& scene,
                                                  const std::string& file) {
  const JsonValue root = parse_json(text, file);
  if (!root.is_array()) {
    json_fail(file, root, "controllers", "must be an array of controllers");
  }
  SceneReader r(file, scene.base_dir);
  r.set_part_names(scene.parts);
  r.read_controllers(root);
  std::vector<ControllerSpec> out = r.take_controllers();
  validate_controllers(scene, out);
  return out;
}

SceneSpec read_scene_file(const std::string& path) {
  // a regular file, and its size before anything is read into memory (the limit with its own
  // message)
  const long long size =
      check_input_file(path, std::numeric_limits<long long>::max(), "scene file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(path, 0, "", "cannot open scene file");
  }
  if (size > kMaxSceneFileBytes) {
    throw InputError(path, 0, "",
                     "scene file of " + std::to_string(size) + " bytes is larger than the " +
                         std::to_string(kMaxSceneFileBytes >> 20) +
                         " MiB a scene file may be (large geometry belongs in OBJ, PLY or text "
                         "files that the scene names)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  return read_scene_text(text.str(), path, base_dir);
}

}  // namespace slender
