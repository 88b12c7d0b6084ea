// Emulated GPU: the plain reference loop behind the emulated cublasGemmEx (column-major GEMM with
// leading dimensions and transposes), accumulating in double and rounding once to the output type.
#pragma once

#include <cstdint>

namespace baton_emu {

// C (m x n, leading dimension ldc) = alpha * op(A) * op(B) + beta * C, all column-major as in BLAS:
// element (i, j) of a matrix with leading dimension ld is at [i + j * ld]. op(A) is m x k: A itself
// (stored m x k, lda >= m) or, when transpose_a, A^T (A stored k x m, lda >= k); likewise op(B) is
// k x n. When beta == 0, C is not read (it may hold NaN), as cuBLAS documents.
struct GemmShape {
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
};

// Rounds a float to TF32 (10 explicit mantissa bits, 8-bit exponent), to nearest with ties away from
// zero as the FP32 to TF32 conversion of tensor cores does; infinities and NaN pass through.
float round_to_tf32(float value);

// The reference GEMM. With `tf32_inputs` every element of A and B is first rounded by round_to_tf32
// (CUBLAS_COMPUTE_32F_FAST_TF32); products and sums are then exact-ish in double.
template <typename T>
void gemm_reference(const GemmShape& shape, double alpha, const T* a, const T* b, double beta, T* c, bool tf32_inputs);

}  // namespace baton_emu
