// CUDA launchers of the pooling ops (kernels/cuda/pool_cuda.cu). Plain C++: device pointers to
// elements of `dtype` (f32, f64, f16, bf16) laid out as [planes, H, W] (planes = N·C), max-pool
// indices of `index_dtype` (i32 or i64), the device index and the cudaStream_t as void*. Arguments
// are checked by kernels/pool.cc.
#pragma once

#include <cstdint>

#include "kernels/pool_math.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

void max_pool2d_forward(DType dtype, DType index_dtype, const void* x, int64_t planes, const PoolPlane& plane, void* y,
                        void* indices, int device_index, void* stream);
void max_pool2d_backward(DType dtype, DType index_dtype, const void* dy, const void* indices, int64_t planes,
                         const PoolPlane& plane, void* dx, int device_index, void* stream);
void avg_pool2d_forward(DType dtype, const void* x, int64_t planes, const PoolPlane& plane, bool count_include_pad,
                        void* y, int device_index, void* stream);
void avg_pool2d_backward(DType dtype, const void* dy, int64_t planes, const PoolPlane& plane, bool count_include_pad,
                         void* dx, int device_index, void* stream);
// y[plane] = mean of x[plane, 0 .. hw); dx[plane, i] = dy[plane] / hw.
void global_avg_pool2d_forward(DType dtype, const void* x, int64_t planes, int64_t hw, void* y, int device_index,
                               void* stream);
void global_avg_pool2d_backward(DType dtype, const void* dy, int64_t planes, int64_t hw, void* dx, int device_index,
                                void* stream);

// PyTorch's adaptive windows from plane.in_* to plane.out_* (the window fields are unused).
void adaptive_avg_pool2d_forward(DType dtype, const void* x, int64_t planes, const PoolPlane& plane, void* y,
                                 int device_index, void* stream);
void adaptive_avg_pool2d_backward(DType dtype, const void* dy, int64_t planes, const PoolPlane& plane, void* dx,
                                  int device_index, void* stream);

}  // namespace baton::kernels::cuda
