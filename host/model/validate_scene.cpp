// validate_scene, the one check of a scene's values that both the builder (SceneBuilder::build)
// and the JSON reader run before a scene reaches build_model(), which runs it again; and
// validate_controllers. Each error names the file, line and field the value came from.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"

namespace slender {

// ---- the triangles' topology ------------------------------------------------------------

namespace {

bool finite3(const Vec3& v) { return is_finite(v[0]) && is_finite(v[1]) && is_finite(v[2]); }

std::string triangle_name(const std::vector<std::array<int, 3>>& tris, size_t t) {
  const auto& x = tris[t];
  return "triangle " + std::to_string(t) + " (nodes " + std::to_string(x[0]) + ", " +
         std::to_string(x[1]) + ", " + std::to_string(x[2]) + ")";
}

// one side of a triangle, a -> b in its winding order
struct Side {
  long long key;  // min(a, b) * nnode + max(a, b)
  int t;
  int a, b;
};

// repeated triangles (the same three nodes in any order)
std::string check_repeats(const std::vector<std::array<int, 3>>& tris) {
  std::vector<std::pair<std::array<int, 3>, int>> sorted;
  sorted.reserve(tris.size());
  for (size_t t = 0; t < tris.size(); ++t) {
    std::array<int, 3> s = tris[t];
    std::sort(s.begin(), s.end());
    sorted.emplace_back(s, int(t));
  }
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first == sorted[i - 1].first) {
      return triangle_name(tris, size_t(sorted[i].second)) + " repeats triangle " +
             std::to_string(sorted[i - 1].second) + " (the same three nodes)";
    }
  }
  return "";
}

// The triangles of a part with `nodes.size()` nodes: node ids in range and distinct, no
// zero-area triangle (area <= 1e-12 scale^2), no triangle repeated, at most two triangles per
// edge (manifold) and neighbours wound the same way. "" when all is well, else the message for
// the first problem found (naming triangles by index and edges by node ids).
std::string check_triangles(const std::vector<Vec3>& nodes,
                            const std::vector<std::array<int, 3>>& tris,
                            Real scale) {
  const int n = int(nodes.size());
  for (size_t t = 0; t < tris.size(); ++t) {
    const auto& x = tris[t];
    for (int k = 0; k < 3; ++k) {
      if (x[size_t(k)] < 0 || x[size_t(k)] >= n) {
        return triangle_name(tris, t) + ": node id " + std::to_string(x[size_t(k)]) +
               " out of range (" + std::to_string(n) + " nodes)";
      }
      if (x[size_t(k)] == x[size_t((k + 1) % 3)]) {
        return triangle_name(tris, t) + " uses node " + std::to_string(x[size_t(k)]) + " twice";
      }
    }
    const Vec3& p0 = nodes[size_t(x[0])];
    const Real area = Real(0.5) * norm(cross(nodes[size_t(x[1])] - p0, nodes[size_t(x[2])] - p0));
    if (!(area > 1e-12 * scale * scale)) {
      return triangle_name(tris, t) + " has zero area (its nodes are collinear or coincide)";
    }
  }
  const std::string repeat = check_repeats(tris);
  if (!repeat.empty()) return repeat;

  // group the sides by edge: at most two triangles per edge, and two neighbours must run along
  // their shared edge in opposite directions (then both normals point to the same side)
  std::vector<Side> sides;
  sides.reserve(3 * tris.size());
  for (size_t t = 0; t < tris.size(); ++t) {
    for (int k = 0; k < 3; ++k) {
      const int a = tris[t][size_t(k)], b = tris[t][size_t((k + 1) % 3)];
      sides.push_back({(long long)std::min(a, b) * n + std::max(a, b), int(t), a, b});
    }
  }
  std::sort(sides.begin(), sides.end(), [](const Side& x, const Side& y) {
    return x.key != y.key ? x.key < y.key : x.t < y.t;
  });
  for (size_t i = 0; i < sides.size();) {
    size_t j = i + 1;
    while (j < sides.size() && sides[j].key == sides[i].key) {
      ++j;
    }
    const Side& s = sides[i];
    const std::string edge = "edge (nodes " + std::to_string(std::min(s.a, s.b)) + ", " +
                             std::to_string(std::max(s.a, s.b)) + ")";
    if (j - i > 2) {
      std::string list;
      for (size_t k = i; k < j; ++k) {
        list += (k == i ? "" : ", ") + std::to_string(sides[k].t);
      }
      return edge + " is shared by " + std::to_string(j - i) + " triangles (" + list +
             "): a shell mesh must be manifold, with at most 2 triangles per edge";
    }
    if (j - i == 2 && sides[i + 1].a == s.a) {
      return "triangles " + std::to_string(s.t) + " and " + std::to_string(sides[i + 1].t) +
             " are oriented inconsistently: both run along their shared " + edge + " from node " +
             std::to_string(s.a) + " to node " + std::to_string(s.b) +
             ", so their normals point to opposite sides; flip one of them (reverse its node "
             "order)";
    }
    i = j;
  }
  return "";
}

}  // namespace

// ---- validate_scene ----------------------------------------------------------------------

namespace {

// raises errors at a spec element's SourceLoc; `fallback` names the element when the loc has no
// field (scenes made in code), e.g. "parts[2]"
class Checker {
 public:
  explicit Checker(const SceneSpec& scene) : s(scene) {}

  [[noreturn]] void fail(const SourceLoc& loc,
                         const std::string& fallback,
                         const std::string& suffix,
                         const std::string& message) const {
    const std::string& file = loc.file.empty() ? s.file : loc.file;
    throw InputError(file, loc.line, (loc.field.empty() ? fallback : loc.field) + suffix, message);
  }

  void positive(Real x,
                const SourceLoc& loc,
                const std::string& fallback,
                const std::string& suffix) const {
    if (!(x > 0) || !is_finite(x)) {
      fail(loc, fallback, suffix, "must be positive, got " + num(x));
    }
  }
  void non_negative(Real x,
                    const SourceLoc& loc,
                    const std::string& fallback,
                    const std::string& suffix) const {
    if (!(x >= 0) || !is_finite(x)) {
      fail(loc, fallback, suffix, "must be >= 0, got " + num(x));
    }
  }

