// Hyperelastic stretching of rods (issue 17, item 3): a rod pulled along its axis follows the
// force-stretch curve of its law, F = dW/dlambda, up to stretch 2, to 1e-6: the Ogden law with
// Bartholdt et al.'s identified silicone parameters (seed 004, Table II: EA = 91.87 N,
// alpha = 1.3308, c_e = 2.2703), a one-term Ogden law of alpha = 5 and the neo-Hookean law; at
// small strain each is Hookean with the stiffness c_e EA. Scene errors name the field.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "error_util.h"
#include "physics_util.h"
#include "slender/batch.h"
#include "slender/core/error.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kL = 0.1;  // [m]
constexpr int kEdges = 8;

// the tension of the one-term Ogden law at stretch lam (EA: the small-strain stiffness)
Real ogden_tension(Real EA, Real alpha, Real lam) {
  const Real C = 2 * EA / (3 * alpha * alpha);
  return C * alpha * (std::pow(lam, alpha - 1) - std::pow(lam, -alpha / 2 - 1));
}

// a rod along x, node 0 fixed, every node held in y and z and every twist fixed, pulled at its
// tip by F along x: a static solve in load steps; the stretch of every edge
std::vector<Real> stretches(const PartSpec::StretchLaw& law, Real EA, Real F) {
  SceneBuilder b;
  const int mat = b.material("silicone", 1070, 1e6, 0.5);
  const int rod = b.straight_rod("rod", vec3(0, 0, 0), vec3(kL, 0, 0), kEdges + 1, mat,
                                 SceneBuilder::circle(5e-3));
  b.part(rod).stiffness.EA = EA;
  b.part(rod).stretch_law = law;
  b.fix_node(rod, 0);
  for (int i = 1; i <= kEdges; ++i)
    b.fix_dofs(rod, i, false, true, true);
  for (int e = 0; e < kEdges; ++e)
    b.fix_twist(rod, e);
  b.point_load(rod, kEdges, vec3(F, 0, 0));
  b.integrator().newton.abs_tol = 1e-12;
  b.integrator().newton.rel_tol = 1e-14;
  const test::StaticSolve s = test::static_solve(b, 10);
  std::vector<Real> lam;
  const State& st = s.sim->state();
  for (int e = 0; e < kEdges; ++e)
    lam.push_back((st.q[3 * (e + 1)] - st.q[3 * e]) / (kL / kEdges));
  return lam;
}

TEST(Hyperelastic, RodsFollowTheirLawsForceStretchCurveUpToStretchTwo) {
  struct Case {
    const char* name;
    PartSpec::StretchLaw law;
    Real EA, alpha;  // EA before the law's scale; the law's exponent
  };
  using Law = PartSpec::StretchLaw;
  const Case cases[] = {{"Bartholdt (seed 004)", Law{Law::kOgden, 1.3308, 2.2703}, 91.87, 1.3308},
                        {"Ogden alpha 5", Law{Law::kOgden, 5, 1}, 50, 5},
                        {"neo-Hookean", Law{Law::kNeoHookean, 0, 1}, 50, 2}};
  for (const Case& c : cases) {
    const Real EA = c.EA * c.law.scale;
    for (const Real lam_want : {Real(1.01), Real(1.3), Real(1.6), Real(2)}) {
      const Real F = ogden_tension(EA, c.alpha, lam_want);
      const std::vector<Real> lam = stretches(c.law, c.EA, F);
      for (const Real l : lam) {
        // the law's tension at the simulated stretch is the applied force
        EXPECT_NEAR(ogden_tension(EA, c.alpha, l) / F, 1, 1e-6) << c.name << ", F " << F;
        EXPECT_NEAR(l, lam_want, 1e-6 * lam_want) << c.name;
      }
      if (lam_want == 2)
        std::printf("%-22s F = %8.3f N: stretch %.9f (law: 2)\n", c.name, F, lam.back());
    }
    // small strain: Hookean with the stiffness EA c_e (1e-4 relative at a strain of 1e-4)
    const Real F = 1e-4 * EA;
    const std::vector<Real> lam = stretches(c.law, c.EA, F);
    EXPECT_NEAR((lam[0] - 1) / 1e-4, 1, 1e-3) << c.name;
  }
}

// apps/scenes/silicone_stretch.json: the three cords settle at their laws' stretches under
// 60 N (the cord's own weight, 0.008 N, shifts them by less than 1e-4)
TEST(Hyperelastic, TheSceneCordsSettleAtTheirLawsStretch) {
  const auto m = build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/silicone_stretch.json"));
  Simulator sim(m);
  while (sim.time() < 1.5 - 1e-9)
    ASSERT_TRUE(sim.step().ok());
  const Real EA = 91.87, c_e = 2.2703;
  auto solve = [&](Real alpha) {  // the stretch whose tension is 60 N (bisection)
    Real lo = 1, hi = 3;
    for (int i = 0; i < 200; ++i) {
      const Real mid = (lo + hi) / 2;
      (ogden_tension(EA * c_e, alpha, mid) < 60 ? lo : hi) = mid;
    }
    return lo;
  };
  const Real laws[3] = {1 + 60 / EA, solve(1.3308), solve(2)};
  for (int p = 0; p < 3; ++p) {
    // the last edge of cord p (nodes 11 p + 9, 11 p + 10)
    const int a = 11 * p + 9, b = a + 1;
    const Real lam = (sim.state().q[3 * a + 2] - sim.state().q[3 * b + 2]) / 0.01;
    std::printf("cord %d: stretch %.5f, law %.5f\n", p, lam, laws[p]);
    EXPECT_NEAR(lam, laws[p], 2e-4) << p;
  }
}

