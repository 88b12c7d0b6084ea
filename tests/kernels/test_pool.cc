// Pooling ops on the CPU against plain float64 references written here (windows enumerated tap by
// tap, gradients scattered from the outputs): several geometries (padding, stride, dilation,
// ceil_mode, non-square), every floating dtype, i32 and i64 indices, poisoned outputs, NaN and
// ties, and PyTorch's output sizes. Adaptive windows: test_pool_adaptive.cc; argument errors:
// test_pool_arguments.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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
using pool_test::geometry;
using testing::kFloatingDTypes;

// Output size by PyTorch's formula, in floating point (a different computation from the op's).
int64_t reference_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  auto out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

struct PoolCase {
  Shape input;
  Pool2dGeometry g;
};

// Geometries with and without dilation (average pooling takes the ones without).
std::vector<PoolCase> cases(bool with_dilation) {
  std::vector<PoolCase> out = {
      {Shape{2, 3, 6, 8}, geometry({2, 2}, {2, 2}, {0, 0}, {1, 1}, false)},
      {Shape{2, 2, 7, 9}, geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, false)},  // ResNet's stem pool
      {Shape{1, 3, 7, 9}, geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, true)},
      {Shape{3, 1, 6, 5}, geometry({3, 2}, {1, 2}, {1, 1}, {1, 1}, true)},
      {Shape{1, 2, 5, 6}, geometry({2, 3}, {3, 2}, {1, 1}, {1, 1}, true)},  // windows past the padding
      {Shape{2, 2, 6, 6}, geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, true)},  // last window past in + pad
      {Shape{1, 1, 4, 5}, geometry({1, 1}, {1, 1}, {0, 0}, {1, 1}, false)},
      {Shape{2, 3, 5, 5}, geometry({5, 5}, {1, 1}, {2, 2}, {1, 1}, false)},  // overlapping, heavy padding
  };
  if (with_dilation) {
    out.push_back({Shape{2, 2, 9, 8}, geometry({3, 3}, {2, 1}, {1, 0}, {2, 3}, true)});
    out.push_back({Shape{1, 2, 7, 7}, geometry({2, 2}, {1, 1}, {1, 1}, {2, 2}, false)});
  }
  return out;
}

std::string describe(const PoolCase& c) {
  const Pool2dGeometry& g = c.g;
  return c.input.str() + " k " + std::to_string(g.kernel[0]) + "x" + std::to_string(g.kernel[1]) + " s " +
         std::to_string(g.stride[0]) + "," + std::to_string(g.stride[1]) + " p " + std::to_string(g.padding[0]) + "," +
         std::to_string(g.padding[1]) + " d " + std::to_string(g.dilation[0]) + "," + std::to_string(g.dilation[1]) +
         (g.ceil_mode ? " ceil" : "");
}

Shape out_shape(const PoolCase& c) {
  const Pool2dGeometry& g = c.g;
  return Shape{c.input[0], c.input[1],
               reference_size(c.input[2], g.kernel[0], g.stride[0], g.padding[0], g.dilation[0], g.ceil_mode),
               reference_size(c.input[3], g.kernel[1], g.stride[1], g.padding[1], g.dilation[1], g.ceil_mode)};
}

// Visits every tap of every window: fn(output index, input index or -1 for padding, whether the
// tap lies in the padded input [−p, in + p)).
template <typename Fn>
void for_each_tap(const PoolCase& c, const Fn& fn) {
  const Shape out = out_shape(c);
  const Pool2dGeometry& g = c.g;
  const int64_t planes = c.input[0] * c.input[1], H = c.input[2], W = c.input[3], OH = out[2], OW = out[3];
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
          for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
            const int64_t h = oh * g.stride[0] - g.padding[0] + kh * g.dilation[0];
            const int64_t w = ow * g.stride[1] - g.padding[1] + kw * g.dilation[1];
            const bool inside = h >= 0 && h < H && w >= 0 && w < W;
            const bool in_padded =
                h >= -g.padding[0] && h < H + g.padding[0] && w >= -g.padding[1] && w < W + g.padding[1];
            fn((plane * OH + oh) * OW + ow, inside ? (plane * H + h) * W + w : -1, in_padded);
          }
        }
      }
    }
  }
}

