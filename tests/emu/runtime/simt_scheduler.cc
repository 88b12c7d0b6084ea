// The SIMT scheduler of the emulated GPU. A block's CUDA threads are fibers; each round resumes
// every ready fiber (in the schedule's order) until it exits or reaches a barrier. Then a
// __syncthreads is released when every thread of the block waits at it, a warp collective when
// every lane of its mask waits at one with the same mask; when nothing can be released the block
// can never finish, and the scheduler aborts naming the kernel, the block and what each thread waits
// for. A thread that exits while others wait at __syncthreads is reported the same way.
#include "simt_scheduler.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "baton_emu/simt.h"
#include "fiber.h"
#include "runtime_state.h"
#include "shared_memory.h"
#include "simt_block.h"

namespace baton_emu {

thread_local ThreadState tls __attribute__((tls_model("initial-exec")));

namespace {

using simt::Block;
using simt::block_name;
using simt::collective_name;
using simt::CudaThread;
using simt::FiberState;
using simt::hex;
using simt::kMaxThreads;
using simt::report_stuck;

thread_local Block* running __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local std::unique_ptr<Block> block_storage;

void thread_main(void*) {
  Block& b = *running;
  b.body.run(b.body.context);
  b.current->state = FiberState::done;
  switch_fiber(b.current->context, b.scheduler);
  fatal("an exited CUDA thread was resumed");
}

// The order of the next round: forward or reverse, or a new permutation each round when random.
const std::vector<int>& round_order(Block& b) {
  if (static_cast<int>(b.order.size()) != b.count) {
    b.order.resize(static_cast<size_t>(b.count));
    std::iota(b.order.begin(), b.order.end(), 0);
    if (settings().schedule == Schedule::reverse) std::reverse(b.order.begin(), b.order.end());
  }
  if (settings().schedule == Schedule::random) std::shuffle(b.order.begin(), b.order.end(), b.random);
  return b.order;
}

// Releases every warp group whose mask's lanes all wait with that mask; aborts on a disagreement
// that can never resolve (different collectives for one mask, a mask naming a lane the block lacks).
bool release_warp_groups(Block& b) {
  bool released = false;
  for (int w = 0; w * 32 < b.count; ++w) {
    const int base = w * 32;
    const int lanes = std::min(32, b.count - base);
    for (int l = 0; l < lanes; ++l) {
      const CudaThread& first = *b.threads[base + l];
      if (first.state != FiberState::at_warp_collective) continue;
      const unsigned mask = first.mask;
      if (lanes < 32 && (mask >> lanes) != 0) {
        report_stuck(b, std::string("warp ") + std::to_string(w) + " has " + std::to_string(lanes) +
                            " lanes but thread " + std::to_string(first.linear) + " calls " + first.what +
                            " with mask " + hex(mask) + ", naming lanes that do not exist");
      }
      bool all_waiting = true;
      for (int m = 0; m < lanes; ++m) {
        if ((mask >> m & 1u) == 0) continue;
        const CudaThread& t = *b.threads[base + m];
        if (t.state != FiberState::at_warp_collective || t.mask != mask) all_waiting = false;
        if (t.state == FiberState::at_warp_collective && t.mask == mask && t.kind != first.kind) {
          report_stuck(b, std::string("lanes of warp ") + std::to_string(w) + " with mask " + hex(mask) +
                              " reach different warp collectives (" + collective_name(first.kind) + " and " +
                              collective_name(t.kind) + ")");
        }
      }
      if (!all_waiting) continue;
      // Disjoint groups of one warp write disjoint lanes; a lane reads its group's values as soon as it resumes.
      for (int m = 0; m < lanes; ++m) {
        if ((mask >> m & 1u) == 0) continue;
        CudaThread& t = *b.threads[base + m];
        b.warp_values[w][m] = t.published;
        t.received_mask = mask;
        t.state = FiberState::ready;
      }
      released = true;
    }
  }
  return released;
}

void run_block(Block& b) {
  for (int t = 0; t < b.count; ++t) {
    CudaThread& thread = *b.threads[t];
    prepare_fiber(thread.context, thread.stack, &thread_main, nullptr);
    thread.state = FiberState::ready;
  }
  b.statics.begin_block();
  b.dynamic.poison();
  for (;;) {
    for (int t : round_order(b)) {
      CudaThread& thread = *b.threads[t];
      if (thread.state != FiberState::ready) continue;
      b.current = &thread;
      tls.thread_idx = thread.index;
      switch_fiber(b.scheduler, thread.context);
      b.current = nullptr;
    }
    int live = 0, at_barrier = 0, exited = 0;
    for (int t = 0; t < b.count; ++t) {
      const FiberState s = b.threads[t]->state;
      live += s != FiberState::done;
      exited += s == FiberState::done;
      at_barrier += s == FiberState::at_block_barrier;
    }
    if (live == 0) return;
    if (at_barrier > 0 && exited > 0)
      report_stuck(b, "__syncthreads is reached by some threads of the block while others exited");
    if (at_barrier == live) {
      for (int t = 0; t < b.count; ++t) b.threads[t]->state = FiberState::ready;
      continue;
    }
    if (!release_warp_groups(b)) {
      report_stuck(b,
                   "a barrier can never be released: the threads of the block wait at different barriers "
                   "(divergent __syncthreads, or a warp collective whose mask names lanes that do not reach it)");
    }
  }
}

Block& block_for(const char* site, const LaunchConfig& config, ThreadBody body) {
  if (!block_storage) block_storage = std::make_unique<Block>();
  Block& b = *block_storage;
  const int count = static_cast<int>(config.block.x * config.block.y * config.block.z);
  while (static_cast<int>(b.threads.size()) < count) b.threads.push_back(std::make_unique<CudaThread>());
  b.count = count;
  b.body = body;
  b.site = site;
  for (int t = 0; t < count; ++t) {
    CudaThread& thread = *b.threads[t];
    thread.linear = t;
    thread.index =
        uint3{t % config.block.x, (t / config.block.x) % config.block.y, t / (config.block.x * config.block.y)};
  }
  b.dynamic.reserve(config.shared_bytes);
  return b;
}

CudaThread& current_thread(const char* what) {
  if (running == nullptr || running->current == nullptr) fatal(std::string(what) + " called outside a kernel");
  return *running->current;
}

}  // namespace

bool inside_kernel() { return running != nullptr; }

bool in_shared_guard_page(const void* address) {
  return block_storage && block_storage->dynamic.guard_contains(address);
}

void run_grid(const char* site, const LaunchConfig& config, ThreadBody body) {
  if (running != nullptr) fatal(std::string(site) + ": a kernel launched from inside a kernel");
  if (config.block.x * config.block.y * config.block.z > kMaxThreads) fatal("run_grid: unchecked block size");
  Block& b = block_for(site, config, body);
  static std::atomic<uint64_t> launches{0};
  b.random.seed(settings().seed + launches.fetch_add(1));
  running = &b;
  tls.block_dim = config.block;
  tls.grid_dim = config.grid;
  const uint64_t blocks = uint64_t{config.grid.x} * config.grid.y * config.grid.z;
  std::vector<uint64_t> order;
  if (settings().schedule == Schedule::random && blocks <= (uint64_t{1} << 22)) {
    order.resize(blocks);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), b.random);
  }
  for (uint64_t i = 0; i < blocks; ++i) {
    uint64_t linear = i;
    if (!order.empty())
      linear = order[i];
    else if (settings().schedule != Schedule::forward)
      linear = blocks - 1 - i;
    tls.block_idx = uint3{static_cast<unsigned>(linear % config.grid.x),
                          static_cast<unsigned>((linear / config.grid.x) % config.grid.y),
                          static_cast<unsigned>(linear / (uint64_t{config.grid.x} * config.grid.y))};
    run_block(b);
  }
  running = nullptr;
}

