#pragma once

// The host executor's tally of what the CUDA executor would do for the same calls (the public
// side: slender/backend.h, ExecutorCounts). Relaxed atomic counters, one increment per executor
// call (never per element).

#include <atomic>

namespace slender {

namespace counts {

extern std::atomic<long> launches, sorts, uploads, host_reads, syncs, direct_calls, allocations;

inline void add(std::atomic<long>& c, long k = 1) { c.fetch_add(k, std::memory_order_relaxed); }

}  // namespace counts

}  // namespace slender
