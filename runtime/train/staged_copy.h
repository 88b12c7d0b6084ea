// Moving tensors' bytes between any device and host code (a file) in bounded pieces: host tensors
// are handed over in place; device tensors go through two pinned staging buffers, so the copy of
// one piece overlaps the file I/O of the other and memory use stays small. One HostStaging serves
// every tensor of a save or load, so its buffers, events and streams are made once, not per tensor.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/core/tensor.h"

namespace baton {

using HostSink = std::function<void(const void* bytes, size_t count)>;
using HostSource = std::function<void(void* bytes, size_t count)>;

// The largest piece one copy moves (each of the two pinned buffers holds one).
inline constexpr size_t kStagingPieceBytes = size_t{8} << 20;

class HostStaging {
 public:
  // `largest_bytes`: the largest tensor this will move; the pinned buffers (made at the first device
  // tensor) hold min(kStagingPieceBytes, largest_bytes) each, and grow if a larger tensor comes.
  explicit HostStaging(size_t largest_bytes = kStagingPieceBytes);
  ~HostStaging();  // waits for copies still in flight (an error unwinding past a copy)
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Calls sink with consecutive pieces of src's bytes, in order. The tensor must be ready for work
  // on `stream`; a stream of another device than src's is synchronised first and a copy stream of
  // src's device (made once per device) is used instead. Returns when every piece has been handed
  // to the sink.
  void to_host(const Tensor& src, const Stream& stream, const HostSink& sink);
  // Fills dst's bytes in order from source, which must fill each piece it is given completely.
  // Streams as above; returns when dst holds the data (so it is ready on any stream).
  void from_host(const Tensor& dst, const Stream& stream, const HostSource& source);

 private:
  // Per device: an event per buffer (piece k uses buffer k % 2) and, when needed, a copy stream.
  struct DeviceSlots {
    explicit DeviceSlots(Device d);
    Device device;
    std::array<Event, 2> done;
    std::optional<Stream> own_stream;
  };
  DeviceSlots& slots(Device device);
  Stream copy_stream(DeviceSlots& slots, const Stream& given);
  // Makes the buffers hold a piece of `total` bytes; returns the piece size.
  size_t prepare_buffers(size_t total);
  void wait_for_copies_in_flight();
  // The start both directions share for a device tensor of `total` bytes: earlier copies waited
  // for, the buffers prepared, and the copy stream chosen and marked in flight.
  struct Transfer {
    size_t piece, pieces;
    DeviceSlots& slots;
    Stream copy;
  };
  Transfer begin_transfer(size_t total, Device device, const Stream& stream);

  size_t largest_bytes_;
  size_t piece_bytes_ = 0;
  std::array<Tensor, 2> buffers_;
  std::vector<std::unique_ptr<DeviceSlots>> devices_;
  std::optional<Stream> in_flight_;  // the copy stream of a call that did not finish
};

}  // namespace baton
