// Shells against theory: V2 strip cantilevers with hinge and mid-edge bending (and their mesh
// dependence), the hinge stiffness calibration on a cylinder, a simply supported plate under
// refinement, buoyancy, aerodynamic drag, a rod-shell joint in static equilibrium, and the
// assembled Newton Jacobian of shells and joints against finite differences.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "physics_util.h"
#include "slender/run.h"
#include "slender/stencils/shell_hinge.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;

// V2 set-up: strip L = 0.1 m, width 0.01 m, thickness 1 mm, rho 1200, nu 0.5, E 20 GPa
constexpr Real kL = 0.1, kW = 0.01, kH = 1e-3, kRho = 1200, kE = 2e10;

/// tip deflection of the V2 strip, clamped over x in [-clamp, 0], under gravity (static, the
/// load applied in `load_steps` equal steps), for Young's modulus E
Real strip_tip_deflection(Real edge,
                          bool structured,
                          ShellBending bending,
                          Real E = kE,
                          int load_steps = 1,
                          HingeStiffness hinges = HingeStiffness::kPapers) {
  const Real clamp = 0.0025;
  SceneBuilder b;
  const int mat = b.material("m", kRho, E, 0.5);
  const int s = b.rectangle_shell("strip", vec3(-clamp, 0, 0), vec3(kL + clamp, 0, 0),
                                  vec3(0, kW, 0), edge, structured, mat, kH, bending);
  b.membrane(s, MembraneModel::kSprings);
  b.part(s).hinge_stiffness = hinges;
  const PartSpec& part = b.part(s);
  for (int i = 0; i < int(part.nodes.size()); ++i)
    if (part.nodes[i][0] <= 1e-12) b.fix_node(s, i);
  b.gravity(vec3(0, 0, -kG));
  const test::StaticSolve st = test::static_solve(b, load_steps);
  const auto& m = st.model;
  const Simulator& sim = *st.sim;
  Real tip = 0;
  int count = 0;
  for (int n = 0; n < m->nnode; ++n) {
    if (m->node_x0[3 * n] < kL - 1e-9) continue;
    tip -= sim.state().q[3 * n + 2];
    ++count;
  }
  return tip / count;
}

Real euler_bernoulli_tip() {
  const Real I = kW * kH * kH * kH / 12, q = kRho * kG * kW * kH;
  return q * std::pow(kL, 4) / (8 * kE * I);
}

// V2 with mid-edge bending: a free strip of a plate with Poisson ratio nu bends with E I
TEST(ShellCantilever, MidEdgeMatchesEulerBernoulliOnBothMeshes) {
  const Real eb = euler_bernoulli_tip();
  const Real lattice = strip_tip_deflection(1.25e-3, false, ShellBending::kMidEdge);
  const Real grid = strip_tip_deflection(1.25e-3, true, ShellBending::kMidEdge);
  std::printf("V2 mid-edge: lattice %+.3f %%, grid %+.3f %% vs Euler-Bernoulli\n",
              100 * (lattice / eb - 1), 100 * (grid / eb - 1));
  EXPECT_NEAR(lattice / eb, 1, 0.05);  // V2: within 5 % (measured -0.5 %)
  EXPECT_NEAR(grid / eb, 1, 0.05);     // (measured -0.1 %)
}

