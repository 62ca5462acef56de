// The shell membrane against continuum elasticity (BENCHMARKS.md V10, V13).
// - The edge springs (the papers' membrane): a flat sheet pulled in uniaxial tension, on the two
//   generated meshes. The near-equilateral lattice must have the membrane stiffness E h and the
//   Poisson ratio 1/3 that a triangular lattice of equal springs has (whatever the material's
//   nu); the grid of right triangles E h along its axes and Poisson ratio 0
//   (host/model/shells.cpp derives both). Before the springs took one share per triangle, both
//   sheets showed 0.5 E h.
// - The constant-strain triangles (stencils/shell_membrane.h), St Venant-Kirchhoff and
//   neo-Hookean: the same sheet has E h and the material's nu on both meshes; a closed sphere
//   under internal pressure grows by p r^2 (1 - nu) / (2 E h) (small strain) and a rubber one
//   (nu = 0.5) follows the incompressible neo-Hookean balloon's p(lambda) at 12 % stretch; a
//   sheet with Kelvin-Voigt or Rayleigh damping creeps at the rate of its viscosity.
// - The scene field "membrane", the builder, the model's table and the energies.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "error_util.h"
#include "physics_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

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
Membrane pull(bool structured,
              Real nu,
              MembraneModel membrane = MembraneModel::kSprings,
              Real kEdge = 0.004) {
  constexpr Real kLx = 0.1, kLy = 0.06, kE = 1e6, kH = 1e-3;
  constexpr Real kStrain = 1e-5;  // target strain: the linear regime
  SceneBuilder b;
  const int mat = b.material("m", 1000, kE, nu);
  const int s = b.rectangle_shell("sheet", vec3(0, 0, 0), vec3(kLx, 0, 0), vec3(0, kLy, 0), kEdge,
                                  structured, mat, kH, ShellBending::kHinge);
  b.membrane(s, membrane);
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

// ---- the constant-strain triangles ----

const char* membrane_name(MembraneModel m) {
  return m == MembraneModel::kStvk         ? "stvk"
         : m == MembraneModel::kNeoHookean ? "neo_hookean"
                                           : "springs";
}

// V13, the sheet: a constant-strain membrane carries the uniaxial stress uniformly on any mesh,
// so both meshes give the material's E h and nu (to the 1e-5 strain's nonlinearity), on a
// coarser mesh than the springs need (edges 1 cm)
TEST(ShellMembrane, ConstantStrainSheetHasTheMaterialsStiffnessAndPoissonRatio) {
  for (MembraneModel law : {MembraneModel::kStvk, MembraneModel::kNeoHookean})
    for (Real nu : {0.0, 0.3, 0.5})
      for (bool structured : {false, true}) {
        if (structured && nu != 0.3) continue;  // the grid once: the mesh does not matter
        const Membrane mb = pull(structured, nu, law, 0.01);
        std::printf("membrane %s, %s (nu %.1f): stiffness %.5f E h, Poisson ratio %.5f\n",
                    membrane_name(law), structured ? "grid" : "lattice", nu, mb.stiffness,
                    mb.poisson);
        EXPECT_NEAR(mb.stiffness, 1.0, 0.02);
        EXPECT_NEAR(mb.poisson, nu, 0.02 * nu + 1e-3);
      }
}

// an icosphere of radius R: the icosahedron's 20 triangles each split into 4^levels, the new
// nodes pushed out onto the sphere; counter-clockwise about the outward normal, and symmetric
// under x -> -x, y -> -y and z -> -z (the first 12 nodes are the icosahedron's)
struct Sphere {
  std::vector<Vec3> nodes;
  std::vector<std::array<int, 3>> tris;
};
Sphere icosphere(Real R, int levels) {
  const Real f = (1 + std::sqrt(Real(5))) / 2;
  const Real v[12][3] = {{-1, f, 0},  {1, f, 0},  {-1, -f, 0}, {1, -f, 0}, {0, -1, f},  {0, 1, f},
                         {0, -1, -f}, {0, 1, -f}, {f, 0, -1},  {f, 0, 1},  {-f, 0, -1}, {-f, 0, 1}};
  Sphere s;
  for (const auto& p : v)
    s.nodes.push_back(R / std::sqrt(1 + f * f) * vec3(p[0], p[1], p[2]));
  s.tris = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
            {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
            {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (int l = 0; l < levels; ++l) {
    std::map<std::pair<int, int>, int> mid;
    auto middle = [&](int a, int b) {
      const auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      const Vec3 m = s.nodes[size_t(a)] + s.nodes[size_t(b)];
      s.nodes.push_back(R / norm(m) * m);
      return mid[key] = int(s.nodes.size()) - 1;
    };
    std::vector<std::array<int, 3>> finer;
    for (const auto& t : s.tris) {
      const int ab = middle(t[0], t[1]), bc = middle(t[1], t[2]), ca = middle(t[2], t[0]);
      finer.push_back({t[0], ab, ca});
      finer.push_back({t[1], bc, ab});
      finer.push_back({t[2], ca, bc});
      finer.push_back({ab, bc, ca});
    }
    s.tris = std::move(finer);
  }
  return s;
}

// The closed sphere of radius kR (an icosphere of 642 nodes and 1280 triangles, edges 0.14 kR)
// under the pressure p, solved statically in `load_steps` steps; the mean radius of its nodes
// over kR. Hinge bending (the default) resists nothing here: a uniform inflation keeps every
// dihedral angle, and the rest is a 1e-6 share. Nine coordinates that stay zero under the
// sphere's symmetry hold the rigid motions (as in tests/stencils/shell_pressure_test.cpp).
constexpr Real kR = 0.05, kSphereE = 1e6, kSphereH = 1e-3;
Real inflated_radius(MembraneModel law, Real nu, Real p, int load_steps) {
  const Sphere sp = icosphere(kR, 3);
  SceneBuilder b;
  const int mat = b.material("rubber", 1100, kSphereE, nu);
  const int s = b.mesh_shell("balloon", sp.nodes, sp.tris, mat, kSphereH);
  b.membrane(s, law);
  for (int n : {4, 5, 6})
    b.fix_dofs(s, n, true, false, false);
  for (int n : {8, 9, 10})
    b.fix_dofs(s, n, false, true, false);
  for (int n : {0, 1, 2})
    b.fix_dofs(s, n, false, false, true);
  b.family_input(FamilyInput{"pressure"}.part("part", "balloon").number("pressure", p));
  const test::StaticSolve st = test::static_solve(b, load_steps);
  Real r = 0;
  for (int n = 0; n < st.model->nnode; ++n)
    r += norm(test::node_position(st.sim->state(), n));
  return r / Real(st.model->nnode) / kR;
}

// V13, the sphere: at a strain of about 1e-4, Delta r = p r^2 (1 - nu) / (2 E h) within 2 % for
// both laws and nu = 0, 0.3, 0.5 (the icosphere's flat facets enclose 0.4 % less volume per area
// than the sphere); the edge springs follow it with nu = 1/3, whatever the material's
TEST(ShellMembrane, PressurizedSphereGrowsAsThinShellTheory) {
  const Real p = 2e-4 * kSphereE * kSphereH / kR;  // Delta r / r = 1e-4 (1 - nu)
  auto theory = [&](Real nu) { return p * kR * (1 - nu) / (2 * kSphereE * kSphereH); };
  for (MembraneModel law : {MembraneModel::kStvk, MembraneModel::kNeoHookean})
    for (Real nu : {0.0, 0.3, 0.5}) {
      const Real growth = inflated_radius(law, nu, p, 1) - 1;
      const Real err = growth / theory(nu) - 1;
      std::printf("sphere, %s, nu %.1f: Delta r / r %.5e, theory %.5e, error %+.2f %%\n",
                  membrane_name(law), nu, growth, theory(nu), 100 * err);
      EXPECT_LT(std::fabs(err), 0.02) << membrane_name(law) << ", nu " << nu;
    }
  for (Real nu : {0.5}) {
    const Real growth = inflated_radius(MembraneModel::kSprings, nu, p, 1) - 1;
    std::printf(
        "sphere, springs, material nu %.1f: error %+.2f %% against nu = 1/3, %+.2f %% "
        "against the material's\n",
        nu, 100 * (growth / theory(1.0 / 3) - 1), 100 * (growth / theory(nu) - 1));
    EXPECT_LT(std::fabs(growth / theory(1.0 / 3) - 1), 0.02);
  }
}

// A rubber balloon at large stretch: the balloon of apps/scenes/rubber_balloon.json (an
// icosphere of 162 nodes, nu = 0.5, the neo-Hookean membrane, 6 kPa) solved statically without
// its weight and the ground, held by the nine coordinates that its symmetry keeps. Uniform
// stretch lambda of its flat triangles balances the pressure where
// p = 2 mu h / r (1 / lambda - 1 / lambda^7), mu = E / 3 (the incompressible neo-Hookean
// balloon; its maximum, 8.3 kPa, at lambda = 1.38), with r = 3 V0 / A0 of the icosphere (0.985
// of its radius): lambda - 1 = 12.1 % within 1 % of it
TEST(ShellMembrane, RubberBalloonFollowsTheNeoHookeanPressureCurve) {
  SceneSpec sc =
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rubber_balloon.json");
  sc.forces.gravity = vec3(0, 0, 0);
  sc.forces.ground.enabled = false;
  const Vec3 c0 = vec3(0, 0, 0.051);  // the mesh's centre
  for (int n : {4, 5, 6})
    sc.fixed_dofs.push_back(FixedDofSpec{NodeRef{0, n, {}}, {true, false, false}});
  for (int n : {8, 9, 10})
    sc.fixed_dofs.push_back(FixedDofSpec{NodeRef{0, n, {}}, {false, true, false}});
  for (int n : {0, 1, 2})
    sc.fixed_dofs.push_back(FixedDofSpec{NodeRef{0, n, {}}, {false, false, true}});
  sc.integrator.kind = IntegratorKind::kStatic;
  sc.integrator.dt = 1.0 / 6;  // six load steps (the ramp's time function too)
  sc.integrator.duration = 1;
  const auto m = build_model(sc);
  ASSERT_EQ(m->tables[kFamMembrane].rows, m->ntri);
  Real V0 = 0, A0 = 0, R = 0;
  for (int t = 0; t < m->ntri; ++t) {
    Vec3 x[3];
    for (int a = 0; a < 3; ++a) {
      const int n = m->tri_node[3 * t + a];
      x[a] = vec3(m->node_x0[3 * n], m->node_x0[3 * n + 1], m->node_x0[3 * n + 2]) - c0;
    }
    V0 += dot(x[0], cross(x[1], x[2])) / 6;
    A0 += 0.5 * norm(cross(x[1] - x[0], x[2] - x[0]));
  }
  const Real mu = 1e6 / 3, h = 1e-3, p = 6e3, r = 3 * V0 / A0;
  auto pressure = [&](Real lam) { return 2 * mu * h / r * (1 / lam - 1 / std::pow(lam, 7)); };
  Real lo = 1, hi = 1.38;  // p(lambda) rises on the stable branch below the maximum
  for (int i = 0; i < 60; ++i)
    (pressure(0.5 * (lo + hi)) < p ? lo : hi) = 0.5 * (lo + hi);
  const Real lam = 0.5 * (lo + hi);

  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 6));
  Real radius = 0;
  for (int n = 0; n < m->nnode; ++n) {
    const Vec3 x0 = vec3(m->node_x0[3 * n], m->node_x0[3 * n + 1], m->node_x0[3 * n + 2]);
    R += norm(x0 - c0) / m->nnode;
    radius += norm(test::node_position(sim.state(), n) - c0) / m->nnode;
  }
  std::printf("rubber balloon at %.0f Pa: stretch %.5f, theory %.5f (lambda - 1 off by %+.2f %%)\n",
              p, radius / R, lam, 100 * ((radius / R - 1) / (lam - 1) - 1));
  EXPECT_NEAR(radius / R - 1, lam - 1, 0.01 * (lam - 1));
}

// a small sheet 4 cm x 2 cm in z = 0 (held in z, its left edge in x, one corner in y) under
// a uniform traction on its right edge of strain kCreepStrain; density 1e-3 kg/m^3, so that
// inertia is negligible; the strain from the right edge's mean displacement
constexpr Real kCreepStrain = 1e-4, kCreepTau = 0.02, kCreepDt = 1e-3;
struct CreepSheet {
  SceneBuilder b;
  std::vector<int> right;  // part nodes of the right edge
};
CreepSheet creep_sheet(MembraneModel law) {
  constexpr Real kLx = 0.04, kLy = 0.02, kE = 1e6, kH = 1e-3;
  CreepSheet c;
  SceneBuilder& b = c.b;
  const int mat = b.material("m", 1e-3, kE, 0.3);
  const int s = b.rectangle_shell("sheet", vec3(0, 0, 0), vec3(kLx, 0, 0), vec3(0, kLy, 0), 0.005,
                                  false, mat, kH);
  b.membrane(s, law);
  const std::vector<Vec3> nodes = b.part(s).nodes;
  for (int i = 0; i < int(nodes.size()); ++i) {
    const bool left = nodes[i][0] < 1e-9;
    b.fix_dofs(s, i, left, left && nodes[i][1] < 1e-9, true);
    if (nodes[i][0] > kLx - 1e-9) c.right.push_back(i);
  }
  std::sort(c.right.begin(), c.right.end(),
            [&](int a, int d) { return nodes[a][1] < nodes[d][1]; });
  const Real t = kCreepStrain * kE * kH;
  for (size_t k = 0; k < c.right.size(); ++k) {
    const Real lo = k > 0 ? 0.5 * (nodes[c.right[k]][1] + nodes[c.right[k - 1]][1]) : 0;
    const Real hi =
        k + 1 < c.right.size() ? 0.5 * (nodes[c.right[k]][1] + nodes[c.right[k + 1]][1]) : kLy;
    b.point_load(s, c.right[k], vec3(t * (hi - lo), 0, 0));
  }
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = kCreepDt;
  b.integrator().duration = 1;
  return c;
}

// Damping on the constant-strain membrane (an elastic family: Kelvin-Voigt and Rayleigh apply):
// the sheet creeps as a Kelvin-Voigt solid, eps_n+1 = (eps_s + tau / dt eps_n) / (1 + tau / dt)
// under implicit Euler (eps_s the static strain), with Kelvin-Voigt eta = tau E and with Rayleigh
// beta = tau alike (the strain increment of a step measured from its start, linear here: 1e-3 of
// eps_s); without damping it takes eps_s at once
TEST(ShellMembrane, DampedSheetCreepsAtItsRetardationTime) {
  for (MembraneModel law : {MembraneModel::kStvk, MembraneModel::kNeoHookean})
    for (int kind : {0, 1, 2}) {  // undamped, Kelvin-Voigt, Rayleigh
      if (kind == 0 && law == MembraneModel::kNeoHookean) continue;  // undamped: once
      CreepSheet c = creep_sheet(law);
      if (kind == 1) c.b.kelvin_voigt(kCreepTau * 1e6);
      if (kind == 2) c.b.stiffness_damping(kCreepTau);
      const auto m = build_model(c.b.build());
      Simulator sim(m);
      const int part = 0;
      Real eps = 0, worst = 0;
      for (int n = 0; n < 50; ++n) {
        ASSERT_TRUE(sim.step().ok());
        eps = kind == 0 ? kCreepStrain
                        : (kCreepStrain + kCreepTau / kCreepDt * eps) / (1 + kCreepTau / kCreepDt);
        Real u = 0;
        for (int i : c.right) {
          const int g = m->part_node[m->part_node_adr[part] + i];
          u += sim.state().q[3 * size_t(g)] - m->node_x0[3 * size_t(g)];
        }
        const Real measured = u / Real(c.right.size()) / 0.04;
        worst = std::max(worst, std::fabs(measured - eps) / kCreepStrain);
      }
      std::printf(
          "creep, %s, %s: largest difference from the implicit Euler law %.2e (of the "
          "static strain)\n",
          membrane_name(law),
          kind == 0   ? "undamped"
          : kind == 1 ? "Kelvin-Voigt"
                      : "Rayleigh",
          worst);
      EXPECT_LT(worst, 2e-3);
      EXPECT_TRUE(test::no_warnings(sim));
    }
}

// the damped membrane's Jacobian against central differences of the residual: a sheet clamped
// along one edge, sagging and swinging under gravity, with Kelvin-Voigt and Rayleigh damping
TEST(ShellMembrane, DampedJacobianMatchesCentralDifferences) {
  for (MembraneModel law : {MembraneModel::kStvk, MembraneModel::kNeoHookean}) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e5, 0.4);
    const int s = b.rectangle_shell("sheet", vec3(0, 0, 0), vec3(0.04, 0, 0), vec3(0, 0.02, 0),
                                    0.01, false, mat, 1e-3);
    b.membrane(s, law);
    for (int i = 0; i < int(b.part(s).nodes.size()); ++i)
      if (b.part(s).nodes[i][0] < 1e-9) b.fix_node(s, i);
    b.gravity(vec3(1, 2, -9.8));
    b.kelvin_voigt(1e5 * 0.01);
    b.stiffness_damping(2e-3);
    b.integrator().kind = IntegratorKind::kImplicitMidpoint;
    b.integrator().dt = 1e-3;
    Simulator sim(build_model(b.build()));
    ASSERT_TRUE(test::run_steps(sim, 20));
    const Real rel = test::residual_fd_error(sim, 1e-3, [](Real) { return Real(1e-7); });
    std::printf("damped membrane %s: |J - J_fd| / |J_fd| = %.3e\n", membrane_name(law), rel);
    EXPECT_LT(rel, test::kFdRelTol);
  }
}

