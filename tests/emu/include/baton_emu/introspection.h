// What the emulated GPU has created so far, for tests that check baton creates no more CUDA objects
// than it needs (streams, events, pinned buffers) and no primary context on a device it never uses;
// and how often the host has waited for the device, for tests that check work runs asynchronously.
// Only EMU builds have it; a test that includes it is built only in EMU builds.
#pragma once

#include <cstddef>

namespace baton_emu {

// Counts since the process started (never decremented: destroying an object does not undo them).
struct CreationCounts {
  size_t streams = 0;             // cudaStreamCreate*
  size_t events = 0;              // cudaEventCreate*
  size_t pinned_allocations = 0;  // cudaHostAlloc / cudaMallocHost that succeeded
};
CreationCounts creation_counts();

// Calls that blocked the host until device work completed, since the process started, from every
// host thread (never decremented). cudaStreamQuery and cudaEventQuery do not block and are not counted.
struct HostSyncCounts {
  size_t streams = 0;  // cudaStreamSynchronize
  size_t events = 0;   // cudaEventSynchronize
  size_t devices = 0;  // cudaDeviceSynchronize, and cudaFree / cudaFreeHost, which synchronise the device
  size_t copies = 0;   // the synchronous cudaMemcpy and cudaMemset
  size_t total() const { return streams + events + devices + copies; }
};
HostSyncCounts host_sync_counts();

// Whether `device`'s primary context exists: created, as CUDA 12 does, by cudaSetDevice(device) or
// by the first call that needs the current device's context (a stream, event or cudaMalloc on the
// current device, the legacy stream, cudaFree, cudaFreeHost, a launch). cudaGetDevice creates none.
// Also what cuDevicePrimaryCtxGetState answers through cudaGetDriverEntryPoint*.
bool primary_context_active(int device);

}  // namespace baton_emu
