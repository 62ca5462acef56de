#pragma once

// seed 000, §3.3.2 eqs. (19)-(20) and Appendix A (seed 001 describes the same model): mid-edge
// normal bending of one shell triangle (Grinspun et al. 2006),
//   Lambda = sum_k (s^k xi^k - n . tau^k) / (A_bar l_bar^k (t_hat^k . tau^k)) t^k (x) t^k
//   E = kb A_bar [(1 - nu) Tr((Lambda - Lambda_bar)^2) + nu (Tr Lambda - Tr Lambda_bar)^2],
//   kb = Y h^3 / (24 (1 - nu^2)).
// Local DOFs (12): [x0, x1, x2, xi0, xi1, xi2]; node positions [m], then the mid-edge normal
// DOFs xi^k [-] of the three edges.
//
// Conventions
// - Edge k is opposite node k: e^k = x_{k+2} - x_{k+1} (indices mod 3), so the edges run round
//   the triangle: e^2 = x1 - x0, e^0 = x2 - x1, e^1 = x0 - x2 (seed 000 Fig. 2d, e^p opposite
//   x_l). The unit normal is n = N / |N| with N = (x1 - x0) x (x2 - x0) = 2 A n.
// - t^k = e^k x n lies in the triangle's plane, normal to e^k and pointing out of the triangle;
//   it is NOT unit: |t^k| = |e^k| (this is what makes Lambda a curvature [1/m]); t_hat^k is
//   t^k / |e^k|.
// - tau0[k] is the stored edge's tau^{k,0} = n_avg x e_hat at the start of the step, with
//   e_hat along the edge as stored in the mesh; xi^k = n^{m,k} . tau0[k] (seed 000 §3.3.2).
//   s[k] = +1 if the stored edge runs along e^k, -1 if against it. As in MAT-DiSMech and
//   Py-DiSMech, the stencil turns tau0 to the triangle's orientation, tau^k = s^k tau0[k], and
//   uses tau^k for both f^k = n . tau^k and t_hat^k . tau^k. s^k then cancels from Lambda:
//   (s xi - n . s tau0) / (t_hat . s tau0) = (xi - n . tau0) / (t_hat . tau0). That is right:
//   xi belongs to the edge and both of its triangles read it the same way; the edge's
//   orientation enters through t_hat . tau0, which changes sign from one triangle to the
//   other. (Applying s to xi alone, with the stored tau0, would make the two triangles of an
//   edge disagree about its mid-edge normal.)
// - Sign: Lambda ~ sum_k ((n^m - n) . t_hat^k) |e^k| / A t_hat^k (x) t_hat^k, positive where
//   the mid-edge normals splay away from n (a sphere with outward n gives +(I - n n^T) / R).
// - Lambda_bar is a world-frame symmetric 3 x 3 tensor (shell_midedge_shape_operator of the
//   natural shape). Tr((Lambda - Lambda_bar)^2) compares world-frame tensors, so E is not
//   invariant under rigid rotations (as in the paper; tau0 is frozen too), only translations.
// - Actuation (Slender's addition): kappa_bar[k] [1/m] are components of a natural curvature
//   that turns with the triangle, Lambda_act = sum_k kappa_bar[k] t^k (x) t^k / l_bar^k^2, which
//   is subtracted from Lambda: E compares Lambda - Lambda_act with Lambda_bar. In the rest
//   shape t^k / l_bar^k is the unit in-plane edge normal t_hat^k, so kappa_bar holds the
//   coordinates of a natural curvature tensor K in the basis t_hat^k (x) t_hat^k
//   (shell_midedge_curvature_components computes them for a given K); being built from the
//   current t^k, Lambda_act follows the triangle through any rotation, so a strip driven by
//   K = kappa d d^T curls into an arc of curvature kappa however far it turns. In the terms
//   below it is a constant shift B^k -> B^k - kappa_bar[k] / l_bar^k^2, which leaves every
//   derivative of B^k as it is.
//
// Derivatives. Appendix A differentiates only f^k = n . tau^k and freezes c^k and t^k ("the
// triangle keeps its shape"). Here everything is differentiated (n, t^k, |e^k| and
// t_hat^k . tau^k), so g and H are the exact derivatives of E. With D = Lambda - Lambda_bar and
// the isotropic map C D = (1 - nu) D + nu Tr(D) I,
//   E = kb A_bar <D, C D>,  S = C D,
//   g = 2 kb A_bar <S, dLambda/dq>,
//   H = 2 kb A_bar (<C dLambda/dq_i, dLambda/dq_j> + <S, d2Lambda/dq_i dq_j>).
// Since t_hat . tau = n . (tau x e) / |e|, each edge's term Lambda^k = B^k t^k t^kT with
//   B^k = (s xi^k - n . tau^k) |e^k| / (A_bar l_bar^k n . (tau^k x e^k))
// depends on q only through z = (e^k, n, xi^k). Both terms are built in the reduced
// coordinates y = (x0, x1, x2, n, xi) (15), in which every z is linear: the first from
// dLambda/dy, the second as the Hessian of sum_k B^k t^kT S t^k with S held fixed (per-edge
// 7 x 7 Hessians in z). They reach q through dn/dx, plus the unit normal's own second
// derivative contracted once with w = d<S, Lambda>/dn.

