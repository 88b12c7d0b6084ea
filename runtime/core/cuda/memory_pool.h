// A CUDA device's stream-ordered pool (cudaMallocAsync's default pool): its handle, the bytes it
// reserves, and the one-time setting of its release threshold to "keep everything".
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "runtime/core/device.h"
#include "runtime/core/memory_counters.h"

namespace baton::detail {

cudaMemPool_t device_pool(int index);
// Bytes the pool holds from the driver: in use plus cached.
size_t pool_reserved_bytes(int index);
// Sets the pool's release threshold to UINT64_MAX the first time `device` allocates (marked in `counters`).
void configure_pool_once(Device device, DeviceCounters& counters);

}  // namespace baton::detail
