// Wrenches at rod edges (stencils/rod_wrench.h): the Jacobian of both frames against central
// differences (the follower's under the frame rule of the stencil: the reference director
// parallel transported from the evaluated configuration), not symmetric; the generalized forces
// do the work of the force and the moment on a rigid motion of the edge; a cantilever under a
// world-frame and a follower tip moment bends into the circular arc of curvature M / EI; a tip
// torque twists it by M L / GJ; a small follower tip force normal to the tip bends it as the
// fixed force does to first order and more to third; the scene field's errors.

#include "slender/stencils/rod_wrench.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

LocalEval<7> eval(const Vec<7>& x, const RodWrench::Params& p, unsigned want) {
  LocalEval<7> r;
  rod_wrench_eval(x, p, want, r);
  return r;
}

Vec3 tangent(const Vec<7>& x) {
  const Vec3 e = x.segment<3>(3) - x.segment<3>(0);
  return e / norm(e);
}

class RodWrenchStencil : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0.5, 2.0);
    const Vec3 a = test::random_vec3(rng);
    const Vec3 b = a + u(rng) * test::random_vec3(rng) + vec3(0.4, 0, 0);
    x.set_segment(0, a);
    x.set_segment(3, b);
    x[6] = 3 * (u(rng) - 1.25);
    p.d1 = test::random_normal(rng, tangent(x));
    p.F = test::random_vec3(rng, 2);
    p.M = test::random_vec3(rng, 0.7);
    p.at = GetParam() % 2;
  }
  // g at y with the reference director parallel transported from x's tangent to y's (the
  // stencil's frame rule)
  Vec<7> g_at(const Vec<7>& y) const {
    RodWrench::Params q = p;
    q.d1 = parallel_transport(p.d1, tangent(x), tangent(y));
    return eval(y, q, kGrad).g;
  }
  Vec<7> x;
  RodWrench::Params p;
};

Real asymmetry(const Mat<7, 7>& H) {
  Real a = 0;
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j)
      a = std::max(a, std::fabs(H(i, j) - H(j, i)));
  return a;
}

// both frames: the Jacobian against central differences of g (kFdRelTol = 1e-6, the suite's
// tolerance for O(h^2) differences of smooth functions), and not symmetric (asymmetry above 1 %
// of the Jacobian's size)
TEST_P(RodWrenchStencil, JacobianMatchesCentralDifferencesAndIsNotSymmetric) {
  for (int follower : {0, 1}) {
    p.follower = follower;
    const LocalEval<7> r = eval(x, p, kGradHess);
    // E: the world-frame force's potential -F . x at its node; none for the follower
    EXPECT_EQ(r.E, follower ? 0 : -dot(p.F, x.segment<3>(3 * p.at)));
    EXPECT_EQ(r.flags, 0u);
    const Mat<7, 7> fd = test::fd_jacobian<7>([this](const Vec<7>& y) { return g_at(y); }, x);
    const Real err = test::rel_err(r.H, fd);
    EXPECT_LT(err, kFdRelTol) << (follower ? "follower" : "world");
    EXPECT_GT(asymmetry(r.H), 1e-2 * test::frobenius<7>(r.H)) << (follower ? "follower" : "world");
    if (GetParam() == 1)
      std::printf("wrench %s: Jacobian vs central differences %.1e, asymmetry %.2f of |H|\n",
                  follower ? "follower" : "world", err, asymmetry(r.H) / test::frobenius<7>(r.H));
  }
}

