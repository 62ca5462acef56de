#pragma once

// A pressure inside a closed shell: the load of an inflated chamber (a pneumatic soft actuator,
// a balloon). Its potential is the work of the pressure on the enclosed volume,
//   E = -p V,   V = sum over the triangles of (1/6) (x0 - c) . ((x1 - c) x (x2 - c)),
// each triangle the signed volume of the tetrahedron it spans with a fixed point c (the shell's
// rest centroid; any point gives the same V of a closed surface, a near one the fewest rounding
// errors). One stencil per triangle, local DOFs (9): [x0, x1, x2] [m]. With the triangles
// counter-clockwise about the outward normal, V > 0 and p > 0 pushes outward.
//   dE/dx0 = -(p/6) (x1 - c) x (x2 - c), and cyclically (x0 -> x1 -> x2 -> x0);
//   d2E/dx0 dx1 = (p/6) [x2 - c]x, and cyclically; d2E/dxa dxa = 0.
// At a node whose triangles close around it, the sum of the gradients is -(p/3) times the sum of
// the triangles' area vectors: the follower force of the pressure (the terms in c cancel). At a
// node on an open rim they do not close, so the family asks every rim node to be fixed: an open
// shell under pressure is a membrane held at its rim (build() below checks it).
//
// The pressure follows a time function: p(t) = p s(t), s the field "time" (a signal of the model,
// stencils/family_table.h), 1 when none is given; in static mode, times the load factor.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"

namespace slender {

struct ShellPressure {
  static constexpr int kNodes = 3;
  static constexpr int kDofs = 9;
  struct Params {
    Real p;  ///< pressure [Pa]
    Vec3 c;  ///< the fixed point of the volume [m]
  };
};

/// -p times the signed volume of the tetrahedron (c, x0, x1, x2), its gradient and Hessian.
SLENDER_HD inline void shell_pressure_eval(const Vec<9>& x,
                                           const ShellPressure::Params& p,
                                           unsigned want,
                                           LocalEval<9>& out) {
  out.flags = 0;
  const Vec3 y[3] = {x.segment<3>(0) - p.c, x.segment<3>(3) - p.c, x.segment<3>(6) - p.c};
  const Real k = p.p / 6;
  out.E = -k * dot(y[0], cross(y[1], y[2]));
  if (want & kGrad)
    for (int a = 0; a < 3; ++a)
      out.g.set_segment(3 * a, -k * cross(y[(a + 1) % 3], y[(a + 2) % 3]));
  if (want & kHess) {
    out.H.set_zero();
    // d2E/dx_a dx_b for b = a + 1 (mod 3): k [y_{a+2}]x, and its transpose at (b, a)
    for (int a = 0; a < 3; ++a) {
      const int b = (a + 1) % 3;
      const Vec3& w = y[(a + 2) % 3];
      const Real W[3][3] = {{0, -w[2], w[1]}, {w[2], 0, -w[0]}, {-w[1], w[0], 0}};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          out.H(3 * a + i, 3 * b + j) = k * W[i][j];
          out.H(3 * b + j, 3 * a + i) = k * W[i][j];
        }
    }
  }
}

/// The pressure family F (families.h): one row per pressurized triangle,
///   ints [n0, n1, n2, signal], reals [p, cx, cy, cz],
/// from the scene field forces.pressure: {"part": shell, "pressure": p [Pa], "time": s(t)}.
template <int F>
struct ShellPressureBinding {
  using S = ShellPressure;
  static constexpr int kDofs = 9;
  static constexpr int kInts = 4, kReals = 4;
  /// elastic, in the reactions, symmetric (an energy's Hessian), its energy, its grain
  static constexpr FamilyTraits kTraits{false, false, true, EnergyKind::kLoad,
                                        kParallelGrainMedium};
  static constexpr const char* kSceneField = "pressure";
  static constexpr FamilyField kFields[] = {
      {"part", FieldKind::kPart, true, "the closed shell (or the shell with a fixed rim)"},
      {"pressure", FieldKind::kNumber, true, "p [Pa]: > 0 pushes along the triangles' normals"},
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
    const Real* par = t.r + kReals * k;
    Vec<9> x;
    detail::gather_positions<3>(s.q + long(env) * m.ndof, row, x);
    ShellPressure::Params p;
    p.p = par[0] * s.signal[long(env) * kMaxSignals + row[3]];
    p.c = Vec3{{par[1], par[2], par[3]}};
    shell_pressure_eval(x, p, want, r);
  }

  /// The rows of one scene entry `in` (a FamilyInput) of model `m` (a Model whose shells are
  /// built): every triangle of the part, checked to close (or to end at fixed nodes) and to be
  /// oriented consistently; throws InputError naming the entry's field otherwise.
  template <class Model, class Input>
  static void build(Model& m, const Input& in, FamilyTable& table) {
    const int part = input_part(m, in, "part");
    const Real pressure = input_number(m, in, "pressure", 0);
    const int signal = input_signal(m, in, "time");
    const std::string& name = m.scene.parts[size_t(part)].name;
    std::vector<int> tris;
    for (int t = 0; t < m.ntri; ++t)
      if (m.tri_part[t] == part) tris.push_back(t);
    if (tris.empty())
      input_error(m, in, "part",
                  "part '" + name + "' has no triangles: a pressure acts on a shell");
    // every directed edge once; its reverse from the neighbour, or a rim of fixed nodes
    auto key = [&](int a, int b) { return long(a) * m.nnode + b; };
    std::vector<long> keys;
    for (int t : tris)
      for (int a = 0; a < 3; ++a)
        keys.push_back(key(m.tri_node[3 * t + a], m.tri_node[3 * t + (a + 1) % 3]));
    std::sort(keys.begin(), keys.end());
    auto fixed = [&](int n) {
      return m.dof_fixed[3 * n] && m.dof_fixed[3 * n + 1] && m.dof_fixed[3 * n + 2];
    };
    for (size_t e = 0; e < keys.size(); ++e) {
      const int a = int(keys[e] / m.nnode), b = int(keys[e] % m.nnode);
      if (e + 1 < keys.size() && keys[e + 1] == keys[e])
        input_error(m, in, "part",
                    "the triangles of '" + name + "' are not oriented consistently: two run " +
                        "from node " + std::to_string(a) + " to node " + std::to_string(b));
      const bool closed = std::binary_search(keys.begin(), keys.end(), key(b, a));
      if (!closed && !(fixed(a) && fixed(b)))
        input_error(m, in, "part",
                    "the shell '" + name + "' is open at the edge from node " + std::to_string(a) +
                        " to node " + std::to_string(b) +
                        ", which is not fixed: a pressure needs a closed shell or a fixed rim");
    }
    // the rest centroid of the part's nodes: the volume's fixed point
    Vec3 c{{0, 0, 0}};
    std::vector<int> nodes;
    for (int t : tris)
      for (int a = 0; a < 3; ++a)
        nodes.push_back(m.tri_node[3 * t + a]);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (int n : nodes)
      for (int i = 0; i < 3; ++i)
        c[i] += m.node_x0[3 * size_t(n) + i] / Real(nodes.size());
    for (int t : tris) {
      const int ints[kInts] = {m.tri_node[3 * t], m.tri_node[3 * t + 1], m.tri_node[3 * t + 2],
                               signal};
      const Real reals[kReals] = {pressure, c[0], c[1], c[2]};
      table.add(ints, reals);
    }
  }
};

}  // namespace slender
