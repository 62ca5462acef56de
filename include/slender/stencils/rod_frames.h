#pragma once

// Frames of discrete elastic rods (seed 000 §3.2, seed 002 §III-A): reference frames move by
// time-parallel transport, the reference twist is the angle between a director parallel
// transported from one edge to the next and that edge's own director, and the material frame
// is the reference frame turned by the edge's twist angle theta about the tangent.

#include "slender/core/types.h"

namespace slender {

/// Parallel transport of u (normal to a) from unit tangent a to unit tangent b: the rotation
/// about a x b taking a to b. Antiparallel tangents have no unique transport: the function then
/// returns u unchanged and sets *degenerate.
SLENDER_HD inline Vec3 parallel_transport(const Vec3& u,
                                          const Vec3& a,
                                          const Vec3& b,
                                          bool* degenerate = nullptr) {
  const Vec3 c = cross(a, b);
  const Real s = dot(a, b);
  if (!(1 + s > 1e-12)) {
    if (degenerate) *degenerate = true;
    return u;
  }
  // Rodrigues with sin = |c|, cos = s: u s + c x u + (c.u) c / (1 + s)
  return s * u + cross(c, u) + (dot(c, u) / (1 + s)) * c;
}

/// The first-order holonomy of parallel transport between unit tangents a and c (the adjoint's
/// frame term, engine/adjoint.h): moving either end by a small tangent change (da normal to a,
/// dc normal to c), P(a + da -> c) P(a -> a + da) = R_c(h . da) P(a -> c) and
/// P(a -> c + dc) = R_{c + dc}(h . dc) P(c -> c + dc) P(a -> c) to first order, R_t(phi) the
/// rotation by phi about t (material_frame's sense), with h = (c x a) / (1 + a . c) (normal to
/// both; the derivative of the solid angle of the small spherical triangle). Zero for a = c.
SLENDER_HD inline Vec3 transport_holonomy_gradient(const Vec3& a, const Vec3& c) {
  const Real s = 1 + dot(a, c);
  return s > 1e-12 ? cross(c, a) / s : vec3(0, 0, 0);
}

/// Signed angle from a to b about the unit axis t (a, b normal to t) [rad].
SLENDER_HD inline Real signed_angle(const Vec3& a, const Vec3& b, const Vec3& t) {
  return ::atan2(dot(cross(a, b), t), dot(a, b));
}

/// Shifts angle by a multiple of 2 pi so that it lies within pi of near.
SLENDER_HD inline Real unwrap_angle(Real angle, Real near) {
  const Real two_pi = 2 * kPi;
  while (angle - near > kPi)
    angle -= two_pi;
  while (angle - near < -kPi)
    angle += two_pi;
  return angle;
}

/// Reference twist between edge 0 and edge 1 (both oriented into / out of the shared node):
/// the angle, about t1, from d1 of edge 0 transported to edge 1 to d1 of edge 1, kept within pi
/// of `previous` so that it is continuous in time.
SLENDER_HD inline Real reference_twist(
    const Vec3& d1_0, const Vec3& t0, const Vec3& d1_1, const Vec3& t1, Real previous) {
  const Vec3 u = parallel_transport(d1_0, t0, t1);
  return unwrap_angle(signed_angle(u, d1_1, t1), previous);
}

/// Material directors m1, m2 from reference director d1, tangent t and twist angle theta.
SLENDER_HD SLENDER_INLINE void material_frame(
    const Vec3& d1, const Vec3& t, Real theta, Vec3& m1, Vec3& m2) {
  const Vec3 d2 = cross(t, d1);
  const Real c = ::cos(theta), s = ::sin(theta);
  m1 = c * d1 + s * d2;
  m2 = c * d2 - s * d1;
}

}  // namespace slender
