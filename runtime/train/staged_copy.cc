// Chunked, double-buffered copies between tensors on any device and host callbacks.
#include "runtime/train/staged_copy.h"

#include <algorithm>
#include <array>

namespace baton {
namespace {

constexpr size_t kPieceBytes = size_t{8} << 20;

// The stream to copy a tensor on `device` with: the caller's when it fits, else (after waiting for
// the caller's, which the tensor is ordered after) a new stream of the tensor's device.
Stream copy_stream_for(Device device, const Stream& given) {
  if (given.device() == device) return given;
  given.synchronize();
  return Stream::create(device);
}

// Two pinned host buffers with an event each: piece k uses slot k % 2.
struct Staging {
  Staging(Device device, size_t piece_bytes, Stream copy_stream)
      : buffers{Tensor::empty_host(Shape{static_cast<int64_t>(piece_bytes)}, DType::u8, HostMemory::pinned),
                Tensor::empty_host(Shape{static_cast<int64_t>(piece_bytes)}, DType::u8, HostMemory::pinned)},
        done{Event(device, /*timing=*/false), Event(device, /*timing=*/false)},
        stream(std::move(copy_stream)) {}
  // Copies still in flight must finish before the buffers are freed, also when an error unwinds.
  ~Staging() {
    try {
      stream.synchronize();
    } catch (...) {  // NOLINT(bugprone-empty-catch): an error is already propagating
    }
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  std::array<Tensor, 2> buffers;
  std::array<Event, 2> done;
  Stream stream;
};

}  // namespace

void stream_tensor_to_host(const Tensor& src, const Stream& stream, const HostSink& sink) {
  const size_t total = src.nbytes();
  if (total == 0) return;
  const auto* base = static_cast<const unsigned char*>(src.data_ptr());
  if (src.device().is_cpu()) {
    stream.synchronize();
    sink(base, total);
    return;
  }
  const size_t piece = std::min(kPieceBytes, total);
  const size_t pieces = (total + piece - 1) / piece;
  Staging staging(src.device(), piece, copy_stream_for(src.device(), stream));
  auto issue = [&](size_t k) {
    const size_t begin = k * piece;
    copy_bytes(staging.buffers[k % 2].data_ptr(), Device::cpu(), base + begin, src.device(),
               std::min(piece, total - begin), staging.stream);
    staging.done[k % 2].record(staging.stream);
  };
  issue(0);
  for (size_t k = 0; k < pieces; ++k) {
    if (k + 1 < pieces) issue(k + 1);  // its slot was handed to the sink in the previous iteration
    staging.done[k % 2].synchronize();
    sink(staging.buffers[k % 2].data_ptr(), std::min(piece, total - k * piece));
  }
}

void stream_host_to_tensor(const Tensor& dst, const Stream& stream, const HostSource& source) {
  const size_t total = dst.nbytes();
  if (total == 0) return;
  auto* base = static_cast<unsigned char*>(dst.data_ptr());
  if (dst.device().is_cpu()) {
    stream.synchronize();  // earlier work on the stream may still read or write dst
    source(base, total);
    return;
  }
  const size_t piece = std::min(kPieceBytes, total);
  const size_t pieces = (total + piece - 1) / piece;
  Staging staging(dst.device(), piece, copy_stream_for(dst.device(), stream));
  for (size_t k = 0; k < pieces; ++k) {
    const size_t begin = k * piece, count = std::min(piece, total - begin);
    staging.done[k % 2].synchronize();  // the copy out of this slot two pieces ago is done
    source(staging.buffers[k % 2].data_ptr(), count);
    copy_bytes(base + begin, dst.device(), staging.buffers[k % 2].data_ptr(), Device::cpu(), count, staging.stream);
    staging.done[k % 2].record(staging.stream);
  }
  staging.stream.synchronize();
}

}  // namespace baton