struct MaxReference {
  std::vector<double> y, indices;  // indices within the plane
};

MaxReference max_reference(const PoolCase& c, const std::vector<double>& x) {
  const int64_t n_out = out_shape(c).numel(), plane_size = c.input[2] * c.input[3];
  MaxReference r{std::vector<double>(static_cast<size_t>(n_out), -INFINITY),
                 std::vector<double>(static_cast<size_t>(n_out), -1.0)};
  std::vector<bool> seen(static_cast<size_t>(n_out), false);
  for_each_tap(c, [&](int64_t o, int64_t i, bool) {
    if (i < 0) return;
    const auto k = static_cast<size_t>(o);
    const double v = x[static_cast<size_t>(i)];
    if (!seen[k] || v > r.y[k] || std::isnan(v)) {
      seen[k] = true;
      r.y[k] = v;
      r.indices[k] = static_cast<double>(i % plane_size);
    }
  });
  return r;
}

// dx[i] = Σ dy[o] over the windows o whose maximum is element i (scattered).
std::vector<double> max_grad_reference(const PoolCase& c, const MaxReference& r, const std::vector<double>& dy) {
  std::vector<double> dx(static_cast<size_t>(c.input.numel()), 0.0);
  const Shape out = out_shape(c);
  const int64_t plane_out = out[2] * out[3], plane_in = c.input[2] * c.input[3];
  for (size_t o = 0; o < dy.size(); ++o) {
    const auto plane = static_cast<int64_t>(o) / plane_out;
    if (r.indices[o] >= 0) dx[static_cast<size_t>(plane * plane_in + static_cast<int64_t>(r.indices[o]))] += dy[o];
  }
  return dx;
}

// Window sums and divisors (taps counted one by one), then the means and the scattered gradient.
AvgReference avg_reference(const PoolCase& c, bool count_include_pad, const std::vector<double>& x,
                           const std::vector<double>& dy) {
  const auto n_out = static_cast<size_t>(out_shape(c).numel());
  std::vector<double> sum(n_out, 0.0), inside(n_out, 0.0), padded(n_out, 0.0);
  for_each_tap(c, [&](int64_t o, int64_t i, bool in_padded) {
    const auto k = static_cast<size_t>(o);
    if (i >= 0) {
      sum[k] += x[static_cast<size_t>(i)];
      inside[k] += 1;
    }
    if (in_padded) padded[k] += 1;
  });
  AvgReference r{std::vector<double>(n_out, 0.0), std::vector<double>(static_cast<size_t>(c.input.numel()), 0.0)};
  const auto divisor = [&](size_t k) { return count_include_pad ? padded[k] : inside[k]; };
  for (size_t k = 0; k < n_out; ++k) r.y[k] = inside[k] > 0 ? sum[k] / divisor(k) : 0.0;
  for_each_tap(c, [&](int64_t o, int64_t i, bool) {
    if (i >= 0) r.dx[static_cast<size_t>(i)] += dy[static_cast<size_t>(o)] / divisor(static_cast<size_t>(o));
  });
  return r;
}

using PoolCpu = testing::CpuOpTest;

TEST_F(PoolCpu, OutputSizesFollowPyTorch) {
  // Values torch.nn.functional.max_pool2d gives.
  EXPECT_EQ(pool_output_size(112, 3, 2, 1, 1, false), 56);
  EXPECT_EQ(pool_output_size(5, 2, 2, 0, 1, false), 2);
  EXPECT_EQ(pool_output_size(5, 2, 2, 0, 1, true), 3);
  EXPECT_EQ(pool_output_size(5, 2, 2, 1, 1, true), 3);  // ceil gives 4, but that window starts past 5 + 1
  EXPECT_EQ(pool_output_size(6, 3, 2, 1, 1, true), 4);
  EXPECT_EQ(pool_output_size(7, 3, 1, 0, 2, false), 3);
  EXPECT_EQ(pool_output_size(1, 1, 1, 0, 1, false), 1);
  EXPECT_EQ(pool_output_size(2, 3, 1, 0, 1, false), 0);  // too small
  for (const PoolCase& c : cases(true)) {
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(pool2d_output_shape("test", c.input, c.g), out_shape(c));
  }
}