// ---- the scene field, the builder and the model ----

std::string two_sheets(const std::string& a, const std::string& b, Real nu = 0.3) {
  return R"({"materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                             "poisson_ratio": )" +
         std::to_string(nu) + R"(}],
  "shells": [{"name": "a", "material": "m", "thickness": 1e-3)" +
         a + R"(,
              "mesh": {"type": "rectangle", "u": [0.1, 0, 0], "v": [0, 0.05, 0],
                       "edge_length": 0.025}},
             {"name": "b", "material": "m", "thickness": 1e-3)" +
         b + R"(,
              "mesh": {"type": "rectangle", "origin": [0, 0, 0.1], "u": [0.1, 0, 0],
                       "v": [0, 0.05, 0], "edge_length": 0.025}}]})";
}

TEST(ShellMembrane, SceneFieldBuilderAndTable) {
  // the default is the neo-Hookean triangle; "springs" keeps the edge springs
  const auto m =
      build_model(read_scene_text(two_sheets("", R"(, "membrane": "springs")"), "m.json", ""));
  EXPECT_EQ(m->scene.parts[0].membrane, MembraneModel::kNeoHookean);
  EXPECT_EQ(m->scene.parts[1].membrane, MembraneModel::kSprings);
  const FamilyTable& t = m->tables[kFamMembrane];
  EXPECT_EQ(t.name, "membrane");
  int ntri_a = 0;
  for (int k = 0; k < m->ntri; ++k)
    ntri_a += m->tri_part[k] == 0;
  ASSERT_EQ(t.rows, ntri_a);  // the triangles of part a, in triangle order
  for (long k = 0; k < t.rows; ++k) {
    EXPECT_EQ(t.i[4 * k + 3], int(ShellMembrane::kNeoHookean));
    EXPECT_EQ(t.r[6 * k], 1e6);
    EXPECT_EQ(t.r[6 * k + 1], 0.3);
    EXPECT_EQ(t.r[6 * k + 2], 1e-3);
  }
  // the springs of part a's edges are zero, part b's are E h A / l_bar shares
  for (int e = 0; e < m->nsedge; ++e) {
    const int part = m->tri_part[m->sedge_tri[2 * e]];
    if (part == 0) {
      EXPECT_EQ(m->sedge_EA[e], 0);
    } else {
      EXPECT_GT(m->sedge_EA[e], 0);
    }
  }
  // the springs' model is the one of a scene without the triangles (bit for bit)
  const auto springs = build_model(read_scene_text(
      two_sheets(R"(, "membrane": "springs")", R"(, "membrane": "springs")"), "m.json", ""));
  EXPECT_EQ(springs->tables[kFamMembrane].rows, 0);
  for (int e = 0; e < m->nsedge; ++e) {
    if (m->tri_part[m->sedge_tri[2 * e]] == 1) {
      EXPECT_EQ(m->sedge_EA[e], springs->sedge_EA[e]);
    }
  }
  // "stvk"; the builder says the same
  const auto stvk =
      build_model(read_scene_text(two_sheets(R"(, "membrane": "stvk")", ""), "m.json", ""));
  EXPECT_EQ(stvk->tables[kFamMembrane].i[3], int(ShellMembrane::kStvk));
  EXPECT_EQ(stvk->tables[kFamMembrane].rows, m->ntri);  // both parts: stvk and the default
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int part = b.rectangle_shell("a", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.05, 0), 0.025,
                                     true, mat, 1e-3);
  EXPECT_EQ(b.part(part).membrane, MembraneModel::kNeoHookean);
  b.membrane(part, MembraneModel::kStvk);
  EXPECT_EQ(build_model(b.build())->tables[kFamMembrane].i[3], int(ShellMembrane::kStvk));

  // the energy of a stretched sheet is the membrane's, in Simulator::energies().stretch: both
  // sheets St Venant-Kirchhoff, stretched by 1 % along x (y held), Green strain g = 0.01005,
  // W = (mu + lambda_ps / 2) g^2 = E / (2 (1 - nu^2)) g^2 exactly
  Simulator sim(build_model(read_scene_text(
      two_sheets(R"(, "membrane": "stvk")", R"(, "membrane": "stvk")"), "m.json", "")));
  State st = sim.state();
  for (int n = 0; n < sim.model().nnode; ++n)
    st.q[3 * size_t(n)] *= 1.01;
  sim.set_state(st);
  const Real g = (1.01 * 1.01 - 1) / 2, W = 1e6 / (2 * (1 - 0.09)) * g * g;
  EXPECT_NEAR(sim.energies().stretch, 2 * 1e-3 * (0.1 * 0.05) * W, 1e-10 * W);
}

