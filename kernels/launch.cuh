#pragma once

// The CUDA side of the loop layer (include/slender/core/parallel_for.h): the same functor bodies
// the CPU backend runs with parallel_for_host, launched one index per thread. CUDA calls are
// checked; a failure throws slender::Error naming the call, file and line.

#include <cuda_runtime.h>

#include <string>

#include "slender/core/error.h"

namespace slender {

[[noreturn]] inline void cuda_fail(cudaError_t e, const char* what, const char* file, int line) {
  throw Error(std::string("CUDA error in ") + what + " at " + file + ":" + std::to_string(line) +
              ": " + cudaGetErrorString(e));
}

#define SLENDER_CUDA_CHECK(call)                                         \
  do {                                                                   \
    const cudaError_t slender_cuda_err = (call);                         \
    if (slender_cuda_err != cudaSuccess) {                               \
      ::slender::cuda_fail(slender_cuda_err, #call, __FILE__, __LINE__); \
    }                                                                    \
  } while (0)

// After a launch: a launch error at once; with SLENDER_CUDA_SYNC_CHECK (the CMake option) a
// fault inside the kernel too, named at the launch that caused it rather than at the next copy.
#ifdef SLENDER_CUDA_SYNC_CHECK
#define SLENDER_CUDA_LAUNCHED()                  \
  do {                                           \
    SLENDER_CUDA_CHECK(cudaGetLastError());      \
    SLENDER_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
#else
#define SLENDER_CUDA_LAUNCHED() SLENDER_CUDA_CHECK(cudaGetLastError())
#endif

/// The CUDA device current when an engine was built.
inline int cuda_current_device() {
  int d = 0;
  SLENDER_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

/// Makes device d current for a scope (an engine's call from a thread where another device is
/// current) and the caller's device current again after it.
class CudaDeviceScope {
 public:
  explicit CudaDeviceScope(int d) : prev_(cuda_current_device()), d_(d) {
    if (prev_ != d_) SLENDER_CUDA_CHECK(cudaSetDevice(d_));
  }
  ~CudaDeviceScope() {
    if (prev_ != d_) cudaSetDevice(prev_);  // no throw from a destructor
  }
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  int prev_, d_;
};

template <class F>
__global__ void for_each_index_kernel(long n, F f) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

/// Runs f(i) for i in [0, n) on the device (asynchronously on `stream`); f is copied by value,
/// so it must hold device pointers only.
template <class F>
void parallel_for_cuda(long n, const F& f, cudaStream_t stream = nullptr, int block = 128) {
  if (n <= 0) return;
  const long grid = (n + block - 1) / block;
  for_each_index_kernel<F><<<unsigned(grid), unsigned(block), 0, stream>>>(n, f);
  SLENDER_CUDA_LAUNCHED();
}

}  // namespace slender