TEST_F(PoolCpu, MaxPoolMatchesTheReference) {
  for (const PoolCase& c : cases(true)) {
    for (DType dtype : kFloatingDTypes) {
      for (DType index_dtype : {DType::i32, DType::i64}) {
        SCOPED_TRACE(describe(c) + " " + std::string(dtype_name(dtype)) + " " + std::string(dtype_name(index_dtype)));
        const Shape out = out_shape(c);
        const Tensor x = testing::random_tensor(c.input, dtype, ctx.stream(), 11);
        const Tensor dy = testing::random_tensor(out, dtype, ctx.stream(), 12);
        const Tensor y = poisoned(out, dtype), indices = poisoned(out, index_dtype), dx = poisoned(c.input, dtype);
        max_pool2d_forward(ctx, x, c.g, y, indices);
        max_pool2d_backward(ctx, dy, indices, c.g, dx);
        const MaxReference r = max_reference(c, values(x));
        EXPECT_TRUE(testing::identical_values(values(y), r.y));
        EXPECT_TRUE(testing::identical_values(values(indices), r.indices));
        const double tol = testing::default_tolerance(dtype);
        EXPECT_TRUE(testing::all_close(values(dx), max_grad_reference(c, r, values(dy)), tol, tol));
      }
    }
  }
}

TEST_F(PoolCpu, MaxPoolNaNWinsAndTiesKeepTheFirst) {
  const PoolCase c{Shape{1, 1, 4, 4}, geometry({2, 2}, {2, 2}, {0, 0}, {1, 1}, false)};
  std::vector<double> x(16, 0.5);  // every window a tie
  x[5] = NAN;                      // window (0, 0): NaN at (1, 1), the last tap
  x[2] = NAN;                      // window (0, 1): two NaN, the last one (1, 3) wins
  x[7] = NAN;
  const Tensor tx = testing::from_doubles(x, c.input, DType::f32, ctx.stream());
  const Tensor y = poisoned(Shape{1, 1, 2, 2}, DType::f32), indices = poisoned(Shape{1, 1, 2, 2}, DType::i64);
  max_pool2d_forward(ctx, tx, c.g, y, indices);
  const std::vector<double> yv = values(y);
  EXPECT_TRUE(std::isnan(yv[0]) && std::isnan(yv[1]));
  EXPECT_EQ(yv[2], 0.5);
  EXPECT_EQ(yv[3], 0.5);
  EXPECT_EQ(values(indices), (std::vector<double>{5, 7, 8, 10}));  // ties: the window's first element

  // The gradient of a tie goes to the chosen element only.
  const Tensor dy = testing::from_doubles({1, 2, 3, 4}, Shape{1, 1, 2, 2}, DType::f32, ctx.stream());
  const Tensor dx = poisoned(c.input, DType::f32);
  max_pool2d_backward(ctx, dy, indices, c.g, dx);
  std::vector<double> expected(16, 0.0);
  expected[5] = 1;
  expected[7] = 2;
  expected[8] = 3;
  expected[10] = 4;
  EXPECT_EQ(values(dx), expected);
}

TEST_F(PoolCpu, MaxPoolWindowWhollyInThePadding) {
  // Kernel 2 with dilation 3 and padding 1 over 2 rows: window 0's taps are rows -1 and 2.
  const PoolCase c{Shape{1, 1, 2, 3}, geometry({2, 1}, {1, 1}, {1, 0}, {3, 1}, false)};
  ASSERT_EQ(out_shape(c), (Shape{1, 1, 1, 3}));
  const Tensor x = testing::random_tensor(c.input, DType::f64, ctx.stream(), 13);
  const Tensor y = poisoned(Shape{1, 1, 1, 3}, DType::f64), indices = poisoned(Shape{1, 1, 1, 3}, DType::i32);
  max_pool2d_forward(ctx, x, c.g, y, indices);
  EXPECT_EQ(values(y), std::vector<double>(3, -INFINITY));
  EXPECT_EQ(values(indices), std::vector<double>(3, -1.0));
  const Tensor dx = poisoned(c.input, DType::f64);
  max_pool2d_backward(ctx, testing::random_tensor(Shape{1, 1, 1, 3}, DType::f64, ctx.stream(), 14), indices, c.g, dx);
  EXPECT_EQ(values(dx), std::vector<double>(6, 0.0));
}