// the generalized forces Q = -g do the work of F on its node and of M on a rigid rotation dphi
// of the edge (about any point c; the twist turns by dphi . t), for a rigid translation only
// F's; to round-off (1e-13 relative)
TEST_P(RodWrenchStencil, ForcesDoTheWorkOfTheWrenchOnRigidMotions) {
  std::mt19937_64 rng(GetParam() + 100);
  for (int follower : {0, 1}) {
    p.follower = follower;
    const Vec<7> Q = -1 * eval(x, p, kGrad).g;
    const Vec3 t = tangent(x);
    Vec3 m1, m2;
    material_frame(p.d1, t, x[6], m1, m2);
    const Vec3 F = follower ? p.F[0] * m1 + p.F[1] * m2 + p.F[2] * t : p.F;
    const Vec3 M = follower ? p.M[0] * m1 + p.M[1] * m2 + p.M[2] * t : p.M;
    const Vec3 dphi = test::random_vec3(rng), c = test::random_vec3(rng),
               v = test::random_vec3(rng);
    Vec<7> dx;
    for (int a = 0; a < 2; ++a)
      dx.set_segment(3 * a, v + cross(dphi, x.segment<3>(3 * a) - c));
    dx[6] = dot(dphi, t);
    const Vec3 dnode = dx.segment<3>(3 * p.at);
    const Real work = dot(Q, dx), expected = dot(F, dnode) + dot(M, dphi);
    EXPECT_NEAR(work, expected, 1e-13 * (norm(F) + norm(M)) * 10);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RodWrenchStencil, ::testing::Range(1, 7));

// a world-frame force alone is a constant load: zero Jacobian; a zero-length edge: flagged
TEST(RodWrench, WorldForceHasNoJacobianAndADegenerateEdgeIsFlagged) {
  Vec<7> x;
  x.set_segment(0, vec3(0, 0, 0));
  x.set_segment(3, vec3(0.1, 0.02, 0));
  x[6] = 0.3;
  RodWrench::Params p{};
  p.d1 = vec3(0, 0, 1);
  p.F = vec3(1, -2, 3);
  p.at = 1;
  const LocalEval<7> r = eval(x, p, kGradHess);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j)
      EXPECT_EQ(r.H(i, j), 0);
  EXPECT_EQ(r.g[3], -1);
  EXPECT_EQ(r.g[5], -3);
  EXPECT_EQ(r.g[0], 0);
  x.set_segment(3, vec3(0, 0, 0));
  EXPECT_TRUE(eval(x, p, kGradHess).flags & kDegenerate);
}

// ---- a clamped steel cantilever (statics) ----

constexpr Real kL = 0.1, kR = 1e-3, kE = 2.1e11, kNu = 0.3;
constexpr int kEdges = 40;
const Real kEI = kE * kPi * std::pow(kR, 4) / 4;
const Real kGJ = kE / (2 * (1 + kNu)) * kPi * std::pow(kR, 4) / 2;
const Real kDl = kL / (kEdges - 0.5);

