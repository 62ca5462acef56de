#pragma once

// The membrane of a shell triangle with the material's Young's modulus E and Poisson ratio nu:
// a constant-strain triangle (CST), whose in-plane stretch is uniform over the triangle.
//
// Kinematics. With the edges e1 = x1 - x0 and e2 = x2 - x0, the triangle's metric is the 2 x 2
// matrix M = [e_a . e_b] (its entries m11 = |e1|^2, m22 = |e2|^2, m12 = e1 . e2), and G that
// of its rest shape (the initial shape). The right Cauchy-Green tensor of the in-plane
// deformation, C = F^T F, has the invariants
//   I = tr C = tr(G^-1 M) = (g22 m11 - 2 g12 m12 + g11 m22) / det G,
//   d = det C = det M / det G = (A / A_bar)^2,
// so the rest shape enters through the three numbers g11, g22, g12 alone (no rest frame), and
// the energy of the triangle is
//   E = h A_bar W(I, d),   A_bar = sqrt(det G) / 2,
// W the energy per volume of a plane-stress law. Two laws:
//
// St Venant-Kirchhoff (a quadratic in the Green strain S_G = (C - 1) / 2; Ciarlet, Mathematical
// Elasticity I, 1988, the St Venant-Kirchhoff material; on cloth triangles Volino,
// Magnenat-Thalmann and Faure, ACM TOG 28(4), 2009): with the shear modulus
// mu = E / (2 (1 + nu)) and the plane-stress Lame constant lambda_ps = E nu / (1 - nu^2) (the
// 3-D law with the normal stress eliminated, exact because it is quadratic),
//   W = mu tr(S_G^2) + lambda_ps / 2 (tr S_G)^2
//     = mu / 4 (I^2 - 2 I + 2 - 2 d) + lambda_ps / 8 (I - 2)^2.
//
// Compressible neo-Hookean in plane stress: the 3-D law
//   W3 = mu / 2 (I1 - 3) - mu ln J + lambda / 2 (ln J)^2,  lambda = E nu / ((1 + nu)(1 - 2 nu)),
// with the thickness stretch lambda3 (s = lambda3^2) chosen so that the normal stress vanishes
// (the plane-stress reduction of a hyperelastic law; Bonet and Wood, Nonlinear Continuum
// Mechanics for Finite Element Analysis, 2nd ed. 2008, hyperelasticity in plane stress).
// With I1 = I + s and ln J = l = ln(d s) / 2, dW3/ds = 0 is mu (s - 1) + lambda l = 0, or with
// a = mu / (mu + lambda / 2) = (1 - 2 nu) / (1 - nu) in [0, 1]:
//   a (s - 1) + (1 - a) ln(d s) = 0,
// one root s(d) (solved by Newton's method in ln s, a convex increasing function of it). Then
//   W = mu / 2 (I + s - 3 - (s + 1) l),
// and, s being stationary, dW/dI = mu / 2, dW/dd = -mu s / (2 d),
//   d2W/dd2 = mu s / (2 d^2) (1 + (1 - a) / (a s + 1 - a)).
// nu = 0.5 (a = 0) is the incompressible membrane s = 1 / d, W = mu / 2 (I + 1 / d - 3); nu = 0
// (a = 1) keeps s = 1. The law needs nu in [0, 0.5].
//
// Both laws linearize to the plane-stress Hooke law of E and nu: a sheet in uniaxial tension
// has the stiffness E h and contracts laterally by nu; a sphere under pressure p grows by
// p r^2 (1 - nu) / (2 E h). (The edge springs, the papers' membrane, have nu = 1/3 on an
// equilateral lattice whatever the material's: host/model/shells.cpp.)
//
// Derivatives: with W(m11, m22, m12) through I and d, the gradient in the edges is
//   dE/de1 = h A_bar (2 W_11 e1 + W_12 e2),  dE/de2 = h A_bar (2 W_22 e2 + W_12 e1)
// (W_ab = dW/dm_ab), and the Hessian h A_bar (sum_kl W_kl n_k n_l^T + sum_k W_k d2m_k), with
// n_k = dm_k/d(e1, e2); dE/dx0 = -(dE/de1 + dE/de2). All exact; E is invariant under rigid
// motions (it depends on the edges' dot products only).
//
// Degenerate triangles: a rest shape without area gives zeros and kDegenerate (the model
// builder rejects such triangles); a triangle squashed to d <= kMembraneMinAreaRatio2 is flagged
// kDegenerate, St Venant-Kirchhoff keeping its exact (finite) values, neo-Hookean taking d at
// that floor (finite, large; its gradient then only through I).
//
// One stencil per triangle, local DOFs (9): [x0, x1, x2], node positions [m], in the triangle's
// node order.

