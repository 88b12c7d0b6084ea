// Chunked, double-buffered copies between tensors on any device and host callbacks, through
// pinned buffers, events and copy streams made once per HostStaging.
#include "runtime/train/staged_copy.h"

#include <algorithm>

#include "runtime/core/log.h"

namespace baton {

HostStaging::DeviceSlots::DeviceSlots(Device d)
    : device(d), done{Event(d, /*timing=*/false), Event(d, /*timing=*/false)} {}

HostStaging::HostStaging(size_t largest_bytes) : largest_bytes_(std::max<size_t>(largest_bytes, 1)) {}

HostStaging::~HostStaging() {
  try {
    wait_for_copies_in_flight();
  } catch (const std::exception& e) {  // an error is already propagating; the buffers still outlive the copies
    log_error("HostStaging: waiting for staged copies failed: ", e.what());
  }
}

void HostStaging::wait_for_copies_in_flight() {
  if (!in_flight_) return;
  const Stream stream = *in_flight_;
  in_flight_.reset();
  stream.synchronize();
}

HostStaging::DeviceSlots& HostStaging::slots(Device device) {
  for (const auto& s : devices_) {
    if (s->device == device) return *s;
  }
  devices_.push_back(std::make_unique<DeviceSlots>(device));
  return *devices_.back();
}

// The caller's stream when it is of the tensor's device; else (after waiting for the caller's,
// which the tensor is ordered after) the device's copy stream, made on first use.
Stream HostStaging::copy_stream(DeviceSlots& s, const Stream& given) {
  if (given.device() == s.device) return given;
  given.synchronize();
  if (!s.own_stream) s.own_stream = Stream::create(s.device);
  return *s.own_stream;
}

size_t HostStaging::prepare_buffers(size_t total) {
  const size_t piece = std::min(kStagingPieceBytes, total);
  if (piece > piece_bytes_) {
    wait_for_copies_in_flight();
    piece_bytes_ = std::min(kStagingPieceBytes, std::max(piece, largest_bytes_));
    const Shape shape{static_cast<int64_t>(piece_bytes_)};
    buffers_ = {Tensor::empty_host(shape, DType::u8, HostMemory::pinned),
                Tensor::empty_host(shape, DType::u8, HostMemory::pinned)};
  }
  return piece;
}

HostStaging::Transfer HostStaging::begin_transfer(size_t total, Device device, const Stream& stream) {
  wait_for_copies_in_flight();
  const size_t piece = prepare_buffers(total);
  DeviceSlots& s = slots(device);
  Transfer t{.piece = piece, .pieces = (total + piece - 1) / piece, .slots = s, .copy = copy_stream(s, stream)};
  in_flight_ = t.copy;
  return t;
}

void HostStaging::to_host(const Tensor& src, const Stream& stream, const HostSink& sink) {
  const size_t total = src.nbytes();
  if (total == 0) return;
  const auto* base = static_cast<const unsigned char*>(src.data_ptr());
  if (src.device().is_cpu()) {
    stream.synchronize();
    sink(base, total);
    return;
  }
  const Transfer t = begin_transfer(total, src.device(), stream);
  auto issue = [&](size_t k) {
    const size_t begin = k * t.piece;
    copy_bytes(buffers_[k % 2].data_ptr(), Device::cpu(), base + begin, src.device(), std::min(t.piece, total - begin),
               t.copy);
    t.slots.done[k % 2].record(t.copy);
  };
  issue(0);
  for (size_t k = 0; k < t.pieces; ++k) {
    if (k + 1 < t.pieces) issue(k + 1);  // its buffer was handed to the sink in the previous iteration
    t.slots.done[k % 2].synchronize();
    sink(buffers_[k % 2].data_ptr(), std::min(t.piece, total - k * t.piece));
  }
  in_flight_.reset();  // every copy was waited for
}

void HostStaging::from_host(const Tensor& dst, const Stream& stream, const HostSource& source) {
  const size_t total = dst.nbytes();
  if (total == 0) return;
  auto* base = static_cast<unsigned char*>(dst.data_ptr());
  if (dst.device().is_cpu()) {
    stream.synchronize();  // earlier work on the stream may still read or write dst
    source(base, total);
    return;
  }
  const Transfer t = begin_transfer(total, dst.device(), stream);
  for (size_t k = 0; k < t.pieces; ++k) {
    const size_t begin = k * t.piece, count = std::min(t.piece, total - begin);
    t.slots.done[k % 2].synchronize();  // the copy out of this buffer two pieces ago is done
    source(buffers_[k % 2].data_ptr(), count);
    copy_bytes(base + begin, dst.device(), buffers_[k % 2].data_ptr(), Device::cpu(), count, t.copy);
    t.slots.done[k % 2].record(t.copy);
  }
  wait_for_copies_in_flight();
}

}  // namespace baton
