// CUDA launchers of the elementwise family (kernels/cuda/elementwise_cuda.cu). Plain C++: pointers
// to n elements of `dtype` on device `device_index`, work issued on `stream` (a cudaStream_t).
// Arguments are checked by the caller (kernels/elementwise.cc). An output may equal an input.
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

void add(DType dtype, const void* a, const void* b, void* out, int64_t n, int device_index, void* stream);
void sub(DType dtype, const void* a, const void* b, void* out, int64_t n, int device_index, void* stream);
void mul(DType dtype, const void* a, const void* b, void* out, int64_t n, int device_index, void* stream);
void scale(DType dtype, const void* x, double alpha, void* out, int64_t n, int device_index, void* stream);
// out = alpha·x + beta·y.
void axpby(DType dtype, double alpha, const void* x, double beta, const void* y, void* out, int64_t n, int device_index,
           void* stream);
void relu_forward(DType dtype, const void* x, void* out, int64_t n, int device_index, void* stream);
void relu_backward(DType dtype, const void* y, const void* dy, void* dx, int64_t n, int device_index, void* stream);
// src (src_dtype) converted to out (out_dtype), rounding as the CPU reference does, bit for bit.
void cast(DType src_dtype, const void* src, DType out_dtype, void* out, int64_t n, int device_index, void* stream);

}  // namespace baton::kernels::cuda
