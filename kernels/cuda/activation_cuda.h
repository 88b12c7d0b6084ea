// CUDA launchers of the activation ops (kernels/activation.h). Plain C++: pointers to n elements of
// `dtype` on device `device_index`, work issued on `stream` (a cudaStream_t). Arguments are checked
// by kernels/activation.cc. An output may equal an input.
#pragma once

#include <cstdint>

#include "kernels/activation_math.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// out = f(x).
void activation_forward(Activation activation, DType dtype, const void* x, void* out, int64_t n, int device_index,
                        void* stream);
// dx from dy and what the backward formula reads: the input x for relu6, the output y otherwise.
void activation_backward(Activation activation, DType dtype, const void* saved, const void* dy, void* dx, int64_t n,
                         int device_index, void* stream);
// out = alpha · scalar[0] · x; scalar is one element of scalar_dtype (f32 or f64) in device memory.
void scale_by_scalar(DType dtype, const void* x, DType scalar_dtype, const void* scalar, double alpha, void* out,
                     int64_t n, int device_index, void* stream);

}  // namespace baton::kernels::cuda
