// CPU matrix product (oneDNN sgemm for float32 where built with it, else Eigen; kernels/cpu/gemm_cpu.cc;
// instantiated for float and double).
#pragma once

#include <cstdint>

namespace baton::kernels::cpu {

// c[m, n] = alpha · op(a) · op(b) + beta · c over contiguous row-major matrices: a is [m, k] ([k, m]
// when ta), b is [k, n] ([n, k] when tb). beta = 0 does not read c. k may be 0.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c);

extern template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float,
                                 float*);
extern template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*, double,
                                  double*);

}  // namespace baton::kernels::cpu
