// Moving a tensor's bytes between any device and host code (a file) in bounded pieces: host
// tensors are handed over in place; device tensors go through two pinned staging buffers, so the
// copy of one piece overlaps the file I/O of the other and memory use stays small.
#pragma once

#include <cstddef>
#include <functional>

#include "runtime/core/tensor.h"

namespace baton {

using HostSink = std::function<void(const void* bytes, size_t count)>;
using HostSource = std::function<void(void* bytes, size_t count)>;

// Calls sink with consecutive pieces of src's bytes, in order. The tensor must be ready for work on
// `stream`; a stream of another device than src's is synchronised first and a stream of src's
// device is used instead. Returns when every piece has been handed to the sink.
void stream_tensor_to_host(const Tensor& src, const Stream& stream, const HostSink& sink);

// Fills dst's bytes in order from source, which must fill each piece it is given completely.
// Streams as above; returns when dst holds the data (so it is ready on any stream).
void stream_host_to_tensor(const Tensor& dst, const Stream& stream, const HostSource& source);

}  // namespace baton
