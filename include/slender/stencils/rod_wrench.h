#pragma once

// A wrench (a force F and a moment M) at a rod's edge: a tip load, fixed in the world frame or
// following the edge's material frame. A discrete elastic rod's nodes carry no rotation and its
// edges carry the material frame (m1, m2, t) and the twist angle theta (seed 000 §3.2), so the
// wrench acts on one edge, nodes a -> b (the stored direction), e = b - a, l = |e|, t = e / l:
// - the force F acts at one of the edge's nodes (a or b);
// - the moment's part along the tangent, M . t, is the generalized force of theta (a rotation
//   of the material frame about t by d theta does the work (M . t) d theta);
// - its transverse part is a couple of forces f = (M x t) / l at b and -f at a: their moment
//   l t x f = M - (M . t) t, the work of M on a rigid rotation of the edge normal to t.
// World frame ("fixed"): F and M are constant vectors times the time function s(t).
// Follower: F = F1 m1 + F2 m2 + F3 t and M = M1 m1 + M2 m2 + M3 t turn with the edge's material
// frame (the components times s(t)); then M . t = M3 and f = (M2 m1 - M1 m2) / l.
//
// Local DOFs (7): [x_a, x_b, theta], the node positions [m] and the edge's twist [rad].
// Outputs, for a force without a potential (as the drag stencils): g = -Q, the generalized
// forces negated, and H = dg/dx = -dQ/dx, not symmetric:
// - world frame: F has no derivative; f = (M x t) / l and M . t give
//     df/de = [M]x (I - 2 t t^T) / l^2,   d(M . t)/de = M^T (I - t t^T) / l;
// - follower: with the frame rule below, dt/de = P / l (P = I - t t^T), dm_k/de = -t m_k^T / l,
//   dm1/dtheta = m2, dm2/dtheta = -m1, so
//     dF/de = (F3 P - t (F1 m1 + F2 m2)^T) / l,   dF/dtheta = F1 m2 - F2 m1,
//     df/de = -(w t^T + t w^T) / l^2 (w = M2 m1 - M1 m2),   df/dtheta = (M1 m1 + M2 m2) / l,
//   and M . t = M3 is constant;
// and d/dx_a = -d/de, d/dx_b = d/de. E: a world-frame force's potential -F . x (at its node),
// which the line search weighs with the elastic energy; a moment and a follower load have none
// (E holds the force's part only), so a model with one makes Newton's line search measure the
// residual (has_potential below, families_have_potential in families.h).
//
// The frame rule (as rod_bend_twist.h's): the reference director d1 in Params is that of the
// configuration evaluated (time-parallel transported from the step's start to the current
// tangent by the engine); the Jacobian is the exact derivative of the follower load whose
// reference frame is parallel transported from that configuration, d1(x') = P_{t -> t'} d1, so
// that dd1 = -t (d1 . dt). The residual is exact; the Jacobian differs from the full derivative
// of the time-parallel frame by the holonomy term of order |t - t_step_start| |dt| (a turn of
// the frame about t), which Newton's iterations absorb (it vanishes at the step's start).
//
// The family (registered in families.h) keeps one row per scene entry of forces.wrenches.

#include <string>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"
#include "slender/stencils/rod_frames.h"

