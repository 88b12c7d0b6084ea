// Max pooling and global average pooling over channels-last activations on the CPU against the same
// ops on row-major ones (which test_pool.cc checks against the reference rules): the same maxima,
// indices, means and gradients bit for bit, ties and NaNs included, for every dtype and index type,
// more channels than one block of the backward pass; mixed formats are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/layout.h"
#include "kernels/pool.h"
#include "tests/kernels/channels_last_test_support.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

struct ChannelsLastPoolCase {
  Shape x;
  Pool2dGeometry g;
};

// 3x3 stride 2 with padding (ResNet's stem), 2x2 stride 2, dilation, ceil_mode, and 70 channels (a
// block of 64 and a partial one in the backward pass).
const ChannelsLastPoolCase kChannelsLastPoolCases[] = {
    {Shape{2, 5, 9, 7}, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}},
    {Shape{1, 16, 8, 8}, {.kernel = {2, 2}, .stride = {2, 2}}},
    {Shape{2, 3, 7, 6}, {.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}, .dilation = {2, 2}}},
    {Shape{1, 4, 7, 7}, {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = true}},
    {Shape{3, 70, 5, 5}, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}},
};

class PoolChannelsLast : public testing::ChannelsLastTest {
 protected:
  // Values on a grid of quarters (many ties) with a NaN every 23 elements.
  Tensor input(const Shape& shape, DType dtype, uint64_t seed) {
    std::vector<double> v = testing::random_values(shape.numel(), DType::f64, seed, -2.0, 2.0);
    for (size_t i = 0; i < v.size(); ++i) v[i] = i % 23 == 5 ? NAN : std::round(v[i] * 4) / 4;
    return testing::from_doubles(v, shape, dtype, ctx.stream());
  }
};

TEST_F(PoolChannelsLast, MaxPoolGivesTheRowMajorBits) {
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    for (DType index : {DType::i32, DType::i64}) {
      for (const ChannelsLastPoolCase& c : kChannelsLastPoolCases) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::string(dtype_name(index)) + " " + c.x.str());
        const Shape out = pool2d_output_shape("test", c.x, c.g);
        const Tensor x = input(c.x, dtype, 3);
        const Tensor y = poisoned(out, dtype, MemoryFormat::contiguous),
                     i = poisoned(out, index, MemoryFormat::contiguous);
        max_pool2d_forward(ctx, x, c.g, y, i);
        const Tensor y_last = poisoned(out, dtype, MemoryFormat::channels_last);
        const Tensor i_last = poisoned(out, index, MemoryFormat::channels_last);
        max_pool2d_forward(ctx, channels_last(x), c.g, y_last, i_last);
        EXPECT_TRUE(testing::identical_values(values(y_last), values(y)));
        EXPECT_TRUE(testing::identical_values(values(i_last), values(i)));

        const Tensor dy = testing::random_tensor(out, dtype, ctx.stream(), 4);
        const Tensor dx = poisoned(c.x, dtype, MemoryFormat::contiguous);
        max_pool2d_backward(ctx, dy, i, c.g, dx);
        const Tensor dx_last = poisoned(c.x, dtype, MemoryFormat::channels_last);
        max_pool2d_backward(ctx, channels_last(dy), i_last, c.g, dx_last);
        EXPECT_TRUE(testing::identical_values(values(dx_last), values(dx)));
      }
    }
  }
}

TEST_F(PoolChannelsLast, GlobalAvgPoolGivesTheRowMajorBits) {
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    for (const Shape& shape : {Shape{2, 5, 9, 7}, Shape{3, 70, 4, 4}, Shape{1, 130, 1, 3}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.str());
      const Shape pooled{shape[0], shape[1], 1, 1};
      const Tensor x = testing::random_tensor(shape, dtype, ctx.stream(), 7);
      const Tensor y = poisoned(pooled, dtype, MemoryFormat::contiguous),
                   y_last = poisoned(pooled, dtype, MemoryFormat::contiguous);
      global_avg_pool2d_forward(ctx, x, y);
      adaptive_avg_pool2d_forward(ctx, channels_last(x), y_last);  // a 1 x 1 output is global pooling
      EXPECT_TRUE(testing::identical_values(values(y_last), values(y)));

      const Tensor dy = testing::random_tensor(pooled, dtype, ctx.stream(), 8);
      const Tensor dx = poisoned(shape, dtype, MemoryFormat::contiguous);
      global_avg_pool2d_backward(ctx, dy, dx);
      const Tensor dx_last = poisoned(shape, dtype, MemoryFormat::channels_last);
      adaptive_avg_pool2d_backward(ctx, dy, dx_last);
      EXPECT_TRUE(testing::identical_values(values(dx_last), values(dx)));
    }
  }
}

TEST_F(PoolChannelsLast, MixedFormatsAndOtherPoolingAreRefusedByName) {
  const ChannelsLastPoolCase& c = kChannelsLastPoolCases[0];
  const Shape out = pool2d_output_shape("test", c.x, c.g);
  const Tensor x_last = channels_last(input(c.x, DType::f32, 3));
  EXPECT_ERROR_MENTIONS("argument 'y' is contiguous, 'x' channels-last",
                        max_pool2d_forward(ctx, x_last, c.g, poisoned(out, DType::f32, MemoryFormat::contiguous),
                                           poisoned(out, DType::i32, MemoryFormat::channels_last)));
  EXPECT_ERROR_MENTIONS("argument 'indices' is contiguous, 'dx' channels-last",
                        max_pool2d_backward(ctx, poisoned(out, DType::f32, MemoryFormat::channels_last),
                                            poisoned(out, DType::i32, MemoryFormat::contiguous), c.g,
                                            poisoned(c.x, DType::f32, MemoryFormat::channels_last)));
  // Average pooling with a window, and adaptive pooling to more than one output, read row-major only.
  EXPECT_ERROR_MENTIONS(
      "which this op does not read",
      avg_pool2d_forward(ctx, x_last, c.g, true, poisoned(out, DType::f32, MemoryFormat::channels_last)));
  EXPECT_ERROR_MENTIONS(
      "which this op does not read",
      adaptive_avg_pool2d_forward(ctx, x_last, poisoned(Shape{2, 5, 2, 2}, DType::f32, MemoryFormat::contiguous)));
}

}  // namespace
}  // namespace baton::kernels
