// Streams and events of the emulated GPU. Work runs synchronously at enqueue, but the order CUDA
// guarantees is tracked with vector clocks (one entry per stream): stream order, event record and
// wait, the legacy default stream's implicit ordering with blocking streams, and host
// synchronisation (stream/event/device synchronize, a successful query). The allocation checks use
// them to report work that is not ordered after what it depends on. Pending work (a collective
// waiting for its peers, pending_work.cc) travels along the same edges: a query answers
// cudaErrorNotReady while it is incomplete, a synchronisation waits for it.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "introspection_hooks.h"
#include "runtime_state.h"

namespace baton_emu {
namespace {

// Handles are addresses nothing is mapped at (the upper half of the user address space's low end).
constexpr uintptr_t kStreamHandleBase = uintptr_t{0x5eed} << 32;
constexpr uintptr_t kEventHandleBase = uintptr_t{0xe7e7} << 32;

struct Streams {
  std::unordered_map<cudaStream_t, std::unique_ptr<StreamState>> created;
  std::vector<std::unique_ptr<StreamState>> legacy;  // per device
  std::vector<StreamState*> all;                     // by id (nullptr once destroyed)
  Clock host;                                        // what the host has synchronised with
  std::unordered_map<cudaEvent_t, std::unique_ptr<EventState>> events;
};

Streams& streams() {
  static Streams s;
  return s;
}

StreamState& legacy_stream(int device) {
  Streams& s = streams();
  while (static_cast<int>(s.legacy.size()) <= device) {
    auto stream = std::make_unique<StreamState>();
    stream->id = s.all.size();
    stream->device = static_cast<int>(s.legacy.size());
    stream->legacy = true;
    s.all.push_back(stream.get());
    s.legacy.push_back(std::move(stream));
  }
  return *s.legacy[static_cast<size_t>(device)];
}

EventState* find_event(cudaEvent_t event) {
  auto it = streams().events.find(event);
  return it == streams().events.end() ? nullptr : it->second.get();
}

cudaError_t create_stream(cudaStream_t* stream, unsigned flags, int priority, const char* api) {
  RuntimeLock lock(runtime_lock());
  if (stream == nullptr) return fail(cudaErrorInvalidValue, api, "the stream pointer is null");
  if ((flags & ~unsigned{cudaStreamNonBlocking}) != 0) return fail(cudaErrorInvalidValue, api, "unknown stream flags");
  Streams& s = streams();
  auto state = std::make_unique<StreamState>();
  state->id = s.all.size();
  state->device = current_device_index();
  state->non_blocking = (flags & cudaStreamNonBlocking) != 0;
  state->priority = std::clamp(priority, -5, 0);  // H100: greatest -5, least 0 (CUDA clamps)
  // Handles are never reused, so a destroyed stream's handle stays invalid.
  auto handle = reinterpret_cast<cudaStream_t>(kStreamHandleBase + (state->id << 4));
  s.all.push_back(state.get());
  s.created.emplace(handle, std::move(state));
  count_stream_created();
  *stream = handle;
  return cudaSuccess;
}

cudaError_t create_event(cudaEvent_t* event, unsigned flags, const char* api) {
  RuntimeLock lock(runtime_lock());
  if (event == nullptr) return fail(cudaErrorInvalidValue, api, "the event pointer is null");
  if ((flags & ~unsigned{cudaEventBlockingSync | cudaEventDisableTiming}) != 0) {
    return fail(cudaErrorInvalidValue, api, "unknown event flags");
  }
  auto state = std::make_unique<EventState>();
  state->device = current_device_index();
  state->timing = (flags & cudaEventDisableTiming) == 0;
  static uint64_t next_event = 0;
  auto handle = reinterpret_cast<cudaEvent_t>(kEventHandleBase + (next_event++ << 4));
  streams().events.emplace(handle, std::move(state));
  count_event_created();
  *event = handle;
  return cudaSuccess;
}

}  // namespace

std::string StreamState::name() const {
  if (legacy) return "the legacy default stream of device " + std::to_string(device);
  return "stream #" + std::to_string(id) + " of device " + std::to_string(device);
}

void join(Clock& into, const Clock& other) {
  if (into.size() < other.size()) into.resize(other.size(), 0);
  for (size_t i = 0; i < other.size(); ++i) into[i] = std::max(into[i], other[i]);
}

uint64_t at(const Clock& clock, size_t index) { return index < clock.size() ? clock[index] : 0; }

StreamState& resolve_stream(cudaStream_t stream, const char* api) {
  if (stream == nullptr) return legacy_stream(current_device_index());
  auto it = streams().created.find(stream);
  if (it == streams().created.end()) {
    fatal(std::string(api) + ": the stream is not a live stream (destroyed, or never created by cudaStreamCreate*)");
  }
  return *it->second;
}

void begin_operation(StreamState& stream) {
  Streams& s = streams();
  join(stream.clock, s.host);
  if (stream.legacy) {
    for (StreamState* other : s.all) {
      if (other != nullptr && other->device == stream.device && !other->non_blocking) {
        join(stream.clock, other->clock);
        inherit_pending(stream.pending, other->pending);
      }
    }
  } else if (!stream.non_blocking) {
    join(stream.clock, legacy_stream(stream.device).clock);
    inherit_pending(stream.pending, legacy_stream(stream.device).pending);
  }
  if (stream.clock.size() <= stream.id) stream.clock.resize(stream.id + 1, 0);
  ++stream.clock[stream.id];
}

void host_synchronised(const Clock& clock) {
  join(streams().host, clock);
  release_pools_to_threshold();
}

void synchronise_device(int device) {
  for (size_t id = 0; id < streams().all.size(); ++id) {
    StreamState* stream = streams().all[id];
    if (stream != nullptr && stream->device == device) wait_for_pending(*stream, "a device synchronisation");
  }
  for (StreamState* stream : streams().all) {
    if (stream != nullptr && stream->device == device) host_synchronised(stream->clock);
  }
}

}  // namespace baton_emu

