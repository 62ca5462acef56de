#include "slender/info.h"

#include <gtest/gtest.h>

#include <string>

#include "record_test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ModelInfo, NamesSizesPartsDofsAndMass) {
  Model m = test::make_rod_model();
  m.scene.integrator.dt = 0.01;
  m.scene.integrator.duration = 1;
  const std::string s = model_info(m);
  EXPECT_TRUE(contains(s, "rod test")) << s;
  EXPECT_TRUE(contains(s, "nodes       3\n")) << s;
  EXPECT_TRUE(contains(s, "edges       2\n")) << s;
  EXPECT_TRUE(contains(s, "bend-twist  1 stencils\n")) << s;
  EXPECT_TRUE(contains(s, "1: rod (3 nodes, 2 edges)")) << s;
  EXPECT_TRUE(contains(s, "11 total, 8 free, 3 fixed")) << s;
  EXPECT_TRUE(contains(s, "mass        2 kg")) << s;
  EXPECT_TRUE(contains(s, "implicit-euler, dt = 0.01 s, duration 1 s, 100 steps")) << s;
  EXPECT_EQ(s.back(), '\n');
}

TEST(ModelInfo, StaticRunsCountLoadSteps) {
  Model m = test::make_rod_model();
  m.scene.integrator.kind = IntegratorKind::kStatic;
  m.scene.integrator.dt = 0.1;
  m.scene.integrator.duration = 1;
  EXPECT_TRUE(contains(model_info(m), "static, dt = 0.1 s, duration 1 s, 10 load steps"));
}

TEST(ModelInfo, StateBytesCountEveryPerEnvArray) {
  const Model m = test::make_rod_model();
  // q, u, a: 3 x 11; edge_d1, edge_t: 2 x 2 x 3; bend_ref_twist: 1
  EXPECT_EQ(state_bytes_per_env(m), (33u + 12u + 1u) * sizeof(Real));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