#include "slender/core/types.h"

namespace slender {

struct ShellMidedge {
  static constexpr int kNodes = 3;
  static constexpr int kEdges = 3;
  static constexpr int kDofs = 12;
  struct Params {
    Vec3 tau0[3];     ///< tau^{k,0} of each edge as stored, unit, frozen over the step
    Real s[3];        ///< +1 if the stored edge runs along e^k = x_{k+2} - x_{k+1}, else -1
    Real l_bar[3];    ///< rest lengths of the edges, > 0 [m]
    Real A_bar;       ///< rest area, > 0 [m^2]
    Mat3 Lambda_bar;  ///< natural shape operator, world frame, symmetric [1/m]
    Real kb;          ///< bending stiffness Y h^3 / (24 (1 - nu^2)) [N m]
    Real nu;          ///< Poisson ratio [-]
    /// actuated natural curvature, components along t^k (x) t^k / l_bar^k^2 [1/m] (header)
    Real kappa_bar[3] = {0, 0, 0};
  };
};

namespace detail {

/// below this |N| / l_max^2 (the sine of the largest angle) the triangle has no normal
constexpr Real kMidedgeTinySine = 1e-12;
/// below this |t_hat . tau| / |tau| the edge's tau0 has no component across the edge in the
/// triangle's plane (t_hat . tau0 ~ -n . n_avg: the triangle has turned a quarter turn away)
constexpr Real kMidedgeTinyCos = 1e-12;

// per-triangle quantities shared by the energy, its derivatives and the shape operator
struct MidedgeGeometry {
  Vec3 e[3];    // e^k = x_{k+2} - x_{k+1}
  Real l[3];    // |e^k|
  Vec3 n;       // unit normal
  Real N_norm;  // |N| = 2 A
  Vec3 tau[3];  // s^k tau0[k]
  Vec3 t[3];    // e^k x n
  Vec3 m[3];    // tau^k x e^k, so that t_hat . tau = n . m / l
  Real a[3];    // s xi - n . tau
  Real d[3];    // A_bar l_bar n . m
  Real B[3];    // a l / d - kappa_bar / l_bar^2: Lambda - Lambda_act = sum_k B^k t^k t^kT
};

// false for a zero-length edge, a triangle without area or a tau0 along the normal
SLENDER_HD inline bool midedge_geometry(const Vec<12>& x,
                                        const ShellMidedge::Params& p,
                                        MidedgeGeometry& geo) {
  const Vec3 xs[3] = {x.segment<3>(0), x.segment<3>(3), x.segment<3>(6)};
  Real l_max = 0;
  for (int k = 0; k < 3; ++k) {
    geo.e[k] = xs[(k + 2) % 3] - xs[(k + 1) % 3];
    geo.l[k] = norm(geo.e[k]);
    if (!(geo.l[k] > kTinyLength)) return false;
    l_max = geo.l[k] > l_max ? geo.l[k] : l_max;
  }
  const Vec3 N = cross(geo.e[2], geo.e[0]);
  geo.N_norm = norm(N);
  if (!(geo.N_norm > kMidedgeTinySine * l_max * l_max)) return false;
  geo.n = N / geo.N_norm;
  for (int k = 0; k < 3; ++k) {
    geo.tau[k] = p.s[k] * p.tau0[k];
    geo.t[k] = cross(geo.e[k], geo.n);
    geo.m[k] = cross(geo.tau[k], geo.e[k]);
    const Real nm = dot(geo.n, geo.m[k]);
    if (!(::fabs(nm) > kMidedgeTinyCos * geo.l[k] * norm(geo.tau[k]))) return false;
    geo.a[k] = p.s[k] * x[9 + k] - dot(geo.n, geo.tau[k]);
    geo.d[k] = p.A_bar * p.l_bar[k] * nm;
    geo.B[k] = geo.a[k] * geo.l[k] / geo.d[k] - p.kappa_bar[k] / (p.l_bar[k] * p.l_bar[k]);
  }
  return true;
}

SLENDER_HD inline Mat3 midedge_lambda(const MidedgeGeometry& geo) {
  Mat3 L = Mat3::zero();
  for (int k = 0; k < 3; ++k)
    L += geo.B[k] * outer(geo.t[k], geo.t[k]);
  return L;
}

// first derivatives of one edge's pieces in its own variables z = (e^k, n, xi^k)
struct MidedgeEdgeGrad {
  Vec<7> ga, gl, gd;  // gradients of a, l and d
  Vec<7> gr;          // gradient of r = l / d
  Vec<7> gB;          // gradient of B = a r
  Mat<3, 7> Jt;       // dt/dz
};

SLENDER_HD inline void midedge_edge_grad(const MidedgeGeometry& geo,
                                         const ShellMidedge::Params& p,
                                         int k,
                                         MidedgeEdgeGrad& eg) {
  const Vec3& e = geo.e[k];
  const Vec3& n = geo.n;
  const Real l = geo.l[k], d = geo.d[k];
  const Real Al = p.A_bar * p.l_bar[k];

  // a = s xi - n . tau,  l = |e|,  d = A_bar l_bar n . (tau x e) = A_bar l_bar e . (n x tau)
  eg.ga = Vec<7>::zero();
  eg.ga.set_segment(3, -geo.tau[k]);
  eg.ga[6] = p.s[k];
  eg.gl = Vec<7>::zero();
  eg.gl.set_segment(0, e / l);
  eg.gd = Vec<7>::zero();
  eg.gd.set_segment(0, Al * cross(n, geo.tau[k]));
  eg.gd.set_segment(3, Al * geo.m[k]);
  eg.gr = eg.gl / d - (l / (d * d)) * eg.gd;
  eg.gB = (l / d) * eg.ga + geo.a[k] * eg.gr;

  // t = e x n: dt/de = -[n]x, dt/dn = [e]x
  const Mat3 Sn = skew(n), Se = skew(e);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      eg.Jt(i, j) = -Sn(i, j);
      eg.Jt(i, 3 + j) = Se(i, j);
    }
    eg.Jt(i, 6) = 0;
  }
}

