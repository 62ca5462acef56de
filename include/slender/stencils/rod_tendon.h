#pragma once

// A tendon along a rod: a cable under tension T routed through points fixed in the rod's cross-
// sections (guides, spacer discs) and tied to the last of them (its anchor, or termination).
// The cable is pulled at its first point, where it leaves the rod for the actuator (the rod's
// base, usually): beyond that point it is not modelled, and the first point feels the first
// segment's pull (the actuator's housing holds the cable there), so it belongs on the rod's held
// base. Between consecutive points it runs
// straight and slides through the guides without friction, so the tension is the same along it
// and each straight segment pulls both its ends towards each other with T. Those forces are the
// gradient of the cable's potential under a constant tension,
//   V = T L,   L = sum_k |p_{k+1} - p_k|,
// the work the actuator does when the cable shortens by dL is T dL (the system lowers its
// energy by shortening the cable): the force on point k is T (u_k - u_{k-1}), u_k the unit
// vector from p_k to p_{k+1}, and the anchor (the last point) is pulled back along the last
// segment with T. A cable cannot push: a tension below zero (a time function or an action that
// goes negative) is a slack cable, T = 0.
//
// A point lies on the cross-section of a rod edge (nodes a -> b, e = b - a, l = |e|, t = e / l,
// material frame m1, m2 from the reference director d1 and the twist theta: rod_frames.h), at
// the fraction w of the edge from a (0: node a's section, 1: node b's, 1/2: the midpoint's) and
// at the offset (r1, r2) in the edge's material frame:
//   p = (1 - w) x_a + w x_b + r,   r = r1 m1 + r2 m2.
// A discrete rod's node has no cross-section of its own: a point at a node takes the frame of
// one edge that meets there (the family below says which).
//
// One stencil per straight segment: local DOFs (14) [x_a, x_b, theta] of the first point's edge
// and then of the second's (a shared node or edge appears twice; the assembly adds both).
// E = T |p_1 - p_0|, g = dE/dx (the cable's forces negated), H = dg/dx.
// With s = t x r (dr/dtheta: dm1/dtheta = m2, dm2/dtheta = -m1), the point's Jacobian is
//   dp/dx_a = (1 - w) I + t r^T / l,   dp/dx_b = w I - t r^T / l,   dp/dtheta = s
// (the frame rule below: dm_k/de = -t m_k^T / l, so dr/de = -t r^T / l), and for the gradient
// G = dE/dp at the point the gradient's part G . dp carries, in e = x_b - x_a and theta,
//   g_e = -(G . t) r / l,   g_theta = G . s,
// whose derivatives with G held are
//   dg_e/de = ((G . t) (t r^T + r t^T) - r G_perp^T) / l^2   (G_perp = G - (G . t) t),
//   dg_e/dtheta = dg_theta/de^T = -(G . t) s / l,   dg_theta/dtheta = -G . r;
// then H = J^T (d2E/dp2) J + those, with d2E/dp2 the segment's T (I - u u^T) / L in the blocks
// [[+, -], [-, +]] of the two points (symmetric: the positions' part).
//
// The frame rule (rod_wrench.h's): the reference director d1 in Params is that of the
// configuration evaluated (time-parallel transported from the step's start by the engine); H
// is the exact derivative of g whose reference frames are parallel transported from that
// configuration, d1(x') = P_{t -> t'} d1. E and g are exact. H is not symmetric where a point
// is off the centreline: its symmetric part is the Hessian of E under the same rule (the second
// order of P_{t -> t'} u for u normal to t, with a = (e' - e) / l and a_perp its part normal to
// t, is (t . a) t (a_perp . u) - (a_perp . u) a_perp / 2, which gives the term
// -(r G_perp^T + G_perp r^T) / (2 l^2)); the rest, -(r G_perp^T - G_perp r^T) / (2 l^2), is
// there because g at x' differentiates its frame by transport from x', not from x: the two
// frames differ by a turn about t' (the holonomy of the tangents t, t', t''), of second order,
// whose rate that term is. On the engine's path the Jacobian is exact at the step's start and
// differs elsewhere by the holonomy term of order |t - t_step_start| |dt|, which Newton's
// iterations absorb. Where every point of a model's tendons lies on the centreline, H is
// symmetric (symmetric() below); else the model is solved by LU or BiCGSTAB. E is the cable's
// potential: the line search weighs it with the elastic energy.

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"
#include "slender/stencils/rod_frames.h"
#include "slender/stencils/rod_wrench.h"

