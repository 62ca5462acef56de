#pragma once

// GPU suites start with SLENDER_REQUIRE_GPU(): they skip cleanly where no device is visible.
// Those that compare with the CPU run the CPU half first (cuda_device_present).

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace slender::test {

/// whether a CUDA device is visible. A GPU test that compares with the CPU runs its CPU half
/// first and asserts that it converges, with or without a device, so that CI checks the test's
/// own set-up; then it skips where this is false.
inline bool cuda_device_present() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

}  // namespace slender::test

#define SLENDER_REQUIRE_GPU()                                                      \
  do {                                                                             \
    if (!::slender::test::cuda_device_present()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)
