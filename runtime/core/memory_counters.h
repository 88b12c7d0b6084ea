// Per-device byte counters of baton's allocations, the same for CPU (virtual) and CUDA devices:
// the allocator (storage.cc) adds and removes, the statistics (memory_stats.cc) read them.
#pragma once

#include <atomic>
#include <cstddef>

#include "runtime/core/device.h"

namespace baton::detail {

struct DeviceCounters {
  std::atomic<size_t> current{0};
  std::atomic<size_t> peak{0};
  std::atomic<size_t> allocations{0};
  std::atomic<bool> pool_configured{false};  // CUDA: release threshold set on the device's pool

  void add(size_t bytes) {
    const size_t now = current.fetch_add(bytes) + bytes;
    size_t seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    allocations.fetch_add(1);
  }
  void remove(size_t bytes) {
    current.fetch_sub(bytes);
    allocations.fetch_sub(1);
  }
};

// The counters of `device`, created on first use and never moved (thread-safe).
DeviceCounters& device_counters(Device device);

}  // namespace baton::detail
