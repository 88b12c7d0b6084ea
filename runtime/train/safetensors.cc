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
// bytes so that the data, after the 8-byte length, starts 8-byte aligned.
std::string header_text(const std::string& path, const NamedTensors& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string_view> seen;
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
    offset = end;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    BATON_FAIL("cannot write '", path, "': a tensor name or metadata entry is not valid UTF-8 (", e.what(), ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  BATON_CHECK(text.size() <= kSafetensorsMaxHeaderBytes, "cannot write '", path, "': the header would take ",
              text.size(), " bytes, more than the format's limit of ", kSafetensorsMaxHeaderBytes);
  return text;
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
  const std::string header = header_text(path, tensors, metadata);
  std::array<unsigned char, 8> length{};
  for (size_t i = 0; i < length.size(); ++i) length[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  AtomicFileWriter out(path);
  out.write(length.data(), length.size());
  out.write(header.data(), header.size());
  for (const auto& [name, tensor] : tensors) {
    try {
      const DType dtype = tensor.dtype();
      int64_t written = 0;  // elements
      staging.to_host(tensor, stream, [&](const void* bytes, size_t count) {
        const auto elements = static_cast<int64_t>(count / dtype_size(dtype));
        const int64_t bad = first_non_finite(bytes, elements, dtype);
        BATON_CHECK(bad < 0, "it holds ", non_finite_name(bytes, bad, dtype), " at element ", written + bad,
                    " (baton writes only finite values: did training diverge?)");
        written += elements;
        out.write(bytes, count);
      });
    } catch (Error& e) {
      e.add_context("writing tensor '" + name + "' to '" + path + "'");
      throw;
    }
  }
  out.commit();
}

}  // namespace baton
