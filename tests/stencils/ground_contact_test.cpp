// Finite-difference, equation and limit checks of the ground contact and friction stencil.

#include "slender/stencils/ground_contact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

/// tangential velocity regimes, as multiples of the slip tolerance nu
enum class Slip { kStick, kNearStick, kSliding, kFastSliding };
constexpr Slip kAllSlips[] = {Slip::kStick, Slip::kNearStick, Slip::kSliding, Slip::kFastSliding};

const char* slip_name(Slip s) {
  switch (s) {
    case Slip::kStick:
      return "stick";
    case Slip::kNearStick:
      return "near stick";
    case Slip::kSliding:
      return "sliding";
    case Slip::kFastSliding:
      return "fast sliding";
  }
  return "";
}

Real uniform(std::mt19937_64& rng, Real lo, Real hi) {
  return std::uniform_real_distribution<Real>(lo, hi)(rng);
}

/// the wavy surface height, written independently of the stencil
Real wavy_height(const Ground& gr, Real X, Real Y) {
  const Real kx = gr.length_x > 0 ? 2 * kPi / gr.length_x : 0;
  const Real ky = gr.length_y > 0 ? 2 * kPi / gr.length_y : 0;
  return gr.offset + gr.amplitude * std::sin(kx * X + gr.phase_x) * std::sin(ky * Y + gr.phase_y);
}

Ground random_plane(std::mt19937_64& rng) {
  Ground gr{};
  gr.shape = GroundShape::kPlane;
  for (;;) {
    const Vec3 v = test::random_vec3(rng);
    if (norm(v) > 0.2) {
      gr.n = v / norm(v);
      break;
    }
  }
  gr.p0 = test::random_vec3(rng);
  return gr;
}

Ground random_wavy(std::mt19937_64& rng) {
  Ground gr{};
  gr.shape = GroundShape::kWavy;
  gr.amplitude = uniform(rng, 0.05, 0.2);
  gr.length_x = uniform(rng, 1.5, 3);
  gr.length_y = uniform(rng, 1.5, 3);
  gr.phase_x = uniform(rng, 0, 2 * kPi);
  gr.phase_y = uniform(rng, 0, 2 * kPi);
  gr.offset = uniform(rng, -0.5, 0.5);
  return gr;
}

/// a node at gap `gap` above the ground (along n for a plane, vertically for wavy ground)
Vec3 place_node(const Ground& gr, std::mt19937_64& rng, Real gap) {
  if (gr.shape == GroundShape::kPlane) {
    const Vec3 t = test::random_normal(rng, gr.n);
    return gr.p0 + uniform(rng, -1, 1) * t + gap * gr.n;
  }
  const Real X = uniform(rng, -1, 1), Y = uniform(rng, -1, 1);
  return vec3(X, Y, wavy_height(gr, X, Y) + gap);
}

/// unit direction of the normal force at x (grad Delta / |grad Delta|)
Vec3 contact_normal(const Ground& gr, const Vec3& x) {
  Vec3 d;
  Mat3 H;
  ground_distance(gr, x, d, H);
  return d / norm(d);
}

/// integrator offsets that give the node velocity u at x
void set_velocity(GroundContact::Params& p, std::mt19937_64& rng, const Vec3& x, const Vec3& u) {
  p.q_hat = x - test::random_vec3(rng, 0.05);
  p.u_hat = u - p.c_u * (x - p.q_hat);
}

/// a node velocity at x with tangential speed set by the regime and a random normal part
Vec3 random_velocity(const GroundContact::Params& p, std::mt19937_64& rng, const Vec3& x, Slip s) {
  const Vec3 m = contact_normal(p.ground, x);
  const Vec3 t = test::random_normal(rng, m);
  Real speed = 0;
  switch (s) {
    case Slip::kStick:
      speed = 0;
      break;
    case Slip::kNearStick:
      speed = 1e-3 * p.nu;
      break;
    case Slip::kSliding:
      speed = uniform(rng, 0.2, 4) * p.nu;
      break;
    case Slip::kFastSliding:
      speed = 100 * p.nu;
      break;
  }
  return speed * t + uniform(rng, -1, 1) * m;
}

