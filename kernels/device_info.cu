// Device discovery for the CUDA module (the loader, host/backend/cuda_loader.cpp, forwards
// cuda_device_count(), cuda_device_of() and cuda_device_memory() here).

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

void cuda_module_device_memory(std::size_t* free_bytes, std::size_t* total_bytes) {
  *free_bytes = *total_bytes = 0;
  if (cudaMemGetInfo(free_bytes, total_bytes) != cudaSuccess) {
    cudaGetLastError();
    throw Error("cannot read the free memory of the current CUDA device");
  }
}

}  // namespace slender
