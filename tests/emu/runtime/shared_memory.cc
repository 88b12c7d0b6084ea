// __shared__ storage of the emulated GPU: static variables poisoned per block on first use, and
// dynamic shared memory placed against a guard page so an access past its end faults.
#include "shared_memory.h"

#include <sys/mman.h>

#include <cstring>
#include <string>

#include "baton_emu/runtime_api.h"

namespace baton_emu {
namespace {
constexpr size_t kPage = 4096;
}  // namespace

DynamicShared::~DynamicShared() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

void DynamicShared::reserve(size_t bytes) {
  const size_t rounded = (bytes + 15) / 16 * 16;
  const size_t needed = (rounded + kPage - 1) / kPage * kPage + kPage;
  if (needed > mapping_bytes_) {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
    void* p = mmap(nullptr, needed, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fatal("cannot map dynamic shared memory");
    mapping_ = static_cast<char*>(p);
    mapping_bytes_ = needed;
    if (mprotect(mapping_ + needed - kPage, kPage, PROT_NONE) != 0) fatal("cannot protect a shared memory guard page");
  }
  bytes_ = bytes;
  data_ = mapping_ + mapping_bytes_ - kPage - rounded;
}

void DynamicShared::poison() {
  if (bytes_ > 0) std::memset(data_, 0xFF, (bytes_ + 15) / 16 * 16);
}

bool DynamicShared::guard_contains(const void* address) const {
  const auto* a = static_cast<const char*>(address);
  return mapping_ != nullptr && a >= mapping_ + mapping_bytes_ - kPage && a < mapping_ + mapping_bytes_;
}

void StaticShared::begin_block() { seen_.clear(); }

void StaticShared::enter(void* storage, size_t bytes, const char* name, size_t dynamic_bytes, const char* site) {
  for (const auto& [address, size] : seen_) {
    if (address == storage) return;
  }
  std::memset(storage, 0xFF, bytes);
  seen_.emplace_back(storage, bytes);
  size_t total = dynamic_bytes;
  for (const auto& entry : seen_) total += entry.second;
  if (total > kSharedBytesPerBlock) {
    fatal(std::string(site) + ": __shared__ " + name + " brings the block's shared memory to " + std::to_string(total) +
          " bytes (static and dynamic), above the " + std::to_string(kSharedBytesPerBlock) + " bytes per block");
  }
}

}  // namespace baton_emu
