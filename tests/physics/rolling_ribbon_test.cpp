// V6, the rolling ribbon (BENCHMARKS.md; seed 003, Huang et al., Fig. 2): a closed circular ring
// of length 0.3 m released on a plane declined by theta = 25 degrees, for mu / tan(theta) from 0
// to 2. delta = s_b / s_c is the path of a marked node over the path of the centroid (the mean of
// the node positions): 1 when the ring slides, rising with mu, and constant once it rolls.
//
// Theory for a rigid ring (a hoop, I = m R^2) starting from rest, r = mu / tan(theta):
// - r >= 1/2: it rolls without slip, the centroid accelerates at g sin(theta) / 2, omega R = v,
//   and a point of the ring traces a cycloid: over whole revolutions delta = 8 R / (2 pi R);
// - r < 1/2: it slides at g (sin(theta) - mu cos(theta)) while friction spins it up at
//   mu g cos(theta) / R, so kappa = omega R / v = r / (1 - r) stays constant. A point at angle
//   beta from the contact direction moves at v sqrt(1 + kappa^2 - 2 kappa cos(beta)) and beta
//   turns uniformly with the centroid's path, so over whole revolutions delta is the mean of
//   that root over beta (1 at kappa = 0, 4 / pi at kappa = 1).
// Friction acts on the nodes, which lie on the centreline, so the point that sticks is the node
// under the centre: the ring rolls on its centreline radius R, and the wire radius only lifts it
// off the plane. The measured values (delta over whole revolutions, the rolled angle, the fitted
// acceleration) are compared with these predictions; nothing is set from them.
//
// The ring is nearly rigid: steel wire (rho = 7850, E = 200 GPa) of radius 0.5 mm bent to
// R = 0.3 / (2 pi) = 47.7 mm has Gamma_g = (E I / (rho g A))^(1/3) / R = 11.4 (gravity flattens
// it by a fraction of order Gamma_g^-3 = 7e-4). 40 nodes, motion in the x-z plane, Newmark with
// a little numerical dissipation (gamma = 0.55; implicit Euler takes omega^2 dt of the rotation's
// energy per unit time, and the rolling ring's acceleration comes out 10 % low at dt = 1 ms),
// dt = 1 ms, 0.8 s: two revolutions when it rolls, one at r = 1/4. Ground: contact layer 0.5 mm,
// k_c = the ring's weight / delta (the whole ring rests on one or two nodes), slip velocity
// 1 cm/s (a node that sticks with half its friction limit creeps at 2 atanh(1/2) nu / 15 =
// 0.7 mm/s, against speeds of 1 m/s). The scene apps/scenes/rolling_ribbon.json is the same ring
// at r = 1, run here through the scene reader.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "physics_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;                 // [m/s^2]
constexpr Real kTheta = 25 * kPi / 180;  // decline [rad]
constexpr Real kLength = 0.3;            // ring length [m]
constexpr Real kWire = 5e-4;             // wire radius [m]
constexpr Real kDensity = 7850;          // [kg/m^3]
constexpr Real kYoung = 2e11;            // [Pa]
constexpr int kNodes = 40;               // ring nodes
constexpr int kMarked = kNodes / 4;      // starts level with the centre, on the downhill side
constexpr Real kContactDistance = 5e-4;  // [m]
constexpr Real kSlipVelocity = 1e-2;     // [m/s]
constexpr Real kDuration = 0.8;          // [s]
constexpr Real kFitFrom = 0.1;           // acceleration fitted from here on, after the landing [s]

// the slope: unit normal n (free side) and downhill direction d, both in the x-z plane
struct Slope {
  Vec3 n, d;
  Real sin_theta, cos_theta;
};

// the slope of a ground plane under gravity g
Slope slope_of(const Vec3& ground_normal, const Vec3& g) {
  Slope s;
  s.n = ground_normal / norm(ground_normal);
  const Vec3 down = g / norm(g);
  const Vec3 along = down - dot(down, s.n) * s.n;
  s.sin_theta = norm(along);
  s.cos_theta = -dot(down, s.n);
  s.d = along / s.sin_theta;
  return s;
}

