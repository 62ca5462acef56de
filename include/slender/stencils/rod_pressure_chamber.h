#pragma once

// A pressure chamber along a rod (Bartholdt et al., seed 004, §IV, eqs. 24-25): a cavity of
// cross-section A_ch running along a stretch of the rod, its centre at the offset d_ch from the
// centreline in the direction phi of the cross-section, d = d_ch (cos phi m1 + sin phi m2). Its
// gauge pressure p pushes on the material that closes it at both ends, so that where the
// chamber begins and ends the rod's internal force jumps by p alpha A_ch along the tangent t
// and its internal moment by p alpha A_ch d x t (alpha: the lateral compression factor of the
// chamber's wall, [15] of seed 004; 1 is the plain pressure force). In between, the section's
// solid carries that tension and moment: the rod stretches and bends with its own stiffness
// (the section's, chamber included).
//
// On the discrete rod, per pascal, with a = alpha A_ch:
// - the moment: a follower wrench pair at the chamber's end nodes (stencils/rod_wrench.h,
//   whose math this family reuses), M = a d x t = a d_ch (sin phi, -cos phi, 0) in (m1, m2, t)
//   (d x t = d_ch (cos phi m1 x t + sin phi m2 x t)): +M at the distal end (the end node of the
//   chamber's last edge, along the rod's node order), -M at the proximal end (the start node
//   of its first edge). A rod's node has no cross-section of its own, so the moment at an end
//   node is shared by the two edges that meet there (the chamber's and the one beyond it along
//   the rod, when there is exactly one, running the same way), half each: each node strictly
//   inside the chamber then carries the moment M and each end node M / 2, so that the rod turns
//   by M L_ch / EI over a chamber of rest length L_ch (the trapezoid rule on its end nodes; with
//   the whole moment on the chamber's own edges it would turn by M (L_ch - l) / EI). The edge
//   beyond takes its half in its own material frame: the moment in the world at the rest
//   configuration, parallel transported from the chamber's edge to it, then resolved in its
//   frame (the same components where the frames agree). Where the chamber ends at a free end
//   of the rod (or at a node where more than two edges meet), its own edge takes all of it.
// - the force: each of the chamber's edges is pulled along its own tangent, +a t at its end
//   node and -a t at its start (two follower wrenches, F = (0, 0, +-a)): the distal and
//   proximal ends get +-a t of the end edges, and each node inside a (t_e - t_e+1) (the fluid's
//   push on the chamber's curved wall). Together these are the gradient of -p a L, L the
//   chamber's current length (the fluid's volume work -p V), and they pull the solid along its
//   local axis, as the fluid does in a curved chamber. The ends' forces alone (the bare jumps of
//   eqs. 24-25) would not be collinear once the chamber bends: a net force a p (t_1 - t_0) on
//   the rod, taken by the support, and an extra bending moment N kappa (s_1 - s)^2 / 2 inside
//   the chamber (N = p a, kappa its curvature), which turns it N L_ch^2 / (6 EI) further (2.8 %
//   in Table III's actuator at 60 kPa, apps/scenes/bartholdt_actuator.json), and N kappa L_ch^2
//   / 2 in the rod before it: that actuator's tip deflects 6.3 % further (measured).
//
// A follower moment has no potential: the Jacobian is the wrench's (exact under its frame
// rule, not symmetric), and Newton's line search measures the residual (has_potential).
//
// The family keeps its rows in the wrench family's layout (2 per chamber edge, plus 1 or 2
// where the moment is shared), all with the chamber's signal p(t) = pressure s(t): a chamber's
// input_signal carries the pressure as its amplitude, so that an action that replaces an
// entry's signal (Simulator::set_load_value, BatchedSimulator::set_load_values) sets the
// chamber's pressure in pascals.

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

#include "slender/core/types.h"
#include "slender/stencils/rod_frames.h"
#include "slender/stencils/rod_wrench.h"

