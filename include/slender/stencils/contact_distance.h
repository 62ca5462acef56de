#pragma once

// seed 001 §III-B, eqs. (21)-(24), and seed 000 §4: closest-feature type and distance Delta
// between contact primitives, with the gradient and Hessian of Delta w.r.t. the node positions.
//
// Stencils (local DOFs, node positions [m]):
//   edge-edge      (12): [a0, a1, b0, b1]; edge A runs a0 -> a1, edge B runs b0 -> b1
//   point-triangle (12): [p, t0, t1, t2]
//   edge-triangle  (15): [a0, a1, t0, t1, t2]
// Features are numbered per primitive: a point has 0; an edge has its nodes 0, 1 and its interior
// 2; a triangle has its vertices 0, 1, 2, its edges 3 (t0 t1), 4 (t1 t2), 5 (t2 t0) and its
// interior 6. The type follows from the pair: point-point, point-edge, edge-edge (line-line
// distance |(a0 - b0) . n|, n = e1 x e2 / |e1 x e2|) or point-triangle (distance to the plane).
//
// Classification. Delta is the minimum of |pA - pB| over the two primitives, a convex problem in
// the primitives' parameters (s, t) or barycentrics. If the unconstrained minimizer (closest
// points of the two lines, projection of the point onto the plane) lies strictly inside both
// primitives, the pair is interior-interior. Otherwise the minimum lies on the boundary of the
// parameter domain, i.e. on a lower-dimensional sub-pair: the four endpoint-segment problems of
// two edges, the three point-segment problems of a triangle, each solved by clamped projection,
// and the smallest wins (ties go to the first in the order listed in the code).
//
// Parallel and degenerate primitives. Two edges with |e1 x e2| <= kContactParallelSin |e1| |e2|
// skip the line-line candidate and take the endpoint-segment minimum, which is exact for
// parallel edges and exceeds the true distance by at most kContactParallelSin times the overlap
// length below the threshold, so Delta is continuous to that level. A triangle with
// |n| <= kContactParallelSin l_max^2 (l_max its longest edge; then its inradius is below
// kContactParallelSin l_max / 2) or an edge shorter than kTinyLength is treated by its edges
// only, likewise. An edge shorter than kTinyLength counts as its first node. Such fallbacks set
// kDegenerate. The normals e1 x e2 and (t1 - t0) x (t2 - t0) are formed with fused
// multiply-adds (Kahan's difference of products), which keeps them accurate to a few ulps even
// for nearly parallel edges or slivers, so the line-line and point-plane distances stay
// accurate to a few machine epsilons times the primitive size right down to the threshold
// (with plain products the error grows like epsilon / sin(angle): 1e-5 near sin = 1e-12).
//
// Derivatives. Every feature pair is an affine family of point pairs: the closest points differ
// by r(theta) = pA - pB = sum_k w_k(theta) x_k, affine in m = 0 (point-point), 1 (point-edge) or
// 2 (edge-edge, point-triangle) parameters theta, and Delta = |r| at the minimizing theta*, where
// r . r_a = 0 with the tangents r_a = dr/dtheta_a. Write v (x) c for the stencil vector whose
// node-k block is v_k c. The envelope theorem gives
//   grad Delta = w (x) u,   u = r / Delta,
// and differentiating theta*(x) implicitly, with G_ab = r_a . r_b, the dual tangents
// r^a = G^-1_ab r_b and dw_a = dw / dtheta_a,
//   Hess Delta = (w w^T) (x) Q / Delta - Delta sum_ab G^-1_ab (dw_a (x) u) (dw_b (x) u)^T
//              - sum_a [(dw_a (x) u) (w (x) r^a)^T + (w (x) r^a) (dw_a (x) u)^T],
// Q = I - u u^T - sum_a r_a r^a^T the projector normal to u and to the tangents: I - u u^T for
// point-point, b b^T with b = u x r_0 / |r_0| for point-edge, and 0 for edge-edge and
// point-triangle (the line-line and point-plane distances have no 1/Delta singularity). The
// dual tangents come from cross products with the accurate normal, not from inverting G. These
// are the exact derivatives of the chosen pair's smooth distance function. Where the type
// changes (a closest point reaches an end of its feature) Delta and its gradient are continuous
// and the Hessian jumps; at the parallel and degenerate fallbacks Delta is continuous only to the
// level above. Near parallel edges the line-line Hessian grows like 1 / sin(angle).
//
// Contact (Delta <= kTinyLength) has no direction: g and H are zero and kContactTouching is set.

