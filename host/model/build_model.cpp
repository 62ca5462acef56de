// build_model: from a validated SceneSpec to the immutable Model (joints merged, bend-twist
// stencils with orientation signs, stiffnesses, masses, frames, fixed DOFs, assembly plan).

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "model/model_internal.h"
#include "slender/builder.h"
#include "slender/control.h"
#include "slender/core/error.h"
#include "slender/core/rod_gap.h"
#include "slender/model.h"
#include "slender/state.h"
#include "slender/stencils/rod_bend_twist.h"
#include "slender/stencils/rod_frames.h"
#include "slender/stencils/user_energy.h"

namespace slender {

namespace {

// section properties of one part's edges
struct SectionProps {
  Real A, EI1, EI2, GJ, polar, radius;
};

SectionProps section_props(const PartSpec& part, const Material& mat) {
  SectionProps s{};
  const Real E = mat.youngs_modulus;
  const Real G = E / (2 * (1 + mat.poisson_ratio));
  const CrossSection& cs = part.section;
  Real I1, I2, J;
  if (cs.kind == CrossSection::Kind::kCircle) {
    const Real r = cs.radius;
    s.A = kPi * r * r;
    I1 = I2 = kPi * r * r * r * r / 4;
    J = kPi * r * r * r * r / 2;
    s.radius = r;
  } else {
    // width w along m1, height h along m2; kappa1 bends in the t-m1 plane
    const Real w = cs.width, h = cs.height;
    s.A = w * h;
    I1 = h * w * w * w / 12;
    I2 = w * h * h * h / 12;
    // Saint-Venant torsion constant of a rectangle, a >= b
    const Real a = std::max(w, h), b = std::min(w, h);
    const Real ratio = b / a;
    J = a * b * b * b * (Real(1) / 3 - 0.21 * ratio * (1 - std::pow(ratio, 4) / 12));
    s.radius = 0.5 * std::max(w, h);
  }
  s.polar = I1 + I2;
  const StiffnessOverride& o = part.stiffness;
  s.EI1 = o.EI1 >= 0 ? o.EI1 : E * I1;
  s.EI2 = o.EI2 >= 0 ? o.EI2 : E * I2;
  s.GJ = o.GJ >= 0 ? o.GJ : G * J;
  return s;
}

// union-find over (part, local node) slots
struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int a) {
    while (parent[a] != a)
      a = parent[a] = parent[parent[a]];
    return a;
  }
  void join(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

Vec3 node_pos(const Model& m, int n) {
  return vec3(m.node_x0[3 * n], m.node_x0[3 * n + 1], m.node_x0[3 * n + 2]);
}

InputError loc_error(const SourceLoc& loc, const std::string& msg) {
  return InputError(loc.file, loc.line, loc.field, msg);
}

// a positive normal number: finite, and neither zero nor so small that products of it vanish
bool usable(Real x) { return std::isnormal(x) && x > 0; }

std::string num(Real x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// what follows from valid inputs must be a number the engine can work with: every rod edge's
// mass, inertia and stiffnesses, every triangle's area and every node's mass finite and
// positive (validate_scene checks the inputs one by one: a radius of 1e308 or a density of
// 1e-320 passes there, and gives an infinite or zero mass here)
void check_derived_quantities(const SceneSpec& scene,
                              const Model& m,
                              const std::vector<SectionProps>& edge_props) {
  // the parts' own edges (a clamp's ghost edge after them has no stretching stiffness)
  for (size_t e = 0; e < size_t(m.part_edge_adr.back()); ++e) {
    const int p = m.edge_part[e];
    const PartSpec& part = scene.parts[size_t(p)];
    const Material& mat = scene.materials[size_t(part.material)];
    const SectionProps& sp = edge_props[e];
    const int k = int(e) - m.part_edge_adr[p];
    const std::string edge = "edge " + std::to_string(k) + ": ";
    const Real mass = mat.density * sp.A * m.edge_l_bar[e];
    if (!usable(mass)) {
      throw loc_error(part.loc, edge + "mass " + num(mass) +
                                    " kg (density x cross-section area x length) is not a "
                                    "positive finite number: density " +
                                    num(mat.density) + " kg/m^3, area " + num(sp.A) +
                                    " m^2, length " + num(m.edge_l_bar[e]) + " m");
    }
    const struct {
      const char* name;
      Real v;
    } stiff[] = {{"axial stiffness EA", m.edge_EA[e]},
                 {"bending stiffness EI1", sp.EI1},
                 {"bending stiffness EI2", sp.EI2},
                 {"torsional stiffness GJ", sp.GJ},
                 {"rotational inertia", m.edge_inertia[e]}};
    for (const auto& q : stiff)
      if (!usable(q.v)) {
        throw loc_error(part.loc, edge + q.name + " " + num(q.v) +
                                      " is not a positive finite number (Young's modulus " +
                                      num(mat.youngs_modulus) + " Pa, cross-section area " +
                                      num(sp.A) + " m^2)");
      }
  }
  for (int t = 0; t < m.ntri; ++t) {
    if (!usable(m.tri_area_bar[t])) {
      const PartSpec& part = scene.parts[size_t(m.tri_part[t])];
      throw loc_error(part.loc, "a triangle's area " + num(m.tri_area_bar[t]) +
                                    " m^2 is not a positive finite number");
    }
  }
  for (int n = 0; n < m.nnode; ++n) {
    if (usable(m.node_mass[n])) continue;
    const int p = m.node_part[n];  // the part that first declared the node
    const PartSpec& part = scene.parts[size_t(p)];
    const Material& mat = scene.materials[size_t(part.material)];
    throw loc_error(part.loc, "node mass " + num(m.node_mass[n]) +
                                  " kg is not a positive finite number (density " +
                                  num(mat.density) + " kg/m^3, thickness " + num(part.thickness) +
                                  " m)");
  }
}

// the scene's motions as per-DOF values base + s(t) amount; every moved DOF must be fixed, and
// only one motion may move it
void resolve_motions(Model& m) {
  const SceneSpec& scene = m.scene;
  std::vector<int> of(m.ndof, -1);
  std::vector<Real> amount(m.ndof, 0);
  for (size_t k = 0; k < scene.motions.size(); ++k) {
    const MotionSpec& mo = scene.motions[k];
    const std::string at = "boundary.motions[" + std::to_string(k) + "]";
    auto where = [&](const SourceLoc& r, const std::string& field) {
      SourceLoc l = r.line > 0 || !r.field.empty() ? r : mo.loc;
      if (l.file.empty()) l.file = scene.file;
      if (l.field.empty()) l.field = field;
      return l;
    };
    auto move = [&](int dof, Real a, const SourceLoc& r, const std::string& field,
                    const std::string& what) {
      if (!m.dof_fixed[dof])
        throw loc_error(where(r, field), what +
                                             " is not fixed: a motion moves fixed DOFs only (fix "
                                             "it in fixed_nodes, fixed_edges, fixed_twist or "
                                             "fixed_dofs)");
      if (of[dof] >= 0 && of[dof] != int(k))
        throw loc_error(where(r, field), what + " is moved by motions " + std::to_string(of[dof]) +
                                             " and " + std::to_string(k) + " too");
      of[dof] = int(k);
      amount[dof] = a;
    };
    static const char* const kAxis = "xyz";
    for (size_t j = 0; j < mo.nodes.size(); ++j) {
      const int n = m.resolve_node(mo.nodes[j]);
      for (int c = 0; c < 3; ++c)
        if (mo.translation[c] != 0)
          move(3 * n + c, mo.translation[c], mo.nodes[j].loc,
               at + ".nodes[" + std::to_string(j) + "]",
               "node " + std::to_string(mo.nodes[j].index) + " of part '" +
                   m.part_name[mo.nodes[j].part] + "' (" + kAxis[c] + ")");
    }
    for (size_t j = 0; j < mo.edges.size(); ++j) {
      const int e = m.resolve_edge(mo.edges[j]);
      if (mo.twist != 0)
        move(m.edge_dof(e), mo.twist, mo.edges[j].loc, at + ".edges[" + std::to_string(j) + "]",
             "the twist of edge " + std::to_string(mo.edges[j].index) + " of part '" +
                 m.part_name[mo.edges[j].part] + "'");
    }
    m.motion_time.push_back(mo.time);
  }
  m.dof_motion_slot.assign(m.ndof, -1);
  for (int i = 0; i < m.ndof; ++i) {
    if (of[i] < 0) continue;
    m.dof_motion_slot[i] = int(m.motion_dof.size());
    m.motion_dof.push_back(i);
    m.motion_of.push_back(of[i]);
    m.motion_base.push_back(i < 3 * m.nnode ? m.node_x0[i] : 0);
    m.motion_amount.push_back(amount[i]);
  }
}

// per-spring stiffness overrides of the parts, after the part-wide values
void apply_spring_overrides(Model& m) {
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = m.scene.parts[p];
    const int ne = m.part_edge_adr[p + 1] - m.part_edge_adr[p];
    for (const StretchSpringOverride& o : part.stretch_springs) {
      m.edge_EA[m.part_edge[m.part_edge_adr[p] + local_index(o.edge, ne)]] = o.EA;
    }
    const int nn = m.part_node_adr[p + 1] - m.part_node_adr[p];
    for (const BendSpringOverride& o : part.bend_springs) {
      const int g = m.part_node[m.part_node_adr[p] + local_index(o.node, nn)];
      for (int k = 0; k < m.nbend; ++k) {
        if (m.bend_node[3 * k + 1] != g) continue;
        if (o.EI1 > 0) m.bend_EI[2 * k] = o.EI1;
        if (o.EI2 > 0) m.bend_EI[2 * k + 1] = o.EI2;
        if (o.GJ > 0) m.bend_GJ[k] = o.GJ;
      }
    }
  }
}

// the springs an actuation target drives
std::string spring_kind(ActuationSpec::Target t) {
  switch (t) {
    case ActuationSpec::Target::kHingeAngle:
      return "hinges (interior edges of a hinge-bending shell)";
    case ActuationSpec::Target::kMidEdgeCurvature:
      return "mid-edge triangles (of a mid_edge-bending shell)";
    case ActuationSpec::Target::kRodStretch:
      return "stretching rod edges";
    default:
      return "bend-twist springs (interior nodes of a rod)";
  }
}

// the global id of a part's first shell triangle (triangles are numbered part by part)
int first_triangle(const Model& m, int part) {
  for (int t = 0; t < m.ntri; ++t)
    if (m.tri_part[t] == part) return t;
  return 0;
}

// which springs a part has, for an actuation that names the wrong kind
std::string part_springs(const Model& m, int part) {
  int hinges = 0, mids = 0, bends = 0, edges = 0;
  for (int k = 0; k < m.nhinge; ++k)
    if (m.node_part[m.hinge_node[4 * k]] == part || m.node_part[m.hinge_node[4 * k + 1]] == part)
      ++hinges;
  for (int k = 0; k < m.nmid; ++k)
    if (m.tri_part[m.mid_tri[k]] == part) ++mids;
  for (int k = 0; k < m.nbend; ++k)
    if (m.edge_part[m.bend_edge[2 * k]] == part) ++bends;
  for (int e = 0; e < m.nedge; ++e)
    if (m.edge_part[e] == part && m.edge_EA[e] > 0) ++edges;
  std::vector<std::string> kinds;
  if (hinges) kinds.push_back(std::to_string(hinges) + " hinges (target hinge_angle)");
  if (mids)
    kinds.push_back(std::to_string(mids) + " mid-edge triangles (target midedge_curvature)");
  if (bends)
    kinds.push_back(std::to_string(bends) +
                    " bend-twist springs (targets rod_curvature1, rod_curvature2, rod_twist)");
  if (edges) kinds.push_back(std::to_string(edges) + " rod edges (target rod_stretch)");
  if (kinds.empty()) return "it has no spring that actuation drives";
  std::string s = "it has ";
  for (size_t i = 0; i < kinds.size(); ++i)
    s += (i == 0 ? "" : i + 1 == kinds.size() ? " and " : ", ") + kinds[i];
  return s;
}

// the springs of `act` (from `first` in out) take the columns of its series, one per spring in
// the model's order (a mid-edge triangle's three components share one); the series must have
// one column per spring
void assign_series_columns(const Model& m,
                           const ActuationSpec& act,
                           std::vector<ActuatedSpring>& out,
                           int first,
                           const char* what) {
  int springs = 0;
  for (size_t i = size_t(first); i < out.size(); ++i) {
    ActuatedSpring& s = out[i];
    const bool same = i > size_t(first) && out[i - 1].index == s.index &&
                      out[i - 1].component >= 4 && s.component >= 4 &&
                      s.component < kActuatedStretch;
    if (!same) ++springs;
    s.column = springs - 1;
  }
  if (act.series.columns != springs) {
    const std::string where = act.series.file.empty() ? act.loc.file : act.series.file;
    const int line = act.series.file.empty() ? act.loc.line : act.series.first_line;
    throw InputError(where, line, act.loc.field + ".series",
                     "has " + std::to_string(act.series.columns) +
                         " value columns after the time, but the " + what + " drives " +
                         std::to_string(springs) + " " + spring_kind(act.target) + " of part '" +
                         m.part_name[act.part] +
                         "': give one column per driven spring, in the model's order");
  }
}

// the springs each actuation drives, with their scale and spatial phase
void resolve_actuation(Model& m) {
  for (size_t a = 0; a < m.scene.actuation.size(); ++a)
    actuation_springs(m, m.scene.actuation[a], int(a), m.actuated, "actuation", "target");
}

}  // namespace

std::string target_name(ActuationSpec::Target t) {
  switch (t) {
    case ActuationSpec::Target::kHingeAngle:
      return "hinge_angle";
    case ActuationSpec::Target::kRodCurvature1:
      return "rod_curvature1";
    case ActuationSpec::Target::kRodCurvature2:
      return "rod_curvature2";
    case ActuationSpec::Target::kRodTwist:
      return "rod_twist";
    case ActuationSpec::Target::kMidEdgeCurvature:
      return "midedge_curvature";
    case ActuationSpec::Target::kRodStretch:
      return "rod_stretch";
  }
  return "";
}

void actuation_springs(const Model& m,
                       const ActuationSpec& act,
                       int a,
                       std::vector<ActuatedSpring>& out,
                       const char* what,
                       const char* target_field) {
  const Real nlen = norm(act.select_normal);
  const Vec3 dir =
      norm(act.wave_direction) > 0 ? act.wave_direction / norm(act.wave_direction) : vec3(0, 0, 0);
  auto selected = [&](const Vec3& c) {
    return nlen == 0 ||
           std::fabs(dot(c - act.select_point, act.select_normal / nlen)) <= act.select_tolerance;
  };
  auto phase_at = [&](const Vec3& c) {
    return act.phase_per_length * dot(c - act.wave_origin, dir);
  };
  const int before = int(out.size());
  int of_part = 0;  // the part's springs of the target's kind, selected or not
  if (act.target == ActuationSpec::Target::kHingeAngle) {
    for (int k = 0; k < m.nhinge; ++k) {
      const int n0 = m.hinge_node[4 * k], n1 = m.hinge_node[4 * k + 1];
      if (m.node_part[n0] != act.part && m.node_part[n1] != act.part) continue;
      ++of_part;
      const Vec3 c = 0.5 * (node_pos(m, n0) + node_pos(m, n1));
      if (selected(c)) out.push_back({a, k, 3, 1, phase_at(c)});
    }
  } else if (act.target == ActuationSpec::Target::kMidEdgeCurvature) {
    for (int k = 0; k < m.nmid; ++k) {
      const int t = m.mid_tri[k];
      if (m.tri_part[t] != act.part) continue;
      ++of_part;
      Vec3 c = vec3(0, 0, 0);
      for (int i = 0; i < 3; ++i)
        c += node_pos(m, m.tri_node[3 * t + i]) / 3;
      if (!selected(c)) continue;
      Real comp[3];
      if (!midedge_unit_curvature(m, k, act.direction, comp)) {
        throw InputError(act.loc.file, act.loc.line, act.loc.field + ".direction",
                         "the direction is normal to triangle " +
                             std::to_string(t - first_triangle(m, act.part)) + " of part '" +
                             m.part_name[act.part] + "' (it must lie in the shell)");
      }
      for (int i = 0; i < 3; ++i)
        out.push_back({a, k, 4 + i, comp[i], phase_at(c)});
    }
  } else if (act.target == ActuationSpec::Target::kRodStretch) {
    // every stretching edge of the part (a rod-shell joint's edges have no stretching of
    // their own), by its midpoint
    for (int e = 0; e < m.nedge; ++e) {
      if (m.edge_part[e] != act.part || !(m.edge_EA[e] > 0)) continue;
      ++of_part;
      const Vec3 c = 0.5 * (node_pos(m, m.edge_node[2 * e]) + node_pos(m, m.edge_node[2 * e + 1]));
      if (selected(c)) out.push_back({a, e, kActuatedStretch, 1, phase_at(c)});
    }
  } else {
    const int comp = act.target == ActuationSpec::Target::kRodCurvature1   ? 0
                     : act.target == ActuationSpec::Target::kRodCurvature2 ? 1
                                                                           : 2;
    for (int k = 0; k < m.nbend; ++k) {
      if (m.edge_part[m.bend_edge[2 * k]] != act.part) continue;
      ++of_part;
      const Vec3 c = node_pos(m, m.bend_node[3 * k + 1]);
      if (selected(c)) out.push_back({a, k, comp, m.bend_dl[k], phase_at(c)});
    }
  }
  if (int(out.size()) == before) {
    const std::string part = "part '" + m.part_name[act.part] + "'";
    if (of_part > 0) {
      throw InputError(act.loc.file, act.loc.line, act.loc.field + ".select",
                       "the selection (the plane through the point with this normal, within "
                       "the tolerance) takes none of the " +
                           std::to_string(of_part) + " " + spring_kind(act.target) + " of " + part);
    }
    throw InputError(act.loc.file, act.loc.line, act.loc.field + "." + target_field,
                     std::string(target_field) + " '" + target_name(act.target) + "' drives " +
                         spring_kind(act.target) + ", and " + part + " has none; " +
                         part_springs(m, act.part));
  }
  if (act.series.given()) assign_series_columns(m, act, out, before, what);
}

Real eval_time_function(const TimeFunction& f, Real t) { return eval_time_function(f, t, 0); }

void motion_targets(const Model& m, Real t, Real* out) {
  std::vector<Real> s(m.motion_time.size());
  for (size_t k = 0; k < s.size(); ++k)
    s[k] = eval_time_function(m.motion_time[k], t);
  for (size_t j = 0; j < m.motion_dof.size(); ++j)
    out[j] = m.motion_base[j] + s[size_t(m.motion_of[j])] * m.motion_amount[j];
}

void add_point_loads(const Model& m, Real t, Real factor, Real* f) {
  for (const PointLoad& pl : m.point_loads) {
    const Real s = factor * eval_time_function(pl.time, t);
    for (int k = 0; k < 3; ++k)
      f[3 * pl.node + k] += s * pl.force[k];
  }
}

Real eval_time_function(const TimeFunction& f, Real t, Real phase) {
  switch (f.kind) {
    case TimeFunction::Kind::kConstant:
      return 1;
    case TimeFunction::Kind::kSine:
      return f.offset + f.amplitude * std::sin(2 * kPi * f.frequency * t + f.phase + phase);
    case TimeFunction::Kind::kRamp:
      return std::min(t / f.ramp_time, Real(1));
    case TimeFunction::Kind::kTable: {
      const auto& tb = f.table;
      if (tb.empty()) return 0;
      if (t <= tb.front()[0]) return tb.front()[1];
      if (t >= tb.back()[0]) return tb.back()[1];
      const auto it = std::upper_bound(
          tb.begin(), tb.end(), t, [](Real v, const std::array<Real, 2>& r) { return v < r[0]; });
      const auto& b = *it;
      const auto& a = *(it - 1);
      const Real w = (t - a[0]) / (b[0] - a[0]);
      return a[1] + w * (b[1] - a[1]);
    }
    case TimeFunction::Kind::kSma: {
      Real tp = t - f.sma_start;
      if (tp < 0) return 0;
      if (f.sma_period > 0) tp = std::fmod(tp, f.sma_period);
      const Real v =
          tp < f.sma_t0 ? 1 + (f.sma_n - 1) * tp / f.sma_t0
                        : f.sma_n + (1 - f.sma_n) / (1 + std::exp(-f.sma_tau * (tp - f.sma_t_bar)));
      return v - 1;
    }
  }
  return 0;
}

void series_position(const ActuationSeries& s, Real t, int& row, Real& w) {
  const auto& tm = s.time;
  row = 0;
  w = 0;
  if (tm.empty() || t <= tm.front()) return;
  if (t >= tm.back()) {
    row = int(tm.size()) - 1;
    return;
  }
  // the last row at or before t
  row = int(std::upper_bound(tm.begin(), tm.end(), t) - tm.begin()) - 1;
  w = (t - tm[size_t(row)]) / (tm[size_t(row) + 1] - tm[size_t(row)]);
}

void apply_scene_actuation(
    const Model& m, Real t, NaturalShape& shape, std::vector<int>& row, std::vector<Real>& w) {
  // the actuated components back to their rest values: the actuations add up on them
  for (const ActuatedSpring& a : m.actuated) {
    switch (a.component) {
      case 0:
      case 1:
        shape.bend_kappa_bar[2 * a.index + a.component] =
            m.bend_kappa_bar[2 * a.index + a.component];
        break;
      case 2:
        shape.bend_tau_bar[a.index] = m.bend_tau_bar[a.index];
        break;
      case 3:
        shape.hinge_phi_bar[a.index] = m.hinge_phi_bar[a.index];
        break;
      case kActuatedStretch:
        shape.edge_stretch_bar[a.index] = 1;
        break;
      default:  // a mid-edge curvature component, 0 at rest
        shape.mid_kappa_bar[3 * a.index + a.component - 4] = 0;
        break;
    }
  }
  // where t falls in each actuation's series, once per actuation
  const size_t nact = m.scene.actuation.size();
  row.assign(nact, 0);
  w.assign(nact, 0);
  for (size_t i = 0; i < nact; ++i)
    if (m.scene.actuation[i].series.given())
      series_position(m.scene.actuation[i].series, t, row[i], w[i]);
  for (const ActuatedSpring& a : m.actuated)
    natural_value(shape, a.component, a.index) += actuated_value(
        m.scene.actuation[a.actuation], a, t, row[size_t(a.actuation)], w[size_t(a.actuation)]);
  // the scene's stretch must leave every edge a positive natural length
  for (const ActuatedSpring& a : m.actuated)
    if (a.component == kActuatedStretch &&
        !(shape.edge_stretch_bar[a.index] > 0 && std::isfinite(shape.edge_stretch_bar[a.index]))) {
      const ActuationSpec& act = m.scene.actuation[a.actuation];
      const std::string where =
          act.loc.file.empty() ? "" : act.loc.file + ":" + std::to_string(act.loc.line) + ": ";
      const std::string field =
          act.loc.field.empty() ? "actuation[" + std::to_string(a.actuation) + "]" : act.loc.field;
      throw Error(where + field + ": at t = " + std::to_string(t) +
                  " s the natural stretch of rod edge " + std::to_string(a.index) + " is " +
                  std::to_string(shape.edge_stretch_bar[a.index]) +
                  " (1 + the sum of its actuations' amplitude s(t)); it must stay positive, a "
                  "natural length above zero");
    }
}

std::vector<Real> part_youngs_scales(const Model& m, Real t) {
  std::vector<Real> s(size_t(m.npart), 1);
  for (size_t k = 0; k < m.youngs_time_part.size(); ++k) {
    const int p = m.youngs_time_part[k];
    const Real v = 1 + eval_time_function(m.youngs_time[k], t);
    if (!(v > 0) || !std::isfinite(v)) {
      throw Error("part '" + m.scene.parts[size_t(p)].name +
                  "': its Young's modulus scale 1 + s(t) is " + num(v) + " at t = " + num(t) +
                  " s (it must stay positive)");
    }
    s[size_t(p)] = v;
  }
  return s;
}

int Model::resolve_node(const NodeRef& r) const {
  SLENDER_CHECK(r.part >= 0 && r.part < npart, "node reference to part ", r.part, " of ", npart);
  const int count = part_node_adr[r.part + 1] - part_node_adr[r.part];
  const int i = local_index(r.index, count);
  SLENDER_CHECK(i >= 0 && i < count, "node index ", r.index, " out of range for part ", r.part);
  return part_node[part_node_adr[r.part] + i];
}

int Model::resolve_edge(const EdgeRef& r) const {
  SLENDER_CHECK(r.part >= 0 && r.part < npart, "edge reference to part ", r.part, " of ", npart);
  const int count = part_edge_adr[r.part + 1] - part_edge_adr[r.part];
  const int i = local_index(r.index, count);
  SLENDER_CHECK(i >= 0 && i < count, "edge index ", r.index, " out of range for part ", r.part);
  return part_edge[part_edge_adr[r.part] + i];
}

Real Model::rod_gap(int a, int b) const {
  if (edge_part[a] != edge_part[b] || edge_arc[a] < 0 || edge_arc[b] < 0) return -1;
  return rod_arc_gap(edge_arc[a], edge_l_bar[a], edge_arc[b], edge_l_bar[b],
                     part_loop_length[edge_part[a]]);
}

size_t Model::memory_bytes() const {
  size_t b = 0;
  auto add = [&b](const auto& v) { b += v.size() * sizeof(v[0]); };
#define SLENDER_ADD_BYTES(type, name, count, width, doc) add(name);
  SLENDER_VIEW_ARRAYS(SLENDER_ADD_BYTES)
  SLENDER_HOST_ARRAYS(SLENDER_ADD_BYTES)
#undef SLENDER_ADD_BYTES
  add(part_node), add(part_edge), add(part_bend), add(contact_mu);
  add(motion_dof), add(motion_of), add(motion_base), add(motion_amount), add(dof_motion_slot);
  add(fixed_dof), add(dof_fixed_slot), add(dof_locked), add(edge_theta0);
  add(event_time), add(event_release), add(event_dof_adr), add(event_dof);
  for (const FamilyTable& t : tables)
    add(t.i), add(t.r);
  add(plan.dof_free), add(plan.free_dof), add(plan.row_ptr), add(plan.col), add(plan.diag_slot);
  add(plan.slot_src_adr), add(plan.slot_src), add(plan.row_src_adr), add(plan.row_src);
  return b;
}

namespace {

// the global nodes: the parts' nodes merged by joints, numbered in order of first appearance;
// returns the largest coordinate's magnitude (the scale of the length checks)
Real merge_joined_nodes(Model& m, const SceneSpec& scene) {
  std::vector<int> slot_adr(m.npart + 1, 0);
  for (int p = 0; p < m.npart; ++p) {
    slot_adr[p + 1] = slot_adr[p] + int(scene.parts[p].nodes.size());
  }
  UnionFind uf(slot_adr.back());
  for (const JointSpec& j : scene.joints) {
    for (size_t a = 1; a < j.nodes.size(); ++a) {
      auto slot = [&](const NodeRef& r) {
        const int count = slot_adr[r.part + 1] - slot_adr[r.part];
        return slot_adr[r.part] + local_index(r.index, count);
      };
      uf.join(slot(j.nodes[0]), slot(j.nodes[a]));
    }
  }
  std::vector<int> slot_node(slot_adr.back(), -1);
  m.part_node_adr.assign(1, 0);
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = scene.parts[p];
    for (size_t i = 0; i < part.nodes.size(); ++i) {
      const int s = slot_adr[p] + int(i);
      const int root = uf.find(s);
      if (slot_node[root] < 0) {
        slot_node[root] = m.nnode++;
        for (int c = 0; c < 3; ++c)
          m.node_x0.push_back(part.nodes[i][c]);
        m.node_part.push_back(p);
      }
      slot_node[s] = slot_node[root];
      m.part_node.push_back(slot_node[s]);
    }
    m.part_node_adr.push_back(int(m.part_node.size()));
    m.part_name.push_back(part.name);
  }

