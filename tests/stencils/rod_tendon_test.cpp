// Tendons along rods (stencils/rod_tendon.h): a segment's gradient against central differences
// of its energy T L and its Hessian against central differences of the gradient (under the
// stencil's frame rule: the reference directors parallel transported from the evaluated
// configuration), symmetric; the cable's forces do no work on a rigid motion; the assembled
// Jacobian of two tendons on a bent, twisted rod against central differences of the residual,
// and a negative tension (a slack cable) adds nothing; a cantilever with a tendon through every
// node, anchored at its tip, bends as under the end moment T d (M L^2 / (2 EI) for a small T,
// the arc of curvature T d / EI for a large one); the scene field's errors.

#include "slender/stencils/rod_tendon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "load_share_fd.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::kFdRelTol;

LocalEval<14> eval(const Vec<14>& x, const RodTendon::Params& p, unsigned want) {
  LocalEval<14> r;
  rod_tendon_eval(x, p, want, r);
  return r;
}

Vec3 tangent(const Vec<14>& x, int j) {
  const Vec3 e = x.segment<3>(7 * j + 3) - x.segment<3>(7 * j);
  return e / norm(e);
}

// random segments: two edges of lengths 0.5 to 2 (far apart or sharing a node), each point at
// a node (w = 0, 1), the midpoint or anywhere along its edge, offsets up to 0.4 of the edge, any
// twist; tension 2.5
class RodTendonStencil : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(GetParam());
    std::uniform_real_distribution<Real> u(0, 1);
    const Vec3 a0 = test::random_vec3(rng);
    const Vec3 b0 = a0 + (0.5 + 1.5 * u(rng)) * test::random_vec3(rng) + vec3(0.3, 0, 0);
    // seeds 1, 4: the second edge starts where the first ends (consecutive nodes of a rod)
    const Vec3 a1 = GetParam() % 3 == 1 ? b0 : b0 + test::random_vec3(rng);
    const Vec3 b1 = a1 + (0.5 + 1.5 * u(rng)) * test::random_vec3(rng) + vec3(0.3, 0.1, 0);
    x.set_segment(0, a0);
    x.set_segment(3, b0);
    x.set_segment(7, a1);
    x.set_segment(10, b1);
    const Real ws[4] = {0, 1, 0.5, u(rng)};
    for (int j = 0; j < 2; ++j) {
      x[7 * j + 6] = 4 * (u(rng) - 0.5);
      p.d1[j] = test::random_normal(rng, tangent(x, j));
      p.w[j] = ws[(GetParam() + 3 * j) % 4];
      p.r1[j] = 0.4 * (u(rng) - 0.5);
      p.r2[j] = 0.4 * (u(rng) - 0.5);
    }
    p.T = 2.5;
  }
  // the stencil at y with each reference director parallel transported from x's tangent to
  // y's (the stencil's frame rule)
  LocalEval<14> at(const Vec<14>& y, unsigned want) const {
    RodTendon::Params q = p;
    for (int j = 0; j < 2; ++j)
      q.d1[j] = parallel_transport(p.d1[j], tangent(x, j), tangent(y, j));
    return eval(y, q, want);
  }
  Vec<14> x;
  RodTendon::Params p;
};

