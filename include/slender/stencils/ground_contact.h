#pragma once

// seed 000 §5.2, eqs. (25)-(26) with the friction of eq. (23); seed 003 for inclined and uneven
// ground: penalty contact and Coulomb friction between one node and a static rigid ground.
//
// Normal contact (IMC smooth ramp, as eq. 21 with the contact distance 2 r0 replaced by 0):
//   E(Delta) = k_c s^2,   s = softplus(z) / K1,   z = -K1 Delta,   K1 = 15 / delta,
// Delta the signed distance of the node's surface above the ground (below: negative). s is a
// smoothed penetration centred on the surface, as body-body contact is centred on its contact
// distance (and as DisMech and Py-DiSMech place the floor): s -> 0 for Delta >> delta /
// 15, s = ln 2 / K1 (about delta / 22) at Delta = 0, and s -> -Delta below it; the ramp
// from no force to a spring takes about delta across the surface. A body resting on its nodes
// at Delta = 0 (rod nodes at z = r) feels 2 k_c s sigma = (ln 2 / 15) k_c delta, with the
// automatic stiffness (each node's own weight / delta: k_per_kg = |g| / delta) about 5 % of its
// weight, and settles by about weight / (2 k_c) = delta / 2 into the ground. With sigma the
// logistic function,
//   dE/dDelta   = -2 k_c s sigma(z),
//   d2E/dDelta2 = 2 k_c (sigma^2 + K1 s sigma (1 - sigma)).
// These are eqs. (25) and (26) with their "force" read as DisMech stores it, as the gradient
// dE/dx (for a flat ground, where grad Delta = n). Units: E [J] and s [m], so k_c is [N/m].
// Mind the factor 2: a deep penetration p gives E ~ k_c p^2 and a normal force ~ 2 k_c p, a
// spring of stiffness 2 k_c. (Before 2026-11 the layer sat above the surface, z = K1 (delta -
// Delta): a body at its documented resting height felt 2 k_c delta and took off.)
//
// Ground shapes (GroundShape), each with Delta(x) and its exact gradient and Hessian:
// - kPlane: Delta = n . (x - p0), n the unit normal pointing to the free side (any incline);
// - kWavy: z = f(x, y) = z0 + A sin(kx x + phase_x) sin(ky y + phase_y), k = 2 pi / L, with
//     Delta = (z - f) / sqrt(1 + |grad f|^2),
//   the vertical gap times the z component of the surface's unit normal at the point below the
//   node: the exact distance to the tangent plane there, and the true distance to first order
//   in the gap (its error is O(gap^2 curvature)). Delta, grad Delta and Hess Delta are exact
//   for this definition (they need up to third derivatives of f). grad Delta equals the surface
//   normal on the surface and tilts from it by O(gap curvature) off it; its z component is
//   1 / sqrt(1 + |grad f|^2) > 0, so it never vanishes.
// The normal force is F_n = -dE/dx = -E'(Delta) grad Delta.
//
// Friction (eq. 23, with the ground's tangent velocity): with m = grad Delta / |grad Delta| the
// direction of F_n (the surface normal on the surface),
//   u = u_hat + c_u (x - q_hat),   w = u - (m . u) m,   r = |w|,   K2 = 15 / nu,
//   F_fr = -mu gamma(r) |F_n| w / r,   gamma = 2 / (1 + exp(-K2 r)) - 1 = tanh(K2 r / 2).
// gamma / r = (K2 / 2) T(y), T(y) = tanh(y) / y, y = K2 r / 2, is even and analytic in r, so
// F_fr is smooth at w = 0 (there it acts as a viscous drag mu |F_n| K2 / 2 w); T and T'(y) / y
// switch to their Taylor series for small y instead of dividing by r.
//
// Local DOFs (3): x, the node position [m]. Outputs, for a force that is only partly potential:
// - g = -(F_n + F_fr) = E' grad Delta + mu |F_n| (gamma / r) w;
// - H = dg/dx (3 x 3), this node's block of the residual Jacobian: the normal part
//   E'' grad Delta grad Delta^T + E' Hess Delta is symmetric, the friction part is NOT (it
//   couples through u (c_u), through |F_n| and through m), so the assembly stores all 9 entries
//   (symmetric only when mu = 0);
// - E = the normal contact energy, plus the lagged normal dashpot's potential when it is on
//   (zeta > 0, c_u > 0: contact_damping.h; its gradient and Hessian are in g and H); friction
//   has no potential and adds nothing to it.
// Far above the ground (z < about -745) every exponential underflows and g = H = 0 exactly.
//
// Within a step of the midpoint rule or Newmark (p.step on, contact_discrete_gradient.h) E' and
// E'' give way to the secant of E over the step and its derivative, and the friction takes the
// secant as its normal force (the binding evaluates the node at the step's midpoint).