  // joined nodes must coincide
  Real extent = 0;
  for (Real v : m.node_x0)
    extent = std::max(extent, std::fabs(v));
  for (const JointSpec& j : scene.joints) {
    const Vec3 a =
        scene.parts[j.nodes[0].part]
            .nodes[local_index(j.nodes[0].index, int(scene.parts[j.nodes[0].part].nodes.size()))];
    for (const NodeRef& r : j.nodes) {
      const Vec3 b =
          scene.parts[r.part].nodes[local_index(r.index, int(scene.parts[r.part].nodes.size()))];
      if (norm(b - a) > 1e-9 * std::max(extent, Real(1))) {
        std::ostringstream os;
        os << "joined nodes are " << norm(b - a) << " m apart; a joint's nodes must coincide";
        throw loc_error(j.loc, os.str());
      }
    }
  }

  return extent;
}

// the parts' rod edges with their sections' properties (returned, an entry per edge)
std::vector<SectionProps> add_part_edges(Model& m, const SceneSpec& scene, Real extent) {
  std::vector<SectionProps> edge_props;
  m.part_edge_adr.assign(1, 0);
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = scene.parts[p];
    const SectionProps sp = section_props(part, scene.materials[part.material]);
    const Real rho = scene.materials[part.material].density;
    for (size_t k = 0; k < part.edges.size(); ++k) {
      const int a = m.part_node[m.part_node_adr[p] + part.edges[k][0]];
      const int b = m.part_node[m.part_node_adr[p] + part.edges[k][1]];
      const Real l = norm(node_pos(m, b) - node_pos(m, a));
      if (a == b || !(l > 1e-12 * std::max(extent, Real(1)))) {
        std::ostringstream os;
        os << "edge " << k << " (nodes " << part.edges[k][0] << ", " << part.edges[k][1]
           << ") has zero length" << (a == b ? " after joints merged its nodes" : "");
        throw loc_error(part.loc, os.str());
      }
      m.edge_node.push_back(a);
      m.edge_node.push_back(b);
      m.edge_l_bar.push_back(l);
      const PartSpec::StretchLaw& law = part.stretch_law;
      m.edge_EA.push_back(law.scale * (part.stiffness.EA >= 0
                                           ? part.stiffness.EA
                                           : scene.materials[part.material].youngs_modulus * sp.A));
      m.edge_stretch_alpha.push_back(law.kind == PartSpec::StretchLaw::kHookean      ? 0
                                     : law.kind == PartSpec::StretchLaw::kNeoHookean ? 2
                                                                                     : law.alpha);
      m.edge_inertia.push_back(rho * l * sp.polar);
      m.edge_radius.push_back(sp.radius);
      m.edge_part.push_back(p);
      edge_props.push_back(sp);
      m.part_edge.push_back(m.nedge++);
    }
    m.part_edge_adr.push_back(int(m.part_edge.size()));
  }

