// Allocators: aligned host memory (pinned on request) and the CUDA stream-ordered pool
// (cudaMallocAsync with a high release threshold, so freed memory stays cached for reuse).
// This file is the only place in baton that allocates device memory.
#include "runtime/core/storage.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/core/memory_stats.h"
#include "runtime/core/stream_state.h"

#if BATON_HAVE_CUDA
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/stream_order.h"
#endif

namespace baton {
namespace {

constexpr size_t kHostAlignment = 64;

// Per-device byte counters; the same accounting serves CPU (virtual) and CUDA devices.
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

std::mutex& counters_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Devices with an index below this have their counters in a fixed table, reached without a lock
// (every allocation and free looks them up); higher indices (virtual CPU devices) in a locked map.
constexpr int kTableDevices = 64;

DeviceCounters& counters(Device device) {
  static std::array<DeviceCounters, 2 * kTableDevices> table;  // (type, index) -> counters
  const int index = device.index();
  if (index >= 0 && index < kTableDevices) {
    return table[static_cast<size_t>(static_cast<int>(device.type()) * kTableDevices + index)];
  }
  static std::map<std::pair<int, int>, DeviceCounters> more;  // nodes never move
  std::lock_guard<std::mutex> lock(counters_mutex());
  return more[{static_cast<int>(device.type()), index}];
}

std::string mib(size_t bytes) { return detail::concat(static_cast<double>(bytes) / (1024.0 * 1024.0), " MiB"); }

#if BATON_HAVE_CUDA
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

void configure_pool_once(Device device, DeviceCounters& c) {
  if (c.pool_configured.load(std::memory_order_acquire)) return;  // every allocation: no lock
  std::lock_guard<std::mutex> lock(counters_mutex());
  if (c.pool_configured.load()) return;
  uint64_t keep_everything = UINT64_MAX;
  BATON_CUDA_CHECK(
      cudaMemPoolSetAttribute(device_pool(device.index()), cudaMemPoolAttrReleaseThreshold, &keep_everything));
  c.pool_configured.store(true, std::memory_order_release);
}

[[noreturn]] void throw_cuda_oom(Device device, size_t bytes, DeviceCounters& c) {
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  cudaGetLastError();
  const size_t in_use = c.current.load();
  const size_t reserved = pool_reserved_bytes(device.index());
  throw OutOfMemoryError(
      detail::concat("out of memory on ", device.str(), ": tried to allocate ", mib(bytes), " (", bytes, " bytes); ",
                     mib(in_use), " in use by baton, ", mib(reserved > in_use ? reserved - in_use : 0),
                     " cached in the pool, ", mib(free_bytes), " free of ", mib(total_bytes), " on the device"),
      __FILE__, __LINE__);
}
#endif

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t bytes, const Stream& stream) {
  const Device device = stream.device();
  std::shared_ptr<Storage> storage(new Storage());
  storage->bytes_ = bytes;
  storage->device_ = device;
  DeviceCounters& c = counters(device);
  if (device.is_cpu()) {
    if (bytes > 0) {
      const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
      storage->data_ = rounded >= bytes ? std::aligned_alloc(kHostAlignment, rounded) : nullptr;
      if (storage->data_ == nullptr) {
        throw OutOfMemoryError(detail::concat("out of memory on ", device.str(), ": tried to allocate ", mib(bytes),
                                              " (", bytes, " bytes); ", mib(c.current.load()), " in use by baton"),
                               __FILE__, __LINE__);
      }
    }
    c.add(bytes);
    storage->counted_ = true;
    return storage;
  }
#if BATON_HAVE_CUDA
  CudaDeviceGuard guard(device.index());
  configure_pool_once(device, c);
  storage->stream_ = stream.state();
  if (bytes > 0) {
    auto cuda_stream = static_cast<cudaStream_t>(stream.native_handle());
    cudaError_t status = cudaMallocAsync(&storage->data_, bytes, cuda_stream);
    if (status == cudaErrorMemoryAllocation) {
      // Return cached blocks to the driver once and retry before giving up.
      cudaGetLastError();
      BATON_CUDA_CHECK(cudaDeviceSynchronize());
      BATON_CUDA_CHECK(cudaMemPoolTrimTo(device_pool(device.index()), 0));
      status = cudaMallocAsync(&storage->data_, bytes, cuda_stream);
    }
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      storage->data_ = nullptr;
      throw_cuda_oom(device, bytes, c);
    }
    BATON_CUDA_CHECK(status);
  }
  c.add(bytes);
  storage->counted_ = true;
  return storage;
#else
  BATON_FAIL("cannot allocate on ", device.str(), ": this baton was built without CUDA");
#endif
}