namespace slender {

/// The follower wrench per pascal at a chamber's distal end, components in the end edge's
/// material frame (m1, m2, t): F = alpha A (0, 0, 1), M = alpha A d x t with
/// d = offset (cos angle m1 + sin angle m2). alpha: lateral compression factor [-], area: A_ch
/// [m^2], offset: d_ch [m], angle: phi from m1 towards m2 [rad]. F [N/Pa], M [N m/Pa].
SLENDER_HD inline void pressure_chamber_wrench(
    Real alpha, Real area, Real offset, Real angle, Vec3& F, Vec3& M) {
  const Real a = alpha * area;
  F = Vec3{{0, 0, a}};
  M = Vec3{{a * offset * ::sin(angle), -a * offset * ::cos(angle), 0}};
}

/// The pressure chamber family F (families.h): the wrench family's rows and evaluation
/// (RodWrenchBinding: ints [n_a, n_b, edge, at, follower = 1, signal], reals [F (3), M (3)] per
/// pascal; two rows per chamber edge and one per edge beyond an end that shares its moment),
/// from the scene field forces.pressure_chambers: {"part": rod, "first_edge",
/// "last_edge": the chamber's edges (default 0 and -1: the whole part), "area": A_ch [m^2],
/// "offset": d_ch [m] (default 0), "angle": phi [rad] (default 0), "alpha" (default 1),
/// "pressure": p [Pa], "time": s(t)}. A load (not in the reactions), not elastic, not symmetric
/// (a follower load).
template <int F>
struct RodPressureChamberBinding : RodWrenchBinding<F> {
  using Wrench = RodWrenchBinding<F>;
  static constexpr const char* kSceneField = "pressure_chambers";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the rod part the chamber runs along"},
      {"first_edge", FieldKind::kNumber, false,
       "the part's first edge of the chamber, an integer (negative from the end); default 0"},
      {"last_edge", FieldKind::kNumber, false,
       "the part's last edge of the chamber, not before first_edge; default -1"},
      {"area", FieldKind::kNumber, true, "A_ch [m^2]: the chamber's cross-section, > 0"},
      {"offset", FieldKind::kNumber, false,
       "d_ch [m]: the chamber's centre from the rod's centreline, >= 0, inside the section; "
       "default 0"},
      {"angle", FieldKind::kNumber, false,
       "phi [rad]: the direction of the offset, from m1 towards m2; default 0"},
      {"alpha", FieldKind::kNumber, false,
       "the lateral compression factor, in (0, 1]: the pressure force is p alpha A_ch; "
       "default 1"},
      {"pressure", FieldKind::kNumber, true, "p [Pa]: the gauge pressure (< 0: a vacuum)"},
      {"time", FieldKind::kTime, false, "s(t): the pressure is p s(t); default constant 1"},
  };

