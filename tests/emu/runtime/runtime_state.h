// The emulated CUDA runtime's state (devices, streams, events, allocations), shared by the files
// of tests/emu/runtime/. One recursive lock guards all of it and serialises emulated device work.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "baton_emu/runtime_api.h"

namespace baton_emu {

enum class Schedule { forward, reverse, random };

// Settings read once from the environment (BATON_EMU_DEVICES, BATON_EMU_MEMORY,
// BATON_EMU_SCHEDULE, BATON_EMU_SEED, BATON_EMU_PROTECT, BATON_EMU_HANG_SECONDS); a bad value is a fatal error naming
// it.
struct Settings {
  int devices = 2;
  size_t memory_bytes = size_t{4} << 30;
  Schedule schedule = Schedule::forward;
  uint64_t seed = 0;
  bool protect_device_memory = true;
  double hang_seconds = 120;  // BATON_EMU_HANG_SECONDS: the longest a host thread waits for pending work
};
const Settings& settings();

// The lock of the emulated runtime: every API call and all device work hold it.
using RuntimeLock = std::lock_guard<std::recursive_mutex>;

// Records `error` as the calling thread's last error, prints "baton_emu: <api>: <why>" and returns it.
cudaError_t fail(cudaError_t error, const char* api, const std::string& why);
// Returns cudaErrorInvalidDevice (recorded) unless 0 <= device < settings().devices.
cudaError_t check_device(int device, const char* api);

// Happens-before between streams: a vector clock indexed by stream id.
using Clock = std::vector<uint64_t>;
void join(Clock& into, const Clock& other);
uint64_t at(const Clock& clock, size_t index);

struct StreamState {
  size_t id = 0;
  int device = 0;
  int priority = 0;
  bool non_blocking = false;
  bool legacy = false;  // the device's legacy default stream (nullptr)
  Clock clock;
  std::vector<PendingWorkHandle> pending;  // incomplete work it is ordered after (collectives)
  std::string name() const;
};

struct EventState {
  int device = 0;
  bool timing = true;
  bool recorded = false;
  Clock clock;
  std::vector<PendingWorkHandle> pending;  // incomplete work the recorded point is ordered after
  std::chrono::steady_clock::time_point time;
};

// Streams. resolve_stream aborts on an unknown or destroyed stream; nullptr is the legacy stream of
// the calling thread's current device.
StreamState& resolve_stream(cudaStream_t stream, const char* api);
// Starts one operation on `stream`: orders it after what the host has synchronised with and, for
// the legacy stream and blocking streams, after each other as CUDA does; advances its clock.
void begin_operation(StreamState& stream);
// The host learnt that `clock`'s work finished (a synchronisation): later work is ordered after it.
void host_synchronised(const Clock& clock);
// Blocks until the device's pending work completed (wait_for_pending), then synchronises the host.
void synchronise_device(int device);
// Pending work: `into` also waits for what `from` waits for (completed work is dropped).
void inherit_pending(std::vector<PendingWorkHandle>& into, const std::vector<PendingWorkHandle>& from);
bool has_pending(const std::vector<PendingWorkHandle>& pending);
// Blocks (runtime lock released) until `stream`'s pending work completed; "would hang" past the limit.
void wait_for_pending(StreamState& stream, const char* api);
// At a synchronisation each pool gives back what it holds beyond its release threshold, as CUDA's do.
void release_pools_to_threshold();

// The calling thread's current device.
int current_device_index();
bool peer_access_enabled(int device, int peer);

// Device memory.
struct Allocation {
  const char* begin = nullptr;
  size_t bytes = 0;
  int device = 0;
  bool from_pool = false;
  bool library_owned = false;      // a library's private memory (set_library_owned): never opened
  size_t birth_stream = SIZE_MAX;  // the stream of cudaMallocAsync (none for cudaMalloc)
  uint64_t birth_time = 0;
  std::map<size_t, uint64_t> last_use;  // stream id -> its clock at the last use
  std::string describe() const;
};
// Opens device memory to the calling thread while device work runs (PROT_NONE otherwise, so host
// code that dereferences a device pointer faults with a clear message). Nests.
class DeviceMemoryOpen {
 public:
  DeviceMemoryOpen();
  ~DeviceMemoryOpen();
  DeviceMemoryOpen(const DeviceMemoryOpen&) = delete;
  DeviceMemoryOpen& operator=(const DeviceMemoryOpen&) = delete;
};
// Where a pointer points.
enum class Region { null, device, pinned_host, host };
Region region_of(const void* pointer, int* device);
// The live allocation containing [pointer, pointer + bytes) (its end included when bytes is 0), or
// nullptr. `freed_note` tells a freed allocation apart from memory never allocated.
Allocation* find_allocation(const void* pointer, size_t bytes, std::string* freed_note);
// Checks one access of device work on `stream` (device access rights, ordering after the allocation)
// and records it as the allocation's last use on that stream; aborts naming `api` and `what`.
void check_device_access(StreamState& stream, const void* pointer, size_t bytes, const char* api, const char* what,
                         bool needs_access_right);
bool pool_access_granted(int pool_device, int device);

}  // namespace baton_emu
