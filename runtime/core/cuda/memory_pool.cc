// The CUDA device pool's handle, reserved bytes and release threshold.
#include "runtime/core/cuda/memory_pool.h"

#include <cstdint>
#include <mutex>

#include "runtime/core/cuda/cuda_check.h"

namespace baton::detail {

cudaMemPool_t device_pool(int index) {
  cudaMemPool_t pool = nullptr;
  BATON_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, index));
  return pool;
}

size_t pool_reserved_bytes(int index) {
  uint64_t reserved = 0;
  BATON_CUDA_CHECK(cudaMemPoolGetAttribute(device_pool(index), cudaMemPoolAttrReservedMemCurrent, &reserved));
  return static_cast<size_t>(reserved);
}

void configure_pool_once(Device device, DeviceCounters& counters) {
  if (counters.pool_configured.load(std::memory_order_acquire)) return;  // every allocation: no lock
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (counters.pool_configured.load()) return;
  uint64_t keep_everything = UINT64_MAX;
  BATON_CUDA_CHECK(
      cudaMemPoolSetAttribute(device_pool(device.index()), cudaMemPoolAttrReleaseThreshold, &keep_everything));
  counters.pool_configured.store(true, std::memory_order_release);
}

}  // namespace baton::detail
