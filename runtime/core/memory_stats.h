// Per-device memory statistics and the CUDA pool's settings.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/device.h"

namespace baton {

struct MemoryStats {
  size_t current_bytes = 0;  // held by live allocations made through baton
  size_t peak_bytes = 0;     // highest current_bytes since start or the last reset
  size_t cached_bytes = 0;   // reserved by the pool beyond current_bytes (CUDA; 0 on CPU)
  size_t allocations = 0;    // number of live allocations
};

MemoryStats memory_stats(Device device);
void reset_peak_memory_stats(Device device);
// Bytes the CUDA pool keeps cached after frees instead of returning them to the driver
// (default: unlimited, so a training step reuses memory without driver calls). CPU: no-op.
void set_pool_release_threshold(Device device, uint64_t bytes);
// Returns cached, unused pool memory to the driver (after the device's work completes).
void release_cached_memory(Device device);
// Lets two CUDA devices reach each other's memory when the hardware allows: device peer access and
// access to each other's stream-ordered pool, both ways, once per pair (thread-safe). Then
// cudaMemcpyPeerAsync between them goes straight over NVLink or PCIe instead of through host
// memory. Returns whether peer access is on; false for one device, CPU devices or no CUDA.
bool enable_peer_access(Device a, Device b);

}  // namespace baton
