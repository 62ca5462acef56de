// Device discovery for the CUDA module (the loader, host/backend/cuda_loader.cpp, forwards
// cuda_device_count() and cuda_device_of() here).

#include <cuda_runtime.h>

#include "slender/core/error.h"

namespace slender {

int cuda_module_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

int cuda_module_device_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    throw Error("cannot tell which CUDA device holds the simulator's arrays");
  }
  return a.device;
}

}  // namespace slender
