// The batch's energies (BatchedSimulator::energies; the engine's query, engine/engine_queries.h):
// every environment's, at its own state and time, with its own parameters, as a single
// Simulator put in that state with those parameters reports them. On the vectorized engine (one
// evaluation of every environment) and on the per-environment one. Scenes: a rod's SMA
// actuation (the bend-twist split, the actuation at each environment's own time), a mid-edge
// PneuNet's actuated curvature, a balloon's pressure ramp (the load's potential, a signal in
// time), a manta ray's actuated hinges.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

std::vector<Real> fields(const Energies& e) {
  return {e.kinetic, e.stretch, e.bend, e.twist, e.gravity, e.user, e.load};
}

// the largest difference of the fields over the largest field
Real relative_difference(const Energies& a, const Energies& b) {
  const std::vector<Real> x = fields(a), y = fields(b);
  Real scale = 0, diff = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    scale = std::max(scale, std::fabs(y[i]));
    diff = std::max(diff, std::fabs(x[i] - y[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

TEST(BatchEnergies, EachEnvironmentsAsASingleSimulatorInItsStateReportsThem) {
  struct Case {
    const char* name;
    int steps;
  };
  for (const Case& c : {Case{"sma_limb", 60}, Case{"pneunet_curl", 12},
                        Case{"balloon_inflate", test::capped_steps(40)},
                        Case{"manta_ray", test::capped_steps(12)}}) {
    for (BatchEngine kind : {BatchEngine::kVectorized, BatchEngine::kPerEnvironment}) {
      SCOPED_TRACE(std::string(c.name) +
                   (kind == BatchEngine::kVectorized ? " vectorized" : " per environment"));
      const auto m = build_model(
          read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + c.name + ".json"));
      const int B = 3;
      std::vector<EnvParams> params(B);
      params[1].youngs_scale = 1.2;
      params[1].density_scale = 0.8;
      params[2].youngs_scale = 0.9;
      params[2].override_gravity = true;
      params[2].gravity = Vec3{{0.5, 0, -12}};
      BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto, kind);
      for (int e = 0; e < B; ++e)
        batch.set_params(e, params[size_t(e)]);
      for (int k = 0; k < c.steps; ++k)
        for (StepStatus s : batch.step())
          ASSERT_EQ(s, StepStatus::kConverged) << "step " << k;
      // environment 0 back at its start: the environments' times differ
      batch.reset({1, 0, 0});
      const std::vector<Energies> en = batch.energies();
      ASSERT_EQ(en.size(), size_t(B));
      for (int e = 0; e < B; ++e) {
        Simulator single(m, m->scene.integrator, LinearSolverKind::kAuto);
        single.set_params(params[size_t(e)]);
        single.set_state(batch.state(e));
        const Energies want = single.energies();
        const Real d = relative_difference(en[size_t(e)], want);
        std::printf("%s env %d (t = %.3f s): total %.6e J, batch vs single %.1e\n", c.name, e,
                    batch.state(e).time, want.total(), d);
        EXPECT_LE(d, 1e-12) << "env " << e;
        // the energies move with the state: not the same in every environment
        if (e > 0) {
          EXPECT_NE(fields(en[size_t(e)]), fields(en[0])) << "env " << e;
        }
      }
    }
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
