#pragma once

// Jet thrust of a swimming bell (Py-DiSMech, seed 001, §VI: the jellyfish's thrust along +z is
// proportional to the water its bell displaces as it contracts). A bell expels water as its
// volume shrinks; the reaction pushes it the other way. Here each triangle of the bell spans,
// with a reference node r of the same body (the bell's apex), the tetrahedron of signed volume
//   V = 1/6 y0 . (y1 x y2),   y_a = x_a - r   (a = 0, 1, 2),
// whose sum over the bell is the volume between the bell and the cone from r to its rim: a
// volume of the body's own shape, unchanged by a rigid motion of it (r moves with it), so that
// a bell that swims or turns without deforming expels nothing. Its rate, with the node
// velocities u (w_a = u_a - u_r, relative to r), is
//   dV/dt = 1/6 (w0 . (y1 x y2) + w1 . (y2 x y0) + w2 . (y0 x y1)),
// and a triangle whose wedge shrinks (dV/dt < 0) expels Q = -dV/dt [m^3/s] and feels the
// thrust k Q along the unit direction e, a third on each of its three nodes:
//   F_a = (k / 3) max(0, -dV/dt) e   (a = 0, 1, 2),   F_r = 0.
// k [N s/m^3] is the thrust per expelled volume rate (a jet's momentum flux rho_f Q U_j is
// k = rho_f U_j for a jet speed U_j). A wedge that grows (the bell refilling) draws water in
// from all around its rim and gives no thrust: max(0, .), as Py-DiSMech's thrust acts only
// while the volume falls (it sums the whole bell's volume about the world origin, which a
// moving open bell changes; the wedges about r do not). The total over a bell that contracts
// everywhere is k (-dV_bell/dt) e.
//
// Local DOFs (12): [x0, x1, x2, r], current node positions [m]; the velocities come from the
// integrator's map u = u_hat + c_u (x - q_hat), so du_b/dx_b = c_u I. Outputs of a force
// without a potential (as the drag stencils): g = -F; H = dg/dx (12 x 12, not symmetric):
//   dg_a/dx_b = (k / 3) e (d(dV/dt)/dx_b)^T   for a = 0, 1, 2 where dV/dt < 0, else 0,
//   d(dV/dt)/dx_b = D_b + c_u G_b (b = 0, 1, 2),   d(dV/dt)/dr = -sum_b (D_b + c_u G_b),
//   G_b = d(dV/dt)/dw_b = 1/6 y_{b+1} x y_{b+2},   D_b = d(dV/dt)/dy_b
//       = 1/6 (w_{b+1} x y_{b+2} + y_{b+1} x w_{b+2})   (indices mod 3);
// E = 0. At dV/dt = 0 the force has a kink (its one-sided derivatives 0 and the above): H is the
// derivative of the side dV/dt < 0 takes.
//
// The family (registered in families.h) keeps one row per triangle of the shell part its scene
// entry names: forces.thrust {"part", "coefficient", "direction", "reference_node"}.

#include <string>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"

