// CUDA launchers of the elementwise family (kernels/cuda/elementwise_cuda.cu). Plain C++: the
// Context first (work on its device and stream), then pointers to n elements of `dtype`.
// Arguments are checked by the caller (kernels/elementwise.cc). An output may equal an input.
#pragma once

#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

void add(Context& ctx, DType dtype, const void* a, const void* b, void* out, int64_t n);
void sub(Context& ctx, DType dtype, const void* a, const void* b, void* out, int64_t n);
void mul(Context& ctx, DType dtype, const void* a, const void* b, void* out, int64_t n);
void scale(Context& ctx, DType dtype, const void* x, double alpha, void* out, int64_t n);
// out = alpha·x + beta·y.
void axpby(Context& ctx, DType dtype, double alpha, const void* x, double beta, const void* y, void* out, int64_t n);
void relu_forward(Context& ctx, DType dtype, const void* x, void* out, int64_t n);
void relu_backward(Context& ctx, DType dtype, const void* y, const void* dy, void* dx, int64_t n);
// src (src_dtype) converted to out (out_dtype), rounding as the CPU reference does, bit for bit.
void cast(Context& ctx, DType src_dtype, const void* src, DType out_dtype, void* out, int64_t n);

}  // namespace baton::kernels::cuda
