// CPU matrix product over Eigen maps of row-major buffers (no copies).
#include "kernels/cpu/gemm_cpu.h"

#include <Eigen/Core>

namespace baton::kernels::cpu {

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<Matrix> out(c, m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0)) {
      out.setZero();
    } else {
      out *= beta;
    }
    return;
  }
  const Eigen::Map<const Matrix> am(a, ta ? k : m, ta ? m : k);
  const Eigen::Map<const Matrix> bm(b, tb ? n : k, tb ? k : n);
  auto product = [&](const auto& lhs, const auto& rhs) {
    if (beta == T(0)) {
      out.noalias() = alpha * lhs * rhs;
      return;
    }
    if (beta != T(1)) out *= beta;
    out.noalias() += alpha * lhs * rhs;
  };
  if (ta && tb) {
    product(am.transpose(), bm.transpose());
  } else if (ta) {
    product(am.transpose(), bm);
  } else if (tb) {
    product(am, bm.transpose());
  } else {
    product(am, bm);
  }
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*, double,
                           double*);

}  // namespace baton::kernels::cpu