namespace slender {

struct ShellThrust {
  static constexpr int kNodes = 4;
  static constexpr int kDofs = 12;
  struct Params {
    Vec3 u_hat[4];  ///< velocity offsets of the integrator, per node [m/s]
    Vec3 q_hat[4];  ///< position offsets of the integrator, per node [m]
    Real c_u;       ///< du/dx of the integrator [1/s]
    Real c;         ///< k / 3: the thrust on each node per expelled volume rate [N s/m^3]
    Vec3 e;         ///< the thrust's unit direction
  };
};

/// The rate of change dV/dt [m^3/s] of the wedge (r, x0, x1, x2) at the local DOFs x with the
/// integrator's velocities of p; y[a] = x_a - r and w[a] = u_a - u_r, which the Jacobian uses too.
SLENDER_HD inline Real shell_thrust_volume_rate(const Vec<12>& x,
                                                const ShellThrust::Params& p,
                                                Vec3 (&y)[3],
                                                Vec3 (&w)[3]) {
  const Vec3 r = x.segment<3>(9);
  const Vec3 ur = p.u_hat[3] + p.c_u * (r - p.q_hat[3]);
  for (int a = 0; a < 3; ++a) {
    const Vec3 xa = x.segment<3>(3 * a);
    y[a] = xa - r;
    w[a] = p.u_hat[a] + p.c_u * (xa - p.q_hat[a]) - ur;
  }
  return (dot(w[0], cross(y[1], y[2])) + dot(w[1], cross(y[2], y[0])) +
          dot(w[2], cross(y[0], y[1]))) /
         6;
}

/// The same rate alone.
SLENDER_HD inline Real shell_thrust_volume_rate(const Vec<12>& x, const ShellThrust::Params& p) {
  Vec3 y[3], w[3];
  return shell_thrust_volume_rate(x, p, y, w);
}

/// Negated thrust forces (g) and, on request, their Jacobian (H, not symmetric) of one bell
/// triangle with its reference node. E is always 0.
SLENDER_HD inline void shell_thrust_eval(const Vec<12>& x,
                                         const ShellThrust::Params& p,
                                         unsigned want,
                                         LocalEval<12>& out) {
  out.flags = 0;
  out.E = 0;
  if (want == kEnergy) return;
  Vec3 y[3], w[3];
  const Real rate = shell_thrust_volume_rate(x, p, y, w);
  out.g.set_zero();
  if (want & kHess) out.H.set_zero();
  if (!(rate < 0)) return;  // a growing (or still) wedge expels nothing
  // g_a = -F_a = (k / 3) (dV/dt) e on the triangle's nodes
  const Vec3 ga = (p.c * rate) * p.e;
  for (int a = 0; a < 3; ++a)
    out.g.set_segment(3 * a, ga);
  if (!(want & kHess)) return;
  // d(dV/dt)/dx_b for the triangle's nodes, and for r minus their sum
  Vec3 dr = Vec3::zero();
  for (int b = 0; b < 3; ++b) {
    const int b1 = (b + 1) % 3, b2 = (b + 2) % 3;
    const Vec3 d = (cross(w[b1], y[b2]) + cross(y[b1], w[b2]) + p.c_u * cross(y[b1], y[b2])) / 6;
    dr -= d;
    const Mat3 K = outer(p.e, d);
    for (int a = 0; a < 3; ++a)
      out.H.add_block(3 * a, 3 * b, K, p.c);
  }
  const Mat3 Kr = outer(p.e, dr);
  for (int a = 0; a < 3; ++a)
    out.H.add_block(3 * a, 9, Kr, p.c);
}

/// The thrust family F (families.h): one row per triangle of a shell part,
///   ints [n0, n1, n2, r], reals [k / 3, ex, ey, ez],
/// from the scene field forces.thrust: {"part": shell, "coefficient": k, "direction": e,
/// "reference_node": part-local index of r (default: the part's node furthest along e)}. A
/// load (not in the reactions), not elastic, not symmetric, without a potential (it does work
/// on the body: the line search measures the residual).
template <int F>
struct ShellThrustBinding {
  using S = ShellThrust;
  static constexpr int kDofs = 12;
  static constexpr int kInts = 4, kReals = 4;
  /// not elastic, a load, non-symmetric where it has rows, no energy, its grain
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  static constexpr const char* kSceneField = "thrust";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the shell part (the bell) whose contraction propels it"},
      {"coefficient", FieldKind::kNumber, true,
       "k [N s/m^3]: the thrust per expelled volume rate, 0 or more"},
      {"direction", FieldKind::kVec3, true, "e: the direction of the thrust (not zero)"},
      {"reference_node", FieldKind::kNumber, false,
       "the part-local index of the node r the wedges share (default: the part's node "
       "furthest along the direction, the apex of a bell)"},
  };

