// The shell membrane (the stretching springs on triangle edges) against continuum elasticity:
// a flat sheet pulled in uniaxial tension, on the two generated meshes. The near-equilateral
// lattice must have the membrane stiffness E h and the Poisson ratio 1/3 that a triangular
// lattice of equal springs has (whatever the material's nu); the grid of right triangles E h
// along its axes and Poisson ratio 0 (host/model/shells.cpp derives both). Before the springs
// took one share per triangle, both sheets showed 0.5 E h.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "physics_util.h"

namespace slender {
namespace {

struct Membrane {
  Real stiffness;  ///< sigma_xx / eps_xx over E h
  Real poisson;    ///< -eps_yy / eps_xx
};

/// least-squares slope of v against u
Real slope(const std::vector<Real>& u, const std::vector<Real>& v) {
  Real mu = 0, mv = 0;
  for (size_t i = 0; i < u.size(); ++i)
    mu += u[i], mv += v[i];
  mu /= Real(u.size()), mv /= Real(v.size());
  Real suv = 0, suu = 0;
  for (size_t i = 0; i < u.size(); ++i)
    suv += (u[i] - mu) * (v[i] - mv), suu += (u[i] - mu) * (u[i] - mu);
  return suv / suu;
}

/// a sheet Lx x Ly in the plane z = 0, its left edge held in x (one corner also in y), pulled
/// by a uniform traction on its right edge (consistent nodal loads), solved statically; the
/// strains are the slopes of the displacements over the nodes away from the edges
Membrane pull(bool structured, Real nu) {
  constexpr Real kLx = 0.1, kLy = 0.06, kEdge = 0.004, kE = 1e6, kH = 1e-3;
  constexpr Real kStrain = 1e-5;  // target strain: the linear regime
  SceneBuilder b;
  const int mat = b.material("m", 1000, kE, nu);
  const int s = b.rectangle_shell("sheet", vec3(0, 0, 0), vec3(kLx, 0, 0), vec3(0, kLy, 0), kEdge,
                                  structured, mat, kH, ShellBending::kHinge);
  const std::vector<Vec3> nodes = b.part(s).nodes;
  const Real tol = 1e-9;
  std::vector<int> right;
  int corner = -1;
  for (int i = 0; i < int(nodes.size()); ++i) {
    const Vec3& p = nodes[i];
    const bool left = p[0] < tol;
    if (left && p[1] < tol) corner = i;
    if (p[0] > kLx - tol) right.push_back(i);
    b.fix_dofs(s, i, left, false, true);  // the plane z = 0 for all, x on the left edge
  }
  EXPECT_GE(corner, 0);
  b.fix_dofs(s, corner, true, true, true);
  // the right edge's traction t = kStrain E h [N/m], each node its share of the edge's length
  std::sort(right.begin(), right.end(), [&](int a, int c) { return nodes[a][1] < nodes[c][1]; });
  const Real t = kStrain * kE * kH;
  for (size_t k = 0; k < right.size(); ++k) {
    const Real lo = k > 0 ? 0.5 * (nodes[right[k]][1] + nodes[right[k - 1]][1]) : 0;
    const Real hi =
        k + 1 < right.size() ? 0.5 * (nodes[right[k]][1] + nodes[right[k + 1]][1]) : kLy;
    b.point_load(s, right[k], vec3(t * (hi - lo), 0, 0));
  }
  const test::StaticSolve st = test::static_solve(b);
  const auto& m = st.model;
  const Simulator& sim = *st.sim;
  std::vector<Real> x, ux, y, uy;
  for (int i = 0; i < int(nodes.size()); ++i) {
    const Vec3& p = nodes[i];
    // away from the edges by a fifth of each side
    if (p[0] < 0.2 * kLx || p[0] > 0.8 * kLx || p[1] < 0.2 * kLy || p[1] > 0.8 * kLy) continue;
    const int n = m->part_node[m->part_node_adr[s] + i];
    const Vec3 q = test::node_position(sim.state(), n);
    x.push_back(p[0]), ux.push_back(q[0] - p[0]);
    y.push_back(p[1]), uy.push_back(q[1] - p[1]);
  }
  const Real exx = slope(x, ux), eyy = slope(y, uy);
  return Membrane{kStrain / exx, -eyy / exx};
}

TEST(ShellMembrane, EquilateralLatticeHasStiffnessEhAndPoissonOneThird) {
  for (Real nu : {0.0, 0.3, 0.5}) {  // the spring lattice ignores the material's nu
    const Membrane mb = pull(false, nu);
    std::printf("membrane, lattice (nu %.1f): stiffness %.4f E h, Poisson ratio %.4f\n", nu,
                mb.stiffness, mb.poisson);
    EXPECT_NEAR(mb.stiffness, 1.0, 0.02);    // measured 0.998
    EXPECT_NEAR(mb.poisson, 1.0 / 3, 0.02);  // measured 0.321 (the rows are not quite equilateral)
  }
}

TEST(ShellMembrane, RightTriangleGridHasStiffnessEhAlongItsAxes) {
  const Membrane mb = pull(true, 0.3);
  std::printf("membrane, grid: stiffness %.4f E h, Poisson ratio %.4f\n", mb.stiffness, mb.poisson);
  EXPECT_NEAR(mb.stiffness, 1.0, 0.02);
  EXPECT_NEAR(mb.poisson, 0.0, 0.02);
}

}  // namespace
}  // namespace slender