namespace slender {

struct RodTendon {
  static constexpr int kNodes = 4;
  static constexpr int kDofs = 14;
  struct Params {
    Vec3 d1[2];  ///< reference director of each point's edge at this configuration (unit, normal to
                 ///< t)
    Real w[2];   ///< each point's place along its edge: 0 its start node, 1 its end node
    Real r1[2];  ///< each point's offset along m1 [m]
    Real r2[2];  ///< each point's offset along m2 [m]
    Real T;      ///< the tension [N] (>= 0: the binding clamps a negative signal to 0)
  };
};

/// Energy T |p_1 - p_0|, gradient and (on request) Jacobian of one tendon segment (not
/// symmetric where a point is off the centreline: see above).
/// A zero-length edge or a segment of zero length (no direction) gives zero g and H and the
/// kDegenerate flag.
SLENDER_HD inline void rod_tendon_eval(const Vec<14>& x,
                                       const RodTendon::Params& p,
                                       unsigned want,
                                       LocalEval<14>& out) {
  out.flags = 0;
  Vec3 pt[2], t[2], r[2], s[2];
  Real l[2];
  bool degenerate = false;
  for (int j = 0; j < 2; ++j) {
    const Vec3 xa = x.segment<3>(7 * j), xb = x.segment<3>(7 * j + 3);
    const Vec3 e = xb - xa;
    l[j] = norm(e);
    if (!(l[j] > 0)) {
      degenerate = true;
      break;
    }
    t[j] = e / l[j];
    Vec3 m1, m2;
    material_frame(p.d1[j], t[j], x[7 * j + 6], m1, m2);
    r[j] = p.r1[j] * m1 + p.r2[j] * m2;
    s[j] = cross(t[j], r[j]);
    pt[j] = (1 - p.w[j]) * xa + p.w[j] * xb + r[j];
  }
  Real L = 0;
  Vec3 c{{0, 0, 0}};
  if (!degenerate) {
    c = pt[1] - pt[0];
    L = norm(c);
    degenerate = !(L > 0);
  }
  if (degenerate) {
    out.E = 0;
    out.g.set_zero();
    if (want & kHess) out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  out.E = p.T * L;
  if (want == kEnergy) return;
  const Vec3 u = c / L;
  // each point's dp/d(x_a, x_b, theta) and dE/dp
  Mat<3, 7> J[2];
  Vec3 G[2];
  for (int j = 0; j < 2; ++j) {
    G[j] = (j ? p.T : -p.T) * u;
    const Mat3 tr = (1 / l[j]) * outer(t[j], r[j]);
    J[j].set_zero();
    J[j].add_block(0, 0, Mat3::identity(), 1 - p.w[j]);
    J[j].add_block(0, 0, tr, 1);
    J[j].add_block(0, 3, Mat3::identity(), p.w[j]);
    J[j].add_block(0, 3, tr, -1);
    for (int i = 0; i < 3; ++i)
      J[j](i, 6) = s[j][i];
    out.g.set_segment(7 * j, mul_transpose(J[j], G[j]));
  }
  if (!(want & kHess)) return;
  out.H.set_zero();
  // the segment: J_i^T (+-T (I - u u^T) / L) J_j
  const Mat3 Hpp = (p.T / L) * (Mat3::identity() - outer(u, u));
  for (int j = 0; j < 2; ++j) {
    const Mat<3, 7> A = Hpp * J[j];
    for (int i = 0; i < 2; ++i)
      out.H.add_block(7 * i, 7 * j, J[i].transpose() * A, i == j ? 1 : -1);
  }
  // each point's own second derivative, G . d2p
  for (int j = 0; j < 2; ++j) {
    const Real gt = dot(G[j], t[j]);
    const Vec3 gp = G[j] - gt * t[j];
    const Real il2 = 1 / (l[j] * l[j]);
    Mat3 Hee = (gt * il2) * (outer(t[j], r[j]) + outer(r[j], t[j]));
    Hee += (-il2) * outer(r[j], gp);  // not symmetric: the frame rule's (see above)
    const int a = 7 * j, b = 7 * j + 3, th = 7 * j + 6;
    out.H.add_block(a, a, Hee, 1);
    out.H.add_block(a, b, Hee, -1);
    out.H.add_block(b, a, Hee, -1);
    out.H.add_block(b, b, Hee, 1);
    // d2/de dtheta = -G.t s / l: d/dx_a = -d/de, d/dx_b = d/de
    const Vec3 het = (-gt / l[j]) * s[j];
    for (int i = 0; i < 3; ++i) {
      out.H(a + i, th) -= het[i];
      out.H(th, a + i) -= het[i];
      out.H(b + i, th) += het[i];
      out.H(th, b + i) += het[i];
    }
    out.H(th, th) -= dot(G[j], r[j]);
  }
}

/// The tendon family F (families.h): one row per straight segment of each tendon,
///   ints [a_0, b_0, edge_0, a_1, b_1, edge_1, signal], reals [w_0, r1_0, r2_0, w_1, r1_1, r2_1]
/// (the two points' edges, their places along them and their offsets; per newton: the row's
/// signal is the tension), from the scene field forces.tendons: {"part": rod, "nodes": the
/// part's nodes the cable passes, in order, ending at the anchor (default: every node of the
/// part in order) or "edges": the part's edges whose midpoints it passes, "offset": the
/// distance from the centreline [m] (one for all points or one per point), "angle": its
/// direction from m1 towards m2 [rad] (the same; default 0), "tension": T [N] >= 0, "time":
/// s(t)}. A point at a node takes the frame of the part's edge that starts there (at the end of
/// a rod, the edge that ends there). A load (not in the reactions), not elastic, symmetric only
/// without offsets, its potential T L reported as Energies::load.
template <int F>
struct RodTendonBinding {
  using S = RodTendon;
  static constexpr int kDofs = 14;
  static constexpr int kInts = 7, kReals = 6;
  /// not elastic, a load, non-symmetric (see symmetric()), its energy a load's, its grain
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kLoad,
                                        kParallelGrainMedium};
  static constexpr const char* kSceneField = "tendons";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the rod part the tendon runs along"},
      {"nodes", FieldKind::kNumbers, false,
       "the part's nodes the cable passes, in order from where it is pulled to its anchor "
       "(integers, negative from the end); default every node of the part in order"},
      {"edges", FieldKind::kNumbers, false,
       "instead of nodes: the part's edges whose midpoints' sections the cable passes"},
      {"offset", FieldKind::kNumbers, true,
       "d [m]: each point's distance from the centreline, >= 0, within the section; one number "
       "for every point or one per point"},
      {"angle", FieldKind::kNumbers, false,
       "phi [rad]: the offset's direction, from m1 towards m2; one or one per point; default 0"},
      {"tension", FieldKind::kNumber, true, "T [N]: the cable's tension, >= 0"},
      {"time", FieldKind::kTime, false,
       "s(t): the tension is T s(t) (below 0: a slack cable); default constant 1"},
  };

