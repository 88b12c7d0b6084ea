// Layout ops on the CPU: the index formula for every dtype, round trips, memory-format conversions,
// the ops that refuse channels-last tensors, and bad input.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/dropout.h"
#include "kernels/elementwise.h"
#include "kernels/layout.h"
#include "kernels/reduce.h"
#include "runtime/core/dtype.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::bytes_of;

TEST(Layout, FollowsTheIndexFormulaForEveryDtype) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  // C = 35 and H * W = 42 cross the 32-element tiles.
  for (const Shape& nchw : {Shape{2, 3, 4, 5}, Shape{2, 35, 6, 7}, Shape{1, 1, 1, 1}}) {
    for (DType dtype : kAllDTypes) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " " << nchw.str());
      const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
      const double low = dtype == DType::u8 ? 0.0 : -100.0;  // u8 holds no negative values
      const std::vector<double> values = testing::random_values(nchw.numel(), dtype, 3, low, 100.0);
      Tensor x = testing::from_doubles(values, nchw, dtype, s);
      Tensor nhwc = Tensor::empty(Shape{n, h, w, c}, dtype, ctx);
      testing::poison(nhwc, s);
      nchw_to_nhwc(ctx, x, nhwc);
      std::vector<double> expected(values.size());
      for (int64_t in = 0; in < n; ++in) {
        for (int64_t ic = 0; ic < c; ++ic) {
          for (int64_t ih = 0; ih < h; ++ih) {
            for (int64_t iw = 0; iw < w; ++iw) {
              expected[((in * h + ih) * w + iw) * c + ic] = values[((in * c + ic) * h + ih) * w + iw];
            }
          }
        }
      }
      EXPECT_TRUE(testing::all_close(testing::to_doubles(nhwc, s), expected, 0.0, 0.0));

      Tensor back = Tensor::empty(nchw, dtype, ctx);
      testing::poison(back, s);
      nhwc_to_nchw(ctx, nhwc, back);
      EXPECT_EQ(bytes_of(back, s), bytes_of(x, s));
    }
  }
}

TEST(Layout, NhwcToNchwFollowsTheIndexFormula) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t n = 2, h = 3, w = 33, c = 5;
  const std::vector<double> values = testing::random_values(n * h * w * c, DType::f32, 4);
  Tensor x = testing::from_doubles(values, Shape{n, h, w, c}, DType::f32, s);
  Tensor out = Tensor::empty(Shape{n, c, h, w}, DType::f32, ctx);
  testing::poison(out, s);
  nhwc_to_nchw(ctx, x, out);
  const std::vector<double> got = testing::to_doubles(out, s);
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t ic = 0; ic < c; ++ic) {
      for (int64_t ih = 0; ih < h; ++ih) {
        for (int64_t iw = 0; iw < w; ++iw) {
          ASSERT_EQ(got[((in * c + ic) * h + ih) * w + iw], values[((in * h + ih) * w + iw) * c + ic])
              << in << " " << ic << " " << ih << " " << iw;
        }
      }
    }
  }
}

TEST(Layout, ToMemoryFormatPlacesChannelsLastAsNhwcAndBack) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const Shape shape{2, 35, 6, 7};
  for (DType dtype : {DType::f32, DType::f64, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = testing::from_doubles(testing::random_values(shape.numel(), dtype, 5), shape, dtype, s);
    const Tensor last = to_memory_format(ctx, x, MemoryFormat::channels_last);
    EXPECT_EQ(last.format(), MemoryFormat::channels_last);
    EXPECT_EQ(last.shape(), shape);
    Tensor nhwc = Tensor::empty(Shape{2, 6, 7, 35}, dtype, ctx);
    nchw_to_nhwc(ctx, x, nhwc);
    EXPECT_EQ(bytes_of(last.nhwc_view(), s), bytes_of(nhwc, s));
    const Tensor back = to_memory_format(ctx, last, MemoryFormat::contiguous);
    EXPECT_EQ(back.format(), MemoryFormat::contiguous);
    EXPECT_EQ(bytes_of(back, s), bytes_of(x, s));
    EXPECT_EQ(to_memory_format(ctx, last, MemoryFormat::channels_last).data_ptr(), last.data_ptr()) << "no copy";
  }
  const Tensor pooled = Tensor::empty(Shape{2, 8, 1, 1}, DType::f32, ctx);
  const Tensor tagged = to_memory_format(ctx, pooled, MemoryFormat::channels_last);
  EXPECT_EQ(tagged.format(), MemoryFormat::channels_last);
  EXPECT_EQ(tagged.data_ptr(), pooled.data_ptr()) << "[N, C, 1, 1] is the same bytes in both formats";
}

TEST(Layout, OpsReadChannelsLastOnlyWhereTheyKnowIt) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const Shape shape{2, 3, 4, 5};
  const Tensor a = testing::from_doubles(testing::random_values(shape.numel(), DType::f32, 6), shape, DType::f32, s);
  const Tensor b = testing::from_doubles(testing::random_values(shape.numel(), DType::f32, 7), shape, DType::f32, s);
  const Tensor a_last = to_memory_format(ctx, a, MemoryFormat::channels_last);
  const Tensor b_last = to_memory_format(ctx, b, MemoryFormat::channels_last);
  // Pointwise ops map element i to element i: channels-last in, channels-last out, same values.
  const Tensor sum_last = Tensor::empty(shape, DType::f32, s, MemoryFormat::channels_last);
  add(ctx, a_last, b_last, sum_last);
  const Tensor sum = Tensor::empty(shape, DType::f32, ctx);
  add(ctx, a, b, sum);
  EXPECT_EQ(bytes_of(to_memory_format(ctx, sum_last, MemoryFormat::contiguous), s), bytes_of(sum, s));
  EXPECT_ERROR_MENTIONS("argument 'b' is contiguous, 'a' channels-last", add(ctx, a_last, b, sum_last));
  // Ops that read row-major order refuse, naming the argument and the conversion.
  EXPECT_ERROR_MENTIONS(
      "argument 'x' is a channels-last tensor of shape [2, 3, 4, 5], which this op does not read",
      dropout_forward(ctx, a_last, 0.5, 1, Tensor::empty(shape, DType::f32, s, MemoryFormat::channels_last)));
  EXPECT_ERROR_MENTIONS("kernels::to_memory_format",
                        channel_sum(ctx, a_last, Tensor::empty(Shape{3}, DType::f32, ctx)));
}

TEST(Layout, BadInputNamesTheArgument) {
  Context ctx(Device::cpu());
  Tensor x = Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, ctx);
  EXPECT_ERROR_MENTIONS("'x'", nchw_to_nhwc(ctx, Tensor::empty(Shape{3, 4, 5}, DType::f32, ctx), x));
  EXPECT_ERROR_MENTIONS("'out'", nchw_to_nhwc(ctx, x, Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("'out'", nchw_to_nhwc(ctx, x, Tensor::empty(Shape{2, 4, 5, 3}, DType::f64, ctx)));
  EXPECT_ERROR_MENTIONS("'out'", nhwc_to_nchw(ctx, x, Tensor::empty(Shape{2, 3, 4, 5}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("'out'", nhwc_to_nchw(ctx, x, Tensor()));
  EXPECT_ERROR_MENTIONS("'x'", nhwc_to_nchw(ctx, Tensor(), x));
}

}  // namespace
}  // namespace baton::kernels
