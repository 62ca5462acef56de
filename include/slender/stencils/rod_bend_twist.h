#pragma once

// seed 000, eqs. (11)-(16): bending and twisting of one bend-twist spring of a discrete elastic
// rod, two edges e0 = x1 - x0 (into the centre node x1) and e1 = x2 - x1 (out of it):
//   (kappa b) = 2 e0 x e1 / (|e0| |e1| + e0 . e1)                       curvature binormal
//   kappa1 = 1/2 (m2^0 + m2^1) . (kappa b),  kappa2 = -1/2 (m1^0 + m1^1) . (kappa b)
//   tau = theta1 - theta0 + m_ref                                       twist
//   E = 1/2 EI1/dl (kappa1 - kappa1_bar)^2 + 1/2 EI2/dl (kappa2 - kappa2_bar)^2
//     + 1/2 GJ/dl (tau - tau_bar)^2
// Local DOFs (11): [x0, x1, x2, theta0, theta1]. Joint edges stored the other way round enter
// with their tangent, director d1 and theta negated (seed 000 §3.2); the binding does that.
//
// The curvature averages the two edges' material frames, which presumes they are nearly
// aligned after parallel transport (small twist). Along a rod the initial reference frames are
// transported edge to edge, so they are; at a joint of three or more edges some pairs start
// with frames turned against each other by a holonomy angle (up to pi), which would shrink the
// averaged directors and with them the pair's bending stiffness, by an amount that depends on
// the order in which frames were propagated. Each stencil therefore carries a constant frame
// offset (the initial reference twist, zero along a plain rod) by which edge 1's material frame
// is turned back when the curvature is measured; the twist term is unchanged.
//
// The reference directors in Params are those of the configuration being evaluated: normal to
// the current tangents, obtained by time-parallel transport. The gradient and Hessian returned
// are the exact derivatives of the energy whose frames follow the DOFs by parallel transport
// from that configuration (frames are carried along straight lines in edge space):
// - kappa: along such a path d(m)/ds = -t (m . dt/ds), and kappa b stays normal to both
//   tangents, so d(kappa b . m)/ds = d(kappa b)/ds . m; differentiating once more gives the
//   extra term (kappa b (x) m + m (x) kappa b) / (2 l^2) in each edge's own block;
// - twist: the reference twist changes by the one-form kappa b . (de0 / 2 l0 + de1 / 2 l1),
//   so its Hessian is the symmetric part of that form's Jacobian.

#include "slender/core/types.h"
#include "slender/stencils/rod_frames.h"