  /// symmetric where every point of every tendon lies on the centreline (no offsets: the
  /// frame terms vanish)
  template <class M>
  static bool symmetric(const M& m) {
    const FamilyTable& t = m.tables[size_t(F)];
    for (long k = 0; k < t.rows; ++k) {
      const Real* r = t.r.data() + kReals * k;
      if (r[1] != 0 || r[2] != 0 || r[4] != 0 || r[5] != 0) return false;
    }
    return true;
  }

  SLENDER_HD static long count(const ModelView& m) { return m.table[F].rows; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    const int* row = m.table[F].i + kInts * k;
    for (int j = 0; j < 2; ++j) {
      detail::position_dofs<2>(row + 3 * j, out + 7 * j);
      out[7 * j + 6] = 3 * m.nnode + row[3 * j + 2];
    }
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<14>& r) {
    const FamilyTableView& t = m.table[F];
    const int* row = t.i + kInts * k;
    const Real* par = t.r + kReals * k;
    const Real* q = s.q + long(env) * m.ndof;
    Vec<14> x;
    RodTendon::Params p;
    for (int j = 0; j < 2; ++j) {
      for (int a = 0; a < 2; ++a)
        for (int i = 0; i < 3; ++i)
          x[7 * j + 3 * a + i] = q[3 * row[3 * j + a] + i];
      x[7 * j + 6] = q[3 * m.nnode + row[3 * j + 2]];
      const Real* d1 = s.edge_d1 + (long(env) * m.nedge + row[3 * j + 2]) * 3;
      for (int i = 0; i < 3; ++i)
        p.d1[j][i] = d1[i];
      p.w[j] = par[3 * j];
      p.r1[j] = par[3 * j + 1];
      p.r2[j] = par[3 * j + 2];
    }
    // a cable cannot push: a negative tension is a slack cable
    const Real sig = s.signal[long(env) * kMaxSignals + row[6]];
    p.T = sig > 0 ? sig : Real(0);
    rod_tendon_eval(x, p, want, r);
  }

