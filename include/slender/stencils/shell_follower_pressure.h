#pragma once

// A follower pressure on a shell's triangles: the load of a fluid pressing on one side of an
// open sheet (a sail, a membrane held in a flow, a flap), which has no enclosed volume and so no
// potential -p V (stencils/shell_pressure.h is the closed shell's). Each triangle feels
//   F = p A n = (p/2) N,   N = (x1 - x0) x (x2 - x0),   n = N / |N|,  A = |N| / 2,
// at its current positions (the force turns with the sheet), and each of its three nodes gets a
// third: F_a = (p/6) N (the consistent share of a uniform traction on a linear triangle). The
// side: n follows the triangle's node order (counter-clockwise seen from the side n points to);
// p > 0 pushes along n. Local DOFs (9): [x0, x1, x2] [m].
//
// Outputs, for a force without a potential (as the quadratic drag's):
// - g = -F split over the nodes: g_a = -(p/6) N for a = 0, 1, 2;
// - H = dg/dx (9 x 9, not symmetric): with e1 = x1 - x0, e2 = x2 - x0 and [v]x the cross
//   product matrix, dN = -[e2]x de1 + [e1]x de2, so
//     dN/dx0 = [x2 - x1]x,   dN/dx1 = -[e2]x,   dN/dx2 = [e1]x,
//   and dg_a/dx_b = -(p/6) dN/dx_b for every a;
// - E = 0: the load has no potential (its work depends on the path at a free rim).
//
// The pressure follows a time function: p(t) = p s(t), s the field "time" (a signal of the model,
// stencils/family_table.h), 1 when none is given; in static mode, times the load factor.

#include <string>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"

namespace slender {

struct ShellFollowerPressure {
  static constexpr int kNodes = 3;
  static constexpr int kDofs = 9;
  struct Params {
    Real p;  ///< pressure [Pa], > 0 along the triangle's normal
  };
};

/// Negated nodal forces of a follower pressure on one triangle (g) and, on request, their
/// Jacobian (H, not symmetric). E is always 0. A degenerate triangle (N = 0) feels no force, and
/// its H is still exact (N is polynomial in x).
SLENDER_HD inline void shell_follower_pressure_eval(const Vec<9>& x,
                                                    const ShellFollowerPressure::Params& p,
                                                    unsigned want,
                                                    LocalEval<9>& out) {
  out.flags = 0;
  out.E = 0;
  // (the force is cheap: written on every request, so that g is never left unset)
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3), x2 = x.segment<3>(6);
  const Vec3 e1 = x1 - x0, e2 = x2 - x0;
  const Real k = p.p / 6;
  const Vec3 ga = -k * cross(e1, e2);
  for (int a = 0; a < 3; ++a)
    out.g.set_segment(3 * a, ga);
  if (!(want & kHess)) return;
  out.H.set_zero();
  // dN/dx_b = [w_b]x (w_0 = x2 - x1) or -[e2]x, [e1]x: one skew block per column b
  const Vec3 w[3] = {x2 - x1, -e2, e1};
  for (int b = 0; b < 3; ++b) {
    const Real W[3][3] = {{0, -w[b][2], w[b][1]}, {w[b][2], 0, -w[b][0]}, {-w[b][1], w[b][0], 0}};
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          out.H(3 * a + i, 3 * b + j) = -k * W[i][j];
  }
}

/// The follower pressure family F (families.h): one row per triangle of a shell part,
///   ints [n0, n1, n2, signal], reals [p],
/// from the scene field forces.follower_pressure: {"part": shell, "pressure": p [Pa],
/// "time": s(t)}. A load (not in the reactions), not elastic, not symmetric: a model with rows
/// is solved by LU or BiCGSTAB.
template <int F>
struct ShellFollowerPressureBinding {
  using S = ShellFollowerPressure;
  static constexpr int kDofs = 9;
  static constexpr int kInts = 4, kReals = 1;
  /// not elastic, a load, non-symmetric where it has rows, no energy, its grain
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  static constexpr const char* kSceneField = "follower_pressure";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the shell part (open or closed) the pressure acts on"},
      {"pressure", FieldKind::kNumber, true,
       "p [Pa]: > 0 pushes along each triangle's normal (its node order, counter-clockwise)"},
      {"time", FieldKind::kTime, false, "s(t): the pressure is p s(t); default constant 1"},
  };

  SLENDER_HD static long count(const ModelView& m) { return m.table[F].rows; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<3>(m.table[F].i + kInts * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<9>& r) {
    const FamilyTableView& t = m.table[F];
    const int* row = t.i + kInts * k;
    Vec<9> x;
    detail::gather_positions<3>(s.q + long(env) * m.ndof, row, x);
    ShellFollowerPressure::Params p;
    p.p = t.r[kReals * k] * s.signal[long(env) * kMaxSignals + row[3]];
    shell_follower_pressure_eval(x, p, want, r);
  }

  /// The rows of one scene entry `in` (a FamilyInput) of model `m` (a Model whose shells are
  /// built): every triangle of the part; throws InputError naming the entry's field for a
  /// non-finite pressure or a part without triangles.
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = input_part(m, in, "part");
    const Real pressure = input_number(m, in, "pressure", 0);
    const int signal = input_signal(m, in, "time");
    long rows = 0;
    for (int t = 0; t < m.ntri; ++t) {
      if (m.tri_part[t] != part) continue;
      const int ints[kInts] = {m.tri_node[3 * t], m.tri_node[3 * t + 1], m.tri_node[3 * t + 2],
                               signal};
      const Real reals[kReals] = {pressure};
      table.add(ints, reals);
      ++rows;
    }
    if (rows == 0)
      input_error(m, in, "part",
                  "part '" + m.scene.parts[size_t(part)].name +
                      "' has no triangles: a follower pressure acts on a shell");
  }
};

}  // namespace slender
