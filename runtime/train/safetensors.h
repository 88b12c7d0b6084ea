// safetensors, the portable tensor file format (PyTorch, JAX, MLX, Rust and C++ tools read it):
// an 8-byte little-endian header length N, N bytes of UTF-8 JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional "__metadata__" string map),
// padded with spaces so the data starts 8-byte aligned, then the tensors' raw little-endian
// row-major bytes back to back, with no holes or overlaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/data/record_file.h"
#include "runtime/train/staged_copy.h"

namespace baton {

// The largest header this reader accepts (as the reference implementation).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;
// The most tensors a file may list (checked once the header is parsed, which takes linear time).
inline constexpr size_t kSafetensorsMaxTensors = 1'000'000;

// "F32", "F64", "F16", "BF16", "I64", "I32", "U8": the format's names of baton's dtypes.
std::string_view safetensors_dtype_name(DType dtype);

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes `tensors` (on any devices, copied to the host in pieces) in the given order, with
// `metadata` as "__metadata__", atomically: a temporary file beside `path`, flushed, renamed over
// it, and the directory flushed. The file carries a checksum per tensor and one over its header
// (safetensors_checksums.h), computed as the data is written. Names must be non-empty, unique, valid UTF-8 and not
// "__metadata__". On failure `path` is untouched and no temporary file remains; errors name `path`.
// Device tensors must be ready for work on `stream` (see HostStaging::to_host). Device tensors go
// through `staging` (give one to several saves so that they share its pinned buffers and streams);
// the overload without makes one for this file.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata, const Stream& stream);
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata, const Stream& stream, HostStaging& staging);
// The size of the largest tensor, for sizing a HostStaging.
size_t largest_tensor_bytes(const NamedTensors& tensors);

struct SafetensorsTensorInfo {
  DType dtype = DType::f32;
  Shape shape;
  uint64_t data_begin = 0;  // byte range in the data section (after the header)
  uint64_t data_end = 0;
  std::string checksum;  // the digest of its bytes (16 hexadecimal digits); empty when the file has none
};

// An open safetensors file whose header has been validated in full: the length fits the file, the
// JSON is valid and has no duplicate keys, every dtype is known, every shape's size matches its
// byte range, and the ranges cover the data section exactly (no holes, overlaps or bytes past it).
// Tensors are read on demand. Every error names the file (and the tensor or field).
class SafetensorsFile {
 public:
  explicit SafetensorsFile(std::string path);

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The metadata value for `key`; throws naming the file and the key when absent.
  const std::string& metadata(const std::string& key) const;
  // Tensor names in the order of their data in the file.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(const std::string& name) const { return entries_.contains(name); }
  // Throws naming the file and the tensor when absent.
  const SafetensorsTensorInfo& info(const std::string& name) const;

  // Copies tensor `name` into `dst` (same dtype and shape, any device), ordered as for
  // HostStaging::from_host: dst holds the data when this returns. Device destinations go through
  // `staging` (one for every tensor of a load); the overload without makes one for this tensor.
  void read_into(const std::string& name, const Tensor& dst, const Stream& stream) const;
  void read_into(const std::string& name, const Tensor& dst, const Stream& stream, HostStaging& staging) const;
  // Tensor `name` in a new tensor on the stream's device.
  Tensor read(const std::string& name, const Stream& stream) const;
  // Reads tensor `name` and throws naming the file and the tensor when its bytes do not match
  // their checksum (files with checksums), or, naming the value and its element, when a floating
  // tensor holds a NaN or an infinity, or, with `non_negative`, a value below zero (a variance,
  // a counter).
  void check_data(const std::string& name, bool non_negative = false) const;
  // Whether the file carries baton's checksums (safetensors_checksums.h): they were verified for
  // the header when it was opened, and check_data verifies them for the tensors.
  bool has_checksums() const { return has_checksums_; }

 private:
  // Bytes at `file_offset`; a file that shrank since it was opened is an error naming it.
  void read_bytes(void* dst, size_t count, uint64_t file_offset) const;
  void parse_header(const std::string& header, uint64_t data_bytes);

  std::string path_;
  data::RecordFile file_;    // closed with the object, also when its constructor throws
  uint64_t data_start_ = 0;  // file offset of the data section
  std::map<std::string, std::string> metadata_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, SafetensorsTensorInfo> entries_;
  bool has_checksums_ = false;
};

}  // namespace baton