  return edge_props;
}

// clamps at a node (SceneSpec::clamps): a ghost node one edge length behind the rod's end,
// on the line of its end edge, and a ghost edge from it to the end, both held (fix_dofs). The
// bend-twist spring the end then gets (between the ghost edge and the end edge) holds the
// tangent and the material frame at the node; its Voronoi length is the end edge's half only
// (the ghost side is the rigid clamp). The ghost edge has no stretching stiffness; it carries
// the end edge's section (its mass sits on the two held nodes). Ghosts come after every part's
// nodes and edges, so that part-local indices are unchanged.
struct Clamp {
  int node, edge, ghost_edge;
};
std::vector<Clamp> add_clamps(Model& m,
                              const SceneSpec& scene,
                              std::vector<SectionProps>& edge_props) {
  std::vector<Clamp> clamps;
  for (const NodeRef& r : scene.clamps) {
    const int p = r.part, n = m.resolve_node(r);
    int e = -1;
    for (int k = m.part_edge_adr[p]; k < m.part_edge_adr[p + 1]; ++k) {
      const int pe = m.part_edge[k];
      if (m.edge_node[2 * pe] == n || m.edge_node[2 * pe + 1] == n) e = pe;
    }
    const int o = m.edge_node[2 * e] == n ? m.edge_node[2 * e + 1] : m.edge_node[2 * e];
    const Vec3 xn = node_pos(m, n);
    const Vec3 ghost = xn + (xn - node_pos(m, o));
    for (int c = 0; c < 3; ++c)
      m.node_x0.push_back(ghost[c]);
    m.node_part.push_back(p);
    const int g = m.nnode++;
    m.edge_node.insert(m.edge_node.end(), {g, n});
    m.edge_l_bar.push_back(m.edge_l_bar[e]);
    m.edge_EA.push_back(0);
    m.edge_stretch_alpha.push_back(0);
    m.edge_inertia.push_back(m.edge_inertia[e]);
    m.edge_radius.push_back(m.edge_radius[e]);
    m.edge_part.push_back(p);
    edge_props.push_back(edge_props[e]);
    clamps.push_back({n, e, m.nedge++});
  }

  return clamps;
}

