// Creation counters and primary contexts of the emulated GPU (baton_emu/introspection.h), and the
// driver entry point that reports a primary context's state (cuDevicePrimaryCtxGetState).
#include "baton_emu/introspection.h"

#include <atomic>
#include <cstring>
#include <string>

#include "baton_emu/driver_entry_point.h"
#include "introspection_hooks.h"
#include "runtime_state.h"

namespace baton_emu {
namespace {

constexpr int kMaxDevices = 64;
std::atomic<size_t> streams_created{0};
std::atomic<size_t> events_created{0};
std::atomic<size_t> pinned_allocations{0};
std::atomic<size_t> host_syncs[4];  // indexed by HostSync
std::atomic<bool> primary_contexts[kMaxDevices];

// CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) (cuda.h):
// CUresult and CUdevice are ints; 0 is CUDA_SUCCESS, 1 CUDA_ERROR_INVALID_VALUE, 101 CUDA_ERROR_INVALID_DEVICE.
int primary_context_get_state(int device, unsigned int* flags, int* active) {
  if (flags == nullptr || active == nullptr) return 1;
  if (device < 0 || device >= settings().devices) return 101;
  *flags = 0;
  *active = primary_context_active(device) ? 1 : 0;
  return 0;
}

cudaError_t driver_entry_point(const char* symbol, void** function, unsigned long long flags,
                               cudaDriverEntryPointQueryResult* status, const char* api) {
  if (symbol == nullptr || function == nullptr) return fail(cudaErrorInvalidValue, api, "null pointer");
  if (flags != cudaEnableDefault) return fail(cudaErrorInvalidValue, api, "only cudaEnableDefault is emulated");
  *function = nullptr;
  if (std::strcmp(symbol, "cuDevicePrimaryCtxGetState") == 0) {
    *function = reinterpret_cast<void*>(&primary_context_get_state);
  }
  if (status != nullptr) {
    *status = *function != nullptr ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  }
  return cudaSuccess;
}

}  // namespace

void count_stream_created() { streams_created.fetch_add(1); }
void count_event_created() { events_created.fetch_add(1); }
void count_pinned_allocation() { pinned_allocations.fetch_add(1); }
void count_host_sync(HostSync kind) { host_syncs[static_cast<int>(kind)].fetch_add(1); }

void use_primary_context(int device) {
  if (device >= kMaxDevices) fatal("device " + std::to_string(device) + ": at most 64 emulated devices");
  if (device >= 0) primary_contexts[device].store(true);
}

CreationCounts creation_counts() {
  CreationCounts counts;
  counts.streams = streams_created.load();
  counts.events = events_created.load();
  counts.pinned_allocations = pinned_allocations.load();
  return counts;
}

HostSyncCounts host_sync_counts() {
  HostSyncCounts counts;
  counts.streams = host_syncs[static_cast<int>(HostSync::stream)].load();
  counts.events = host_syncs[static_cast<int>(HostSync::event)].load();
  counts.devices = host_syncs[static_cast<int>(HostSync::device)].load();
  counts.copies = host_syncs[static_cast<int>(HostSync::copy)].load();
  return counts;
}

bool primary_context_active(int device) {
  return device >= 0 && device < kMaxDevices && primary_contexts[device].load();
}

}  // namespace baton_emu

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** function, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* status) {
  return baton_emu::driver_entry_point(symbol, function, flags, status, "cudaGetDriverEntryPoint");
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int cuda_version,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  const char* api = "cudaGetDriverEntryPointByVersion";
  if (cuda_version < 12000) return baton_emu::fail(cudaErrorInvalidValue, api, "the emulated driver is CUDA 12");
  return baton_emu::driver_entry_point(symbol, function, flags, status, api);
}