TEST_F(PoolCpu, AvgPoolMatchesTheReference) {
  for (const PoolCase& c : cases(false)) {
    for (bool count_include_pad : {true, false}) {
      for (DType dtype : kFloatingDTypes) {
        SCOPED_TRACE(describe(c) + (count_include_pad ? " count_include_pad " : " ") + std::string(dtype_name(dtype)));
        const Shape out = out_shape(c);
        const Tensor x = testing::random_tensor(c.input, dtype, ctx.stream(), 15);
        const Tensor dy = testing::random_tensor(out, dtype, ctx.stream(), 16);
        const Tensor y = poisoned(out, dtype), dx = poisoned(c.input, dtype);
        avg_pool2d_forward(ctx, x, c.g, count_include_pad, y);
        avg_pool2d_backward(ctx, dy, c.g, count_include_pad, dx);
        const AvgReference r = avg_reference(c, count_include_pad, values(x), values(dy));
        const double tol = testing::default_tolerance(dtype);
        EXPECT_TRUE(testing::all_close(values(y), r.y, tol, tol));
        EXPECT_TRUE(testing::all_close(values(dx), r.dx, tol, tol));
      }
    }
  }
}

TEST_F(PoolCpu, AvgPoolDivisorsDependOnCountIncludePad) {
  // 3x3 windows, stride 2, padding 1, ceil_mode over 6x6: the corner window holds 4 input elements
  // of 9 taps; the last window reaches row 7, past the padded input (rows -1 .. 6), so it counts 6.
  const PoolCase c{Shape{1, 1, 6, 6}, geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, true)};
  const Tensor x = testing::from_doubles(std::vector<double>(36, 1.0), c.input, DType::f64, ctx.stream());
  for (bool count_include_pad : {true, false}) {
    const Tensor y = poisoned(Shape{1, 1, 4, 4}, DType::f64);
    avg_pool2d_forward(ctx, x, c.g, count_include_pad, y);
    const std::vector<double> v = values(y);
    EXPECT_DOUBLE_EQ(v[0], count_include_pad ? 4.0 / 9.0 : 1.0);
    EXPECT_DOUBLE_EQ(v[15], count_include_pad ? 1.0 / 4.0 : 1.0);  // one element, 2 x 2 padded taps
    EXPECT_DOUBLE_EQ(v[5], 1.0);                                   // an interior window
  }
}

TEST_F(PoolCpu, GlobalAvgPoolMatchesTheReference) {
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{1, 1, 1, 1}, Shape{3, 7, 1, 9}, Shape{2, 5, 7, 7}}) {
    for (DType dtype : kFloatingDTypes) {
      SCOPED_TRACE(shape.str() + " " + std::string(dtype_name(dtype)));
      const int64_t planes = shape[0] * shape[1], hw = shape[2] * shape[3];
      const Shape pooled{shape[0], shape[1], 1, 1};
      const Tensor x = testing::random_tensor(shape, dtype, ctx.stream(), 17);
      const Tensor dy = testing::random_tensor(pooled, dtype, ctx.stream(), 18);
      const Tensor y = poisoned(pooled, dtype), dx = poisoned(shape, dtype);
      global_avg_pool2d_forward(ctx, x, y);
      global_avg_pool2d_backward(ctx, dy, dx);
      const std::vector<double> xv = values(x), gv = values(dy);
      std::vector<double> ey(static_cast<size_t>(planes), 0.0), edx(static_cast<size_t>(shape.numel()));
      for (int64_t i = 0; i < shape.numel(); ++i) {
        ey[static_cast<size_t>(i / hw)] += xv[static_cast<size_t>(i)] / static_cast<double>(hw);
        edx[static_cast<size_t>(i)] = gv[static_cast<size_t>(i / hw)] / static_cast<double>(hw);
      }
      const double tol = testing::default_tolerance(dtype);
      EXPECT_TRUE(testing::all_close(values(y), ey, tol, tol));
      EXPECT_TRUE(testing::all_close(values(dx), edx, tol, tol));
    }
  }
}

}  // namespace
}  // namespace baton::kernels