  // shortest text that reads back as x: 0.6, not 0.59999999999999998
  static std::string num(Real x) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
  }
  static std::string indexed(const char* name, size_t i) {
    return std::string(name) + "[" + std::to_string(i) + "]";
  }

  const PartSpec* part_of(int part, const SourceLoc& loc, const std::string& fallback) const {
    if (part < 0 || part >= int(s.parts.size())) {
      fail(loc, fallback, "",
           "part index " + std::to_string(part) + " out of range (the scene has " +
               std::to_string(s.parts.size()) + " parts)");
    }
    return &s.parts[size_t(part)];
  }

  // the non-negative node index a reference means (negative counts from the end)
  int node(const NodeRef& r, const std::string& fallback) const {
    const PartSpec* p = part_of(r.part, r.loc, fallback);
    return resolve(r.index, int(p->nodes.size()), "node", *p, r.loc, fallback);
  }
  int edge(const EdgeRef& r, const std::string& fallback) const {
    const PartSpec* p = part_of(r.part, r.loc, fallback);
    return resolve(r.index, int(p->edges.size()), "edge", *p, r.loc, fallback);
  }

  const SceneSpec& s;

 private:
  int resolve(int index,
              int count,
              const char* what,
              const PartSpec& p,
              const SourceLoc& loc,
              const std::string& fallback) const {
    const int i = index < 0 ? index + count : index;
    if (i < 0 || i >= count) {
      fail(loc, fallback, "",
           std::string(what) + " index " + std::to_string(index) + " out of range for part '" +
               p.name + "' (" + std::to_string(count) + " " + what + "s, valid " +
               std::to_string(-count) + ".." + std::to_string(count - 1) + ")");
    }
    return i;
  }
};

void check_materials(const Checker& c) {
  const SceneSpec& s = c.s;
  if (s.materials.empty()) {
    c.fail(SourceLoc{}, "materials", "", "the scene has no materials");
  }
  for (size_t i = 0; i < s.materials.size(); ++i) {
    const Material& m = s.materials[i];
    const std::string at = Checker::indexed("materials", i);
    if (m.name.empty()) {
      c.fail(m.loc, at, ".name", "a material needs a name");
    }
    for (size_t j = 0; j < i; ++j) {
      if (s.materials[j].name == m.name) {
        c.fail(m.loc, at, ".name", "duplicate material name '" + m.name + "'");
      }
    }
    c.positive(m.density, m.loc, at, ".density");
    c.positive(m.youngs_modulus, m.loc, at, ".youngs_modulus");
    if (!(m.poisson_ratio > -1 && m.poisson_ratio <= 0.5)) {
      c.fail(m.loc, at, ".poisson_ratio",
             "must be in (-1, 0.5], got " + Checker::num(m.poisson_ratio));
    }
  }
}

// material, cross-section, stiffness overrides and frame of one part
void check_part_properties(const Checker& c, const PartSpec& p, const std::string& at) {
  // the part's own damping (negative: the scene's) and its rod edges' stretching law
  for (const auto& [x, key] :
       {std::pair<Real, const char*>{p.mass_damping, ".damping.mass_proportional"},
        {p.stiffness_damping, ".damping.stiffness_proportional"},
        {p.kelvin_voigt, ".damping.kelvin_voigt"}}) {
    if (!(x < 0) && !(x >= 0 && is_finite(x)))
      c.fail(p.loc, at, key, "not finite: " + Checker::num(x));
  }
  const PartSpec::StretchLaw& law = p.stretch_law;
  if (law.kind == PartSpec::StretchLaw::kOgden) {
    if (!(law.alpha != 0 && std::fabs(law.alpha) <= 100)) {
      c.fail(p.loc, at, ".stretching.alpha",
             "the Ogden exponent must be nonzero and at most 100 in magnitude, got " +
                 Checker::num(law.alpha));
    }
  } else if (law.alpha != 0) {
    c.fail(p.loc, at, ".stretching.alpha", "only for the ogden law");
  }
  c.positive(law.scale, p.loc, at, ".stretching.scale");
  if (p.material < 0 || p.material >= int(c.s.materials.size())) {
    c.fail(p.loc, at, ".material",
           "material index " + std::to_string(p.material) + " out of range (the scene has " +
               std::to_string(c.s.materials.size()) + " materials)");
  }
  // the neo-Hookean membrane's plane-stress reduction needs lambda >= 0 (nu in [0, 0.5]); the
  // springs and St Venant-Kirchhoff take every nu the material may have
  if (!p.triangles.empty() && p.membrane == MembraneModel::kNeoHookean) {
    const Material& mat = c.s.materials[size_t(p.material)];
    if (!(mat.poisson_ratio >= 0)) {
      c.fail(p.loc, at, ".membrane",
             "the neo_hookean membrane needs a Poisson ratio in [0, 0.5]; material '" + mat.name +
                 "' has " + Checker::num(mat.poisson_ratio) + " (use stvk or springs)");
    }
  }
  if (p.membrane != MembraneModel::kSprings && p.membrane != MembraneModel::kStvk &&
      p.membrane != MembraneModel::kNeoHookean) {
    c.fail(p.loc, at, ".membrane", "unknown membrane model " + std::to_string(int(p.membrane)));
  }
  // a cross-section for rod edges; a shell of triangles only needs none
  const bool circle = p.section.kind == CrossSection::Kind::kCircle;
  if (!p.edges.empty() && !p.triangles.empty() && circle && p.section.radius == 0) {
    c.fail(p.loc, at, ".radius",
           "the part has rod edges besides its triangles: give their cross-section (radius or "
           "cross_section)");
  }
  if (!p.edges.empty() && circle) {
    c.positive(p.section.radius, p.loc, at, ".radius");
  } else if (!p.edges.empty()) {
    c.positive(p.section.width, p.loc, at, ".cross_section.width");
    c.positive(p.section.height, p.loc, at, ".cross_section.height");
  }

  // a part with triangles is a shell of some thickness; a thickness alone is a mistake
  if (!p.triangles.empty() && (!(p.thickness > 0) || !is_finite(p.thickness))) {
    c.fail(
        p.loc, at, ".thickness",
        "a part with triangles (a shell) needs a thickness > 0, got " + Checker::num(p.thickness));
  }
  if (p.hinge_stiffness != HingeStiffness::kPapers &&
      (p.triangles.empty() || p.bending != ShellBending::kHinge)) {
    c.fail(p.loc, at, ".hinge_stiffness", "only for shells with hinge bending");
  }
  if (p.triangles.empty() && p.thickness != 0) {
    c.fail(p.loc, at, ".thickness",
           p.edges.empty() ? "the part has no triangles (a shell's mesh needs at least one), so "
                             "it takes no thickness"
                           : "only parts with triangles (shells) have a thickness");
  }
  if (!is_finite(p.contact_thickness) || p.contact_thickness < 0) {
    c.fail(p.loc, at, ".contact_thickness",
           "must be > 0, or 0 for the thickness, got " + Checker::num(p.contact_thickness));
  }
  if (p.triangles.empty() && p.contact_thickness != 0) {
    c.fail(p.loc, at, ".contact_thickness",
           "only parts with triangles (shells) have a contact thickness");
  }

  // a negative override means "derive it"; zero or non-finite is a mistake
  const std::pair<const char*, Real> k[4] = {{".stiffness.EA", p.stiffness.EA},
                                             {".stiffness.EI1", p.stiffness.EI1},
                                             {".stiffness.EI2", p.stiffness.EI2},
                                             {".stiffness.GJ", p.stiffness.GJ}};
  for (const auto& [name, value] : k) {
    if (!is_finite(value) || value == 0) {
      c.fail(p.loc, at, name, "a given stiffness must be positive, got " + Checker::num(value));
    }
  }
  if (!finite3(p.frame_normal)) {
    c.fail(p.loc, at, ".frame_normal", "not finite");
  }

  // per-spring overrides: an index in range and positive given values
  const int ne = int(p.edges.size()), nn = int(p.nodes.size());
  for (size_t i = 0; i < p.stretch_springs.size(); ++i) {
    const StretchSpringOverride& o = p.stretch_springs[i];
    const std::string f = at + Checker::indexed(".springs.stretch", i);
    if (o.edge < -ne || o.edge >= ne) {
      c.fail(o.loc, f, ".edge",
             "edge index " + std::to_string(o.edge) + " out of range for part '" + p.name + "' (" +
                 std::to_string(ne) + " edges)");
    }
    c.positive(o.EA, o.loc, f, ".EA");
  }
  for (size_t i = 0; i < p.bend_springs.size(); ++i) {
    const BendSpringOverride& o = p.bend_springs[i];
    const std::string f = at + Checker::indexed(".springs.bend_twist", i);
    if (o.node < -nn || o.node >= nn) {
      c.fail(o.loc, f, ".node",
             "node index " + std::to_string(o.node) + " out of range for part '" + p.name + "' (" +
                 std::to_string(nn) + " nodes)");
    }
    const std::pair<const char*, Real> v[3] = {{".EI1", o.EI1}, {".EI2", o.EI2}, {".GJ", o.GJ}};
    for (const auto& [name, value] : v) {
      if (!is_finite(value) || value == 0) {
        c.fail(o.loc, f, name, "a given stiffness must be positive, got " + Checker::num(value));
      }
    }
  }
}

