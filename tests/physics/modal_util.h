#pragma once

// Free vibration of a structure's small-amplitude modes, for the damping suites (Rayleigh,
// Kelvin-Voigt): a mode of the discrete model (its K and lumped M on the free z DOFs), and the
// damping ratio and frequency of a free decay measured from the logarithmic decrement of one
// DOF's peaks.

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "physics_util.h"
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace slender::test {

/// a mode's angular frequency and shape (ndof; 1 at the reference DOF)
struct Mode {
  Real omega = 0;
  std::vector<Real> shape;
};

/// mode i (1, 2, ...) of the model's out-of-plane (z) vibration at rest: K (the static
/// Jacobian) and the lumped M restricted to the free z DOFs of the nodes, a generalized
/// symmetric eigenproblem. The shape is scaled to 1 at the DOF `ref` (a free z DOF).
inline Mode discrete_mode(SceneBuilder b, int i, int ref) {
  b.integrator().kind = IntegratorKind::kStatic;
  const auto m = build_model(b.build());
  Simulator sim(m);
  std::vector<Real> f, J;
  sim.residual(b.spec().integrator.dt, sim.state().q, f, &J);
  const AssemblyPlan& p = m->plan;
  std::vector<int> z;  // free rows of z coordinates
  for (int r = 0; r < p.nfree; ++r)
    if (p.free_dof[r] < 3 * m->nnode && p.free_dof[r] % 3 == 2) z.push_back(r);
  const int nz = int(z.size());
  Eigen::MatrixXd K(nz, nz), M = Eigen::MatrixXd::Zero(nz, nz);
  for (int a = 0; a < nz; ++a) {
    for (int c = 0; c < nz; ++c)
      K(a, c) = J[size_t(z[a]) * p.nfree + z[c]];
    M(a, a) = m->dof_mass[p.free_dof[z[a]]];
  }
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> es(K, M);
  Mode mode;
  mode.omega = std::sqrt(es.eigenvalues()(i - 1));
  mode.shape.assign(size_t(m->ndof), 0);
  const Eigen::VectorXd v = es.eigenvectors().col(i - 1);
  Real at_ref = 0;
  for (int a = 0; a < nz; ++a)
    if (p.free_dof[z[a]] == ref) at_ref = v(a);
  EXPECT_NE(at_ref, 0) << "the reference DOF is not a free z DOF, or a node of the mode";
  for (int a = 0; a < nz; ++a)
    mode.shape[p.free_dof[z[a]]] = v(a) / at_ref;
  return mode;
}

struct Decay {
  Real zeta = 0;   // damping ratio from the logarithmic decrement
  Real omega = 0;  // undamped angular frequency from the peaks' period
  int peaks = 0;
};

/// The damping suites' beam (Rayleigh, Kelvin-Voigt): a 10 cm rod of radius 1 mm, E = 10 MPa,
/// rho = 1000 kg/m^3, of kEdges edges, its first edge clamped and centred on x = 0 (so that
/// the free length is kLength), under the implicit midpoint rule, which adds no damping of its
/// own; kTip is its tip's z DOF.
namespace beam {
constexpr Real kLength = 0.1;   // free length L [m]
constexpr Real kRadius = 1e-3;  // [m]
constexpr Real kE = 1e7;        // [Pa]
constexpr Real kRho = 1000;     // [kg/m^3]
constexpr int kEdges = 20;      // the first one clamped
constexpr int kTip = 3 * kEdges + 2;

inline SceneBuilder clamped(Real dt) {
  const Real dl = kLength / (kEdges - 0.5);
  SceneBuilder b;
  const int mat = b.material("m", kRho, kE, 0.5);
  const int rod = b.straight_rod("beam", vec3(-dl / 2, 0, 0), vec3(kLength, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(kRadius));
  b.fix_edge(rod, 0);
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  b.integrator().dt = dt;
  b.integrator().duration = 10;
  return b;
}
}  // namespace beam

/// the DOF `ref`'s free vibration from a mode's shape as initial velocity (`speed` at ref), its
/// maxima between t0 and t1 (parabolic interpolation of the samples; the DOF at rest is 0):
/// damping ratio and frequency
inline Decay measure_decay(
    SceneBuilder b, const Mode& mode, int ref, Real t0, Real t1, Real speed = 1e-3) {
  const auto model = build_model(b.build());
  Simulator sim(model);
  State s = sim.state();
  for (int i = 0; i < model->ndof; ++i)
    s.u[i] = speed * mode.shape[i];
  sim.set_state(s);
  const Real dt = b.spec().integrator.dt;
  std::vector<Real> z;
  std::vector<Real> t_peak, a_peak;
  while (sim.time() < t1) {
    EXPECT_TRUE(sim.step().ok());
    z.push_back(sim.state().q[ref]);
    const size_t m = z.size();
    if (m >= 3 && sim.time() > t0 && z[m - 2] > z[m - 3] && z[m - 2] >= z[m - 1]) {
      // vertex of the parabola through the three samples
      const Real y0 = z[m - 3], y1 = z[m - 2], y2 = z[m - 1];
      const Real den = y0 - 2 * y1 + y2;
      const Real off = den != 0 ? Real(0.5) * (y0 - y2) / den : 0;
      t_peak.push_back(sim.time() - dt + off * dt);
      a_peak.push_back(y1 - Real(0.25) * (y0 - y2) * off);
    }
  }
  Decay d;
  d.peaks = int(a_peak.size());
  if (d.peaks < 3) return d;
  const int cycles = d.peaks - 1;
  const Real delta = std::log(a_peak.front() / a_peak.back()) / cycles;
  d.zeta = delta / std::sqrt(4 * kPi * kPi + delta * delta);
  const Real omega_d = 2 * kPi * cycles / (t_peak.back() - t_peak.front());
  d.omega = omega_d / std::sqrt(1 - d.zeta * d.zeta);
  return d;
}

/// The JSON of two clamped 10 cm rods (parts a, b; E = 10 MPa) with a damping key of the scene
/// format: rod a gives its own "damping": {key: part_value}, the scene "damping": {key:
/// scene_value} (the damping suites' scene-format tests)
inline std::string two_rods_with_damping(const std::string& key,
                                         const std::string& part_value,
                                         const std::string& scene_value) {
  return R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.5}],
  "rods": [{"name": "a", "material": "m", "radius": 1e-3, "damping": {")" +
         key + R"(": )" + part_value + R"(},
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 11}},
           {"name": "b", "material": "m", "radius": 1e-3,
            "shape": {"type": "straight", "start": [0, 0.1, 0], "end": [0.1, 0.1, 0], "nodes": 11}}],
  "boundary": {"fixed_edges": [{"part": "a", "edges": [0]}, {"part": "b", "edges": [0]}]},
  "forces": {"damping": {")" +
         key + R"(": )" + scene_value + R"(}}
})";
}