// dLambda^k/dz, the entries of Lambda^k (row-major) against z: 9 x 7
SLENDER_HD inline Mat<9, 7> midedge_edge_lambda_jac(const MidedgeGeometry& geo,
                                                    int k,
                                                    const MidedgeEdgeGrad& eg) {
  const Vec3& t = geo.t[k];
  const Real B = geo.B[k];
  Mat<9, 7> J;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int c = 0; c < 7; ++c)
        J(3 * i + j, c) = eg.gB[c] * t[i] * t[j] + B * (eg.Jt(i, c) * t[j] + t[i] * eg.Jt(j, c));
  return J;
}

// Hessian in z of h = B Q, Q = t^T S t, for a fixed symmetric S: 7 x 7,
//   Hess h = Q Hess B + B Hess Q + gB gQ^T + gQ gB^T,
// accumulated term by term (each added with its factor) to keep one 7 x 7 live
SLENDER_HD inline Mat<7, 7> midedge_edge_hess(const MidedgeGeometry& geo,
                                              const ShellMidedge::Params& p,
                                              int k,
                                              const MidedgeEdgeGrad& eg,
                                              const Mat3& S) {
  const Vec3& t = geo.t[k];
  const Real l = geo.l[k], d = geo.d[k], a = geo.a[k], B = geo.B[k];
  const Real Al = p.A_bar * p.l_bar[k];
  const Vec3 v = S * t;
  const Real Q = dot(t, v);
  Mat<7, 7> H = Mat<7, 7>::zero();

  // B Hess Q: t is bilinear in (e, n), so Hess Q = 2 Jt^T S Jt plus a mixed term
  const Mat<3, 7> SJt = S * eg.Jt;
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) {
      Real q = 0;
      for (int r = 0; r < 3; ++r)
        q += eg.Jt(r, i) * SJt(r, j);
      H(i, j) = 2 * B * q;
    }
  const Mat3 Sv = skew(v);
  H.add_block(0, 3, Sv, -2 * B);  // d2(v . e x n)/de dn = -[v]x
  H.add_block(3, 0, Sv, 2 * B);

  // Q Hess B with B = a r, a linear: Q (a Hess r + ga gr^T + gr ga^T)
  add_sym_outer(H, eg.ga, eg.gr, Q);
  // Hess r for r = l / d: l is curved in e, d is bilinear in (e, n)
  const Real qa = Q * a;
  const Vec3 e_hat = geo.e[k] / l;
  H.add_block(0, 0, Mat3::identity() - outer(e_hat, e_hat), qa / (l * d));
  add_sym_outer(H, eg.gl, eg.gd, -qa / (d * d));
  add_outer(H, eg.gd, 2 * qa * l / (d * d * d));
  const Mat3 St = skew(geo.tau[k]);  // d2d/dn de = A_bar l_bar [tau]x
  H.add_block(3, 0, St, -qa * Al * l / (d * d));
  H.add_block(0, 3, St, qa * Al * l / (d * d));

  // gB gQ^T + gQ gB^T, gQ = 2 Jt^T S t
  add_sym_outer(H, eg.gB, 2 * mul_transpose(eg.Jt, v), 1);
  return H;
}

