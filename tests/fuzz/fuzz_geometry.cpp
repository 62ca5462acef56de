// Fuzz target: MAT-DiSMech geometry text (read_geometry_file) and number tables
// (read_vector_file), from any bytes.

#include <cstdint>

#include "fuzz_util.h"
#include "slender/builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = slender::fuzz::write_input(data, size, ".txt");
  slender::fuzz::expect_clean([&] { slender::read_geometry_file(path); });
  slender::fuzz::expect_clean([&] { slender::read_vector_file(path); });
  return 0;
}
