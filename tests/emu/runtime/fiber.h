// Fibers for the SIMT scheduler: a stack per CUDA thread (guard page below it) and an x86-64
// context switch that saves the callee-saved general registers.
#pragma once

#include <cstddef>

namespace baton_emu {

inline constexpr size_t kFiberStackBytes = size_t{256} << 10;

struct FiberContext {
  void* stack_pointer = nullptr;
};

// A stack of kFiberStackBytes (reserved, not committed) with an inaccessible guard page at its low
// end; unmapped on destruction.
class FiberStack {
 public:
  FiberStack();
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;
  char* base() const { return base_; }
  bool guard_contains(const void* address) const;

 private:
  char* base_;
};

// Prepares `context` to start `entry(argument)` on `stack` at its next switch_to.
void prepare_fiber(FiberContext& context, const FiberStack& stack, void (*entry)(void*), void* argument);
// Saves the running context into `from` and resumes `to`.
void switch_fiber(FiberContext& from, const FiberContext& to);

// True when `address` is in the guard page of a fiber stack of this process (for the fault handler).
bool in_fiber_guard_page(const void* address);

}  // namespace baton_emu