GroundContact::Params random_params(std::mt19937_64& rng, const Ground& gr) {
  GroundContact::Params p{};
  p.ground = gr;
  // length scales of order one, so that central differences with h = 1e-6 resolve the ramp
  // (h K1 <= 1e-4) and the slip transition (h c_u K2 <= 3e-4); RealisticScales covers mm
  p.k_c = uniform(rng, 1e2, 1e4);
  p.delta = uniform(rng, 0.2, 0.6);
  p.mu = uniform(rng, 0.2, 1);
  p.nu = uniform(rng, 0.5, 2);
  p.c_u = uniform(rng, 1, 10);
  return p;
}

Vec3 grad_of(const GroundContact::Params& p, const Vec3& x) {
  LocalEval<3> r;
  ground_contact_eval(x, p, kGrad, r);
  return r.g;
}

Real energy_of(const GroundContact::Params& p, const Vec3& x) {
  LocalEval<3> r;
  ground_contact_eval(x, p, kEnergy, r);
  return r.E;
}

/// relative error of the stencil's Jacobian against central differences of its g
Real jacobian_fd_error(const GroundContact::Params& p, const Vec3& x) {
  LocalEval<3> r;
  ground_contact_eval(x, p, kGradHess, r);
  EXPECT_EQ(r.flags, 0u);
  const Mat3 fd = test::fd_jacobian<3>([&p](const Vec3& y) { return grad_of(p, y); }, x);
  // the gradient does not depend on whether the Jacobian was asked for
  EXPECT_EQ(test::rel_err(r.g, grad_of(p, x)), 0);
  return test::rel_err(r.H, fd);
}

/// the friction force alone: the difference of g without and with friction
Vec3 friction_force(const GroundContact::Params& p, const Vec3& x) {
  GroundContact::Params q = p;
  q.mu = 0;
  return grad_of(q, x) - grad_of(p, x);
}

bool all_finite(const LocalEval<3>& r) {
  bool ok = std::isfinite(r.E);
  for (int i = 0; i < 3; ++i)
    ok = ok && std::isfinite(r.g[i]);
  for (int i = 0; i < 9; ++i)
    ok = ok && std::isfinite(r.H.a[i]);
  return ok;
}

class GroundContactTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { rng.seed(GetParam()); }
  Ground random_ground(int shape) { return shape == 0 ? random_plane(rng) : random_wavy(rng); }
  /// a node sliding at its height h (in ramp widths) within a step of the midpoint rule's
  /// secant from a start 0.3 ramp widths away (p.step)
  Vec3 secant_node(GroundContact::Params& p, Real h) {
    const Vec3 x = place_node(p.ground, rng, h * p.delta);
    set_velocity(p, rng, x, random_velocity(p, rng, x, Slip::kSliding));
    const Vec3 x0 = x + test::random_vec3(rng, 0.3 * p.delta);
    Vec3 gd;
    Mat3 hd;
    p.step.a = 2;
    p.step.D0 = ground_distance(p.ground, x0, gd, hd);
    return x;
  }
  std::mt19937_64 rng;
};

TEST_P(GroundContactTest, JacobianMatchesCentralDifferences) {
  for (int shape = 0; shape < 2; ++shape) {
    for (Slip s : kAllSlips) {
      SCOPED_TRACE(std::string(shape == 0 ? "plane, " : "wavy, ") + slip_name(s));
      GroundContact::Params p = random_params(rng, random_ground(shape));
      // from inside the layer (penetrating) to the ramp's tail above it
      const Vec3 x = place_node(p.ground, rng, uniform(rng, -1, 2) * p.delta);
      set_velocity(p, rng, x, random_velocity(p, rng, x, s));
      EXPECT_LT(jacobian_fd_error(p, x), kFdRelTol);
      GroundContact::Params q = p;
      q.mu = 0;
      EXPECT_LT(jacobian_fd_error(q, x), kFdRelTol);
      // the friction part alone (near sticking it is a few % of the total)
      LocalEval<3> a, b;
      ground_contact_eval(x, p, kGradHess, a);
      ground_contact_eval(x, q, kGradHess, b);
      const Mat3 fd = test::fd_jacobian<3>(
          [&p, &q](const Vec3& y) { return Vec3(grad_of(p, y) - grad_of(q, y)); }, x);
      EXPECT_LT(test::rel_err(a.H - b.H, fd), kFdRelTol);
      EXPECT_GT(test::frobenius<3>(a.H - b.H), 0);
    }
  }
}