// node positions, edges (range, self loops, repeats, zero length) and triangles
void check_part_geometry(const Checker& c, const PartSpec& p, const std::string& at) {
  const int n = int(p.nodes.size());
  if (n < 2) {
    c.fail(p.loc, at, "", "a part needs at least 2 nodes, got " + std::to_string(n));
  }
  for (int i = 0; i < n; ++i) {
    const Vec3& x = p.nodes[size_t(i)];
    if (!finite3(x)) {
      c.fail(p.loc, at, "", "node " + std::to_string(i) + " position is not finite");
    }
    // beyond this the squares of lengths and areas (and the energies) overflow
    for (int k = 0; k < 3; ++k)
      if (std::fabs(x[k]) > kMaxCoordinate) {
        c.fail(p.loc, at, "",
               "node " + std::to_string(i) + " coordinate " + Checker::num(x[k]) +
                   " m is beyond the " + Checker::num(kMaxCoordinate) +
                   " m that lengths' squares can be computed with");
      }
  }
  if (p.edges.empty() && p.triangles.empty()) {
    c.fail(p.loc, at, "", "the part has no rod edges and no triangles");
  }

  // the zero-length threshold is relative to the part's size
  Real scale = 0;
  for (const Vec3& x : p.nodes) {
    scale = std::max(scale, norm(x - p.nodes[0]));
  }
  std::set<std::pair<int, int>> seen;
  for (size_t e = 0; e < p.edges.size(); ++e) {
    const int a = p.edges[e][0], b = p.edges[e][1];
    const std::string name = "edge " + std::to_string(e) + " (nodes " + std::to_string(a) + ", " +
                             std::to_string(b) + ")";
    if (a < 0 || a >= n || b < 0 || b >= n) {
      c.fail(p.loc, at, "", name + ": node id out of range (" + std::to_string(n) + " nodes)");
    }
    if (a == b) {
      c.fail(p.loc, at, "", name + " joins a node to itself");
    }
    if (p.is_rod && !(a == int(e) && (b == a + 1 || (b == 0 && e + 1 == p.edges.size())))) {
      c.fail(p.loc, at, "", name + ": rod edges must join consecutive nodes");
    }
    if (!seen.insert({std::min(a, b), std::max(a, b)}).second) {
      c.fail(p.loc, at, "", name + " repeats an earlier edge");
    }
    const Real len = norm(p.nodes[size_t(b)] - p.nodes[size_t(a)]);
    if (len <= 1e-12 * scale) {
      c.fail(p.loc, at, "", name + " has zero length");
    }
  }
  const std::string mesh = check_triangles(p.nodes, p.triangles, scale);
  if (!mesh.empty()) {
    c.fail(p.loc, at, "", mesh);
  }
}