#include <type_traits>

#include "slender/core/types.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/family_table.h"

namespace slender {

/// (A / A_bar)^2 below which a triangle counts as squashed (kDegenerate): area ratio 1e-6
constexpr Real kMembraneMinAreaRatio2 = 1e-12;

struct ShellMembrane {
  static constexpr int kNodes = 3;
  static constexpr int kDofs = 9;
  /// the laws (the values of MembraneModel, scene.h, for the triangles this stencil takes)
  enum Law : int { kStvk = 1, kNeoHookean = 2 };
  struct Params {
    int law;             ///< kStvk or kNeoHookean
    Real E;              ///< Young's modulus [Pa]
    Real nu;             ///< Poisson ratio [-]: (-1, 0.5] (St Venant-Kirchhoff), [0, 0.5]
    Real h;              ///< thickness [m]
    Real g11, g22, g12;  ///< rest metric |e1|^2, |e2|^2, e1 . e2 [m^2]
  };
};

/// the metric m11 = |e1|^2, m22 = |e2|^2, m12 = e1 . e2 of the triangle x = [x0, x1, x2]
SLENDER_HD inline void shell_membrane_metric(const Vec<9>& x, Real& m11, Real& m22, Real& m12) {
  const Vec3 e1 = x.segment<3>(3) - x.segment<3>(0), e2 = x.segment<3>(6) - x.segment<3>(0);
  m11 = dot(e1, e1);
  m22 = dot(e2, e2);
  m12 = dot(e1, e2);
}

/// ln s of the plane-stress thickness stretch s = lambda3^2: the root of
/// a (s - 1) + (1 - a) ln(d s) = 0 (a in [0, 1], d > 0)
SLENDER_HD inline Real shell_membrane_log_thickness_stretch(Real d, Real a) {
  const Real ld = ::log(d);
  // the linearized root, exact for a = 0 (s = 1 / d) and a = 1 (s = 1)
  Real t = -(1 - a) * ld;
  if (a == 0 || a == 1) return t;
  // Newton's method on a convex increasing function of t: after at most one step past the root
  // it approaches it from above, monotonically
  for (int it = 0; it < 100; ++it) {
    const Real es = ::exp(t);
    const Real step = (a * (es - 1) + (1 - a) * (ld + t)) / (a * es + 1 - a);
    t -= step;
    if (!(::fabs(step) > 1e-15 * (1 + ::fabs(t)))) break;
  }
  return t;
}

namespace detail {

/// A law's W(I, d) (with `energy`) and its derivatives W_I, W_d, W_II, W_dd (W_Id = 0 for both
/// laws). A squashed triangle: St Venant-Kirchhoff keeps its exact values, neo-Hookean takes d
/// at the floor kMembraneMinAreaRatio2 (d is set to it) and no longer depends on d.
struct MembraneLaw {
  Real W = 0, WI = 0, Wd = 0, WII = 0, Wdd = 0;
};
SLENDER_HD inline MembraneLaw membrane_law(
    const ShellMembrane::Params& p, Real I, Real& d, bool squashed, bool energy) {
  MembraneLaw w;
  const Real mu = p.E / (2 * (1 + p.nu));
  if (p.law == ShellMembrane::kStvk) {
    const Real lam = p.E * p.nu / (1 - p.nu * p.nu);
    if (energy) w.W = mu / 4 * (I * I - 2 * I + 2 - 2 * d) + lam / 8 * (I - 2) * (I - 2);
    w.WI = mu / 2 * (I - 1) + lam / 4 * (I - 2);
    w.Wd = -mu / 2;
    w.WII = mu / 2 + lam / 4;
    w.Wdd = 0;
  } else {
    if (squashed) d = kMembraneMinAreaRatio2;
    const Real a = (1 - 2 * p.nu) / (1 - p.nu);
    const Real t = shell_membrane_log_thickness_stretch(d, a);
    const Real s = ::exp(t);
    if (energy) {
      const Real l = Real(0.5) * (::log(d) + t);
      w.W = mu / 2 * (I + s - 3 - (s + 1) * l);
    }
    w.WI = mu / 2;
    w.WII = 0;
    // at the floor the energy no longer depends on d
    w.Wd = squashed ? 0 : -mu * s / (2 * d);
    w.Wdd = squashed ? 0 : mu * s / (2 * d * d) * (1 + (1 - a) / (a * s + 1 - a));
  }
  return w;
}

/// The parts of one membrane triangle's Hessian: on the device the Hessian is a call of its own
/// over them and is made entry by entry in rolled loops (the parts in the thread's local
/// memory), each entry the same sum in the same order as the whole 6 x 6 matrix it was once
/// assembled in, so that the host's bits do not change.
struct MembraneParts {
  Real e[6];   // e1, e2
  Real Im[3];  // dI/dm for m = (m11, m22, m12)
  Real dm[3];  // dd/dm
  Real Wm[3];  // dW/dm
  Real WII, Wdd, Wd, D, V;
  Real Wmm[3][3];  // d2W/dm dm
  Real n[3][6];    // dm_k/d(e1, e2): (2 e1, 0), (0, 2 e2), (e2, e1)
};

/// entry (r, c) of the Hessian in (e1, e2): sum_k,j Wmm_kj n_k,r n_j,c, then W_k's share of
/// d2m_k/d(e1, e2)^2 (2 W_11 on (e1, e1), 2 W_22 on (e2, e2), W_12 on (e1, e2), (e2, e1))
SLENDER_HD SLENDER_ENTRY_INLINE Real membrane_hess_entry(const MembraneParts& p, int r, int c) {
  Real h = 0;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      h += p.Wmm[k][j] * p.n[k][r] * p.n[j][c];
  if (r % 3 == c % 3) {
    if (r < 3 && c < 3) h += 2 * p.Wm[0];
    if (r >= 3 && c >= 3) h += 2 * p.Wm[1];
    if (r < 3 && c >= 3) h += p.Wm[2];
    if (r >= 3 && c < 3) h += p.Wm[2];
  }
  return h;
}

/// the triangle's Hessian from its parts; out of line on the device
SLENDER_HD inline SLENDER_OUTLINED_ON_DEVICE void membrane_hess(MembraneParts& p, Mat<9, 9>& H) {
  // d2W/dm_k dm_l: the laws' second derivatives and d2d/dm11 dm22 = 1 / D, d2d/dm12^2 = -2 / D
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      p.Wmm[k][j] = p.WII * p.Im[k] * p.Im[j] + p.Wdd * p.dm[k] * p.dm[j];
  p.Wmm[0][1] += p.Wd / p.D;
  p.Wmm[1][0] += p.Wd / p.D;
  p.Wmm[2][2] += -2 * p.Wd / p.D;
  for (int i = 0; i < 3; ++i) {
    p.n[0][i] = 2 * p.e[i];
    p.n[0][3 + i] = 0;
    p.n[1][i] = 0;
    p.n[1][3 + i] = 2 * p.e[3 + i];
    p.n[2][i] = p.e[3 + i];
    p.n[2][3 + i] = p.e[i];
  }
  // x = (x0, x1, x2) with e1 = x1 - x0, e2 = x2 - x0: H = T He T^T
  SLENDER_ROLL_ON_DEVICE
  for (int i = 0; i < 3; ++i) {
    SLENDER_ROLL_ON_DEVICE
    for (int j = 0; j < 3; ++j) {
      const Real h11 = p.V * membrane_hess_entry(p, i, j);
      const Real h12 = p.V * membrane_hess_entry(p, i, 3 + j);
      const Real h21 = p.V * membrane_hess_entry(p, 3 + i, j);
      const Real h22 = p.V * membrane_hess_entry(p, 3 + i, 3 + j);
      H(3 + i, 3 + j) = h11;
      H(3 + i, 6 + j) = h12;
      H(6 + i, 3 + j) = h21;
      H(6 + i, 6 + j) = h22;
      H(i, 3 + j) = -(h11 + h21);
      H(3 + i, j) = -(h11 + h12);
      H(i, 6 + j) = -(h12 + h22);
      H(6 + i, j) = -(h21 + h22);
      H(i, j) = h11 + h12 + h21 + h22;
    }
  }
}

}  // namespace detail

/// Energy and, on request, gradient and Hessian of one membrane triangle.
SLENDER_HD inline void shell_membrane_eval(const Vec<9>& x,
                                           const ShellMembrane::Params& p,
                                           unsigned want,
                                           LocalEval<9>& out) {
  out.flags = 0;
  const Real D = p.g11 * p.g22 - p.g12 * p.g12;  // det G = (2 A_bar)^2
  if (!(D > 0)) {
    // no rest area: nothing to measure the stretch against
    out.E = 0;
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    return;
  }
  const Vec3 e1 = x.segment<3>(3) - x.segment<3>(0), e2 = x.segment<3>(6) - x.segment<3>(0);
  const Real m11 = dot(e1, e1), m22 = dot(e2, e2), m12 = dot(e1, e2);
  const Real V = p.h * Real(0.5) * ::sqrt(D);  // h A_bar
  const Real I = (p.g22 * m11 - 2 * p.g12 * m12 + p.g11 * m22) / D;
  Real d = (m11 * m22 - m12 * m12) / D;

  // W(I, d) and its derivatives W_I, W_d, W_II, W_dd (W_Id = 0 for both laws)
  const bool squashed = !(d > kMembraneMinAreaRatio2);
  if (squashed) out.flags |= kDegenerate;
  const detail::MembraneLaw law = detail::membrane_law(p, I, d, squashed, true);
  const Real WI = law.WI, Wd = law.Wd, WII = law.WII, Wdd = law.Wdd;
  out.E = V * law.W;
  if (want == kEnergy) return;

  // W_k = dW/dm_k for m = (m11, m22, m12), through dI/dm and dd/dm
  const Real Im[3] = {p.g22 / D, p.g11 / D, -2 * p.g12 / D};
  const Real dm[3] = {m22 / D, m11 / D, -2 * m12 / D};
  Real Wm[3];
  for (int k = 0; k < 3; ++k)
    Wm[k] = WI * Im[k] + Wd * dm[k];
  const Vec3 g1 = V * (2 * Wm[0] * e1 + Wm[2] * e2);
  const Vec3 g2 = V * (2 * Wm[1] * e2 + Wm[2] * e1);
  out.g.set_segment(0, -(g1 + g2));
  out.g.set_segment(3, g1);
  out.g.set_segment(6, g2);
  if (!(want & kHess)) return;

  // the rest from the triangle's parts (detail::MembraneParts), out of line on the device
  detail::MembraneParts mp;
  for (int i = 0; i < 3; ++i) {
    mp.e[i] = e1[i];
    mp.e[3 + i] = e2[i];
  }
  for (int k = 0; k < 3; ++k) {
    mp.Im[k] = Im[k];
    mp.dm[k] = dm[k];
    mp.Wm[k] = Wm[k];
  }
  mp.WII = WII;
  mp.Wdd = Wdd;
  mp.Wd = Wd;
  mp.D = D;
  mp.V = V;
  detail::membrane_hess(mp, out.H);
}

/// The derivative of lambda . g by the rest metric (g11, g22, g12), g the triangle's gradient
/// at x (shell_membrane_eval): the Kelvin-Voigt anchor's share in the adjoint (engine/adjoint.h;
/// a damped triangle's rest metric is its metric at the step's anchor). With l1, l2 lambda's
/// edge parts (lambda_1 - lambda_0, lambda_2 - lambda_0), lambda . g = V sum_k W_k c_k,
/// c = (2 e1 . l1, 2 e2 . l2, e2 . l1 + e1 . l2), and with Im = dD/dg / D, dm = (m22, m11,
/// -2 m12) / D:
///   dV/dg_j = V Im_j / 2,  dI/dg_j = dm_j - I Im_j,  dd/dg_j = -d Im_j,
///   dIm_k/dg_j = (da_kj / D - Im_k Im_j),  ddm_k/dg_j = -dm_k Im_j,
/// da_kj the derivative of (g22, g11, -2 g12)_k by g_j. Exact; zeros for a rest shape without
/// area (as the gradient).
SLENDER_HD inline void shell_membrane_rest_metric_derivative(const Vec<9>& x,
                                                             const ShellMembrane::Params& p,
                                                             const Vec<9>& lambda,
                                                             Real out[3]) {
  out[0] = out[1] = out[2] = 0;
  const Real D = p.g11 * p.g22 - p.g12 * p.g12;
  if (!(D > 0)) return;
  const Vec3 e1 = x.segment<3>(3) - x.segment<3>(0), e2 = x.segment<3>(6) - x.segment<3>(0);
  const Vec3 l1 = lambda.segment<3>(3) - lambda.segment<3>(0),
             l2 = lambda.segment<3>(6) - lambda.segment<3>(0);
  const Real m11 = dot(e1, e1), m22 = dot(e2, e2), m12 = dot(e1, e2);
  const Real V = p.h * Real(0.5) * ::sqrt(D);
  const Real I = (p.g22 * m11 - 2 * p.g12 * m12 + p.g11 * m22) / D;
  Real d = (m11 * m22 - m12 * m12) / D;
  const detail::MembraneLaw law =
      detail::membrane_law(p, I, d, !(d > kMembraneMinAreaRatio2), false);
  const Real WI = law.WI, Wd = law.Wd, WII = law.WII, Wdd = law.Wdd;
  const Real Im[3] = {p.g22 / D, p.g11 / D, -2 * p.g12 / D};
  const Real dm[3] = {m22 / D, m11 / D, -2 * m12 / D};
  const Real c[3] = {2 * dot(e1, l1), 2 * dot(e2, l2), dot(e2, l1) + dot(e1, l2)};
  const Real da[3][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, -2}};
  Real P = 0;
  for (int k = 0; k < 3; ++k)
    P += (WI * Im[k] + Wd * dm[k]) * c[k];
  for (int j = 0; j < 3; ++j) {
    const Real dI = dm[j] - I * Im[j], dd = -d * Im[j];
    Real t = Real(0.5) * Im[j] * P;
    for (int k = 0; k < 3; ++k)
      t += c[k] * (WII * dI * Im[k] + WI * (da[k][j] / D - Im[k] * Im[j]) + Wdd * dd * dm[k] -
                   Wd * dm[k] * Im[j]);
    out[j] = V * t;
  }
}

