// Copies and fills of the emulated runtime, run at enqueue in stream order. Device ranges must lie
// inside live allocations and be ordered after their allocation; a copy direction that contradicts
// the pointers is cudaErrorInvalidValue. (A copy may be issued to a stream of any device, as in CUDA.)
#include <cstring>
#include <string>

#include "device_memory.h"
#include "introspection_hooks.h"
#include "simt_scheduler.h"

namespace baton_emu {
namespace {

bool is_device(const void* pointer) { return region_of(pointer, nullptr) == Region::device; }

cudaError_t copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, StreamState& stream, const char* api) {
  if (inside_kernel()) fatal(std::string(api) + " called from inside a kernel");
  begin_operation(stream);
  wait_for_pending(stream, api);
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return fail(cudaErrorInvalidValue, api, "a null pointer with a nonzero size");
  const bool dst_device = is_device(dst), src_device = is_device(src);
  bool kind_ok = true;
  switch (kind) {
    case cudaMemcpyHostToHost:
      kind_ok = !dst_device && !src_device;
      break;
    case cudaMemcpyHostToDevice:
      kind_ok = dst_device && !src_device;
      break;
    case cudaMemcpyDeviceToHost:
      kind_ok = !dst_device && src_device;
      break;
    case cudaMemcpyDeviceToDevice:
      kind_ok = dst_device && src_device;
      break;
    case cudaMemcpyDefault:
      break;
    default:
      return fail(cudaErrorInvalidMemcpyDirection, api, "unknown copy kind");
  }
  if (!kind_ok) {
    return fail(cudaErrorInvalidValue, api,
                std::string("the copy kind contradicts the pointers (destination is ") +
                    (dst_device ? "device" : "host") + " memory, source is " + (src_device ? "device" : "host") +
                    " memory)");
  }
  if (src_device) check_device_access(stream, src, bytes, api, "the source", false);
  if (dst_device) check_device_access(stream, dst, bytes, api, "the destination", false);
  DeviceMemoryOpen open;
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

void expect_on_device(const void* pointer, int device, const char* api, const char* what) {
  int actual = -1;
  if (region_of(pointer, &actual) != Region::device || actual != device) {
    fatal(std::string(api) + ": " + what + " is not memory of device " + std::to_string(device));
  }
}

}  // namespace
}  // namespace baton_emu

using namespace baton_emu;

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  return copy(dst, src, bytes, kind, resolve_stream(stream, "cudaMemcpyAsync"), "cudaMemcpyAsync");
}

// Synchronous: on the legacy stream, and the host waits for it.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  RuntimeLock lock(runtime_lock());
  StreamState& s = resolve_stream(nullptr, "cudaMemcpy");
  const cudaError_t e = copy(dst, src, bytes, kind, s, "cudaMemcpy");
  host_synchronised(s.clock);
  count_host_sync(HostSync::copy);
  return e;
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                                cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaMemcpyPeerAsync";
  if (const cudaError_t e = check_device(dst_device, api); e != cudaSuccess) return e;
  if (const cudaError_t e = check_device(src_device, api); e != cudaSuccess) return e;
  StreamState& s = resolve_stream(stream, api);
  if (bytes > 0) {
    expect_on_device(dst, dst_device, api, "the destination");
    expect_on_device(src, src_device, api, "the source");
  }
  return copy(dst, src, bytes, cudaMemcpyDeviceToDevice, s, api);
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaMemsetAsync";
  StreamState& s = resolve_stream(stream, api);
  if (inside_kernel()) fatal(std::string(api) + " called from inside a kernel");
  begin_operation(s);
  wait_for_pending(s, api);
  if (bytes == 0) return cudaSuccess;
  if (!is_device(pointer)) return fail(cudaErrorInvalidValue, api, "the pointer is not device memory");
  check_device_access(s, pointer, bytes, api, "the destination", false);
  DeviceMemoryOpen open;
  std::memset(pointer, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemset(void* pointer, int value, size_t bytes) {
  const cudaError_t e = cudaMemsetAsync(pointer, value, bytes, nullptr);
  RuntimeLock lock(runtime_lock());
  host_synchronised(resolve_stream(nullptr, "cudaMemset").clock);
  count_host_sync(HostSync::copy);
  return e;
}
