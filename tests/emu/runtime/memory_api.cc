// The memory calls of the emulated runtime: cudaMalloc/cudaFree, the stream-ordered pool
// (cudaMallocAsync/cudaFreeAsync, attributes, access), pinned host memory and cudaMemGetInfo.
#include <algorithm>
#include <cstring>
#include <string>

#include "device_memory.h"
#include "introspection_hooks.h"
#include "simt_scheduler.h"

namespace baton_emu {
namespace {

// Pool handles: one default pool per device, named by a fixed non-dereferenceable address.
constexpr uintptr_t kPoolHandleBase = uintptr_t{0x9001} << 32;

int pool_device(cudaMemPool_t pool, const char* api) {
  const auto value = reinterpret_cast<uintptr_t>(pool);
  const uintptr_t index = (value - kPoolHandleBase) >> 4;
  if (value < kPoolHandleBase || (value & 15) != 0 || index >= static_cast<uintptr_t>(settings().devices)) {
    fatal(std::string(api) + ": not a memory pool (only the default pool of each device is emulated)");
  }
  return static_cast<int>(index);
}

cudaError_t malloc_on(void** pointer, size_t bytes, int device, bool from_pool, StreamState* stream, const char* api) {
  if (pointer == nullptr) return fail(cudaErrorInvalidValue, api, "the result pointer is null");
  if (inside_kernel()) fatal(std::string(api) + " called from inside a kernel");
  *pointer = nullptr;
  if (bytes == 0) return cudaSuccess;
  Allocation* a = allocate(device, bytes, from_pool);
  if (a == nullptr) {
    return fail(cudaErrorMemoryAllocation, api,
                "out of memory: " + std::to_string(bytes) + " bytes asked on device " + std::to_string(device) + ", " +
                    std::to_string(arena(device).used) + " of " + std::to_string(arena(device).size) +
                    " in use (BATON_EMU_MEMORY)");
  }
  if (stream != nullptr) {
    a->birth_stream = stream->id;
    a->birth_time = at(stream->clock, stream->id);
    a->last_use[stream->id] = a->birth_time;
  }
  *pointer = const_cast<char*>(a->begin);
  return cudaSuccess;
}

Allocation& live_allocation(void* pointer, const char* api) {
  Allocation* a = allocation_at(pointer);
  if (a == nullptr) {
    std::string note;
    find_allocation(pointer, 0, &note);
    fatal(std::string(api) + ": the pointer is not the start of a live device allocation: " + note);
  }
  return *a;
}

}  // namespace

}  // namespace baton_emu

using namespace baton_emu;

cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  RuntimeLock lock(runtime_lock());
  return malloc_on(pointer, bytes, current_device_index(), false, nullptr, "cudaMalloc");
}

// cudaFree synchronises the device (and is valid for pool memory too), so no ordering check applies.
cudaError_t cudaFree(void* pointer) {
  RuntimeLock lock(runtime_lock());
  if (pointer == nullptr) return cudaSuccess;
  Allocation& a = live_allocation(pointer, "cudaFree");
  synchronise_device(current_device_index());
  count_host_sync(HostSync::device);
  release(a, "cudaFree");
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  StreamState& s = resolve_stream(stream, "cudaMallocAsync");
  begin_operation(s);
  return malloc_on(pointer, bytes, s.device, true, &s, "cudaMallocAsync");
}

