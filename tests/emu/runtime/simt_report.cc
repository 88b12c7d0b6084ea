// Reports of the SIMT scheduler: a block's name, its threads grouped by what they wait at, and the
// abort of a block that can never finish.
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <string>

#include "runtime_state.h"
#include "simt_block.h"

namespace baton_emu::simt {
namespace {

// "3, 5-9, 12" for the threads (linear index in the block) that `pick` selects.
template <typename Pick>
std::string thread_list(const Block& b, Pick pick) {
  std::string out;
  for (int t = 0; t < b.count;) {
    if (!pick(*b.threads[t])) {
      ++t;
      continue;
    }
    int end = t;
    while (end + 1 < b.count && pick(*b.threads[end + 1])) ++end;
    if (!out.empty()) out += ", ";
    out += std::to_string(t) + (end > t ? "-" + std::to_string(end) : "");
    t = end + 1;
  }
  return out;
}

}  // namespace

const char* collective_name(WarpCollective kind) {
  constexpr const char* kNames[] = {"a shuffle", "__ballot_sync", "__all_sync", "__any_sync", "__syncwarp"};
  const auto index = static_cast<size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "a warp collective";
}

std::string block_name(const Block& b) {
  return std::string(b.site) + ", block (" + std::to_string(tls.block_idx.x) + "," + std::to_string(tls.block_idx.y) +
         "," + std::to_string(tls.block_idx.z) + ")";
}

std::string hex(unsigned mask) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", mask);
  return text;
}

[[noreturn]] void report_stuck(const Block& b, const std::string& why) {
  std::string message = block_name(b) + ": " + why + ". Threads (linear index in the block):";
  const auto add = [&](const char* label, auto pick) {
    const std::string list = thread_list(b, pick);
    if (!list.empty()) message += std::string("\n  ") + label + ": " + list;
  };
  add("at __syncthreads", [](const CudaThread& t) { return t.state == FiberState::at_block_barrier; });
  add("exited", [](const CudaThread& t) { return t.state == FiberState::done; });
  for (int w = 0; w * 32 < b.count; ++w) {
    for (int l = 0; l < 32 && w * 32 + l < b.count; ++l) {
      const CudaThread& t = *b.threads[w * 32 + l];
      if (t.state != FiberState::at_warp_collective) continue;
      message += "\n  thread " + std::to_string(t.linear) + " (warp " + std::to_string(w) + ", lane " +
                 std::to_string(l) + ") at " + t.what + " with mask " + hex(t.mask);
    }
  }
  fatal(message);
}

}  // namespace baton_emu::simt
