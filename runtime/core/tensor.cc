// Tensor implementation: allocation, views, copies between devices, fill and the debug print.
#include "runtime/core/tensor.h"

#include <cstring>
#include <sstream>

#include "runtime/core/build_config.h"
#include "runtime/core/fill_pattern.h"

#if BATON_HAVE_CUDA
#include <map>
#include <mutex>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/stream_order.h"
#endif

namespace baton {
namespace {

#if BATON_HAVE_CUDA
// The stream a peer copy allocates its destination on: one per device for the whole process, made
// on first use (a stream per copy costs a driver call and a stream each time). Never destroyed:
// memory allocated on it may be freed at any time, static destruction included.
Stream peer_allocation_stream(Device device) {
  static std::mutex mutex;
  static auto* const streams = new std::map<int, Stream>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = streams->find(device.index());
  if (it == streams->end()) it = streams->emplace(device.index(), Stream::create(device)).first;
  return it->second;
}
#endif

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, const Stream& stream) {
  const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  return Tensor(Storage::allocate(bytes, stream), 0, shape, dtype);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, const Stream& stream, MemoryFormat format) {
  BATON_CHECK(format == MemoryFormat::contiguous || shape.rank() == 4, "Tensor::empty: a ", memory_format_name(format),
              " tensor needs a rank-4 [N, C, H, W] shape, got ", shape.str());
  Tensor t = empty(shape, dtype, stream);
  t.format_ = format;
  return t;
}

Tensor Tensor::empty_host(const Shape& shape, DType dtype, HostMemory kind) {
  const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  return Tensor(Storage::allocate_host(bytes, kind), 0, shape, dtype);
}

Device Tensor::device() const {
  check_defined("device");
  return storage_->device();
}

void Tensor::check_defined(const char* what) const {
  BATON_CHECK(storage_ != nullptr, "Tensor::", what, " called on an undefined tensor");
}

void* Tensor::data_ptr() const {
  check_defined("data_ptr");
  return static_cast<char*>(storage_->data()) + offset_bytes_;
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  check_defined("slice");
  BATON_CHECK(rank() >= 1, "slice: a scalar tensor has no dimension 0");
  BATON_CHECK(0 <= begin && begin <= end && end <= shape_[0], "slice [", begin, ", ", end,
              ") is out of range for dimension 0 of shape ", shape_.str());
  const size_t row_bytes = static_cast<size_t>(shape_.stride(0)) * dtype_size(dtype_);
  return Tensor(storage_, offset_bytes_ + static_cast<size_t>(begin) * row_bytes, shape_.with_dim0(end - begin), dtype_,
                format_);
}

std::vector<Tensor> Tensor::split(int64_t parts) const {
  check_defined("split");
  BATON_CHECK(rank() >= 1, "split: a scalar tensor has no dimension 0");
  BATON_CHECK(parts >= 1 && parts <= shape_[0], "split into ", parts, " parts: expected 1..", shape_[0],
              " (dimension 0 of shape ", shape_.str(), ")");
  std::vector<Tensor> views;
  const int64_t base = shape_[0] / parts, extra = shape_[0] % parts;
  int64_t begin = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t rows = base + (i < extra ? 1 : 0);
    views.push_back(slice(begin, begin + rows));
    begin += rows;
  }
  return views;
}

Tensor Tensor::reshape(const Shape& shape) const {
  check_defined("reshape");
  BATON_CHECK(shape.numel() == numel(), "reshape from ", shape_.str(), " (", numel(), " elements) to ", shape.str(),
              " (", shape.numel(), " elements)");
  BATON_CHECK(same_placement(shape_, format_, MemoryFormat::contiguous), "reshape of a ", memory_format_name(format_),
              " tensor of shape ", shape_.str(),
              ": its elements are not in row-major order (convert it with "
              "kernels::to_memory_format first)");
  return Tensor(storage_, offset_bytes_, shape, dtype_);
}

Tensor Tensor::as_format(MemoryFormat format) const {
  check_defined("as_format");
  BATON_CHECK(same_placement(shape_, format_, format), "as_format: a ", memory_format_name(format_),
              " tensor of shape ", shape_.str(), " does not place its elements as a ", memory_format_name(format),
              " one (convert it with kernels::to_memory_format)");
  return Tensor(storage_, offset_bytes_, shape_, dtype_, format);
}

Tensor Tensor::nhwc_view() const {
  check_defined("nhwc_view");
  BATON_CHECK(format_ == MemoryFormat::channels_last, "nhwc_view: the tensor of shape ", shape_.str(), " is ",
              memory_format_name(format_), ", not channels-last");
  return Tensor(storage_, offset_bytes_, Shape{shape_[0], shape_[2], shape_[3], shape_[1]}, dtype_);
}