#include "slender/core/types.h"
#include "slender/stencils/contact_damping.h"
#include "slender/stencils/contact_discrete_gradient.h"
#include "slender/stencils/friction_smooth.h"

namespace slender {

enum class GroundShape : int { kPlane = 0, kWavy = 1 };

/// A static rigid ground surface. Seed 003's one-dimensional wave z = A sin(2 pi x / L) is kWavy
/// with length_x = L, length_y = 0 and phase_y = pi / 2.
struct Ground {
  GroundShape shape;
  Vec3 p0;         ///< kPlane: a point on the plane [m]
  Vec3 n;          ///< kPlane: unit normal, pointing to the free side [-]
  Real amplitude;  ///< kWavy: A [m]
  Real length_x;   ///< kWavy: wavelength along x [m]; 0 freezes that factor at sin(phase_x)
  Real length_y;   ///< kWavy: wavelength along y [m]; 0 freezes that factor at sin(phase_y)
  Real phase_x;    ///< kWavy: [rad]
  Real phase_y;    ///< kWavy: [rad]
  Real offset;     ///< kWavy: z0 [m]
};

struct GroundContact {
  static constexpr int kNodes = 1;
  static constexpr int kDofs = 3;
  struct Params {
    Ground ground;
    Real k_c;       ///< contact stiffness [N/m]: E = k_c s^2, s the smoothed penetration [m]
    Real k_per_kg;  ///< > 0: k_c is this times the node's mass instead [N/(m kg)] (automatic)
    Real delta;    ///< width of the smooth contact ramp about the surface [m], > 0; K1 = 15 / delta
    Real mu;       ///< Coulomb friction coefficient [-]; 0 switches friction off
    Real nu;       ///< slip velocity tolerance [m/s], > 0; K2 = 15 / nu
    Vec3 u_hat;    ///< velocity offset of the integrator [m/s]
    Vec3 q_hat;    ///< position offset of the integrator [m]
    Real c_u;      ///< du/dx of the integrator [1/s]
    Real zeta;     ///< damping ratio of the normal dashpot (contact_damping.h), 0 = none
    Real mass;     ///< the node's mass [kg] (dashpot, automatic stiffness)
    bool dashpot;  ///< the step's offsets are set (the dashpot needs them)
    ContactStep step;  ///< the step's energy-consistent normal force (off: pointwise)
    /// the dashpot's start is q_hat itself, not q_hat - u_hat / c_u (the adjoint's view of
    /// Newmark's energy-consistent contact with the velocity u_hat held: c_u = 0)
    bool start_given = false;
  };
};

namespace detail {

/// Delta of the wavy ground z = z0 + A sin(kx x + phase_x) sin(ky y + phase_y)
SLENDER_HD inline Real ground_wavy_distance(const Ground& gr,
                                            const Vec3& x,
                                            Vec3& grad,
                                            Mat3& hess) {
  const Real kx = gr.length_x > 0 ? 2 * kPi / gr.length_x : 0;
  const Real ky = gr.length_y > 0 ? 2 * kPi / gr.length_y : 0;
  const Real A = gr.amplitude;
  const Real sx = ::sin(kx * x[0] + gr.phase_x), cx = ::cos(kx * x[0] + gr.phase_x);
  const Real sy = ::sin(ky * x[1] + gr.phase_y), cy = ::cos(ky * x[1] + gr.phase_y);

  // f and its partial derivatives up to third order
  const Real f = gr.offset + A * sx * sy;
  const Real fx = A * kx * cx * sy, fy = A * ky * sx * cy;
  const Real fxx = -A * kx * kx * sx * sy, fyy = -A * ky * ky * sx * sy;
  const Real fxy = A * kx * ky * cx * cy;
  const Real fxxx = -kx * kx * fx, fxxy = -kx * kx * fy;
  const Real fxyy = -ky * ky * fx, fyyy = -ky * ky * fy;

  // rho = 1 / sqrt(1 + |grad f|^2): grad rho = -rho^3 Hf grad f,
  // Hess rho = 3 rho^5 (Hf grad f)(Hf grad f)^T - rho^3 (Hf^2 + sum_k f_k dHf/dx_k)
  const Real rho = 1 / ::sqrt(1 + fx * fx + fy * fy);
  const Real rho3 = rho * rho * rho, rho5 = rho3 * rho * rho;
  const Real qx = fxx * fx + fxy * fy, qy = fxy * fx + fyy * fy;
  const Real rx = -rho3 * qx, ry = -rho3 * qy;
  const Real rxx = 3 * rho5 * qx * qx - rho3 * (fxx * fxx + fxy * fxy + fx * fxxx + fy * fxxy);
  const Real rxy = 3 * rho5 * qx * qy - rho3 * (fxy * (fxx + fyy) + fx * fxxy + fy * fxyy);
  const Real ryy = 3 * rho5 * qy * qy - rho3 * (fxy * fxy + fyy * fyy + fx * fxyy + fy * fyyy);

  // Delta = rho h, h = z - f: grad h = (-fx, -fy, 1), Hess h = -Hf (xy block)
  // grad Delta = rho grad h + h grad rho
  // Hess Delta = rho Hess h + grad h grad rho^T + grad rho grad h^T + h Hess rho
  const Real h = x[2] - f;
  grad = vec3(-rho * fx + h * rx, -rho * fy + h * ry, rho);
  const Real hxx = -rho * fxx - 2 * fx * rx + h * rxx;
  const Real hxy = -rho * fxy - fx * ry - fy * rx + h * rxy;
  const Real hyy = -rho * fyy - 2 * fy * ry + h * ryy;
  hess = Mat3{{hxx, hxy, rx, hxy, hyy, ry, rx, ry, 0}};
  return rho * h;
}

}  // namespace detail

/// Signed distance Delta [m] of point x above the ground (first order for kWavy, see above),
/// with its exact gradient and Hessian for that definition.
SLENDER_HD inline Real ground_distance(const Ground& gr, const Vec3& x, Vec3& grad, Mat3& hess) {
  if (gr.shape == GroundShape::kWavy) return detail::ground_wavy_distance(gr, x, grad, hess);
  grad = gr.n;
  hess = Mat3::zero();
  return dot(gr.n, x - gr.p0);
}

namespace detail {

/// the normal penalty E(Delta) = k_c s^2 (s = softplus(-K1 Delta) / K1) and, where d1 (d2) is
/// not null, E' (E'')
SLENDER_HD inline Real ground_penalty(Real D, Real K1, Real k_c, Real* d1, Real* d2) {
  // stable softplus and logistic of z = -K1 Delta, t = exp(-|z|) in [0, 1]
  const Real z = -K1 * D;
  const Real t = ::exp(-::fabs(z));
  const Real sp = (z > 0 ? z : 0) + ::log1p(t);
  const Real sig = z > 0 ? 1 / (1 + t) : t / (1 + t);
  const Real s = sp / K1;
  // E' = dE/dDelta <= 0 and E'' = d2E/dDelta2, with sigma (1 - sigma) = t / (1 + t)^2
  if (d1) *d1 = -2 * k_c * s * sig;
  // (t > 0 guards inf * 0 when an overflowing z = +inf makes sp infinite)
  if (d2) *d2 = 2 * k_c * (sig * sig + (t > 0 ? sp * t / ((1 + t) * (1 + t)) : 0));
  return k_c * s * s;
}

/// ground_penalty as a function of Delta alone (for contact_secant)
struct GroundPenaltyFn {
  Real K1, k_c;
  SLENDER_HD Real operator()(Real D, Real* d1, Real* d2) const {
    return ground_penalty(D, K1, k_c, d1, d2);
  }
};

/// the penalty and friction parts of ground_contact_eval, with the stiffness k_c in use
SLENDER_HD inline void ground_penalty_friction_eval(
    const Vec3& x, const GroundContact::Params& p, Real k_c, unsigned want, LocalEval<3>& out) {
  out.flags = 0;
  Vec3 dD;
  Mat3 HD;
  const Real D = ground_distance(p.ground, x, dD, HD);
  const Real K1 = 15 / p.delta;
  // e1, e2: the normal force's E' and dE'/dDelta, pointwise or the step's secant
  // (contact_discrete_gradient.h)
  Real e1, e2;
  out.E = ground_penalty(D, K1, k_c, &e1, &e2);
  if (want == kEnergy) return;
  if (p.step.on()) contact_secant(GroundPenaltyFn{K1, k_c}, p.step, D, p.delta, e1, e2);
  out.g.set_zero();
  out.H.set_zero();
  // out of reach: return before the geometry (huge far above a wavy ground) meets a zero
  if (e1 == 0 && e2 == 0) return;

  // normal part: g = E' grad Delta, H = E'' grad Delta grad Delta^T + E' Hess Delta
  out.g = e1 * dD;
  const bool hess = want & kHess;
  if (hess) {
    add_outer(out.H, dD, e2);
    out.H.add_block(0, 0, HD, e1);
  }
  if (!(p.mu > 0)) return;

  // friction: g_fr = mu fn phi w, fn = |F_n| = -E' |grad Delta|, phi = gamma / r = (K2 / 2) T(y)
  const Real a = norm(dD);
  const Vec3 m = dD / a;
  const Real fn = -e1 * a;
  const Real K2 = 15 / p.nu;
  const Vec3 u = p.u_hat + p.c_u * (x - p.q_hat);
  const Real um = dot(m, u);
  const Vec3 w = u - um * m;
  const Real y = Real(0.5) * K2 * norm(w);
  Real T, dT_over_y;
  detail::friction_tanh_ratio(y, T, dT_over_y);
  const Real phi = Real(0.5) * K2 * T;
  out.g += (p.mu * fn * phi) * w;
  if (!hess) return;

  // dphi/dx = psi w^T dw/dx with psi = phi'(r) / r = (K2^3 / 8) T'(y) / y
  const Real psi = Real(0.125) * K2 * K2 * K2 * dT_over_y;
  // dm/dx = P Hess Delta / a, P = I - m m^T; dw/dx = c_u P - m (dm/dx^T u)^T - (m . u) dm/dx
  const Mat3 P = Mat3::identity() - outer(m, m);
  const Mat3 dm = (1 / a) * (P * HD);
  const Mat3 dw = p.c_u * P - outer(m, mul_transpose(dm, u)) - um * dm;
  // dfn/dx = -E'' a grad Delta - E' Hess Delta m
  const Vec3 dfn = (-e2 * a) * dD - e1 * (HD * m);
  // dg_fr/dx = mu [phi w dfn^T + fn (phi I + psi w w^T) dw/dx]
  Mat3 S = phi * Mat3::identity();
  add_outer(S, w, psi);
  out.H.add_block(0, 0, outer(w, dfn), p.mu * phi);
  out.H.add_block(0, 0, S * dw, p.mu * fn);
}

}  // namespace detail

/// The derivative of ground_contact_eval's penalty and friction forces by the distance Delta_0 at
/// the step's start, where the normal force is the step's secant psi (p.step on; the adjoint's
/// term): both are psi times Gamma = grad Delta - mu |grad Delta| phi w (ground_penalty_friction
/// _eval), so dg/dDelta_0 = (dpsi/dDelta_0) Gamma (contact_secant_start_derivative). False (dg
/// unset) where it is zero or the secant is off.
SLENDER_HD inline bool ground_secant_start_derivative(const Vec3& x,
                                                      const GroundContact::Params& p,
                                                      Vec3& dg) {
  if (!p.step.on()) return false;
  const Real k_c = p.k_per_kg > 0 ? p.k_per_kg * p.mass : p.k_c;
  Vec3 dD;
  Mat3 HD;
  const Real D = ground_distance(p.ground, x, dD, HD);
  const Real K1 = 15 / p.delta;
  const Real dpsi =
      contact_secant_start_derivative(detail::GroundPenaltyFn{K1, k_c}, p.step, D, p.delta);
  if (dpsi == 0) return false;
  Vec3 G = dD;
  if (p.mu > 0) {
    const Real a = norm(dD);
    const Vec3 m = dD / a;
    const Real K2 = 15 / p.nu;
    const Vec3 u = p.u_hat + p.c_u * (x - p.q_hat);
    const Vec3 w = u - dot(m, u) * m;
    Real T, dT_over_y;
    detail::friction_tanh_ratio(Real(0.5) * K2 * norm(w), T, dT_over_y);
    G += (-p.mu * a * Real(0.5) * K2 * T) * w;
  }
  dg = dpsi * G;
  return true;
}

/// Normal contact energy (E), negated contact and friction forces (g) and, on request, their
/// Jacobian (H, not symmetric when mu > 0) of one node against the ground, and the normal
/// dashpot (contact_damping.h) with the normal, activation and mass at the step's start.
SLENDER_HD inline void ground_contact_eval(const Vec3& x,
                                           const GroundContact::Params& p,
                                           unsigned want,
                                           LocalEval<3>& out) {
  // the automatic stiffness is per node, proportional to its mass (every node settles alike)
  const Real k_c = p.k_per_kg > 0 ? p.k_per_kg * p.mass : p.k_c;
  detail::ground_penalty_friction_eval(x, p, k_c, want, out);
  if (!(p.zeta > 0 && (p.c_u > 0 || p.start_given) && p.mass > 0 && p.dashpot)) return;
  Vec3 w;
  Mat3 Hl;
  const Real Dl =
      ground_distance(p.ground, p.start_given ? p.q_hat : p.q_hat - (1 / p.c_u) * p.u_hat, w, Hl);
  const Real a2 = dot(w, w);
  if (!(a2 > 0)) return;
  const Real c = 2 * p.zeta * ::sqrt(2 * k_c * p.mass / a2) * contact_logistic(-15 / p.delta * Dl);
  add_contact_damping<3>(w, c, p.u_hat + p.c_u * (x - p.q_hat), p.c_u, want, out);
}

/// The normal dashpot's part of ground_contact_eval's negated force, g_d = c (w . u) w, and its
/// derivative by the step's start position q_s = q_hat - u_hat / c_u, which sets the dashpot's
/// normal w, its activation and its coefficient c (the adjoint's term: the force's dependence
/// on u through x is in the Jacobian). False (and nothing written) where there is no dashpot.
SLENDER_HD inline bool ground_dashpot_start_derivative(const Vec3& x,
                                                       const GroundContact::Params& p,
                                                       Vec3& g_d,
                                                       Mat3& dg_dqs) {
  if (!(p.zeta > 0 && p.c_u > 0 && p.mass > 0 && p.dashpot)) return false;
  const Real k_c = p.k_per_kg > 0 ? p.k_per_kg * p.mass : p.k_c;
  Vec3 w;
  Mat3 Hl;
  const Vec3 qs = p.q_hat - (1 / p.c_u) * p.u_hat;
  const Real Dl = ground_distance(p.ground, qs, w, Hl);
  const Real a2 = dot(w, w);
  if (!(a2 > 0)) return false;
  const Real K = 15 / p.delta;
  const Real sig = contact_logistic(-K * Dl);
  const Real c0 = 2 * p.zeta * ::sqrt(2 * k_c * p.mass / a2);
  const Real c = c0 * sig;
  const Vec3 u = p.u_hat + p.c_u * (x - p.q_hat);
  const Real vn = dot(w, u);
  g_d = (c * vn) * w;
  // grad c = sigma grad c0 + c0 sigma' grad z, with grad c0 = -c0 Hl w / a2 and
  // sigma' = sigma (1 - sigma), grad z = -K w
  const Vec3 Hw = Hl * w, Hu = Hl * u;
  Vec3 gc;
  for (int i = 0; i < 3; ++i)
    gc[i] = -sig * c0 * Hw[i] / a2 - c0 * sig * (1 - sig) * K * w[i];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      dg_dqs(i, j) = vn * w[i] * gc[j] + c * w[i] * Hu[j] + c * vn * Hl(i, j);
  return true;
}

}  // namespace slender
