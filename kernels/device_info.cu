// Device discovery for the CUDA build.

#include <cuda_runtime.h>

#include "slender/backend.h"
#include "slender/core/error.h"

namespace slender {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

bool built_with_cuda() { return true; }

int cuda_device_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    throw Error("cannot tell which CUDA device holds the simulator's arrays");
  }
  return a.device;
}

void require_cuda_backend() {
  if (cuda_device_count() == 0) {
    throw Error(
        "the CUDA backend was asked for, but no CUDA device is visible on this machine; "
        "run with --backend cpu (or \"backend\": \"cpu\" in the scene)");
  }
}

}  // namespace slender