// natural curvature and twist: one entry per interior node of a rod
void check_part_natural_shape(const Checker& c, const PartSpec& p, const std::string& at) {
  if (p.natural_curvature.empty() && p.natural_twist.empty()) return;
  if (!p.is_rod) {
    c.fail(p.loc, at, p.natural_curvature.empty() ? ".natural_twist" : ".natural_curvature",
           "natural curvature and twist are only for rods");
  }
  const size_t n = p.nodes.size();
  const bool closed = p.edges.size() == n;
  const size_t interior = closed ? n : n - 2;
  const std::string want = " entries (one per interior node: " + std::to_string(interior) + ")";
  if (!p.natural_curvature.empty()) {
    if (p.natural_curvature.size() != interior) {
      c.fail(p.loc, at, ".natural_curvature",
             "has " + std::to_string(p.natural_curvature.size()) + want);
    }
    for (size_t i = 0; i < p.natural_curvature.size(); ++i) {
      const auto& k = p.natural_curvature[i];
      const std::string field = ".natural_curvature[" + std::to_string(i) + "]";
      if (!is_finite(k[0]) || !is_finite(k[1])) {
        c.fail(p.loc, at, field, "not finite");
      }
      // the turn of the rod at the interior node: |kappa| times its Voronoi length
      const size_t node = closed ? i : i + 1;
      const Vec3& x = p.nodes[node];
      const Vec3& a = p.nodes[(node + n - 1) % n];
      const Vec3& b = p.nodes[(node + 1) % n];
      const Real dl = 0.5 * (std::hypot(x[0] - a[0], x[1] - a[1], x[2] - a[2]) +
                             std::hypot(b[0] - x[0], b[1] - x[1], b[2] - x[2]));
      const Real kn = std::hypot(k[0], k[1]);
      if (!(kn * dl <= kMaxNaturalTurn)) {
        std::ostringstream o;
        o << "(" << k[0] << ", " << k[1] << ") 1/m turns the rod by |kappa| dl = " << kn * dl
          << " rad at node " << node << " (Voronoi length dl = " << dl
          << " m): at most 0.9 pi = " << kMaxNaturalTurn
          << " rad (|kappa| <= " << kMaxNaturalTurn / dl
          << " 1/m here; at pi the rod folds back on itself)";
        c.fail(p.loc, at, field, o.str());
      }
    }
  }
  if (!p.natural_twist.empty()) {
    if (p.natural_twist.size() != interior) {
      c.fail(p.loc, at, ".natural_twist", "has " + std::to_string(p.natural_twist.size()) + want);
    }
    for (const Real t : p.natural_twist) {
      if (!is_finite(t)) {
        c.fail(p.loc, at, ".natural_twist", "not finite");
      }
    }
  }
}

// initial twist angle and velocity: one finite value per rod edge of the part
void check_part_initial_twist(const Checker& c, const PartSpec& p, const std::string& at) {
  auto check = [&](const std::vector<Real>& v, const char* key) {
    if (v.empty()) return;
    if (p.edges.empty()) {
      c.fail(p.loc, at, key, "the part has no rod edges (a twist belongs to a rod edge)");
    }
    if (v.size() != p.edges.size()) {
      c.fail(p.loc, at, key,
             "has " + std::to_string(v.size()) + " entries, the part " +
                 std::to_string(p.edges.size()) + " rod edges");
    }
    for (size_t i = 0; i < v.size(); ++i)
      if (!is_finite(v[i])) c.fail(p.loc, at, key, "entry " + std::to_string(i) + " not finite");
  };
  check(p.initial_twist_angle, ".initial_twist_angle");
  check(p.initial_twist_velocity, ".initial_twist_velocity");
}

// a node on no rod edge and no triangle has no mass and nothing holds it (the first step's
// solve would fail): an input error, unless a joint merges it into another part's node
void check_part_lone_nodes(const Checker& c, int part, const std::string& at) {
  const PartSpec& p = c.s.parts[size_t(part)];
  const int n = int(p.nodes.size());
  std::vector<char> used(size_t(n), 0);
  for (const auto& e : p.edges)
    for (int a : e)
      if (a >= 0 && a < n) used[size_t(a)] = 1;
  for (const auto& t : p.triangles)
    for (int a : t)
      if (a >= 0 && a < n) used[size_t(a)] = 1;
  for (const JointSpec& j : c.s.joints)
    for (const NodeRef& r : j.nodes) {
      const int k = r.index < 0 ? n + r.index : r.index;
      if (r.part == part && k >= 0 && k < n) used[size_t(k)] = 1;
    }
  for (int k = 0; k < n; ++k) {
    if (!used[size_t(k)]) {
      c.fail(p.loc, at, "",
             "node " + std::to_string(k) +
                 " is on no rod edge and no triangle (it would have no mass and nothing to hold "
                 "it)");
    }
  }
}

void check_time_function(const Checker& c,
                         const TimeFunction& f,
                         const SourceLoc& loc,
                         const std::string& at);

void check_parts(const Checker& c) {
  const SceneSpec& s = c.s;
  if (s.parts.empty()) {
    c.fail(SourceLoc{}, "parts", "", "the scene has no parts (rods, networks or shells)");
  }
  for (size_t i = 0; i < s.parts.size(); ++i) {
    const PartSpec& p = s.parts[i];
    const std::string at = Checker::indexed("parts", i);
    if (p.name.empty()) {
      c.fail(p.loc, at, ".name", "a part needs a name");
    }
    for (size_t j = 0; j < i; ++j) {
      if (s.parts[j].name == p.name) {
        c.fail(p.loc, at, ".name", "duplicate part name '" + p.name + "'");
      }
    }
    check_part_properties(c, p, at);
    check_part_geometry(c, p, at);
    check_part_natural_shape(c, p, at);
    check_part_initial_twist(c, p, at);
    check_part_lone_nodes(c, int(i), at);
    if (p.youngs_in_time) check_time_function(c, p.youngs_time, p.loc, at + ".youngs_modulus");
  }
}

void check_joints(const Checker& c) {
  const SceneSpec& s = c.s;
  std::set<std::pair<int, int>> used;  // (part, node) already in a joint
  for (size_t j = 0; j < s.joints.size(); ++j) {
    const JointSpec& joint = s.joints[j];
    const std::string at = Checker::indexed("joints", j);
    if (joint.nodes.size() < 2) {
      c.fail(joint.loc, at, "",
             "a joint needs at least 2 nodes, got " + std::to_string(joint.nodes.size()));
    }
    for (size_t k = 0; k < joint.nodes.size(); ++k) {
      const NodeRef& r = joint.nodes[k];
      const std::string rat = at + "[" + std::to_string(k) + "]";
      const int i = c.node(r, rat);
      if (!used.insert({r.part, i}).second) {
        c.fail(r.loc, rat, "",
               "node " + std::to_string(i) + " of part '" + s.parts[size_t(r.part)].name +
                   "' is already in a joint");
      }
    }
  }
}

