// Shell self-contact scenes of Py-DiSMech §VI, each run at the paper's two moduli:
// - Fig. 9, apps/scenes/shell_fold.json: a strip lying partly on the ground, curled up into a
//   flap above its base, folds onto itself (E = 100 MPa and 1 GPa);
// - Fig. 11, apps/scenes/cloth_drop.json: a circular cloth held at its centre falls and folds
//   over itself (E = 2 and 20 MPa).
// No tunnelling: every few steps the clearance probe measures the smallest distance between
// triangles that share no node (vertex-triangle and edge-edge, 0 for intersecting triangles),
// which must never drop below half the contact distance (half the shell thickness), and the
// lowest node's clearance above the ground. Physics: the fold happens (the flap comes to lie on
// the base, with self-contact pairs), the stiffer strip keeps the taller fold (Fig. 9), and the
// softer cloth folds more: more self-contact pairs and a smaller footprint (Fig. 11). Every step
// converges at the scene's dt (no adaptive halving) and counts no degenerate stencil and no
// failed line search.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "contact/clearance.h"
#include "physics_util.h"
#include "slender/builder.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::string scene_path(const std::string& name) {
  return std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name;
}

// what a run of a self-contact scene measured
struct ContactRun {
  Real E = 0;                  // [Pa]
  Real h = 0;                  // shell thickness = contact distance [m]
  Real min_self = INFINITY;    // smallest clearance between triangles sharing no node [m]
  Real min_ground = INFINITY;  // smallest node height above the ground minus h / 2 [m]
  long max_touching = 0;       // most triangle pairs closer than h + tolerance at one check
  long touching = 0;           // at the end
  long checks = 0;             // clearance measurements
  long lu_fallbacks = 0;       // factorizations that fell back to sparse LU
  double wall = 0;             // [s]
  std::shared_ptr<const Model> model;
  State end;  // the last state
};

// Runs a scene of apps/scenes/ with every material's Young's modulus set to E for `duration`,
// measuring clearances every `every` steps (and at the end). Fails on a failed step, a
// clearance below half the thickness, a degenerate stencil or a failed line search.
::testing::AssertionResult run_scene(
    const std::string& name, Real E, Real duration, int every, ContactRun& out) {
  SceneSpec scene = read_scene_file(scene_path(name));
  for (Material& mat : scene.materials)
    mat.youngs_modulus = E;
  out.E = E;
  out.model = build_model(scene);
  const Model& m = *out.model;
  out.h = 2 * m.tri_half_thickness[0];
  contact::ClearanceProbe probe;
  contact::ClearanceOptions opt;
  opt.search = out.h;
  opt.touch = out.h + m.contact.tolerance;

  Simulator sim(out.model);
  const long steps = std::lround(duration / scene.integrator.dt);
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 1; i <= steps; ++i) {
    const StepReport r = sim.step();
    if (!r.ok()) {
      return ::testing::AssertionFailure()
             << name << " E = " << E << ": step " << i << " at t = " << sim.state().time
             << " failed: " << to_string(r.status) << " after " << r.iterations
             << " iterations, residual " << r.residual;
    }
    if (i % every != 0 && i != steps) continue;
    const contact::Clearance c = probe.measure(m, sim.state().q, opt);
    ++out.checks;
    out.min_self = std::min(out.min_self, c.self);
    out.min_ground = std::min(out.min_ground, c.ground);
    out.max_touching = std::max(out.max_touching, c.touching);
    out.touching = c.touching;
    // no tunnelling, checked at every measurement: non-adjacent triangles stay more than half
    // the contact distance apart (0 if any intersect), and no node passes through the ground
    if (!(c.self > out.h / 2) || !(c.ground > -out.h / 2)) {
      return ::testing::AssertionFailure()
             << name << " E = " << E << ": at t = " << sim.state().time << " triangles "
             << c.self_tri[0] << " and " << c.self_tri[1] << " are " << c.self << " m apart ("
             << c.crossing << " intersecting pairs), node " << c.ground_node << " is " << c.ground
             << " m above the ground's contact surface";
    }
  }
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.end = sim.state();
  out.lu_fallbacks = sim.state().warn_linear_fallback;
  if (sim.state().warn_degenerate != 0 || sim.state().warn_line_search != 0) {
    return ::testing::AssertionFailure()
           << name << " E = " << E << ": " << sim.state().warn_degenerate
           << " degenerate stencils, " << sim.state().warn_line_search << " failed line searches";
  }
  return ::testing::AssertionSuccess();
}