// the V6 ring at mu = ratio tan(theta), touching the plane with node 0 at the bottom
SceneSpec ring_on_slope(Real ratio) {
  const Real R = kLength / (2 * kPi);
  const Slope sl = slope_of(vec3(std::sin(kTheta), 0, std::cos(kTheta)), vec3(0, 0, -kG));
  SceneBuilder b;
  b.name("rolling_ring");
  const int steel = b.material("steel", kDensity, kYoung, 0.3);
  const Vec3 centre = (R + kWire) * sl.n;
  std::vector<Vec3> nodes;
  for (int i = 0; i < kNodes; ++i) {
    const Real phi = -kPi / 2 + 2 * kPi * i / kNodes;
    nodes.push_back(centre + R * (std::cos(phi) * sl.d + std::sin(phi) * sl.n));
  }
  b.polyline_rod("ring", nodes, steel, SceneBuilder::circle(kWire), /*closed=*/true);
  GroundSpec g;
  g.normal = sl.n;
  g.contact_distance = kContactDistance;
  g.slip_velocity = kSlipVelocity;
  g.friction = ratio * std::tan(kTheta);
  const Real weight = kDensity * kPi * kWire * kWire * kLength * kG;
  g.stiffness = weight / kContactDistance;
  b.ground(g);
  b.gravity(vec3(0, 0, -kG));
  IntegratorSpec& in = b.integrator();
  in.kind = IntegratorKind::kNewmark;
  in.gamma = 0.55;
  in.beta = 0.25 * (in.gamma + 0.5) * (in.gamma + 0.5);
  in.dt = 1e-3;
  in.duration = kDuration;
  in.two_d = true;
  return b.build();
}

// What one run measured.
struct RollMeasure {
  Real R = 0;             // ring radius: the marked node's initial distance from the centroid
  Real s_b = 0, s_c = 0;  // paths of the marked node and of the centroid [m]
  Real psi = 0;           // angle the ring turned through, positive rolling downhill [rad]
  Real beta0 = 0;         // marked node's initial angle from the contact direction [rad]
  int revolutions = 0;    // whole revolutions
  Real s_b_rev = 0, s_c_rev = 0;  // paths over the whole revolutions (the whole run if none)
  Real accel = 0;                 // centroid's downhill acceleration, fitted from kFitFrom [m/s^2]
  Real drop = 0;                  // centroid's travel down the slope [m]
  Real delta() const { return s_b / s_c; }
  Real delta_rev() const { return s_b_rev / s_c_rev; }
  Real kappa() const { return R * psi / s_c; }  // rolled arc / path: omega R / v, 1 rolling
};

Vec3 centroid(const State& s, int nnode) {
  Vec3 c = vec3(0, 0, 0);
  for (int k = 0; k < nnode; ++k)
    c = c + test::node_position(s, k);
  return c / Real(nnode);
}

// least-squares coefficient a2 of x(t) = a0 + a1 t + a2 t^2
Real quadratic_coefficient(const std::vector<Real>& t, const std::vector<Real>& x) {
  Real S[5] = {0, 0, 0, 0, 0}, Sx[3] = {0, 0, 0};
  for (size_t k = 0; k < t.size(); ++k) {
    Real p = 1;
    for (int j = 0; j < 5; ++j) {
      S[j] += p;
      if (j < 3) Sx[j] += p * x[k];
      p *= t[k];
    }
  }
  // normal equations [S0 S1 S2; S1 S2 S3; S2 S3 S4] a = Sx, by Cramer's rule
  auto det3 = [](Real a, Real b, Real c, Real d, Real e, Real f, Real g, Real h, Real i) {
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  };
  const Real D = det3(S[0], S[1], S[2], S[1], S[2], S[3], S[2], S[3], S[4]);
  return det3(S[0], S[1], Sx[0], S[1], S[2], Sx[1], S[2], S[3], Sx[2]) / D;
}

