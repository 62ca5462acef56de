// Energies from the caller's code (stencils/user_energy.h, with_energies): a copy of the rod's
// own energies added through both adaptors doubles its stiffness (against the Young's modulus
// scale of 2), a spring between nodes no stencil couples enters the Jacobian's pattern (the
// Jacobian against central differences), Sadowsky's ribbon bent without twist bends as the rod
// does, and the errors: DOFs out of range, lists that differ in length, the vectorized batch.

#include "slender/stencils/user_energy.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "../../apps/examples/sadowsky_ribbon.h"
#include "node_spring.h"
#include "physics_util.h"
#include "slender/batch.h"
#include "slender/core/error.h"
#include "slender/stencils/rod_stretch.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr int kNodes = 21;

SceneBuilder hanging_rod(CrossSection cs) {
  SceneBuilder b;
  const int mat = b.material("m", 1200, 2e6, 0.5);
  const int rod = b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), kNodes, mat, cs);
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().dt = 2e-3;
  b.integrator().duration = 1;
  return b;
}

// a user stencil on two nodes: the library's own stretching spring
struct UserStretch {
  static constexpr int kDofs = 6;
  using Params = RodStretch::Params;
  SLENDER_HD static void eval(const Vec<6>& x, const Params& p, unsigned want, LocalEval<6>& r) {
    rod_stretch_eval(x, p, want, r);
  }
};

using test::NodeSpring;

// the rod's own stretching and bend-twist energies again, from the caller's code
std::shared_ptr<const Model> with_copies(const std::shared_ptr<const Model>& m) {
  std::vector<std::array<int, 6>> dofs;
  std::vector<RodStretch::Params> params;
  for (int e = 0; e < m->nedge; ++e) {
    const int a = m->edge_node[2 * e], b = m->edge_node[2 * e + 1];
    dofs.push_back({3 * a, 3 * a + 1, 3 * a + 2, 3 * b, 3 * b + 1, 3 * b + 2});
    params.push_back({m->edge_EA[e], m->edge_l_bar[e], m->edge_stretch_alpha[e]});
  }
  return with_energies(
      m, {std::make_shared<LocalStencilEnergy<UserStretch>>("stretch copy", dofs, params),
          std::make_shared<BendTwistStrainEnergy<RodElasticStrainEnergy>>("bend-twist copy")});
}