namespace slender {

struct RodBendTwist {
  static constexpr int kNodes = 3;
  static constexpr int kDofs = 11;
  struct Params {
    Vec3 d1_0;       ///< reference director of e0 at this configuration (unit, normal to e0)
    Vec3 d1_1;       ///< reference director of e1
    Real ref_twist;  ///< reference twist m_ref at this configuration [rad]
    Real EI1, EI2;   ///< bending stiffnesses [N m^2]
    Real GJ;         ///< torsional stiffness [N m^2]
    Real dl;         ///< Voronoi length (l_bar0 + l_bar1) / 2 [m]
    Real kappa1_bar, kappa2_bar;  ///< natural curvatures [-]
    Real tau_bar;                 ///< natural twist [rad]
    Real frame_offset;            ///< edge 1's frame is turned back by this for curvature [rad]
    /// 1: only the x-z block of the Hessian is wanted (the 2D mode holds every y and twist DOF),
    /// so where both edges lie in a plane y = const the Hessian is the planar one and zero in
    /// the rows and columns of y and the twists (see rod_bend_twist_eval_with)
    int in_plane = 0;
  };
  struct Strains {
    Real kappa1, kappa2, tau;
  };
};

/// An energy of one bend-twist stencil as a function of its strains s = (kappa1, kappa2, tau):
/// E, dE/ds and (symmetric) d2E/ds2. rod_bend_twist_eval_with chains it with the strains'
/// derivatives; an energy functor fills it from (Params, Strains, want).
struct StrainEnergyEval {
  Real E = 0;
  Real dE[3] = {0, 0, 0};
  Real d2E[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
};

/// The discrete elastic rod's energy (seed 000, eq. (16)): 1/2 EI1/dl (kappa1 - kappa1_bar)^2
/// + 1/2 EI2/dl (kappa2 - kappa2_bar)^2 + 1/2 GJ/dl (tau - tau_bar)^2
struct RodElasticStrainEnergy {
  /// a function of s - s_bar alone (the adjoint differentiates it by the natural strains:
  /// stencils/user_energy.h, StrainDifferenceSensitivity)
  static constexpr bool kOfStrainDifferences = true;
  SLENDER_HD void operator()(const RodBendTwist::Params& p,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    const Real k1 = p.EI1 / p.dl, k2 = p.EI2 / p.dl, kt = p.GJ / p.dl;
    const Real d1 = s.kappa1 - p.kappa1_bar, d2 = s.kappa2 - p.kappa2_bar, dt = s.tau - p.tau_bar;
    out.E = Real(0.5) * (k1 * d1 * d1 + k2 * d2 * d2 + kt * dt * dt);
    out.dE[0] = k1 * d1;
    out.dE[1] = k2 * d2;
    out.dE[2] = kt * dt;
    out.d2E[0][0] = k1;
    out.d2E[1][1] = k2;
    out.d2E[2][2] = kt;
  }
};

/// The sensitivity of the elastic rod's forces to its natural strains (the adjoint's mixed
/// derivative, engine/adjoint.h): as an "energy" of the strains, -k_c s_c for the strain c
/// (0: kappa1, 1: kappa2, 2: tau; k_c = EI1/dl, EI2/dl, GJ/dl), whose gradient by
/// rod_bend_twist_eval_with is d(grad E)/d(s_c bar) = -k_c grad s_c, exact, from the same strain
/// gradients as the forces (no Hessian: the "energy" is linear in the strains).
struct RodNaturalStrainSensitivity {
  int c = 0;
  SLENDER_HD void operator()(const RodBendTwist::Params& p,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    const Real k = c == 0 ? p.EI1 / p.dl : c == 1 ? p.EI2 / p.dl : p.GJ / p.dl;
    const Real v = c == 0 ? s.kappa1 : c == 1 ? s.kappa2 : s.tau;
    out.E = -k * v;
    out.dE[c] = -k;
  }
};

/// One of the stencil's strains as its "energy" (0: kappa1, 1: kappa2, 2: tau), whose gradient
/// by rod_bend_twist_eval_with is that strain's gradient (the adjoint's anchors of Kelvin-Voigt
/// damping, engine/adjoint.h)
struct RodStrainComponent {
  int c = 0;
  SLENDER_HD void operator()(const RodBendTwist::Params&,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    out.E = c == 0 ? s.kappa1 : c == 1 ? s.kappa2 : s.tau;
    out.dE[c] = 1;
  }
};

namespace detail {

// grad_e (w . kappa b) = J^T w with J = d(kappa b)/d(e0, e1): 6-vector
SLENDER_HD SLENDER_INLINE Vec<6> kb_dot_grad(
    const Vec3& w, const Vec3& e0, const Vec3& e1, const Vec3& kb, Real D, const Vec<6>& dD) {
  Vec<6> r;
  r.set_segment(0, cross(e1, w));
  r.set_segment(3, cross(w, e0));
  r *= 2 / D;
  r -= (dot(w, kb) / D) * dD;
  return r;
}

// The Hessian's x-z block where both edges lie in a plane y = const (e0.y = e1.y = 0): there
// kappa b = kappa y_hat with kappa = 2 c / D, c = (e0 x e1).y, and kappa b's x and z components
// vanish on every in-plane motion, so that (differentiating the general terms below) the frame
// rotation and twist terms have no x-z block and
//   grad kappa1 = 1/2 M2.y grad kappa,  grad kappa2 = -1/2 M1.y grad kappa,
//   H = 1/2 (a1 M2.y - a2 M1.y) Hess kappa + c2 grad kappa grad kappa^T,
//   c2 = 1/4 (d2E11 M2.y^2 - 2 d2E12 M1.y M2.y + d2E22 M1.y^2),
// with a = dE/ds; the strains' derivatives in the reduced in-plane coordinates
// r = (e0.x, e0.z, e1.x, e1.z), expanded to the nodes' x and z (the other entries zero).
SLENDER_HD inline void planar_hessian(
    const Vec3& e0, const Vec3& e1, Real l0, Real l1, Real D, Real s1, Real s2, Mat<11, 11>& H) {
  const Real c = e0[2] * e1[0] - e0[0] * e1[2];
  const Real dc[4] = {-e1[2], e1[0], e0[2], -e0[0]};
  const Real t0[2] = {e0[0] / l0, e0[2] / l0}, t1[2] = {e1[0] / l1, e1[2] / l1};
  const Real dD[4] = {l1 * t0[0] + e1[0], l1 * t0[1] + e1[2], l0 * t1[0] + e0[0],
                      l0 * t1[1] + e0[2]};
  // Hess D: (l1 / l0)(I - t0 t0^T), (l0 / l1)(I - t1 t1^T), I + t0 t1^T and its transpose
  Real D2[4][4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const Real id = i == j ? Real(1) : Real(0);
      D2[i][j] = l1 / l0 * (id - t0[i] * t0[j]);
      D2[2 + i][2 + j] = l0 / l1 * (id - t1[i] * t1[j]);
      D2[i][2 + j] = id + t0[i] * t1[j];
      D2[2 + j][i] = D2[i][2 + j];
    }
  const Real kappa = 2 * c / D;
  Real dk[4];
  for (int i = 0; i < 4; ++i)
    dk[i] = 2 * dc[i] / D - kappa * dD[i] / D;
  // Hess kappa = 2/D Hess c - 2/D^2 (dc dD^T + dD dc^T) - 2c/D^2 Hess D + 4c/D^3 dD dD^T, with
  // Hess c: d2c/de0z de1x = 1, d2c/de0x de1z = -1
  Real Hr[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      Hr[i][j] = s1 * (-2 / (D * D) * (dc[i] * dD[j] + dD[i] * dc[j]) - 2 * c / (D * D) * D2[i][j] +
                       4 * c / (D * D * D) * dD[i] * dD[j]) +
                 s2 * dk[i] * dk[j];
  Hr[1][2] += s1 * 2 / D;
  Hr[2][1] += s1 * 2 / D;
  Hr[0][3] -= s1 * 2 / D;
  Hr[3][0] -= s1 * 2 / D;
  // e0 = x1 - x0, e1 = x2 - x1: node n's coefficient in edge a is s[a][n]
  const Real s[2][3] = {{-1, 1, 0}, {0, -1, 1}};
  const int comp[2] = {0, 2};
  H.set_zero();
  for (int n = 0; n < 3; ++n)
    for (int m = 0; m < 3; ++m)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          Real v = 0;
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
              v += s[a][n] * s[b][m] * Hr[2 * a + i][2 * b + j];
          H(3 * n + comp[i], 3 * m + comp[j]) = v;
        }
}

// expand a reduced (e0, e1, theta0, theta1) gradient to the 11 local DOFs
SLENDER_HD inline void expand_grad(const Vec<8>& gr, Vec<11>& g) {
  for (int i = 0; i < 3; ++i) {
    g[i] = -gr[i];
    g[3 + i] = gr[i] - gr[3 + i];
    g[6 + i] = gr[3 + i];
  }
  g[9] = gr[6];
  g[10] = gr[7];
}

// expand a reduced Hessian with e0 = x1 - x0, e1 = x2 - x1: H_x = S^T H_r S
SLENDER_HD inline void expand_hess(const Mat<8, 8>& Hr, Mat<11, 11>& H) {
  // s[a][n]: coefficient of node n in edge a
  const Real s[2][3] = {{-1, 1, 0}, {0, -1, 1}};
  SLENDER_ROLL_ON_DEVICE
  for (int n = 0; n < 3; ++n)
    SLENDER_ROLL_ON_DEVICE
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        Real v = 0;
        for (int a = 0; a < 2; ++a) {
          if (s[a][n] == 0) continue;
          for (int b = 0; b < 2; ++b) {
            if (s[b][m] == 0) continue;
            v += s[a][n] * s[b][m] * Hr(3 * a + i, 3 * b + j);
          }
        }
        H(3 * n + i, 3 * m + j) = v;
      }
  // mixed position-twist and twist-twist blocks
  SLENDER_ROLL_ON_DEVICE
  for (int k = 0; k < 2; ++k) {
    for (int n = 0; n < 3; ++n)
      for (int i = 0; i < 3; ++i) {
        Real v = 0;
        for (int a = 0; a < 2; ++a)
          v += s[a][n] * Hr(3 * a + i, 6 + k);
        H(3 * n + i, 9 + k) = v;
        H(9 + k, 3 * n + i) = v;
      }
    for (int l = 0; l < 2; ++l)
      H(9 + k, 9 + l) = Hr(6 + k, 6 + l);
  }
}

// The parts of one bend-twist stencil's gradient and reduced Hessian (8 x 8 in e0, e1, theta0,
// theta1). The Hessian is made entry by entry, each entry the same sum in the same order as the
// 6 x 6 and 8 x 8 matrices it was once assembled from (the Hessian of w . kappa b, that of D,
// the twist's dW, the strains' outer products), so that its bits are theirs. On the device the
// gradient and the Hessian are calls of their own over these parts, and the entries are made
// in rolled loops: the parts stay in the thread's local memory and the registers hold one
// entry's working set (issue 47: the kernel within 128 registers, no spills; it took 244 when
// it held the matrices whole). The library's GCC build unrolls and inlines them whole (hd.h).
struct BendTwistHessParts {
  Real e[6];        // e0, e1
  Real t[6];        // their unit tangents
  Real kb[3];       // the curvature binormal
  Real dD[6];       // dD/d(e0, e1), D = l0 l1 + e0 . e1
  Real l[2];        // |e0|, |e1|
  Real D;           // l0 l1 + e0 . e1
  Real m[4][3];     // the material directors m1, m2 of edge 0, then of edge 1
  Real dE[3];       // the energy's derivatives by the strains
  Real w[3];        // w = a1 M2 - a2 M1, the curvatures' director (a = dE/ds)
  Real a[6];        // grad (w . (e0 x e1)) = (e1 x w, w x e0)
  Real wc;          // w . (e0 x e1) = D/2 w . kb
  Real wf[6];       // the frame rotation's directors w0, w1 (a1 m2 - a2 m1 of each edge)
  Real c[2][6];     // the position-theta columns
  Real c_theta[2];  // the theta-theta diagonal
  // the scalars of the entries, each as the matrix expressions computed it: 2 / D (-2 / D is its
  // negation, exactly), -2 / D^2, -2 wc / D^2, 4 wc / D^3, dE/dtau / 2; per edge b 1 / 4 l_b^2
  // and l_other / l_b
  Real s2D, sSym, sD2, sOut, sTw;
  Real sRot[2], sLen[2];
  Mat<6, 6> dW;    // the twist one-form's Jacobian (twist_form_entry)
  Real g[3][8];    // grad kappa1, grad kappa2, grad tau
  Real d2E[3][3];  // the energy's second derivatives by the strains
};

// entry (i, j) of the second derivative of D in (e0, e1)
SLENDER_HD SLENDER_ENTRY_INLINE Real d2D_entry(const BendTwistHessParts& p, int i, int j) {
  const int bi = i / 3, bj = j / 3, r = i % 3, c = j % 3;
  const Real id = r == c ? Real(1) : Real(0);
  Real v = 0;
  if (bi == bj)  // (l_other / l_own) (I - t t^T)
    v += p.sLen[bi] * (id - p.t[3 * bi + r] * p.t[3 * bj + c]);
  else  // I + t0 t1^T and its transpose
    v += id + p.t[3 * bi + r] * p.t[3 * bj + c];
  return v;
}

// entry (i, j) of the Hessian of w . kappa b in (e0, e1) for a fixed w: with c = e0 x e1 (the
// bilinear c's second derivative has the blocks -2/D [w]x and 2/D [w]x) and w . kappa b =
// 2 w . c / D, Hess = 2/D Hess(w . c) - 2/D^2 (a dD^T + dD a^T) - 2 wc/D^2 Hess D
// + 4 wc/D^3 dD dD^T, a = grad (w . c)
SLENDER_HD SLENDER_ENTRY_INLINE Real kb_dot_hess_entry(const BendTwistHessParts& p, int i, int j) {
  Real h = 0;
  if (i < 3 && j >= 3) h += -p.s2D * skew_entry(p.w, i, j - 3);
  if (i >= 3 && j < 3) h += p.s2D * skew_entry(p.w, i - 3, j);
  h += p.sSym * (p.a[i] * p.dD[j] + p.dD[i] * p.a[j]);
  h += d2D_entry(p, i, j) * p.sD2;
  h += p.sOut * p.dD[i] * p.dD[j];
  return h;
}

// entry (i, j) of dW = d/d(e0, e1) of (kb / 2 l0, kb / 2 l1), the twist's one-form
SLENDER_HD SLENDER_ENTRY_INLINE Real twist_form_entry(const BendTwistHessParts& p, int i, int j) {
  const int bi = i / 3, r = i % 3, bj = j / 3, c = j % 3;
  const Real D = p.D;
  // d(kappa b)_r / d(e0, e1)_j
  const Real J = bj == 0 ? -p.s2D * skew_entry(p.e + 3, r, c) - p.kb[r] * p.dD[j] / D
                         : p.s2D * skew_entry(p.e, r, c) - p.kb[r] * p.dD[j] / D;
  const Real l = p.l[bi];
  Real v = J / (2 * l);
  if (bi == bj) v -= p.kb[r] * p.t[3 * bj + c] / (2 * l * l);
  return v;
}

// entry (i, j) of the reduced Hessian
SLENDER_HD SLENDER_ENTRY_INLINE Real bend_twist_hess_entry(const BendTwistHessParts& p,
                                                           int i,
                                                           int j) {
  Real h = 0;
  if (i < 6 && j < 6) {
    h += Real(0.5) * kb_dot_hess_entry(p, i, j);
    const int b = i / 3;
    if (b == j / 3) {  // the frame rotation: (kb w^T + w kb^T) / 4 l^2 in edge b's block
      const int r = i % 3, c = j % 3;
      const Real* w = p.wf + 3 * b;
      h += p.sRot[b] * (p.kb[r] * w[c] + w[r] * p.kb[c]);
    }
    h += p.sTw * (p.dW(i, j) + p.dW(j, i));
  } else if (i >= 6 && j >= 6) {
    if (i == j) h = p.c_theta[i - 6];
  } else {
    h = i >= 6 ? p.c[i - 6][j] : p.c[j - 6][i];
  }
  for (int a = 0; a < 3; ++a) {
    h += p.d2E[a][a] * p.g[a][i] * p.g[a][j];
    for (int b = a + 1; b < 3; ++b)
      if (p.d2E[a][b] != 0) h += p.d2E[a][b] * (p.g[a][i] * p.g[b][j] + p.g[b][i] * p.g[a][j]);
  }
  return h;
}

// entry (i, j) of the antisymmetric part the symmetric Hessian leaves out under the step's
// frame transport (rod_bend_twist_eval_with's transport_asym)
SLENDER_HD inline Real bend_twist_asym_entry(const BendTwistHessParts& p, int i, int j) {
  Real h = 0;
  if (i >= 6 || j >= 6) return h;
  const int b = i / 3;
  if (b == j / 3) {
    const int r = i % 3, c = j % 3;
    const Real* w = p.wf + 3 * b;
    h += p.sRot[b] * (p.kb[r] * w[c] - w[r] * p.kb[c]);
  }
  h += p.sTw * (p.dW(i, j) - p.dW(j, i));
  return h;
}

// the gradients of kappa1, kappa2 and tau in reduced coordinates (e0, e1, theta0, theta1) into
// the parts, and the stencil's gradient; out of line on the device
SLENDER_HD inline SLENDER_OUTLINED_ON_DEVICE void bend_twist_grad(BendTwistHessParts& hp,
                                                                  Vec<11>& g) {
  const Vec3 e0 = vec3(hp.e[0], hp.e[1], hp.e[2]), e1 = vec3(hp.e[3], hp.e[4], hp.e[5]);
  const Vec3 t0 = vec3(hp.t[0], hp.t[1], hp.t[2]), t1 = vec3(hp.t[3], hp.t[4], hp.t[5]);
  const Vec3 kb = vec3(hp.kb[0], hp.kb[1], hp.kb[2]);
  const Real l0 = hp.l[0], l1 = hp.l[1], D = hp.D;
  Vec3 m[4];  // m1_0, m2_0, m1_1, m2_1
  for (int k = 0; k < 4; ++k)
    m[k] = vec3(hp.m[k][0], hp.m[k][1], hp.m[k][2]);
  const Vec3 M1 = m[0] + m[2], M2 = m[1] + m[3];
  Vec<6> dD;
  dD.set_segment(0, l1 * t0 + e1);
  dD.set_segment(3, l0 * t1 + e0);
  for (int i = 0; i < 6; ++i)
    hp.dD[i] = dD[i];
  Real* const gk1 = hp.g[0];
  Real* const gk2 = hp.g[1];
  Real* const gt = hp.g[2];
  {
    const Vec<6> c1 = Real(0.5) * kb_dot_grad(M2, e0, e1, kb, D, dD);
    const Vec<6> c2 = Real(-0.5) * kb_dot_grad(M1, e0, e1, kb, D, dD);
    const Vec3 c3 = kb / (2 * l0), c4 = kb / (2 * l1);
    for (int i = 0; i < 6; ++i) {
      gk1[i] = c1[i];
      gk2[i] = c2[i];
    }
    for (int i = 0; i < 3; ++i) {
      gt[i] = c3[i];
      gt[3 + i] = c4[i];
    }
  }
  gk1[6] = Real(-0.5) * dot(kb, m[0]);
  gk1[7] = Real(-0.5) * dot(kb, m[2]);
  gk2[6] = Real(-0.5) * dot(kb, m[1]);
  gk2[7] = Real(-0.5) * dot(kb, m[3]);
  gt[6] = -1;
  gt[7] = 1;
  Vec<8> gr;
  SLENDER_ROLL_ON_DEVICE
  for (int i = 0; i < 8; ++i)
    gr[i] = hp.dE[0] * gk1[i] + hp.dE[1] * gk2[i] + hp.dE[2] * gt[i];
  expand_grad(gr, g);
}

// the Hessian where both edges lie in a plane y = const, from the parts (planar_hessian)
SLENDER_HD inline SLENDER_OUTLINED_ON_DEVICE void bend_twist_planar_hess(
    const BendTwistHessParts& hp, Mat<11, 11>& H) {
  const Vec3 e0 = vec3(hp.e[0], hp.e[1], hp.e[2]), e1 = vec3(hp.e[3], hp.e[4], hp.e[5]);
  const Real M1y = hp.m[0][1] + hp.m[2][1], M2y = hp.m[1][1] + hp.m[3][1];
  const Real s1 = Real(0.5) * (hp.dE[0] * M2y - hp.dE[1] * M1y);
  const Real s2 = Real(0.25) * (hp.d2E[0][0] * M2y * M2y - 2 * hp.d2E[0][1] * M1y * M2y +
                                hp.d2E[1][1] * M1y * M1y);
  planar_hessian(e0, e1, hp.l[0], hp.l[1], hp.D, s1, s2, H);
}

// the Hessian (and, when asked, transport_asym) of one bend-twist stencil from its parts; out
// of line on the device, so that none of the stencil's gradient registers stay live across it
SLENDER_HD inline SLENDER_OUTLINED_ON_DEVICE void bend_twist_hess(BendTwistHessParts& hp,
                                                                  Mat<11, 11>& H,
                                                                  Mat<11, 11>* transport_asym) {
  const Vec3 e0 = vec3(hp.e[0], hp.e[1], hp.e[2]), e1 = vec3(hp.e[3], hp.e[4], hp.e[5]);
  const Vec3 kb = vec3(hp.kb[0], hp.kb[1], hp.kb[2]);
  const Real D = hp.D;
  Vec<6> dD;
  for (int i = 0; i < 6; ++i)
    dD[i] = hp.dD[i];
  Vec3 m[4];  // m1_0, m2_0, m1_1, m2_1
  for (int k = 0; k < 4; ++k)
    m[k] = vec3(hp.m[k][0], hp.m[k][1], hp.m[k][2]);
  const Vec3 M1 = m[0] + m[2], M2 = m[1] + m[3];
  // the curvature terms k1 d1 Hess(kappa1) + k2 d2 Hess(kappa2): every piece is linear in the
  // director it contracts kappa b with, so the two curvatures share one Hessian of w . kappa b
  // (w = a1 M2 - a2 M1, kb_dot_hess_entry)
  const Real a1 = hp.dE[0], a2 = hp.dE[1];
  {
    const Vec3 w = a1 * M2 - a2 * M1;
    const Vec3 aw0 = cross(e1, w), aw1 = cross(w, e0);
    for (int i = 0; i < 3; ++i) {
      hp.w[i] = w[i];
      hp.a[i] = aw0[i];
      hp.a[3 + i] = aw1[i];
    }
    hp.wc = Real(0.5) * D * dot(w, kb);
  }
  hp.s2D = 2 / D;
  hp.sSym = -2 / (D * D);
  hp.sD2 = -2 * hp.wc / (D * D);
  hp.sOut = 4 * hp.wc / (D * D * D);
  hp.sTw = Real(0.5) * hp.dE[2];
  for (int b = 0; b < 2; ++b) {
    hp.sRot[b] = Real(0.25) / (hp.l[b] * hp.l[b]);
    hp.sLen[b] = hp.l[1 - b] / hp.l[b];
  }
  // frame rotation terms in each edge's own block
  SLENDER_ROLL_ON_DEVICE
  for (int k = 0; k < 2; ++k) {
    const Vec3 wk = a1 * m[2 * k + 1] - a2 * m[2 * k];
    for (int i = 0; i < 3; ++i)
      hp.wf[3 * k + i] = wk[i];
  }
  // mixed position-theta and theta-theta terms
  SLENDER_ROLL_ON_DEVICE
  for (int k = 0; k < 2; ++k) {
    const Vec<6> c = Real(-0.5) * kb_dot_grad(a1 * m[2 * k] + a2 * m[2 * k + 1], e0, e1, kb, D, dD);
    for (int i = 0; i < 6; ++i)
      hp.c[k][i] = c[i];
    hp.c_theta[k] = Real(0.5) * (a2 * dot(kb, m[2 * k]) - a1 * dot(kb, m[2 * k + 1]));
  }
  // the twist's Hessian: the symmetric part of dW
  fill_by_entry(hp.dW, [&](int i, int j) { return twist_form_entry(hp, i, j); });
  // H = sum_s dE/ds Hess s + sum_{s, s'} d2E/ds ds' grad s grad s'^T
  Mat<8, 8> Hr;
  fill_by_entry(Hr, [&](int i, int j) { return bend_twist_hess_entry(hp, i, j); });
  if (transport_asym) {
    Mat<8, 8> Ar;
    fill_by_entry(Ar, [&](int i, int j) { return bend_twist_asym_entry(hp, i, j); });
    expand_hess(Ar, *transport_asym);
  }
  expand_hess(Hr, H);
}

}  // namespace detail

/// Energy and, on request, gradient and Hessian of one bend-twist stencil whose energy is
/// energy(p, strains, want, StrainEnergyEval&), a function of its strains (kappa1, kappa2,
/// tau): the strains' gradients and Hessians chained with the energy's derivatives. `strains`,
/// when given, receives kappa1, kappa2 and tau.
/// `transport_asym`, when given with kHess (not in the planar form), receives the part of the
/// gradient's Jacobian the Hessian leaves out when the frames are carried from the step's start
/// rather than from this configuration (the adjoint's exact step Jacobian, engine/adjoint.h):
/// the gradient is a one-form of the strains' frame-following derivatives, whose Jacobian's
/// antisymmetric part (the twist's 1/2 dE/dtau (dW - dW^T), the curvatures' frame rotation
/// 1/4 (kb w^T - w kb^T) / l^2 in each edge's block) the symmetric Hessian drops.
template <class Energy>
SLENDER_HD inline void rod_bend_twist_eval_with(const Vec<11>& x,
                                                const RodBendTwist::Params& p,
                                                const Energy& energy,
                                                unsigned want,
                                                LocalEval<11>& out,
                                                RodBendTwist::Strains* strains = nullptr,
                                                Mat<11, 11>* transport_asym = nullptr) {
  if (transport_asym) transport_asym->set_zero();
  out.flags = 0;
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3), x2 = x.segment<3>(6);
  const Vec3 e0 = x1 - x0, e1 = x2 - x1;
  const Real l0 = norm(e0), l1 = norm(e1);
  const Real D = l0 * l1 + dot(e0, e1);