// the step's secant (contact_discrete_gradient.h), the stencil at the step's midpoint, on both
// shapes, with and without friction: the Jacobian is the derivative of the gradient with the
// step's start held
TEST_P(GroundContactTest, SecantJacobianMatchesCentralDifferences) {
  for (int shape = 0; shape < 2; ++shape) {
    SCOPED_TRACE(shape == 0 ? "plane" : "wavy");
    GroundContact::Params p = random_params(rng, random_ground(shape));
    const Vec3 x = secant_node(p, uniform(rng, -1, 2));
    EXPECT_LT(jacobian_fd_error(p, x), kFdRelTol);
    GroundContact::Params q = p;
    q.mu = 0;
    EXPECT_LT(jacobian_fd_error(q, x), kFdRelTol);
  }
}

// the secant's derivative by the distance at the step's start at a fixed midpoint (the
// adjoint's term, ground_secant_start_derivative), with and without friction, on both shapes
TEST_P(GroundContactTest, SecantStartDerivativeMatchesCentralDifferences) {
  for (int shape = 0; shape < 2; ++shape) {
    for (Real mu : {Real(0), Real(0.6)}) {
      SCOPED_TRACE(std::string(shape == 0 ? "plane" : "wavy") + (mu > 0 ? ", friction" : ""));
      GroundContact::Params p = random_params(rng, random_ground(shape));
      p.mu = mu;
      const Vec3 x = secant_node(p, uniform(rng, -1, 1));
      Vec3 dg;
      ASSERT_TRUE(ground_secant_start_derivative(x, p, dg));
      // (the fourth-order difference: the secant's quotient rounds off where a central
      // difference's step would be short enough)
      auto at = [&](Real d) {
        GroundContact::Params a = p;
        a.step.D0 += d;
        return grad_of(a, x);
      };
      const Real h = 1e-3 * p.delta;
      const Vec3 fd = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h);
      EXPECT_LT(test::rel_err(dg, fd), kFdRelTol);
    }
  }
  // no secant: no derivative
  GroundContact::Params p = random_params(rng, random_ground(0));
  Vec3 dg;
  EXPECT_FALSE(ground_secant_start_derivative(place_node(p.ground, rng, 0), p, dg));
}

// on a plane the secant's work over the step x0 -> 2 x - x0 (x its midpoint) is the penalty's
// change exactly, for steps from 1e-9 to 3 ramp widths through it; at rest (x0 = x) it is the
// pointwise force
TEST_P(GroundContactTest, SecantWorkIsThePenaltysChangeOnAPlane) {
  GroundContact::Params p = random_params(rng, random_plane(rng));
  p.mu = 0;
  const Real k1 = 15 / p.delta;
  auto phi = [&](const Vec3& y) {
    Vec3 gd;
    Mat3 hd;
    return detail::ground_penalty(ground_distance(p.ground, y, gd, hd), k1, p.k_c, nullptr,
                                  nullptr);
  };
  Vec3 gd;
  Mat3 hd;
  p.step.a = 2;
  for (Real gap0 : {Real(-0.5), Real(0.3), Real(2)}) {
    for (Real move : {Real(1e-9), Real(0.01), Real(0.7), Real(3)}) {
      const Vec3 x0 = place_node(p.ground, rng, gap0 * p.delta);
      const Vec3 dx = move * p.delta * (test::random_vec3(rng) - 1.5 * p.ground.n);
      p.step.D0 = ground_distance(p.ground, x0, gd, hd);
      const Vec3 g = grad_of(p, x0 + Real(0.5) * dx);
      const Real dphi = phi(x0 + dx) - phi(x0);
      EXPECT_NEAR(dot(g, dx), dphi, 1e-10 * (std::fabs(dphi) + p.k_c * p.delta * p.delta))
          << gap0 << " " << move;
    }
  }
  const Vec3 x = place_node(p.ground, rng, 0.2 * p.delta);
  GroundContact::Params q = p;
  q.step = ContactStep{};
  p.step.D0 = ground_distance(p.ground, x, gd, hd);
  EXPECT_LT(test::rel_err(grad_of(p, x), grad_of(q, x)), 1e-14);
}