// the references of a DOF selection (the boundary block's, prefix "", or an event's); a shell
// group counts after the rod edges in "fixed_edges" (the reader keeps them apart)
void check_selection(const Checker& c, const DofSelection& sel, const std::string& prefix) {
  auto at = [&](const char* key, size_t i) { return prefix + Checker::indexed(key, i); };
  for (size_t i = 0; i < sel.nodes.size(); ++i) {
    c.node(sel.nodes[i], at("fixed_nodes", i));
  }
  for (size_t i = 0; i < sel.edges.size(); ++i) {
    const EdgeRef& r = sel.edges[i];
    const PartSpec* p = c.part_of(r.part, r.loc, at("fixed_edges", i));
    if (p->edges.empty() && !p->triangles.empty()) {
      c.fail(r.loc, at("fixed_edges", i), "",
             "part '" + p->name +
                 "' is a shell, which has no rod edges: clamp its edges by their nodes, "
                 "{\"part\": \"" +
                 p->name +
                 "\", \"nodes\": [...]} (fixes the nodes and the "
                 "mid-edge normals of the edges between them)");
    }
    c.edge(r, at("fixed_edges", i));
  }
  for (size_t i = 0; i < sel.shell_edges.size(); ++i) {
    const std::vector<NodeRef>& group = sel.shell_edges[i];
    const std::string gat = at("fixed_edges", sel.edges.size() + i);
    if (group.empty()) c.fail({}, gat, "", "a shell clamp needs nodes");
    for (const NodeRef& r : group) {
      const PartSpec* p = c.part_of(r.part, r.loc, gat);
      if (p->triangles.empty()) {
        c.fail(r.loc, gat, "",
               "part '" + p->name +
                   "' has no shell triangles: fixed_edges by \"nodes\" clamps "
                   "shell edges; give a rod's edges as \"edges\"");
      }
      c.node(r, gat);
    }
  }
  for (size_t i = 0; i < sel.twist.size(); ++i) {
    c.edge(sel.twist[i], at("fixed_twist", i));
  }
  for (size_t i = 0; i < sel.dofs.size(); ++i) {
    const FixedDofSpec& f = sel.dofs[i];
    c.node(f.node, at("fixed_dofs", i));
    if (!f.fix[0] && !f.fix[1] && !f.fix[2]) {
      c.fail(f.node.loc, at("fixed_dofs", i), "", "no component is fixed");
    }
  }
}

void check_boundary(const Checker& c) {
  const SceneSpec& s = c.s;
  check_selection(c, s.fixed_selection(), "");
  // a clamp at a node: a rod's end, on exactly one edge of its part
  for (size_t i = 0; i < s.clamps.size(); ++i) {
    const NodeRef& r = s.clamps[i];
    const std::string at = Checker::indexed("clamps", i);
    const int n = c.node(r, at);
    const PartSpec* p = c.part_of(r.part, r.loc, at);
    int on = 0;
    for (const auto& e : p->edges)
      on += (e[0] == n) + (e[1] == n);
    if (on != 1) {
      c.fail(r.loc, at + ".node", "",
             "a clamp at a node builds a rod in at its end: node " + std::to_string(n) +
                 " of part '" + p->name + "' is on " + std::to_string(on) +
                 " of its rod edges, not one (fixed_edges clamps an edge anywhere)");
    }
  }
  // boundary events: a time from 0 on and a selection
  for (size_t i = 0; i < s.events.size(); ++i) {
    const BoundaryEvent& ev = s.events[i];
    const std::string at = Checker::indexed("boundary.events", i);
    c.non_negative(ev.time, ev.loc, at, ".time");
    const std::string key = ev.release ? ".release" : ".fix";
    if (ev.select.empty()) c.fail(ev.loc, at, key, "selects no DOFs");
    check_selection(c, ev.select, at + key + ".");
  }
  for (size_t i = 0; i < s.motions.size(); ++i) {
    const MotionSpec& mo = s.motions[i];
    const std::string at = Checker::indexed("boundary.motions", i);
    if (mo.nodes.empty() && mo.edges.empty())
      c.fail(mo.loc, at, "", "a motion needs nodes or edges");
    for (size_t k = 0; k < mo.nodes.size(); ++k)
      c.node(mo.nodes[k], at + Checker::indexed(".nodes", k));
    for (size_t k = 0; k < mo.edges.size(); ++k)
      c.edge(mo.edges[k], at + Checker::indexed(".edges", k));
    if (!finite3(mo.translation)) c.fail(mo.loc, at, ".translation", "not finite");
    if (!is_finite(mo.twist)) c.fail(mo.loc, at, ".twist", "not finite");
    check_time_function(c, mo.time, mo.loc, at);
  }
  for (size_t i = 0; i < s.initial_velocities.size(); ++i) {
    const auto& [r, v] = s.initial_velocities[i];
    const std::string at = Checker::indexed("initial_velocities", i);
    c.node(r, at);
    if (!finite3(v)) {
      c.fail(r.loc, at, "", "velocity is not finite");
    }
  }
}

