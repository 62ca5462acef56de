// Fuzz target: the JSON scene reader and validate_scene (read_scene_text), from any bytes.

#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "slender/builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  slender::fuzz::expect_clean([&] { slender::read_scene_text(text, "fuzz.json", "/nonexistent"); });
  return 0;
}
