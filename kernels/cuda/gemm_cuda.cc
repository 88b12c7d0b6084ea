// cuBLAS matrix products on row-major tensors. cuBLAS is column-major; a row-major [m, n] matrix C is
// the column-major [n, m] matrix Cᵀ, and Cᵀ = op(B)ᵀ · op(A)ᵀ, so the call swaps the operands:
// gemm(op_b, op_a, n, m, k, B, A, C) with the leading dimensions of the row-major buffers.
#include "kernels/cuda/gemm_cuda.h"

#include <cublas_v2.h>

#include "runtime/core/cuda/cublas_check.h"
#include "runtime/core/cuda/cuda_check.h"

namespace baton::kernels::cuda {
namespace {

// Everything cublasGemmEx needs, resolved once from GemmArgs.
struct GemmCall {
  cublasOperation_t op_a, op_b;
  int m, n, k, lda, ldb, ldc;
  cudaDataType_t data_type;
  cublasComputeType_t compute_type;
  float alpha_f, beta_f;
  double alpha_d, beta_d;
  const void* a;
  const void* b;
  void* c;

  GemmCall(bool allow_tf32, const GemmArgs& g)
      : op_a(g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N),
        op_b(g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N),
        m(static_cast<int>(g.m)),
        n(static_cast<int>(g.n)),
        k(static_cast<int>(g.k)),
        lda(static_cast<int>(g.transpose_a ? g.m : g.k)),
        ldb(static_cast<int>(g.transpose_b ? g.k : g.n)),
        ldc(static_cast<int>(g.n)),
        data_type(g.dtype == DType::f64 ? CUDA_R_64F : CUDA_R_32F),
        compute_type(g.dtype == DType::f64 ? CUBLAS_COMPUTE_64F
                     : allow_tf32          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                           : CUBLAS_COMPUTE_32F),
        alpha_f(static_cast<float>(g.alpha)),
        beta_f(static_cast<float>(g.beta)),
        alpha_d(g.alpha),
        beta_d(g.beta),
        a(g.a),
        b(g.b),
        c(g.c) {}

  bool is_double() const { return data_type == CUDA_R_64F; }

  void issue(cublasHandle_t handle) const {
    const void* alpha = is_double() ? static_cast<const void*>(&alpha_d) : &alpha_f;
    const void* beta = is_double() ? static_cast<const void*>(&beta_d) : &beta_f;
    BATON_CUBLAS_CHECK(cublasGemmEx(handle, op_b, op_a, n, m, k, alpha, b, data_type, ldb, a, data_type, lda, beta, c,
                                    data_type, ldc, compute_type, CUBLAS_GEMM_DEFAULT));
  }
};

// The handle is shared by every op of its context: set the modes this call relies on.
void set_modes(cublasHandle_t handle, bool allow_tf32) {
  BATON_CUBLAS_CHECK(cublasSetMathMode(handle, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  BATON_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
}

}  // namespace

void gemm(Context& ctx, const GemmArgs& args) {
  CudaDeviceGuard guard(ctx.device().index());
  cublasHandle_t handle = ctx.cublas();
  set_modes(handle, ctx.allow_tf32());
  GemmCall(ctx.allow_tf32(), args).issue(handle);
}

std::function<void()> gemm_library_call(Context& ctx, const GemmArgs& args) {
  CudaDeviceGuard guard(ctx.device().index());
  cublasHandle_t handle = ctx.cublas();
  set_modes(handle, ctx.allow_tf32());
  // The handle belongs to ctx's device: each call makes that device current, whatever the calling
  // thread has current (the guard's cost is part of the call, as it is of the op's).
  return [device = ctx.device().index(), handle, call = GemmCall(ctx.allow_tf32(), args)] {
    CudaDeviceGuard call_guard(device);
    call.issue(handle);
  };
}

}  // namespace baton::kernels::cuda
