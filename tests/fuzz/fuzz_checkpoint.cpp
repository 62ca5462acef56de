// Fuzz target: the checkpoint reader (load_checkpoint) of a small model
// (apps/scenes/rod_drop.json), from any bytes. The first byte says how the rest is taken: 0, as the
// whole file; otherwise as the payload of a file whose header (format 5 for a byte of 1, 4, 7,
// ..., format 4 for 2, 5, ..., format 3 for 3, 6, ...) and checksum the target writes. Mutated
// bytes almost never keep a checksum, so without the second kind the inputs would stop at it and
// never reach the payload's parser (the fingerprint, the cursor and the outputs' marks, the state
// arrays and their values, the controllers' section). The seeds (scripts/fuzz.sh) are
// checkpoints of the scene's run, in both kinds.

#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "slender/builder.h"
#include "slender/checkpoint.h"

namespace {

slender::Simulator& simulator() {
  static slender::Simulator sim(slender::build_model(
      slender::read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rod_drop.json")));
  return sim;
}

// 64-bit FNV-1a, the checkpoint's checksum
std::uint64_t fnv1a(const char* p, size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string file;
  if (data[0] == 0) {
    file = rest;
  } else {
    const std::uint32_t version = 5 - std::uint32_t((data[0] - 1) % 3);
    const std::uint64_t sum = fnv1a(rest.data(), rest.size());
    file.assign("SLENDERCK", 10);  // the magic with its terminating zero
    file.append(reinterpret_cast<const char*>(&version), sizeof version);
    file.append(reinterpret_cast<const char*>(&sum), sizeof sum);
    file += rest;
  }
  const std::string path = slender::fuzz::write_input(reinterpret_cast<const uint8_t*>(file.data()),
                                                      file.size(), ".slck");
  slender::fuzz::expect_clean([&] { slender::load_checkpoint(simulator(), path); });
  return 0;
}
