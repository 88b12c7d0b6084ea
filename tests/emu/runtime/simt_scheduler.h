// The SIMT scheduler: runs a grid's blocks one after another on the calling OS thread, each
// block's CUDA threads as fibers, in the order BATON_EMU_SCHEDULE asks for.
#pragma once

#include <cstddef>

#include "baton_emu/launch.h"

namespace baton_emu {

// Runs every block of the grid. `site` names the launch for messages ("kernel at file:line").
void run_grid(const char* site, const LaunchConfig& config, ThreadBody body);
// True while the calling OS thread runs a kernel.
bool inside_kernel();
// True when `address` lies in a guard page of dynamic shared memory (for the fault handler).
bool in_shared_guard_page(const void* address);

// The per-block shared memory limit without opt-in (cudaFuncSetAttribute is not emulated).
inline constexpr size_t kSharedBytesPerBlock = size_t{48} << 10;

}  // namespace baton_emu
