#pragma once

// An environment variable that forces a choice the engine otherwise makes itself (the device
// paths' switches that the GPU checks compare: SLENDER_BATCH_STAGED, SLENDER_BATCH_LANES,
// SLENDER_AMG_REFRESH; docs/backends.md).

#include <cstdlib>

namespace slender {

/// an environment switch that forces a choice: "0" false, "1" true, else (unset) `otherwise`
inline bool env_switch(const char* name, bool otherwise) {
  const char* v = std::getenv(name);
  if (v && v[0] == '0') return false;
  if (v && v[0] == '1') return true;
  return otherwise;
}

}  // namespace slender