namespace slender {

struct RodWrench {
  static constexpr int kNodes = 2;
  static constexpr int kDofs = 7;
  struct Params {
    Vec3 d1;       ///< reference director of the edge at this configuration (unit, normal to t)
    Vec3 F;        ///< force [N]: world components, or (F1, F2, F3) in (m1, m2, t)
    Vec3 M;        ///< moment [N m]: world components, or (M1, M2, M3) in (m1, m2, t)
    int at;        ///< the node the force acts at: 0 = a (the edge's start), 1 = b (its end)
    int follower;  ///< 0: world frame; 1: the components are in the material frame
  };
};

/// Negated generalized forces (g) of one wrench and, on request, their Jacobian (H, not
/// symmetric). E: -F . x_force for the world frame, 0 for a follower. A zero-length edge (no
/// tangent) gets zero g and H and the kDegenerate flag.
SLENDER_HD inline void rod_wrench_eval(const Vec<7>& x,
                                       const RodWrench::Params& p,
                                       unsigned want,
                                       LocalEval<7>& out) {
  out.flags = 0;
  out.E = p.follower ? 0 : -dot(p.F, x.segment<3>(3 * p.at));
  if (want == kEnergy) return;
  const Vec3 e = x.segment<3>(3) - x.segment<3>(0);
  const Real l = norm(e);
  if (!(l > 0)) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  const Vec3 t = e / l;
  const int na = 3 * p.at;  // the force's rows
  Vec3 force, f, m1, m2;
  Real torque;
  if (p.follower) {
    material_frame(p.d1, t, x[6], m1, m2);
    force = p.F[0] * m1 + p.F[1] * m2 + p.F[2] * t;
    f = (p.M[1] * m1 - p.M[0] * m2) / l;
    torque = p.M[2];
  } else {
    force = p.F;
    f = cross(p.M, t) / l;
    torque = dot(p.M, t);
  }
  out.g.set_zero();
  for (int i = 0; i < 3; ++i) {
    out.g[na + i] -= force[i];
    out.g[i] += f[i];
    out.g[3 + i] -= f[i];
  }
  out.g[6] = -torque;
  if (!(want & kHess)) return;
  out.H.set_zero();
  const Mat3 P = Mat3::identity() - outer(t, t);
  Mat3 dF = Mat3::zero(), df;  // d(force)/de, d(f)/de
  Vec3 dF_th{{0, 0, 0}}, df_th{{0, 0, 0}}, dtorque = Vec3{{0, 0, 0}};
  if (p.follower) {
    const Vec3 fm = p.F[0] * m1 + p.F[1] * m2;
    dF = (p.F[2] / l) * P;
    dF += (-1 / l) * outer(t, fm);
    dF_th = p.F[0] * m2 - p.F[1] * m1;
    const Vec3 w = p.M[1] * m1 - p.M[0] * m2;
    df = (-1 / (l * l)) * (outer(w, t) + outer(t, w));
    df_th = (p.M[0] * m1 + p.M[1] * m2) / l;
  } else {
    df = (1 / (l * l)) * (skew(p.M) * (Mat3::identity() - 2 * outer(t, t)));
    dtorque = (P * p.M) / l;  // P symmetric: M^T P as a column
  }
  // H = -dQ/dx with Q_force = force (rows na), Q_a = -f, Q_b = f, Q_theta = torque, and
  // d/dx_a = -d/de, d/dx_b = d/de
  out.H.add_block(na, 0, dF, 1);
  out.H.add_block(na, 3, dF, -1);
  out.H.add_block(0, 0, df, -1);
  out.H.add_block(0, 3, df, 1);
  out.H.add_block(3, 0, df, 1);
  out.H.add_block(3, 3, df, -1);
  for (int i = 0; i < 3; ++i) {
    out.H(na + i, 6) -= dF_th[i];
    out.H(i, 6) += df_th[i];
    out.H(3 + i, 6) -= df_th[i];
    out.H(6, i) += dtorque[i];
    out.H(6, 3 + i) -= dtorque[i];
  }
}

namespace detail {

/// For a family's build (host): the rod part entry `in` names in `field`; throws InputError
/// naming the field when it has no rod edges (`why` says what needs them).
template <class Model, class Input>
int input_rod_part(const Model& m, const Input& in, const char* field, const std::string& why) {
  const int part = input_part(m, in, field);
  if (m.part_edge_adr[size_t(part) + 1] == m.part_edge_adr[size_t(part)])
    input_error(m, in, field,
                "part '" + m.scene.parts[size_t(part)].name + "' has no rod edges: " + why);
  return part;
}

/// For a family's build (host): the part-local edge (0 .. count - 1) that number `field` of
/// entry `in` names among part `part`'s rod edges (negative from the end; `fallback` when the
/// entry does not give it); throws InputError naming the field when it is not an integer
/// within the part's edges.
template <class Model, class Input>
int input_part_edge(const Model& m, const Input& in, const char* field, Real fallback, int part) {
  const int count = m.part_edge_adr[size_t(part) + 1] - m.part_edge_adr[size_t(part)];
  const Real index = input_number(m, in, field, fallback);
  if (index != Real(long(index)) || index < -count || index >= count)
    input_error(m, in, field,
                "must be an integer in [-" + std::to_string(count) + ", " +
                    std::to_string(count - 1) + "] (part '" + m.scene.parts[size_t(part)].name +
                    "' has " + std::to_string(count) + " edges; negative counts from the end)");
  return index < 0 ? int(index) + count : int(index);
}

}  // namespace detail

/// The wrench family F (families.h): one row per scene entry,
///   ints [n_a, n_b, edge, at, follower, signal], reals [F (3), M (3)],
/// from the scene field forces.wrenches: {"part": rod, "edge": index (negative from the end,
/// default -1), "node": "start" | "end" (of that edge, where the force acts; default "end"),
/// "frame": "world" | "follower" (default "world"), "force": [3], "moment": [3] (default 0;
/// one of them required), "time": s(t)}. A load (not in the reactions), not elastic, symmetric
/// only where every wrench is a world-frame force without a moment (its Jacobian is then 0).
template <int F>
struct RodWrenchBinding {
  using S = RodWrench;
  static constexpr int kDofs = 7;
  static constexpr int kInts = 6, kReals = 6;
  /// not elastic, a load, non-symmetric (see symmetric()), no energy, its grain
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  static constexpr const char* kSceneField = "wrenches";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the rod part the wrench acts on"},
      {"edge", FieldKind::kNumber, false,
       "the part's edge, an integer index (negative from the end); default -1"},
      {"node", FieldKind::kWord, false,
       "\"start\" or \"end\": the edge's node where the force acts; default \"end\""},
      {"frame", FieldKind::kWord, false,
       "\"world\" (fixed) or \"follower\" (components in the edge's m1, m2, t); default world"},
      {"force", FieldKind::kVec3, false, "F [N]; default 0"},
      {"moment", FieldKind::kVec3, false, "M [N m]; default 0"},
      {"time", FieldKind::kTime, false, "s(t): the wrench is (F, M) s(t); default constant 1"},
  };