// lumped masses, volumes and Voronoi lengths of the rods' nodes, the shells (build_shells), the
// point masses, and each node's contact radius
void lump_masses(Model& m, const SceneSpec& scene, const std::vector<SectionProps>& edge_props) {
  m.node_mass.assign(m.nnode, 0);
  m.node_dl.assign(m.nnode, 0);
  m.node_volume.assign(m.nnode, 0);
  for (int e = 0; e < m.nedge; ++e) {
    const PartSpec& part = scene.parts[m.edge_part[e]];
    const Real ve = edge_props[e].A * m.edge_l_bar[e];
    for (int a = 0; a < 2; ++a) {
      m.node_mass[m.edge_node[2 * e + a]] += scene.materials[part.material].density * ve / 2;
      m.node_volume[m.edge_node[2 * e + a]] += ve / 2;
      m.node_dl[m.edge_node[2 * e + a]] += m.edge_l_bar[e] / 2;
    }
  }
  build_shells(m);
  for (const PointMassSpec& pm : scene.point_masses)
    m.node_mass[m.resolve_node(pm.node)] += pm.mass;
  m.tri_half_thickness.resize(m.ntri);
  for (int t = 0; t < m.ntri; ++t) {
    const PartSpec& part = scene.parts[m.tri_part[t]];
    m.tri_half_thickness[t] =
        0.5 * (part.contact_thickness > 0 ? part.contact_thickness : part.thickness);
  }
  // contact radius of each node: its largest rod radius or half shell thickness
  m.node_contact_radius.assign(m.nnode, 0);
  for (int e = 0; e < m.nedge; ++e)
    for (int a = 0; a < 2; ++a) {
      Real& r = m.node_contact_radius[m.edge_node[2 * e + a]];
      r = std::max(r, m.edge_radius[e]);
    }
  for (int t = 0; t < m.ntri; ++t)
    for (int a = 0; a < 3; ++a) {
      Real& r = m.node_contact_radius[m.tri_node[3 * t + a]];
      r = std::max(r, m.tri_half_thickness[t]);
    }
}