// Steps the simulator for `duration` and measures the paths of node `marked` and of the
// centroid, the angle the ring turned through and the centroid's acceleration down the slope.
RollMeasure roll(Simulator& sim, int marked, const Slope& sl, Real duration) {
  const Model& m = sim.model();
  const Real dt = sim.integrator().dt;
  // angle of the marked node about the centroid, from d towards n
  auto angle = [&](const Vec3& b, const Vec3& c) {
    return std::atan2(dot(b - c, sl.n), dot(b - c, sl.d));
  };
  Vec3 b = test::node_position(sim.state(), marked), c = centroid(sim.state(), m.nnode);
  const Vec3 c0 = c;
  RollMeasure out;
  out.R = norm(b - c);
  // rolling downhill turns the ring from d towards -n: the angle decreases
  Real a_prev = angle(b, c);
  out.beta0 = a_prev + kPi / 2;
  std::vector<Real> t{0}, s_b{0}, s_c{0}, psi{0}, t_fit, x_fit;
  const long steps = std::lround(duration / dt);
  for (long i = 0; i < steps; ++i) {
    const StepReport r = sim.step();
    EXPECT_TRUE(r.ok()) << "step " << i << ": " << to_string(r.status);
    if (!r.ok()) break;
    const Vec3 b1 = test::node_position(sim.state(), marked);
    const Vec3 c1 = centroid(sim.state(), m.nnode);
    const Real a1 = angle(b1, c1);
    Real turn = a_prev - a1;
    turn -= 2 * kPi * std::round(turn / (2 * kPi));  // a step turns far less than pi
    t.push_back(sim.state().time);
    s_b.push_back(s_b.back() + norm(b1 - b));
    s_c.push_back(s_c.back() + norm(c1 - c));
    psi.push_back(psi.back() + turn);
    if (sim.state().time >= kFitFrom - 1e-12) {
      t_fit.push_back(sim.state().time);
      x_fit.push_back(dot(c1 - c0, sl.d));
    }
    a_prev = a1;
    b = b1;
    c = c1;
  }
  // no degenerate stencil or LU fallback; the residual-only line search (friction has no
  // potential) may stop at its smallest step a few times in the 800 steps without harm
  // (measured: at most 3, at mu / tan(theta) = 1/4, since the ground's force ramp is centred
  // on the surface)
  EXPECT_EQ(sim.state().warn_degenerate, 0);
  EXPECT_EQ(sim.state().warn_linear_fallback, 0);
  EXPECT_LE(sim.state().warn_line_search, 4);
  out.s_b = s_b.back();
  out.s_c = s_c.back();
  out.psi = psi.back();
  out.drop = dot(c - c0, sl.d);
  out.accel = 2 * quadratic_coefficient(t_fit, x_fit);
  // paths up to the last whole revolution, interpolated within its step
  out.revolutions = int(std::floor(out.psi / (2 * kPi)));
  out.s_b_rev = out.s_b;
  out.s_c_rev = out.s_c;
  if (out.revolutions >= 1) {
    const Real target = 2 * kPi * out.revolutions;
    size_t k = 1;
    while (psi[k] < target)
      ++k;
    const Real w = (target - psi[k - 1]) / (psi[k] - psi[k - 1]);
    out.s_b_rev = s_b[k - 1] + w * (s_b[k] - s_b[k - 1]);
    out.s_c_rev = s_c[k - 1] + w * (s_c[k] - s_c[k - 1]);
  }
  return out;
}

// The rigid hoop of the header at r = mu / tan(theta).
struct RigidHoop {
  Real kappa;  // omega R / v
  Real accel;  // centroid acceleration [m/s^2]
  Real delta;  // s_b / s_c over whole revolutions
};

