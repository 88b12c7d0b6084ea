// Layout ops on the CPU: the index formula for every dtype, round trips, and bad input.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/layout.h"
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