// the rods' bend-twist springs (with a clamp's half-edge), the rod-shell joints' edges, the
// mid-edge shells' DOFs, the reference frames and the natural strains
void build_bending(Model& m,
                   const std::vector<SectionProps>& edge_props,
                   const std::vector<Clamp>& clamps) {
  std::vector<Real> edge_EI1, edge_EI2, edge_GJ;
  for (const SectionProps& sp : edge_props) {
    edge_EI1.push_back(sp.EI1);
    edge_EI2.push_back(sp.EI2);
    edge_GJ.push_back(sp.GJ);
  }
  add_rod_shell_joint_edges(m, edge_EI1, edge_EI2, edge_GJ);
  build_midedge(m);
  m.ndof = 3 * m.nnode + m.nedge + m.nxi;
  build_bend_stencils(m, edge_EI1, edge_EI2, edge_GJ);
  // a clamp's spring bends over the end edge's half only
  for (const Clamp& c : clamps)
    for (int k = 0; k < m.nbend; ++k) {
      const int a = m.bend_edge[2 * k], b = m.bend_edge[2 * k + 1];
      if (m.bend_node[3 * k + 1] == c.node && (a == c.ghost_edge || b == c.ghost_edge))
        m.bend_dl[k] = 0.5 * m.edge_l_bar[c.edge];
    }
  apply_spring_overrides(m);
  init_reference_frames(m);
  init_natural_strains(m);
  init_midedge_rest_shape(m);
}