RigidHoop rigid_hoop(Real mu, const Slope& sl, Real g) {
  RigidHoop h;
  const Real ratio = mu * sl.cos_theta / sl.sin_theta;
  const bool rolls = ratio >= 0.5;
  h.kappa = rolls ? 1 : ratio / (1 - ratio);
  h.accel = rolls ? g * sl.sin_theta / 2 : g * (sl.sin_theta - mu * sl.cos_theta);
  // mean of sqrt(1 + kappa^2 - 2 kappa cos(beta)) over a revolution (midpoint rule: spectrally
  // accurate for kappa < 1, 3e-8 off 4 / pi at the cusp kappa = 1 with this many points)
  const int n = 4096;
  h.delta = 0;
  for (int k = 0; k < n; ++k) {
    const Real beta = 2 * kPi * (k + 0.5) / n;
    h.delta += std::sqrt(1 + h.kappa * h.kappa - 2 * h.kappa * std::cos(beta)) / n;
  }
  return h;
}

// Arc length of the cycloid traced by a point at radius R of a ring rolling without slip on
// radius R, while its angle from the contact direction goes from beta0 down to beta0 - psi:
// the point moves 2 R |sin(beta / 2)| per radian, and G(u) = int_0^u |sin| = 2 floor(u / pi) +
// 1 - cos(u mod pi) for u >= 0, odd in u.
Real cycloid_arc(Real R, Real beta0, Real psi) {
  auto G = [](Real u) {
    const Real a = std::fabs(u), k = std::floor(a / kPi);
    const Real v = 2 * k + 1 - std::cos(a - k * kPi);
    return u < 0 ? -v : v;
  };
  return 4 * R * (G(beta0 / 2) - G((beta0 - psi) / 2));
}

TEST(RollingRibbon, V6DeltaRisesWithFrictionAndPlateausWhenRolling) {
  const Real R = kLength / (2 * kPi);
  const Real Lg = std::cbrt(kYoung * kWire * kWire / (4 * kDensity * kG));  // E I / (rho g A)
  const Slope sl = slope_of(vec3(std::sin(kTheta), 0, std::cos(kTheta)), vec3(0, 0, -kG));
  const std::vector<Real> ratios = {0, 0.25, 0.5, 0.75, 1, 1.5, 2};
  std::printf("V6 rolling ring: Gamma_g = %.1f, theta = 25 deg, %d nodes, %.1f s\n", Lg / R, kNodes,
              kDuration);
  std::printf(
      "  mu/tan  delta(rev)  rigid     delta(run)  revs  kappa   rigid   accel   rigid"
      "   err     s_b/cycloid\n");
  std::vector<RollMeasure> runs;
  for (const Real ratio : ratios) {
    SCOPED_TRACE("mu / tan(theta) = " + std::to_string(ratio));
    const auto m = build_model(ring_on_slope(ratio));
    Simulator sim(m);
    const RollMeasure r = roll(sim, kMarked, sl, kDuration);
    const RigidHoop h = rigid_hoop(m->ground.friction, sl, kG);
    runs.push_back(r);
    std::printf("  %5.2f   %.5f     %.5f   %.5f     %d     %.4f  %.4f  %.4f  %.4f  %+.2f %%", ratio,
                r.delta_rev(), h.delta, r.delta(), r.revolutions, r.kappa(), h.kappa, r.accel,
                h.accel, 100 * (r.accel / h.accel - 1));
    if (h.kappa == 1) {
      std::printf("  %.4f\n", r.s_b / cycloid_arc(r.R, r.beta0, r.psi));
    } else {
      std::printf("  -\n");
    }

    // the centroid's acceleration: sliding g (sin - mu cos), rolling g sin / 2; 3 % (measured
    // within 0.01 % sliding and 0.5-1 % rolling, where the contact layer and the 40-gon's
    // vertices take about 1 % of the energy)
    EXPECT_NEAR(r.accel / h.accel, 1, 0.03);
    if (ratio == 0) {
      // frictionless: it slides without turning and the marked node keeps pace with the centroid
      EXPECT_NEAR(r.delta(), 1, 1e-2);  // measured 1e-5
      EXPECT_LT(std::fabs(r.psi), 1e-2);
      continue;
    }
    EXPECT_GE(r.revolutions, 1);
    if (ratio == 0.5) {
      // exactly at the rigid ring's threshold any loss tips it into a little slip: kappa 0.96,
      // delta 2 % short of the plateau
      EXPECT_NEAR(r.kappa(), h.kappa, 0.06);
      EXPECT_NEAR(r.delta_rev() / h.delta, 1, 0.03);
      continue;
    }
    // delta over whole revolutions against the rigid ring, 1 % (measured 0.01 % at r = 1/4,
    // -0.45 % to -0.14 % rolling); and the spin-up kappa = r / (1 - r) or rolling, 2 %
    EXPECT_NEAR(r.delta_rev() / h.delta, 1, 0.01);
    EXPECT_NEAR(r.kappa() / h.kappa, 1, 0.02);
    if (h.kappa == 1) {
      // no slip: the marked node's path is the cycloid arc of the angle the ring turned
      // through, from the node's starting angle (measured +0.1 % to +0.35 %)
      EXPECT_NEAR(r.s_b / cycloid_arc(r.R, r.beta0, r.psi), 1, 0.01);
    }
  }

  // delta never falls as friction grows (the rolling plateau may wobble by 1e-3) and is flat
  // from mu = tan(theta) on: 1 %
  for (size_t k = 1; k < runs.size(); ++k)
    EXPECT_GE(runs[k].delta_rev(), runs[k - 1].delta_rev() - 1e-3) << "at " << ratios[k];
  const Real plateau = runs[4].delta_rev();  // mu = tan(theta)
  for (size_t k = 4; k < runs.size(); ++k)
    EXPECT_NEAR(runs[k].delta_rev() / plateau, 1, 0.01) << "at " << ratios[k];
  // and near the cycloid's 8 / (2 pi) (1 %: the ring is nearly rigid)
  EXPECT_NEAR(plateau / (4 / kPi), 1, 0.01);
}

