// safetensors: dtype names and the writer (header JSON padded to 8 bytes, then the data, atomically).
#include "runtime/train/safetensors.h"

#include <algorithm>
#include <array>
#include <bit>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/core/atomic_file.h"
#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"
#include "runtime/train/finite_values.h"
#include "runtime/train/safetensors_checksums.h"

namespace baton {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; tensors are written as they are in memory");

std::string_view safetensors_dtype_name(DType dtype) {
  constexpr std::string_view kNames[] = {"F32", "F64", "F16", "BF16", "I32", "I64", "U8"};
  const std::string_view name = enum_lookup<DType::u8>(dtype, kNames, "");
  BATON_CHECK(!name.empty(), "unknown dtype ", static_cast<int>(dtype));
  return name;
}

namespace {

// The header JSON (metadata first, tensors in data order), padded with spaces to a multiple of 8
// bytes so that the data, after the 8-byte length, starts 8-byte aligned. The checksums are zeros,
// filled in once the data is written: `tensor_checksums_at` and `header_checksum_at` are their
// offsets in `text`, and `tensors` describes each tensor as the header does.
struct HeaderText {
  std::string text;
  size_t tensor_checksums_at = 0;
  size_t header_checksum_at = 0;
  std::vector<SafetensorsTensorInfo> tensors;
};

// The offset of the value of metadata entry `key` in the header text (the only place where the key
// stands quoted before a colon and a quote: quotes inside strings are escaped).
size_t value_offset(const std::string& text, std::string_view key) {
  std::string pattern = "\"";
  pattern.append(key).append("\":\"");
  return text.find(pattern) + pattern.size();
}

HeaderText header_text(const std::string& path, const NamedTensors& tensors,
                       std::map<std::string, std::string> metadata) {
  for (std::string_view key : {kTensorChecksumsKey, kHeaderChecksumKey}) {
    BATON_CHECK(!metadata.contains(std::string(key)), "cannot write '", path, "': metadata '", key,
                "' is reserved for the checksums baton computes");
    metadata[std::string(key)] = std::string(key == kHeaderChecksumKey ? 16 : 16 * tensors.size(), '0');
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = metadata;
  std::set<std::string_view> seen;
  HeaderText out;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    BATON_CHECK(!name.empty() && name != "__metadata__", "cannot write '", path, "': '", name,
                "' is not a valid tensor name (names must be non-empty and not \"__metadata__\")");
    BATON_CHECK(seen.insert(name).second, "cannot write '", path, "': tensor name '", name, "' appears twice");
    BATON_CHECK(tensor.defined(), "cannot write '", path, "': tensor '", name, "' is undefined");
    const uint64_t end = offset + tensor.nbytes();
    header[name] = {{"dtype", std::string(safetensors_dtype_name(tensor.dtype()))},
                    {"shape", tensor.shape().dims()},
                    {"data_offsets", nlohmann::ordered_json::array({offset, end})}};
    out.tensors.push_back({tensor.dtype(), tensor.shape(), offset, end, ""});
    offset = end;
  }
  try {
    out.text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    BATON_FAIL("cannot write '", path, "': a tensor name or metadata entry is not valid UTF-8 (", e.what(), ")");
  }
  out.text.append((8 - out.text.size() % 8) % 8, ' ');
  BATON_CHECK(out.text.size() <= kSafetensorsMaxHeaderBytes, "cannot write '", path, "': the header would take ",
              out.text.size(), " bytes, more than the format's limit of ", kSafetensorsMaxHeaderBytes);
  out.tensor_checksums_at = value_offset(out.text, kTensorChecksumsKey);
  out.header_checksum_at = value_offset(out.text, kHeaderChecksumKey);
  return out;
}

// Fills in the checksums of a written file's header (8 bytes into the file).
void write_checksums(AtomicFileWriter& out, const HeaderText& header, const NamedTensors& tensors,
                     std::map<std::string, std::string> metadata, const std::string& tensor_checksums) {
  metadata[std::string(kTensorChecksumsKey)] = tensor_checksums;
  HeaderChecksum sum(metadata);
  for (size_t i = 0; i < tensors.size(); ++i) sum.add_tensor(tensors[i].first, header.tensors[i]);
  const std::string header_checksum = sum.hex();
  out.overwrite(8 + header.tensor_checksums_at, tensor_checksums.data(), tensor_checksums.size());
  out.overwrite(8 + header.header_checksum_at, header_checksum.data(), header_checksum.size());
}

}  // namespace

size_t largest_tensor_bytes(const NamedTensors& tensors) {
  size_t largest = 0;
  for (const auto& named : tensors) largest = std::max(largest, named.second.defined() ? named.second.nbytes() : 0);
  return largest;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata, const Stream& stream) {
  HostStaging staging(largest_tensor_bytes(tensors));
  save_safetensors(path, tensors, metadata, stream, staging);
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata, const Stream& stream, HostStaging& staging) {
  const HeaderText header = header_text(path, tensors, metadata);
  std::array<unsigned char, 8> length{};
  for (size_t i = 0; i < length.size(); ++i) length[i] = static_cast<unsigned char>(header.text.size() >> (8 * i));
  AtomicFileWriter out(path);
  out.write(length.data(), length.size());
  out.write(header.text.data(), header.text.size());
  std::string tensor_checksums;
  for (const auto& [name, tensor] : tensors) {
    try {
      const DType dtype = tensor.dtype();
      int64_t written = 0;  // elements
      Checksum64 checksum;
      staging.to_host(tensor, stream, [&](const void* bytes, size_t count) {
        const auto elements = static_cast<int64_t>(count / dtype_size(dtype));
        const int64_t bad = first_non_finite(bytes, elements, dtype);
        BATON_CHECK(bad < 0, "it holds ", non_finite_name(bytes, bad, dtype), " at element ", written + bad,
                    " (baton writes only finite values: did training diverge?)");
        written += elements;
        checksum.update(bytes, count);
        out.write(bytes, count);
      });
      tensor_checksums += checksum.hex();
    } catch (Error& e) {
      e.add_context("writing tensor '" + name + "' to '" + path + "'");
      throw;
    }
  }
  write_checksums(out, header, tensors, metadata, tensor_checksums);
  out.commit();
}

}  // namespace baton
