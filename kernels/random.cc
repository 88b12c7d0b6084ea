// Random fills: argument checks and device dispatch.
#include "kernels/random.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "kernels/cpu/random_cpu.h"
#include "kernels/cuda/random_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// `out` is a floating tensor on the context's device and its stream indices offset .. offset + numel - 1
// fit in 64 bits.
void check_fill(std::string_view op, const Context& ctx, const Tensor& out, uint64_t offset) {
  check_on_context(op, ctx, {{"out", out}});
  check_floating(op, {"out", out});
  const auto n = static_cast<uint64_t>(out.numel());
  BATON_CHECK(n == 0 || offset <= std::numeric_limits<uint64_t>::max() - (n - 1), op, ": argument 'offset' is ", offset,
              ", but the fill of ", n, " elements would run past stream index 2^64 - 1");
}

// Fills out on the context's device (arguments checked).
void fill(std::string_view op, Context& ctx, const Tensor& out, Distribution distribution, uint64_t seed,
          uint64_t offset, double a, double b) {
  on_device(
      op, ctx,
      [&] {
        dispatch_floating(op, out.dtype(), [&]<typename T>() {
          cpu::random_fill(distribution, out.data<T>(), out.numel(), seed, offset, a, b);
        });
      },
      [&](auto& cuda_ctx) {
        cuda::random_fill(cuda_ctx, out.data_ptr(), out.dtype(), out.numel(), distribution, seed, offset, a, b);
      });
}

}  // namespace

void uniform(Context& ctx, const Tensor& out, uint64_t seed, uint64_t offset, double low, double high) {
  constexpr std::string_view op = "uniform";
  check_fill(op, ctx, out, offset);
  BATON_CHECK(std::isfinite(low), op, ": argument 'low' is ", low, ", expected a finite value");
  BATON_CHECK(std::isfinite(high) && high >= low, op, ": argument 'high' is ", high,
              ", expected a finite value >= low (", low, ")");
  const double range = high - low;
  BATON_CHECK(std::isfinite(range), op, ": arguments 'low' and 'high' are ", low, " and ", high,
              ", their difference overflows");
  fill(op, ctx, out, Distribution::uniform, seed, offset, low, range);
}

void normal(Context& ctx, const Tensor& out, uint64_t seed, uint64_t offset, double mean, double stddev) {
  constexpr std::string_view op = "normal";
  check_fill(op, ctx, out, offset);
  BATON_CHECK(std::isfinite(mean), op, ": argument 'mean' is ", mean, ", expected a finite value");
  BATON_CHECK(std::isfinite(stddev) && stddev >= 0.0, op, ": argument 'stddev' is ", stddev,
              ", expected a finite value >= 0");
  fill(op, ctx, out, Distribution::normal, seed, offset, mean, stddev);
}

}  // namespace baton::kernels