// apps/scenes/rolling_ribbon.json is the ring at mu = tan(theta): it rolls, the marked node
// traces the cycloid and the centroid runs down the slope at g sin(theta) / 2
// Huang et al. Fig. 2c: a softer ring comes to rest flattened on the ground, and below
// Gamma_g of about 1.19 over a contact length that grows as Gamma_g falls. The reference is the
// planar heavy elastica, one half by symmetry, up to the top, where theta = pi and x = 0, with
// no vertical force there: with n the force that the part beyond s exerts on the part before it,
// n' = (0, w) (w = rho g A) gives n = (P, -w (S - s)) over a lifted length S, and E I theta'' =
// -(cos(theta) n_z - sin(theta) n_x). Either the ring touches at one point (S = L / 2 from the
// bottom, theta = 0 there and its curvature kappa_b >= 0 unknown), or a straight part lies on
// the ground and the lifted part leaves it at A with theta = 0 and zero curvature (S unknown).
// Shooting on (kappa_b or S, P) makes theta = pi and x = 0 at the top (Newton with a differenced
// Jacobian, RK4 in s). The ring (100 nodes, frictionless ground with a 20 um contact layer,
// damped to rest) is compared by its height (top centreline above the bottom's) and width:
// within 0.5 % (measured within 0.1 % at Gamma_g = 3, 2 and 1).
struct ElasticaRing {
  Real height = 0, width = 0, contact = 0;  // [m]; contact = the straight length on the ground
};

