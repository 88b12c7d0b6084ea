// cuBLAS launcher of the matrix product (kernels/gemm.h), in kernels/cuda/gemm_cuda.cc. Plain C++:
// the Context (its cuBLAS handle, bound to its stream, and its TF32 policy), raw device pointers,
// sizes, DType. Arguments are checked by the caller (kernels/gemm.cc): f32 or f64, M, N, K in [1, 2^31).
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// c[m, n] = alpha · op(a) · op(b) + beta · c, all row-major (see kernels/gemm.h).
struct GemmArgs {
  DType dtype = DType::f32;
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1, beta = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
};

// Sets the math mode of ctx's cuBLAS handle (TF32 tensor cores only when ctx.allow_tf32()) and the
// host pointer mode, then issues one cublasGemmEx on ctx's stream.
void gemm(Context& ctx, const GemmArgs& args);

// The same cublasGemmEx, with the modes set once now: each call of the result issues only the GEMM.
std::function<void()> gemm_library_call(Context& ctx, const GemmArgs& args);

}  // namespace baton::kernels::cuda
