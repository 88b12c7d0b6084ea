// The SIMT scheduler's block: its CUDA threads (fibers) and what each waits at, shared by the
// scheduler (simt_scheduler.cc) and its reports of a block that can never finish (simt_report.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baton_emu/launch.h"
#include "baton_emu/simt.h"
#include "fiber.h"
#include "shared_memory.h"

namespace baton_emu::simt {

enum class FiberState { ready, at_block_barrier, at_warp_collective, done };

inline constexpr int kMaxThreads = 1024;

struct CudaThread {
  FiberStack stack;
  FiberContext context;
  FiberState state = FiberState::ready;
  uint3 index{};
  int linear = 0;
  WarpCollective kind = WarpCollective::shuffle;
  const char* what = "";
  unsigned mask = 0;
  uint64_t published = 0;
  unsigned received_mask = 0;  // the lanes of the collective this thread was last released from
};

struct Block {
  std::vector<std::unique_ptr<CudaThread>> threads;
  int count = 0;
  FiberContext scheduler;
  CudaThread* current = nullptr;
  ThreadBody body{};
  const char* site = "";
  StaticShared statics;
  DynamicShared dynamic;
  std::mt19937_64 random;
  uint64_t warp_values[kMaxThreads / 32][32];  // what the lanes published at their last released collective
  std::vector<int> order;                      // the order of a round (reshuffled per round when random)
};

// The name of a warp collective in messages ("__ballot_sync", "a shuffle").
const char* collective_name(WarpCollective kind);
// "kernel at file:line, block (x,y,z)" of the block running on this OS thread.
std::string block_name(const Block& b);
// A lane mask as 0x%08x.
std::string hex(unsigned mask);
// Aborts naming the block, `why`, and what each of its threads waits at.
[[noreturn]] void report_stuck(const Block& b, const std::string& why);

}  // namespace baton_emu::simt