#include "slender/core/types.h"

namespace slender {

/// Closest-feature type of a contact pair (seed 001, Fig. 4).
enum class ContactType : int { kPointPoint, kPointEdge, kEdgeEdge, kPointTriangle };

/// Flag bits of a contact distance, besides kDegenerate (a degenerate primitive fell back to a
/// lower-dimensional feature).
enum ContactFlag : unsigned {
  kContactTouching = 2u,  ///< Delta <= kTinyLength: no direction, g and H are zero
  kContactCrossing = 4u,  ///< edge-triangle: the edge pierces the triangle (true distance 0)
};

/// Sine of the angle between two edges at or below which they count as parallel; also the
/// ratio |n| / l_max^2 at or below which a triangle counts as flat.
constexpr Real kContactParallelSin = 1e-12;

/// Closest features and distance of one contact pair.
struct ContactDistance {
  ContactType type;
  int a;          ///< closest feature on primitive A (edge A, the point, the edge of edge-triangle)
  int b;          ///< closest feature on primitive B (edge B, the triangle)
  Real delta;     ///< distance Delta [m]
  Real w[5];      ///< node weights of the closest points: pA - pB = sum_k w[k] x_k (sum 0);
                  ///< w[4] is used by the 15-DOF edge-triangle stencil only
  int m;          ///< number of parameters theta of the closest feature pair (0, 1 or 2)
  Real dw[2][5];  ///< dw[a][k] = d w[k] / d theta_a, a < m (w is affine in theta)
  unsigned flags;  ///< kDegenerate and ContactFlag bits
};

namespace detail {

// a * b - c * d to a few ulps (Kahan): the fma recovers the rounding error of c * d
SLENDER_HD inline Real diff_of_products(Real a, Real b, Real c, Real d) {
  const Real cd = c * d;
  return ::fma(a, b, -cd) + ::fma(-c, d, cd);
}

// a x b with each component accurate to a few ulps, even for nearly parallel a and b
SLENDER_HD inline Vec3 cross_accurate(const Vec3& a, const Vec3& b) {
  return vec3(diff_of_products(a[1], b[2], a[2], b[1]), diff_of_products(a[2], b[0], a[0], b[2]),
              diff_of_products(a[0], b[1], a[1], b[0]));
}

// one feature pair of a 4-node stencil: r = pA - pB = sum_k w[k] X[k], affine in m parameters
struct ContactPair {
  Real w[4];
  Real dw[2][4];  // d w / d theta_a
  int m;
  Vec3 r;
  Real delta;
};

SLENDER_HD inline void contact_pair_clear(ContactPair& c) {
  for (int k = 0; k < 4; ++k)
    c.w[k] = c.dw[0][k] = c.dw[1][k] = 0;
}

// point node i against segment (j, k) by clamped projection; sign = +1 puts the point on
// primitive A, -1 on B. Returns the segment feature: 0 (node j), 1 (node k), 2 (interior). A
// segment shorter than kTinyLength is its node j.
SLENDER_HD inline int point_segment(const Vec3* X, int i, int j, int k, Real sign, ContactPair& c) {
  const Vec3 e = X[k] - X[j], d = X[i] - X[j];
  const Real ee = dot(e, e);
  const Real t = ee > kTinyLength * kTinyLength ? dot(d, e) / ee : 0;
  contact_pair_clear(c);
  c.w[i] = sign;
  int f;
  if (!(t > 0)) {
    c.m = 0;
    c.w[j] = -sign;
    c.r = sign * d;
    f = 0;
  } else if (!(t < 1)) {
    c.m = 0;
    c.w[k] = -sign;
    c.r = sign * (X[i] - X[k]);
    f = 1;
  } else {
    // theta = t along the segment: w_j = -sign (1 - t), w_k = -sign t
    c.m = 1;
    c.w[j] = -sign * (1 - t);
    c.w[k] = -sign * t;
    c.dw[0][j] = sign;
    c.dw[0][k] = -sign;
    c.r = sign * (d - t * e);
    f = 2;
  }
  c.delta = norm(c.r);
  return f;
}

// a triangle that is too flat to carry a normal, or has an edge shorter than kTinyLength
SLENDER_HD inline bool triangle_degenerate(const Vec3& t0,
                                           const Vec3& t1,
                                           const Vec3& t2,
                                           Real nn) {
  const Real l0 = squared_norm(t1 - t0), l1 = squared_norm(t2 - t1), l2 = squared_norm(t0 - t2);
  const Real lmax = l0 > l1 ? (l0 > l2 ? l0 : l2) : (l1 > l2 ? l1 : l2);
  const Real lmin = l0 < l1 ? (l0 < l2 ? l0 : l2) : (l1 < l2 ? l1 : l2);
  const Real tol = kContactParallelSin * lmax;
  return !(nn > tol * tol) || !(lmin > kTinyLength * kTinyLength);
}

// gradient w (x) u and Hessian of Delta for the pair c (formulas in the header comment)
SLENDER_HD inline void contact_pair_derivatives(const Vec3* X,
                                                const ContactPair& c,
                                                Vec<12>* g,
                                                Mat<12, 12>* H) {
  const Vec3 u = c.r / c.delta;
  if (g) {
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 3; ++i)
        (*g)[3 * k + i] = c.w[k] * u[i];
  }
  if (!H) return;

