// Emulated GPU: cublasGemmEx from the cuBLAS documentation: argument checks with cuBLAS's statuses,
// the exact byte ranges of A, B, C (from lda/ldb/ldc) checked by the runtime, the reference GEMM.
#include <cstdint>

#include "baton_emu/runtime_api.h"
#include "cublas_handle.h"
#include "gemm_reference.h"

namespace {

bool valid_operation(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// Bytes a column-major rows x cols matrix with leading dimension ld spans from its first element.
size_t matrix_bytes(int rows, int cols, int ld, size_t element) {
  if (rows == 0 || cols == 0) return 0;
  return (static_cast<size_t>(cols - 1) * static_cast<size_t>(ld) + static_cast<size_t>(rows)) * element;
}

// The supported (data type, compute type) combinations of the cuBLAS table for cublasGemmEx that
// baton uses: FP32 data with 32F compute (plain, pedantic or TF32) and FP64 data with 64F compute.
bool is_float_compute(cublasComputeType_t t) {
  return t == CUBLAS_COMPUTE_32F || t == CUBLAS_COMPUTE_32F_PEDANTIC || t == CUBLAS_COMPUTE_32F_FAST_TF32;
}
bool is_double_compute(cublasComputeType_t t) { return t == CUBLAS_COMPUTE_64F || t == CUBLAS_COMPUTE_64F_PEDANTIC; }

// TF32 inputs: CUBLAS_COMPUTE_32F_FAST_TF32, or CUBLAS_COMPUTE_32F under CUBLAS_TF32_TENSOR_OP_MATH.
bool uses_tf32(cublasComputeType_t t, cublasMath_t math) {
  if (t == CUBLAS_COMPUTE_32F_FAST_TF32) return true;
  const int base = static_cast<int>(math) & ~static_cast<int>(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  return t == CUBLAS_COMPUTE_32F && base == CUBLAS_TF32_TENSOR_OP_MATH;
}

template <typename T>
double scalar(const void* p) {
  return static_cast<double>(*static_cast<const T*>(p));
}

}  // namespace

extern "C" cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                       int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                                       const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                       cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                       cublasGemmAlgo_t algo) {
  constexpr const char* kApi = "cublasGemmEx";
  if (const cublasStatus_t status = baton_emu::check_cublas_handle(handle, kApi); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (!valid_operation(transa) || !valid_operation(transb) || m < 0 || n < 0 || k < 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const bool transpose_a = transa != CUBLAS_OP_N, transpose_b = transb != CUBLAS_OP_N;  // C == T for real data
  const int a_rows = transpose_a ? k : m, a_cols = transpose_a ? m : k;
  const int b_rows = transpose_b ? n : k, b_cols = transpose_b ? k : n;
  if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (algo != CUBLAS_GEMM_DEFAULT && algo != CUBLAS_GEMM_DEFAULT_TENSOR_OP) return CUBLAS_STATUS_NOT_SUPPORTED;
  const bool is_float =
      Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F && is_float_compute(computeType);
  const bool is_double =
      Atype == CUDA_R_64F && Btype == CUDA_R_64F && Ctype == CUDA_R_64F && is_double_compute(computeType);
  if (!is_float && !is_double) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;  // nothing to compute or touch

  const size_t element = is_double ? sizeof(double) : sizeof(float);
  const size_t scalar_bytes = element;  // alpha/beta have the compute type's scalar type
  const bool device_scalars = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  const bool tf32 = uses_tf32(computeType, handle->math);
  const baton_emu::GemmShape shape{.transpose_a = transpose_a,
                                   .transpose_b = transpose_b,
                                   .m = m,
                                   .n = n,
                                   .k = k,
                                   .lda = lda,
                                   .ldb = ldb,
                                   .ldc = ldc};
  // Host scalars are read at the call (cuBLAS may return before the GEMM runs); device ones in order.
  double host_alpha = 0, host_beta = 0;
  if (!device_scalars) {
    host_alpha = is_double ? scalar<double>(alpha) : scalar<float>(alpha);
    host_beta = is_double ? scalar<double>(beta) : scalar<float>(beta);
  }
  baton_emu::run_on_stream(
      handle->stream, kApi,
      {{A, matrix_bytes(a_rows, a_cols, lda, element), "A", false},
       {B, matrix_bytes(b_rows, b_cols, ldb, element), "B", false},
       {C, matrix_bytes(m, n, ldc, element), "C", true},
       {device_scalars ? alpha : nullptr, device_scalars ? scalar_bytes : 0, "alpha", false},
       {device_scalars ? beta : nullptr, device_scalars ? scalar_bytes : 0, "beta", false},
       {handle->workspace, handle->workspace_bytes, "workspace", true}},
      [&] {
        double a_scale = host_alpha, b_scale = host_beta;
        if (device_scalars) {
          a_scale = is_double ? scalar<double>(alpha) : scalar<float>(alpha);
          b_scale = is_double ? scalar<double>(beta) : scalar<float>(beta);
        }
        if (is_double) {
          baton_emu::gemm_reference(shape, a_scale, static_cast<const double*>(A), static_cast<const double*>(B),
                                    b_scale, static_cast<double*>(C), false);
        } else {
          baton_emu::gemm_reference(shape, a_scale, static_cast<const float*>(A), static_cast<const float*>(B), b_scale,
                                    static_cast<float*>(C), tf32);
        }
      });
  return CUBLAS_STATUS_SUCCESS;
}
