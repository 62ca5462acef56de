#pragma once

// seed 000 §4, eqs. (21)-(22), and seed 001 §III-B: the implicit contact model's (IMC) penalty
// energy of one contact pair, a function of the pair's distance Delta (contact_distance.h):
//   E(Delta) = k_c s^2,   s = softplus(z) / K1,   z = K1 (d - Delta),   K1 = 15 / delta,
// for Delta < d + delta, and E = 0 for Delta >= d + delta. d is the contact distance (2 r0
// rod-rod, r0 + h/2 rod-shell, h shell-shell), delta the tolerance and k_c [N/m] the stiffness
// (E [J], s [m]). With sigma the logistic function of z, by the chain rule (eq. 22),
//   E'  = dE/dDelta     = -2 k_c s sigma,
//   E'' = d2E/dDelta2   = 2 k_c (sigma^2 + K1 s sigma (1 - sigma)),
//   g = E' grad Delta,   H = E'' grad Delta grad Delta^T + E' Hess Delta,
// exact wherever Delta is smooth, i.e. within one closest-feature type of the pair (across a
// type change Delta and g are continuous and H jumps with Hess Delta).
//
// Eq. (21) and its junctions. Eq. (21) is piecewise: (d - Delta)^2 for Delta <= d - delta,
// (softplus(z) / K1)^2 between, 0 for Delta >= d + delta. Its pieces do NOT meet exactly:
// - at Delta = d - delta (z = 15) softplus(15) / K1 = delta (1 + 2.04e-8), so the quadratic
//   piece and the softplus piece differ by 4.1e-8 (relative) in E, 2.9e-7 in E' and 4.0e-6 in
//   E''. We therefore use the softplus form everywhere below d + delta: it is C-infinity there,
//   and below d - delta it differs from (d - Delta)^2 by at most that 4.1e-8 relative (s exceeds
//   d - Delta by log1p(exp(-z)) / K1 <= 2.04e-8 delta, decaying like exp(-z)), which is well
//   within the accuracy the model claims.
// - at Delta = d + delta (z = -15) the softplus form has not yet vanished: E = 4.2e-16 k_c
//   delta^2, E' = -1.25e-14 k_c delta and E'' = 3.7e-13 k_c drop to 0. These jumps are at the
//   rounding level of E, E' and E'' at the scale of contact (k_c delta^2, 2 k_c delta, 2 k_c),
//   so E is continuous and C1 to machine precision. The cut-off is kept, as in eq. (21),
//   because it makes far pairs cost nothing: they return zeros before any derivative work.
// The softplus and logistic are evaluated stably from t = exp(-|z|) in [0, 1] (no overflow).
//
// Friction (eq. 23, Tong et al.'s IMC friction; the law in friction_smooth.h). The closest points
// move with relative velocity v = sum_k w_k u_k (u_k the node velocities the integrator gives at
// x: u_k = u_hat_k + c_u (x_k - q_hat_k)), n = r / |r| (r = pA - pB = sum_k w_k x_k) is the
// contact normal, w_t = v - (n . v) n the slip and f_n = -E' >= 0 the normal force on each side.
// Side A feels -mu f_n gamma w_t / |w_t|, side B the opposite, shared among the nodes by their
// weights, so that node k feels F_k = -mu f_n phi w_k w_t (phi = gamma / |w_t|); a node's share
// is mu gamma times its own contact force |w_k| f_n, as eq. 23 states per node. The stencil
// returns g += -F and H += dg/dx through the chain rule, including the motion of the closest
// points: theta*(x) (the feature parameters) moves the weights w_k and the normal n, with
//   dtheta_a / dx_j = -sum_b G^-1_ab (w_j r_b + dw_bj r)   (implicit function theorem on
//   r . r_a = 0, r_a = sum_k dw_ak x_k, G_ab = r_a . r_b),
//   dn/dx_j = P (w_j I + sum_a r_a dtheta_a/dx_j) / |r|,   P = I - n n^T,
//   dv/dx_j = c_u w_j I + sum_a (sum_k dw_ak u_k) dtheta_a/dx_j,
//   dw_t = P dv - (n . v) dn - n (v^T dn),   df_n/dx_j = -E'' w_j n.
// The friction Jacobian is not symmetric; E is the normal energy only. Friction vanishes with
// E' (out of range) and for touching pairs (no normal).
//
// Within a step of the midpoint rule or Newmark (a ContactStep on, contact_discrete_gradient.h)
// E' and E'' give way to the secant of E over the step and its derivative, and the friction
// takes the secant as its normal force (the caller evaluates the pair at the step's midpoint;
// bindings.h).
//
// Stencils (local DOFs, node positions [m], as contact_distance.h):
//   imc_edge_edge_eval      (12): [a0, a1, b0, b1]
//   imc_point_triangle_eval (12): [p, t0, t1, t2]
//   imc_edge_triangle_eval  (15): [a0, a1, t0, t1, t2]
// Flags (out.flags) pass on the distance's bits: kDegenerate (a degenerate primitive fell back
// to a lower-dimensional feature; the derivatives are those of the fallback), kContactTouching
// (Delta <= kTinyLength: the pair has no direction, g = H = 0 although E' != 0; kDegenerate is
// set as well, since the derivatives are then not those of E) and kContactCrossing (edge-
// triangle only: the edge pierces the triangle, the true distance is 0 but Delta is the positive
// sub-pair minimum, so the penalty may push the wrong way; the caller must treat it). The flags
// are reported also for pairs out of range, which matters for kContactCrossing.

