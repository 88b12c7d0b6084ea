// Adaptive average pooling on the CPU against PyTorch's adaptive windows (floor and ceil in
// floating point), every floating dtype, and its 1 x 1 case against global pooling.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/pool.h"
#include "tests/kernels/cpu_op_test.h"
#include "tests/kernels/op_test_support.h"
#include "tests/kernels/pool_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using pool_test::AvgReference;
using testing::kFloatingDTypes;

using PoolCpu = testing::CpuOpTest;

// PyTorch's adaptive windows, with floor and ceil in floating point (the op uses integer division).
struct AdaptiveCase {
  Shape input;
  int64_t out_h, out_w;
};

std::pair<int64_t, int64_t> adaptive_window(int64_t o, int64_t in, int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  return {static_cast<int64_t>(std::floor(static_cast<double>(o) * scale)),
          static_cast<int64_t>(std::ceil(static_cast<double>(o + 1) * scale))};
}

// y: window means; dx: dy / window size scattered to every element of the window.
AvgReference adaptive_reference(const AdaptiveCase& c, const std::vector<double>& x, const std::vector<double>& dy) {
  const int64_t planes = c.input[0] * c.input[1], H = c.input[2], W = c.input[3];
  AvgReference r{std::vector<double>(static_cast<size_t>(planes * c.out_h * c.out_w), 0.0),
                 std::vector<double>(x.size(), 0.0)};
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t oh = 0; oh < c.out_h; ++oh) {
      for (int64_t ow = 0; ow < c.out_w; ++ow) {
        const auto [h0, h1] = adaptive_window(oh, H, c.out_h);
        const auto [w0, w1] = adaptive_window(ow, W, c.out_w);
        const auto size = static_cast<double>((h1 - h0) * (w1 - w0));
        const auto o = static_cast<size_t>((plane * c.out_h + oh) * c.out_w + ow);
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const auto i = static_cast<size_t>((plane * H + h) * W + w);
            r.y[o] += x[i] / size;
            r.dx[i] += dy[o] / size;
          }
        }
      }
    }
  }
  return r;
}

TEST_F(PoolCpu, AdaptiveAvgPoolMatchesTheReference) {
  // Exact divisions (VGG's 14 -> 7), overlapping windows (13 -> 6, AlexNet's size), outputs larger
  // than the input (1 -> 7, 2 -> 3), non-square, identity, and 1 x 1 (the global pooling path).
  const AdaptiveCase cases[] = {{Shape{2, 3, 14, 14}, 7, 7}, {Shape{1, 4, 13, 13}, 6, 6}, {Shape{2, 2, 1, 1}, 7, 7},
                                {Shape{1, 2, 2, 5}, 3, 2},   {Shape{3, 1, 9, 4}, 4, 4},   {Shape{2, 3, 5, 5}, 5, 5},
                                {Shape{2, 3, 6, 7}, 1, 1},   {Shape{1, 1, 10, 3}, 3, 1}};
  for (const AdaptiveCase& c : cases) {
    for (DType dtype : kFloatingDTypes) {
      SCOPED_TRACE(c.input.str() + " -> " + std::to_string(c.out_h) + "x" + std::to_string(c.out_w) + " " +
                   std::string(dtype_name(dtype)));
      const Shape out{c.input[0], c.input[1], c.out_h, c.out_w};
      const Tensor x = testing::random_tensor(c.input, dtype, ctx.stream(), 31);
      const Tensor dy = testing::random_tensor(out, dtype, ctx.stream(), 32);
      const Tensor y = poisoned(out, dtype), dx = poisoned(c.input, dtype);
      adaptive_avg_pool2d_forward(ctx, x, y);
      adaptive_avg_pool2d_backward(ctx, dy, dx);
      const AvgReference r = adaptive_reference(c, values(x), values(dy));
      const double tol = testing::default_tolerance(dtype);
      EXPECT_TRUE(testing::all_close(values(y), r.y, tol, tol));
      EXPECT_TRUE(testing::all_close(values(dx), r.dx, tol, tol));
    }
  }
}

TEST_F(PoolCpu, AdaptiveAvgPoolToOneIsGlobalPooling) {
  const Tensor x = testing::random_tensor(Shape{3, 5, 6, 7}, DType::f32, ctx.stream(), 33);
  const Tensor dy = testing::random_tensor(Shape{3, 5, 1, 1}, DType::f32, ctx.stream(), 34);
  const Tensor y = poisoned(Shape{3, 5, 1, 1}, DType::f32), global_y = poisoned(Shape{3, 5, 1, 1}, DType::f32);
  const Tensor dx = poisoned(x.shape(), DType::f32), global_dx = poisoned(x.shape(), DType::f32);
  adaptive_avg_pool2d_forward(ctx, x, y);
  adaptive_avg_pool2d_backward(ctx, dy, dx);
  global_avg_pool2d_forward(ctx, x, global_y);
  global_avg_pool2d_backward(ctx, dy, global_dx);
  EXPECT_TRUE(testing::identical_values(values(y), values(global_y)));
  EXPECT_TRUE(testing::identical_values(values(dx), values(global_dx)));
}

}  // namespace
}  // namespace baton::kernels