// a mid-edge strip clamped by one row of nodes: fixed_edges by nodes fixes the mid-edge
// normals (xi) of the edges along the row, which makes the row a clamp; the same row of nodes
// fixed without them is a line of hinges, about which the strip swings down under gravity
TEST(ShellCantilever, MidEdgeClampOnOneRowOfNodes) {
  auto strip = [](bool clamp_xi) {
    SceneBuilder b;
    const int mat = b.material("m", kRho, kE, 0.5);
    const int s = b.rectangle_shell("strip", vec3(0, 0, 0), vec3(kL, 0, 0), vec3(0, kW, 0), 1.25e-3,
                                    true, mat, kH, ShellBending::kMidEdge);
    b.membrane(s, MembraneModel::kSprings);
    std::vector<int> row;
    for (int i = 0; i < int(b.part(s).nodes.size()); ++i)
      if (b.part(s).nodes[i][0] <= 1e-12) row.push_back(i);
    if (clamp_xi) {
      b.fix_shell_edges(s, row);
    } else {
      for (int i : row)
        b.fix_node(s, i);
    }
    b.gravity(vec3(0, 0, -kG));
    b.integrator().kind = IntegratorKind::kStatic;
    b.integrator().dt = 1;
    b.integrator().duration = 1;
    return build_model(b.build());
  };
  const auto clamped = strip(true);
  int fixed_xi = 0;
  for (int e = 0; e < clamped->nsedge; ++e)
    if (clamped->sedge_xi[e] >= 0 && clamped->dof_fixed[clamped->xi_dof(e)]) ++fixed_xi;
  EXPECT_EQ(fixed_xi, 8);  // the 8 edges along the row of 9 nodes (width 10 mm, 1.25 mm edges)
  Simulator sim(clamped);
  ASSERT_TRUE(sim.step().ok());
  Real tip = 0;
  int count = 0;
  for (int n = 0; n < clamped->nnode; ++n)
    if (clamped->node_x0[3 * n] > kL - 1e-9) tip -= sim.state().q[3 * n + 2], ++count;
  tip /= count;
  const Real eb = euler_bernoulli_tip();
  std::printf("V2 mid-edge, one-row clamp: %+.2f %% vs Euler-Bernoulli\n", 100 * (tip / eb - 1));
  EXPECT_NEAR(tip / eb, 1, 0.05);

  // the hinged row: no static equilibrium near the flat strip (the Newton step fails, or the
  // strip hangs down far beyond the clamped deflection)
  Simulator hinged(strip(false));
  const bool ok = hinged.step().ok();
  if (ok) {
    Real low = 0;
    for (int n = 0; n < hinged.model().nnode; ++n)
      low = std::min(low, hinged.state().q[3 * n + 2]);
    EXPECT_LT(low, -10 * eb);
  }
}

// MAT-DiSMech Fig. 8: the V2 strip, hinge and mid-edge bending, on the lattice, at two of the
// figure's four moduli: 2 GPa for both models, where the deflection is small (under 1 % of L),
// against Euler-Bernoulli (the hinge lattice against 9/8 of it: a plate of Poisson ratio 1/3);
// and 20 MPa for mid-edge (0.6 L of deflection, geometrically non-linear: Euler-Bernoulli
// overstates it). At each, against the same strip on a mesh of half the edge length.
// bench/shell_cantilever_bench.cpp sweeps all four moduli, both meshes, both models and the
// heavy elastica (bench/results/2026-11-28-shell-cantilever-cpu-xeon-2c.md).
// Measured: mid-edge -0.5 % from EB at 2 GPa, -32 % at 20 MPa; hinge +4.2 % from 9/8 EB; the
// coarse mesh within 1.7 % of the fine one (the fine one lies 2 % below EB: the clamp stiffens
// a strip of width L / 10 as a plate).
TEST(ShellCantilever, TwoModuliOfMatDismechFig8ConvergeAndMatchEulerBernoulli) {
  const std::pair<ShellBending, Real> cases[] = {
      {ShellBending::kMidEdge, 2e9}, {ShellBending::kMidEdge, 2e7}, {ShellBending::kHinge, 2e9}};
  for (const auto& [bending, E] : cases) {
    const bool mid = bending == ShellBending::kMidEdge;
    const int steps = E < 1e9 ? 10 : 1;
    const Real coarse = strip_tip_deflection(1.25e-3, false, bending, E, steps);
    const Real fine = strip_tip_deflection(0.625e-3, false, bending, E, steps);
    const Real eb = euler_bernoulli_tip() * kE / E * (mid ? 1.0 : 1.125);
    std::printf("Fig. 8 %-8s E %.0e: tip %.4e m (%.3f L), fine mesh %+.2f %%, vs %s %+.2f %%\n",
                mid ? "mid-edge" : "hinge", E, coarse, coarse / kL, 100 * (coarse / fine - 1),
                mid ? "EB" : "9/8 EB", 100 * (coarse / eb - 1));
    EXPECT_NEAR(coarse / fine, 1, 0.02) << E;
    if (E >= 2e9) {
      EXPECT_NEAR(coarse / eb, 1, mid ? 0.02 : 0.05) << E;
    } else {
      EXPECT_GT(coarse / kL, 0.5) << E;  // the large deflection this case is there for
      EXPECT_LT(coarse, eb) << E;        // below the linear theory's
    }
  }
}