#include "slender/core/types.h"
#include "slender/stencils/contact_discrete_gradient.h"
#include "slender/stencils/contact_distance.h"
#include "slender/stencils/friction_smooth.h"

namespace slender {

/// Parameters of one IMC contact pair.
struct ImcParams {
  Real k_c;    ///< contact stiffness [N/m]: E = k_c s^2, s the smoothed penetration [m]
  Real d;      ///< contact distance [m]: 2 r0 rod-rod, r0 + h/2 rod-shell, h shell-shell
  Real delta;  ///< contact distance tolerance [m], > 0; K1 = 15 / delta
};

/// The IMC energy as a function of the distance Delta [m], with dE/dDelta and d2E/dDelta2 on
/// request (non-null pointers). Zero for Delta >= d + delta; a NaN Delta gives NaN.
SLENDER_HD inline Real imc_energy(Real Delta,
                                  const ImcParams& p,
                                  Real* dE = nullptr,
                                  Real* d2E = nullptr) {
  if (Delta >= p.d + p.delta) {
    if (dE) *dE = 0;
    if (d2E) *d2E = 0;
    return 0;
  }
  // stable softplus and logistic of z, t = exp(-|z|) in (0, 1]
  const Real K1 = 15 / p.delta;
  const Real z = K1 * (p.d - Delta);
  const Real t = ::exp(-::fabs(z));
  const Real sp = (z > 0 ? z : 0) + ::log1p(t);
  const Real sig = z > 0 ? 1 / (1 + t) : t / (1 + t);
  const Real s = sp / K1;
  if (dE) *dE = -2 * p.k_c * s * sig;
  // sigma (1 - sigma) = t / (1 + t)^2; t = 0 only when z overflowed, where sp may be inf
  if (d2E) *d2E = 2 * p.k_c * (sig * sig + (t > 0 ? sp * t / ((1 + t) * (1 + t)) : 0));
  return p.k_c * s * s;
}

/// imc_energy as a function of Delta alone (for contact_secant)
struct ImcEnergyFn {
  ImcParams p;
  SLENDER_HD Real operator()(Real D, Real* d1, Real* d2) const { return imc_energy(D, p, d1, d2); }
};

/// Coulomb friction of one IMC pair (eq. 23): off when mu is 0 or the pointer is null.
struct ImcFriction {
  Real mu;    ///< friction coefficient [-]
  Real nu;    ///< slip velocity tolerance [m/s], > 0; K2 = 15 / nu
  Real c_u;   ///< du/dx of the integrator [1/s]
  Vec3 u[5];  ///< velocities of the stencil's nodes at x [m/s], in local node order
};

namespace detail {

// friction of the pair: g += -F, and on request H += dg/dx (formulas in the header comment);
// e1 = E'(Delta), e2 = E''(Delta)
template <int N>
SLENDER_HD inline void imc_friction_add(const Vec<N>& x,
                                        const ContactDistance& cd,
                                        Real e1,
                                        Real e2,
                                        const ImcFriction& f,
                                        unsigned want,
                                        LocalEval<N>& out) {
  constexpr int K = N / 3;
  if (!(f.mu > 0) || !(e1 < 0) || (cd.flags & kContactTouching)) return;
  Vec3 X[K];
  Vec3 r = Vec3::zero(), v = Vec3::zero();
  for (int k = 0; k < K; ++k) {
    X[k] = x.template segment<3>(3 * k);
    r += cd.w[k] * X[k];
    v += cd.w[k] * f.u[k];
  }
  const Real D = norm(r);
  if (!(D > kTinyLength)) return;
  const Vec3 n = r / D;
  const Real vn = dot(n, v);
  const Vec3 wt = v - vn * n;
  const Real K2 = 15 / f.nu;
  Real T, dT_over_y;
  friction_tanh_ratio(Real(0.5) * K2 * norm(wt), T, dT_over_y);
  const Real phi = Real(0.5) * K2 * T;
  const Real fn = -e1;
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < 3; ++i)
      out.g[3 * k + i] += f.mu * fn * phi * cd.w[k] * wt[i];
  if (!(want & kHess)) return;

