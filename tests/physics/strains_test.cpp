// The strains a simulator reports (Simulator::strains, BatchedSimulator::strains: one loop of
// the engine over the state where it lives) against configurations whose strains are known: a
// rod stretched uniformly, a rod bent along a circular arc, a rod twisted by its twist angles
// (set from the scene's initial_twist_angle and by set_twist_angles), a hinge folded by a given
// angle, a mid-edge shell rolled into a cylinder and a flat one with a sphere's mid-edge normals.
// Tolerances: exact geometry evaluated in double, 1e-12 relative, except the mid-edge shape
// operator of a sphere's mid-edge normals, a discretization of the continuum's (first order in the
// triangles' size over the radius).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "physics_util.h"
#include "slender/batch.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kPi = 3.14159265358979323846;

// a rod of n nodes; its shape: straight along x (R = 0), or an arc of radius R through angle
// `sweep` in the x-y plane
std::shared_ptr<const Model> rod(int n, Real R, Real sweep, std::vector<Real> theta = {}) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.5);
  std::vector<Vec3> x;
  for (int i = 0; i < n; ++i) {
    const Real s = Real(i) / (n - 1);
    x.push_back(R > 0 ? vec3(R * std::sin(s * sweep), R * (1 - std::cos(s * sweep)), 0)
                      : vec3(0.2 * s, 0, 0));
  }
  const int p = b.polyline_rod("rod", x, mat, SceneBuilder::circle(0.001));
  if (!theta.empty()) b.initial_twist(p, theta);
  return build_model(b.build());
}

TEST(Strains, StretchOfAUniformlyStretchedRod) {
  const auto m = rod(11, 0, 0);
  Simulator sim(m);
  State s = sim.state();
  for (int i = 0; i < m->nnode; ++i)
    s.q[3 * size_t(i)] *= 1.0125;
  sim.set_state(s);
  const std::vector<Real> eps = sim.strains(StrainKind::kStretch);
  ASSERT_EQ(int(eps.size()), m->nedge);
  for (Real e : eps)
    EXPECT_NEAR(e, 0.0125, 1e-12);
}

// along an arc each bend turns by phi = sweep / (n - 1): discrete curvature 2 tan(phi / 2) in
// the plane of the arc (kappa1^2 + kappa2^2), no twist
TEST(Strains, CurvatureOfARodOnACircularArc) {
  const int n = 21;
  const Real R = 0.05, sweep = 0.75 * kPi;
  const auto m = rod(n, R, sweep);
  Simulator sim(m);
  const std::vector<Real> k = sim.strains(StrainKind::kBendTwist);
  ASSERT_EQ(int(k.size()), 3 * m->nbend);
  const Real want = 2 * std::tan(0.5 * sweep / (n - 1));
  for (int b = 0; b < m->nbend; ++b) {
    EXPECT_NEAR(std::hypot(k[3 * b], k[3 * b + 1]), want, 1e-12 * want) << "bend " << b;
    EXPECT_NEAR(k[3 * b + 2], 0, 1e-12);
  }
  EXPECT_EQ(k, sim.bend_strains());
}

