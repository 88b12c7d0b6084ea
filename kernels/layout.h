// Layout ops: NCHW <-> NHWC for 4-D tensors of any dtype (elements are moved by size: 1, 2, 4 or
// 8 bytes). Both are batched transposes: per image n, [C, H*W] <-> [H*W, C]. to_memory_format moves
// a tensor between baton's memory formats (runtime/core/memory_format.h) with them.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// x [N, C, H, W] -> out [N, H, W, C]: out[n, h, w, c] = x[n, c, h, w]. Same dtype.
void nchw_to_nhwc(Context& ctx, const Tensor& x, const Tensor& out);

// x [N, H, W, C] -> out [N, C, H, W]: out[n, c, h, w] = x[n, h, w, c]. Same dtype.
void nhwc_to_nchw(Context& ctx, const Tensor& x, const Tensor& out);

// x in `format`: x itself when already in it (unchecked), the same bytes retagged when they are
// placed alike (same_placement), else a new tensor on x's device, converted on ctx's stream. Any
// dtype, CPU or CUDA.
Tensor to_memory_format(Context& ctx, const Tensor& x, MemoryFormat format);

}  // namespace baton::kernels