TEST(ShellMembrane, BadValuesAreNamedWithTheirLineAndField) {
  auto error = [](const std::string& text) {
    return test::catch_input_error([&] { build_model(read_scene_text(text, "m.json", "")); });
  };
  InputError e = error(two_sheets("", R"(, "membrane": "rubber")"));
  EXPECT_EQ(e.file(), "m.json");
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.field(), "shells[1].membrane");
  EXPECT_NE(std::string(e.what()).find("expected neo_hookean, stvk or springs"), std::string::npos)
      << e.what();
  e = error(two_sheets("", R"(, "membrane": 2)"));
  EXPECT_EQ(e.field(), "shells[1].membrane");
  // neo-Hookean needs nu >= 0; the others take it
  e = error(two_sheets(R"(, "membrane": "springs")", "", -0.2));
  EXPECT_EQ(e.field(), "shells[1].membrane");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(std::string(e.what()).find("Poisson ratio in [0, 0.5]"), std::string::npos) << e.what();
  EXPECT_NO_THROW(build_model(read_scene_text(
      two_sheets(R"(, "membrane": "springs")", R"(, "membrane": "stvk")", -0.2), "m.json", "")));
  // a network without triangles has no membrane
  e = error(R"({"materials": [{"name": "m", "density": 1, "youngs_modulus": 1, "poisson_ratio": 0}],
  "networks": [{"name": "n", "material": "m", "radius": 1e-3, "membrane": "stvk",
                "nodes": [[0, 0, 0], [1, 0, 0]], "edges": [[0, 1]]}]})");
  EXPECT_EQ(e.field(), "networks[0].membrane");
  EXPECT_EQ(e.line(), 2);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