cudaError_t cudaFreeAsync(void* pointer, cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaFreeAsync";
  StreamState& s = resolve_stream(stream, api);
  if (pointer == nullptr) return cudaSuccess;
  live_allocation(pointer, api);
  begin_operation(s);
  // The memory is released at enqueue: first the pending work it is ordered after (a collective
  // waiting for its peers) must complete.
  wait_for_pending(s, api);
  Allocation& a = live_allocation(pointer, api);
  for (const auto& [other, time] : a.last_use) {
    if (other == s.id || at(s.clock, other) >= time) continue;
    fatal(std::string(api) + " on " + s.name() + " of " + a.describe() + ", last used on stream #" +
          std::to_string(other) +
          " by work this stream is not ordered after: the memory may be reused while that work still runs "
          "(record an event on the using stream and wait for it on the freeing stream, or synchronise)");
  }
  release(a, std::string("cudaFreeAsync on ") + s.name());
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return fail(cudaErrorInvalidValue, "cudaDeviceGetDefaultMemPool", "null pointer");
  if (const cudaError_t e = check_device(device, "cudaDeviceGetDefaultMemPool"); e != cudaSuccess) return e;
  *pool = reinterpret_cast<cudaMemPool_t>(kPoolHandleBase + (static_cast<uintptr_t>(device) << 4));
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaMemPoolSetAttribute";
  if (value == nullptr) return fail(cudaErrorInvalidValue, api, "null value");
  Arena& a = arena(pool_device(pool, api));
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      std::memcpy(&a.release_threshold, value, sizeof(uint64_t));
      return cudaSuccess;
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh: {
      uint64_t reset;
      std::memcpy(&reset, value, sizeof reset);
      if (reset != 0) return fail(cudaErrorInvalidValue, api, "a high watermark can only be reset to 0");
      a.pool_high = a.pool_used;
      return cudaSuccess;
    }
    default:
      return fail(cudaErrorInvalidValue, api, "attribute " + std::to_string(static_cast<int>(attr)) + " cannot be set");
  }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaMemPoolGetAttribute";
  if (value == nullptr) return fail(cudaErrorInvalidValue, api, "null value");
  const Arena& a = arena(pool_device(pool, api));
  uint64_t result = 0;
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      result = a.release_threshold;
      break;
    case cudaMemPoolAttrReservedMemCurrent:
      result = a.pool_reserved;
      break;
    case cudaMemPoolAttrUsedMemCurrent:
      result = a.pool_used;
      break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      result = a.pool_high;
      break;
    default: {
      const int flag = 1;
      std::memcpy(value, &flag, sizeof flag);
      return cudaSuccess;
    }
  }
  std::memcpy(value, &result, sizeof result);
  return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep) {
  RuntimeLock lock(runtime_lock());
  Arena& a = arena(pool_device(pool, "cudaMemPoolTrimTo"));
  a.pool_reserved = std::max(a.pool_used, std::min(a.pool_reserved, min_bytes_to_keep));
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaMemPoolSetAccess";
  const int owner = pool_device(pool, api);
  if (descs == nullptr && count > 0) return fail(cudaErrorInvalidValue, api, "null descriptors");
  for (size_t i = 0; i < count; ++i) {
    const cudaMemAccessDesc& d = descs[i];
    if (d.location.type != cudaMemLocationTypeDevice)
      return fail(cudaErrorInvalidValue, api, "location is not a device");
    if (const cudaError_t e = check_device(d.location.id, api); e != cudaSuccess) return e;
    if (d.location.id == owner) {
      if (d.flags != cudaMemAccessFlagsProtReadWrite) {
        return fail(cudaErrorInvalidValue, api, "the owning device's access cannot be changed");
      }
      continue;
    }
    if (d.flags == cudaMemAccessFlagsProtNone) {
      arena(owner).pool_access.erase(d.location.id);
    } else {
      arena(owner).pool_access.insert(d.location.id);
    }
  }
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** pointer, size_t bytes, unsigned flags) {
  RuntimeLock lock(runtime_lock());
  if (pointer == nullptr) return fail(cudaErrorInvalidValue, "cudaHostAlloc", "null pointer");
  if ((flags & ~unsigned{cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined}) != 0) {
    return fail(cudaErrorInvalidValue, "cudaHostAlloc", "unknown flags");
  }
  *pointer = allocate_pinned(bytes);
  if (*pointer == nullptr) return fail(cudaErrorMemoryAllocation, "cudaHostAlloc", "cannot map pinned host memory");
  count_pinned_allocation();
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** pointer, size_t bytes) { return cudaHostAlloc(pointer, bytes, cudaHostAllocDefault); }

cudaError_t cudaFreeHost(void* pointer) {
  RuntimeLock lock(runtime_lock());
  if (pointer == nullptr) return cudaSuccess;
  // cudaFreeHost synchronises the device, as CUDA's does.
  synchronise_device(current_device_index());
  count_host_sync(HostSync::device);
  if (!free_pinned(pointer)) return fail(cudaErrorInvalidValue, "cudaFreeHost", "not the start of pinned host memory");
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  RuntimeLock lock(runtime_lock());
  if (free_bytes == nullptr || total_bytes == nullptr)
    return fail(cudaErrorInvalidValue, "cudaMemGetInfo", "null pointer");
  const Arena& a = arena(current_device_index());
  *total_bytes = a.size;
  *free_bytes = a.size - (a.used - a.pool_used + a.pool_reserved);
  return cudaSuccess;
}
