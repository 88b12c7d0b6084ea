// The reduction every host backend runs: element-wise sums of several buffers in a fixed order
// (source 0 + source 1 + ...), so that a result does not depend on timing or on the rank computing it.
#pragma once

#include <cstdint>
#include <span>

#include "parallel/comm/communicator.h"
#include "runtime/core/dtype.h"

namespace baton::comm {

// For each of `count` elements: acc = sources[0][i]; acc += sources[k][i] for k = 1, 2, ... in
// order; with `mean` acc /= divisor once; then every dests[d][i] = acc. The accumulator is f32 for
// f32, f16 and bf16 (16-bit results are rounded once, to nearest even), f64 for f64, and 64-bit
// two's complement for i32 and i64 (a result that does not fit wraps around, as in MPI and NCCL).
// Each block of elements is read from every source before it is written, so a destination may be
// one of the sources. u8 and integer means are refused (check_reducible) before this is called.
void reduce_in_order(DType dtype, ReduceOp op, int divisor, std::span<const void* const> sources,
                     std::span<void* const> dests, int64_t count);

}  // namespace baton::comm
