// Fuzz target: the ASCII PLY mesh reader (read_mesh_file on a .ply), from any bytes.

#include <cstdint>

#include "fuzz_util.h"
#include "slender/builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = slender::fuzz::write_input(data, size, ".ply");
  slender::fuzz::expect_clean([&] { slender::read_mesh_file(path); });
  return 0;
}
