// A CPU run maps no CUDA library: the CUDA backend is a module (libslender_cuda.so) that the
// first request for CUDA loads (host/backend/cuda_loader.cpp). This suite is an executable of
// its own, so that no other test has loaded the module in the same process first.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// the lines of /proc/self/maps that name a CUDA library or the module
std::string cuda_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line, found;
  while (std::getline(maps, line)) {
    for (const char* lib :
         {"libcudart", "libcusolver", "libcusparse", "libcublas", "libslender_cuda"})
      if (line.find(lib) != std::string::npos) found += line + "\n";
  }
  return found;
}

TEST(CudaModule, ACpuRunMapsNoCudaLibrary) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.1, 0, 0), 11, mat, SceneBuilder::circle(1e-3));
  b.fix_edge(rod, 0).gravity(vec3(0, 0, -9.8));
  Simulator sim(build_model(b.build()));
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(sim.step().ok());
  EXPECT_FALSE(cuda_module_loaded());
  EXPECT_EQ(cuda_mappings(), "");
  // asking how many devices there are loads the module (in a CUDA build)
  const int devices = cuda_device_count();
  EXPECT_GE(devices, 0);
  EXPECT_EQ(cuda_module_loaded(), built_with_cuda());
  if (built_with_cuda()) {
    EXPECT_NE(cuda_mappings(), "");
  }
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
