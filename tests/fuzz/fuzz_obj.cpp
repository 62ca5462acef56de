// Fuzz target: the OBJ mesh reader (read_mesh_file on a .obj), from any bytes.

#include <cstdint>

#include "fuzz_util.h"
#include "slender/builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = slender::fuzz::write_input(data, size, ".obj");
  slender::fuzz::expect_clean([&] { slender::read_mesh_file(path); });
  return 0;
}
