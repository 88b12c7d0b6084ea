// __shared__ storage of one block of the emulated GPU (see simt_scheduler.cc).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "simt_scheduler.h"

namespace baton_emu {

// Dynamic shared memory (`extern __shared__`): the launch's bytes end against a guard page.
class DynamicShared {
 public:
  DynamicShared() = default;
  ~DynamicShared();
  DynamicShared(const DynamicShared&) = delete;
  DynamicShared& operator=(const DynamicShared&) = delete;
  void reserve(size_t bytes);
  void poison();
  char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool guard_contains(const void* address) const;

 private:
  char* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

// The static __shared__ variables a block has reached: each is poisoned when the first thread of the
// block reaches its declaration, and their sizes count against the per-block limit.
class StaticShared {
 public:
  void begin_block();
  void enter(void* storage, size_t bytes, const char* name, size_t dynamic_bytes, const char* site);

 private:
  std::vector<std::pair<void*, size_t>> seen_;
};

}  // namespace baton_emu