// the vectorized batch runs the same stencil: two environments of the scene match a Simulator
// (the batch's Newton loop and solves are its own: to 1e-10 relative after 300 steps)
TEST(Hyperelastic, TheVectorizedBatchMatchesTheSimulator) {
  const auto m = build_model(
      read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/silicone_stretch.json"));
  Simulator sim(m);
  BatchedSimulator batch(m, 2, m->scene.integrator, LinearSolverKind::kAuto,
                         BatchEngine::kVectorized);
  for (int k = 0; k < 300; ++k) {
    ASSERT_TRUE(sim.step().ok());
    batch.step();
    ASSERT_EQ(batch.reports()[1].status, StepStatus::kConverged) << k;
  }
  Real diff = 0, ref = 0;
  for (int i = 0; i < m->ndof; ++i) {
    diff = std::max(diff, std::fabs(batch.state(1).q[i] - sim.state().q[i]));
    ref = std::max(ref, std::fabs(sim.state().q[i]));
  }
  EXPECT_LT(diff, 1e-10 * ref);
}

// a scene built in code is checked as a file is (validate_scene): an Ogden law without its
// exponent, a NaN damping
TEST(Hyperelastic, TheBuilderIsCheckedToo) {
  auto rod = [](auto&& change) {
    SceneBuilder b;
    const int mat = b.material("m", 1000, 1e6, 0.5);
    const int r =
        b.straight_rod("r", vec3(0, 0, 0), vec3(0.1, 0, 0), 5, mat, SceneBuilder::circle(1e-3));
    b.fix_node(r, 0);
    change(b.part(r));
    return b;
  };
  using Law = PartSpec::StretchLaw;
  const std::pair<std::function<void(PartSpec&)>, std::string> bad[] = {
      {[](PartSpec& p) {
         p.stretch_law = Law{Law::kOgden, 0, 1};
       },
       "parts[0].stretching.alpha"},
      {[](PartSpec& p) {
         p.stretch_law = Law{Law::kNeoHookean, 3, 1};
       },
       "parts[0].stretching.alpha"},
      {[](PartSpec& p) {
         p.stretch_law = Law{Law::kHookean, 0, 0};
       },
       "parts[0].stretching.scale"},
      {[](PartSpec& p) { p.mass_damping = NAN; }, "parts[0].damping.mass_proportional"},
      {[](PartSpec& p) { p.stiffness_damping = INFINITY; },
       "parts[0].damping.stiffness_proportional"}};
  for (const auto& [change, field] : bad) {
    const auto& edit = change;  // (a structured binding is not captured before C++20)
    const InputError e = test::catch_input_error([&] { build_model(rod(edit).spec()); });
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(Hyperelastic, TheSceneNamesABadLaw) {
  const std::string base = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.5}],
  "rods": [{"name": "r", "material": "m", "radius": 1e-3, "stretching": STRETCH,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0], "nodes": 5}}],
  "boundary": {"fixed_nodes": [{"part": "r", "nodes": [0]}]}
})";
  auto with = [&](const std::string& law) {
    std::string s = base;
    s.replace(s.find("STRETCH"), 7, law);
    return s;
  };
  const auto m = build_model(
      read_scene_text(with(R"({"law": "ogden", "alpha": 1.3308, "scale": 2.2703})"), "h.json", ""));
  EXPECT_EQ(m->edge_stretch_alpha[0], 1.3308);
  EXPECT_NEAR(m->edge_EA[0], 2.2703 * 1e6 * kPi * 1e-6, 1e-12);
  EXPECT_EQ(build_model(read_scene_text(with(R"({"law": "neo_hookean"})"), "h.json", ""))
                ->edge_stretch_alpha[0],
            2);
  const std::pair<std::string, std::string> bad[] = {
      {R"({"law": "mooney"})", "rods[0].stretching.law"},
      {R"({"law": "ogden"})", "rods[0].stretching.alpha"},
      {R"({"law": "ogden", "alpha": 0})", "rods[0].stretching.alpha"},
      {R"({"law": "neo_hookean", "alpha": 2})", "rods[0].stretching.alpha"},
      {R"({"law": "hookean", "scale": -1})", "rods[0].stretching.scale"},
      {R"({"law": "hookean", "c_e": 2})", "rods[0].stretching.c_e"}};
  for (const auto& [law, field] : bad) {
    const std::string& given = law;  // (a structured binding is not captured before C++20)
    const InputError e =
        test::catch_input_error([&] { read_scene_text(with(given), "h.json", ""); });
    EXPECT_EQ(e.field(), field) << law << ": " << e.what();
    EXPECT_EQ(e.file(), "h.json");
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
