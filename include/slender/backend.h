#pragma once

// Backend selection. The CPU backend is always built; the CUDA backend only with
// SLENDER_WITH_CUDA (host/cuda_stub.cpp answers otherwise).

#include <string>

namespace slender {

/// Number of CUDA devices visible (0 in a CPU-only build or on a machine without a GPU).
int cuda_device_count();
/// Whether this build contains the CUDA backend.
bool built_with_cuda();
/// Throws slender::Error with the reason when the CUDA backend cannot run here.
void require_cuda_backend();
/// The CUDA device that holds device memory p (for DLPack); 0 in a build without CUDA.
int cuda_device_of(const void* p);

}  // namespace slender