// E = T |p_1 - p_0| with p = (1 - w) x_a + w x_b + r1 m1 + r2 m2; g against central differences
// of E and H against central differences of g (kFdRelTol = 1e-6, the suite's tolerance for
// O(h^2) differences of smooth functions). H's symmetric part is the Hessian of E (second
// differences of E: kFdHessRelTol = 1e-5); its antisymmetric part, -(r G_perp^T - G_perp r^T) /
// (2 l^2) in each point's edge block (the frame rule's), is there (above 1e-3 of |H| on these
// offsets) and is that term (1e-12 of |H|)
TEST_P(RodTendonStencil, GradientAndJacobianMatchCentralDifferences) {
  const LocalEval<14> r = eval(x, p, kGradHess);
  EXPECT_EQ(r.flags, 0u);
  Vec3 pt[2], rr[2];
  for (int j = 0; j < 2; ++j) {
    Vec3 m1, m2;
    material_frame(p.d1[j], tangent(x, j), x[7 * j + 6], m1, m2);
    rr[j] = p.r1[j] * m1 + p.r2[j] * m2;
    pt[j] = (1 - p.w[j]) * x.segment<3>(7 * j) + p.w[j] * x.segment<3>(7 * j + 3) + rr[j];
  }
  EXPECT_NEAR(r.E, p.T * norm(pt[1] - pt[0]), 1e-14 * r.E);
  auto energy = [this](const Vec<14>& y) { return at(y, kEnergy).E; };
  const Vec<14> fd_g = test::fd_gradient<14>(energy, x);
  const Mat<14, 14> fd_H =
      test::fd_jacobian<14>([this](const Vec<14>& y) { return at(y, kGrad).g; }, x);
  const Real eg = test::rel_err(r.g, fd_g), eh = test::rel_err(r.H, fd_H);
  EXPECT_LT(eg, kFdRelTol);
  EXPECT_LT(eh, kFdRelTol);
  const Mat<14, 14> sym = Real(0.5) * (r.H + r.H.transpose());
  const Real es = test::rel_err(sym, test::fd_hessian<14>(energy, x));
  EXPECT_LT(es, test::kFdHessRelTol);
  // the antisymmetric part
  const Vec3 u = (pt[1] - pt[0]) / norm(pt[1] - pt[0]);
  Mat<14, 14> anti = Mat<14, 14>::zero();
  for (int j = 0; j < 2; ++j) {
    const Vec3 t = tangent(x, j), G = (j ? p.T : -p.T) * u, gp = G - dot(G, t) * t;
    const Real l = norm(x.segment<3>(7 * j + 3) - x.segment<3>(7 * j));
    const Mat3 A = (-0.5 / (l * l)) * (outer(rr[j], gp) - outer(gp, rr[j]));
    anti.add_block(7 * j, 7 * j, A, 1);
    anti.add_block(7 * j, 7 * j + 3, A, -1);
    anti.add_block(7 * j + 3, 7 * j, A, -1);
    anti.add_block(7 * j + 3, 7 * j + 3, A, 1);
  }
  const Mat<14, 14> skew_part = Real(0.5) * (r.H - r.H.transpose());
  const Real norm_H = test::frobenius<14>(r.H);
  EXPECT_GT(test::frobenius<14>(skew_part), 1e-3 * norm_H);
  EXPECT_LT(test::frobenius<14>(skew_part - anti), 1e-12 * norm_H);
  if (GetParam() == 1)
    std::printf(
        "tendon segment: gradient vs central differences %.1e, Jacobian %.1e, its symmetric "
        "part vs the energy's second differences %.1e; antisymmetric part %.2g of |H|\n",
        eg, eh, es, test::frobenius<14>(skew_part) / norm_H);
}

// the cable's length does not change on a rigid motion (translation v, rotation dphi about c,
// each edge's twist turning by dphi . t): its forces do no work, to round-off
TEST_P(RodTendonStencil, ForcesDoNoWorkOnRigidMotions) {
  std::mt19937_64 rng(GetParam() + 100);
  const Vec<14> g = eval(x, p, kGrad).g;
  const Vec3 dphi = test::random_vec3(rng), c = test::random_vec3(rng), v = test::random_vec3(rng);
  Vec<14> dx;
  for (int j = 0; j < 2; ++j) {
    for (int a = 0; a < 2; ++a)
      dx.set_segment(7 * j + 3 * a, v + cross(dphi, x.segment<3>(7 * j + 3 * a) - c));
    dx[7 * j + 6] = dot(dphi, tangent(x, j));
  }
  EXPECT_NEAR(dot(g, dx), 0, 1e-13 * norm(g) * norm(dx));
}

INSTANTIATE_TEST_SUITE_P(Seeds, RodTendonStencil, ::testing::Range(1, 7));

