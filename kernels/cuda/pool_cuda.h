// CUDA launchers of the pooling ops (kernels/cuda/pool_cuda.cu). Plain C++: device pointers to
// elements of `dtype` (f32, f64, f16, bf16) laid out as [planes, H, W] (planes = N·C), max-pool
// indices of `index_dtype` (i32 or i64), the Context first (work on its device and stream). Arguments
// are checked by kernels/pool.cc.
#pragma once

#include <cstdint>

#include "kernels/pool_math.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

void max_pool2d_forward(Context& ctx, DType dtype, DType index_dtype, const void* x, int64_t planes,
                        const PoolPlane& plane, void* y, void* indices);
void max_pool2d_backward(Context& ctx, DType dtype, DType index_dtype, const void* dy, const void* indices,
                         int64_t planes, const PoolPlane& plane, void* dx);
void avg_pool2d_forward(Context& ctx, DType dtype, const void* x, int64_t planes, const PoolPlane& plane,
                        bool count_include_pad, void* y);
void avg_pool2d_backward(Context& ctx, DType dtype, const void* dy, int64_t planes, const PoolPlane& plane,
                         bool count_include_pad, void* dx);
// y[plane] = mean of x[plane, 0 .. hw); dx[plane, i] = dy[plane] / hw.
void global_avg_pool2d_forward(Context& ctx, DType dtype, const void* x, int64_t planes, int64_t hw, void* y);
void global_avg_pool2d_backward(Context& ctx, DType dtype, const void* dy, int64_t planes, int64_t hw, void* dx);

// PyTorch's adaptive windows from plane.in_* to plane.out_* (the window fields are unused).
void adaptive_avg_pool2d_forward(Context& ctx, DType dtype, const void* x, int64_t planes, const PoolPlane& plane,
                                 void* y);
void adaptive_avg_pool2d_backward(Context& ctx, DType dtype, const void* dy, int64_t planes, const PoolPlane& plane,
                                  void* dx);

}  // namespace baton::kernels::cuda