TEST_P(GroundContactTest, GradientMatchesCentralDifferences) {
  // without friction g is the gradient of E, and H its (symmetric) Hessian
  for (int shape = 0; shape < 2; ++shape) {
    SCOPED_TRACE(shape == 0 ? "plane" : "wavy");
    GroundContact::Params p = random_params(rng, random_ground(shape));
    p.mu = 0;
    const Vec3 x = place_node(p.ground, rng, uniform(rng, -1, 2) * p.delta);
    set_velocity(p, rng, x, test::random_vec3(rng));
    LocalEval<3> r;
    ground_contact_eval(x, p, kGradHess, r);
    const Vec3 fd = test::fd_gradient<3>([&p](const Vec3& y) { return energy_of(p, y); }, x);
    EXPECT_LT(test::rel_err(r.g, fd), kFdRelTol);
    EXPECT_LT(test::rel_err(r.H, r.H.transpose()), 1e-14);
  }
}

TEST_P(GroundContactTest, WavyDistanceIsExactOnTheSurface) {
  // Delta = 0 on the surface, grad Delta is the unit normal there, and Delta, its gradient and
  // Hessian agree with central differences off it
  const Ground gr = random_wavy(rng);
  const Vec3 x = place_node(gr, rng, 0);
  Vec3 d;
  Mat3 H;
  EXPECT_NEAR(ground_distance(gr, x, d, H), 0, 1e-15);
  EXPECT_NEAR(norm(d), 1, 1e-14);
  const Real h = 1e-6;
  const Real fx = (wavy_height(gr, x[0] + h, x[1]) - wavy_height(gr, x[0] - h, x[1])) / (2 * h);
  const Real fy = (wavy_height(gr, x[0], x[1] + h) - wavy_height(gr, x[0], x[1] - h)) / (2 * h);
  EXPECT_NEAR(dot(d, vec3(1, 0, fx)), 0, 1e-9);
  EXPECT_NEAR(dot(d, vec3(0, 1, fy)), 0, 1e-9);
  EXPECT_GT(d[2], 0);

  // the vertical gap times the normal's z component
  const Real gap = uniform(rng, -0.3, 0.3);
  const Vec3 y = x + vec3(0, 0, gap);
  EXPECT_NEAR(ground_distance(gr, y, d, H), gap / std::sqrt(1 + fx * fx + fy * fy), 1e-10);
  auto dist = [&gr](const Vec3& q) {
    Vec3 dq;
    Mat3 Hq;
    return ground_distance(gr, q, dq, Hq);
  };
  auto dist_grad = [&gr](const Vec3& q) {
    Vec3 dq;
    Mat3 Hq;
    ground_distance(gr, q, dq, Hq);
    return dq;
  };
  EXPECT_LT(test::rel_err(d, test::fd_gradient<3>(dist, y)), kFdRelTol);
  EXPECT_LT(test::rel_err(H, test::fd_jacobian<3>(dist_grad, y)), kFdRelTol);
}

TEST_P(GroundContactTest, FrictionOpposesSlidingWithCoulombMagnitude) {
  // |w| = 100 nu: gamma = tanh(750) = 1, so F_fr = -mu |F_n| w / |w|, normal to F_n
  for (int shape = 0; shape < 2; ++shape) {
    SCOPED_TRACE(shape == 0 ? "plane" : "wavy");
    GroundContact::Params p = random_params(rng, random_ground(shape));
    const Vec3 x = place_node(p.ground, rng, uniform(rng, -1, 1) * p.delta);
    const Vec3 u = random_velocity(p, rng, x, Slip::kFastSliding);
    set_velocity(p, rng, x, u);
    const Vec3 m = contact_normal(p.ground, x);
    const Vec3 w = u - dot(u, m) * m;
    GroundContact::Params q = p;
    q.mu = 0;
    const Vec3 Fn = -grad_of(q, x);
    const Vec3 Ffr = friction_force(p, x);
    EXPECT_GT(dot(Fn, m), 0);  // the ground pushes the node out
    const Vec3 expected = (-p.mu * norm(Fn) / norm(w)) * w;
    EXPECT_LT(norm(Ffr - expected), 1e-12 * norm(expected));
    EXPECT_LT(std::fabs(dot(Ffr, m)), 1e-12 * norm(Ffr));
    EXPECT_LT(dot(Ffr, w), 0);
  }
}