void check_time_function(const Checker& c,
                         const TimeFunction& f,
                         const SourceLoc& loc,
                         const std::string& at) {
  const std::string t = ".time";
  switch (f.kind) {
    case TimeFunction::Kind::kConstant:
      break;
    case TimeFunction::Kind::kSine:
      c.non_negative(f.frequency, loc, at, t + ".frequency");
      if (!is_finite(f.amplitude) || !is_finite(f.phase) || !is_finite(f.offset)) {
        c.fail(loc, at, t, "amplitude, phase and offset must be finite");
      }
      break;
    case TimeFunction::Kind::kRamp:
      c.positive(f.ramp_time, loc, at, t + ".duration");
      break;
    case TimeFunction::Kind::kSma:
      c.positive(f.sma_t0, loc, at, t + ".t0");
      c.non_negative(f.sma_tau, loc, at, t + ".tau");
      c.non_negative(f.sma_period, loc, at, t + ".period");
      if (!is_finite(f.sma_n) || !is_finite(f.sma_t_bar) || !is_finite(f.sma_start) ||
          !is_finite(f.sma_tau)) {
        c.fail(loc, at, t, "n, tau, t_bar and start must be finite");
      }
      if (f.sma_period > 0 && f.sma_period <= f.sma_t0) {
        c.fail(loc, at, t + ".period", "the period must be longer than t0");
      }
      break;
    case TimeFunction::Kind::kTable:
      if (f.table.empty()) {
        c.fail(loc, at, t + ".rows", "the table has no rows");
      }
      for (size_t r = 0; r < f.table.size(); ++r) {
        if (!is_finite(f.table[r][0]) || !is_finite(f.table[r][1])) {
          c.fail(loc, at, t + ".rows", "row " + std::to_string(r) + " is not finite");
        }
        if (r > 0 && !(f.table[r][0] > f.table[r - 1][0])) {
          c.fail(loc, at, t + ".rows",
                 "times must increase: row " + std::to_string(r) + " has t = " +
                     Checker::num(f.table[r][0]) + " after " + Checker::num(f.table[r - 1][0]));
        }
      }
      break;
  }
}

void check_forces(const Checker& c) {
  const ForcesSpec& f = c.s.forces;
  if (!finite3(f.gravity)) {
    c.fail(f.loc, "forces", ".gravity", "not finite");
  }
  c.non_negative(f.viscosity, f.loc, "forces", ".viscous_drag.viscosity");
  c.non_negative(f.mass_damping, f.loc, "forces", ".damping.mass_proportional");
  c.non_negative(f.stiffness_damping, f.loc, "forces", ".damping.stiffness_proportional");
  c.non_negative(f.kelvin_voigt, f.loc, "forces", ".damping.kelvin_voigt");
  c.non_negative(f.buoyancy_density, f.loc, "forces", ".buoyancy.medium_density");
  c.non_negative(f.drag_density, f.loc, "forces", ".aerodynamic_drag.medium_density");
  c.non_negative(f.drag_coefficient, f.loc, "forces", ".aerodynamic_drag.coefficient");
  c.non_negative(f.rft_tangential, f.loc, "forces", ".resistive_force.tangential");
  c.non_negative(f.rft_normal, f.loc, "forces", ".resistive_force.normal");
  // forces that act on one kind of element only: asked for where there is none, they would
  // silently do nothing
  bool rod_edges = false, triangles = false;
  for (const PartSpec& p : c.s.parts) {
    rod_edges = rod_edges || !p.edges.empty();
    triangles = triangles || !p.triangles.empty();
  }
  if (f.drag_coefficient > 0 && f.drag_density > 0 && !triangles) {
    c.fail(f.loc, "forces", ".aerodynamic_drag",
           "aerodynamic drag (eq. 29) acts on shell triangles, and the scene has none; for rods "
           "use viscous_drag or resistive_force");
  }
  if ((f.rft_tangential > 0 || f.rft_normal > 0) && !rod_edges) {
    c.fail(f.loc, "forces", ".resistive_force",
           "resistive force theory acts on rod edges, and the scene has none; for shells use "
           "viscous_drag or aerodynamic_drag");
  }
  const ContactSpec& con = c.s.contact;
  if (con.enabled) {
    c.non_negative(con.stiffness, con.loc, "contact", ".stiffness");
    c.positive(con.tolerance, con.loc, "contact", ".tolerance");
    c.non_negative(con.friction, con.loc, "contact", ".friction");
    c.positive(con.slip_velocity, con.loc, "contact", ".slip_velocity");
    if (!(con.restitution >= 0 && con.restitution <= 1)) {
      c.fail(con.loc, "contact", ".restitution",
             "must be in [0, 1] (1: no damping), got " + Checker::num(con.restitution));
    }
    for (size_t i = 0; i < con.friction_pairs.size(); ++i) {
      const FrictionPairSpec& fp = con.friction_pairs[i];
      const std::string at = "contact.friction_pairs[" + std::to_string(i) + "]";
      const int nmat = int(c.s.materials.size());
      if (fp.material_a < 0 || fp.material_a >= nmat || fp.material_b < 0 ||
          fp.material_b >= nmat) {
        c.fail(fp.loc, at, ".materials", "material index out of range");
      }
      c.non_negative(fp.mu, fp.loc, at, ".mu");
    }
  }
  const GroundSpec& g = f.ground;
  if (g.enabled) {
    const std::string at = "forces.ground";
    if (!finite3(g.point) || !finite3(g.normal) || !is_finite(g.amplitude) ||
        !is_finite(g.offset) || !is_finite(g.phase_x) || !is_finite(g.phase_y)) {
      c.fail(g.loc, at, "", "ground values must be finite");
    }
    if (!g.wavy && !(norm(g.normal) > 0)) c.fail(g.loc, at, ".normal", "must not be zero");
    c.non_negative(g.length_x, g.loc, at, ".length_x");
    c.non_negative(g.length_y, g.loc, at, ".length_y");
    c.non_negative(g.stiffness, g.loc, at, ".stiffness");
    c.positive(g.contact_distance, g.loc, at, ".contact_distance");
    c.non_negative(g.friction, g.loc, at, ".friction");
    c.positive(g.slip_velocity, g.loc, at, ".slip_velocity");
    if (!(g.restitution >= 0 && g.restitution <= 1)) {
      c.fail(g.loc, at, ".restitution",
             "must be in [0, 1] (1: no damping), got " + Checker::num(g.restitution));
    }
  }
  for (size_t i = 0; i < f.point_loads.size(); ++i) {
    const PointLoadSpec& l = f.point_loads[i];
    const std::string at = Checker::indexed("forces.point_loads", i);
    c.node(l.node, at + ".node");
    if (!finite3(l.force)) {
      c.fail(l.loc, at, ".force", "not finite");
    }
    check_time_function(c, l.time, l.loc, at);
  }
  for (size_t i = 0; i < f.distributed_loads.size(); ++i) {
    const DistributedLoadSpec& l = f.distributed_loads[i];
    const std::string at = Checker::indexed("forces.distributed_loads", i);
    if (l.part < 0 || l.part >= int(c.s.parts.size())) {
      c.fail(l.loc, at, ".part", "no part with index " + std::to_string(l.part));
    }
    if (!finite3(l.force_per_length)) {
      c.fail(l.loc, at, ".force_per_length", "not finite");
    }
    check_time_function(c, l.time, l.loc, at);
  }
  const AddedMassSpec& am = f.added_mass;
  if (am.given) {
    const SourceLoc& loc = am.loc.line > 0 ? am.loc : f.loc;
    if (!(std::isfinite(am.coefficient) && am.coefficient >= 0)) {
      c.fail(loc, "forces.added_mass", ".coefficient",
             "must be 0 or more (C_a, a fraction of the displaced fluid's mass), got " +
                 Checker::num(am.coefficient));
    }
    for (size_t i = 0; i < am.parts.size(); ++i) {
      if (am.parts[i] < 0 || am.parts[i] >= int(c.s.parts.size())) {
        c.fail(loc, "forces.added_mass", ".parts[" + std::to_string(i) + "]",
               "no part with index " + std::to_string(am.parts[i]));
      }
    }
    if (am.coefficient > 0 && !(f.buoyancy_density > 0)) {
      c.fail(loc, "forces.added_mass", "",
             "needs forces.buoyancy: the added mass is C_a times the mass of the fluid a node "
             "displaces, of the buoyancy's medium_density");
    }
  }
}