  // tangents r_a, velocity tangents U_a = sum_k dw_ak u_k and G^-1
  Vec3 ra[2] = {Vec3::zero(), Vec3::zero()}, Ua[2] = {Vec3::zero(), Vec3::zero()};
  for (int a = 0; a < cd.m; ++a)
    for (int k = 0; k < K; ++k) {
      ra[a] += cd.dw[a][k] * X[k];
      Ua[a] += cd.dw[a][k] * f.u[k];
    }
  Real Gi[2][2] = {{0, 0}, {0, 0}};
  if (cd.m == 1) {
    Gi[0][0] = 1 / squared_norm(ra[0]);
  } else if (cd.m == 2) {
    const Real g00 = squared_norm(ra[0]), g01 = dot(ra[0], ra[1]), g11 = squared_norm(ra[1]);
    const Real det = g00 * g11 - g01 * g01;
    Gi[0][0] = g11 / det;
    Gi[0][1] = Gi[1][0] = -g01 / det;
    Gi[1][1] = g00 / det;
  }
  // dphi = psi w_t^T dw_t, psi = phi'(r) / r
  const Real psi = Real(0.125) * K2 * K2 * K2 * dT_over_y;
  const Mat3 P = Mat3::identity() - outer(n, n);
  for (int j = 0; j < K; ++j) {
    const Real wj = cd.w[j];
    Vec3 th[2] = {Vec3::zero(), Vec3::zero()};
    for (int a = 0; a < cd.m; ++a)
      for (int b = 0; b < cd.m; ++b)
        th[a] -= Gi[a][b] * (wj * ra[b] + cd.dw[b][j] * r);
    Mat3 Dr = wj * Mat3::identity();
    Mat3 Dv = (f.c_u * wj) * Mat3::identity();
    for (int a = 0; a < cd.m; ++a) {
      Dr += outer(ra[a], th[a]);
      Dv += outer(Ua[a], th[a]);
    }
    const Mat3 Dn = (1 / D) * (P * Dr);
    const Mat3 Dwt = P * Dv - vn * Dn - outer(n, mul_transpose(Dn, v));
    // d(f_n phi)/dx_j
    const Vec3 row = (-e2 * wj * phi) * n + (fn * psi) * mul_transpose(Dwt, wt);
    for (int k = 0; k < K; ++k) {
      Vec3 dwk = Vec3::zero();
      for (int a = 0; a < cd.m; ++a)
        dwk += cd.dw[a][k] * th[a];
      Mat3 B = (fn * phi * cd.w[k]) * Dwt;
      B += outer(wt, cd.w[k] * row + (fn * phi) * dwk);
      out.H.add_block(3 * k, 3 * j, B, f.mu);
    }
  }
}

// the pair is out of range: E = 0 and zero derivatives, no derivative work; else false. With
// a step's secant (step on) the pair is out of range when it is at both ends of the step.
template <int N>
SLENDER_HD inline bool imc_out_of_range(const ContactDistance& cd,
                                        const ImcParams& p,
                                        const ContactStep* step,
                                        unsigned want,
                                        LocalEval<N>& out) {
  out.flags = cd.flags;
  const Real reach = p.d + p.delta;
  if (!(cd.delta >= reach)) return false;
  if (step && step->on() && want != kEnergy &&
      !(step->D0 >= reach && step->D0 + step->a * (cd.delta - step->D0) >= reach))
    return false;
  out.E = 0;
  if (want != kEnergy) out.g.set_zero();
  if (want & kHess) out.H.set_zero();
  return true;
}

// E, g = E' grad Delta and H = E'' grad Delta grad Delta^T + E' Hess Delta (upper triangle
// mirrored, so that H is symmetric to the bit); with a step's secant (step on) E' and E'' are
// the secant psi and dpsi / dDelta (contact_discrete_gradient.h), and the friction takes the
// secant as its normal force
template <int N>
SLENDER_HD inline void imc_compose(const Vec<N>& x,
                                   const ContactDistance& cd,
                                   const ImcParams& p,
                                   const ImcFriction* fr,
                                   const ContactStep* step,
                                   unsigned want,
                                   const Vec<N>& gD,
                                   const Mat<N, N>& HD,
                                   LocalEval<N>& out) {
  Real e1, e2;
  out.E = imc_energy(cd.delta, p, &e1, &e2);
  out.flags = cd.flags;
  // touching: the distance has no gradient, so neither has E here
  if (cd.flags & kContactTouching) out.flags |= kDegenerate;
  if (want == kEnergy) return;
  if (step && step->on()) contact_secant(ImcEnergyFn{p}, *step, cd.delta, p.delta, e1, e2);
  out.g = e1 * gD;
  if (want & kHess) {
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j) {
        const Real v = e2 * gD[i] * gD[j] + e1 * HD(i, j);
        out.H(i, j) = v;
        out.H(j, i) = v;
      }
  }
  if (fr) imc_friction_add(x, cd, e1, e2, *fr, want, out);
}