// The reduced coordinates y = (x0, x1, x2, n, xi0, xi1, xi2) (15), with the unit normal taken
// as independent: every edge's z = (e^k, n, xi^k) is linear in y. Component c of z^k is
// sum_i sgn[i] y[idx[i]]; returns the number of terms.
SLENDER_HD inline int midedge_z_to_y(int k, int c, int idx[2], Real sgn[2]) {
  if (c < 3) {  // e^k = x_{k+2} - x_{k+1}
    idx[0] = 3 * ((k + 2) % 3) + c;
    idx[1] = 3 * ((k + 1) % 3) + c;
    sgn[0] = 1;
    sgn[1] = -1;
    return 2;
  }
  idx[0] = c < 6 ? 9 + (c - 3) : 12 + k;
  sgn[0] = 1;
  return 1;
}

// H += s (Jy^T Hy Jy), Jy = dy/dq (15 x 12): x -> x, n -> Dn x, xi -> xi. Folds the n rows and
// columns of Hy into its x block in place (Hy is spent).
SLENDER_HD inline void midedge_chain_hess(Mat<15, 15>& Hy,
                                          const Mat<3, 9>& Dn,
                                          Real s,
                                          Mat<12, 12>& H) {
  // Hy Jy: columns of x gain the n columns through Dn
  for (int i = 0; i < 15; ++i)
    for (int j = 0; j < 9; ++j)
      for (int r = 0; r < 3; ++r)
        Hy(i, j) += Hy(i, 9 + r) * Dn(r, j);
  // Jy^T (Hy Jy): rows of x gain the n rows
  const int cols[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14};
  for (int i = 0; i < 9; ++i)
    for (int j : cols)
      for (int r = 0; r < 3; ++r)
        Hy(i, j) += Dn(r, i) * Hy(9 + r, j);
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      H(i, j) += s * Hy(cols[i], cols[j]);
}

