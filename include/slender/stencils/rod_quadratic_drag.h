#pragma once

// Quadratic (form) drag on one rod edge: the pressure drag of a cylinder of diameter d moving
// across a fluid of density rho_f at high Reynolds number, with the drag coefficient C_d of a
// cylinder in cross flow (about 1.2). The flow along the axis (skin friction) is left out:
// per unit length the force is
//   f = -1/2 rho_f C_d d |v_perp| v_perp,   v_perp = P v,   P = I - t t^T,
// with v the edge's velocity relative to the (still) fluid and t its unit tangent. An edge of
// rest length l_bar feels F = l_bar f; here v = (u0 + u1) / 2 is the mean of its node
// velocities, t = (x1 - x0) / l the current tangent, and each node receives F / 2. With
// C = 1/2 rho_f C_d d l_bar (the row's one parameter) and the integrator's velocity map
//   u_a = u_hat_a + c_u (x_a - q_hat_a),   dv/dx_b = c_u / 2 I,
// Local DOFs (6): [x0, x1], current node positions [m].
//
// Outputs, for a force without a potential (as the RFT and shell drag stencils):
// - g = -F split over the nodes (6 entries): g_a = C / 2 s w_p, w_p = P v, s = |w_p|;
// - H = dg/dx (6 x 6, not symmetric): d(s w_p) = A d(w_p) with A = s I + w_p w_p^T / s (0 at
//   s = 0, where s w_p is differentiable with zero derivative), and
//   d(w_p)/dx_b = c_u / 2 P - s_b / l (w P + t w_p^T),  w = v . t,  s_0 = -1, s_1 = +1
//   (dt/dx_b = s_b P / l), so dg_a/dx_b = C / 2 A d(w_p)/dx_b for both a;
// - E = 0: dissipative.
//
// The family (registered in families.h) keeps a table of one row per edge of the rod parts
// its scene entries name: forces.quadratic_drag {"part", "fluid_density", "drag_coefficient",
// "diameter"}.

#include <string>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"

namespace slender {

struct RodQuadraticDrag {
  static constexpr int kNodes = 2;
  static constexpr int kDofs = 6;
  struct Params {
    Vec3 u_hat[2];  ///< velocity offsets of the integrator, per node [m/s]
    Vec3 q_hat[2];  ///< position offsets of the integrator, per node [m]
    Real c_u;       ///< du/dx of the integrator [1/s]
    Real C;         ///< 1/2 rho_f C_d d l_bar [kg/m]
  };
};

/// Negated drag forces (g) and, on request, their Jacobian (H, not symmetric) of one edge. E is
/// always 0. A zero-length edge (no tangent) gets zero g and H and the kDegenerate flag.
SLENDER_HD inline void rod_quadratic_drag_eval(const Vec<6>& x,
                                               const RodQuadraticDrag::Params& p,
                                               unsigned want,
                                               LocalEval<6>& out) {
  out.flags = 0;
  out.E = 0;
  if (want == kEnergy) return;
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3);
  const Vec3 e = x1 - x0;
  const Real l = norm(e);
  if (!(l > 0)) {
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  const Vec3 t = e / l;
  const Vec3 u0 = p.u_hat[0] + p.c_u * (x0 - p.q_hat[0]);
  const Vec3 u1 = p.u_hat[1] + p.c_u * (x1 - p.q_hat[1]);
  const Vec3 v = 0.5 * (u0 + u1);
  const Real w = dot(v, t);
  const Vec3 wp = v - w * t;
  const Real s = norm(wp), h = 0.5 * p.C;
  const Vec3 ga = (h * s) * wp;
  out.g.set_segment(0, ga);
  out.g.set_segment(3, ga);
  if (!(want & kHess)) return;
  out.H.set_zero();
  if (!(s > 0)) return;  // s w_p has zero derivative where w_p = 0
  const Mat3 P = Mat3::identity() - outer(t, t);
  const Mat3 A = s * Mat3::identity() + (1 / s) * outer(wp, wp);
  for (int b = 0; b < 2; ++b) {
    const Real sb = b == 0 ? -1 : 1;
    Mat3 D = (0.5 * p.c_u) * P;
    D += (-sb * w / l) * P;
    D += (-sb / l) * outer(t, wp);
    const Mat3 AD = A * D;
    for (int a = 0; a < 2; ++a)
      out.H.add_block(3 * a, 3 * b, AD, h);
  }
}

/// The quadratic drag family F (families.h): one row per edge of a rod part,
///   ints [n0, n1], reals [C = 1/2 rho_f C_d d l_bar],
/// from the scene field forces.quadratic_drag: {"part": rod, "fluid_density": rho_f,
/// "drag_coefficient": C_d, "diameter": d}. A load (not in the reactions), not elastic, not
/// symmetric (a force without a potential): a model with rows is solved by LU or BiCGSTAB.
template <int F>
struct RodQuadraticDragBinding {
  using S = RodQuadraticDrag;
  static constexpr int kDofs = 6;
  static constexpr int kInts = 2, kReals = 1;
  /// not elastic, a load, non-symmetric where it has rows, no energy, its grain
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  static constexpr const char* kSceneField = "quadratic_drag";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the rod part the fluid drags"},
      {"fluid_density", FieldKind::kNumber, true, "rho_f [kg/m^3], 0 or more"},
      {"drag_coefficient", FieldKind::kNumber, true, "C_d [-] of the cross flow, 0 or more"},
      {"diameter", FieldKind::kNumber, true, "d [m], the width the flow meets, 0 or more"},
  };

  SLENDER_HD static long count(const ModelView& m) { return m.table[F].rows; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<2>(m.table[F].i + kInts * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<6>& r) {
    const FamilyTableView& t = m.table[F];
    const int* row = t.i + kInts * k;
    const long base = long(env) * m.ndof;
    Vec<6> x;
    RodQuadraticDrag::Params p;
    detail::gather_moving_nodes<2>(s, base, row, x, p);
    p.C = t.r[kReals * k];
    rod_quadratic_drag_eval(x, p, want, r);
  }

  /// The rows of one scene entry `in` (a FamilyInput) of model `m` (a Model whose rods are
  /// built): every edge of the part with stretching stiffness (a rod-shell joint's edges have
  /// none); throws InputError naming the entry's field for a negative number or a part
  /// without rod edges.
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = input_part(m, in, "part");
    const char* numbers[] = {"fluid_density", "drag_coefficient", "diameter"};
    Real v[3];
    for (int i = 0; i < 3; ++i) {
      v[i] = input_number(m, in, numbers[i], 0);
      if (v[i] < 0) input_error(m, in, numbers[i], "must be 0 or more");
    }
    const Real c = 0.5 * v[0] * v[1] * v[2];
    long rows = 0;
    for (int e = 0; e < m.nedge; ++e) {
      if (m.edge_part[size_t(e)] != part || !(m.edge_EA[size_t(e)] > 0)) continue;
      const int ints[kInts] = {m.edge_node[2 * size_t(e)], m.edge_node[2 * size_t(e) + 1]};
      const Real reals[kReals] = {c * m.edge_l_bar[size_t(e)]};
      table.add(ints, reals);
      ++rows;
    }
    if (rows == 0)
      input_error(m, in, "part",
                  "part '" + m.scene.parts[size_t(part)].name +
                      "' has no rod edges: quadratic drag acts on a rod");
  }
};

}  // namespace slender
