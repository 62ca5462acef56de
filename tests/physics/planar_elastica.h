#pragma once

// The planar, extensible elastica of a rod built in at one end, with a natural curvature that is
// constant by pieces, under its own weight and a dead force at its free end: the reference of the
// seeds' natural-curvature robots (MAT-DiSMech's PneuNet, DisMech's two-limb manipulator).
//
// The rod lies in the x-z plane, from its clamp at arclength s0 (position (x0, 0), tangent +x) to
// its tip at L (arclengths of the unstretched rod). theta(s) is its angle from +x towards +z,
// m(s) = EI (theta' - k(s)) its bending moment, N(s) = (Fx, Fz - w (L - s)) the force that the
// part beyond s carries (the tip force and the weight w per length of that part, along -z), and
// the tangential strain is eps = (N . t) / EA:
//   theta' = k(s) + m / EI,  m' = -(cos(theta) N_z - sin(theta) N_x),
//   x' = (1 + eps) cos(theta),  z' = (1 + eps) sin(theta),
// with theta(s0) = 0 and m(L) = 0, shot from the clamp on m(s0) (Newton on central differences,
// the loads raised in steps from the natural shape; RK4 with `steps` steps, the pieces' ends on
// the grid when they fall on it).

#include <cmath>
#include <vector>

#include "slender/core/types.h"

namespace slender::test {

struct ElasticaPiece {
  Real s_begin, s_end, kappa;  // natural curvature kappa [1/m] on [s_begin, s_end)
};

struct PlanarElastica {
  Real L = 1, s0 = 0, x0 = 0;        // tip arclength, clamp arclength and position [m]
  Real EI = 1, EA = 0;               // EA = 0: inextensible
  Real w = 0, Fx = 0, Fz = 0;        // weight per length [N/m], tip force [N]
  std::vector<ElasticaPiece> kappa;  // natural curvature by pieces (0 elsewhere)
  int steps = 20000;

  struct Point {
    Real x, z, theta;
  };

  Real natural(Real s) const {
    for (const ElasticaPiece& p : kappa)
      if (s >= p.s_begin && s < p.s_end) return p.kappa;
    return 0;
  }

  // the state (theta, m, x, z) at every step's end, from m(s0) = m0
  std::vector<Point> shoot(Real m0, Real* m_tip = nullptr) const {
    const Real h = (L - s0) / steps;
    auto f = [&](Real s, Real ks, const Real* y, Real* d) {
      const Real c = std::cos(y[0]), sn = std::sin(y[0]);
      const Real nx = Fx, nz = Fz - w * (L - s);
      const Real eps = EA > 0 ? (c * nx + sn * nz) / EA : 0;
      d[0] = ks + y[1] / EI;
      d[1] = -(c * nz - sn * nx);
      d[2] = (1 + eps) * c;
      d[3] = (1 + eps) * sn;
    };
    Real y[4] = {0, m0, x0, 0};
    std::vector<Point> out;
    out.push_back({y[2], y[3], y[0]});
    for (int i = 0; i < steps; ++i) {
      const Real s = s0 + i * h;
      const Real ks = natural(s + h / 2);  // the step's piece (pieces end on the grid)
      Real k[4][4], t[4];
      f(s, ks, y, k[0]);
      for (int j = 0; j < 4; ++j)
        t[j] = y[j] + h / 2 * k[0][j];
      f(s + h / 2, ks, t, k[1]);
      for (int j = 0; j < 4; ++j)
        t[j] = y[j] + h / 2 * k[1][j];
      f(s + h / 2, ks, t, k[2]);
      for (int j = 0; j < 4; ++j)
        t[j] = y[j] + h * k[2][j];
      f(s + h, ks, t, k[3]);
      for (int j = 0; j < 4; ++j)
        y[j] += h / 6 * (k[0][j] + 2 * k[1][j] + 2 * k[2][j] + k[3][j]);
      out.push_back({y[2], y[3], y[0]});
    }
    if (m_tip) *m_tip = y[1];
    return out;
  }

  // the equilibrium: the points at s0 + i (L - s0) / steps, i = 0..steps. The natural
  // curvature and the loads are raised together from zero (the straight rod, m = 0) in
  // `load_steps` equal steps, each a Newton solve on m(s0) from the last: the branch the scenes'
  // ramps follow (a rod curled first and pulled after may have another: a loop).
  std::vector<Point> solve(int load_steps = 10) const {
    PlanarElastica e = *this;
    Real m0 = 0;
    for (int j = 1; j <= load_steps; ++j) {
      const Real f = Real(j) / load_steps;
      e.w = w * f, e.Fx = Fx * f, e.Fz = Fz * f;
      for (size_t p = 0; p < kappa.size(); ++p)
        e.kappa[p].kappa = kappa[p].kappa * f;
      auto r = [&](Real x) {
        Real mt = 0;
        e.shoot(x, &mt);
        return mt;
      };
      Real res = r(m0);
      for (int it = 0; it < 50 && std::fabs(res) > 1e-12 * EI; ++it) {
        const Real d = 1e-7 * (EI + std::fabs(m0));
        const Real slope = (r(m0 + d) - r(m0 - d)) / (2 * d);
        Real step = -res / slope, next = m0 + step, rn = r(next);
        for (int k = 0; k < 40 && !(std::fabs(rn) < std::fabs(res)); ++k) {  // halve until |m(L)|
          step /= 2;                                                         // falls
          next = m0 + step;
          rn = r(next);
        }
        if (!(std::fabs(rn) < std::fabs(res))) break;  // at the round-off floor
        m0 = next;
        res = rn;
      }
    }
    return e.shoot(m0);
  }

  // Under a strong tip force the bending layer sqrt(EI / F) is far shorter than the rod, m(L)
  // swings over a window of m(s0) e^(L / layer) times narrower than its range, and several
  // branches (loops) are roots: sample m(s0) over [lo, hi] in `samples` points, bisect every
  // change of sign of m(L), and keep the root whose tip angle is nearest `tip_angle`.
  std::vector<Point> solve_bracketed(Real lo, Real hi, int samples, Real tip_angle) const {
    auto r = [&](Real x) {
      Real mt = 0;
      shoot(x, &mt);
      return mt;
    };
    Real best = 0, best_gap = 1e300, a = lo, fa = r(lo);
    for (int i = 1; i <= samples; ++i) {
      const Real b = lo + (hi - lo) * i / samples, fb = r(b);
      if ((fa > 0) != (fb > 0)) {
        Real x0 = a, x1 = b, f0 = fa;
        for (int it = 0; it < 60; ++it) {
          const Real c = (x0 + x1) / 2, fc = r(c);
          if ((fc > 0) == (f0 > 0))
            x0 = c, f0 = fc;
          else
            x1 = c;
        }
        const Real gap = std::fabs(shoot(x0).back().theta - tip_angle);
        if (gap < best_gap) best_gap = gap, best = x0;
      }
      a = b, fa = fb;
    }
    return shoot(best);
  }
};

}  // namespace slender::test
