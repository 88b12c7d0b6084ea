// HeaderChecksum and the verification of a header's checksums when a safetensors file is opened.
#include "runtime/train/safetensors_checksums.h"

#include "runtime/core/error.h"

namespace baton {
namespace {

void add_field(Checksum64& sum, std::string_view text) {
  sum.update(text);
  sum.update(std::string_view("\0", 1));
}

}  // namespace

HeaderChecksum::HeaderChecksum(const std::map<std::string, std::string>& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key == kHeaderChecksumKey) continue;
    add_field(sum_, key);
    add_field(sum_, value);
  }
}

void HeaderChecksum::add_tensor(const std::string& name, const SafetensorsTensorInfo& info) {
  add_field(sum_, name);
  add_field(sum_, safetensors_dtype_name(info.dtype));
  add_field(sum_, info.shape.str());
  add_field(sum_, std::to_string(info.data_begin) + "-" + std::to_string(info.data_end));
}

void take_checksums(const std::string& path, std::map<std::string, std::string>& metadata,
                    const std::vector<std::string>& names,
                    std::unordered_map<std::string, SafetensorsTensorInfo>& entries) {
  const std::string where = "safetensors file '" + path + "'";
  const auto tensors = metadata.find(std::string(kTensorChecksumsKey));
  const auto header = metadata.find(std::string(kHeaderChecksumKey));
  if (tensors == metadata.end() && header == metadata.end()) return;
  BATON_CHECK(tensors != metadata.end() && header != metadata.end(), where, ": __metadata__ has '",
              tensors == metadata.end() ? kHeaderChecksumKey : kTensorChecksumsKey, "' without '",
              tensors == metadata.end() ? kTensorChecksumsKey : kHeaderChecksumKey,
              "' (the header was edited after it was written)");
  HeaderChecksum sum(metadata);
  for (const std::string& name : names) sum.add_tensor(name, entries.at(name));
  BATON_CHECK(sum.hex() == header->second, where, ": the header does not match its checksum (stored ", header->second,
              ", computed ", sum.hex(), "): its metadata or tensor list was changed after it was written");
  const std::string& digests = tensors->second;
  BATON_CHECK(digests.size() == 16 * names.size(), where, ": metadata '", kTensorChecksumsKey, "' holds ",
              digests.size(), " characters, expected 16 per tensor (", 16 * names.size(), ")");
  for (size_t i = 0; i < names.size(); ++i) entries.at(names[i]).checksum = digests.substr(16 * i, 16);
  metadata.erase(tensors);
  metadata.erase(header);
}

}  // namespace baton
