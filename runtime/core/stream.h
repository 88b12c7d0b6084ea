// Stream and Event: ordered work queues and markers in them, for CUDA and CPU devices alike.
//
// On CUDA they wrap cudaStream_t / cudaEvent_t. On a CPU device, work issued on a stream runs to
// completion in the issuing thread, in order; an event recorded on a CPU stream is therefore
// complete as soon as record() returns, and it carries the host time of that moment for
// elapsed_ms(). A stream waiting on an event recorded on another device blocks as CUDA would
// order it: a CPU stream waiting on a CUDA event blocks the host until the event completes.
#pragma once

#include <memory>

#include "runtime/core/device.h"

namespace baton {

namespace detail {
struct StreamState;
struct EventState;
}  // namespace detail

enum class StreamPriority { low, normal, high };

class Event;

// A shared handle: copies refer to the same stream, which lives while any copy (or any tensor
// memory allocated on it) does.
class Stream {
 public:
  // Creates a new stream on `device` (non-blocking with respect to CUDA's legacy stream).
  // `priority` maps to CUDA stream priorities: low to the least (CUDA's default), high to the
  // greatest (for communication and copies), normal between them; CPU streams ignore it.
  static Stream create(Device device, StreamPriority priority = StreamPriority::normal);

  Device device() const;
  StreamPriority priority() const;
  // Blocks the host until all work issued so far has completed.
  void synchronize() const;
  // True when all work issued so far has completed.
  bool query() const;
  // Work issued on this stream after this call waits for `event`'s recorded work.
  void wait(const Event& event) const;
  // The cudaStream_t as void* (nullptr for CPU streams).
  void* native_handle() const;

  bool operator==(const Stream& other) const { return state_ == other.state_; }
  const std::shared_ptr<detail::StreamState>& state() const { return state_; }

 private:
  explicit Stream(std::shared_ptr<detail::StreamState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::StreamState> state_;
};

// A marker in a stream; move-only (owns its cudaEvent_t).
class Event {
 public:
  // `timing` enables elapsed_ms (CUDA events without timing are cheaper to wait on).
  explicit Event(Device device, bool timing = true);
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device device() const;
  // Captures the work issued so far on `stream` (which must be on this event's device).
  void record(const Stream& stream);
  bool recorded() const;
  // True when the recorded work has completed (an unrecorded event counts as complete).
  bool query() const;
  // Blocks the host until the recorded work has completed.
  void synchronize() const;
  // Milliseconds from this event to `end`; both must be recorded, timing, on one device.
  float elapsed_ms(const Event& end) const;
  void* native_handle() const;  // cudaEvent_t as void* (nullptr for CPU events)

 private:
  std::unique_ptr<detail::EventState> state_;
};

}  // namespace baton
