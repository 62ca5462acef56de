#pragma once

// GPU suites start with SLENDER_REQUIRE_GPU(): they skip cleanly where no device is visible.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#define SLENDER_REQUIRE_GPU()                                              \
  do {                                                                     \
    int slender_ndev = 0;                                                  \
    if (cudaGetDeviceCount(&slender_ndev) != cudaSuccess || slender_ndev == 0) { \
      cudaGetLastError();                                                  \
      GTEST_SKIP() << "no CUDA device";                                    \
    }                                                                      \
  } while (0)
