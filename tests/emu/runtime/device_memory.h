// Device memory of the emulated GPU: one reserved arena per device (BATON_EMU_MEMORY bytes,
// inaccessible to host code except while device work runs), allocations inside it, a quarantine
// that keeps freed memory poisoned and unused for a while, and pinned host memory.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>

#include "runtime_state.h"

namespace baton_emu {

struct Arena {
  char* base = nullptr;
  size_t size = 0;
  size_t high_water = 0;                             // bytes from base ever handed out
  std::map<size_t, size_t> free_ranges;              // offset -> bytes, beyond high_water not included
  std::deque<std::pair<size_t, size_t>> quarantine;  // freed ranges not yet reusable, oldest first
  size_t quarantined = 0;
  size_t used = 0;       // bytes of live allocations (rounded)
  size_t pool_used = 0;  // of which from the pool (cudaMallocAsync)
  size_t pool_high = 0;
  size_t pool_reserved = 0;  // what the pool holds: its live allocations and freed memory it keeps
  uint64_t release_threshold = 0;
  std::set<int> pool_access;  // other devices granted access to this device's pool
};

// The arena of `device` (created on first use).
Arena& arena(int device);
// Allocates `bytes` (rounded up to 256) on `device`, poisoned; nullptr when the arena is full.
Allocation* allocate(int device, size_t bytes, bool from_pool);
// Frees a live allocation: poisons it and puts it in quarantine. `how` says who freed it (messages).
void release(Allocation& allocation, const std::string& how);
// The live allocation starting exactly at `pointer`, or nullptr.
Allocation* allocation_at(const void* pointer);

bool is_pinned(const void* pointer);
void* allocate_pinned(size_t bytes);
bool free_pinned(void* pointer);

void install_fault_handler();

}  // namespace baton_emu