ElasticaRing heavy_ring(Real gamma) {
  const Real R = kLength / (2 * kPi);
  const Real w = 1 / std::pow(gamma * R, 3);  // units of E I = 1: (E I / w)^(1/3) = gamma R
  struct End {
    Real theta, x, z, xmax;
  };
  // from s = 0 (x = x0, theta = 0, theta' = k0) over the lifted length S
  auto shoot = [&](Real x0, Real k0, Real S, Real P) {
    using Y = std::array<Real, 4>;  // x, z, theta, theta'
    auto f = [&](Real sv, const Y& y) {
      const Real nz = -w * (S - sv);
      return Y{std::cos(y[2]), std::sin(y[2]), y[3], -(std::cos(y[2]) * nz - std::sin(y[2]) * P)};
    };
    auto add = [](const Y& u, const Y& d, Real c) {
      return Y{u[0] + c * d[0], u[1] + c * d[1], u[2] + c * d[2], u[3] + c * d[3]};
    };
    const int n = 4000;
    const Real h = S / n;
    Y y{x0, 0, 0, k0};
    Real xmax = x0;
    for (int k = 0; k < n; ++k) {
      const Real sv = k * h;
      const Y k1 = f(sv, y), k2 = f(sv + h / 2, add(y, k1, h / 2));
      const Y k3 = f(sv + h / 2, add(y, k2, h / 2)), k4 = f(sv + h, add(y, k3, h));
      for (int i = 0; i < 4; ++i)
        y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      xmax = std::max(xmax, y[0]);
    }
    return End{y[2], y[0], y[1], xmax};
  };
  // Newton on (u, P) for theta(top) = pi, x(top) = 0; e(u, P) shoots, du the difference step
  auto solve = [&](Real& u, Real& P, Real du, Real max_step, auto&& e) {
    for (int it = 0; it < 60; ++it) {
      const End a = e(u, P);
      const Real r0 = a.theta - kPi, r1 = a.x;
      if (std::fabs(r0) < 1e-12 && std::fabs(r1) < 1e-12 * R) return true;
      const Real dP = 1e-6 * w * R;
      const End b = e(u + du, P), c = e(u, P + dP);
      const Real j00 = (b.theta - a.theta) / du, j01 = (c.theta - a.theta) / dP;
      const Real j10 = (b.x - a.x) / du, j11 = (c.x - a.x) / dP;
      const Real det = j00 * j11 - j01 * j10;
      const Real su = -(j11 * r0 - j01 * r1) / det, sP = -(-j10 * r0 + j00 * r1) / det;
      const Real scale = std::min(Real(1), max_step / std::max(std::fabs(su), Real(1e-300)));
      u += scale * su;
      P += scale * sP;
    }
    return false;
  };
  // one point of contact, from the bottom
  Real kb = 1 / R, P = -0.5 * w * R;
  auto point = [&](Real k, Real p) { return shoot(0, k, kLength / 2, p); };
  EXPECT_TRUE(solve(kb, P, 1e-6 / R, 0.2 / R, point)) << gamma;
  if (kb >= 0) {
    const End e = point(kb, P);
    return ElasticaRing{e.z, 2 * e.xmax, 0};
  }
  // a straight part on the ground, half of it (L / 2 - S) right of the symmetry axis
  Real S = 0.48 * kLength;
  P = -0.63 * w * R;
  auto flat = [&](Real Sv, Real p) { return shoot(kLength / 2 - Sv, 0, Sv, p); };
  EXPECT_TRUE(solve(S, P, 1e-7 * kLength, 0.02 * kLength, flat)) << gamma;
  const End e = flat(S, P);
  return ElasticaRing{e.z, 2 * e.xmax, 2 * (kLength / 2 - S)};
}