void check_point_masses(const Checker& c) {
  for (size_t i = 0; i < c.s.point_masses.size(); ++i) {
    const PointMassSpec& pm = c.s.point_masses[i];
    const std::string at = Checker::indexed("point_masses", i);
    c.node(pm.node, at + ".node");
    if (!(std::isfinite(pm.mass) && pm.mass > 0)) {
      c.fail(pm.loc, at, ".mass",
             "must be a positive finite mass in kg, got " + Checker::num(pm.mass));
    }
  }
}

void check_integrator_output(const Checker& c) {
  const IntegratorSpec& g = c.s.integrator;
  const std::string at = "integrator";
  c.positive(g.dt, g.loc, at, ".dt");
  c.non_negative(g.duration, g.loc, at, ".duration");
  if (g.kind == IntegratorKind::kNewmark) {
    if (!(g.beta > 0 && g.beta <= 0.5)) {
      c.fail(g.loc, at, ".beta", "must be in (0, 0.5], got " + Checker::num(g.beta));
    }
    if (!(g.gamma >= 0.5) || !is_finite(g.gamma)) {
      c.fail(g.loc, at, ".gamma", "must be >= 0.5, got " + Checker::num(g.gamma));
    }
  }
  c.non_negative(g.min_dt, g.loc, at, ".min_dt");
  if (g.min_dt > g.dt) {
    c.fail(g.loc, at, ".min_dt",
           "must not exceed dt (" + Checker::num(g.min_dt) + " > " + Checker::num(g.dt) + ")");
  }
  if (g.newton.max_iters < 1) {
    c.fail(g.loc, at, ".newton.max_iters",
           "must be at least 1, got " + std::to_string(g.newton.max_iters));
  }
  c.non_negative(g.newton.abs_tol, g.loc, at, ".newton.abs_tol");
  c.non_negative(g.newton.rel_tol, g.loc, at, ".newton.rel_tol");
  c.non_negative(g.newton.step_tol, g.loc, at, ".newton.step_tol");
  if (g.newton.abs_tol == 0 && g.newton.rel_tol == 0 && g.newton.step_tol == 0) {
    c.fail(g.loc, at, ".newton",
           "abs_tol, rel_tol and step_tol are all 0: no step could converge (give one of them a "
           "positive value)");
  }

  const OutputSpec& o = c.s.output;
  if (o.every < 1) {
    c.fail(o.loc, "output", ".every", "must be at least 1, got " + std::to_string(o.every));
  }
  if (o.vtk_every < 0) {
    c.fail(o.loc, "output", ".vtk_every",
           "must be at least 1 (or 0: as every), got " + std::to_string(o.vtk_every));
  }
  for (size_t i = 0; i < o.csv_nodes.size(); ++i) {
    c.node(o.csv_nodes[i], Checker::indexed("output.nodes", i));
  }
}

}  // namespace

// an actuation's per-spring series (as the scene reader checks a file's, for one built in
// code): one time per row, `columns` values per row, times strictly increasing, all finite;
// no wave (the series gives each spring its own s_k)
namespace {
void check_actuation_series(const Checker& c, const ActuationSpec& a, const std::string& at) {
  const ActuationSeries& r = a.series;
  if (r.columns < 0) c.fail(a.loc, at, ".series", "a negative number of columns");
  if (!r.given()) return;
  if (r.time.empty()) c.fail(a.loc, at, ".series", "has no rows");
  if (r.value.size() != r.time.size() * size_t(r.columns)) {
    c.fail(a.loc, at, ".series",
           "holds " + std::to_string(r.value.size()) + " values for " +
               std::to_string(r.time.size()) + " rows of " + std::to_string(r.columns) +
               " columns");
  }
  for (size_t k = 0; k < r.time.size(); ++k) {
    if (!is_finite(r.time[k]))
      c.fail(a.loc, at, ".series", "the time of row " + std::to_string(k) + " is not finite");
    if (k > 0 && !(r.time[k] > r.time[k - 1]))
      c.fail(a.loc, at, ".series",
             "times must increase strictly: row " + std::to_string(k) + " (" +
                 Checker::num(r.time[k]) + " s) is not after row " + std::to_string(k - 1) + " (" +
                 Checker::num(r.time[k - 1]) + " s)");
  }
  for (size_t k = 0; k < r.value.size(); ++k)
    if (!is_finite(r.value[k]))
      c.fail(a.loc, at, ".series",
             "row " + std::to_string(k / size_t(r.columns)) + ", column " +
                 std::to_string(k % size_t(r.columns)) + " is not finite");
  if (a.phase_per_length != 0)
    c.fail(a.loc, at, ".wave",
           "not with a series: the series gives each spring its own values in time");
}
}  // namespace