// V2 with hinge bending, and MAT-DiSMech's Fig. 8 point: the hinge model depends on the mesh
// far more than the mid-edge model. A hinge lattice behaves like a plate of Poisson ratio 1/3,
// so a free strip is 1 / (1 - 1/9) = 9/8 as compliant as E I predicts.
TEST(ShellCantilever, HingeDependsOnTheMeshMoreThanMidEdge) {
  const Real eb = euler_bernoulli_tip();
  const Real h_lattice = strip_tip_deflection(1.25e-3, false, ShellBending::kHinge);
  const Real h_grid = strip_tip_deflection(1.25e-3, true, ShellBending::kHinge);
  const Real m_lattice = strip_tip_deflection(1.25e-3, false, ShellBending::kMidEdge);
  const Real m_grid = strip_tip_deflection(1.25e-3, true, ShellBending::kMidEdge);
  std::printf("V2 hinge: lattice %+.2f %%, grid %+.2f %% vs Euler-Bernoulli\n",
              100 * (h_lattice / eb - 1), 100 * (h_grid / eb - 1));
  EXPECT_NEAR(h_lattice / (1.125 * eb), 1, 0.05);  // measured +4 %
  const Real hinge_spread = std::fabs(h_grid - h_lattice) / eb;
  const Real mid_spread = std::fabs(m_grid - m_lattice) / eb;
  EXPECT_GT(hinge_spread, 5 * mid_spread);
}

// the hinge stiffness: a lattice wrapped on a cylinder of radius R stores 1/2 D / R^2 per area
TEST(ShellHingeCalibration, CylinderEnergyMatchesPlateRigidity) {
  const Real R = 5, E = 1, h = 1;
  SceneBuilder b;
  const int mat = b.material("m", 1, E, 0.0);
  b.rectangle_shell("p", vec3(0, 0, 0), vec3(1, 0, 0), vec3(0, 1, 0), 0.0125, false, mat, h);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  const auto m = build_model(b.build());
  Real energy = 0, area = 0;
  for (int t = 0; t < m->ntri; ++t)
    area += m->tri_area_bar[t];
  for (int k = 0; k < m->nhinge; ++k) {
    Vec<12> x;
    for (int a = 0; a < 4; ++a) {
      const int n = m->hinge_node[4 * k + a];
      const Real u = m->node_x0[3 * n], v = m->node_x0[3 * n + 1];
      x.set_segment(3 * a, vec3(R * std::sin(u / R), v, R - R * std::cos(u / R)));
    }
    LocalEval<12> r;
    shell_hinge_eval(x, ShellHinge::Params{m->hinge_kb[k], m->hinge_phi_bar[k]}, kEnergy, r);
    energy += r.E;
  }
  const Real continuum = 0.5 * E * h * h * h / 12 / (R * R) * area;
  std::printf("hinge lattice on a cylinder: energy / continuum = %.4f\n", energy / continuum);
  // the hinges missing along the boundary cost about one edge length's strip (1-2 %)
  EXPECT_NEAR(energy / continuum, 1, 0.03);
}

