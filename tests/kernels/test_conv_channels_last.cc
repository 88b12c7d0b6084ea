// Convolution with channels-last activations on the CPU against the naive float64 reference, every
// case and every combination of input-side and output-side formats: float32 on oneDNN in NHWC, float64
// (and float32 without oneDNN) on the reference through row-major copies; CUDA refuses them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/conv.h"
#include "kernels/cpu_engine.h"
#include "kernels/layout.h"
#include "tests/kernels/channels_last_test_support.h"
#include "tests/kernels/conv_backward_check.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::ConvCase;

double channels_last_tolerance(DType dtype) { return dtype == DType::f64 ? 1e-12 : 2e-5; }

class ConvChannelsLast : public testing::ChannelsLastTest {
 protected:
  Tensor random(const Shape& shape, DType dtype, uint64_t seed, MemoryFormat format) {
    return in_format(testing::random_tensor(shape, dtype, ctx.stream(), seed), format);
  }
};

constexpr MemoryFormat kFormats[] = {MemoryFormat::contiguous, MemoryFormat::channels_last};

TEST_F(ConvChannelsLast, EveryPassInEveryFormatMatchesTheReference) {
  for (const ConvCase& c : testing::conv_cases()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      for (MemoryFormat in : kFormats) {
        for (MemoryFormat out : kFormats) {
          if (in == MemoryFormat::contiguous && out == MemoryFormat::contiguous) continue;  // test_conv.cc
          SCOPED_TRACE(::testing::Message() << c.name << ", " << dtype_name(dtype) << ", input side "
                                            << memory_format_name(in) << ", output side " << memory_format_name(out));
          const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
          const Tensor x = random(c.x, dtype, 1, in), dy = random(ys, dtype, 3, out);
          const Tensor w = testing::random_tensor(c.w, dtype, ctx.stream(), 2);
          const testing::ConvReference ref = conv_reference(c, values(x), values(w), values(dy));
          const double tol = channels_last_tolerance(dtype);

          const Tensor bias = testing::random_tensor(Shape{c.w[0]}, dtype, ctx.stream(), 4);
          const Tensor y = poisoned(ys, dtype, out);
          conv2d_forward(ctx, x, w, bias, c.params, y);
          EXPECT_EQ(y.format(), out);
          EXPECT_TRUE(testing::all_close(values(y), testing::plus_bias(ref.y, values(bias), ys), tol, tol))
              << "forward with bias";

          const Tensor dx = poisoned(c.x, dtype, in);
          testing::expect_conv_backward_matches(ctx, c, x, w, dy, dx, ref, tol);
        }
      }
    }
  }
}

TEST_F(ConvChannelsLast, Float32RunsOnOneDnnInNhwc) {
  if (!cpu_engine_info().dnnl) GTEST_SKIP() << "built without oneDNN (BATON_DNNL): the reference serves float32";
  for (const ConvCase& c : testing::conv_cases()) {
    const Shape ys = conv2d_output_shape(c.x, c.w, c.params);
    const Tensor x = random(c.x, DType::f32, 1, MemoryFormat::channels_last);
    const Tensor dy = random(ys, DType::f32, 3, MemoryFormat::channels_last);
    const Tensor w = testing::random_tensor(c.w, DType::f32, ctx.stream(), 2);
    conv2d_forward(ctx, x, w, Tensor(), c.params, poisoned(ys, DType::f32, MemoryFormat::channels_last));
    conv2d_backward_data(ctx, dy, w, c.params, poisoned(c.x, DType::f32, MemoryFormat::channels_last));
    conv2d_backward_filter(ctx, x, dy, c.params, testing::random_tensor(c.w, DType::f32, ctx.stream(), 4));
  }
  EXPECT_EQ(cpu_engine_info().reference_fallbacks, 0) << "a case oneDNN has no NHWC implementation for";
}

TEST_F(ConvChannelsLast, FiltersStayRowMajor) {
  const Tensor x = Tensor::empty(Shape{1, 4, 5, 5}, DType::f32, ctx);
  const Tensor w = Tensor::empty(Shape{4, 4, 3, 3}, DType::f32, ctx.stream(), MemoryFormat::channels_last);
  EXPECT_ERROR_MENTIONS(
      "argument 'w' is a channels-last tensor",
      conv2d_forward(ctx, x, w, Tensor(), {.padding = {1, 1}}, Tensor::empty(Shape{1, 4, 5, 5}, DType::f32, ctx)));
}

}  // namespace
}  // namespace baton::kernels