  SLENDER_HD static long count(const ModelView& m) { return m.table[F].rows; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<4>(m.table[F].i + kInts * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<12>& r) {
    const FamilyTableView& t = m.table[F];
    const int* row = t.i + kInts * k;
    const Real* re = t.r + kReals * k;
    const long base = long(env) * m.ndof;
    Vec<12> x;
    ShellThrust::Params p;
    detail::gather_moving_nodes<4>(s, base, row, x, p);
    p.c = re[0];
    p.e = Vec3{{re[1], re[2], re[3]}};
    shell_thrust_eval(x, p, want, r);
  }

  /// the line search measures the residual where the family has rows: the thrust does work
  /// on the body and has no potential
  template <class M>
  static bool has_potential(const M& m) {
    return m.tables[size_t(F)].rows == 0;
  }

  /// The rows of one scene entry `in` (a FamilyInput) of model `m` (a Model whose shells are
  /// built): every triangle of the part with the reference node, oriented so that the bell's
  /// wedges have a positive volume at rest; throws InputError naming the entry's field for a
  /// negative coefficient, a zero direction, a reference node out of range, a part without
  /// triangles or one that encloses no volume with its reference node (a flat sheet).
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = input_part(m, in, "part");
    const Real k = input_number(m, in, "coefficient", 0);
    if (!(k >= 0)) input_error(m, in, "coefficient", "must be 0 or more");
    const Vec3 d = input_vec3(m, in, "direction", Vec3::zero());
    const Real dn = norm(d);
    if (!(dn > 0)) input_error(m, in, "direction", "must not be zero");
    const Vec3 e = d / dn;
    auto x0 = [&](int n) {
      return Vec3{
          {m.node_x0[3 * size_t(n)], m.node_x0[3 * size_t(n) + 1], m.node_x0[3 * size_t(n) + 2]}};
    };
    // the part's nodes: the reference node given, or the one furthest along e
    const int first = m.part_node_adr[size_t(part)];
    const int count = m.part_node_adr[size_t(part) + 1] - first;
    int ref = -1;
    const std::string& name = m.scene.parts[size_t(part)].name;
    if (const Real* given = in.find_number("reference_node")) {
      const Real v = *given;
      if (!(v >= 0 && v < count && v == Real(long(v))))
        input_error(
            m, in, "reference_node",
            "must be a node index of part '" + name + "' (0 to " + std::to_string(count - 1) + ")");
      ref = m.part_node[size_t(first + long(v))];
    } else {
      for (int i = 0; i < count; ++i) {
        const int n = m.part_node[size_t(first + i)];
        if (ref < 0 || dot(x0(n), e) > dot(x0(ref), e)) ref = n;
      }
    }
    // the rest volume of the wedges, to orient them
    Real volume = 0, extent = 0;
    long rows = 0;
    for (int t = 0; t < m.ntri; ++t) {
      if (m.tri_part[t] != part) continue;
      const Vec3 y0 = x0(m.tri_node[3 * t]) - x0(ref), y1 = x0(m.tri_node[3 * t + 1]) - x0(ref),
                 y2 = x0(m.tri_node[3 * t + 2]) - x0(ref);
      volume += dot(y0, cross(y1, y2)) / 6;
      extent = fmax(extent, fmax(norm(y0), fmax(norm(y1), norm(y2))));
      ++rows;
    }
    if (rows == 0)
      input_error(m, in, "part",
                  "part '" + name + "' has no triangles: thrust acts on a shell (a bell)");
    if (!(::fabs(volume) > 1e-9 * extent * extent * extent))
      input_error(m, in, "part",
                  "part '" + name +
                      "' encloses no volume with its reference node (a flat sheet): thrust "
                      "needs a bell, a cup or a closed shell");
    const bool flip = volume < 0;
    for (int t = 0; t < m.ntri; ++t) {
      if (m.tri_part[t] != part) continue;
      const int a = m.tri_node[3 * t], b = m.tri_node[3 * t + 1], c = m.tri_node[3 * t + 2];
      const int ints[kInts] = {a, flip ? c : b, flip ? b : c, ref};
      const Real reals[kReals] = {k / 3, e[0], e[1], e[2]};
      table.add(ints, reals);
    }
  }
};

}  // namespace slender