// twist angles growing by alpha from edge to edge on a straight rod (zero reference twist):
// tau = alpha at every bend; from the scene's initial twist, then set on the running simulator
// and on one environment of a batch
TEST(Strains, TwistFromTheTwistAngles) {
  const int n = 11;
  const Real alpha = 0.0625;
  std::vector<Real> theta;
  for (int j = 0; j < n - 1; ++j)
    theta.push_back(alpha * j);
  const auto m = rod(n, 0, 0, theta);
  Simulator sim(m);
  std::vector<Real> k = sim.strains(StrainKind::kBendTwist);
  for (int b = 0; b < m->nbend; ++b)
    EXPECT_NEAR(std::fabs(k[3 * b + 2]), alpha, 1e-14) << "bend " << b;
  // theta doubled now
  for (Real& t : theta)
    t *= 2;
  sim.set_twist_angles(theta);
  k = sim.strains(StrainKind::kBendTwist);
  for (int b = 0; b < m->nbend; ++b)
    EXPECT_NEAR(std::fabs(k[3 * b + 2]), 2 * alpha, 1e-14) << "bend " << b;
  // the twist DOFs hold them; the velocities likewise
  for (int j = 0; j < m->nedge; ++j)
    EXPECT_EQ(sim.state().q[3 * size_t(m->nnode) + j], theta[size_t(j)]);
  sim.set_twist_velocities(std::vector<Real>(size_t(m->nedge), 3.0));
  EXPECT_EQ(sim.state().u[3 * size_t(m->nnode)], 3.0);
  // a batch: environment 1 twisted 3 alpha per edge, environment 0 as built
  for (const BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    BatchedSimulator batch(m, 2, m->scene.integrator, LinearSolverKind::kAuto, engine);
    std::vector<Real> th(2 * size_t(m->nedge));
    for (int j = 0; j < m->nedge; ++j) {
      th[size_t(j)] = alpha * j;
      th[size_t(m->nedge + j)] = 3 * alpha * j;
    }
    batch.set_twist_angles(th.data());
    std::vector<Real> got(th.size());
    batch.twist_angles(got.data());
    EXPECT_EQ(got, th);
    std::vector<Real> kb(2 * 3 * size_t(m->nbend));
    batch.strains(StrainKind::kBendTwist, kb.data());
    for (int b = 0; b < m->nbend; ++b) {
      EXPECT_NEAR(std::fabs(kb[3 * size_t(b) + 2]), alpha, 1e-14);
      EXPECT_NEAR(std::fabs(kb[3 * size_t(m->nbend + b) + 2]), 3 * alpha, 1e-14);
    }
  }
}

// two triangles sharing the edge (0, 0, 0)-(1, 0, 0); one wing folded about it by psi: the hinge
// angle is psi in magnitude (its sign the hinge's own: a ridge or a valley)
TEST(Strains, HingeAngleOfAFoldedPair) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const Real h = 0.1;
  b.mesh_shell("pair", {vec3(0, 0, 0), vec3(h, 0, 0), vec3(0.5 * h, h, 0), vec3(0.5 * h, -h, 0)},
               {{0, 1, 2}, {1, 0, 3}}, mat, 1e-3);
  const auto m = build_model(b.build());
  ASSERT_EQ(m->nhinge, 1);
  Simulator sim(m);
  EXPECT_NEAR(sim.strains(StrainKind::kHingeAngle)[0], 0, 1e-15);
  for (const Real psi : {0.3, -1.1, 2.5}) {
    State s = sim.state();
    const int tip = m->resolve_node(NodeRef{0, 3, {}});
    s.q[3 * size_t(tip) + 1] = -h * std::cos(psi);
    s.q[3 * size_t(tip) + 2] = h * std::sin(psi);
    sim.set_state(s);
    EXPECT_NEAR(std::fabs(sim.strains(StrainKind::kHingeAngle)[0]), std::fabs(psi), 1e-12)
        << "psi " << psi;
  }
}

// a mid-edge strip rolled into a cylinder (its initial shape): each triangle's shape operator
// is the natural one the model holds, the same evaluation of the same configuration
TEST(Strains, ShapeOperatorOfACylinderIsItsNaturalOne) {
  const int nc = 24, na = 4;
  const Real R = 0.05, L = 0.04;
  std::vector<Vec3> x;
  for (int j = 0; j <= na; ++j)
    for (int i = 0; i < nc; ++i) {
      const Real a = 2 * kPi * (i + 0.5 * (j % 2)) / nc;
      x.push_back(vec3(R * std::cos(a), R * std::sin(a), L * j / na));
    }
  std::vector<std::array<int, 3>> tri;
  for (int j = 0; j < na; ++j)
    for (int i = 0; i < nc; ++i) {
      const int a = j * nc + i, b = j * nc + (i + 1) % nc;
      const int c = (j + 1) * nc + i, d = (j + 1) * nc + (i + 1) % nc;
      if (j % 2 == 0) {
        tri.push_back({a, b, c});
        tri.push_back({b, d, c});
      } else {
        tri.push_back({a, d, c});
        tri.push_back({a, b, d});
      }
    }
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  b.mesh_shell("tube", x, tri, mat, 1e-3, ShellBending::kMidEdge);
  const auto m = build_model(b.build());
  ASSERT_EQ(m->nmid, int(tri.size()));
  Simulator sim(m);
  const std::vector<Real> L9 = sim.strains(StrainKind::kShapeOperator);
  ASSERT_EQ(L9.size(), 9 * size_t(m->nmid));
  EXPECT_EQ(L9, m->mid_lambda_bar);
}