void sync_block() {
  CudaThread& me = current_thread("__syncthreads");
  me.state = FiberState::at_block_barrier;
  switch_fiber(me.context, running->scheduler);
}

WarpValues warp_collective(WarpCollective kind, unsigned mask, uint64_t value, const char* what) {
  CudaThread& me = current_thread(what);
  const int lane = me.linear % 32;
  if ((mask >> lane & 1u) == 0) {
    fatal(block_name(*running) + ": thread " + std::to_string(me.linear) + " (lane " + std::to_string(lane) +
          ") calls " + what + " with mask " + hex(mask) + ", which does not include its own lane");
  }
  me.kind = kind;
  me.what = what;
  me.mask = mask;
  me.published = value;
  me.state = FiberState::at_warp_collective;
  switch_fiber(me.context, running->scheduler);
  return WarpValues{running->warp_values[me.linear / 32], me.received_mask};
}

int lane_id() { return current_thread("a warp intrinsic").linear % 32; }

void* shared_static(void* storage, size_t bytes, const char* name) {
  current_thread("a __shared__ declaration");
  running->statics.enter(storage, bytes, name, running->dynamic.bytes(), running->site);
  return storage;
}

void* shared_dynamic(const char* name) {
  current_thread("an extern __shared__ declaration");
  (void)name;
  return running->dynamic.data();
}

namespace detail {
void check_width(int width, const char* what) {
  current_thread(what);
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
    fatal(block_name(*running) + ": " + what + " with width " + std::to_string(width) +
          " (a power of two from 1 to 32 is required)");
  }
}
}  // namespace detail

}  // namespace baton_emu