TEST_P(GroundContactTest, FrictionVanishesAtRestAndRampsUpLinearly) {
  for (int shape = 0; shape < 2; ++shape) {
    SCOPED_TRACE(shape == 0 ? "plane" : "wavy");
    GroundContact::Params p = random_params(rng, random_ground(shape));
    const Vec3 x = place_node(p.ground, rng, uniform(rng, -1, 1) * p.delta);
    GroundContact::Params q = p;
    q.mu = 0;
    const Real fn = norm(grad_of(q, x));

    // only a normal velocity: w is rounding, and so is the friction force
    set_velocity(p, rng, x, random_velocity(p, rng, x, Slip::kStick));
    EXPECT_LT(norm(friction_force(p, x)), 1e-13 * p.mu * fn);

    // |w| = 1e-3 nu: gamma ~ K2 |w| / 2 (to (K2 |w| / 2)^2 / 3 = 2e-5 relative), viscous-like
    const Vec3 u = random_velocity(p, rng, x, Slip::kNearStick);
    set_velocity(p, rng, x, u);
    const Vec3 m = contact_normal(p.ground, x);
    const Vec3 w = u - dot(u, m) * m;
    const Vec3 expected = (-p.mu * fn * 7.5 / p.nu) * w;
    EXPECT_LT(norm(friction_force(p, x) - expected), 3e-5 * norm(expected));
  }
}

TEST_P(GroundContactTest, FarAboveTheGroundForcesVanish) {
  for (int shape = 0; shape < 2; ++shape) {
    SCOPED_TRACE(shape == 0 ? "plane" : "wavy");
    GroundContact::Params p = random_params(rng, random_ground(shape));
    const Real scale = p.k_c * p.delta;  // force scale [N]
    // a few layers up: e^-60 relative, numerically zero
    Vec3 x = place_node(p.ground, rng, 5 * p.delta);
    set_velocity(p, rng, x, random_velocity(p, rng, x, Slip::kSliding));
    LocalEval<3> r;
    ground_contact_eval(x, p, kGradHess, r);
    EXPECT_LT(r.E, 1e-40 * scale * p.delta);
    EXPECT_LT(norm(r.g), 1e-20 * scale);
    EXPECT_LT(test::frobenius<3>(r.H), 1e-20 * scale * (1 / p.delta + p.c_u / p.nu));
    // out of reach of the exponentials (z < -745), and huge heights: exactly zero
    for (Real gap : {60.0 * p.delta, 1e3, 1e8, 1e30, 1e300}) {
      SCOPED_TRACE(gap);
      x = place_node(p.ground, rng, gap);
      set_velocity(p, rng, x, random_velocity(p, rng, x, Slip::kSliding));
      ground_contact_eval(x, p, kGradHess, r);
      EXPECT_EQ(r.E, 0);
      EXPECT_EQ(norm(r.g), 0);
      EXPECT_EQ(test::frobenius<3>(r.H), 0);
    }
  }
}