// The geometric hinge stiffness k_b = D_h l_bar^2 / (A_1 + A_2): a patch wrapped on a cylinder of
// radius R stores 1/2 D_h / R^2 per area on the lattice (in any direction: it is isotropic) and
// on the grid of right triangles bent about either axis (numerics.md derives both). A finite
// patch misses the hinges of its boundary edges, about one edge length's strip along the
// boundary, so its ratio falls short by c / size: the patch at two sizes extrapolates it to an
// unbounded one (Richardson), where it must be 1 up to the chords' sag (R / l = 400).
Real geometric_hinges_on_a_cylinder(bool grid, int axis, Real side) {
  const Real R = 5, E = 1, h = 1, D_h = E * h * h * h / (12 * (1 - 1.0 / 9));
  // the lattice's rows a whole number of equilateral heights apart (the generator fits its rows
  // to the side, which stretches them a little: 0.4 % at 0.5 / 0.0125)
  const Real edge = 0.0125,
             v_side = grid ? side : std::sqrt(3.0) / 2 * edge * std::round(side / edge);
  SceneBuilder b;
  const int mat = b.material("m", 1, E, 0.3);
  const int s = b.rectangle_shell("p", vec3(0, 0, 0), vec3(side, 0, 0), vec3(0, v_side, 0), edge,
                                  grid, mat, h);
  b.part(s).hinge_stiffness = HingeStiffness::kGeometric;
  const auto m = build_model(b.build());
  Real energy = 0, area = 0;
  for (int t = 0; t < m->ntri; ++t)
    area += m->tri_area_bar[t];
  for (int k = 0; k < m->nhinge; ++k) {
    Vec<12> x;
    for (int a = 0; a < 4; ++a) {
      const int n = m->hinge_node[4 * k + a];
      const Real u = m->node_x0[3 * n + axis], v = m->node_x0[3 * n + 1 - axis];
      const Vec3 p = vec3(R * std::sin(u / R), v, R - R * std::cos(u / R));
      x.set_segment(3 * a, axis == 0 ? p : vec3(p[1], p[0], p[2]));
    }
    LocalEval<12> r;
    shell_hinge_eval(x, ShellHinge::Params{m->hinge_kb[k], m->hinge_phi_bar[k]}, kEnergy, r);
    energy += r.E;
  }
  return energy / (0.5 * D_h / (R * R) * area);
}

TEST(ShellHingeCalibration, GeometricStiffnessStoresThePlateEnergyOnACylinder) {
  for (const bool grid : {false, true})
    for (const int axis : {0, 1}) {
      const Real small = geometric_hinges_on_a_cylinder(grid, axis, 0.25);
      const Real large = geometric_hinges_on_a_cylinder(grid, axis, 0.5);
      const Real unbounded = 2 * large - small;
      std::printf(
          "geometric hinges on a cylinder (%s, bent along %c): energy / continuum %.5f "
          "(patch 0.5), %.5f (0.25), extrapolated %.5f\n",
          grid ? "grid" : "lattice", axis == 0 ? 'x' : 'y', large, small, unbounded);
      EXPECT_NEAR(large, 1, 0.03);
      EXPECT_NEAR(unbounded, 1, 1e-3);  // measured 1 to 1e-5
    }
}

// V2 / Fig. 8 with the geometric hinge stiffness at 20 GPa: on the lattice within 3 % of
// Euler-Bernoulli at two resolutions (measured +2.9 % and +1.6 %; the bench follows it to
// -2.0 % at 0.16 mm, where the clamp's plate stiffening shows as for mid-edge). On the grid of
// right triangles the hinge angle of an edge whose wings are skewed (the axis-parallel edges)
// also reads the twist, so a free strip bends with 4/5 of the grid's rigidity for cylinders
// (numerics.md), 9/10 of E I with D_h: +11 % (measured +12.0 % at 1.25 mm, +10.0 % at 0.31 mm),
// checked here against that prediction within 3 %.
TEST(ShellCantilever, GeometricHingeConvergesToEulerBernoulliOnTheLattice) {
  const Real eb = euler_bernoulli_tip();
  for (const Real edge : {1.25e-3, 0.625e-3}) {
    const Real tip =
        strip_tip_deflection(edge, false, ShellBending::kHinge, kE, 1, HingeStiffness::kGeometric);
    std::printf("V2 geometric hinges, lattice %.4g mm: %+.2f %% vs Euler-Bernoulli\n", edge * 1e3,
                100 * (tip / eb - 1));
    EXPECT_NEAR(tip / eb, 1, 0.03) << edge;
  }
  const Real grid =
      strip_tip_deflection(1.25e-3, true, ShellBending::kHinge, kE, 1, HingeStiffness::kGeometric);
  std::printf(
      "V2 geometric hinges, grid 1.25 mm: %+.2f %% vs Euler-Bernoulli, %+.2f %% vs its "
      "prediction 10/9 of it\n",
      100 * (grid / eb - 1), 100 * (grid / (eb / 0.9) - 1));
  EXPECT_NEAR(grid / (eb / 0.9), 1, 0.03);
}

