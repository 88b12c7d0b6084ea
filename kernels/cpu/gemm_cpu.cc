// CPU matrix product: oneDNN's sgemm for float32 where built with it, else Eigen maps of the
// row-major buffers (no copies).
#include "kernels/cpu/gemm_cpu.h"

#include <Eigen/Core>
#include <type_traits>

#include "runtime/core/build_config.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"
#if BATON_HAVE_DNNL
#include <dnnl.h>
#endif

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
#if BATON_HAVE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    (void)cpu_threads();  // the calling thread's OpenMP thread count follows BATON_NUM_THREADS
    const dnnl_status_t status =
        dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, ta ? m : k, b, tb ? k : n, beta, c, n);
    BATON_CHECK(status == dnnl_success, "oneDNN sgemm (", m, "x", n, "x", k, ") failed with status ",
                static_cast<int>(status));
    return;
  }
#endif
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