  // a zero-length edge or a fold back onto itself: no curvature binormal
  if (!(l0 > kTinyLength && l1 > kTinyLength && D > 1e-12 * l0 * l1)) {
    out.E = 0;
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    if (strains) *strains = RodBendTwist::Strains{0, 0, 0};
    return;
  }
  const Vec3 t0 = e0 / l0, t1 = e1 / l1;
  const Vec3 kb = (2 / D) * cross(e0, e1);

  // material frames of both edges
  Vec3 m1_0, m2_0, m1_1, m2_1;
  material_frame(p.d1_0, t0, x[9], m1_0, m2_0);
  material_frame(p.d1_1, t1, x[10] - p.frame_offset, m1_1, m2_1);
  const Vec3 M1 = m1_0 + m1_1, M2 = m2_0 + m2_1;

  const Real kappa1 = Real(0.5) * dot(kb, M2);
  const Real kappa2 = Real(-0.5) * dot(kb, M1);
  const Real tau = x[10] - x[9] + p.ref_twist;
  if (strains) *strains = RodBendTwist::Strains{kappa1, kappa2, tau};

  StrainEnergyEval se;
  energy(p, RodBendTwist::Strains{kappa1, kappa2, tau}, want, se);
  out.E = se.E;
  if (want == kEnergy) return;
  // the rest from the stencil's parts (detail::BendTwistHessParts), out of line on the device
  detail::BendTwistHessParts hp;
  for (int i = 0; i < 3; ++i) {
    hp.e[i] = e0[i];
    hp.e[3 + i] = e1[i];
    hp.t[i] = t0[i];
    hp.t[3 + i] = t1[i];
    hp.kb[i] = kb[i];
    hp.m[0][i] = m1_0[i];
    hp.m[1][i] = m2_0[i];
    hp.m[2][i] = m1_1[i];
    hp.m[3][i] = m2_1[i];
  }
  hp.l[0] = l0;
  hp.l[1] = l1;
  hp.D = D;
  for (int a = 0; a < 3; ++a) {
    hp.dE[a] = se.dE[a];
    for (int b = 0; b < 3; ++b)
      hp.d2E[a][b] = se.d2E[a][b];
  }
  detail::bend_twist_grad(hp, out.g);
  if (!(want & kHess)) return;
  if (p.in_plane && e0[1] == 0 && e1[1] == 0) {
    detail::bend_twist_planar_hess(hp, out.H);
    return;
  }
  detail::bend_twist_hess(hp, out.H, transport_asym);
}

/// Energy and, on request, gradient and Hessian of one bend-twist stencil of the discrete
/// elastic rod (RodElasticStrainEnergy); `strains`, when given, receives kappa1, kappa2 and tau.
SLENDER_HD inline void rod_bend_twist_eval(const Vec<11>& x,
                                           const RodBendTwist::Params& p,
                                           unsigned want,
                                           LocalEval<11>& out,
                                           RodBendTwist::Strains* strains = nullptr) {
  rod_bend_twist_eval_with(x, p, RodElasticStrainEnergy{}, want, out, strains);
}

}  // namespace slender