// H += s Hess_x(w . n(x)) for a fixed w, with n = N / |N|, dN/dx_j = [e^j]x, G = dN/dx (3 x 9)
// and dn/dx = P G / |N|, P = I - n n^T
SLENDER_HD inline void midedge_add_normal_hess(
    const MidedgeGeometry& geo, const Mat<3, 9>& G, const Vec3& w, Real s, Mat<12, 12>& H) {
  const Real nN = geo.N_norm;
  const Vec3& n = geo.n;
  const Vec3 pw = w - dot(w, n) * n;
  const Vec<9> Gn = mul_transpose(G, n), Gp = mul_transpose(G, pw);
  // -(Gn Gp^T + Gp Gn^T + (n . w) G^T P G) / |N|^2
  const Real wn = dot(n, w);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      Real GPG = 0;
      for (int r = 0; r < 3; ++r)
        GPG += G(r, i) * G(r, j);
      GPG -= Gn[i] * Gn[j];
      H(i, j) -= s * (Gn[i] * Gp[j] + Gp[i] * Gn[j] + wn * GPG) / (nN * nN);
    }
  // pw . d2N[dx, dy] / |N|: N is bilinear, blocks -[pw]x at (i, i+1) and [pw]x at (i, i+2)
  const Mat3 W = skew(pw);
  for (int i = 0; i < 3; ++i) {
    H.add_block(3 * i, 3 * ((i + 1) % 3), W, -s / nN);
    H.add_block(3 * i, 3 * ((i + 2) % 3), W, s / nN);
  }
}

}  // namespace detail

/// The actuation components of a natural curvature K (world frame, symmetric [1/m]) on the
/// triangle of nodes x (its rest shape): c[k] with sum_k c[k] t_hat^k (x) t_hat^k = P K P, P the
/// projector on the triangle's plane and t_hat^k its unit in-plane edge normals. Taking
/// t_hat^i . (.) t_hat^i of both sides gives the 3 x 3 system sum_j (t_hat^i . t_hat^j)^2 c[j] =
/// t_hat^i . K t_hat^i, whose matrix is the Gram matrix of the three rank-one tensors (positive
/// definite for any triangle with area: no two edges are parallel). False, and c = 0, for a
/// triangle without a normal.
SLENDER_HD inline bool shell_midedge_curvature_components(const Vec<9>& x,
                                                          const Mat3& K,
                                                          Real c[3]) {
  c[0] = c[1] = c[2] = 0;
  const Vec3 xs[3] = {x.segment<3>(0), x.segment<3>(3), x.segment<3>(6)};
  Vec3 e[3];
  Real l_max = 0;
  for (int k = 0; k < 3; ++k) {
    e[k] = xs[(k + 2) % 3] - xs[(k + 1) % 3];
    const Real l = norm(e[k]);
    if (!(l > kTinyLength)) return false;
    l_max = l > l_max ? l : l_max;
  }
  const Vec3 N = cross(e[2], e[0]);
  if (!(norm(N) > detail::kMidedgeTinySine * l_max * l_max)) return false;
  const Vec3 n = N / norm(N);
  Vec3 t[3];
  for (int k = 0; k < 3; ++k) {
    t[k] = cross(e[k], n);
    t[k] = t[k] / norm(t[k]);
  }
  Mat3 G;
  Vec3 r;
  for (int i = 0; i < 3; ++i) {
    r[i] = dot(t[i], K * t[i]);
    for (int j = 0; j < 3; ++j) {
      const Real tt = dot(t[i], t[j]);
      G(i, j) = tt * tt;
    }
  }
  // Cramer's rule: det(G) = a . (b x d) with the columns a, b, d of G
  const Vec3 g0 = vec3(G(0, 0), G(1, 0), G(2, 0)), g1 = vec3(G(0, 1), G(1, 1), G(2, 1)),
             g2 = vec3(G(0, 2), G(1, 2), G(2, 2));
  const Real det = dot(g0, cross(g1, g2));
  c[0] = dot(r, cross(g1, g2)) / det;
  c[1] = dot(g0, cross(r, g2)) / det;
  c[2] = dot(g0, cross(g1, r)) / det;
  return true;
}