  /// The rows of one scene entry `in` (a FamilyInput) of model `m` (a Model whose rods and
  /// frames are built); throws InputError naming the entry's field for a part without rod
  /// edges, both nodes and edges, fewer than two points, an index that is not an integer within
  /// the part, a node no edge of the part meets, offsets or angles neither one nor one per
  /// point, an offset below zero or outside the part's section, two consecutive points at the
  /// same place, or a negative tension.
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = detail::input_rod_part(m, in, "part", "a tendon runs along a rod");
    const std::string& name = m.scene.parts[size_t(part)].name;
    const int eadr = m.part_edge_adr[size_t(part)];
    const int nedges = m.part_edge_adr[size_t(part) + 1] - eadr;
    const int nadr = m.part_node_adr[size_t(part)];
    const int nnodes = m.part_node_adr[size_t(part) + 1] - nadr;
    const bool by_edges = in.find_list("edges") || in.find_number("edges");
    const bool by_nodes = in.find_list("nodes") || in.find_number("nodes");
    if (by_edges && by_nodes)
      input_error(m, in, "edges",
                  "not with nodes: the cable's points are either nodes' or edges' sections");
    const char* where = by_edges ? "edges" : "nodes";
    std::vector<Real> ids;
    if (by_edges || by_nodes) {
      ids = input_numbers(m, in, where, {});
    } else {
      for (int i = 0; i < nnodes; ++i)
        ids.push_back(Real(i));
    }
    const int npoint = int(ids.size());
    if (npoint < 2)
      input_error(m, in, where,
                  "a tendon runs through 2 points or more (its first, where it is pulled, and "
                  "its anchor), got " +
                      std::to_string(npoint));
    const int count = by_edges ? nedges : nnodes;
    // each point: its edge, its place along it
    const size_t np = size_t(npoint);
    std::vector<int> edge(np, 0);
    std::vector<Real> w(np, 0);
    for (int k = 0; k < npoint; ++k) {
      const Real v = ids[size_t(k)];
      if (v != Real(long(v)) || v < -count || v >= count)
        input_error(m, in, where,
                    "entry " + std::to_string(k) + " (" + num_str(v) +
                        ") must be an integer in [-" + std::to_string(count) + ", " +
                        std::to_string(count - 1) + "] (part '" + name + "' has " +
                        std::to_string(count) + (by_edges ? " edges" : " nodes") +
                        "; negative counts from the end)");
      const int local = v < 0 ? int(v) + count : int(v);
      if (by_edges) {
        edge[size_t(k)] = m.part_edge[size_t(eadr + local)];
        w[size_t(k)] = Real(0.5);
        continue;
      }
      // the part's edge that starts at the node, else the one that ends there
      const int node = m.part_node[size_t(nadr + local)];
      int found = -1;
      for (int at = 0; at < 2 && found < 0; ++at)
        for (int i = 0; i < nedges && found < 0; ++i) {
          const int e = m.part_edge[size_t(eadr + i)];
          if (m.edge_node[2 * size_t(e) + size_t(at)] == node) {
            found = e;
            w[size_t(k)] = Real(at);
          }
        }
      if (found < 0)
        input_error(m, in, where,
                    "part '" + name + "''s node " + std::to_string(local) + " (entry " +
                        std::to_string(k) + ") is on none of its rod edges");
      edge[size_t(k)] = found;
    }
    // the offsets: one for all points or one per point, inside the section
    auto per_point = [&](const char* field, Real fallback) {
      std::vector<Real> v = input_numbers(m, in, field, {fallback});
      if (v.size() == 1) v.assign(size_t(npoint), v[0]);
      if (int(v.size()) != npoint)
        input_error(m, in, field,
                    "must be one number or one per point (" + std::to_string(npoint) + "), got " +
                        std::to_string(v.size()));
      return v;
    };
    const std::vector<Real> offset = per_point("offset", 0), angle = per_point("angle", 0);
    const auto& sec = m.scene.parts[size_t(part)].section;
    using Section = std::decay_t<decltype(sec)>;  // CrossSection (scene.h)
    const bool circle = sec.kind == Section::Kind::kCircle;
    constexpr Real kSlack = 1 + 1e-12;  // the section's boundary itself is inside
    std::vector<Real> r1(np), r2(np);
    for (int k = 0; k < npoint; ++k) {
      const Real d = offset[size_t(k)];
      if (!(d >= 0))
        input_error(m, in, "offset",
                    "point " + std::to_string(k) + "'s offset must be 0 or more, got " +
                        num_str(d) + " (angle gives its direction)");
      r1[size_t(k)] = d * std::cos(angle[size_t(k)]);
      r2[size_t(k)] = d * std::sin(angle[size_t(k)]);
      const bool inside = circle ? d <= kSlack * sec.radius
                                 : std::fabs(r1[size_t(k)]) <= kSlack * sec.width / 2 &&
                                       std::fabs(r2[size_t(k)]) <= kSlack * sec.height / 2;
      if (!inside)
        input_error(m, in, "offset",
                    "point " + std::to_string(k) + " (" + num_str(d) +
                        " m from the centreline at " + num_str(angle[size_t(k)]) +
                        " rad) lies outside part '" + name + "''s section (" +
                        (circle ? "radius " + num_str(sec.radius) + " m"
                                : num_str(sec.width) + " m x " + num_str(sec.height) + " m") +
                        ")");
    }
    const Real tension = input_number(m, in, "tension", 0);
    if (!(tension >= 0))
      input_error(m, in, "tension",
                  "must be 0 or more (a cable pulls, it cannot push), got " + num_str(tension));
    // consecutive points apart at rest (a segment of no length has no direction)
    std::vector<Vec3> rest(np);
    for (int k = 0; k < npoint; ++k) {
      const int e = edge[size_t(k)];
      Vec3 xa, xb;
      for (int i = 0; i < 3; ++i) {
        xa[i] = m.node_x0[3 * size_t(m.edge_node[2 * size_t(e)]) + i];
        xb[i] = m.node_x0[3 * size_t(m.edge_node[2 * size_t(e) + 1]) + i];
      }
      const Vec3 t = (xb - xa) / norm(xb - xa);
      const Vec3 d1{{m.edge_d1_0[3 * size_t(e)], m.edge_d1_0[3 * size_t(e) + 1],
                     m.edge_d1_0[3 * size_t(e) + 2]}};
      Vec3 m1, m2;
      material_frame(d1, t, m.edge_theta0[size_t(e)], m1, m2);
      rest[size_t(k)] =
          (1 - w[size_t(k)]) * xa + w[size_t(k)] * xb + r1[size_t(k)] * m1 + r2[size_t(k)] * m2;
      if (k > 0 && !(norm(rest[size_t(k)] - rest[size_t(k - 1)]) > 1e-9 * norm(xb - xa)))
        input_error(m, in, where,
                    "entries " + std::to_string(k - 1) + " and " + std::to_string(k) +
                        " put two consecutive points of the cable at the same place");
    }
    const int signal = input_signal(m, in, "time", tension);
    for (int k = 0; k + 1 < npoint; ++k) {
      int ints[kInts];
      Real reals[kReals];
      for (int j = 0; j < 2; ++j) {
        const int e = edge[size_t(k + j)];
        ints[3 * j] = m.edge_node[2 * size_t(e)];
        ints[3 * j + 1] = m.edge_node[2 * size_t(e) + 1];
        ints[3 * j + 2] = e;
        reals[3 * j] = w[size_t(k + j)];
        reals[3 * j + 1] = r1[size_t(k + j)];
        reals[3 * j + 2] = r2[size_t(k + j)];
      }
      ints[6] = signal;
      table.add(ints, reals);
    }
  }

 private:
  static std::string num_str(Real v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
};

}  // namespace slender