void print(const char* what, const ContactRun& r) {
  std::printf(
      "%s E = %.3g Pa: min clearance between non-adjacent triangles %.4e m (contact distance "
      "%.1e m), min ground clearance %.3e m, touching pairs max %ld / end %ld, %ld checks, LU "
      "fallbacks %ld, %.1f s\n",
      what, r.E, r.min_self, r.h, r.min_ground, r.max_touching, r.touching, r.checks,
      r.lu_fallbacks, r.wall);
}

Vec3 node_at(const State& s, int n) { return test::node_position(s, n); }

// Fig. 9. The flap (nodes that start above 5 cm) falls onto the base. At both moduli it ends
// lying on the base: self-contact pairs hold it there, with flap nodes resting a contact
// distance above the base's mid-surface (the skewed creases turn the flap by 16 degrees, so a
// corner of the softer flap also reaches past the base onto the ground). The stiffer strip's
// fold stands taller (its highest node, the top of the curl, is higher) and lies on itself over
// a smaller area (fewer touching pairs).
TEST(ShellSelfContact, StripFoldsOntoItselfStifferFoldStandsTaller) {
  const Real duration = 0.6;  // the flap lands at about 0.2 s and has settled by 0.5 s
  ContactRun soft, stiff;
  ASSERT_TRUE(run_scene("shell_fold.json", 1e8, duration, 5, soft));
  ASSERT_TRUE(run_scene("shell_fold.json", 1e9, duration, 5, stiff));
  Real top[2];
  int k = 0;
  for (const ContactRun* r : {&soft, &stiff}) {
    print("shell_fold", *r);
    const Model& m = *r->model;
    SCOPED_TRACE(r->E);
    // no tunnelling: non-adjacent triangles stay at least half the contact distance apart
    EXPECT_GT(r->min_self, r->h / 2);
    // and no node goes through the ground
    EXPECT_GT(r->min_ground, -r->h / 2);
    // the fold: layers in contact at the end
    EXPECT_GT(r->touching, 0);
    // flap nodes on the base: the base's mid-surface lies at about h / 2 + the ground contact
    // layer, a node resting on it a contact distance h higher (within the tolerance)
    const Real tol = m.contact.tolerance, on_base_lo = 1.5 * r->h - tol,
               on_base_hi = 1.5 * r->h + 2 * tol;
    int on_base = 0, landed = 0;
    top[k] = -INFINITY;
    for (int n = 0; n < m.nnode; ++n) {
      const Real z = node_at(r->end, n)[2];
      top[k] = std::max(top[k], z);
      if (m.node_x0[3 * n + 2] < 0.05) continue;
      if (z < 0.01) ++landed;
      if (z > on_base_lo && z < on_base_hi) ++on_base;
    }
    std::printf(
        "  folded height (highest node) %.4f m; flap nodes: %d below 1 cm, %d resting on "
        "the base (%.1f to %.1f mm)\n",
        top[k], landed, on_base, 1e3 * on_base_lo, 1e3 * on_base_hi);
    EXPECT_GT(on_base, 0);
    EXPECT_GT(2 * on_base, landed);  // most of what came down lies on the base
    ++k;
  }
  // Fig. 9: the stiffer shell keeps the taller fold, the softer one lies on itself over more
  EXPECT_GT(top[1], top[0] + 0.005);
  EXPECT_GT(soft.touching, stiff.touching);
}

// Fig. 11. The cloth hangs from its clamped centre; its skirt collapses into folds. The softer
// cloth folds more: it comes into self-contact, with more touching pairs than the stiffer one,
// and its footprint (the largest horizontal distance of a node from the centre) is smaller.
TEST(ShellSelfContact, ClothFoldsOverItselfSofterFoldsMore) {
  const Real duration = 1.0;
  ContactRun soft, stiff;
  ASSERT_TRUE(run_scene("cloth_drop.json", 2e6, duration, 5, soft));
  ASSERT_TRUE(run_scene("cloth_drop.json", 2e7, duration, 5, stiff));
  auto footprint = [](const ContactRun& r) {
    Real f = 0;
    for (int n = 0; n < r.model->nnode; ++n) {
      const Vec3 x = node_at(r.end, n);
      f = std::max(f, std::hypot(x[0], x[1]));
    }
    return f;
  };
  for (const ContactRun* r : {&soft, &stiff}) {
    print("cloth_drop", *r);
    std::printf("  footprint radius %.4f m\n", footprint(*r));
    SCOPED_TRACE(r->E);
    EXPECT_GT(r->min_self, r->h / 2);
    EXPECT_GT(r->min_ground, -r->h / 2);
  }
  EXPECT_GT(soft.max_touching, 0);
  EXPECT_GT(soft.max_touching, stiff.max_touching);
  EXPECT_LT(footprint(soft), footprint(stiff));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