// Through the centreline of a straight edge (no offset), the segment's forces are T along it:
// -T u at the first point's node, +T u at the second's, and its Jacobian is symmetric; a
// zero-length edge or two points at the same place are flagged, with zero forces
TEST(RodTendon, CentrelineSegmentPullsItsEndsTogetherAndDegenerateOnesAreFlagged) {
  Vec<14> x;
  x.set_zero();
  x.set_segment(3, vec3(0.1, 0, 0));
  x.set_segment(7, vec3(0.1, 0, 0));
  x.set_segment(10, vec3(0.3, 0, 0));
  RodTendon::Params p{};
  p.d1[0] = p.d1[1] = vec3(0, 0, 1);
  p.w[0] = 0;
  p.w[1] = 1;
  p.T = 3;
  const LocalEval<14> r = eval(x, p, kGradHess);
  EXPECT_NEAR(r.E, 3 * 0.3, 1e-15);
  const Real want[14] = {-3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0};
  for (int i = 0; i < 14; ++i)
    EXPECT_NEAR(r.g[i], want[i], 1e-15) << i;
  // without offsets the Jacobian is symmetric
  for (int i = 0; i < 14; ++i)
    for (int j = 0; j < 14; ++j)
      EXPECT_EQ(r.H(i, j), r.H(j, i));
  p.w[1] = 0;
  x.set_segment(10, vec3(0.1, 0, 0));  // the second edge of no length
  EXPECT_TRUE(eval(x, p, kGradHess).flags & kDegenerate);
  x.set_segment(10, vec3(0.3, 0, 0));
  x.set_segment(7, vec3(0, 0, 0));  // both points at the origin
  const LocalEval<14> d = eval(x, p, kGradHess);
  EXPECT_TRUE(d.flags & kDegenerate);
  EXPECT_EQ(d.g[0], 0);
}

// ---- the assembled Jacobian against central differences ----

// A soft rod (E = 1 MPa, 10 edges of 1 cm, radius 2 mm, clamped at edge 0) with two tendons: a
// helical one through every node (offset 1.5 mm, turning from 0 to 3 rad along the rod, 0.2 N)
// and one through the midpoints of edges 2, 5, 8 and 9 at 1 mm and 2 rad (0.1 N, 1.8 mm at the
// last), bent out of plane by gravity and a side load and twisted by an initial spin, after
// four steps (frames transported): the tendons' part of the residual, f(T) - f(0) with the
// tensions and 0 set as load values, and of the Jacobian, on the same configurations. At the
// step's start (where the frame rule is the residual's) J's part matches central differences of
// f's (h = 1e-7 on 1 cm edges; kFdRelTol = 1e-6); it is not symmetric (the offsets' frame
// terms), so the model is. Negative tensions (slack cables) give the residual of zero tensions,
// bit for bit.
TEST(RodTendonJacobian, MatchesCentralDifferencesOfTheResidual) {
  SceneBuilder b;
  const int mat = b.material("soft", 1000, 1e6, 0.45);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), 11, mat, SceneBuilder::circle(2e-3));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.point_load(rod, -1, vec3(0, 2e-3, 0));
  std::vector<Real> turn;
  for (int i = 0; i <= 10; ++i)
    turn.push_back(0.3 * i);
  b.family_input(FamilyInput{"tendons"}
                     .part("part", "rod")
                     .number("offset", 1.5e-3)
                     .list("angle", turn)
                     .number("tension", 0.2));
  b.family_input(FamilyInput{"tendons"}
                     .part("part", "rod")
                     .list("edges", {2, 5, 8, -1})
                     .list("offset", {1e-3, 1e-3, 1e-3, 1.8e-3})
                     .number("angle", 2)
                     .number("tension", 0.1));
  b.integrator().dt = 5e-3;
  const auto model = build_model(b.build());
  ASSERT_EQ(model->tables[kFamTendon].rows, 10 + 3);
  EXPECT_TRUE(model->nonsymmetric());
  Simulator sim(model);
  State s = sim.state();
  for (int e = 0; e < model->nedge; ++e)
    s.u[3 * size_t(model->nnode) + e] = 20.0 * e;  // a spin growing along the rod
  sim.set_state(s);
  for (int n = 0; n < 4; ++n)
    ASSERT_TRUE(sim.step().ok());
  const Real dt = 5e-3;
  const AssemblyPlan& plan = model->plan;
  const std::vector<Real> y = sim.state().q;
  auto set_tensions = [&](Real t0, Real t1) {
    sim.set_load_value("tendons", 0, t0);
    sim.set_load_value("tendons", 1, t1);
  };
  const test::LoadShareFd fd = test::load_share_vs_fd(
      sim, dt, plan, y, [&](bool on) { on ? set_tensions(0.2, 0.1) : set_tensions(0, 0); });
  const Real rel = fd.rel, asym = fd.asymmetry;
  std::printf(
      "tendons: Jacobian vs central differences of the residual %.2e (|J| %.3g, asymmetry "
      "%.2g)\n",
      rel, fd.fd_norm, asym);
  EXPECT_GT(fd.force_norm, 0.1);  // the cables' forces are there
  EXPECT_LT(rel, kFdRelTol);
  EXPECT_GT(asym, 1e-9 * fd.fd_norm);
  // slack cables: nothing
  std::vector<Real> f_slack, f_zero;
  set_tensions(-0.2, -0.1);
  sim.residual(dt, y, f_slack, nullptr);
  set_tensions(0, 0);
  sim.residual(dt, y, f_zero, nullptr);
  EXPECT_EQ(f_slack, f_zero);
}