// a simply supported square plate under its weight (mid-edge): the centre deflection converges
// under refinement towards Kirchhoff's w = 0.00406 q a^4 / D (nu = 0.3)
TEST(ShellPlate, SimplySupportedPlateConvergesUnderRefinement) {
  const Real a = 0.1, h = 1e-3, E = 1e9, nu = 0.3, rho = 1000;
  auto centre_deflection = [&](Real edge) {
    SceneBuilder b;
    const int mat = b.material("m", rho, E, nu);
    const int s = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(a, 0, 0), vec3(0, a, 0), edge,
                                    true, mat, h, ShellBending::kMidEdge);
    b.membrane(s, MembraneModel::kSprings);
    const PartSpec& part = b.part(s);
    int centre = -1;
    for (int i = 0; i < int(part.nodes.size()); ++i) {
      const Vec3& p = part.nodes[i];
      const bool boundary = p[0] < 1e-12 || p[1] < 1e-12 || p[0] > a - 1e-12 || p[1] > a - 1e-12;
      if (boundary) b.fix_dofs(s, i, false, false, true);
      if (std::fabs(p[0] - a / 2) < 1e-9 && std::fabs(p[1] - a / 2) < 1e-9) centre = i;
    }
    // hold the in-plane rigid motions: two corners
    b.fix_dofs(s, 0, true, true, true);
    b.gravity(vec3(0, 0, -kG));
    const test::StaticSolve st = test::static_solve(b);
    const auto& m = st.model;
    const Simulator& sim = *st.sim;
    EXPECT_GE(centre, 0);
    return -sim.state().q[3 * m->part_node[centre] + 2];
  };
  const Real w1 = centre_deflection(a / 8), w2 = centre_deflection(a / 16);
  const Real w3 = centre_deflection(a / 32);
  const Real D = E * h * h * h / (12 * (1 - nu * nu)), q = rho * kG * h;
  const Real kirchhoff = 0.00406 * q * std::pow(a, 4) / D;
  std::printf("plate centre: %.5e %.5e %.5e m, Kirchhoff %.5e m\n", w1, w2, w3, kirchhoff);
  // Cauchy convergence: each refinement changes the answer less
  EXPECT_LT(std::fabs(w3 - w2), 0.5 * std::fabs(w2 - w1));
  EXPECT_NEAR(w3 / kirchhoff, 1, 0.05);
}

// buoyancy: gravity acts on m - rho_med V; a free plate of density rho in a medium of rho / 2
// falls at g / 2, exactly as implicit Euler integrates a constant acceleration
TEST(ShellForces, BuoyancyScalesTheWeight) {
  for (const Real ratio : {0.5, 1.0}) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e7, 0.3);
    b.rectangle_shell("p", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), 0.02, false, mat, 1e-3);
    b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
    b.gravity(vec3(0, 0, -kG));
    b.spec().forces.buoyancy_density = ratio * 1000;
    b.integrator().dt = 0.01;
    const auto m = build_model(b.build());
    Simulator sim(m);
    const int n = 10;
    ASSERT_TRUE(test::run_steps(sim, n));
    // implicit Euler with a constant acceleration a: z_n = -a dt^2 n (n + 1) / 2
    const Real acc = kG * (1 - ratio), dt = 0.01;
    for (int k = 0; k < m->nnode; ++k)
      EXPECT_NEAR(sim.state().q[3 * k + 2], -acc * dt * dt * n * (n + 1) / 2, 1e-12);
  }
}