std::shared_ptr<Storage> Storage::allocate_host(size_t bytes, HostMemory kind) {
#if BATON_HAVE_CUDA
  if (kind == HostMemory::pinned && bytes > 0) {
    void* data = nullptr;
    const cudaError_t status = cudaHostAlloc(&data, bytes, cudaHostAllocPortable);
    if (status == cudaSuccess) {
      std::shared_ptr<Storage> storage(new Storage());
      storage->data_ = data;
      storage->bytes_ = bytes;
      storage->device_ = Device::cpu(0);
      storage->pinned_ = true;
      counters(storage->device_).add(bytes);
      storage->counted_ = true;
      return storage;
    }
    cudaGetLastError();
    if (status == cudaErrorMemoryAllocation) {
      throw OutOfMemoryError(detail::concat("out of pinned host memory: tried to allocate ", mib(bytes)), __FILE__,
                             __LINE__);
    }
    log_debug("pinned host memory unavailable (", cudaGetErrorString(status), "); using pageable memory");
  }
#else
  if (kind == HostMemory::pinned) log_debug("pinned host memory needs CUDA; using pageable memory");
#endif
  return allocate(bytes, Stream::create(Device::cpu(0)));
}

void Storage::record_stream(const Stream& stream) {
  if (device_.is_cpu() || stream.state() == stream_ || stream.device().is_cpu()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Stream& s : other_streams_) {
    if (s == stream) return;
  }
  other_streams_.push_back(stream);
}

Storage::~Storage() {
  // A failed allocation was never counted: removing it would wrap the counters.
  if (counted_) counters(device_).remove(bytes_);
  if (data_ == nullptr) return;
  if (device_.is_cpu()) {
#if BATON_HAVE_CUDA
    if (pinned_) {
      detail::log_cuda_failure(cudaFreeHost(data_), "cudaFreeHost");
      return;
    }
#endif
    std::free(data_);
    return;
  }
#if BATON_HAVE_CUDA
  // Destructors must not throw: failures are logged (and cleared from the thread's last error).
  CudaDeviceGuard guard(device_.index(), std::nothrow);
  auto owner = static_cast<cudaStream_t>(stream_->cuda_stream);
  for (const Stream& other : other_streams_) {
    // The free is ordered after the other stream's work up to now (the stream may be on another
    // device, for peer copies).
    detail::order_after_noexcept(owner, static_cast<cudaStream_t>(other.native_handle()), other.device().index());
  }
  detail::log_cuda_failure(cudaFreeAsync(data_, owner), "cudaFreeAsync", device_.index());
#endif
}

MemoryStats memory_stats(Device device) {
  DeviceCounters& c = counters(device);
  MemoryStats stats;
  stats.current_bytes = c.current.load();
  stats.peak_bytes = c.peak.load();
  stats.allocations = c.allocations.load();
#if BATON_HAVE_CUDA
  if (device.is_cuda() && c.pool_configured.load()) {
    CudaDeviceGuard guard(device.index());
    const size_t reserved = pool_reserved_bytes(device.index());
    stats.cached_bytes = reserved > stats.current_bytes ? reserved - stats.current_bytes : 0;
  }
#endif
  return stats;
}

void reset_peak_memory_stats(Device device) {
  DeviceCounters& c = counters(device);
  c.peak.store(c.current.load());
}

void set_pool_release_threshold(Device device, uint64_t bytes) {
  if (device.is_cpu()) return;
  check_device(device);
#if BATON_HAVE_CUDA
  CudaDeviceGuard guard(device.index());
  DeviceCounters& c = counters(device);
  configure_pool_once(device, c);
  BATON_CUDA_CHECK(cudaMemPoolSetAttribute(device_pool(device.index()), cudaMemPoolAttrReleaseThreshold, &bytes));
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
  BATON_CUDA_CHECK(cudaMemPoolTrimTo(device_pool(device.index()), 0));
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
      BATON_CUDA_CHECK(cudaMemPoolSetAccess(device_pool(self), &access, 1));
    }
  }
  done[key] = possible;
  return possible;
#else
  return false;
#endif
}

}  // namespace baton