// ---- a cantilever bent by its tendon ----

constexpr Real kL = 0.1, kR = 1e-3, kE = 2e9, kNu = 0.4, kD = 8e-4;
constexpr int kEdges = 40;
const Real kEI = kE * kPi * std::pow(kR, 4) / 4;
const Real kDl = kL / (kEdges - 0.5);

// The rod from -dl/2 to L with its first edge held (a clamp at x = 0, as the wrench's
// cantilever), a tendon through every node at the offset d = 0.8 mm towards +z (the first
// edge's material frame gives the angle), anchored at the tip; solved statically in 4 load
// steps. Returns the tip; `iterations`: Newton's most iterations in a load step.
Vec3 tendon_tip(Real T, int& iterations) {
  SceneBuilder b;
  const int mat = b.material("nylon", 1100, kE, kNu);
  const int rod = b.straight_rod("rod", vec3(-kDl / 2, 0, 0), vec3(kL, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(kR));
  b.fix_edge(rod, 0);
  b.integrator().kind = IntegratorKind::kStatic;
  b.integrator().duration = 1;
  b.integrator().dt = 0.25;
  b.integrator().newton.abs_tol = 1e-10;
  const auto probe = build_model(b.spec());
  const Vec3 d1 = vec3(probe->edge_d1_0[0], probe->edge_d1_0[1], probe->edge_d1_0[2]);
  Vec3 m1, m2;
  material_frame(d1, vec3(1, 0, 0), probe->edge_theta0[0], m1, m2);
  b.family_input(FamilyInput{"tendons"}
                     .part("part", "rod")
                     .number("offset", kD)
                     .number("angle", std::atan2(m2[2], m1[2]))
                     .number("tension", T));
  Simulator sim(build_model(b.spec()));
  for (int n = 0; n < 4; ++n) {
    const auto st = sim.step();
    EXPECT_TRUE(st.ok()) << "step " << n << ": status " << int(st.status) << ", " << st.iterations
                         << " iterations";
    iterations = std::max(iterations, st.iterations);
  }
  const std::vector<Real>& q = sim.state().q;
  return vec3(q[3 * kEdges], q[3 * kEdges + 1], q[3 * kEdges + 2]);
}

// A tendon at the constant offset d through every node, tied at the tip, loads the rod with the
// moment T d at every section (the cable's pull at its anchor and its push on each guide where
// it turns) and the compression T along the axis; the moment bends it into the arc of curvature
// k = T d / EI towards the tendon (+z), the compression shortens it by the strain T / EA. A
// small tension (k L = 0.01) deflects the tip by the linear M L^2 / (2 EI), M = T d, within the
// task's 2 % (measured -0.02 %). At both tensions the tip lies on the arc of the shortened rod,
// (1 - T / EA) (sin kL / k, 0, (1 - cos kL) / k), within 1e-3 of the deflection (measured
// MEASURED: the discrete polygon's vertices off the arc, as for the wrench's tip moment, and the
// offset's second order in each segment's length, d phi^2 / l); without the shortening the tip
// would be 0.6 % of the deflection off (T / EA = 1.6e-3 of L at k L = 0.5). The rod stays in its
// plane (1e-12).
TEST(RodTendonCantilever, TipBendsAsUnderTheEndMomentTd) {
  for (const Real kL_ : {0.01, 0.5}) {
    const Real k = kL_ / kL, T = k * kEI / kD;
    const Real strain = T / (kE * kPi * kR * kR);
    int iterations = 0;
    const Vec3 tip = tendon_tip(T, iterations);
    const Vec3 arc = (1 - strain) * vec3(std::sin(k * kL) / k, 0, (1 - std::cos(k * kL)) / k);
    const Real lin = T * kD * kL * kL / (2 * kEI);
    std::printf(
        "tendon cantilever, k L = %.2f (T = %.4g N): tip deflection %.6e m; linear M L^2 / 2EI "
        "%.6e m (%+.2f %%), arc of the shortened rod %.6e m (tip off it by %.1e of the "
        "deflection); Newton: %d iterations at most per load step\n",
        kL_, T, tip[2], lin, 100 * (tip[2] / lin - 1), arc[2], norm(tip - arc) / arc[2],
        iterations);
    EXPECT_LT(std::fabs(tip[1]), 1e-12);
    if (kL_ < 0.1) {
      EXPECT_NEAR(tip[2], lin, 0.02 * lin);
    }
    EXPECT_LT(norm(tip - arc), 1e-3 * arc[2]);
  }
}

// ---- the scene field ----

std::string rod_scene(const std::string& tendon) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": 0.5}],
  "rods": [{"name": "rod", "material": "m", "radius": 0.002,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.3, 0, 0], "nodes": 7}},
           {"name": "bar", "material": "m", "cross_section": {"width": 0.004, "height": 0.002},
            "shape": {"type": "straight", "start": [0, 0.1, 0], "end": [0.3, 0.1, 0], "nodes": 4}}],
  "shells": [{"name": "sheet", "material": "m", "thickness": 1e-3,
     "mesh": {"type": "rectangle", "u": [0.1, 0, 0], "v": [0, 0.1, 0], "edge_length": 0.05}}],
  "forces": {"tendons": )" +
         tendon + R"(},
  "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 1e-2}})";
}

