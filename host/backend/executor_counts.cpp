// The host executor's counts (backend/executor_counts.h, slender/backend.h).

#include "backend/executor_counts.h"

#include "slender/backend.h"

namespace slender {

namespace counts {

std::atomic<long> launches{0}, sorts{0}, uploads{0}, host_reads{0}, syncs{0}, direct_calls{0},
    allocations{0};

}  // namespace counts

ExecutorCounts executor_counts() {
  ExecutorCounts c;
  c.launches = counts::launches.load(std::memory_order_relaxed);
  c.sorts = counts::sorts.load(std::memory_order_relaxed);
  c.uploads = counts::uploads.load(std::memory_order_relaxed);
  c.host_reads = counts::host_reads.load(std::memory_order_relaxed);
  c.syncs = counts::syncs.load(std::memory_order_relaxed);
  c.direct_calls = counts::direct_calls.load(std::memory_order_relaxed);
  c.allocations = counts::allocations.load(std::memory_order_relaxed);
  return c;
}

void reset_executor_counts() {
  for (std::atomic<long>* c :
       {&counts::launches, &counts::sorts, &counts::uploads, &counts::host_reads, &counts::syncs,
        &counts::direct_calls, &counts::allocations})
    c->store(0, std::memory_order_relaxed);
}

}  // namespace slender