  // tangents r_a, their duals r^a and the normal projector Q
  Vec3 ra[2] = {Vec3::zero(), Vec3::zero()}, rd[2] = {Vec3::zero(), Vec3::zero()};
  for (int a = 0; a < c.m; ++a) {
    ra[a] = Vec3::zero();
    for (int k = 0; k < 4; ++k)
      ra[a] += c.dw[a][k] * X[k];
  }
  Mat3 Q = Mat3::zero();
  if (c.m == 0) {
    Q = Mat3::identity() - outer(u, u);
  } else if (c.m == 1) {
    const Real tt = squared_norm(ra[0]);
    rd[0] = ra[0] / tt;
    const Vec3 b = cross(u, ra[0] / ::sqrt(tt));
    Q = outer(b, b);
  } else {
    const Vec3 n = cross_accurate(ra[0], ra[1]);
    const Real nn = squared_norm(n);
    rd[0] = cross(ra[1], n) / nn;
    rd[1] = cross(n, ra[0]) / nn;
  }

  // per node: alpha_kl = sum_ab G^-1_ab dw_ak dw_bl and M_k = sum_a dw_ak r^a
  Real alpha[4][4];
  Vec3 M[4];
  for (int k = 0; k < 4; ++k) {
    M[k] = Vec3::zero();
    for (int a = 0; a < c.m; ++a)
      M[k] += c.dw[a][k] * rd[a];
  }
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 4; ++l) {
      Real s = 0;
      for (int a = 0; a < c.m; ++a)
        for (int b = 0; b < c.m; ++b)
          s += dot(rd[a], rd[b]) * c.dw[a][k] * c.dw[b][l];
      alpha[k][l] = s;
    }

  // H_(k,i),(l,j) = w_k w_l Q_ij / Delta - Delta alpha_kl u_i u_j - w_l u_i M_kj - w_k M_li u_j,
  // the upper triangle mirrored so that H is symmetric to the bit
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i)
      for (int l = k; l < 4; ++l)
        for (int j = (l == k ? i : 0); j < 3; ++j) {
          const Real v = c.w[k] * c.w[l] * Q(i, j) / c.delta - c.delta * alpha[k][l] * u[i] * u[j] -
                         c.w[l] * u[i] * M[k][j] - c.w[k] * M[l][i] * u[j];
          (*H)(3 * k + i, 3 * l + j) = v;
          (*H)(3 * l + j, 3 * k + i) = v;
        }
}