// added mass (forces.added_mass): C_a rho_med times the volume each node displaces within the
// listed parts, summed as node_volume is (rod edges, then triangles)
void add_added_mass(Model& m, const SceneSpec& scene, const std::vector<SectionProps>& edge_props) {
  m.node_added_mass.assign(m.nnode, 0);
  const AddedMassSpec& am = scene.forces.added_mass;
  if (am.coefficient > 0) {
    std::vector<char> on(scene.parts.size(), am.parts.empty() ? 1 : 0);
    for (int p : am.parts)
      on[size_t(p)] = 1;
    std::vector<Real> vol(m.nnode, 0);
    for (int e = 0; e < m.nedge; ++e) {
      if (!on[size_t(m.edge_part[e])]) continue;
      const Real ve = edge_props[e].A * m.edge_l_bar[e];
      for (int a = 0; a < 2; ++a)
        vol[m.edge_node[2 * e + a]] += ve / 2;
    }
    for (int t = 0; t < m.ntri; ++t) {
      if (!on[size_t(m.tri_part[t])]) continue;
      const int* n = &m.tri_node[3 * size_t(t)];
      auto x0_of = [&](int k) {
        return Vec3{
            {m.node_x0[3 * size_t(k)], m.node_x0[3 * size_t(k) + 1], m.node_x0[3 * size_t(k) + 2]}};
      };
      const Vec3 x0 = x0_of(n[0]), x1 = x0_of(n[1]), x2 = x0_of(n[2]);
      const Real area = 0.5 * norm(cross(x1 - x0, x2 - x0));
      for (int k = 0; k < 3; ++k)
        vol[n[k]] += scene.parts[size_t(m.tri_part[t])].thickness * area / 3;
    }
    for (int n = 0; n < m.nnode; ++n)
      m.node_added_mass[n] = am.coefficient * scene.forces.buoyancy_density * vol[n];
    m.added_mass = true;
  }
}

// the DOFs' inertial masses (the node's and its added mass), the initial velocities and twist
// angles
void init_dof_masses(Model& m,
                     const SceneSpec& scene,
                     const std::vector<SectionProps>& edge_props) {
  m.dof_mass.assign(m.ndof, 0);
  for (int n = 0; n < m.nnode; ++n)
    for (int c = 0; c < 3; ++c)
      m.dof_mass[3 * n + c] = m.node_mass[n] + m.node_added_mass[n];
  for (int e = 0; e < m.nedge; ++e)
    m.dof_mass[m.edge_dof(e)] = m.edge_inertia[e];
  check_derived_quantities(scene, m, edge_props);
  m.dof_u0.assign(m.ndof, 0);
  for (const auto& iv : scene.initial_velocities) {
    const int n = m.resolve_node(iv.first);
    for (int c = 0; c < 3; ++c)
      m.dof_u0[3 * n + c] = iv.second[c];
  }
  // initial twist angles and velocities of the parts' rod edges
  m.edge_theta0.assign(size_t(m.nedge), 0);
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = scene.parts[size_t(p)];
    for (int k = 0; k < m.part_edge_adr[p + 1] - m.part_edge_adr[p]; ++k) {
      const int e = m.part_edge[size_t(m.part_edge_adr[p] + k)];
      if (!part.initial_twist_angle.empty())
        m.edge_theta0[size_t(e)] = part.initial_twist_angle[size_t(k)];
      if (!part.initial_twist_velocity.empty())
        m.dof_u0[size_t(m.edge_dof(e))] = part.initial_twist_velocity[size_t(k)];
    }
  }
}

// the fixed DOFs (the boundary block's; a clamp's node, ghost node and ghost twist), the motions
// and the fixed set's changes in time
void fix_dofs(Model& m, const SceneSpec& scene, const std::vector<Clamp>& clamps) {
  std::vector<int> clamp_dofs;
  for (const Clamp& c : clamps) {
    for (const int n : {m.edge_node[2 * c.ghost_edge], c.node})
      for (int k = 0; k < 3; ++k)
        clamp_dofs.push_back(3 * n + k);
    clamp_dofs.push_back(m.edge_dof(c.ghost_edge));
  }
  build_fixed_dofs(m, clamp_dofs);
  resolve_motions(m);
  // a clamp's ghost stays where it is: a motion of its node would bend the rod about it
  for (size_t i = 0; i < clamps.size(); ++i)
    for (int c = 0; c < 3; ++c)
      if (m.dof_motion_slot[size_t(3 * clamps[i].node + c)] >= 0) {
        SourceLoc loc = scene.clamps[i].loc;
        if (loc.file.empty()) loc.file = scene.file;
        if (loc.field.empty()) loc.field = "clamps[" + std::to_string(i) + "]";
        throw loc_error(loc,
                        "a motion moves this clamped node, but a clamp at a node does not "
                        "move (a moving clamp: fixed_edges with a motion)");
      }
  // the fixed set's changes in time
  resolve_boundary_events(m);
}

// the body forces' constants, the moduli in time and every damping's per-DOF or per-node value
void set_forces_and_damping(Model& m, const SceneSpec& scene) {
  m.gravity = scene.forces.gravity;
  m.viscosity = scene.forces.viscosity;
  m.mass_damping = scene.forces.mass_damping;
  // Young's moduli in time
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = scene.parts[size_t(p)];
    if (!part.youngs_in_time) continue;
    m.youngs_time_part.push_back(p);
    m.youngs_time.push_back(part.youngs_time);
  }
  // mass damping: each DOF carries its part's alpha (or the scene's)
  {
    // (validate_scene checked the values)
    auto alpha_of = [&](int part) {
      const PartSpec& ps = scene.parts[size_t(part)];
      m.mass_damping_per_part = m.mass_damping_per_part || ps.mass_damping >= 0;
      return ps.mass_damping >= 0 ? ps.mass_damping : scene.forces.mass_damping;
    };
    m.dof_mass_damping.assign(size_t(m.ndof), m.mass_damping);
    for (int n = 0; n < m.nnode; ++n)
      for (int c = 0; c < 3; ++c)
        m.dof_mass_damping[size_t(3 * n + c)] = alpha_of(m.node_part[size_t(n)]);
    for (int e = 0; e < m.nedge; ++e)
      m.dof_mass_damping[size_t(3 * m.nnode + e)] = alpha_of(m.edge_part[size_t(e)]);
    for (int se = 0; se < m.nsedge; ++se)
      if (m.sedge_xi[size_t(se)] >= 0)
        m.dof_mass_damping[size_t(3 * m.nnode + m.nedge + m.sedge_xi[size_t(se)])] =
            alpha_of(m.tri_part[size_t(m.sedge_tri[size_t(2 * se)])]);
  }
  // Rayleigh stiffness damping: each node carries its part's beta (or the scene's)
  m.node_stiffness_damping.assign(size_t(m.nnode), 0);
  for (int n = 0; n < m.nnode; ++n) {
    const PartSpec& part = scene.parts[size_t(m.node_part[n])];
    const Real beta =
        part.stiffness_damping >= 0 ? part.stiffness_damping : scene.forces.stiffness_damping;
    m.node_stiffness_damping[size_t(n)] = beta;
    m.stiffness_damping = m.stiffness_damping || beta > 0;
  }
  // Kelvin-Voigt damping: each node carries its part's retardation time eta / E (the viscosity
  // the part gives, or the scene's, over the part's Young's modulus)
  m.node_kelvin_voigt.assign(size_t(m.nnode), 0);
  for (int n = 0; n < m.nnode; ++n) {
    const PartSpec& part = scene.parts[size_t(m.node_part[n])];
    const Real eta = part.kelvin_voigt >= 0 ? part.kelvin_voigt : scene.forces.kelvin_voigt;
    const Real tau = eta > 0 ? eta / scene.materials[size_t(part.material)].youngs_modulus : 0;
    m.node_kelvin_voigt[size_t(n)] = tau;
    m.kelvin_voigt = m.kelvin_voigt || tau > 0;
  }
  m.buoyancy_density = scene.forces.buoyancy_density;
  m.drag_density = scene.forces.drag_density;
  m.drag_coefficient = scene.forces.drag_coefficient;
  m.rft_tangential = scene.forces.rft_tangential;
  m.rft_normal = scene.forces.rft_normal;
}