/// The membrane family F (families.h): one row per triangle of the shell parts whose
/// "membrane" is a constant-strain law (PartSpec::membrane),
///   ints [n0, n1, n2, law], reals [E, nu, h, g11, g22, g12],
/// the law ShellMembrane::Law, the rest metric that of the triangle's initial shape. The rows
/// come from the parts (no scene field of its own: kTableName names the table).
template <int F>
struct ShellMembraneBinding {
  using S = ShellMembrane;
  static constexpr int kFamily = F;
  static constexpr int kDofs = 9;
  static constexpr int kInts = 4, kReals = 6;
  /// elastic, in the reactions, symmetric (an energy's Hessian), its energy, its grain
  static constexpr FamilyTraits kTraits{true, true, true, EnergyKind::kStretch,
                                        kParallelGrainHeavy};
  static constexpr const char* kTableName = "membrane";

  SLENDER_HD static long count(const ModelView& m) { return m.table[F].rows; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<3>(m.table[F].i + kInts * k, out);
  }
  /// the row's parameters
  SLENDER_HD static ShellMembrane::Params params(const ModelView& m, long k) {
    const int* row = m.table[F].i + kInts * k;
    const Real* r = m.table[F].r + kReals * k;
    return ShellMembrane::Params{row[3], r[0], r[1], r[2], r[3], r[4], r[5]};
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<9>& r) {
    Vec<9> x;
    detail::gather_positions<3>(s.q + long(env) * m.ndof, m.table[F].i + kInts * k, x);
    shell_membrane_eval(x, params(m, k), want, r);
  }

