// Transfers between pipeline stages: an event on the producer's stream, then (different devices)
// a copy on the link's copy stream and an event after it; the consumer's stream waits on that.
#pragma once

#include <optional>
#include <vector>

#include "parallel/pipeline/mailbox.h"
#include "parallel/pipeline/pipeline_trace.h"
#include "parallel/replicas/device_copy.h"
#include "runtime/core/context.h"

namespace baton::parallel {

// The streams of one directed link between two stages' devices. Same device: none (no copy, the
// consumer waits on the producer's event). Otherwise `copy` is a stream of the CUDA device involved
// (the destination's when it is CUDA: a peer copy) or a CPU stream for memcpy between CPU virtual
// devices, and `alloc` a stream of the destination device on which the received buffers are
// allocated. Between two GPUs, create() turns peer access on where the hardware allows
// (enable_peer_access): the copy then goes directly over NVLink/PCIe; otherwise the driver stages
// it through host memory.
struct LinkStreams {
  std::optional<Stream> copy;
  std::optional<Stream> alloc;
  bool peer_access = false;  // GPU to GPU with peer access on

  static LinkStreams create(Device src, Device dst);
};

// Packs `tensors` (written on `src`'s compute stream; undefined entries stay undefined) for a
// consumer on `dst`. Source buffers are marked as used by the copy stream so their memory is not
// reused before the copy has read them. With `recorder`, `marks` gets the copy's start (after the
// wait for the producer) and end on the copy stream (none when both stages share a device).
Message send_tensors(const std::vector<Tensor>& tensors, Context& src, Device dst, const LinkStreams& link,
                     const StepRecorder* recorder = nullptr, std::pair<TraceMark, TraceMark>* marks = nullptr);

// Makes `ctx`'s stream wait for the message and marks its tensors as used by that stream.
void receive_tensors(const Message& message, Context& ctx);

}  // namespace baton::parallel
