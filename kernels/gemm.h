// Matrix products: out = alpha · op(a) · op(b) + beta · out on 2-D row-major tensors, op(m) being m
// or its transpose. The building block of Linear and of the CPU convolution.
//
// dtypes: f32 and f64 (all three tensors the same). CPU: Eigen, accumulating in the element type.
// CUDA: cuBLAS (cublasGemmEx) on the context's stream and handle. For f32, TF32 tensor cores are used
// only when ctx.allow_tf32() (otherwise exact float32 arithmetic, CUBLAS_COMPUTE_32F with the default
// math mode); f64 always computes in double. cuBLAS results are deterministic for a given GPU,
// handle and workspace.
#pragma once

#include <functional>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

// a is [M, K] ([K, M] when transpose_a), b is [K, N] ([N, K] when transpose_b), out is [M, N].
// beta = 0 writes out without reading it (it may hold garbage); beta = 1 accumulates into it (parameter
// gradients). alpha and beta are rounded to float for f32 tensors. out must not overlap a or b.
// M, N and K may be 0 (K = 0 gives out = beta · out). On CUDA each of M, N, K must be below 2^31.
void matmul(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out, bool transpose_a, bool transpose_b,
            double alpha = 1, double beta = 0);

// The cuBLAS call matmul makes for these arguments, bare (no argument checks, math mode and pointer
// mode set once here), for benchmarks that measure baton's overhead over the library. Empty on CPU
// contexts. The tensors must stay alive while the returned function is used.
std::function<void()> matmul_library_call(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out,
                                          bool transpose_a, bool transpose_b, double alpha = 1, double beta = 0);

}  // namespace baton::kernels
