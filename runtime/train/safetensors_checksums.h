// The checksums baton stores in the safetensors files it writes: one per tensor over its bytes, and
// one over the header (every metadata entry and every tensor's name, dtype, shape and byte range),
// both in "__metadata__". Files from elsewhere have none and are read without verification.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/train/checksum.h"
#include "runtime/train/safetensors.h"

namespace baton {

// The tensors' digests in data order, 16 hexadecimal digits each, back to back.
inline constexpr std::string_view kTensorChecksumsKey = "checksum.tensors";
// The header's digest (HeaderChecksum).
inline constexpr std::string_view kHeaderChecksumKey = "checksum.header";

// The digest of a header: the metadata entries (but kHeaderChecksumKey) in key order, then each
// tensor in data order.
class HeaderChecksum {
 public:
  explicit HeaderChecksum(const std::map<std::string, std::string>& metadata);
  void add_tensor(const std::string& name, const SafetensorsTensorInfo& info);
  std::string hex() const { return sum_.hex(); }

 private:
  Checksum64 sum_;
};

// Verifies a file's checksums when it has them, storing each tensor's digest in its entry and
// removing both entries from `metadata`; a file with one of them alone, a header that does not
// match its digest, or a malformed list is an error naming the file. `names` are in data order.
void take_checksums(const std::string& path, std::map<std::string, std::string>& metadata,
                    const std::vector<std::string>& names,
                    std::unordered_map<std::string, SafetensorsTensorInfo>& entries);

}  // namespace baton
