// The SIMT machinery behind the emulated kernel language: the running CUDA thread's built-in
// variables, block barriers, warp collectives and __shared__ storage. Every CUDA thread of a block
// is a fiber on the launching OS thread; a fiber runs until it exits or reaches a barrier, and the
// scheduler (tests/emu/runtime/simt_scheduler.cc) releases a barrier when every thread it waits for
// has arrived, or aborts naming the kernel, block and threads when that can never happen.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton_emu/vector_types.h"

namespace baton_emu {

// The built-in variables of the CUDA thread running on this OS thread (set before each resume).
struct ThreadState {
  uint3 thread_idx{};
  uint3 block_idx{};
  dim3 block_dim{};
  dim3 grid_dim{};
};
// Initial-exec TLS: baton_emu is linked, not loaded later, and threadIdx is read very often.
extern thread_local ThreadState tls __attribute__((tls_model("initial-exec")));

// Waits at __syncthreads() for every thread of the block.
void sync_block();

enum class WarpCollective { shuffle, ballot, vote_all, vote_any, syncwarp };

// What a lane sees after a warp collective: the values the lanes of `mask` published (value[lane],
// valid until the lane's next collective).
struct WarpValues {
  const uint64_t* value;
  unsigned mask;  // the lanes that took part
};

// Publishes `value` for this lane, waits until every lane of `mask` reached a collective of the same
// kind and mask, and returns the values they published. Aborts when this lane is not in `mask`.
WarpValues warp_collective(WarpCollective kind, unsigned mask, uint64_t value, const char* what);

// This thread's lane (0..31) in its warp.
int lane_id();

// Registers a static __shared__ variable for the running block: the first thread to reach its
// declaration in a block fills it with poison (0xFF bytes: NaN for floats), so a read of a value
// no thread of this block wrote is visible; the block's static shared bytes are checked against the
// per-block limit. Returns `storage`.
void* shared_static(void* storage, size_t bytes, const char* name);
// The running block's dynamic shared memory (`extern __shared__ T name[]`): as many bytes as the
// launch asked for, poisoned for each block; aborts when the launch asked for none.
void* shared_dynamic(const char* name);

}  // namespace baton_emu

#define threadIdx (::baton_emu::tls.thread_idx)
#define blockIdx (::baton_emu::tls.block_idx)
#define blockDim (::baton_emu::tls.block_dim)
#define gridDim (::baton_emu::tls.grid_dim)
