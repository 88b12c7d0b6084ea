// SGEMM and copy ceilings for the benchmark tables.
#include "tools/bench_ceilings.h"

#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "kernels/random.h"

namespace baton::cli {

Ceiling measure_sgemm(Context& ctx, const BenchTimerConfig& timing, int64_t n) {
  const Tensor a = Tensor::empty(Shape{n, n}, DType::f32, ctx), b = Tensor::empty(Shape{n, n}, DType::f32, ctx);
  const Tensor c = Tensor::empty(Shape{n, n}, DType::f32, ctx);
  kernels::uniform(ctx, a, 1, 0, -1.0, 1.0);
  kernels::uniform(ctx, b, 2, 0, -1.0, 1.0);
  Ceiling ceiling;
  ceiling.what =
      "SGEMM " + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) + " (kernels::matmul)";
  ceiling.median_ms = time_median_ms(ctx, timing, [&] { kernels::matmul(ctx, a, b, c, false, false); });
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  ceiling.rate = flops / (ceiling.median_ms * 1e6);
  return ceiling;
}

Ceiling measure_copy(Context& ctx, const BenchTimerConfig& timing, int64_t bytes) {
  const int64_t n = bytes / 4;
  const Tensor src = Tensor::empty(Shape{n}, DType::f32, ctx), dst = Tensor::empty(Shape{n}, DType::f32, ctx);
  kernels::fill(ctx, src, 0.5);
  kernels::fill(ctx, dst, 0.25);
  Ceiling ceiling;
  ceiling.what = "copy of " + std::to_string(bytes >> 20) + " MiB (kernels::copy)";
  ceiling.median_ms = time_median_ms(ctx, timing, [&] { kernels::copy(ctx, src, dst); });
  ceiling.rate = 2.0 * static_cast<double>(bytes) / (ceiling.median_ms * 1e6);
  return ceiling;
}

}  // namespace baton::cli