// copy the chosen pair into d and write the requested derivatives
SLENDER_HD inline void contact_finish(const Vec3* X,
                                      const ContactPair& c,
                                      unsigned want,
                                      ContactDistance& d,
                                      Vec<12>* g,
                                      Mat<12, 12>* H) {
  d.delta = c.delta;
  d.m = c.m;
  for (int k = 0; k < 4; ++k) {
    d.w[k] = c.w[k];
    d.dw[0][k] = c.dw[0][k];
    d.dw[1][k] = c.dw[1][k];
  }
  d.w[4] = d.dw[0][4] = d.dw[1][4] = 0;
  if (!(want & kGrad)) g = nullptr;
  if (!(want & kHess)) H = nullptr;
  // touching: no direction to differentiate along
  if (!(c.delta > kTinyLength)) {
    d.flags |= kContactTouching;
    if (g) g->set_zero();
    if (H) H->set_zero();
    return;
  }
  if (g || H) contact_pair_derivatives(X, c, g, H);
}

// kDegenerate for a degenerate edge or triangle, else kContactCrossing if the edge passes
// through the triangle's interior (its nodes strictly on opposite sides of the plane)
SLENDER_HD inline unsigned edge_triangle_flags(const Vec<15>& x) {
  const Vec3 a0 = x.segment<3>(0), a1 = x.segment<3>(3), t0 = x.segment<3>(6);
  const Vec3 e1 = x.segment<3>(9) - t0, e2 = x.segment<3>(12) - t0;
  const Vec3 n = cross_accurate(e1, e2);
  const Real nn = squared_norm(n);
  if (!(squared_norm(a1 - a0) > kTinyLength * kTinyLength) ||
      triangle_degenerate(t0, x.segment<3>(9), x.segment<3>(12), nn)) {
    return kDegenerate;
  }
  const Real h0 = dot(a0 - t0, n), h1 = dot(a1 - t0, n);
  if (!((h0 > 0 && h1 < 0) || (h0 < 0 && h1 > 0))) return 0;
  // barycentrics of the crossing point, as in point_triangle_distance
  const Vec3 dp = a0 + (h0 / (h0 - h1)) * (a1 - a0) - t0;
  const Real b1 = dot(cross_accurate(dp, e2), n) / nn;
  const Real b2 = dot(cross_accurate(e1, dp), n) / nn;
  return b1 > 0 && b2 > 0 && 1 - b1 - b2 > 0 ? kContactCrossing : 0u;
}

SLENDER_HD inline ContactType edge_pair_type(int fa, int fb) {
  const int dim = (fa == 2) + (fb == 2);
  return dim == 0 ? ContactType::kPointPoint
                  : (dim == 1 ? ContactType::kPointEdge : ContactType::kEdgeEdge);
}

}  // namespace detail