/// Shape operator Lambda of eq. (19) (world frame, symmetric, [1/m]) at the local DOFs x, less
/// the actuated Lambda_act of p.kappa_bar (none when zero); the natural Lambda_bar is this of
/// the natural shape (p.Lambda_bar, kb and nu are not read). Returns EvalFlag bits:
/// kDegenerate (and Lambda = 0) where shell_midedge_eval would be.
SLENDER_HD inline unsigned shell_midedge_shape_operator(const Vec<12>& x,
                                                        const ShellMidedge::Params& p,
                                                        Mat3& Lambda) {
  detail::MidedgeGeometry geo;
  if (!detail::midedge_geometry(x, p, geo)) {
    Lambda = Mat3::zero();
    return kDegenerate;
  }
  Lambda = detail::midedge_lambda(geo);
  return 0;
}

/// Energy and, on request, gradient and Hessian of one mid-edge bending stencil; `Lambda`,
/// when given, receives the shape operator less the actuated Lambda_act (what E compares with
/// Lambda_bar).
SLENDER_HD inline void shell_midedge_eval(const Vec<12>& x,
                                          const ShellMidedge::Params& p,
                                          unsigned want,
                                          LocalEval<12>& out,
                                          Mat3* Lambda = nullptr) {
  out.flags = 0;
  detail::MidedgeGeometry geo;

  // no normal, a zero-length edge or tau0 out of plane: report instead of dividing by zero
  if (!detail::midedge_geometry(x, p, geo)) {
    out.E = 0;
    out.g.set_zero();
    out.H.set_zero();
    out.flags |= kDegenerate;
    if (Lambda) *Lambda = Mat3::zero();
    return;
  }
  const Mat3 L = detail::midedge_lambda(geo);
  if (Lambda) *Lambda = L;

  // E = kb A_bar <D, C D> with S = C D = (1 - nu) D + nu Tr(D) I
  const Mat3 D = L - p.Lambda_bar;
  const Real trD = D(0, 0) + D(1, 1) + D(2, 2);
  Mat3 S = (1 - p.nu) * D;
  for (int i = 0; i < 3; ++i)
    S(i, i) += p.nu * trD;
  Real DS = 0;
  for (int i = 0; i < 9; ++i)
    DS += D.a[i] * S.a[i];
  const Real c = p.kb * p.A_bar;
  out.E = c * DS;
  if (want == kEnergy) return;

  // dN/dx = G, dn/dx = P G / |N|
  Mat<3, 9> G;
  for (int j = 0; j < 3; ++j) {
    const Mat3 Se = skew(geo.e[j]);
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q)
        G(r, 3 * j + q) = Se(r, q);
  }
  const Vec<9> Gn = mul_transpose(G, geo.n);
  const Mat<3, 9> Dn = (1 / geo.N_norm) * (G - outer(geo.n, Gn));

  // per edge, in its z = (e^k, n, xi^k), scattered to y = (x, n, xi): dLambda/dy (9 x 15)
  // and, for the Hessian, the Hessian in y of <S, Lambda> with S fixed
  const bool hess = want & kHess;
  Mat<9, 15> JLy = Mat<9, 15>::zero();
  Mat<15, 15> Hy = Mat<15, 15>::zero();
  for (int k = 0; k < 3; ++k) {
    detail::MidedgeEdgeGrad eg;
    detail::midedge_edge_grad(geo, p, k, eg);
    const Mat<9, 7> JLz = detail::midedge_edge_lambda_jac(geo, k, eg);
    Mat<7, 7> Hz;
    if (hess) Hz = detail::midedge_edge_hess(geo, p, k, eg, S);
    // where each of z's 7 entries goes in y, with its sign (one or two places)
    int iz[7][2], nz[7];
    Real sz[7][2];
    for (int a = 0; a < 7; ++a)
      nz[a] = detail::midedge_z_to_y(k, a, iz[a], sz[a]);
    for (int a = 0; a < 7; ++a)
      for (int u = 0; u < nz[a]; ++u) {
        for (int i = 0; i < 9; ++i)
          JLy(i, iz[a][u]) += sz[a][u] * JLz(i, a);
        if (!hess) continue;
        for (int b = 0; b < 7; ++b)
          for (int v = 0; v < nz[b]; ++v)
            Hy(iz[a][u], iz[b][v]) += sz[a][u] * sz[b][v] * Hz(a, b);
      }
  }

  // g = 2 c <S, dLambda/dq> = 2 c Jy^T (JLy^T S); its n part is w, the weight of n's curvature
  Vec<9> s_vec;
  for (int i = 0; i < 9; ++i)
    s_vec[i] = S.a[i];
  const Vec<15> gy = mul_transpose(JLy, s_vec);
  const Vec3 w = gy.segment<3>(9);
  const Vec<9> gx = mul_transpose(Dn, w);
  for (int i = 0; i < 9; ++i)
    out.g[i] = 2 * c * (gy[i] + gx[i]);
  for (int i = 0; i < 3; ++i)
    out.g[9 + i] = 2 * c * gy[12 + i];
  if (!hess) return;

  // <C dLambda/dy_i, dLambda/dy_j> = (1 - nu) JLy^T JLy + nu grad(Tr) grad(Tr)^T; each
  // product of columns once for (i, j) and (j, i), summed over the rows in order, the sums of
  // one column i with all the others side by side (one row of JLy at a time, not one chain of
  // dependent additions after another)
  Real tr[15];
  for (int i = 0; i < 15; ++i)
    tr[i] = JLy(0, i) + JLy(4, i) + JLy(8, i);
  for (int i = 0; i < 15; ++i) {
    Real v[15];
    for (int j = i; j < 15; ++j)
      v[j] = 0;
    for (int r = 0; r < 9; ++r) {
      const Real a = JLy(r, i);
      for (int j = i; j < 15; ++j)
        v[j] += a * JLy(r, j);
    }
    for (int j = i; j < 15; ++j) {
      Hy(i, j) += (1 - p.nu) * v[j] + p.nu * tr[i] * tr[j];
      if (j != i) Hy(j, i) += (1 - p.nu) * v[j] + p.nu * tr[j] * tr[i];
    }
  }

  // H = 2 c (Jy^T Hy Jy + the unit normal's own second derivative, weighted by w)
  out.H.set_zero();
  detail::midedge_chain_hess(Hy, Dn, 2 * c, out.H);
  detail::midedge_add_normal_hess(geo, G, w, 2 * c, out.H);
}