// the distance's want for the derivatives of E: the Hessian needs grad Delta too
SLENDER_HD inline unsigned imc_distance_want(unsigned want) {
  return want & kHess ? kGradHess : want;
}

// the distances of contact_distance.h behind one call shape (the edge-triangle one keeps its
// closest sub-pair, which it reports and reuses)
struct EdgeEdgeDistanceFn {
  SLENDER_HD void operator()(
      const Vec<12>& x, unsigned want, ContactDistance& d, Vec<12>* g, Mat<12, 12>* H) {
    edge_edge_distance(x, want, d, g, H);
  }
};
struct PointTriangleDistanceFn {
  SLENDER_HD void operator()(
      const Vec<12>& x, unsigned want, ContactDistance& d, Vec<12>* g, Mat<12, 12>* H) {
    point_triangle_distance(x, want, d, g, H);
  }
};
struct EdgeTriangleDistanceFn {
  int pair = 0;
  SLENDER_HD void operator()(
      const Vec<15>& x, unsigned want, ContactDistance& d, Vec<15>* g, Mat<15, 15>* H) {
    edge_triangle_distance(x, want, d, pair, g, H);
  }
};

// one pair: the distance alone first (far pairs stop there), then its derivatives as the
// energy's want needs them, composed with the penalty and the friction
template <int N, class Distance>
SLENDER_HD inline void imc_eval(const Vec<N>& x,
                                const ImcParams& p,
                                unsigned want,
                                LocalEval<N>& out,
                                ContactDistance* info,
                                const ImcFriction* fr,
                                const ContactStep* step = nullptr) {
  Distance dist;
  ContactDistance cd;
  dist(x, kEnergy, cd, nullptr, nullptr);
  if (info) *info = cd;
  if (imc_out_of_range(cd, p, step, want, out)) return;
  Vec<N> gD = Vec<N>::zero();
  Mat<N, N> HD;
  if (want != kEnergy) dist(x, imc_distance_want(want), cd, &gD, &HD);
  imc_compose(x, cd, p, fr, step, want, gD, HD, out);
}

