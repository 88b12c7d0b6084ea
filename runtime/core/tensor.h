// Tensor: a dense array on one device: shared storage + byte offset + shape + dtype + memory format
// (row-major, or channels-last for rank-4 CPU activations: runtime/core/memory_format.h).
// Views along dimension 0 (micro-batch slices) and reshapes share storage and copy nothing.
// Copies between devices are issued on an explicit stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/memory_format.h"
#include "runtime/core/shape.h"
#include "runtime/core/storage.h"
#include "runtime/core/stream.h"

namespace baton {

class Tensor {
 public:
  Tensor() = default;  // undefined: no storage

  // Uninitialised memory on the stream's device, ordered on that stream.
  static Tensor empty(const Shape& shape, DType dtype, const Stream& stream);
  static Tensor empty(const Shape& shape, DType dtype, const Context& ctx) { return empty(shape, dtype, ctx.stream()); }
  // The same in `format` (channels_last needs a rank-4 shape).
  static Tensor empty(const Shape& shape, DType dtype, const Stream& stream, MemoryFormat format);
  // Uninitialised host memory on cpu:0 (pinned: page-locked for fast asynchronous copies).
  static Tensor empty_host(const Shape& shape, DType dtype, HostMemory kind = HostMemory::pageable);
  // A tensor on the stream's device holding `values` (values.size() must equal shape.numel()).
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape, const Stream& stream);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  MemoryFormat format() const { return format_; }
  Device device() const;
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  int rank() const { return shape_.rank(); }
  int64_t size(int axis) const { return shape_[axis]; }

  void* data_ptr() const;
  template <typename T>
  T* data() const;  // throws unless T matches the dtype

  // Rows [begin, end) along dimension 0, sharing storage (in this tensor's format).
  Tensor slice(int64_t begin, int64_t end) const;
  // `parts` views along dimension 0 whose sizes differ by at most one (the first ones larger).
  std::vector<Tensor> split(int64_t parts) const;
  // The same elements with another shape of equal numel, sharing storage; the result is contiguous,
  // so a channels-last tensor must place its elements as a contiguous one would (same_placement).
  Tensor reshape(const Shape& shape) const;

  // The same bytes tagged `format`, where that places every element alike (same_placement).
  Tensor as_format(MemoryFormat format) const;
  // A channels-last tensor's bytes as the contiguous [N, H, W, C] tensor they are, and back: the
  // views the format conversions (kernels::to_memory_format) and NHWC kernels work on.
  Tensor nhwc_view() const;
  static Tensor channels_last_from_nhwc(const Tensor& nhwc);

  // Copies `src` (same shape, dtype and placement, any device) into this tensor, ordered on `stream`, which
  // must belong to the CUDA device involved (either one for peer copies), or be a CPU stream for
  // host-to-host copies.
  void copy_from(const Tensor& src, const Stream& stream);
  // A copy on `device`; `stream` as for copy_from (a CPU->CPU copy takes any CPU stream).
  Tensor to(Device device, const Stream& stream) const;
  // Copies to the host and waits for the copy, in row-major [N, C, H, W] order (a channels-last
  // tensor must be converted first: kernels::to_memory_format); T must match the dtype.
  template <typename T>
  std::vector<T> to_vector(const Stream& stream) const;
  // Sets every element to `value` (converted to the dtype), ordered on `stream`.
  void fill(double value, const Stream& stream);

  // Marks this tensor's memory as used by `stream` (see Storage::record_stream).
  void record_stream(const Stream& stream) const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  size_t offset_bytes() const { return offset_bytes_; }

  // "Tensor(cuda:0, f32, [2, 3]) [[...]]": shape, device, dtype and up to `max_elements` values
  // (copies to the host and synchronises `stream`).
  std::string debug_string(const Stream& stream, int64_t max_elements = 32) const;

 private:
  Tensor(std::shared_ptr<Storage> storage, size_t offset_bytes, Shape shape, DType dtype,
         MemoryFormat format = MemoryFormat::contiguous)
      : storage_(std::move(storage)),
        offset_bytes_(offset_bytes),
        shape_(std::move(shape)),
        dtype_(dtype),
        format_(format) {}
  void check_defined(const char* what) const;
  void copy_to_host(void* dst, const Stream& stream) const;
  void copy_from_host(const void* src, const Stream& stream);

  std::shared_ptr<Storage> storage_;
  size_t offset_bytes_ = 0;
  Shape shape_;
  DType dtype_ = DType::f32;
  MemoryFormat format_ = MemoryFormat::contiguous;
};

// Copies `bytes` between two memory regions on any devices, ordered on `stream` (see copy_from).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes, const Stream& stream);

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape, const Stream& stream) {
  BATON_CHECK(static_cast<int64_t>(values.size()) == shape.numel(), "from_vector: ", values.size(),
              " values for shape ", shape.str(), " of ", shape.numel(), " elements");
  Tensor t = empty(shape, dtype_of<T>, stream);
  t.copy_from_host(values.data(), stream);
  return t;
}

template <typename T>
T* Tensor::data() const {
  check_defined("data");
  BATON_CHECK(dtype_ == dtype_of<T>, "tensor of dtype ", dtype_name(dtype_), " accessed as ", dtype_name(dtype_of<T>));
  return static_cast<T*>(data_ptr());
}

template <typename T>
std::vector<T> Tensor::to_vector(const Stream& stream) const {
  check_defined("to_vector");
  BATON_CHECK(dtype_ == dtype_of<T>, "to_vector: tensor of dtype ", dtype_name(dtype_), " read as ",
              dtype_name(dtype_of<T>));
  std::vector<T> out(static_cast<size_t>(numel()));
  copy_to_host(out.data(), stream);
  return out;
}

}  // namespace baton