std::string error_of(const std::string& text) {
  try {
    build_model(read_scene_text(text, "tendon.json", "."));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "";
}

// The rows: one per segment, each point's edge and place (a node: the edge that starts there,
// the rod's last node the edge that ends there; an edge: its midpoint) and its offset in the
// edge's frame; the tension is the signal's gain. Bad fields are named.
TEST(RodTendonScene, ReadsRowsAndNamesBadFields) {
  const auto m = build_model(
      read_scene_text(rod_scene(R"({"part": "rod", "nodes": [0, 3, -1], "offset": [1e-3, 0, 2e-3],
                    "angle": 1.5707963267948966, "tension": 4,
                    "time": {"type": "ramp", "duration": 1}})"),
                      "tendon.json", "."));
  const FamilyTable& t = m->tables[kFamTendon];
  EXPECT_EQ(t.name, "tendons");
  ASSERT_EQ(t.rows, 2);
  EXPECT_EQ(m->signal_gain[0], 4);
  EXPECT_EQ(load_signal(*m, "tendons", 0), 0);
  const int part_edge0 = m->part_edge[size_t(m->part_edge_adr[0])];
  // segment 0: node 0 (edge 0, w = 0, 1 mm along m2) to node 3 (edge 3, w = 0, on the axis)
  EXPECT_EQ(t.i[2], part_edge0);
  EXPECT_EQ(t.i[5], part_edge0 + 3);
  EXPECT_EQ(t.r[0], 0);
  EXPECT_NEAR(t.r[1], 0, 1e-19);
  EXPECT_EQ(t.r[2], 1e-3);
  // segment 1: node 3 to node 6, the rod's end: its last edge, w = 1, 2 mm along m2
  EXPECT_EQ(t.i[7 + 2], part_edge0 + 3);
  EXPECT_EQ(t.i[7 + 5], part_edge0 + 5);
  EXPECT_EQ(t.r[6 + 3], 1);
  EXPECT_EQ(t.r[6 + 5], 2e-3);
  EXPECT_EQ(t.i[7 + 6], 0);
  // edges: their midpoints; the default nodes: all of the part's, in order
  const auto me = build_model(
      read_scene_text(rod_scene(R"([{"part": "rod", "edges": [1, 4], "offset": 1e-3, "tension": 1},
                    {"part": "bar", "offset": 1e-3, "angle": 3.14159, "tension": 0}])"),
                      "tendon.json", "."));
  const FamilyTable& te = me->tables[kFamTendon];
  ASSERT_EQ(te.rows, 1 + 3);
  EXPECT_EQ(te.r[0], 0.5);
  EXPECT_EQ(te.r[3], 0.5);
  const std::vector<std::array<std::string, 2>> cases = {
      {R"({"part": "rod", "nodes": [2], "offset": 1e-3, "tension": 1})",
       "tendon.json:9: forces.tendons.nodes: a tendon runs through 2 points or more (its first, "
       "where it is pulled, and its anchor), got 1"},
      {R"({"part": "rod", "edges": 3, "offset": 1e-3, "tension": 1})",
       "forces.tendons.edges: a tendon runs through 2 points or more"},
      {R"({"part": "rod", "nodes": [0, 7], "offset": 1e-3, "tension": 1})",
       "forces.tendons.nodes: entry 1 (7) must be an integer in [-7, 6] (part 'rod' has 7 "
       "nodes"},
      {R"({"part": "rod", "nodes": [0, -8], "offset": 1e-3, "tension": 1})",
       "forces.tendons.nodes: entry 1 (-8) must be an integer in [-7, 6]"},
      {R"({"part": "rod", "edges": [0, 6], "offset": 1e-3, "tension": 1})",
       "forces.tendons.edges: entry 1 (6) must be an integer in [-6, 5] (part 'rod' has 6 edges"},
      {R"({"part": "rod", "nodes": [0, 1.5], "offset": 1e-3, "tension": 1})",
       "forces.tendons.nodes: entry 1 (1.5) must be an integer"},
      {R"({"part": "rod", "nodes": [0, 1], "edges": [0, 1], "offset": 1e-3, "tension": 1})",
       "forces.tendons.edges: not with nodes"},
      {R"({"part": "rod", "offset": 2.5e-3, "tension": 1})",
       "forces.tendons.offset: point 0 (0.0025 m from the centreline at 0 rad) lies outside part "
       "'rod''s section (radius 0.002 m)"},
      {R"({"part": "rod", "nodes": [0, 1, 2], "offset": [1e-3, 1e-3, 3e-3], "tension": 1})",
       "forces.tendons.offset: point 2 (0.003 m from the centreline at 0 rad) lies outside"},
      {R"({"part": "bar", "offset": 1.5e-3, "angle": 1.5707963, "tension": 1})",
       "forces.tendons.offset: point 0 (0.0015 m from the centreline at 1.5708 rad) lies outside "
       "part 'bar''s section (0.004 m x 0.002 m)"},
      {R"({"part": "rod", "offset": -1e-3, "tension": 1})",
       "forces.tendons.offset: point 0's offset must be 0 or more, got -0.001"},
      {R"({"part": "rod", "nodes": [0, 1, 2], "offset": [1e-3, 1e-3], "tension": 1})",
       "forces.tendons.offset: must be one number or one per point (3), got 2"},
      {R"({"part": "rod", "nodes": [0, 1, 2], "offset": 1e-3, "angle": [0, 1], "tension": 1})",
       "forces.tendons.angle: must be one number or one per point (3), got 2"},
      {R"({"part": "rod", "offset": 1e-3, "tension": -0.5})",
       "forces.tendons.tension: must be 0 or more (a cable pulls, it cannot push), got -0.5"},
      {R"({"part": "rod", "nodes": [0, 2, 2], "offset": 1e-3, "tension": 1})",
       "forces.tendons.nodes: entries 1 and 2 put two consecutive points of the cable at the "
       "same place"},
      {R"({"part": "rod", "offset": 1e-3})", "forces.tendons.tension: missing (required)"},
      {R"({"part": "rod", "tension": 1})", "forces.tendons.offset: missing (required)"},
      {R"({"part": "rod", "nodes": [], "offset": 1e-3, "tension": 1})",
       "forces.tendons.nodes: must be a number or a non-empty list of numbers"},
      {R"({"part": "rod", "nodes": [0, "x"], "offset": 1e-3, "tension": 1})",
       "forces.tendons.nodes[1]: "},
      {R"({"part": "rod", "offset": "far", "tension": 1})",
       "forces.tendons.offset: must be a number or a non-empty list of numbers"},
      {R"({"part": "sheet", "offset": 1e-3, "tension": 1})",
       "forces.tendons.part: part 'sheet' has no rod edges: a tendon runs along a rod"},
      {R"({"part": "hull", "offset": 1e-3, "tension": 1})",
       "forces.tendons.part: no part named 'hull'"},
      {R"([{"part": "rod", "offset": 1e-3, "tension": 1, "friction": 0.1}])",
       "forces.tendons[0].friction: unknown field"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(rod_scene(c[0]));
    EXPECT_NE(msg.find(c[1]), std::string::npos) << c[0] << " gave: " << msg;
  }
  // on the centreline the tendon's Jacobian is symmetric, and so is the model; off it, not
  EXPECT_FALSE(build_model(read_scene_text(rod_scene(R"({"part": "rod", "offset": 0,
                                                         "tension": 1})"),
                                           "tendon.json", "."))
                   ->nonsymmetric());
  EXPECT_TRUE(m->nonsymmetric());
  // on the section's rim is inside
  EXPECT_EQ(error_of(rod_scene(R"({"part": "rod", "offset": 2e-3, "tension": 1})")), "");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