TEST_P(GroundContactTest, HugePenetrationStaysFinite) {
  for (int shape = 0; shape < 2; ++shape) {
    for (Real depth : {1e3, 1e8, 1e30}) {
      SCOPED_TRACE(std::string(shape == 0 ? "plane, " : "wavy, ") + std::to_string(depth));
      GroundContact::Params p = random_params(rng, random_ground(shape));
      const Vec3 x = place_node(p.ground, rng, -depth);
      set_velocity(p, rng, x, random_velocity(p, rng, x, Slip::kSliding));
      LocalEval<3> r;
      ground_contact_eval(x, p, kGradHess, r);
      EXPECT_TRUE(all_finite(r));
      if (shape == 0) {
        // deep in, the ramp is linear: F_n = 2 k_c (-Delta) n, E = k_c Delta^2
        GroundContact::Params q = p;
        q.mu = 0;
        const Vec3 Fn = -grad_of(q, x);
        const Real s = depth;
        EXPECT_LT(norm(Fn - 2 * p.k_c * s * p.ground.n), 1e-12 * 2 * p.k_c * s);
        EXPECT_NEAR(r.E, p.k_c * s * s, 1e-12 * p.k_c * s * s);
      }
    }
  }
}

TEST_P(GroundContactTest, RealisticScalesJacobianMatchesScaledDifferences) {
  // delta = nu = 1 mm(/s), c_u = 1 / dt with dt = 1 ms: the ramp and the slip transition are
  // 1e3 to 1e7 times sharper than in the other cases, so the step shrinks to 1e-10 delta
  // (taken as the representable difference of the perturbed coordinates)
  for (int shape = 0; shape < 2; ++shape) {
    for (Slip s : kAllSlips) {
      SCOPED_TRACE(std::string(shape == 0 ? "plane, " : "wavy, ") + slip_name(s));
      GroundContact::Params p = random_params(rng, random_ground(shape));
      p.delta = 1e-3;
      p.nu = 1e-3;
      p.c_u = 1e3;
      p.k_c = 1e5;
      const Vec3 x = place_node(p.ground, rng, uniform(rng, -1, 2) * p.delta);
      set_velocity(p, rng, x, random_velocity(p, rng, x, s));
      LocalEval<3> r;
      ground_contact_eval(x, p, kGradHess, r);
      Mat3 fd;
      for (int j = 0; j < 3; ++j) {
        Vec3 xp = x, xm = x;
        xp[j] += 1e-10;
        xm[j] -= 1e-10;
        const Vec3 d = (grad_of(p, xp) - grad_of(p, xm)) / (xp[j] - xm[j]);
        for (int i = 0; i < 3; ++i)
          fd(i, j) = d[i];
      }
      EXPECT_LT(test::rel_err(r.H, fd), 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, GroundContactTest, ::testing::Range(1, 21));

TEST(GroundContact, MatchesEquations25And26) {
  // eq. (25) is dE/dx and eq. (26) d2E/dx2 with their Delta the node's distance to the ground
  // (the ramp centred on the surface), with n = z for flat ground; an inclined plane gives the
  // same along its own normal
  const Real k_c = 1e3, delta = 1e-3, K1 = 15 / delta;
  const Vec3 normals[] = {vec3(0, 0, 1), vec3(0.6, 0, 0.8), vec3(-0.48, 0.36, 0.8)};
  for (const Vec3& n : normals) {
    GroundContact::Params p{};
    p.ground.shape = GroundShape::kPlane;
    p.ground.n = n;
    p.ground.p0 = vec3(0.3, -0.2, 0.1);
    p.k_c = k_c;
    p.delta = delta;
    p.mu = 0;
    p.nu = 1e-3;
    for (Real D : {-2.0, -1.0, -0.3, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0}) {
      SCOPED_TRACE(D);
      const Vec3 x = p.ground.p0 + D * delta * n;
      LocalEval<3> r;
      ground_contact_eval(x, p, kGradHess, r);
      // at the Delta the stencil sees (the rounding of x is amplified K1 times), and with
      // log1p for log(e + 1), which loses the digits of a small e
      const Real Delta = dot(n, x - p.ground.p0);
      const Real ep = std::exp(-K1 * Delta);
      const Real f25 = k_c * (-2 * ep * std::log1p(ep)) / (K1 * (ep + 1));
      const Real j26 = k_c * (2 * ep * std::log1p(ep) + 2 * ep * ep) / ((ep + 1) * (ep + 1));
      EXPECT_LT(norm(r.g - f25 * n), 1e-12 * std::fabs(f25));
      const Mat3 J = j26 * outer(n, n);
      EXPECT_LT(test::frobenius<3>(r.H - J), 1e-12 * j26);
      const Real s = std::log1p(ep) / K1;
      EXPECT_NEAR(r.E, k_c * s * s, 1e-13 * k_c * s * s);
    }
  }
}

TEST(GroundContact, TanhRatioIsSmoothAcrossTheSeriesSwitch) {
  // T(y) = tanh(y) / y and T'(y) / y against long double closed forms (accurate where y is not
  // tiny), and the two branches meeting at the switch
  for (Real y : {1e-3, 1e-2, 0.04999, 0.05, 0.05001, 0.1, 1.0, 7.5, 40.0, 1e3}) {
    SCOPED_TRACE(y);
    Real T, dT;
    detail::friction_tanh_ratio(y, T, dT);
    const long double yl = y, th = std::tanh(yl), ch = std::cosh(yl);
    const long double T_ref = th / yl, dT_ref = (yl / (ch * ch) - th) / (yl * yl * yl);
    EXPECT_NEAR(T, double(T_ref), 1e-15 * double(T_ref));
    // long double keeps ~eps_80 / y^2 of T' / y where the closed form cancels
    EXPECT_NEAR(dT, double(dT_ref), 1e-13 * std::fabs(double(dT_ref)) + 2e-19 / (y * y));
  }
  Real Tm, dTm, Tp, dTp;
  detail::friction_tanh_ratio(detail::kFrictionSeriesY * (1 - 1e-15), Tm, dTm);
  detail::friction_tanh_ratio(detail::kFrictionSeriesY, Tp, dTp);
  EXPECT_NEAR(Tm, Tp, 1e-15);
  EXPECT_NEAR(dTm, dTp, 1e-13);
  // the sticking limit: gamma / r -> K2 / 2, phi' / r -> -K2^3 / 12
  detail::friction_tanh_ratio(0, Tm, dTm);
  EXPECT_EQ(Tm, 1);
  EXPECT_EQ(dTm, Real(-2) / 3);
}

TEST(GroundContact, OneDimensionalWaveOfSeed003) {
  // length_y = 0 and phase_y = pi / 2 freeze the y factor at 1: z = A sin(2 pi x / L)
  Ground gr{};
  gr.shape = GroundShape::kWavy;
  gr.amplitude = 6.5e-3;
  gr.length_x = 0.2;
  gr.phase_y = kPi / 2;
  for (Real X : {0.0, 0.03, 0.05, 0.12}) {
    for (Real Y : {-1.0, 0.0, 2.5}) {
      const Real f = 6.5e-3 * std::sin(2 * kPi * X / 0.2);
      const Real fx = 6.5e-3 * 2 * kPi / 0.2 * std::cos(2 * kPi * X / 0.2);
      Vec3 d;
      Mat3 H;
      const Real D = ground_distance(gr, vec3(X, Y, f + 1e-3), d, H);
      EXPECT_NEAR(D, 1e-3 / std::sqrt(1 + fx * fx), 1e-15);
      EXPECT_EQ(d[1], 0);
    }
  }
}

TEST(GroundContact, DegenerateInputStaysFinite) {
  // node exactly on the ground, at rest, no damping map, extreme tolerances: always finite
  for (Real c_u : {0.0, 1e6}) {
    for (Real tol : {1e-9, 1.0, 1e3}) {
      GroundContact::Params p{};
      p.ground.shape = GroundShape::kPlane;
      p.ground.n = vec3(0, 0, 1);
      p.k_c = 1e6;
      p.delta = tol;
      p.nu = tol;
      p.mu = 0.8;
      p.c_u = c_u;
      for (const Vec3& u : {Vec3::zero(), vec3(0, 0, -1), vec3(1e-300, 0, 0), vec3(1e3, 0, 0)}) {
        p.u_hat = u;
        LocalEval<3> r;
        ground_contact_eval(Vec3::zero(), p, kGradHess, r);
        EXPECT_TRUE(all_finite(r));
        EXPECT_EQ(r.flags, 0u);
        EXPECT_GT(-r.g[2], 0);
      }
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
