// Per-device memory statistics and the CUDA pool's settings: release threshold, trimming, peer access.
#include "runtime/core/memory_stats.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "runtime/core/memory_counters.h"

#if BATON_HAVE_CUDA
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/memory_pool.h"
#endif

namespace baton {

MemoryStats memory_stats(Device device) {
  detail::DeviceCounters& c = detail::device_counters(device);
  MemoryStats stats;
  stats.current_bytes = c.current.load();
  stats.peak_bytes = c.peak.load();
  stats.allocations = c.allocations.load();
#if BATON_HAVE_CUDA
  if (device.is_cuda() && c.pool_configured.load()) {
    CudaDeviceGuard guard(device.index());
    const size_t reserved = detail::pool_reserved_bytes(device.index());
    stats.cached_bytes = reserved > stats.current_bytes ? reserved - stats.current_bytes : 0;
  }
#endif
  return stats;
}

void reset_peak_memory_stats(Device device) {
  detail::DeviceCounters& c = detail::device_counters(device);
  c.peak.store(c.current.load());
}

void set_pool_release_threshold(Device device, uint64_t bytes) {
  if (device.is_cpu()) return;
  check_device(device);
#if BATON_HAVE_CUDA
  CudaDeviceGuard guard(device.index());
  detail::DeviceCounters& c = detail::device_counters(device);
  detail::configure_pool_once(device, c);
  BATON_CUDA_CHECK(
      cudaMemPoolSetAttribute(detail::device_pool(device.index()), cudaMemPoolAttrReleaseThreshold, &bytes));
#else
  (void)bytes;
#endif
}

void release_cached_memory(Device device) {
  if (device.is_cpu()) return;
  check_device(device);
#if BATON_HAVE_CUDA
  CudaDeviceGuard guard(device.index());
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  BATON_CUDA_CHECK(cudaMemPoolTrimTo(detail::device_pool(device.index()), 0));
#endif
}

bool enable_peer_access(Device a, Device b) {
  if (!a.is_cuda() || !b.is_cuda() || a == b) return false;
  check_device(a);
  check_device(b);
#if BATON_HAVE_CUDA
  static std::mutex mutex;
  static std::map<std::pair<int, int>, bool> done;  // (lower, higher index) -> enabled
  const std::pair<int, int> key = std::minmax(a.index(), b.index());
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = done.find(key); it != done.end()) return it->second;
  int forward = 0, backward = 0;
  BATON_CUDA_CHECK(cudaDeviceCanAccessPeer(&forward, key.first, key.second));
  BATON_CUDA_CHECK(cudaDeviceCanAccessPeer(&backward, key.second, key.first));
  const bool possible = forward != 0 && backward != 0;
  if (possible) {
    for (const auto& [self, peer] : {key, std::pair<int, int>{key.second, key.first}}) {
      CudaDeviceGuard guard(self);
      const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();  // enabled elsewhere in the process: fine
      } else {
        BATON_CUDA_CHECK(status);
      }
      // Pool memory (cudaMallocAsync) is not covered by device peer access: grant it explicitly.
      cudaMemAccessDesc access{};
      access.location.type = cudaMemLocationTypeDevice;
      access.location.id = peer;
      access.flags = cudaMemAccessFlagsProtReadWrite;
      BATON_CUDA_CHECK(cudaMemPoolSetAccess(detail::device_pool(self), &access, 1));
    }
  }
  done[key] = possible;
  return possible;
#else
  return false;
#endif
}

}  // namespace baton