// contact between bodies and with the ground: the rods' arc lengths (near neighbours along a rod
// are excluded), the friction of each pair of materials, the automatic stiffnesses
void set_contact(Model& m, const SceneSpec& scene) {
  m.contact = scene.contact;
  // arc-length positions along parts that are chains of rod edges (each edge starting where the
  // previous one ends), for the contact exclusion of near neighbours along a rod
  m.edge_arc.assign(m.nedge, -1);
  m.part_loop_length.assign(m.npart, 0);
  for (int p = 0; p < m.npart; ++p) {
    const int e0 = m.part_edge_adr[p], e1 = m.part_edge_adr[p + 1];
    if (e1 == e0) continue;
    bool chain = true;
    for (int k = e0 + 1; k < e1 && chain; ++k)
      chain = m.edge_node[2 * m.part_edge[k]] == m.edge_node[2 * m.part_edge[k - 1] + 1];
    if (!chain) continue;
    Real s = 0;
    for (int k = e0; k < e1; ++k) {
      m.edge_arc[m.part_edge[k]] = s;
      s += m.edge_l_bar[m.part_edge[k]];
    }
    const bool closed =
        e1 - e0 > 2 && m.edge_node[2 * m.part_edge[e1 - 1] + 1] == m.edge_node[2 * m.part_edge[e0]];
    if (closed) m.part_loop_length[p] = s;
  }
  // friction coefficients: the default for every pair of materials, then the named pairs
  m.nmaterial = int(scene.materials.size());
  m.part_material.resize(m.npart);
  for (int p = 0; p < m.npart; ++p)
    m.part_material[p] = scene.parts[p].material;
  m.contact_mu.assign(size_t(m.nmaterial) * m.nmaterial, m.contact.friction);
  for (const FrictionPairSpec& fp : m.contact.friction_pairs) {
    m.contact_mu[size_t(fp.material_a) * m.nmaterial + fp.material_b] = fp.mu;
    m.contact_mu[size_t(fp.material_b) * m.nmaterial + fp.material_a] = fp.mu;
  }
  // automatic contact stiffnesses, from weights (masses times |g|, at least 1 m/s^2). Between
  // bodies: the larger of the heaviest node's weight W / delta and ten times its inertial
  // stiffness m / dt^2, so that a node arriving at speed stops inside the contact layer (a pair
  // that passes through each other is lost). The ground: each node's own weight / delta (a
  // stiffness per kilogram, |g| / delta), which carries every node within delta / 2 of the
  // surface and does not depend on dt: every node's impact lasts pi sqrt(delta / (2 |g|)),
  // resolved by steps well below it (the midpoint rule and Newmark then conserve the energy of
  // an elastic bounce, and a restitution below 1 converges as dt shrinks); a node arriving at
  // speed v sinks about v sqrt(delta / (2 |g|)) into it. (Before 2026-11 the ground took the
  // bodies' rule, whose omega dt of about 4.5 made the midpoint rule and Newmark gain energy at
  // every impact.)
  Real heaviest = 0;
  for (Real w : m.node_mass)
    heaviest = std::max(heaviest, w);
  const Real dt = scene.integrator.dt;
  const Real weight = heaviest * std::max(norm(scene.forces.gravity), Real(1));
  if (m.contact.enabled) {
    m.contact_stiffness = m.contact.stiffness > 0
                              ? m.contact.stiffness
                              : std::max(weight / m.contact.tolerance, 10 * heaviest / (dt * dt));
  }
  m.ground = scene.forces.ground;
  if (m.ground.enabled) {
    m.ground.normal = m.ground.normal / norm(m.ground.normal);
    const Real per_kg = std::max(norm(scene.forces.gravity), Real(1)) / m.ground.contact_distance;
    m.ground_stiffness = m.ground.stiffness > 0 ? m.ground.stiffness : per_kg * heaviest;
    m.ground_stiffness_per_kg = m.ground.stiffness > 0 ? 0 : per_kg;
  }
}

// the point loads and the distributed loads (a point load per node)
void add_loads(Model& m, const SceneSpec& scene) {
  // a load along a fixed DOF would do nothing: refused, not ignored (the 2D mode holds y by
  // projection, which drops the out-of-plane part by design)
  for (size_t i = 0; i < scene.forces.point_loads.size(); ++i) {
    const PointLoadSpec& pl = scene.forces.point_loads[i];
    const int n = m.resolve_node(pl.node);
    for (int c = 0; c < 3; ++c) {
      if (pl.force[c] == 0 || !m.dof_fixed[3 * n + c] || (c == 1 && scene.integrator.two_d))
        continue;
      const SourceLoc& loc = pl.loc;
      throw InputError(
          loc.file.empty() ? scene.file : loc.file, loc.line,
          loc.field.empty() ? "forces.point_loads[" + std::to_string(i) + "]" : loc.field,
          std::string("the point load has a ") + "xyz"[c] +
              " component on a fixed DOF, where it would do nothing");
    }
    m.point_loads.push_back(PointLoad{n, pl.force, pl.time});
  }
  // distributed loads: a point load per node of the part, f times its share of the part's rest
  // length (half of each of its rod edges; a rod-shell joint's edges, without stiffness, carry
  // none). A node held fixed passes its share to the support (the reactions see it).
  for (size_t i = 0; i < scene.forces.distributed_loads.size(); ++i) {
    const DistributedLoadSpec& dl = scene.forces.distributed_loads[i];
    std::vector<Real> share(m.nnode, 0);
    bool any = false;
    for (int e = 0; e < m.nedge; ++e) {
      if (m.edge_part[e] != dl.part || !(m.edge_EA[e] > 0)) continue;
      for (int a = 0; a < 2; ++a)
        share[m.edge_node[2 * e + a]] += m.edge_l_bar[e] / 2;
      any = true;
    }
    if (!any) {
      const SourceLoc& loc = dl.loc;
      throw InputError(
          loc.file.empty() ? scene.file : loc.file, loc.line,
          (loc.field.empty() ? "forces.distributed_loads[" + std::to_string(i) + "]" : loc.field) +
              ".part",
          "part '" + scene.parts[size_t(dl.part)].name +
              "' has no rod edges: a distributed load acts on a rod (a shell's: "
              "follower_pressure)");
    }
    for (int n = 0; n < m.nnode; ++n)
      if (share[n] > 0)
        m.point_loads.push_back(PointLoad{n, share[n] * dl.force_per_length, dl.time});
  }
}

}  // namespace

