// Pinned host memory of the emulated GPU: mmap'd pages outside the device arenas, remembered so
// that copies and kernels can tell pinned host memory from plain host memory.
#include <sys/mman.h>

#include <algorithm>
#include <map>

#include "device_memory.h"

namespace baton_emu {
namespace {

// begin -> bytes of each live pinned allocation (under the runtime lock, as all the emulator's state).
std::map<const char*, size_t>& pinned() {
  static std::map<const char*, size_t> ranges;
  return ranges;
}

}  // namespace

bool is_pinned(const void* pointer) {
  const std::map<const char*, size_t>& m = pinned();
  const auto* p = static_cast<const char*>(pointer);
  auto it = m.upper_bound(p);
  if (it == m.begin()) return false;
  --it;
  return p < it->first + it->second;
}

void* allocate_pinned(size_t bytes) {
  void* p = mmap(nullptr, std::max<size_t>(bytes, 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  pinned().emplace(static_cast<const char*>(p), std::max<size_t>(bytes, 1));
  return p;
}

bool free_pinned(void* pointer) {
  std::map<const char*, size_t>& m = pinned();
  auto it = m.find(static_cast<const char*>(pointer));
  if (it == m.end()) return false;
  munmap(pointer, it->second);
  m.erase(it);
  return true;
}

}  // namespace baton_emu
