// SafetensorsFile: validates a safetensors header in full, then reads tensors on demand.

#include <algorithm>
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/finite_values.h"
#include "runtime/train/safetensors.h"
#include "runtime/train/safetensors_checksums.h"

namespace baton {
namespace {

constexpr DType kSafetensorsDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                        DType::i64, DType::i32, DType::u8};

std::string known_dtype_names() {
  std::string out;
  for (DType d : kSafetensorsDTypes) out += (out.empty() ? "" : ", ") + std::string(safetensors_dtype_name(d));
  return out;
}

uint64_t unsigned_field(const nlohmann::json& v, const std::string& where, const char* what) {
  BATON_CHECK(v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0), where, ": ", what,
              " must be a non-negative integer, got ", v.dump());
  return v.get<uint64_t>();
}

SafetensorsTensorInfo parse_entry(const nlohmann::json& entry, const std::string& where, uint64_t data_bytes) {
  BATON_CHECK(entry.is_object() && entry.contains("dtype") && entry.contains("shape") && entry.contains("data_offsets"),
              where, ": expected an object with \"dtype\", \"shape\" and \"data_offsets\", got ", entry.dump());
  SafetensorsTensorInfo info;
  const nlohmann::json& dtype = entry["dtype"];
  const auto known = std::find_if(std::begin(kSafetensorsDTypes), std::end(kSafetensorsDTypes), [&](DType d) {
    return dtype.is_string() && dtype.get<std::string>() == safetensors_dtype_name(d);
  });
  BATON_CHECK(known != std::end(kSafetensorsDTypes), where, ": dtype ", dtype.dump(),
              " is not supported (expected one of ", known_dtype_names(), ")");
  info.dtype = *known;

  const nlohmann::json& shape = entry["shape"];
  BATON_CHECK(shape.is_array(), where, ": shape must be an array of sizes, got ", shape.dump());
  std::vector<int64_t> dims;
  uint64_t bytes = dtype_size(info.dtype);
  bool overflow = false;
  for (const nlohmann::json& d : shape) {
    const uint64_t size = unsigned_field(d, where, "every shape entry");
    overflow = overflow || size > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(bytes, size, &bytes);
    dims.push_back(static_cast<int64_t>(size));
  }
  BATON_CHECK(!overflow, where, ": shape ", shape.dump(), " is too large");
  info.shape = Shape(std::move(dims));

  const nlohmann::json& offsets = entry["data_offsets"];
  BATON_CHECK(offsets.is_array() && offsets.size() == 2, where, ": data_offsets must be [begin, end], got ",
              offsets.dump());
  info.data_begin = unsigned_field(offsets[0], where, "data_offsets[0]");
  info.data_end = unsigned_field(offsets[1], where, "data_offsets[1]");
  BATON_CHECK(info.data_begin <= info.data_end, where, ": data_offsets ", offsets.dump(), " end before they begin");
  BATON_CHECK(info.data_end <= data_bytes, where, ": data_offsets ", offsets.dump(),
              " reach past the end of the data section (", data_bytes, " bytes)");
  BATON_CHECK(info.data_end - info.data_begin == bytes, where, ": shape ", info.shape.str(), " of ", dtype.dump(),
              " needs ", bytes, " bytes, but data_offsets ", offsets.dump(), " span ", info.data_end - info.data_begin);
  return info;
}

}  // namespace

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)), file_(path_) {
  const std::string where = "safetensors file '" + path_ + "'";
  const uint64_t file_bytes = file_.size();
  BATON_CHECK(file_bytes >= 8, where, ": the file has ", file_bytes, " bytes, too few for the 8-byte header length");
  unsigned char length_bytes[8];
  read_bytes(length_bytes, 8, 0);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | length_bytes[i];
  BATON_CHECK(header_bytes <= kSafetensorsMaxHeaderBytes, where, ": the header length ", header_bytes,
              " exceeds the format's limit of ", kSafetensorsMaxHeaderBytes, " bytes");
  BATON_CHECK(header_bytes <= file_bytes - 8, where, ": the header length ", header_bytes,
              " reaches past the end of the file (", file_bytes, " bytes)");
  std::string header(header_bytes, '\0');
  read_bytes(header.data(), header.size(), 8);
  data_start_ = 8 + header_bytes;
  parse_header(header, file_bytes - data_start_);
}

