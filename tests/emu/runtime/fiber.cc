// Fiber stacks and the x86-64 System V context switch of the SIMT scheduler.
#include "fiber.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

#include "baton_emu/runtime_api.h"

#if !defined(__x86_64__)
#error "the emulated GPU's fibers are written for x86-64"
#endif

namespace baton_emu {
namespace {

constexpr size_t kGuardBytes = 4096;

// Guard pages of live stacks, for the fault handler's message.
std::mutex& guards_lock() {
  static std::mutex lock;
  return lock;
}
std::set<const char*>& guards() {
  static std::set<const char*> all;
  return all;
}

extern "C" void baton_emu_switch(void** from, void* to);
asm(R"(
  .text
  .globl baton_emu_switch
  .type baton_emu_switch,@function
baton_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size baton_emu_switch,.-baton_emu_switch
)");

// A new fiber's first switch returns here with r12 = entry, r13 = argument.
extern "C" void baton_emu_fiber_start();
asm(R"(
  .text
  .globl baton_emu_fiber_start
  .type baton_emu_fiber_start,@function
baton_emu_fiber_start:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size baton_emu_fiber_start,.-baton_emu_fiber_start
)");

}  // namespace

FiberStack::FiberStack() {
  void* p = mmap(nullptr, kFiberStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) fatal("cannot map a fiber stack for a CUDA thread");
  base_ = static_cast<char*>(p);
  if (mprotect(base_, kGuardBytes, PROT_NONE) != 0) fatal("cannot protect the guard page of a fiber stack");
  std::lock_guard<std::mutex> lock(guards_lock());
  guards().insert(base_);
}

FiberStack::~FiberStack() {
  {
    std::lock_guard<std::mutex> lock(guards_lock());
    guards().erase(base_);
  }
  munmap(base_, kFiberStackBytes);
}

bool FiberStack::guard_contains(const void* address) const {
  const auto* a = static_cast<const char*>(address);
  return a >= base_ && a < base_ + kGuardBytes;
}

bool in_fiber_guard_page(const void* address) {
  std::unique_lock<std::mutex> lock(guards_lock(), std::try_to_lock);
  if (!lock.owns_lock()) return false;
  const auto* a = static_cast<const char*>(address);
  auto it = guards().upper_bound(a);
  if (it == guards().begin()) return false;
  --it;
  return a < *it + kGuardBytes;
}

void prepare_fiber(FiberContext& context, const FiberStack& stack, void (*entry)(void*), void* argument) {
  // The frame baton_emu_switch pops: r15, r14, r13, r12, rbx, rbp, return address. (The floating-point
  // control state is not switched: kernels never change it, and loading it is slow.)
  auto* top = reinterpret_cast<uint64_t*>(stack.base() + kFiberStackBytes);
  uint64_t* sp = top - 2;  // after the switch's `ret` rsp = top - 16, 16-byte aligned before the call
  *--sp = reinterpret_cast<uint64_t>(&baton_emu_fiber_start);
  *--sp = 0;                                     // rbp
  *--sp = 0;                                     // rbx
  *--sp = reinterpret_cast<uint64_t>(entry);     // r12
  *--sp = reinterpret_cast<uint64_t>(argument);  // r13
  *--sp = 0;                                     // r14
  *--sp = 0;                                     // r15
  context.stack_pointer = sp;
}

void switch_fiber(FiberContext& from, const FiberContext& to) {
  baton_emu_switch(&from.stack_pointer, to.stack_pointer);
}

}  // namespace baton_emu