// the derivative of imc_eval's penalty and friction forces by the distance at the step's start,
// under a step's secant (the adjoint's term): both are the secant normal force psi times one
// vector Gamma (the distance's gradient and the friction's share per unit normal force), so
// dg/dDelta_0 = (dpsi/dDelta_0) Gamma (contact_secant_start_derivative); false (dg unset) where
// it is zero, the secant is off or the pair is out of range at both ends
template <int N, class Distance>
SLENDER_HD inline bool imc_secant_start_derivative(const Vec<N>& x,
                                                   const ImcParams& p,
                                                   const ImcFriction* fr,
                                                   const ContactStep& step,
                                                   Vec<N>& dg) {
  if (!step.on()) return false;
  Distance dist;
  ContactDistance cd;
  dist(x, kEnergy, cd, nullptr, nullptr);
  LocalEval<N> out;
  if (imc_out_of_range(cd, p, &step, kGrad, out)) return false;
  Vec<N> gD = Vec<N>::zero();
  Mat<N, N> HD;
  dist(x, kGrad, cd, &gD, &HD);
  Real e1, e2;
  imc_energy(cd.delta, p, &e1, &e2);
  contact_secant(ImcEnergyFn{p}, step, cd.delta, p.delta, e1, e2);
  const Real dpsi = contact_secant_start_derivative(ImcEnergyFn{p}, step, cd.delta, p.delta);
  if (dpsi == 0) return false;
  Vec<N> G = gD;
  if (fr && e1 != 0) {  // (the friction's force per unit normal force)
    out.g.set_zero();
    imc_friction_add(x, cd, e1, e2, *fr, kGrad, out);
    G += (1 / e1) * out.g;
  }
  dg = dpsi * G;
  return true;
}

}  // namespace detail

/// IMC energy and, on request, gradient and Hessian (12 x 12; symmetric without friction) of an
/// edge-edge pair, local DOFs [a0, a1, b0, b1]. info, if given, receives the pair's closest
/// features and Delta; fr, if given, adds the pair's friction.
SLENDER_HD inline void imc_edge_edge_eval(const Vec<12>& x,
                                          const ImcParams& p,
                                          unsigned want,
                                          LocalEval<12>& out,
                                          ContactDistance* info = nullptr,
                                          const ImcFriction* fr = nullptr) {
  detail::imc_eval<12, detail::EdgeEdgeDistanceFn>(x, p, want, out, info, fr);
}

/// IMC energy and, on request, gradient and Hessian (12 x 12) of a point-triangle pair, local
/// DOFs [p, t0, t1, t2]; info and fr as for imc_edge_edge_eval.
SLENDER_HD inline void imc_point_triangle_eval(const Vec<12>& x,
                                               const ImcParams& p,
                                               unsigned want,
                                               LocalEval<12>& out,
                                               ContactDistance* info = nullptr,
                                               const ImcFriction* fr = nullptr) {
  detail::imc_eval<12, detail::PointTriangleDistanceFn>(x, p, want, out, info, fr);
}

/// IMC energy and, on request, gradient and Hessian (15 x 15) of an edge-triangle pair, local
/// DOFs [a0, a1, t0, t1, t2]; info (w[0..4]) and fr as for imc_edge_edge_eval. Check
/// kContactCrossing in out.flags: a piercing edge is not repelled.
SLENDER_HD inline void imc_edge_triangle_eval(const Vec<15>& x,
                                              const ImcParams& p,
                                              unsigned want,
                                              LocalEval<15>& out,
                                              ContactDistance* info = nullptr,
                                              const ImcFriction* fr = nullptr) {
  detail::imc_eval<15, detail::EdgeTriangleDistanceFn>(x, p, want, out, info, fr);
}

}  // namespace slender
