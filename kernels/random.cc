// Random fills: argument checks and device dispatch.
#include "kernels/random.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "kernels/cpu/random_cpu.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"
#include "runtime/core/build_config.h"

#if BATON_HAVE_CUDA
#include "kernels/cuda/random_cuda.h"
#endif

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
  if (ctx.device().is_cpu()) {
    dispatch_floating(op, out.dtype(), [&]<typename T>() {
      cpu::random_fill(distribution, out.data<T>(), out.numel(), seed, offset, a, b);
    });
    return;
  }
#if BATON_HAVE_CUDA
  cuda::random_fill(out.data_ptr(), out.dtype(), out.numel(), distribution, seed, offset, a, b, ctx.device().index(),
                    ctx.stream().native_handle());
#else
  BATON_FAIL(op, ": ", ctx.device().str(), " needs a CUDA build of baton");
#endif
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