/// Closest features and distance of two edges; on request (want bits and non-null pointers) the
/// gradient g (12) and Hessian H (12 x 12, symmetric) of Delta w.r.t. [a0, a1, b0, b1].
/// Features: a on edge A and b on edge B, each 0 / 1 (node) or 2 (interior).
SLENDER_HD inline void edge_edge_distance(
    const Vec<12>& x, unsigned want, ContactDistance& d, Vec<12>* g, Mat<12, 12>* H) {
  const Vec3 X[4] = {x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9)};
  const Vec3 e1 = X[1] - X[0], e2 = X[3] - X[2];
  const Real l1 = squared_norm(e1), l2 = squared_norm(e2), tiny2 = kTinyLength * kTinyLength;
  d.flags = 0;
  detail::ContactPair c;

  if (!(l1 > tiny2) || !(l2 > tiny2)) {
    // a zero-length edge is its first node
    d.flags |= kDegenerate;
    if (!(l1 > tiny2)) {
      d.a = 0;
      d.b = detail::point_segment(X, 0, 2, 3, 1, c);
    } else {
      d.a = detail::point_segment(X, 2, 0, 1, -1, c);
      d.b = 0;
    }
    d.type = detail::edge_pair_type(d.a, d.b);
    detail::contact_finish(X, c, want, d, g, H);
    return;
  }

  // closest points of the two lines, pA = a0 + s e1 and pB = b0 + t e2, unless parallel:
  // s = ((b0 - a0) x e2) . n / |n|^2, t = ((b0 - a0) x e1) . n / |n|^2
  const Vec3 n = detail::cross_accurate(e1, e2);
  const Real nn = squared_norm(n);
  if (nn > kContactParallelSin * kContactParallelSin * l1 * l2) {
    const Vec3 dd = X[2] - X[0];
    const Real s = dot(detail::cross_accurate(dd, e2), n) / nn;
    const Real t = dot(detail::cross_accurate(dd, e1), n) / nn;
    if (s > 0 && s < 1 && t > 0 && t < 1) {
      // line-line distance; r is the normal part of a0 - b0, exactly along n
      detail::contact_pair_clear(c);
      c.m = 2;
      c.w[0] = 1 - s;
      c.w[1] = s;
      c.w[2] = -(1 - t);
      c.w[3] = -t;
      c.dw[0][0] = -1;
      c.dw[0][1] = 1;
      c.dw[1][2] = 1;
      c.dw[1][3] = -1;
      const Vec3 nu = n / ::sqrt(nn);
      const Real h = -dot(dd, nu);
      c.r = h * nu;
      c.delta = ::fabs(h);
      d.a = d.b = 2;
      d.type = ContactType::kEdgeEdge;
      detail::contact_finish(X, c, want, d, g, H);
      return;
    }
  }

  // the boundary: each endpoint against the other segment; the first smallest wins
  const int pt[4] = {0, 1, 2, 3}, sj[4] = {2, 2, 0, 0};
  for (int q = 0; q < 4; ++q) {
    detail::ContactPair cq;
    const bool on_a = q < 2;
    const int f = detail::point_segment(X, pt[q], sj[q], sj[q] + 1, on_a ? 1 : -1, cq);
    if (q == 0 || cq.delta < c.delta) {
      c = cq;
      d.a = on_a ? q : f;
      d.b = on_a ? f : q - 2;
    }
  }
  d.type = detail::edge_pair_type(d.a, d.b);
  detail::contact_finish(X, c, want, d, g, H);
}

/// Closest features and distance of a point and a triangle; on request the gradient g (12) and
/// Hessian H (12 x 12, symmetric) of Delta w.r.t. [p, t0, t1, t2]. Features: a = 0 (the point);
/// b a vertex 0-2, an edge 3-5 or the interior 6 of the triangle.
SLENDER_HD inline void point_triangle_distance(
    const Vec<12>& x, unsigned want, ContactDistance& d, Vec<12>* g, Mat<12, 12>* H) {
  const Vec3 X[4] = {x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9)};
  const Vec3 e1 = X[2] - X[1], e2 = X[3] - X[1];
  const Vec3 n = detail::cross_accurate(e1, e2);
  const Real nn = squared_norm(n);
  d.flags = 0;
  d.a = 0;
  detail::ContactPair c;

  if (detail::triangle_degenerate(X[1], X[2], X[3], nn)) {
    d.flags |= kDegenerate;
  } else {
    // barycentrics of the projection, p' = t0 + l1 e1 + l2 e2:
    // l1 = ((p - t0) x e2) . n / |n|^2, l2 = (e1 x (p - t0)) . n / |n|^2
    const Vec3 dp = X[0] - X[1];
    const Real b1 = dot(detail::cross_accurate(dp, e2), n) / nn;
    const Real b2 = dot(detail::cross_accurate(e1, dp), n) / nn;
    const Real b0 = 1 - b1 - b2;
    if (b0 > 0 && b1 > 0 && b2 > 0) {
      // distance to the plane, theta = (l1, l2); r is the normal part of p - t0
      detail::contact_pair_clear(c);
      c.m = 2;
      c.w[0] = 1;
      c.w[1] = -b0;
      c.w[2] = -b1;
      c.w[3] = -b2;
      c.dw[0][1] = 1;
      c.dw[0][2] = -1;
      c.dw[1][1] = 1;
      c.dw[1][3] = -1;
      const Vec3 nu = n / ::sqrt(nn);
      const Real h = dot(dp, nu);
      c.r = h * nu;
      c.delta = ::fabs(h);
      d.b = 6;
      d.type = ContactType::kPointTriangle;
      detail::contact_finish(X, c, want, d, g, H);
      return;
    }
  }

  // the boundary: the point against each edge (tk, tk+1); the first smallest wins
  for (int q = 0; q < 3; ++q) {
    detail::ContactPair cq;
    const int j = 1 + q, k = 1 + (q + 1) % 3;
    const int f = detail::point_segment(X, 0, j, k, 1, cq);
    if (q == 0 || cq.delta < c.delta) {
      c = cq;
      d.b = f == 2 ? 3 + q : (f == 0 ? j - 1 : k - 1);
    }
  }
  d.type = d.b < 3 ? ContactType::kPointPoint : ContactType::kPointEdge;
  detail::contact_finish(X, c, want, d, g, H);
}