  /// The rows of model `m` (a Model whose shells are built): every triangle of a part whose
  /// membrane is a constant-strain law, in triangle order, its rest metric from the initial
  /// positions.
  template <class Model>
  static void build(const Model& m, FamilyTable& table) {
    for (int t = 0; t < m.ntri; ++t) {
      const auto& part = m.scene.parts[size_t(m.tri_part[t])];
      const int law = int(part.membrane);
      if (law != ShellMembrane::kStvk && law != ShellMembrane::kNeoHookean) continue;
      const auto& mat = m.scene.materials[size_t(part.material)];
      Vec<9> x;
      for (int a = 0; a < 3; ++a)
        for (int i = 0; i < 3; ++i)
          x[3 * a + i] = m.node_x0[3 * size_t(m.tri_node[3 * t + a]) + i];
      Real g11, g22, g12;
      shell_membrane_metric(x, g11, g22, g12);
      const int ints[kInts] = {m.tri_node[3 * t], m.tri_node[3 * t + 1], m.tri_node[3 * t + 2],
                               law};
      const Real reals[kReals] = {
          mat.youngs_modulus, mat.poisson_ratio, part.thickness, g11, g22, g12};
      table.add(ints, reals);
    }
  }
};

/// whether binding B is the membrane's (its Kelvin-Voigt anchors are rest metrics)
template <class B>
struct IsShellMembraneBinding : std::false_type {};
template <int F>
struct IsShellMembraneBinding<ShellMembraneBinding<F>> : std::true_type {};

}  // namespace slender