// one actuation (or a controller's reference), `at` its name when its loc has none
void check_actuation_entry(const Checker& c,
                           const ActuationSpec& a,
                           const std::string& at,
                           const char* target_key = ".target") {
  c.part_of(a.part, a.loc, at);
  if (!is_finite(a.amplitude)) c.fail(a.loc, at, ".amplitude", "not finite");
  if (!finite3(a.select_point) || !finite3(a.select_normal) || !finite3(a.wave_origin) ||
      !finite3(a.wave_direction) || !is_finite(a.phase_per_length) || !finite3(a.direction)) {
    c.fail(a.loc, at, "", "selection and wave values must be finite");
  }
  c.non_negative(a.select_tolerance, a.loc, at, ".select.tolerance");
  c.non_negative(a.ramp_in, a.loc, at, ".ramp_in");
  check_time_function(c, a.time, a.loc, at);
  const PartSpec& p = c.s.parts[size_t(a.part)];
  const bool hinge = a.target == ActuationSpec::Target::kHingeAngle;
  const bool mid = a.target == ActuationSpec::Target::kMidEdgeCurvature;
  const char* shell_bending = p.bending == ShellBending::kHinge ? "hinge" : "mid_edge";
  if ((hinge || mid) && p.triangles.empty()) {
    c.fail(a.loc, at, target_key,
           std::string(hinge ? "hinge_angle" : "midedge_curvature") + " needs a shell part; '" +
               p.name + "' has no triangles");
  }
  if (hinge && p.bending != ShellBending::kHinge) {
    c.fail(a.loc, at, target_key,
           "hinge_angle drives hinges, but shell part '" + p.name + "' bends by \"" +
               shell_bending +
               "\" (its springs are mid-edge triangles: target "
               "midedge_curvature)");
  }
  if (mid && p.bending != ShellBending::kMidEdge) {
    c.fail(a.loc, at, target_key,
           "midedge_curvature drives mid-edge triangles, but shell part '" + p.name +
               "' bends by \"" + shell_bending +
               "\" (its springs are hinges: target "
               "hinge_angle, or \"bending\": \"mid_edge\")");
  }
  if (!hinge && !mid && p.edges.empty()) {
    c.fail(a.loc, at, target_key, "rod targets need rod edges; '" + p.name + "' has none");
  }
  if (!mid && a.direction[0] * a.direction[0] + a.direction[1] * a.direction[1] +
                      a.direction[2] * a.direction[2] >
                  0) {
    c.fail(a.loc, at, ".direction", "only for target midedge_curvature");
  }
  check_actuation_series(c, a, at);
}

void check_actuation(const Checker& c) {
  for (size_t i = 0; i < c.s.actuation.size(); ++i)
    check_actuation_entry(c, c.s.actuation[i], Checker::indexed("actuation", i));
}

// the most passes of a controller's spatial smoothing (each widens its kernel by a spring on
// either side: more smooth away all but the longest waves)
constexpr int kMaxSmoothingPasses = 1000;

// gains: one value or one per spring (the count is the model's to check), each >= 0
void check_gains(const Checker& c,
                 const std::vector<Real>& g,
                 const SourceLoc& loc,
                 const std::string& at,
                 const char* name) {
  if (g.empty()) c.fail(loc, at, std::string(".") + name, "needs at least one value");
  for (size_t k = 0; k < g.size(); ++k)
    if (!(g[k] >= 0) || !is_finite(g[k]))
      c.fail(loc, at, std::string(".") + name,
             (g.size() > 1 ? "value " + std::to_string(k) + " " : std::string()) +
                 "must be >= 0 and finite, got " + Checker::num(g[k]) +
                 " (a negative gain turns the feedback into positive feedback)");
}

void check_controller(const Checker& c, const ControllerSpec& k, const std::string& at) {
  using Target = ActuationSpec::Target;
  const ActuationSpec& a = k.reference;
  if (a.target == Target::kMidEdgeCurvature) {
    c.fail(k.loc, at, ".strain",
           "midedge_curvature cannot be controlled (rod_curvature1, rod_curvature2, rod_twist, "
           "rod_stretch, hinge_angle)");
  }
  check_actuation_entry(c, a, at, ".strain");
  check_gains(c, k.kp, k.loc, at, "kp");
  check_gains(c, k.ki, k.loc, at, "ki");
  for (size_t i = 0; i < k.profile.size(); ++i)
    if (!is_finite(k.profile[i]))
      c.fail(k.loc, at, ".profile", "value " + std::to_string(i) + " is not finite");
  c.non_negative(k.filter_time, k.loc, at, ".filter_time");
  if (k.spatial_smoothing < 0 || k.spatial_smoothing > kMaxSmoothingPasses)
    c.fail(k.loc, at, ".spatial_smoothing",
           "must be 0 to " + std::to_string(kMaxSmoothingPasses) + " passes, got " +
               std::to_string(k.spatial_smoothing));
  c.non_negative(k.rate_limit, k.loc, at, ".rate_limit");
  c.non_negative(k.tracking_time, k.loc, at, ".tracking_time");
  if (std::isnan(k.command_min) || std::isnan(k.command_max) || !(k.command_min < k.command_max))
    c.fail(k.loc, at, ".limits",
           "must be [min, max] with min < max, got [" + Checker::num(k.command_min) + ", " +
               Checker::num(k.command_max) + "]");
  if (a.target == Target::kRodStretch && !(k.command_max > -1))
    c.fail(k.loc, at, ".limits",
           "the largest stretch command " + Checker::num(k.command_max) +
               " leaves no positive natural length (the natural stretch is 1 + the command)");
}

void validate_scene(const SceneSpec& s) {
  const Checker c(s);
  check_materials(c);
  check_parts(c);
  check_joints(c);
  check_boundary(c);
  check_forces(c);
  check_point_masses(c);
  check_actuation(c);
  for (size_t i = 0; i < s.controllers.size(); ++i)
    check_controller(c, s.controllers[i], Checker::indexed("controllers", i));
  check_integrator_output(c);
}

void validate_controllers(const SceneSpec& s, const std::vector<ControllerSpec>& controllers) {
  const Checker c(s);
  for (size_t i = 0; i < controllers.size(); ++i)
    check_controller(c, controllers[i], Checker::indexed("controllers", i));
}

}  // namespace slender