void SafetensorsFile::parse_header(const std::string& text, uint64_t data_bytes) {
  const std::string where = "safetensors file '" + path_ + "'";
  const nlohmann::json header = parse_json_text(text, where + ": the header");
  BATON_CHECK(header.is_object(), where, ": the header must be a JSON object, got ", header.type_name());
  const size_t tensor_count = header.size() - (header.contains("__metadata__") ? 1 : 0);
  BATON_CHECK(tensor_count <= kSafetensorsMaxTensors, where, ": the header lists ", tensor_count,
              " tensors, more than the limit of ", kSafetensorsMaxTensors);
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      BATON_CHECK(value.is_object(), where, ": __metadata__ must be an object of strings, got ", value.dump());
      for (const auto& [field, text_value] : value.items()) {
        BATON_CHECK(text_value.is_string(), where, ": __metadata__ entry '", field, "' must be a string, got ",
                    text_value.dump());
        metadata_.emplace(field, text_value.get<std::string>());
      }
      continue;
    }
    entries_.emplace(key, parse_entry(value, where + ", tensor '" + key + "'", data_bytes));
    names_.push_back(key);
  }
  // The byte ranges, in file order, must tile the data section exactly (sorted once with the ranges
  // beside the names: no lookups inside the sort).
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  ranges.reserve(names_.size());
  for (std::string& name : names_) {
    const SafetensorsTensorInfo& info = entries_.at(name);
    ranges.push_back({info.data_begin, info.data_end, std::move(name)});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) {
    return std::tie(x.begin, x.end, x.name) < std::tie(y.begin, y.end, y.name);
  });
  for (size_t i = 0; i < ranges.size(); ++i) names_[i] = std::move(ranges[i].name);
  uint64_t covered = 0;
  std::string previous;
  for (const std::string& name : names_) {
    const SafetensorsTensorInfo& info = entries_.at(name);
    BATON_CHECK(info.data_begin >= covered, where, ": tensor '", name, "' (bytes ", info.data_begin, " to ",
                info.data_end, ") overlaps tensor '", previous, "' (which ends at ", covered, ")");
    BATON_CHECK(info.data_begin == covered, where, ": bytes ", covered, " to ", info.data_begin,
                " of the data section, before tensor '", name, "', belong to no tensor");
    covered = info.data_end;
    previous = name;
  }
  BATON_CHECK(covered == data_bytes, where, ": bytes ", covered, " to ", data_bytes,
              " of the data section, at its end, belong to no tensor");
  has_checksums_ = metadata_.contains(std::string(kHeaderChecksumKey));
  take_checksums(path_, metadata_, names_, entries_);
}

const std::string& SafetensorsFile::metadata(const std::string& key) const {
  const auto it = metadata_.find(key);
  BATON_CHECK(it != metadata_.end(), "safetensors file '", path_, "': __metadata__ has no entry '", key, "'");
  return it->second;
}

const SafetensorsTensorInfo& SafetensorsFile::info(const std::string& name) const {
  const auto it = entries_.find(name);
  BATON_CHECK(it != entries_.end(), "safetensors file '", path_, "' has no tensor '", name, "'");
  return it->second;
}

void SafetensorsFile::read_into(const std::string& name, const Tensor& dst, const Stream& stream) const {
  const SafetensorsTensorInfo& entry = info(name);
  HostStaging staging(entry.data_end - entry.data_begin);
  read_into(name, dst, stream, staging);
}

void SafetensorsFile::read_into(const std::string& name, const Tensor& dst, const Stream& stream,
                                HostStaging& staging) const {
  const SafetensorsTensorInfo& entry = info(name);
  const std::string where = "safetensors file '" + path_ + "', tensor '" + name + "'";
  BATON_CHECK(dst.defined(), where, ": the destination tensor is undefined");
  BATON_CHECK(dst.dtype() == entry.dtype && dst.shape() == entry.shape, where, ": the file holds ",
              safetensors_dtype_name(entry.dtype), " ", entry.shape.str(), ", the destination is ",
              safetensors_dtype_name(dst.dtype()), " ", dst.shape().str());
  uint64_t position = data_start_ + entry.data_begin;
  staging.from_host(dst, stream, [&](void* bytes, size_t count) {
    read_bytes(bytes, count, position);
    position += count;
  });
}

Tensor SafetensorsFile::read(const std::string& name, const Stream& stream) const {
  const SafetensorsTensorInfo& entry = info(name);
  Tensor out = Tensor::empty(entry.shape, entry.dtype, stream);
  read_into(name, out, stream);
  return out;
}

void SafetensorsFile::check_data(const std::string& name, bool non_negative) const {
  const SafetensorsTensorInfo& entry = info(name);
  const size_t element = dtype_size(entry.dtype);
  const bool floating = is_floating(entry.dtype);
  if (!floating && !non_negative && entry.checksum.empty()) return;
  constexpr size_t kPiece = size_t{1} << 20;
  std::vector<char> piece(std::min<size_t>(kPiece, entry.data_end - entry.data_begin));
  Checksum64 checksum;
  for (uint64_t at = entry.data_begin; at < entry.data_end; at += piece.size()) {
    const size_t count = std::min<size_t>(piece.size(), entry.data_end - at);
    read_bytes(piece.data(), count, data_start_ + at);
    checksum.update(piece.data(), count);
    const int64_t bad =
        floating ? first_non_finite(piece.data(), static_cast<int64_t>(count / element), entry.dtype) : -1;
    BATON_CHECK(bad < 0, "safetensors file '", path_, "': tensor '", name, "' holds ",
                non_finite_name(piece.data(), bad, entry.dtype), " at element ",
                static_cast<int64_t>((at - entry.data_begin) / element) + bad,
                " (written by a run that diverged? baton loads only finite values)");
    const int64_t negative =
        non_negative ? first_negative(piece.data(), static_cast<int64_t>(count / element), entry.dtype) : -1;
    BATON_CHECK(negative < 0, "safetensors file '", path_, "': tensor '", name, "' holds a negative value at element ",
                static_cast<int64_t>((at - entry.data_begin) / element) + negative,
                " (a variance or a counter is never below zero: the file is corrupt); nothing was loaded");
  }
  BATON_CHECK(entry.checksum.empty() || checksum.hex() == entry.checksum, "safetensors file '", path_, "': tensor '",
              name, "' does not match its checksum (stored ", entry.checksum, ", computed ", checksum.hex(),
              "): its bytes changed after the file was written (a disk or copy fault?); nothing was loaded");
}

void SafetensorsFile::read_bytes(void* dst, size_t count, uint64_t file_offset) const {
  file_.read(file_offset, dst, count);
}

}  // namespace baton
