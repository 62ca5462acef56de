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

/// What the host executor was asked to do since the last reset_executor_counts(), counted as the
/// CUDA executor would do it (issue 47, item 4: a GPU's launch and synchronisation latency,
/// measured without a GPU). Every engine runs on the host executor on the CPU backend, so the
/// CPU Simulator's and the vectorized batch's counts are the device's, but for the direct
/// solver (whose calls are counted, not their kernels) and the Krylov loops (which read their
/// running flag every iteration on the host, every 8th on the GPU).
struct ExecutorCounts {
  long launches = 0;      ///< kernels: loops, reductions (two each), scans, fills, copies
  long sorts = 0;         ///< radix sorts (several kernels each on the GPU)
  long uploads = 0;       ///< host-to-device copies
  long host_reads = 0;    ///< device-to-host copies: each one waits for the device
  long syncs = 0;         ///< synchronisations of the device without a copy
  long direct_calls = 0;  ///< the direct solver's factorizations and solves
  /// buffers (re)allocated: a new size, as DeviceBuffer's cudaMalloc (none may happen inside
  /// a captured CUDA graph)
  long allocations = 0;
};
/// the counts so far (all threads' calls together)
ExecutorCounts executor_counts();
void reset_executor_counts();

}  // namespace slender
