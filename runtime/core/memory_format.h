// MemoryFormat: the order in which a rank-4 tensor's [N, C, H, W] elements lie in memory.
#pragma once

#include "runtime/core/shape.h"

namespace baton {

// contiguous: row-major in the shape's order (N, C, H, W), as every tensor but the CPU engine's
// channels-last activations. channels_last: N, H, W, C, the channel varying fastest (oneDNN's and
// PyTorch's NHWC). N is outermost in both, so views along dimension 0 (micro-batches) are the same
// bytes either way. The shape is always the logical [N, C, H, W].
enum class MemoryFormat { contiguous, channels_last };

const char* memory_format_name(MemoryFormat format);

// True when every element of a tensor of `shape` lies at the same offset in both formats: equal
// formats, or a rank-4 shape whose H = W = 1 or C = 1 (global pooling's [N, C, 1, 1] output).
bool same_placement(const Shape& shape, MemoryFormat a, MemoryFormat b);

}  // namespace baton
