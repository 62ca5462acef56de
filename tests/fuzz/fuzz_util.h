#pragma once

// Shared by the fuzz targets (libFuzzer, built by scripts/fuzz.sh with clang, ASan and UBSan):
// what a reader may do with bad input is throw slender::InputError (or slender::Error); any
// other exception, a crash, a sanitizer report, a hang or a huge allocation is a finding.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "io/mesh.h"
#include "slender/core/error.h"

namespace slender::fuzz {

/// generated rods and meshes of at most 20,000 nodes (10^7 otherwise): a scene of a few bytes
/// may ask for a mesh of millions of nodes, which is valid and takes its time, not a finding.
/// Set before the first input, as each target's process starts.
inline const bool kNodeLimitSet = [] {
  slender::set_max_generated_nodes(20000);
  return true;
}();

/// the input as a file the readers open by path (one per process, rewritten for each input)
inline std::string write_input(const uint8_t* data, size_t size, const char* extension) {
  const std::string path = "/tmp/slender-fuzz-" + std::to_string(getpid()) + extension;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

/// runs a reader: slender's own errors are the expected outcome of bad input, anything else
/// aborts (a finding)
template <class F>
void expect_clean(F&& read) {
  try {
    read();
  } catch (const slender::InputError&) {
  } catch (const slender::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
}

}  // namespace slender::fuzz
