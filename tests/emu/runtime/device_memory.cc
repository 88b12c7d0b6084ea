// Arenas, allocations, quarantine and the device-access checks of the emulated GPU (see
// device_memory.h; pinned host memory is pinned_memory.cc).
#include "device_memory.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace baton_emu {
namespace {

constexpr size_t kAlignment = 256;  // what CUDA guarantees, and what the counters round to
constexpr size_t kPage = 4096;      // each allocation owns whole pages of the arena

size_t rounded_bytes(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
size_t span_bytes(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }
constexpr unsigned char kPoison = 0xFF;  // NaN in every float format, -1 in every integer

struct Memory {
  std::vector<std::unique_ptr<Arena>> arenas;
  std::map<const char*, Allocation> live;                       // by begin
  std::map<const char*, std::pair<size_t, std::string>> freed;  // quarantined ranges: bytes, who freed them
  int open_depth = 0;
};

Memory& memory() {
  static Memory m;
  return m;
}

// The pages of an allocation open (read/write) or closed (no access). Only live allocations are
// ever opened, so the cost of opening device memory is that of the live data, and freed memory
// faults even in kernels.
void protect(const char* begin, size_t bytes, bool open) {
  if (!settings().protect_device_memory) return;
  if (mprotect(const_cast<char*>(begin), span_bytes(bytes), open ? PROT_READ | PROT_WRITE : PROT_NONE) != 0) {
    fatal("mprotect of emulated device memory failed");
  }
}

// Hands out [offset, offset + bytes) from the free ranges or above the high-water mark.
bool take_range(Arena& a, size_t bytes, size_t* offset) {
  for (auto it = a.free_ranges.begin(); it != a.free_ranges.end(); ++it) {
    if (it->second < bytes) continue;
    *offset = it->first;
    const size_t rest = it->second - bytes;
    a.free_ranges.erase(it);
    if (rest > 0) a.free_ranges.emplace(*offset + bytes, rest);
    return true;
  }
  if (a.size - a.high_water < bytes) return false;
  *offset = a.high_water;
  a.high_water += bytes;
  return true;
}

void give_back(Arena& a, size_t offset, size_t bytes) {
  auto next = a.free_ranges.lower_bound(offset);
  if (next != a.free_ranges.end() && offset + bytes == next->first) {
    bytes += next->second;
    next = a.free_ranges.erase(next);
  }
  if (next != a.free_ranges.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      previous->second += bytes;
      return;
    }
  }
  a.free_ranges.emplace(offset, bytes);
}

void release_oldest_quarantined(Arena& a) {
  const auto [offset, bytes] = a.quarantine.front();
  a.quarantine.pop_front();
  a.quarantined -= bytes;
  memory().freed.erase(a.base + offset);
  give_back(a, offset, bytes);
}

std::string hex_pointer(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

}  // namespace

std::string Allocation::describe() const {
  return std::string("allocation ") + hex_pointer(begin) + " of " + std::to_string(bytes) + " bytes on device " +
         std::to_string(device) + (from_pool ? " (cudaMallocAsync)" : " (cudaMalloc)") +
         (library_owned ? ", a library's own memory (a cuBLAS workspace) that nothing else may touch" : "");
}

Arena& arena(int device) {
  Memory& m = memory();
  while (static_cast<int>(m.arenas.size()) <= device) {
    auto a = std::make_unique<Arena>();
    a->size = settings().memory_bytes;
    const int protection = settings().protect_device_memory ? PROT_NONE : PROT_READ | PROT_WRITE;
    void* p = mmap(nullptr, a->size, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      fatal("cannot reserve " + std::to_string(a->size) + " bytes of emulated device memory (BATON_EMU_MEMORY)");
    a->base = static_cast<char*>(p);
    m.arenas.push_back(std::move(a));
    install_fault_handler();
  }
  return *m.arenas[static_cast<size_t>(device)];
}

Allocation* allocate(int device, size_t bytes, bool from_pool) {
  Arena& a = arena(device);
  const size_t rounded = rounded_bytes(bytes);
  size_t offset = 0;
  while (!take_range(a, span_bytes(bytes), &offset)) {
    if (a.quarantine.empty()) return nullptr;
    release_oldest_quarantined(a);
  }
  a.used += rounded;
  if (from_pool) {
    a.pool_used += rounded;
    a.pool_high = std::max(a.pool_high, a.pool_used);
    a.pool_reserved = std::max(a.pool_reserved, a.pool_used);
  }
  protect(a.base + offset, bytes, true);
  std::memset(a.base + offset, kPoison, span_bytes(bytes));
  if (memory().open_depth == 0) protect(a.base + offset, bytes, false);
  Allocation allocation;
  allocation.begin = a.base + offset;
  allocation.bytes = bytes;
  allocation.device = device;
  allocation.from_pool = from_pool;
  return &memory().live.emplace(allocation.begin, std::move(allocation)).first->second;
}

void release(Allocation& allocation, const std::string& how) {
  Memory& m = memory();
  Arena& a = arena(allocation.device);
  const size_t rounded = rounded_bytes(allocation.bytes);
  const size_t offset = static_cast<size_t>(allocation.begin - a.base);
  if (settings().protect_device_memory) {
    // Closed for good (any later access faults) and given back to the host's memory.
    protect(allocation.begin, allocation.bytes, false);
    madvise(const_cast<char*>(allocation.begin), span_bytes(allocation.bytes), MADV_DONTNEED);
  } else {
    std::memset(a.base + offset, kPoison, span_bytes(allocation.bytes));
  }
  a.used -= rounded;
  if (allocation.from_pool) a.pool_used -= rounded;
  m.freed[allocation.begin] = {allocation.bytes, allocation.describe() + ", freed by " + how};
  a.quarantine.emplace_back(offset, span_bytes(allocation.bytes));
  a.quarantined += span_bytes(allocation.bytes);
  const size_t limit = std::min<size_t>(size_t{256} << 20, a.size / 8);
  while (a.quarantined > limit) release_oldest_quarantined(a);
  m.live.erase(allocation.begin);
}

void release_pools_to_threshold() {
  for (auto& a : memory().arenas) {
    a->pool_reserved = std::max<size_t>(a->pool_used, std::min<uint64_t>(a->pool_reserved, a->release_threshold));
  }
}

Allocation* allocation_at(const void* pointer) {
  auto it = memory().live.find(static_cast<const char*>(pointer));
  return it == memory().live.end() ? nullptr : &it->second;
}

Allocation* find_allocation(const void* pointer, size_t bytes, std::string* freed_note) {
  Memory& m = memory();
  const auto* p = static_cast<const char*>(pointer);
  auto it = m.live.upper_bound(p);
  if (it != m.live.begin()) {
    --it;
    Allocation& a = it->second;
    if (p >= a.begin && (bytes == 0 ? p <= a.begin + a.bytes : p + bytes <= a.begin + a.bytes)) return &a;
    if (p >= a.begin && p < a.begin + a.bytes && freed_note != nullptr) {
      *freed_note = "it runs past the end of " + a.describe();
      return nullptr;
    }
  }
  if (freed_note != nullptr) {
    auto f = m.freed.upper_bound(p);
    if (f != m.freed.begin()) {
      --f;
      if (p >= f->first && p < f->first + std::max<size_t>(f->second.first, 1)) {
        *freed_note = "it points into " + f->second.second;
        return nullptr;
      }
    }
    *freed_note = "no live allocation contains it (freed earlier, or never allocated)";
  }
  return nullptr;
}

Region region_of(const void* pointer, int* device) {
  if (pointer == nullptr) return Region::null;
  const auto* p = static_cast<const char*>(pointer);
  Memory& m = memory();
  for (size_t d = 0; d < m.arenas.size(); ++d) {
    if (p >= m.arenas[d]->base && p < m.arenas[d]->base + m.arenas[d]->size) {
      if (device != nullptr) *device = static_cast<int>(d);
      return Region::device;
    }
  }
  return is_pinned(pointer) ? Region::pinned_host : Region::host;
}

bool pool_access_granted(int pool_device, int device) {
  return pool_device == device || arena(pool_device).pool_access.count(device) != 0;
}

void check_device_access(StreamState& stream, const void* pointer, size_t bytes, const char* api, const char* what,
                         bool needs_access_right) {
  int device = 0;
  const Region region = region_of(pointer, &device);
  if (region == Region::pinned_host) return;
  if (region == Region::null) {
    if (bytes > 0) fatal(std::string(api) + ": " + what + " is a null pointer");
    return;
  }
  if (region == Region::host) {
    fatal(std::string(api) + ": " + what + " (" + hex_pointer(pointer) +
          ") is host memory that is neither device memory nor pinned host memory");
  }
  std::string note;
  Allocation* a = find_allocation(pointer, bytes, &note);
  if (a == nullptr) {
    fatal(std::string(api) + " on " + stream.name() + ": " + what + " (" + hex_pointer(pointer) + ", " +
          std::to_string(bytes) + " bytes) of device " + std::to_string(device) + " is not usable: " + note);
  }
  if (needs_access_right && a->device != stream.device) {
    const bool allowed =
        a->from_pool ? pool_access_granted(a->device, stream.device) : peer_access_enabled(stream.device, a->device);
    if (!allowed) {
      fatal(std::string(api) + " on " + stream.name() + ": " + what + " is in " + a->describe() + ", which device " +
            std::to_string(stream.device) + " was not granted access to" +
            (a->from_pool ? " (cudaMemPoolSetAccess on the pool of device " + std::to_string(a->device) + ")"
                          : " (cudaDeviceEnablePeerAccess)"));
    }
  }
  if (a->birth_stream != SIZE_MAX && a->birth_stream != stream.id &&
      at(stream.clock, a->birth_stream) < a->birth_time) {
    fatal(std::string(api) + " on " + stream.name() + ": " + what + " is in " + a->describe() +
          ", allocated on stream #" + std::to_string(a->birth_stream) +
          " and used here before that allocation is ordered before this stream (record an event after "
          "cudaMallocAsync and wait for it, or synchronise)");
  }
  a->last_use[stream.id] = at(stream.clock, stream.id);
}

DeviceMemoryOpen::DeviceMemoryOpen() {
  Memory& m = memory();
  if (m.open_depth++ == 0) {
    for (auto& [begin, allocation] : m.live) {
      if (!allocation.library_owned) protect(begin, allocation.bytes, true);
    }
  }
}

DeviceMemoryOpen::~DeviceMemoryOpen() {
  Memory& m = memory();
  if (--m.open_depth == 0) {
    for (auto& [begin, allocation] : m.live) {
      if (!allocation.library_owned) protect(begin, allocation.bytes, false);
    }
  }
}

void set_library_owned(const void* data, size_t bytes, bool owned) {
  RuntimeLock lock(runtime_lock());
  Allocation* a = allocation_at(data);
  if (a == nullptr || a->bytes != bytes || a->library_owned == owned) return;
  a->library_owned = owned;
  // Device work in progress has the other allocations open: follow them.
  if (memory().open_depth > 0) protect(a->begin, a->bytes, !owned);
}

// For the fault handler: the arena holding `address` (-1 when none) and, when the lock can be
// taken, the allocation around it.
int arena_of_address(const void* address, std::string* detail) {
  Memory& m = memory();
  const auto* p = static_cast<const char*>(address);
  for (size_t d = 0; d < m.arenas.size(); ++d) {
    if (p < m.arenas[d]->base || p >= m.arenas[d]->base + m.arenas[d]->size) continue;
    std::unique_lock<std::recursive_mutex> lock(runtime_lock(), std::try_to_lock);
    if (lock.owns_lock()) {
      std::string note;
      if (Allocation* a = find_allocation(address, 1, &note)) {
        *detail = a->describe();
      } else {
        *detail = note;
      }
    }
    return static_cast<int>(d);
  }
  return -1;
}

}  // namespace baton_emu
