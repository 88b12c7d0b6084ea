// cuBLAS launcher of the matrix product (kernels/gemm.h), in kernels/cuda/gemm_cuda.cc. Plain C++:
// raw device pointers, sizes, DType, the cuBLAS handle (bound to the caller's stream) and the device
// index. Arguments are checked by the caller (kernels/gemm.cc): f32 or f64, M, N, K in [1, 2^31).
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/core/dtype.h"

struct cublasContext;

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

// Sets the handle's math mode (TF32 tensor cores only when allow_tf32) and host pointer mode, then
// issues one cublasGemmEx.
void gemm(cublasContext* handle, bool allow_tf32, const GemmArgs& args, int device_index);

// The same cublasGemmEx, with the modes set once now: each call of the result issues only the GEMM.
std::function<void()> gemm_library_call(cublasContext* handle, bool allow_tf32, const GemmArgs& args, int device_index);

}  // namespace baton::kernels::cuda