TEST(RollingRibbon, HeavyRingShapesMatchTheElastica) {
  const Real R = kLength / (2 * kPi);
  for (const Real gamma : {3.0, 2.0, 1.0}) {
    const ElasticaRing ref = heavy_ring(gamma);
    // the ring's Young's modulus for this Gamma_g: E I = w (gamma R)^3, I = pi r^4 / 4
    const Real A = kPi * kWire * kWire, I = kPi * std::pow(kWire, 4) / 4;
    const Real E = kDensity * kG * A * std::pow(gamma * R, 3) / I;
    const int n = 100;
    SceneBuilder b;
    const int mat = b.material("soft", kDensity, E, 0.3);
    std::vector<Vec3> nodes;
    for (int i = 0; i < n; ++i) {
      const Real phi = -kPi / 2 + 2 * kPi * i / n;
      nodes.push_back(vec3(R * std::cos(phi), 0, kWire + R + R * std::sin(phi)));
    }
    b.polyline_rod("ring", nodes, mat, SceneBuilder::circle(kWire), /*closed=*/true);
    GroundSpec g;
    g.contact_distance = 2e-5;
    b.ground(g);
    b.gravity(vec3(0, 0, -kG));
    b.mass_damping(30);
    b.integrator().kind = IntegratorKind::kImplicitEuler;
    b.integrator().dt = 1e-3;
    b.integrator().two_d = true;
    const auto m = build_model(b.build());
    Simulator sim(m);
    ASSERT_TRUE(test::run_steps(sim, 2000));  // 2 s: at rest
    Real zmin = INFINITY, zmax = -INFINITY, xmin = INFINITY, xmax = -INFINITY, speed = 0;
    for (int i = 0; i < n; ++i) {
      const Vec3 x = test::node_position(sim.state(), i);
      zmin = std::min(zmin, x[2]), zmax = std::max(zmax, x[2]);
      xmin = std::min(xmin, x[0]), xmax = std::max(xmax, x[0]);
      speed = std::max(speed, std::fabs(sim.state().u[3 * i + 2]));
    }
    // the nodes on the ground: within 0.1 mm of the lowest (the elastica's straight part is
    // 0.59 R = 28 mm long at Gamma_g = 1; its lifted ends rise as s^3, 0.1 mm within 1 cm)
    int low = 0;
    for (int i = 0; i < n; ++i)
      low += test::node_position(sim.state(), i)[2] < zmin + 1e-4;
    EXPECT_LT(speed, 1e-4) << "not at rest";
    std::printf(
        "heavy ring, Gamma_g = %.1f: height %.4f R (elastica %.4f R), width %.4f R "
        "(elastica %.4f R), on the ground: %d nodes (elastica %.3f R straight)\n",
        gamma, (zmax - zmin) / R, ref.height / R, (xmax - xmin) / R, ref.width / R, low,
        ref.contact / R);
    EXPECT_NEAR((zmax - zmin) / ref.height, 1, 0.005) << gamma;
    EXPECT_NEAR((xmax - xmin) / ref.width, 1, 0.005) << gamma;
    if (ref.contact > 0) {
      EXPECT_GE(low * kLength / n, ref.contact) << gamma;  // its straight part lies on the ground
    }
  }
}

TEST(RollingRibbon, SceneFileRolls) {
  const SceneSpec scene =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rolling_ribbon.json");
  ASSERT_FALSE(scene.output.csv_nodes.empty());
  const auto m = build_model(scene);
  ASSERT_TRUE(m->ground.enabled);
  const Slope sl = slope_of(m->ground.normal, m->gravity);
  const int marked = m->resolve_node(scene.output.csv_nodes[0]);
  Simulator sim(m);
  const RollMeasure r = roll(sim, marked, sl, scene.integrator.duration);
  const RigidHoop h = rigid_hoop(m->ground.friction, sl, norm(m->gravity));
  std::printf(
      "scene: delta %.4f over %d revolutions (%.4f over the run), kappa %.4f, accel "
      "%.4f vs %.4f m/s^2, %.3f m down the slope\n",
      r.delta_rev(), r.revolutions, r.delta(), r.kappa(), r.accel, h.accel, r.drop);
  ASSERT_EQ(h.kappa, 1) << "the scene should roll";
  EXPECT_GT(r.delta(), 1.1);
  EXPECT_GE(r.revolutions, 1);
  EXPECT_NEAR(r.delta_rev() / (4 / kPi), 1, 0.01);
  EXPECT_GT(r.kappa(), 0.98);
  EXPECT_NEAR(r.accel / h.accel, 1, 0.03);
  // from rest: half a t^2 down the slope
  const Real T = scene.integrator.duration;
  EXPECT_NEAR(r.drop / (0.5 * h.accel * T * T), 1, 0.05);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
