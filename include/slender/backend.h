#pragma once

// Backend selection. The CPU backend is always built; the CUDA backend only with
// SLENDER_WITH_CUDA, as a module (libslender_cuda.so) loaded on the first call that needs it
// (host/backend/cuda_loader.cpp): until then, and in a CPU run, no CUDA library is mapped.

#include <cstddef>
#include <string>

namespace slender {

/// Number of CUDA devices visible (0 in a CPU-only build, without the module, or on a machine
/// without a GPU); loads the CUDA module.
int cuda_device_count();
/// Whether the CUDA module has been loaded (by an earlier call that needed it).
bool cuda_module_loaded();
/// Whether this build contains the CUDA backend.
bool built_with_cuda();
/// Throws slender::Error with the reason when the CUDA backend cannot run here.
void require_cuda_backend();
/// The CUDA device that holds device memory p (for DLPack); 0 in a build without CUDA.
int cuda_device_of(const void* p);
/// The free and total memory of the current CUDA device [bytes] (cudaMemGetInfo); throws
/// slender::Error as require_cuda_backend where the backend cannot run.
void cuda_device_memory(std::size_t& free_bytes, std::size_t& total_bytes);

}  // namespace slender
