// Allocators: aligned host memory (pinned on request) and the CUDA stream-ordered pool
// (cudaMallocAsync with a high release threshold, so freed memory stays cached for reuse).
// This file is the only place in baton that allocates device memory; memory_stats.cc reads and
// tunes what it allocated from.
#include "runtime/core/storage.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/core/memory_counters.h"
#include "runtime/core/stream_state.h"

#if BATON_HAVE_CUDA
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/memory_pool.h"
#include "runtime/core/cuda/stream_order.h"
#endif

namespace baton {
namespace {

constexpr size_t kHostAlignment = 64;

std::string mib(size_t bytes) { return detail::concat(static_cast<double>(bytes) / (1024.0 * 1024.0), " MiB"); }

#if BATON_HAVE_CUDA
[[noreturn]] void throw_cuda_oom(Device device, size_t bytes, detail::DeviceCounters& c) {
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  cudaGetLastError();
  const size_t in_use = c.current.load();
  const size_t reserved = detail::pool_reserved_bytes(device.index());
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
  detail::DeviceCounters& c = detail::device_counters(device);
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
  detail::configure_pool_once(device, c);
  storage->stream_ = stream.state();
  if (bytes > 0) {
    auto cuda_stream = static_cast<cudaStream_t>(stream.native_handle());
    cudaError_t status = cudaMallocAsync(&storage->data_, bytes, cuda_stream);
    if (status == cudaErrorMemoryAllocation) {
      // Return cached blocks to the driver once and retry before giving up.
      cudaGetLastError();
      BATON_CUDA_CHECK(cudaDeviceSynchronize());
      BATON_CUDA_CHECK(cudaMemPoolTrimTo(detail::device_pool(device.index()), 0));
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
      detail::device_counters(storage->device_).add(bytes);
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
  if (counted_) detail::device_counters(device_).remove(bytes_);
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

}  // namespace baton