namespace detail {
/// the adjoint terms' outputs zeroed and the stencil's geometry at x; false where degenerate
SLENDER_HD inline bool midedge_terms_geometry(const Vec<12>& x,
                                              const ShellMidedge::Params& p,
                                              MidedgeGeometry& geo,
                                              Vec3 dtau0[3],
                                              Real dkappa[3]) {
  for (int k = 0; k < 3; ++k) {
    dtau0[k] = vec3(0, 0, 0);
    dkappa[k] = 0;
  }
  return midedge_geometry(x, p, geo);
}
}  // namespace detail

/// The adjoint's terms of one mid-edge stencil (engine/adjoint.h), for each edge k: lambda .
/// dg/d(tau0[k]) (tau0 is the step's start's) and lambda . dg/d(kappa_bar[k]) (the actuated
/// natural curvature), from the stencil's gradient g and its Hessian times lambda, Hl = H lambda,
/// at x. E depends on tau^k = s^k tau0[k] and on kappa_bar[k] only through
/// B^k = (s xi^k - n . tau^k) |e^k| / d^k - kappa_bar[k] / l_bar^k^2, d^k = A_bar l_bar^k tau^k .
/// t^k, whose derivative by xi^k is beta^k = s^k |e^k| / d^k. So, for every x,
///   dE/dtau^k = g_xi^k v^k, v^k = -s^k (n + c^k t^k), c^k = (s xi^k - n . tau^k) / tau^k . t^k,
///   dE/dkappa_bar[k] = -g_xi^k / (l_bar^k^2 beta^k),
/// and their derivatives along lambda (positions and xi) follow from Hl_xi^k and the directional
/// derivatives of v^k and beta^k (through n, t^k, |e^k| and d^k). False (outputs zero) for a
/// degenerate stencil.
SLENDER_HD inline bool shell_midedge_adjoint_terms(const Vec<12>& x,
                                                   const ShellMidedge::Params& p,
                                                   const Vec<12>& g,
                                                   const Vec<12>& Hl,
                                                   const Vec<12>& lambda,
                                                   Vec3 dtau0[3],
                                                   Real dkappa[3]) {
  detail::MidedgeGeometry geo;
  if (!detail::midedge_terms_geometry(x, p, geo, dtau0, dkappa)) return false;
  const Vec3 dx[3] = {lambda.segment<3>(0), lambda.segment<3>(3), lambda.segment<3>(6)};
  Vec3 de[3];
  for (int k = 0; k < 3; ++k)
    de[k] = dx[(k + 2) % 3] - dx[(k + 1) % 3];
  // n = N / |N|, N = e^2 x e^0
  const Vec3 dN = cross(de[2], geo.e[0]) + cross(geo.e[2], de[0]);
  const Vec3 dn = (dN - dot(geo.n, dN) * geo.n) / geo.N_norm;
  for (int k = 0; k < 3; ++k) {
    // by tau0[k] = s^k tau^k
    const Vec3 dt = cross(de[k], geo.n) + cross(geo.e[k], dn);
    const Real T = dot(geo.tau[k], geo.t[k]), dT = dot(geo.tau[k], dt);
    const Real da = p.s[k] * lambda[9 + k] - dot(dn, geo.tau[k]);
    const Real c = geo.a[k] / T, dc = (da - c * dT) / T;
    const Vec3 v = -p.s[k] * (geo.n + c * geo.t[k]);
    const Vec3 dv = -p.s[k] * (dn + dc * geo.t[k] + c * dt);
    dtau0[k] = p.s[k] * (Hl[9 + k] * v + g[9 + k] * dv);
    // by kappa_bar[k]
    const Real beta = p.s[k] * geo.l[k] / geo.d[k];
    const Real dl = dot(geo.e[k], de[k]) / geo.l[k];
    const Real dd =
        p.A_bar * p.l_bar[k] * (dot(dn, geo.m[k]) + dot(geo.n, cross(geo.tau[k], de[k])));
    const Real dbeta = p.s[k] * (dl * geo.d[k] - geo.l[k] * dd) / (geo.d[k] * geo.d[k]);
    dkappa[k] = -(Hl[9 + k] - g[9 + k] * dbeta / beta) / (p.l_bar[k] * p.l_bar[k] * beta);
  }
  return true;
}