  /// symmetric (a zero Jacobian) where every row is a world-frame force without a moment
  template <class M>
  static bool symmetric(const M& m) {
    return has_potential(m);
  }
  /// whether E is the loads' potential: where every row is a world-frame force without a
  /// moment (else the line search goes by the residual: families_have_potential)
  template <class M>
  static bool has_potential(const M& m) {
    const FamilyTable& t = m.tables[size_t(F)];
    for (long k = 0; k < t.rows; ++k) {
      const Real* r = t.r.data() + kReals * k;
      if (t.i[size_t(kInts * k + 4)] != 0 || r[3] != 0 || r[4] != 0 || r[5] != 0) return false;
    }
    return true;
  }

  SLENDER_HD static long count(const ModelView& m) { return m.table[F].rows; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    const int* row = m.table[F].i + kInts * k;
    detail::position_dofs<2>(row, out);
    out[6] = 3 * m.nnode + row[2];
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<7>& r) {
    const FamilyTableView& t = m.table[F];
    const int* row = t.i + kInts * k;
    const Real* par = t.r + kReals * k;
    const Real* q = s.q + long(env) * m.ndof;
    Vec<7> x;
    detail::gather_positions<2>(q, row, x);
    x[6] = q[3 * m.nnode + row[2]];
    RodWrench::Params p;
    const Real* d1 = s.edge_d1 + (long(env) * m.nedge + row[2]) * 3;
    const Real sig = s.signal[long(env) * kMaxSignals + row[5]];
    for (int i = 0; i < 3; ++i) {
      p.d1[i] = d1[i];
      p.F[i] = sig * par[i];
      p.M[i] = sig * par[3 + i];
    }
    p.at = row[3];
    p.follower = row[4];
    rod_wrench_eval(x, p, want, r);
  }

  /// The row of one scene entry `in` (a FamilyInput) of model `m` (a Model whose rods are
  /// built); throws InputError naming the entry's field for a part without rod edges, an edge
  /// out of range or not an integer, an unknown node or frame, or neither force nor moment.
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = detail::input_rod_part(m, in, "part", "a wrench acts on a rod's edge");
    const int edge = m.part_edge[size_t(m.part_edge_adr[size_t(part)] +
                                        detail::input_part_edge(m, in, "edge", -1, part))];
    const std::string node = input_word(m, in, "node", "end");
    if (node != "start" && node != "end")
      input_error(m, in, "node", "must be \"start\" or \"end\", not \"" + node + "\"");
    const std::string frame = input_word(m, in, "frame", "world");
    if (frame != "world" && frame != "follower")
      input_error(m, in, "frame", "must be \"world\" or \"follower\", not \"" + frame + "\"");
    if (!in.find_vec3("force") && !in.find_vec3("moment"))
      input_error(m, in, "force", "missing: a wrench needs a force, a moment or both");
    const Vec3 force = input_vec3(m, in, "force", Vec3{{0, 0, 0}});
    const Vec3 moment = input_vec3(m, in, "moment", Vec3{{0, 0, 0}});
    const int signal = input_signal(m, in, "time");
    const int ints[kInts] = {
        m.edge_node[2 * size_t(edge)], m.edge_node[2 * size_t(edge) + 1], edge,
        node == "end" ? 1 : 0,         frame == "follower" ? 1 : 0,       signal};
    const Real reals[kReals] = {force[0], force[1], force[2], moment[0], moment[1], moment[2]};
    table.add(ints, reals);
  }
};

}  // namespace slender