using baton_emu::fail;
using baton_emu::runtime_lock;
using baton_emu::RuntimeLock;

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return baton_emu::create_stream(stream, cudaStreamDefault, 0, "cudaStreamCreate");
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  return baton_emu::create_stream(stream, flags, 0, "cudaStreamCreateWithFlags");
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority) {
  return baton_emu::create_stream(stream, flags, priority, "cudaStreamCreateWithPriority");
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  auto& s = baton_emu::streams();
  auto it = s.created.find(stream);
  if (it == s.created.end()) {
    return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy",
                "not a live stream (destroyed twice, or the legacy stream)");
  }
  // Work already enqueued completes; the host is not synchronised by a destroy.
  s.all[it->second->id] = nullptr;
  s.created.erase(it);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  baton_emu::count_host_sync(baton_emu::HostSync::stream);
  baton_emu::wait_for_pending(baton_emu::resolve_stream(stream, "cudaStreamSynchronize"), "cudaStreamSynchronize");
  baton_emu::host_synchronised(baton_emu::resolve_stream(stream, "cudaStreamSynchronize").clock);
  return cudaSuccess;
}

// Work runs at enqueue, so a stream is idle unless a collective on it waits for its peers; a
// success synchronises like a wait would. cudaErrorNotReady is not recorded as an error (as in CUDA).
cudaError_t cudaStreamQuery(cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  baton_emu::StreamState& s = baton_emu::resolve_stream(stream, "cudaStreamQuery");
  if (baton_emu::has_pending(s.pending)) return cudaErrorNotReady;
  baton_emu::host_synchronised(s.clock);
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  RuntimeLock lock(runtime_lock());
  if (priority == nullptr) return fail(cudaErrorInvalidValue, "cudaStreamGetPriority", "the priority pointer is null");
  *priority = baton_emu::resolve_stream(stream, "cudaStreamGetPriority").priority;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  RuntimeLock lock(runtime_lock());
  if (flags != 0) return fail(cudaErrorInvalidValue, "cudaStreamWaitEvent", "flags must be 0");
  baton_emu::StreamState& s = baton_emu::resolve_stream(stream, "cudaStreamWaitEvent");
  baton_emu::EventState* e = baton_emu::find_event(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent", "not a live event");
  // Waiting on an event never recorded is a no-op, as in CUDA. Streams and events of different
  // devices may be combined here.
  baton_emu::begin_operation(s);
  if (e->recorded) {
    baton_emu::join(s.clock, e->clock);
    baton_emu::inherit_pending(s.pending, e->pending);
  }
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return baton_emu::create_event(event, cudaEventDefault, "cudaEventCreate");
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  return baton_emu::create_event(event, flags, "cudaEventCreateWithFlags");
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  RuntimeLock lock(runtime_lock());
  if (baton_emu::streams().events.erase(event) == 0) {
    return fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy", "not a live event (destroyed twice?)");
  }
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  RuntimeLock lock(runtime_lock());
  baton_emu::EventState* e = baton_emu::find_event(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord", "not a live event");
  baton_emu::StreamState& s = baton_emu::resolve_stream(stream, "cudaEventRecord");
  if (s.device != e->device) {
    return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord",
                "the event belongs to device " + std::to_string(e->device) + " but the stream is " + s.name());
  }
  baton_emu::begin_operation(s);
  e->recorded = true;
  e->clock = s.clock;
  e->pending.clear();
  baton_emu::inherit_pending(e->pending, s.pending);
  e->time = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  RuntimeLock lock(runtime_lock());
  baton_emu::EventState* e = baton_emu::find_event(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaEventQuery", "not a live event");
  if (baton_emu::has_pending(e->pending)) return cudaErrorNotReady;
  baton_emu::host_synchronised(e->clock);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  RuntimeLock lock(runtime_lock());
  baton_emu::EventState* e = baton_emu::find_event(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize", "not a live event");
  baton_emu::count_host_sync(baton_emu::HostSync::event);
  if (baton_emu::has_pending(e->pending)) {
    const std::vector<baton_emu::PendingWorkHandle> pending = e->pending;  // the event may be destroyed meanwhile
    baton_emu::wait_until([&] { return !baton_emu::has_pending(pending); },
                          [&] {
                            for (const auto& work : pending) {
                              if (!work->done && work->describe) return work->describe();
                            }
                            return std::string("pending work");
                          },
                          "cudaEventSynchronize");
    e = baton_emu::find_event(event);
    if (e == nullptr) return cudaSuccess;
  }
  baton_emu::host_synchronised(e->clock);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  RuntimeLock lock(runtime_lock());
  const char* api = "cudaEventElapsedTime";
  if (ms == nullptr) return fail(cudaErrorInvalidValue, api, "the result pointer is null");
  baton_emu::EventState* a = baton_emu::find_event(start);
  baton_emu::EventState* b = baton_emu::find_event(end);
  if (a == nullptr || b == nullptr) return fail(cudaErrorInvalidResourceHandle, api, "not a live event");
  if (!a->timing || !b->timing) {
    return fail(cudaErrorInvalidResourceHandle, api, "an event was created with cudaEventDisableTiming");
  }
  if (a->device != b->device)
    return fail(cudaErrorInvalidResourceHandle, api, "the events belong to different devices");
  if (!a->recorded || !b->recorded) return fail(cudaErrorInvalidResourceHandle, api, "an event was never recorded");
  *ms = std::chrono::duration<float, std::milli>(b->time - a->time).count();
  return cudaSuccess;
}