// flat equilateral triangles (side h) whose mid-edge normals are those of a sphere of radius R
// that touches the triangle at its centroid (xi = n_sphere . tau0 at each edge's midpoint): the
// mid-edge shape operator is the sphere's, (I - n n^T) / R, up to terms of order (h / R)^2
// (seed 000 eq. 19 with a smooth surface's mid-edge normals: the normal's tilt across edge k
// is the centroid's distance to it over R). Two triangles, two parts: R = 0.05 m and 0.1 m,
// h / R <= 0.02, so (h / R)^2 = 4e-4 of 1 / R allowed (measured: 1.7e-5 and 4.2e-6)
TEST(Strains, ShapeOperatorOfASpheresMidEdgeNormals) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const Real h = 1e-3;
  const Real radius[2] = {0.05, 0.1};
  const Vec3 centroid[2] = {vec3(0, 0, 0), vec3(0.01, 0.002, 0)};
  for (int t = 0; t < 2; ++t) {
    std::vector<Vec3> x;
    for (int a = 0; a < 3; ++a) {
      const Real ang = 2 * kPi * a / 3 + 0.3 * t;
      x.push_back(centroid[t] + (h / std::sqrt(3.0)) * vec3(std::cos(ang), std::sin(ang), 0));
    }
    b.mesh_shell(t == 0 ? "a" : "b", x, {{0, 1, 2}}, mat, 1e-4, ShellBending::kMidEdge);
  }
  const auto m = build_model(b.build());
  ASSERT_EQ(m->nmid, 2);
  Simulator sim(m);
  State s = sim.state();
  for (int e = 0; e < m->nsedge; ++e) {
    const int a = m->sedge_node[2 * e], bn = m->sedge_node[2 * e + 1];
    const int t = m->node_part[size_t(a)];
    const Vec3 c = centroid[t] - vec3(0, 0, radius[t]);  // the sphere's centre
    const Vec3 mid = 0.5 * (test::node_position(s, a) + test::node_position(s, bn));
    const Vec3 n = (mid - c) / norm(mid - c);
    const Vec3 tau0 = vec3(s.sedge_tau0[3 * e], s.sedge_tau0[3 * e + 1], s.sedge_tau0[3 * e + 2]);
    s.q[size_t(m->xi_dof(e))] = dot(n, tau0);
  }
  sim.set_state(s);
  const std::vector<Real> L9 = sim.strains(StrainKind::kShapeOperator);
  for (int k = 0; k < m->nmid; ++k) {
    const Real* l = L9.data() + 9 * k;
    const Real R = radius[m->tri_part[size_t(m->mid_tri[size_t(k)])]];
    Real worst = 0;
    for (int i = 0; i < 9; ++i)
      worst = std::max(worst, std::fabs(l[i] - (i == 0 || i == 4 ? 1 / R : 0)));
    std::printf("R = %g m: max |Lambda - (I - n n^T) / R| R = %.2g\n", R, worst * R);
    const Real tol = (h / R) * (h / R) / R;
    EXPECT_NEAR(l[0], 1 / R, tol) << "triangle " << k;
    EXPECT_NEAR(l[4], 1 / R, tol) << "triangle " << k;
    for (int i : {1, 2, 3, 5, 6, 7, 8})
      EXPECT_NEAR(l[i], 0, tol) << "triangle " << k << ", entry " << i;
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
