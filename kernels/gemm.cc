// Matrix products: argument checks, then Eigen (CPU) or cuBLAS (CUDA).
#include "kernels/gemm.h"

#include <climits>
#include <cstdint>
#include <string_view>

#include "kernels/cpu/gemm_cpu.h"
#include "kernels/cuda/gemm_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

constexpr std::string_view kOp = "matmul";

struct GemmSizes {
  int64_t m, n, k;
};

// a, b, out on the context's device, 2-D, one dtype (f32 or f64), inner dimensions agreeing, out
// [M, N] and disjoint from a and b.
GemmSizes check_matmul(const Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out, bool transpose_a,
                       bool transpose_b) {
  check_on_context(kOp, ctx, {{"a", a}, {"b", b}, {"out", out}});
  check_rank(kOp, {"a", a}, 2);
  check_rank(kOp, {"b", b}, 2);
  check_rank(kOp, {"out", out}, 2);
  check_dtype_in(kOp, {"a", a}, {DType::f32, DType::f64});
  check_same_dtype(kOp, {{"a", a}, {"b", b}, {"out", out}});
  const int64_t m = a.size(transpose_a ? 1 : 0), k = a.size(transpose_a ? 0 : 1);
  const int64_t kb = b.size(transpose_b ? 1 : 0), n = b.size(transpose_b ? 0 : 1);
  BATON_CHECK(k == kb, kOp, ": inner dimensions differ: 'a' has shape ", a.shape().str(),
              transpose_a ? " (transposed)" : "", " giving K = ", k, ", 'b' has shape ", b.shape().str(),
              transpose_b ? " (transposed)" : "", " giving K = ", kb);
  BATON_CHECK(out.shape() == (Shape{m, n}), kOp, ": argument 'out' has shape ", out.shape().str(), ", expected [", m,
              ", ", n, "] (M from 'a', N from 'b')");
  for (const Tensor* in : {&a, &b}) {
    const bool disjoint = in->storage() != out.storage() || in->nbytes() == 0 || out.nbytes() == 0 ||
                          in->offset_bytes() + in->nbytes() <= out.offset_bytes() ||
                          out.offset_bytes() + out.nbytes() <= in->offset_bytes();
    BATON_CHECK(disjoint, kOp, ": argument 'out' overlaps argument '", in == &a ? "a" : "b", "'");
  }
  return {m, n, k};
}

// Unused (and not emitted) in CPU-only builds.
[[maybe_unused]] cuda::GemmArgs gemm_args(const Tensor& a, const Tensor& b, const Tensor& out, bool transpose_a,
                                          bool transpose_b, double alpha, double beta, const GemmSizes& s) {
  for (const int64_t d : {s.m, s.n, s.k}) {
    BATON_CHECK(d <= INT_MAX, kOp, ": dimension ", d, " is too large for cuBLAS (at most ", INT_MAX, ")");
  }
  return {.dtype = a.dtype(),
          .transpose_a = transpose_a,
          .transpose_b = transpose_b,
          .m = s.m,
          .n = s.n,
          .k = s.k,
          .alpha = alpha,
          .beta = beta,
          .a = a.data_ptr(),
          .b = b.data_ptr(),
          .c = out.data_ptr()};
}

}  // namespace

void matmul(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out, bool transpose_a, bool transpose_b,
            double alpha, double beta) {
  const GemmSizes s = check_matmul(ctx, a, b, out, transpose_a, transpose_b);
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {  // no products: out = beta · out, without reading out when beta = 0
    if (beta == 0) return fill(ctx, out, 0.0);
    return scale(ctx, out, beta, out);
  }
  on_device(
      kOp, ctx,
      [&] {
        if (a.dtype() == DType::f64) {
          cpu::gemm<double>(transpose_a, transpose_b, s.m, s.n, s.k, alpha, a.data<double>(), b.data<double>(), beta,
                            out.data<double>());
        } else {
          cpu::gemm<float>(transpose_a, transpose_b, s.m, s.n, s.k, static_cast<float>(alpha), a.data<float>(),
                           b.data<float>(), static_cast<float>(beta), out.data<float>());
        }
      },
      [&](auto& cuda_ctx) { cuda::gemm(cuda_ctx, gemm_args(a, b, out, transpose_a, transpose_b, alpha, beta, s)); });
}

std::function<void()> matmul_library_call(Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out,
                                          bool transpose_a, bool transpose_b, double alpha, double beta) {
  const GemmSizes s = check_matmul(ctx, a, b, out, transpose_a, transpose_b);
  BATON_CHECK(s.m > 0 && s.n > 0 && s.k > 0, kOp, ": a library call needs non-empty matrices");
  return on_device(
      kOp, ctx, [] { return std::function<void()>{}; },
      [&](auto& cuda_ctx) {
        return cuda::gemm_library_call(cuda_ctx, gemm_args(a, b, out, transpose_a, transpose_b, alpha, beta, s));
      });
}

}  // namespace baton::kernels