// viscous drag (seed 000 eqs. 27-28) acts on shell nodes too, with the Voronoi length of their
// edges: a stiff plate falls towards v_t = M g / (eta sum dl), sum dl the total edge length
// (before 2026-11 shell nodes had no Voronoi length, and the drag silently did nothing)
TEST(ShellForces, ViscousDragGivesTheTerminalVelocity) {
  const Real eta = 0.05;
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e9, 0.3);
  b.rectangle_shell("p", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), 0.02, false, mat, 1e-3);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  b.gravity(vec3(0, 0, -kG));
  b.viscosity(eta);
  b.integrator().dt = 0.01;
  const auto m = build_model(b.build());
  Real mass = 0, dl = 0, edges = 0;
  for (int n = 0; n < m->nnode; ++n)
    mass += m->node_mass[n], dl += m->node_dl[n];
  for (int e = 0; e < m->nsedge; ++e)
    edges += m->sedge_l_bar[e];
  EXPECT_NEAR(dl, edges, 1e-12 * edges);
  const Real vt = mass * kG / (eta * dl);  // tau = M / (eta sum dl), about 0.06 s here
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 200));  // 2 s, over 30 time constants
  Real vz = 0;
  for (int n = 0; n < m->nnode; ++n)
    vz += sim.state().u[3 * n + 2] * m->node_mass[n];
  vz /= mass;
  std::printf("shell viscous drag: terminal %.6f m/s, theory %.6f m/s\n", -vz, vt);
  EXPECT_NEAR(-vz / vt, 1, 1e-3);  // the mass-weighted mean velocity
}

// aerodynamic drag: a horizontal plate falls towards v_t = sqrt(2 m g / (rho C_D A))
TEST(ShellForces, DragGivesTheTerminalVelocity) {
  const Real side = 0.1, h = 1e-4, rho = 1000, rho_air = 1.2, CD = 1.0;
  SceneBuilder b;
  const int mat = b.material("m", rho, 1e8, 0.3);
  b.rectangle_shell("p", vec3(0, 0, 0), vec3(side, 0, 0), vec3(0, side, 0), 0.025, false, mat, h);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  b.gravity(vec3(0, 0, -kG));
  b.spec().forces.drag_density = rho_air;
  b.spec().forces.drag_coefficient = CD;
  b.integrator().dt = 0.01;
  const auto m = build_model(b.build());
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 300));
  const Real mass = rho * h * side * side;
  const Real vt = std::sqrt(2 * mass * kG / (rho_air * CD * side * side));
  Real vz = 0;
  for (int k = 0; k < m->nnode; ++k)
    vz += sim.state().u[3 * k + 2];
  vz /= m->nnode;
  std::printf("plate with drag: v = %.6f m/s, terminal %.6f m/s\n", -vz, vt);
  EXPECT_NEAR(-vz / vt, 1, 0.01);
}