// f must throw slender::Error whose message contains `what`
template <class F>
void expect_error(F&& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying: " << what;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

using test::max_abs;
using test::max_abs_diff;

TEST(UserEnergy, ACopyOfTheRodsOwnEnergiesDoublesItsStiffness) {
  const auto base = build_model(hanging_rod(SceneBuilder::circle(1e-3)).build());
  const auto copied = with_copies(base);
  EXPECT_TRUE(base->user_energies.empty());         // the given model is unchanged
  EXPECT_EQ(copied->plan.nnz(), base->plan.nnz());  // the same couplings
  Simulator a(copied), b(base);
  EnvParams twice;
  twice.youngs_scale = 2;
  b.set_params(twice);
  long it_a = 0, it_b = 0;
  for (int s = 0; s < 60; ++s) {
    const StepReport ra = a.step(), rb = b.step();
    ASSERT_TRUE(ra.ok() && rb.ok()) << "step " << s;
    it_a += ra.iterations;
    it_b += rb.iterations;
  }
  const Real rel = max_abs_diff(a.state().q, b.state().q) / max_abs(b.state().q);
  std::printf(
      "user energies: copies of the rod's own against E x 2: |dq| / |q| = %.2e, "
      "Newton iterations %ld and %ld\n",
      rel, it_a, it_b);
  EXPECT_LT(rel, 1e-10);
  EXPECT_EQ(it_a, it_b);
  // the energies: the copies hold as much as the rod's own; twice the rod's own is b's
  const Energies ea = a.energies(), eb = b.energies();
  const Real own = ea.stretch + ea.bend + ea.twist;
  EXPECT_GT(own, 0);
  EXPECT_NEAR(ea.user, own, 1e-12 * own);
  EXPECT_NEAR(ea.total(), eb.total(), 1e-8 * std::abs(eb.total()));
  // the clamp's reactions include the copies' forces
  const std::vector<Real> fa = a.reactions(), fb = b.reactions();
  EXPECT_LT(max_abs_diff(fa, fb), 1e-8 * max_abs(fb));
  // the per-environment batch runs such a model; the vectorized one refuses it, saying why
  BatchedSimulator batch(copied, 2);
  for (int s = 0; s < 3; ++s)
    batch.step();
  EXPECT_EQ(batch.state(1).step, 3);
  expect_error(
      [&] {
        BatchedSimulator v(copied, 2, copied->scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kVectorized);
      },
      "energies from the caller's code");
}

TEST(UserEnergy, ASpringBetweenUncoupledNodesEntersTheJacobiansPattern) {
  const auto base = build_model(hanging_rod(SceneBuilder::circle(1e-3)).build());
  const int n0 = 3, n1 = kNodes - 1;
  std::vector<std::array<int, 6>> dofs = {
      {3 * n0, 3 * n0 + 1, 3 * n0 + 2, 3 * n1, 3 * n1 + 1, 3 * n1 + 2}};
  const auto m = with_energies(base, {std::make_shared<LocalStencilEnergy<NodeSpring>>(
                                         "tendon", dofs, std::vector<NodeSpring::Params>{{5.0}})});
  // the node pair's 3 x 3 blocks, both ways
  EXPECT_EQ(m->plan.nnz(), base->plan.nnz() + 18);
  Simulator sim(m);
  for (int s = 0; s < 20; ++s)
    ASSERT_TRUE(sim.step().ok()) << "step " << s;
  const Real rel = test::residual_fd_error(sim, 2e-3, [](Real) { return Real(1e-7); });
  std::printf("user energy (a spring across the rod): |J - J_fd| / |J_fd| = %.3e\n", rel);
  EXPECT_LT(rel, test::kFdRelTol);
  // the spring pulls the tip towards node n0: closer than without it
  Simulator free(base);
  for (int s = 0; s < 20; ++s)
    ASSERT_TRUE(free.step().ok());
  auto gap = [&](const Simulator& x) {
    Real d = 0;
    for (int c = 0; c < 3; ++c)
      d += std::pow(x.state().q[3 * n1 + c] - x.state().q[3 * n0 + c], 2);
    return std::sqrt(d);
  };
  EXPECT_LT(gap(sim), gap(free));
}

// Without twist Sadowsky's energy is kappa1^4 / (kappa1^2 + eps^2) ~ kappa1^2: the ribbon bends
// under its weight as the rod it replaces does (to (eps / kappa1)^2, and its own in-plane
// bending); its easy direction either way (gravity along each director)
TEST(UserEnergy, SadowskysRibbonBentWithoutTwistBendsAsTheRod) {
  for (const Vec3 g : {vec3(0, 0, -9.81), vec3(0, -9.81, 0)}) {
    SceneBuilder b = hanging_rod(SceneBuilder::rectangle(4e-3, 4e-4));
    b.gravity(g);
    const auto rod = build_model(b.build());
    const auto ribbon =
        with_energies(rod, {std::make_shared<BendTwistStrainEnergy<examples::SadowskyRibbon>>(
                               "Sadowsky", examples::SadowskyRibbon{1e-7})});
    Simulator a(ribbon), r(rod);
    for (int s = 0; s < 150; ++s) {
      ASSERT_TRUE(a.step().ok()) << "step " << s;
      ASSERT_TRUE(r.step().ok()) << "step " << s;
    }
    const int tip = 3 * (kNodes - 1);
    Vec3 da, dr;
    for (int c = 0; c < 3; ++c) {
      da[c] = a.state().q[tip + c] - rod->node_x0[tip + c];
      dr[c] = r.state().q[tip + c] - rod->node_x0[tip + c];
    }
    std::printf("Sadowsky ribbon, gravity (%g, %g, %g): tip moved %.6e m, the rod's %.6e m\n", g[0],
                g[1], g[2], norm(da), norm(dr));
    EXPECT_GT(norm(dr), 1e-3);
    EXPECT_LT(norm(da - dr), 1e-3 * norm(dr));
    EXPECT_LT(std::abs(a.energies().twist), 1e-6 * a.energies().bend + 1e-15);
  }
}

// Twisted without bending, the ribbon holds Sadowsky's energy D/(2 dl) tau^4 / eps^2 per
// stencil, where the rod held 1/2 GJ/dl tau^2: Simulator::energies() sums it as the engine does
TEST(UserEnergy, SadowskysRibbonTwistedWithoutBendingHoldsItsEnergy) {
  SceneBuilder b = hanging_rod(SceneBuilder::rectangle(4e-3, 4e-4));
  b.gravity(vec3(0, 0, 0));
  const auto rod = build_model(b.build());
  const Real eps = 0.01;
  const auto ribbon =
      with_energies(rod, {std::make_shared<BendTwistStrainEnergy<examples::SadowskyRibbon>>(
                             "Sadowsky", examples::SadowskyRibbon{eps})});
  Simulator a(ribbon), r(rod);
  State s = a.state();
  const Real rate = 0.02;  // twist per edge [rad]
  for (int e = 0; e < rod->nedge; ++e)
    s.q[size_t(3 * rod->nnode + e)] = rate * e;
  a.set_state(s);
  r.set_state(s);
  Real sadowsky = 0, own = 0;
  for (int k = 0; k < rod->nbend; ++k) {
    const Real tau = rate * rod->bend_sign[2 * k] * rod->bend_sign[2 * k + 1];
    sadowsky += rod->bend_EI[2 * k] / (2 * rod->bend_dl[k]) * std::pow(tau, 4) / (eps * eps);
    own += 0.5 * rod->bend_GJ[k] / rod->bend_dl[k] * tau * tau;
  }
  const Energies ea = a.energies(), er = r.energies();
  std::printf("twisted ribbon: Sadowsky %.6e J (expected %.6e), the rod's twist %.6e J\n",
              ea.user + ea.twist + ea.bend, sadowsky, er.twist);
  EXPECT_NEAR(er.twist, own, 1e-9 * own);
  EXPECT_NEAR(ea.user + ea.twist + ea.bend, sadowsky, 1e-9 * sadowsky);
  EXPECT_GT(sadowsky, 10 * own);
}

TEST(UserEnergy, BadStencilsAreErrorsThatNameThem) {
  const auto base = build_model(hanging_rod(SceneBuilder::circle(1e-3)).build());
  const int ndof = base->ndof;
  std::vector<std::array<int, 6>> dofs = {{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, ndof}};
  const std::vector<NodeSpring::Params> two = {{1.0}, {1.0}};
  expect_error(
      [&] {
        with_energies(base, {std::make_shared<LocalStencilEnergy<NodeSpring>>("bad", dofs, two)});
      },
      "energy 'bad': stencil 1, local DOF 5 is DOF " + std::to_string(ndof));
  expect_error([&] { LocalStencilEnergy<NodeSpring>("short", dofs, {{1.0}}); },
               "energy 'short': 2 stencils but 1 parameter sets");
  expect_error([&] { with_energies(base, {nullptr}); }, "energy 0 is null");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
