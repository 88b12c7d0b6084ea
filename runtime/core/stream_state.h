// Internal: the state behind Stream and Event handles (shared by the core's implementation files).
#pragma once

#include <chrono>

#include "runtime/core/device.h"
#include "runtime/core/stream.h"

namespace baton::detail {

struct StreamState {
  StreamState(Device d, StreamPriority p, void* handle) : device(d), priority(p), cuda_stream(handle) {}
  ~StreamState();  // destroys the CUDA stream after its work completes
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  Device device;
  StreamPriority priority;
  void* cuda_stream = nullptr;  // cudaStream_t; nullptr for CPU streams
};

struct EventState {
  Device device;
  bool timing = true;
  bool recorded = false;
  void* cuda_event = nullptr;                      // cudaEvent_t; nullptr for CPU events
  std::chrono::steady_clock::time_point cpu_time;  // CPU events: when record() ran
};

}  // namespace baton::detail