/// A damping scene of two beams and a plate side by side (apps/scenes/rayleigh_beams.json,
/// viscoelastic_beams.json): the damping's Jacobian against central differences with the plate
/// (part `plate`) in hinge and in mid-edge bending, after 20 steps; then, the plate in hinge
/// bending, the swing of the damped tip's z DOF (`damped`) and of the plain one's (`plain`)
/// over [t_from, t_end]: the damped one has settled to 1 % of the other's, which still swings
/// more than `min_swing`.
inline void expect_damped_beside_plain(
    SceneSpec sc, int plate, int damped, int plain, Real t_from, Real t_end, Real min_swing) {
  for (const ShellBending bending : {ShellBending::kHinge, ShellBending::kMidEdge}) {
    sc.parts[size_t(plate)].bending = bending;
    Simulator sim(build_model(sc));
    ASSERT_TRUE(run_steps(sim, 20));
    const Real rel = residual_fd_error(sim, 1e-3, [](Real) { return Real(1e-7); });
    std::printf("%s, the %s plate: |J - J_fd| / |J_fd| = %.3e\n", sc.name.c_str(),
                bending == ShellBending::kHinge ? "hinge" : "mid-edge", rel);
    EXPECT_LT(rel, kFdRelTol);
  }
  sc.parts[size_t(plate)].bending = ShellBending::kHinge;
  Simulator sim(build_model(sc));
  Real lo[2] = {1, 1}, hi[2] = {-1, -1};
  while (sim.time() < t_end - 1e-9) {
    ASSERT_TRUE(sim.step().ok());
    if (sim.time() < t_from) continue;
    for (int k = 0; k < 2; ++k) {
      const Real z = sim.state().q[size_t(k ? plain : damped)];
      lo[k] = std::min(lo[k], z);
      hi[k] = std::max(hi[k], z);
    }
  }
  std::printf("tip swing over [%g, %g] s: damped %.3e m, plain %.3e m\n", t_from, t_end,
              hi[0] - lo[0], hi[1] - lo[1]);
  EXPECT_LT(hi[0] - lo[0], 0.01 * (hi[1] - lo[1]));
  EXPECT_GT(hi[1] - lo[1], min_swing);
}

}  // namespace slender::test