/// Closest features and distance of an edge and a triangle, as the minimum over five sub-pairs
/// (pair 0, 1: edge node a0, a1 against the triangle; pair 2 + q: the edge against triangle edge
/// q = (tq, tq+1)); the first smallest wins. On request the gradient g (15) and Hessian H
/// (15 x 15) of that sub-pair's Delta w.r.t. [a0, a1, t0, t1, t2]. Features: a on the edge
/// (0, 1 node, 2 interior), b on the triangle (as point_triangle_distance). An edge that pierces
/// the triangle has true distance 0, which no sub-pair sees: Delta stays the sub-pair minimum
/// (continuous) and kContactCrossing is set. kDegenerate marks a degenerate edge or triangle.
SLENDER_HD inline void edge_triangle_distance(
    const Vec<15>& x, unsigned want, ContactDistance& d, int& pair, Vec<15>* g, Mat<15, 15>* H) {
  // local nodes of each sub-pair within the 15-DOF stencil
  const int nodes[5][4] = {{0, 2, 3, 4}, {1, 2, 3, 4}, {0, 1, 2, 3}, {0, 1, 3, 4}, {0, 1, 4, 2}};
  auto gather = [&](int q) {
    Vec<12> y;
    for (int k = 0; k < 4; ++k)
      y.set_segment(3 * k, x.segment<3>(3 * nodes[q][k]));
    return y;
  };
  auto eval = [&](int q, unsigned wq, ContactDistance& dq, Vec<12>* gq, Mat<12, 12>* Hq) {
    if (q < 2) {
      point_triangle_distance(gather(q), wq, dq, gq, Hq);
    } else {
      edge_edge_distance(gather(q), wq, dq, gq, Hq);
    }
  };

  // the smallest sub-pair
  ContactDistance best;
  pair = 0;
  for (int q = 0; q < 5; ++q) {
    ContactDistance dq;
    eval(q, kEnergy, dq, nullptr, nullptr);
    if (q == 0 || dq.delta < best.delta) {
      best = dq;
      pair = q;
    }
  }

  // again with derivatives, scattered to the 15 DOFs
  Vec<12> gq;
  Mat<12, 12> Hq;
  eval(pair, want, best, (want & kGrad) && g ? &gq : nullptr, (want & kHess) && H ? &Hq : nullptr);
  d.type = best.type;
  d.delta = best.delta;
  d.flags = best.flags & ~unsigned(kDegenerate);
  d.m = best.m;
  for (int k = 0; k < 5; ++k)
    d.w[k] = d.dw[0][k] = d.dw[1][k] = 0;
  for (int k = 0; k < 4; ++k) {
    d.w[nodes[pair][k]] = best.w[k];
    d.dw[0][nodes[pair][k]] = best.dw[0][k];
    d.dw[1][nodes[pair][k]] = best.dw[1][k];
  }
  if (pair < 2) {
    d.a = pair;
    d.b = best.b;
  } else {
    // triangle edge q = pair - 2 runs t_q -> t_(q+1)
    const int q = pair - 2;
    d.a = best.a;
    d.b = best.b == 2 ? 3 + q : (best.b == 0 ? q : (q + 1) % 3);
  }
  if ((want & kGrad) && g) {
    g->set_zero();
    for (int k = 0; k < 4; ++k)
      g->set_segment(3 * nodes[pair][k], gq.segment<3>(3 * k));
  }
  if ((want & kHess) && H) {
    H->set_zero();
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 4; ++l)
        H->add_block(3 * nodes[pair][k], 3 * nodes[pair][l], Hq.block<3, 3>(3 * k, 3 * l));
  }

  d.flags |= detail::edge_triangle_flags(x);
}

}  // namespace slender
