// CUDA launchers of the activation ops (kernels/activation.h). Plain C++: the Context first
// (work on its device and stream), then pointers to n elements of `dtype`. Arguments are checked
// by kernels/activation.cc. An output may equal an input.
#pragma once

#include <cstdint>

#include "kernels/activation_math.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out = f(x).
void activation_forward(Context& ctx, Activation activation, DType dtype, const void* x, void* out, int64_t n);
// dx from dy and what the backward formula reads: the input x for relu6, the output y otherwise.
void activation_backward(Context& ctx, Activation activation, DType dtype, const void* saved, const void* dy, void* dx,
                         int64_t n);
// out = alpha · scalar[0] · x; scalar is one element of scalar_dtype (f32 or f64) in device memory.
void scale_by_scalar(Context& ctx, DType dtype, const void* x, DType scalar_dtype, const void* scalar, double alpha,
                     void* out, int64_t n);

}  // namespace baton::kernels::cuda
