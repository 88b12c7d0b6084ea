// Devices of the emulated GPU: BATON_EMU_DEVICES H100-like devices (their launch limits are the
// ones checked), the calling thread's current device, peer access and device synchronisation.
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include "introspection_hooks.h"
#include "runtime_state.h"
#include "simt_scheduler.h"

namespace baton_emu {
namespace {

thread_local int current = 0;
std::set<std::pair<int, int>> peer_enabled;  // (device, peer): device may access peer's cudaMalloc memory

cudaDeviceProp h100(int device) {
  cudaDeviceProp p{};
  std::snprintf(p.name, sizeof p.name, "baton emulated NVIDIA H100 80GB HBM3 (device %d)", device);
  p.totalGlobalMem = settings().memory_bytes;
  p.sharedMemPerBlock = kSharedBytesPerBlock;
  p.regsPerBlock = 65536;
  p.warpSize = 32;
  p.maxThreadsPerBlock = 1024;
  p.maxThreadsDim[0] = 1024;
  p.maxThreadsDim[1] = 1024;
  p.maxThreadsDim[2] = 64;
  p.maxGridSize[0] = 0x7fffffff;
  p.maxGridSize[1] = 65535;
  p.maxGridSize[2] = 65535;
  p.clockRate = 1980000;
  p.totalConstMem = 65536;
  p.major = 9;
  p.minor = 0;
  p.multiProcessorCount = 132;
  p.memoryClockRate = 2619000;
  p.memoryBusWidth = 5120;
  p.l2CacheSize = 50 << 20;
  p.maxThreadsPerMultiProcessor = 2048;
  p.sharedMemPerBlockOptin = 232448;
  p.unifiedAddressing = 1;
  p.concurrentKernels = 1;
  p.asyncEngineCount = 3;
  return p;
}

}  // namespace

int current_device() { return current; }
int current_device_index() {
  use_primary_context(current);  // the callers use the current device's context
  return current;
}
bool peer_access_enabled(int device, int peer) { return peer_enabled.count({device, peer}) != 0; }

const cudaDeviceProp& device_properties(int device) {
  static const std::vector<cudaDeviceProp> all = [] {
    std::vector<cudaDeviceProp> v;
    for (int d = 0; d < settings().devices; ++d) v.push_back(h100(d));
    return v;
  }();
  return all.at(static_cast<size_t>(device));
}

}  // namespace baton_emu

using baton_emu::check_device;
using baton_emu::fail;
using baton_emu::runtime_lock;
using baton_emu::RuntimeLock;

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return fail(cudaErrorInvalidValue, "cudaRuntimeGetVersion", "null pointer");
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return fail(cudaErrorInvalidValue, "cudaDriverGetVersion", "null pointer");
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDeviceCount", "null pointer");
  *count = baton_emu::settings().devices;
  if (*count == 0) return fail(cudaErrorNoDevice, "cudaGetDeviceCount", "BATON_EMU_DEVICES=0");
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDevice", "null pointer");
  if (baton_emu::settings().devices == 0) return fail(cudaErrorNoDevice, "cudaGetDevice", "BATON_EMU_DEVICES=0");
  *device = baton_emu::current;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (const cudaError_t e = check_device(device, "cudaSetDevice"); e != cudaSuccess) return e;
  if (baton_emu::inside_kernel()) baton_emu::fatal("cudaSetDevice called from inside a kernel");
  baton_emu::current = device;
  baton_emu::use_primary_context(device);  // as CUDA 12: cudaSetDevice initialises the context
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDeviceProperties", "null pointer");
  if (const cudaError_t e = check_device(device, "cudaGetDeviceProperties"); e != cudaSuccess) return e;
  *prop = baton_emu::device_properties(device);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  const char* api = "cudaDeviceGetAttribute";
  if (value == nullptr) return fail(cudaErrorInvalidValue, api, "null pointer");
  if (const cudaError_t e = check_device(device, api); e != cudaSuccess) return e;
  const cudaDeviceProp& p = baton_emu::device_properties(device);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(p.sharedMemPerBlock);
      return cudaSuccess;
    case cudaDevAttrWarpSize:
      *value = p.warpSize;
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      return cudaSuccess;
    case cudaDevAttrMemoryClockRate:
      *value = p.memoryClockRate;
      return cudaSuccess;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = p.memoryBusWidth;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
      *value = p.major;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = p.minor;
      return cudaSuccess;
  }
  return fail(cudaErrorInvalidValue, api, "attribute " + std::to_string(static_cast<int>(attr)) + " is not emulated");
}

cudaError_t cudaDeviceSynchronize() {
  RuntimeLock lock(runtime_lock());
  baton_emu::count_host_sync(baton_emu::HostSync::device);
  baton_emu::synchronise_device(baton_emu::current);
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device) {
  const char* api = "cudaDeviceCanAccessPeer";
  if (can_access == nullptr) return fail(cudaErrorInvalidValue, api, "null pointer");
  if (const cudaError_t e = check_device(device, api); e != cudaSuccess) return e;
  if (const cudaError_t e = check_device(peer_device, api); e != cudaSuccess) return e;
  *can_access = device != peer_device;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned flags) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaDeviceEnablePeerAccess";
  if (flags != 0) return fail(cudaErrorInvalidValue, api, "flags must be 0");
  if (const cudaError_t e = check_device(peer_device, api); e != cudaSuccess) return e;
  if (peer_device == baton_emu::current) return fail(cudaErrorInvalidDevice, api, "a device cannot be its own peer");
  if (!baton_emu::peer_enabled.insert({baton_emu::current, peer_device}).second) {
    return fail(cudaErrorPeerAccessAlreadyEnabled, api,
                "device " + std::to_string(baton_emu::current) + " already has access to device " +
                    std::to_string(peer_device));
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer_device) {
  RuntimeLock lock(runtime_lock());
  if (baton_emu::peer_enabled.erase({baton_emu::current, peer_device}) == 0) {
    return fail(cudaErrorPeerAccessNotEnabled, "cudaDeviceDisablePeerAccess", "peer access was not enabled");
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least_priority, int* greatest_priority) {
  if (least_priority != nullptr) *least_priority = 0;
  if (greatest_priority != nullptr) *greatest_priority = -5;
  return cudaSuccess;
}