Tensor Tensor::channels_last_from_nhwc(const Tensor& nhwc) {
  nhwc.check_defined("channels_last_from_nhwc");
  BATON_CHECK(nhwc.rank() == 4 && nhwc.format_ == MemoryFormat::contiguous,
              "channels_last_from_nhwc: expected a "
              "contiguous [N, H, W, C] tensor, got a ",
              memory_format_name(nhwc.format_), " one of shape ", nhwc.shape_.str());
  const Shape& s = nhwc.shape_;
  return Tensor(nhwc.storage_, nhwc.offset_bytes_, Shape{s[0], s[3], s[1], s[2]}, nhwc.dtype_,
                MemoryFormat::channels_last);
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes, const Stream& stream) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    stream.synchronize();  // a CUDA stream given for a host copy: keep its order
    std::memcpy(dst, src, bytes);
    return;
  }
#if BATON_HAVE_CUDA
  const Device s = stream.device();
  BATON_CHECK(s.is_cuda() && (s == dst_device || s == src_device), "copy from ", src_device.str(), " to ",
              dst_device.str(), " must be issued on a stream of the CUDA device involved, not ", s.str());
  CudaDeviceGuard guard(s.index());
  auto cuda_stream = static_cast<cudaStream_t>(stream.native_handle());
  if (dst_device.is_cuda() && src_device.is_cuda() && dst_device != src_device) {
    BATON_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device.index(), src, src_device.index(), bytes, cuda_stream));
  } else {
    BATON_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda_stream));
  }
#else
  (void)stream;
  BATON_FAIL("copy from ", src_device.str(), " to ", dst_device.str(), ": this baton was built without CUDA");
#endif
}

void Tensor::copy_from(const Tensor& src, const Stream& stream) {
  check_defined("copy_from");
  src.check_defined("copy_from (source)");
  BATON_CHECK(src.shape_ == shape_ && src.dtype_ == dtype_, "copy_from: source ", src.shape_.str(), " ",
              dtype_name(src.dtype_), " into destination ", shape_.str(), " ", dtype_name(dtype_));
  BATON_CHECK(same_placement(shape_, src.format_, format_), "copy_from: a ", memory_format_name(src.format_),
              " source into a ", memory_format_name(format_), " destination of shape ", shape_.str(),
              " (convert with kernels::to_memory_format)");
  copy_bytes(data_ptr(), device(), src.data_ptr(), src.device(), nbytes(), stream);
}

Tensor Tensor::to(Device device, const Stream& stream) const {
  check_defined("to");
  Tensor out;
  if (device.is_cpu()) {
    out = Tensor(Storage::allocate(nbytes(), Stream::create(device)), 0, shape_, dtype_, format_);
  } else {
    BATON_CHECK(stream.device() == device || stream.device() == this->device(), "Tensor::to(", device.str(),
                "): the stream (", stream.device().str(), ") must be on the source or destination device");
    if (stream.device() == device) {
      out = Tensor(Storage::allocate(nbytes(), stream), 0, shape_, dtype_, format_);
    } else {
#if BATON_HAVE_CUDA
      // Peer copy issued on the source's stream: allocate on the destination, then order the copy
      // after the allocation and the eventual free after the copy.
      const Stream destination = peer_allocation_stream(device);
      out = Tensor(Storage::allocate(nbytes(), destination), 0, shape_, dtype_, format_);
      detail::order_after(static_cast<cudaStream_t>(stream.native_handle()),
                          static_cast<cudaStream_t>(destination.native_handle()), device.index());
      out.record_stream(stream);
#else
      BATON_FAIL("Tensor::to(", device.str(), "): this baton was built without CUDA");
#endif
    }
  }
  out.copy_from(*this, stream);
  return out;
}

void Tensor::copy_to_host(void* dst, const Stream& stream) const {
  BATON_CHECK(same_placement(shape_, format_, MemoryFormat::contiguous), "reading a ", memory_format_name(format_),
              " tensor of shape ", shape_.str(),
              " to the host in row-major order: convert it with "
              "kernels::to_memory_format first");
  copy_bytes(dst, Device::cpu(), data_ptr(), device(), nbytes(), stream);
  stream.synchronize();
}

void Tensor::copy_from_host(const void* src, const Stream& stream) {
  copy_bytes(data_ptr(), device(), src, Device::cpu(), nbytes(), stream);
  // Pageable sources are staged before cudaMemcpyAsync returns; waiting keeps the caller's buffer
  // free to reuse in every case.
  stream.synchronize();
}

void Tensor::fill(double value, const Stream& stream) {
  check_defined("fill");
  const uint64_t pattern = detail::element_bits(value, dtype_);
  detail::fill_pattern(data_ptr(), device(), numel(), dtype_size(dtype_), pattern, stream);
}

void Tensor::record_stream(const Stream& stream) const {
  check_defined("record_stream");
  storage_->record_stream(stream);
}

std::string Tensor::debug_string(const Stream& stream, int64_t max_elements) const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream out;
  out << "Tensor(" << device().str() << ", " << dtype_name(dtype_) << ", " << shape_.str() << ") [";
  const int64_t shown = std::min(numel(), max_elements);
  std::vector<unsigned char> host(nbytes());
  copy_to_host(host.data(), stream);
  const size_t esize = dtype_size(dtype_);
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) out << ", ";
    out << detail::element_value(host.data() + static_cast<size_t>(i) * esize, dtype_);
  }
  if (shown < numel()) out << ", ... (" << numel() - shown << " more)";
  out << "]";
  return out.str();
}

}  // namespace baton