/// For any function phi of one mid-edge stencil that reads tau^k = s^k tau0[k] and
/// kappa_bar[k] only through B^k (its energy; any function of its shape operator less the
/// actuation, such as a Kelvin-Voigt anchor's <M, Lambda - Lambda_act>), the first order of
/// shell_midedge_adjoint_terms: from phi's derivatives by the xi DOFs at x, phi_xi,
///   dphi/dtau0[k] = -phi_xi^k (n + c^k t^k),  dphi/dkappa_bar[k] = -phi_xi^k / (l_bar^k^2 beta^k).
/// False (outputs zero) for a degenerate stencil.
SLENDER_HD inline bool shell_midedge_xi_chain(const Vec<12>& x,
                                              const ShellMidedge::Params& p,
                                              const Real phi_xi[3],
                                              Vec3 dtau0[3],
                                              Real dkappa[3]) {
  detail::MidedgeGeometry geo;
  if (!detail::midedge_terms_geometry(x, p, geo, dtau0, dkappa)) return false;
  for (int k = 0; k < 3; ++k) {
    const Real c = geo.a[k] / dot(geo.tau[k], geo.t[k]);
    dtau0[k] = -phi_xi[k] * (geo.n + c * geo.t[k]);
    const Real beta = p.s[k] * geo.l[k] / geo.d[k];
    dkappa[k] = -phi_xi[k] / (p.l_bar[k] * p.l_bar[k] * beta);
  }
  return true;
}

}  // namespace slender