std::shared_ptr<const Model> build_model(const SceneSpec& scene) {
  validate_scene(scene);
  auto mp = std::make_shared<Model>();
  Model& m = *mp;
  m.scene = scene;
  m.npart = int(scene.parts.size());

  const Real extent = merge_joined_nodes(m, scene);
  std::vector<SectionProps> edge_props = add_part_edges(m, scene, extent);
  const std::vector<Clamp> clamps = add_clamps(m, scene, edge_props);
  lump_masses(m, scene, edge_props);
  build_bending(m, edge_props, clamps);
  add_added_mass(m, scene, edge_props);
  init_dof_masses(m, scene, edge_props);
  fix_dofs(m, scene, clamps);
  set_forces_and_damping(m, scene);
  set_contact(m, scene);
  add_loads(m, scene);
  build_family_tables(m);
  resolve_actuation(m);
  // the controllers' springs, profiles and gains (errors now, at the scene's loading)
  if (!m.scene.controllers.empty()) StrainController check(mp, m.scene.controllers);
  build_assembly_plan(m);
  // every array of the list has its count x width values (a builder that missed one is a bug)
  const std::string misfit = model_arrays_misfit(m);
  SLENDER_CHECK(misfit.empty(), "the model's arrays do not fit their counts: ", misfit);
  return mp;
}

std::shared_ptr<const Model> with_energies(
    const std::shared_ptr<const Model>& model,
    std::vector<std::shared_ptr<const UserEnergy>> energies) {
  SLENDER_CHECK(model, "with_energies: no model");
  auto mp = std::make_shared<Model>(*model);
  Model& m = *mp;
  const ModelView mv = host_view(m);
  for (size_t i = 0; i < energies.size(); ++i) {
    const std::shared_ptr<const UserEnergy>& u = energies[i];
    SLENDER_CHECK(u, "with_energies: energy ", i, " is null");
    const int d = u->dofs_per_stencil();
    SLENDER_CHECK(d >= 1 && d <= kUserEnergyMaxDofs, "energy '", u->name(), "': ", d,
                  " DOFs per stencil, outside 1..", kUserEnergyMaxDofs);
    const long n = u->count(mv);
    SLENDER_CHECK(n >= 0, "energy '", u->name(), "': a negative stencil count ", n);
    std::vector<int> dofs(static_cast<size_t>(d));
    for (long k = 0; k < n; ++k) {
      u->dofs(mv, k, dofs.data());
      for (int a = 0; a < d; ++a)
        SLENDER_CHECK(dofs[a] >= 0 && dofs[a] < m.ndof, "energy '", u->name(), "': stencil ", k,
                      ", local DOF ", a, " is DOF ", dofs[a], ", outside the model's ", m.ndof,
                      " DOFs");
    }
    m.user_energies.push_back(u);
  }
  build_assembly_plan(m);
  return mp;
}

void check_state_finite(const State& s, const std::string& who) {
  auto bad = [&](const std::string& what, Real v) {
    std::ostringstream o;
    o << who << ": " << what << " is " << v << ": a state's values must be finite";
    throw Error(o.str());
  };
  if (!std::isfinite(s.time)) bad("the time", s.time);
#define SLENDER_FINITE_ARRAY(type, name, count, width, doc) \
  for (size_t i = 0; i < s.name.size(); ++i)                \
    if (!std::isfinite(s.name[i])) bad(#name "[" + std::to_string(i) + "]", s.name[i]);
  SLENDER_STATE_ARRAYS(SLENDER_FINITE_ARRAY)
#undef SLENDER_FINITE_ARRAY
}

bool state_fits(const Model& m, const State& s) {
  bool fits = true;
#define SLENDER_STATE_FITS(type, name, count, width, doc) \
  fits = fits && s.name.size() == size_t(count) * (width);
  SLENDER_STATE_ARRAYS(SLENDER_STATE_FITS)
#undef SLENDER_STATE_FITS
  return fits && (s.dof_fixed.empty() || s.dof_fixed.size() == size_t(m.ndof)) &&
         s.events_done >= 0 && s.events_done <= int(m.event_time.size());
}

const unsigned char* state_fixed(const Model& m, const State& s) {
  return s.dof_fixed.empty() ? m.dof_fixed.data() : s.dof_fixed.data();
}

void set_state_fixed(const Model& m, const unsigned char* fixed, State& s) {
  // (fixed may point into s.dof_fixed itself)
  std::vector<unsigned char> v(size_t(m.ndof));
  for (int i = 0; i < m.ndof; ++i)
    v[size_t(i)] = fixed[i] ? 1 : 0;
  if (v == m.dof_fixed) v.clear();
  s.dof_fixed.swap(v);
}

std::string model_arrays_misfit(const Model& m) {
  std::string out;
#define SLENDER_ARRAY_FITS(type, name, count, width, doc)                              \
  if (m.name.size() != size_t(count) * (width))                                        \
    out += std::string(out.empty() ? "" : ", ") + #name + " holds " +                  \
           std::to_string(m.name.size()) + " values, not " #count " x " #width " = " + \
           std::to_string(size_t(count) * (width));
  SLENDER_VIEW_ARRAYS(SLENDER_ARRAY_FITS)
  SLENDER_HOST_ARRAYS(SLENDER_ARRAY_FITS)
#undef SLENDER_ARRAY_FITS
  for (const FamilyTable& t : m.tables)
    if (!t.fits())
      out += std::string(out.empty() ? "" : ", ") + "the table of '" + t.name + "' holds " +
             std::to_string(t.i.size()) + " ints and " + std::to_string(t.r.size()) +
             " reals, not " + std::to_string(t.rows) + " rows";
  return out;
}

State initial_state(const Model& m) {
  State s;
  s.nenv = 1;
  s.ndof = m.ndof;
  s.q.assign(m.ndof, 0);
  std::copy(m.node_x0.begin(), m.node_x0.end(), s.q.begin());
  std::copy(m.edge_theta0.begin(), m.edge_theta0.end(), s.q.begin() + 3 * m.nnode);
  s.u = m.dof_u0;
  s.a.assign(m.ndof, 0);
  s.edge_d1 = m.edge_d1_0;
  s.edge_t.resize(3 * size_t(m.nedge));
  for (int e = 0; e < m.nedge; ++e) {
    const Vec3 t = node_pos(m, m.edge_node[2 * e + 1]) - node_pos(m, m.edge_node[2 * e]);
    const Vec3 tn = t / norm(t);
    for (int c = 0; c < 3; ++c)
      s.edge_t[3 * e + c] = tn[c];
  }
  s.bend_ref_twist = m.bend_ref_twist_0;
  s.sedge_tau0 = m.sedge_tau0_0;
  return s;
}

}  // namespace slender