// a rod standing on a clamped plate carries a tip load into it: the supports' reactions balance
// the load and the weights, and the plate deflects. The equilibrium is reached by damped
// dynamics: in a static solve the twist DOFs of the joint's augmented triangle edges have a
// nearly singular mode (no inertia regularizes it; see docs/numerics.md, "Joints in static
// solves").
TEST(RodShellJoint, TransmitsATipLoadInStaticEquilibrium) {
  SceneBuilder b;
  const int steel = b.material("steel", 7800, 2e11, 0.3);
  const int plate = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.05, 0),
                                      0.0125, true, steel, 1e-3);
  b.membrane(plate, MembraneModel::kSprings);
  const PartSpec& pp = b.part(plate);
  int corner = -1;
  for (int i = 0; i < int(pp.nodes.size()); ++i) {
    if (pp.nodes[i][0] <= 1e-12) b.fix_node(plate, i);
    if (std::fabs(pp.nodes[i][0] - 0.1) < 1e-12 && std::fabs(pp.nodes[i][1] - 0.05) < 1e-12)
      corner = i;
  }
  ASSERT_GE(corner, 0);
  const Vec3 c = pp.nodes[corner];
  const int rod =
      b.straight_rod("post", c, c + vec3(0, 0, 0.05), 11, steel, SceneBuilder::circle(1e-3));
  b.joint({NodeRef{plate, corner, {}}, NodeRef{rod, 0, {}}});
  const Vec3 load = vec3(0.5, 0.2, -1.0);
  b.point_load(rod, -1, load);
  b.gravity(vec3(0, 0, -kG));
  b.mass_damping(200);
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 0.01;
  const auto m = build_model(b.build());
  EXPECT_GT(m->nedge, 10);  // the rod's edges plus the joint's augmented triangle edges
  Simulator sim(m);
  ASSERT_TRUE(test::run_steps(sim, 800));
  Real speed = 0;
  for (Real v : sim.state().u)
    speed = std::max(speed, std::fabs(v));
  EXPECT_LT(speed, 1e-8);  // at rest
  // reactions + applied loads + weights = 0
  const std::vector<Real> r = sim.reactions();
  Vec3 total = load;
  for (int n = 0; n < m->nnode; ++n)
    for (int k = 0; k < 3; ++k)
      total[k] += m->node_mass[n] * m->gravity[k];
  Vec3 reaction = vec3(0, 0, 0);
  for (int n = 0; n < m->nnode; ++n)
    for (int k = 0; k < 3; ++k)
      reaction[k] += r[3 * n + k];
  std::printf("rod-shell joint: reaction (%.9f %.9f %.9f) N, loads (%.9f %.9f %.9f) N\n",
              reaction[0], reaction[1], reaction[2], total[0], total[1], total[2]);
  // the supports push back with the total load (what remains is the settling motion's damping)
  EXPECT_LT(norm(reaction + total), 1e-5 * norm(total));
  // the load reached the plate: its loaded corner moved
  const Vec3 moved = test::node_position(sim.state(), m->part_node[corner]) - c;
  EXPECT_GT(norm(moved), 1e-6);
}

// the assembled Jacobian of a moving shell with hinges, mid-edge triangles, drag and a rod
// joint equals central differences of the residual (at the state's own configuration, where
// the transported frames are exact)
TEST(ShellNewton, JacobianMatchesCentralDifferences) {
  for (const ShellBending bending : {ShellBending::kHinge, ShellBending::kMidEdge}) {
    const auto m = test::plate_with_post(bending);
    Simulator sim(m);
    ASSERT_TRUE(test::run_steps(sim, 5));
    const Real dt = 0.01;
    const Real rel = test::residual_fd_error(
        sim, dt, [](Real yd) { return 1e-7 * std::max(Real(1e-2), std::fabs(yd)); });
    std::printf("shell Jacobian (%s): relative error %.3e\n",
                bending == ShellBending::kHinge ? "hinge" : "mid-edge", rel);
    EXPECT_LT(rel, 1e-6);
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// the VTK frames carry the triangles, their bending energy density and the mid-edge xi
TEST(ShellOutput, VtkHasTrianglesAndEnergyDensity) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int s = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.04, 0, 0), vec3(0, 0.03, 0), 0.01,
                                  false, mat, 1e-3, ShellBending::kMidEdge);
  b.membrane(s, MembraneModel::kSprings);
  b.fix_node(s, 0).fix_node(s, 1).fix_node(s, 2);
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().dt = 0.01;
  b.integrator().duration = 0.05;
  const std::string dir = ::testing::TempDir() + "slender_shell_vtk";
  b.output().dir = dir;
  b.output().every = 5;
  const auto m = build_model(b.build());
  Simulator sim(m);
  RunOptions opt;
  opt.progress = false;
  std::ostringstream log;
  const RunResult r = run_simulation(sim, opt, log);
  ASSERT_TRUE(r.ok) << r.message;
  std::ifstream in(dir + "/frames/scene_000001.vtp");
  ASSERT_TRUE(in.good());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("NumberOfPolys=\"" + std::to_string(m->ntri) + "\""), std::string::npos);
  EXPECT_NE(text.find("Name=\"bending_energy_density\""), std::string::npos);
  EXPECT_NE(text.find("Name=\"shell_edge_xi\""), std::string::npos);
  // the plate bends under gravity: some triangle stores bending energy
  const std::vector<Real> density = sim.shell_bending_energy_density();
  ASSERT_EQ(int(density.size()), m->ntri);
  Real largest = 0;
  for (Real v : density)
    largest = std::max(largest, v);
  EXPECT_GT(largest, 0);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
