#pragma once

// How much memory this process may still allocate, and the refusal of a request that would not
// fit: a batch (host/batch/batched_simulator.cpp), or anything else whose size is known before
// it is allocated. A request is estimated, compared with available_memory() and refused with
// both numbers (MemoryLimitError) before anything is allocated, rather than ending in
// std::bad_alloc after seconds of work, or in the kernel's OOM killer.

#include <cstdint>
#include <functional>
#include <string>

namespace slender {

/// The memory this process may still allocate [bytes] and the limit that sets it.
struct AvailableMemory {
  std::uint64_t bytes = 0;
  /// which limit: "MemAvailable", "the cgroup's memory.max", "RLIMIT_AS", ... or
  /// "SLENDER_MEMORY_LIMIT"
  std::string limit;
};

/// The smallest of: MemAvailable (/proc/meminfo); for each cgroup the process is in (and each
/// above it), its limit less its working set (v2: memory.max less memory.current plus the
/// reclaimable inactive file cache of memory.stat; v1: memory.limit_in_bytes less
/// memory.usage_in_bytes plus total_inactive_file); RLIMIT_AS less the address space in use and
/// RLIMIT_DATA less the data segment, where set. SLENDER_MEMORY_LIMIT (bytes, or with a suffix
/// k, M, G or T: powers of 1024) replaces the measurement: tests use it to see a refusal without
/// allocating, a user to keep Slender within a share of the machine. A value that is not a size
/// is an InputError naming it. Read at every call (a few small files).
AvailableMemory available_memory();
/// available_memory().bytes
std::uint64_t available_memory_bytes();

/// "25.3 GiB", "812 MiB", "4.0 KiB", "96 B"
std::string format_bytes(double bytes);

/// The message of a refusal: "<field>: <what> needs about <need> [(<detail>)], but <available>
/// of memory is available (<limit>)[; <advice>]".
std::string memory_refusal(const std::string& field,
                           const std::string& what,
                           double need,
                           const std::string& detail,
                           const AvailableMemory& available,
                           const std::string& advice);

/// Throws MemoryLimitError (memory_refusal's message) when `need` bytes do not fit in
/// available_memory(); `advice`, when given, is called with the available bytes and says how
/// the request would fit (such as the largest count that does).
void require_memory(const std::string& field,
                    const std::string& what,
                    double need,
                    const std::string& detail,
                    const std::function<std::string(double available)>& advice = {});

}  // namespace slender