// the rod from -dl/2 to L with its first edge held (a clamp at x = 0, as V1's cantilever), one
// wrench at the last edge, solved statically in 4 load steps
SceneBuilder cantilever(const FamilyInput& wrench) {
  SceneBuilder b;
  const int mat = b.material("steel", 7800, kE, kNu);
  const int rod = b.straight_rod("rod", vec3(-kDl / 2, 0, 0), vec3(kL, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(kR));
  b.fix_edge(rod, 0);
  b.family_input(wrench);
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().duration = 1;
  b.integrator().dt = 0.25;
  b.integrator().newton.abs_tol = 1e-9;
  // a moment or a follower has no potential: the line search measures the residual, and Newton
  // takes about 25 iterations a load step on this stiff rod (the default limit)
  b.integrator().newton.max_iters = 60;
  return b;
}

State solve(const FamilyInput& wrench) {
  Simulator sim(build_model(cantilever(wrench).spec()));
  for (int n = 0; n < 4; ++n) {
    const auto st = sim.step();
    EXPECT_TRUE(st.ok()) << "step " << n << ": status " << int(st.status) << ", " << st.iterations
                         << " iterations, residual " << st.residual << " from " << st.residual0;
  }
  return sim.state();
}

Vec3 node(const State& s, int n) { return vec3(s.q[3 * n], s.q[3 * n + 1], s.q[3 * n + 2]); }

// A tip moment M about y, in the world frame or following the tip (about the material axis
// that is y at the start: planar bending keeps it there), carries the same bending moment M at
// every node, so each turns the rod by the same angle phi, where the discrete bending energy
// EI / (2 dl) (2 tan(phi / 2))^2 has dE/dphi = M: 2 sin(phi / 2) / cos^3(phi / 2) = M dl / EI.
// The tip is then the end of the polygon of edges dl turning by phi from the clamped edge (the
// exact discrete solution: 1e-7 of the deflection, Newton's tolerance), and within 5e-4 of the
// arc of curvature k = M / EI through the clamp, (sin(k L) / k, 0, -(1 - cos(k L)) / k) (the
// polygon's vertices lie off the arc of its edges' midpoints by dl phi / 8: 2e-4 of the
// deflection at k L = 0.5). A small moment (k L = 0.01) gives the linear M L^2 / (2 EI)
// within 1 % (the task's figure).
TEST(RodWrenchCantilever, TipMomentBendsIntoTheArcOfCurvatureMOverEI) {
  for (const Real kL_ : {0.01, 0.5}) {
    const Real M = kL_ * kEI / kL, k = M / kEI;
    const Vec3 arc = vec3(std::sin(k * kL) / k, 0, -(1 - std::cos(k * kL)) / k);
    Real lo = 0, hi = 1;  // bisection for phi
    for (int i = 0; i < 200; ++i) {
      const Real mid = 0.5 * (lo + hi);
      const Real c = std::cos(mid / 2);
      (2 * std::sin(mid / 2) / (c * c * c) < M * kDl / kEI ? lo : hi) = mid;
    }
    const Real phi = 0.5 * (lo + hi);
    Vec3 polygon = vec3(-kDl / 2, 0, 0);
    for (int e = 0; e < kEdges; ++e)
      polygon += kDl * vec3(std::cos(e * phi), 0, -std::sin(e * phi));
    const Real delta = -arc[2];
    for (const char* frame : {"world", "follower"}) {
      // the follower's components: the last edge's m1, m2 at the start (straight along x)
      Simulator probe(build_model(
          cantilever(FamilyInput{"wrenches"}.part("part", "rod").vec3("moment", vec3(0, M, 0)))
              .spec()));
      const int e = kEdges - 1;
      const Vec3 d1 = vec3(probe.state().edge_d1[3 * e], probe.state().edge_d1[3 * e + 1],
                           probe.state().edge_d1[3 * e + 2]);
      Vec3 m1, m2;
      material_frame(d1, vec3(1, 0, 0), probe.state().q[3 * probe.model().nnode + e], m1, m2);
      const Vec3 moment =
          std::string(frame) == "world" ? vec3(0, M, 0) : vec3(M * m1[1], M * m2[1], 0);
      const State s = solve(
          FamilyInput{"wrenches"}.part("part", "rod").word("frame", frame).vec3("moment", moment));
      const Vec3 tip = node(s, kEdges);
      std::printf(
          "tip moment %s, k L = %.2f: tip deflection %.6e m; polygon %.6e m (%.1e), arc %.6e m "
          "(%.1e), linear %.6e m\n",
          frame, kL_, -tip[2], -polygon[2], norm(tip - polygon) / delta, delta,
          norm(tip - arc) / delta, M * kL * kL / (2 * kEI));
      EXPECT_LT(norm(tip - polygon), 1e-7 * delta) << frame;
      EXPECT_LT(norm(tip - arc), 5e-4 * delta) << frame;
      if (kL_ < 0.1) {
        const Real lin = M * kL * kL / (2 * kEI);
        EXPECT_NEAR(-tip[2], lin, 0.01 * lin) << frame;
      }
    }
  }
}

// A tip torque M about the axis (world x, or the follower's t component) twists the straight
// rod uniformly: the last edge turns by M L_t / GJ, L_t = (N - 1) dl the twist springs' length
// from the clamped edge's midpoint (x = 0) to the last edge's (the discrete twist is exact for a
// uniform torque: 1e-6 relative), within 1 % of M L / GJ (dl / 2 L = 1.3 %: L_t = L - dl / 2;
// checked with that), and the rod stays straight
TEST(RodWrenchCantilever, TipTorqueTwistsByMLOverGJ) {
  const Real M = 0.05;
  const Real Lt = (kEdges - 1) * kDl;
  for (const char* frame : {"world", "follower"}) {
    const Vec3 moment = std::string(frame) == "world" ? vec3(M, 0, 0) : vec3(0, 0, M);
    const State s = solve(
        FamilyInput{"wrenches"}.part("part", "rod").word("frame", frame).vec3("moment", moment));
    const int nnode =
        build_model(
            cantilever(FamilyInput{"wrenches"}.part("part", "rod").vec3("moment", moment)).spec())
            ->nnode;
    const Real th = s.q[3 * nnode + kEdges - 1] - s.q[3 * nnode];
    std::printf("tip torque %s: twist %.6e rad, M L_t / GJ %.6e, M L / GJ %.6e\n", frame, th,
                M * Lt / kGJ, M * kL / kGJ);
    EXPECT_NEAR(th, M * Lt / kGJ, 1e-6 * M * Lt / kGJ) << frame;
    EXPECT_NEAR(th, M * kL / kGJ, 0.01 * M * kL / kGJ + 0.5 * kDl / kL * M * kL / kGJ) << frame;
    EXPECT_LT(norm(node(s, kEdges) - vec3(kL, 0, 0)), 1e-12) << frame;
  }
}

// A tip force P normal to the tip: fixed (world -z) and following the tip's normal. Both bend
// the tip by P L^3 / (3 EI) to first order (1 % at a deflection of L / 100, the linear
// regime); their difference is odd in P and of third order, so it grows as P^2 relative to the
// deflection (x4 for 2 P; 10 % allows the next order), and the follower, whose force turns to
// pull the tip back while keeping its full normal part, bends further: the clamp moment gains
// P L theta^2 / 6 > 0 (theta = P L^2 / 2 EI the tip angle).
TEST(RodWrenchCantilever, FollowerTipForceMatchesTheFixedOneToFirstOrder) {
  auto tip_deflection = [](Real P, bool follower) {
    SceneBuilder probe =
        cantilever(FamilyInput{"wrenches"}.part("part", "rod").vec3("force", vec3(0, 0, -P)));
    const auto m = build_model(probe.spec());
    Simulator sim(m);
    const int e = kEdges - 1;
    const Vec3 d1 = vec3(sim.state().edge_d1[3 * e], sim.state().edge_d1[3 * e + 1],
                         sim.state().edge_d1[3 * e + 2]);
    Vec3 m1, m2;
    material_frame(d1, vec3(1, 0, 0), sim.state().q[3 * m->nnode + e], m1, m2);
    FamilyInput w = FamilyInput{"wrenches"}.part("part", "rod");
    if (follower)
      w.word("frame", "follower").vec3("force", vec3(-P * m1[2], -P * m2[2], 0));
    else
      w.vec3("force", vec3(0, 0, -P));
    return -node(solve(w), kEdges)[2];
  };
  const Real P1 = 0.01 * 3 * kEI / (kL * kL);  // deflection L / 100
  const Real lin = P1 * kL * kL * kL / (3 * kEI);
  const Real f1 = tip_deflection(P1, true), w1 = tip_deflection(P1, false);
  const Real f2 = tip_deflection(2 * P1, true), w2 = tip_deflection(2 * P1, false);
  const Real r1 = (f1 - w1) / w1, r2 = (f2 - w2) / w2;
  std::printf(
      "tip force P: follower %.6e m, fixed %.6e m, linear %.6e m; relative difference %.3e at "
      "P, %.3e at 2P (ratio %.3f, theory 4)\n",
      f1, w1, lin, r1, r2, r2 / r1);
  EXPECT_NEAR(f1, lin, 0.01 * lin);
  EXPECT_NEAR(w1, lin, 0.01 * lin);
  EXPECT_GT(r1, 0);
  EXPECT_NEAR(r2 / r1, 4, 0.4);
}

// ---- the scene field ----

std::string rod_scene(const std::string& wrench) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.5}],
  "rods": [{"name": "rod", "material": "m", "radius": 0.002,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.3, 0, 0], "nodes": 7}}],
  "shells": [{"name": "sheet", "material": "m", "thickness": 1e-3,
     "mesh": {"type": "rectangle", "u": [0.1, 0, 0], "v": [0, 0.1, 0], "edge_length": 0.05}}],
  "forces": {"wrenches": )" +
         wrench + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "wrench.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