  /// The rows of one scene entry `in` (a FamilyInput) of model `m` (a Model whose rods and
  /// frames are built); throws InputError naming the entry's field for a part without rod
  /// edges, edges out of range, not integers, out of order or not a chain, an area that is not
  /// positive or not below the section's, an offset that is negative or puts the chamber's
  /// centre outside the section, or an alpha outside (0, 1].
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = detail::input_rod_part(m, in, "part", "a chamber runs along a rod");
    const std::string& name = m.scene.parts[size_t(part)].name;
    const int adr = m.part_edge_adr[size_t(part)];
    const int first = detail::input_part_edge(m, in, "first_edge", 0, part);
    const int last = detail::input_part_edge(m, in, "last_edge", -1, part);
    if (last < first)
      input_error(m, in, "last_edge",
                  "comes before first_edge (part edges " + std::to_string(first) + " to " +
                      std::to_string(last) + "): a chamber runs from its first edge to its last");
    for (int k = first; k < last; ++k)
      if (m.edge_node[2 * size_t(m.part_edge[size_t(adr + k)]) + 1] !=
          m.edge_node[2 * size_t(m.part_edge[size_t(adr + k + 1)])])
        input_error(m, in, "last_edge",
                    "part '" + name + "''s edges " + std::to_string(k) + " and " +
                        std::to_string(k + 1) +
                        " do not follow each other: a chamber runs along a chain of edges");
    const Real area = input_number(m, in, "area", 0);
    const Real offset = input_number(m, in, "offset", 0);
    const Real angle = input_number(m, in, "angle", 0);
    const Real alpha = input_number(m, in, "alpha", 1);
    if (!(area > 0)) input_error(m, in, "area", "must be positive, got " + num_str(area));
    if (!(offset >= 0)) input_error(m, in, "offset", "must be 0 or more, got " + num_str(offset));
    if (!(alpha > 0 && alpha <= 1))
      input_error(m, in, "alpha", "must be in (0, 1], got " + num_str(alpha));
    // the chamber's centre inside the part's section, its area below the section's
    const auto& sec = m.scene.parts[size_t(part)].section;
    using Section = std::decay_t<decltype(sec)>;  // CrossSection (scene.h)
    const bool circle = sec.kind == Section::Kind::kCircle;
    const Real section_area = circle ? kPi * sec.radius * sec.radius : sec.width * sec.height;
    if (!(area < section_area))
      input_error(m, in, "area",
                  "the chamber (" + num_str(area) + " m^2) must be smaller than part '" + name +
                      "''s section (" + num_str(section_area) + " m^2)");
    const Real y1 = offset * std::cos(angle), y2 = offset * std::sin(angle);
    const bool inside = circle ? offset < sec.radius
                               : std::fabs(y1) < sec.width / 2 && std::fabs(y2) < sec.height / 2;
    if (!inside)
      input_error(m, in, "offset",
                  "the chamber's centre (" + num_str(offset) + " m from the centreline at " +
                      num_str(angle) + " rad) lies outside part '" + name + "''s section (" +
                      (circle ? "radius " + num_str(sec.radius) + " m"
                              : num_str(sec.width) + " m x " + num_str(sec.height) + " m") +
                      ")");
    const Real pressure = input_number(m, in, "pressure", 0);
    const int signal = input_signal(m, in, "time", pressure);
    Vec3 Fp, Mp;
    pressure_chamber_wrench(alpha, area, offset, angle, Fp, Mp);
    // each edge pulled along its own tangent, the moment +M at the distal end (the end node of
    // the last edge) and -M at the proximal end (the start node of the first)
    for (int k = first; k <= last; ++k) {
      const int e = m.part_edge[size_t(adr + k)];
      const Real end_share = k == last ? add_moment(m, table, e, 1, Mp, signal) : 0;
      add_row(m, table, e, 1, Fp, end_share * Mp, signal);
      const Real start_share = k == first ? add_moment(m, table, e, 0, -1 * Mp, signal) : 0;
      add_row(m, table, e, 0, -1 * Fp, -start_share * Mp, signal);
    }
  }

 private:
  static std::string num_str(Real v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

  // the moment M at the end node `at` of the chamber's end edge `edge` (1: its end node, 0: its
  // start): half of it in a row of the edge beyond that node, when there is one; returns the
  // share left to `edge` itself (1/2 or 1)
  template <class Model>
  static Real add_moment(
      const Model& m, FamilyTable& table, int edge, int at, const Vec3& M, int sig) {
    const int beyond = edge_beyond(m, edge, at);
    if (beyond < 0) return 1;
    // the moment in the world at rest, parallel transported to the edge beyond and resolved
    // in its material frame
    Vec3 m1, m2, t;
    rest_frame(m, edge, m1, m2, t);
    const Vec3 world = Real(0.5) * (M[0] * m1 + M[1] * m2 + M[2] * t);
    Vec3 b1, b2, bt;
    rest_frame(m, beyond, b1, b2, bt);
    const Vec3 moved = parallel_transport(world, t, bt);
    add_row(m, table, beyond, at, Vec3{{0, 0, 0}},
            Vec3{{dot(moved, b1), dot(moved, b2), dot(moved, bt)}}, sig);
    return Real(0.5);
  }

  // the edge that continues the chain from `edge` beyond its node `at` (the one edge paired
  // with it by a bend-twist stencil at that node, running the same way), or -1
  template <class Model>
  static int edge_beyond(const Model& m, int edge, int at) {
    const int node = m.edge_node[2 * size_t(edge) + size_t(at)];
    int found = -1, count = 0;
    for (int b = 0; b < m.nbend; ++b) {
      if (m.bend_node[3 * size_t(b) + 1] != node) continue;
      const int e0 = m.bend_edge[2 * size_t(b)], e1 = m.bend_edge[2 * size_t(b) + 1];
      if (e0 != edge && e1 != edge) continue;
      const int other = e0 == edge ? e1 : e0;
      ++count;
      // the same way: it starts where the chamber's edge ends (or ends where it starts)
      if (m.edge_node[2 * size_t(other) + size_t(1 - at)] == node) found = other;
    }
    return count == 1 ? found : -1;
  }

  template <class Model>
  static void rest_frame(const Model& m, int edge, Vec3& m1, Vec3& m2, Vec3& t) {
    const size_t a = size_t(m.edge_node[2 * size_t(edge)]),
                 b = size_t(m.edge_node[2 * size_t(edge) + 1]);
    for (int i = 0; i < 3; ++i)
      t[i] = m.node_x0[3 * b + i] - m.node_x0[3 * a + i];
    t = t / norm(t);
    const Vec3 d1{{m.edge_d1_0[3 * size_t(edge)], m.edge_d1_0[3 * size_t(edge) + 1],
                   m.edge_d1_0[3 * size_t(edge) + 2]}};
    material_frame(d1, t, m.edge_theta0[size_t(edge)], m1, m2);
  }

  template <class Model>
  static void add_row(const Model& m,
                      FamilyTable& table,
                      int edge,
                      int at,
                      const Vec3& force,
                      const Vec3& M,
                      int sig) {
    const int ints[Wrench::kInts] = {
        m.edge_node[2 * size_t(edge)], m.edge_node[2 * size_t(edge) + 1], edge, at, 1, sig};
    const Real reals[Wrench::kReals] = {force[0], force[1], force[2], M[0], M[1], M[2]};
    table.add(ints, reals);
  }
};

}  // namespace slender