TEST(RodWrenchScene, ReadsOneRowPerEntryAndNamesBadFields) {
  const auto m = build_model(
      read_scene_text(rod_scene(R"([{"part": "rod", "frame": "follower", "force": [0, 1, 0],
                     "moment": [0, 0, 0.5], "time": {"type": "ramp", "duration": 1}},
                    {"part": "rod", "edge": 0, "node": "start", "force": [1, 2, 3]}])"),
                      "wrench.json", "."));
  const FamilyTable& t = m->tables[kFamWrench];
  EXPECT_EQ(t.name, "wrenches");
  ASSERT_EQ(t.rows, 2);
  // row 0: the last edge (5) of the rod, nodes 5 -> 6, force at the end, follower
  EXPECT_EQ(t.i[0], 5);
  EXPECT_EQ(t.i[1], 6);
  EXPECT_EQ(t.i[2], 5);
  EXPECT_EQ(t.i[3], 1);
  EXPECT_EQ(t.i[4], 1);
  EXPECT_EQ(t.r[5], 0.5);
  // row 1: edge 0, at its start, world
  EXPECT_EQ(t.i[6 + 2], 0);
  EXPECT_EQ(t.i[6 + 3], 0);
  EXPECT_EQ(t.i[6 + 4], 0);
  EXPECT_TRUE(m->nonsymmetric());
  // world-frame forces alone keep the symmetric solvers
  EXPECT_FALSE(build_model(read_scene_text(rod_scene(R"({"part": "rod", "force": [0, 0, 1]})"),
                                           "wrench.json", "."))
                   ->nonsymmetric());
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"part": "rod", "edge": 6, "force": [0, 0, 1]})",
       "wrench.json:7: forces.wrenches.edge: must be an integer in [-6, 5]"},
      {R"({"part": "rod", "edge": -7, "force": [0, 0, 1]})", "forces.wrenches.edge: must be"},
      {R"({"part": "rod", "edge": 1.5, "force": [0, 0, 1]})", "forces.wrenches.edge: must be"},
      {R"({"part": "rod", "frame": "body", "force": [0, 0, 1]})",
       "forces.wrenches.frame: must be \"world\" or \"follower\", not \"body\""},
      {R"({"part": "rod", "node": "tip", "force": [0, 0, 1]})",
       "forces.wrenches.node: must be \"start\" or \"end\""},
      {R"({"part": "rod", "moment": [0, 1]})", "forces.wrenches.moment"},
      {R"({"part": "rod"})", "forces.wrenches.force: missing: a wrench needs a force"},
      {R"({"part": "sheet", "force": [0, 0, 1]})",
       "forces.wrenches.part: part 'sheet' has no rod edges"},
      {R"({"part": "hull", "force": [0, 0, 1]})", "forces.wrenches.part: no part named 'hull'"},
      {R"([{"part": "rod", "force": [0, 0, 1], "torque": 2}])",
       "forces.wrenches[0].torque: unknown field"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(rod_scene(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
  // a non-finite vector from code (JSON has none): named as the scene's fields are
  SceneBuilder b =
      cantilever(FamilyInput{"wrenches"}
                     .part("part", "rod")
                     .vec3("moment", vec3(0, std::numeric_limits<Real>::quiet_NaN(), 0)));
  try {
    build_model(b.spec());
    ADD_FAILURE() << "a NaN moment was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("forces.wrenches.moment: must be three finite numbers"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
