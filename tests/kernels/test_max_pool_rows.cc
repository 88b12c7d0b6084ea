// Max pooling's row-at-a-time CPU forward (kernels/cpu/max_pool_rows.h) against max_pool_window output by
// output: the same bits and the same indices, with ties, NaNs and infinities in the input, over strides
// 1, 2 and 3, padding, dilation, windows wider than the input and rows with no tap inside.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/pool_cpu.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cpu {
namespace {

// Values drawn from a few levels, so that windows hold ties, with NaNs and infinities sprinkled in.
template <typename T>
std::vector<T> pool_input(int64_t n, bool specials) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double x = static_cast<double>((i * 7919) % 13) - 6.0;
    if (specials && i % 17 == 5) x = std::numeric_limits<double>::quiet_NaN();
    if (specials && i % 23 == 11) x = std::numeric_limits<double>::infinity();
    if (specials && i % 29 == 3) x = -std::numeric_limits<double>::infinity();
    v[static_cast<size_t>(i)] = store<T>(static_cast<Acc<T>>(x));
  }
  return v;
}

std::string geometry_text(const PoolPlane& p) {
  return "in " + std::to_string(p.in_h) + "x" + std::to_string(p.in_w) + ", kernel " + std::to_string(p.kernel_h) +
         "x" + std::to_string(p.kernel_w) + ", stride " + std::to_string(p.stride_h) + "x" +
         std::to_string(p.stride_w) + ", padding " + std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) +
         ", dilation " + std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w);
}

template <typename T>
void expect_rows_equal_windows(const PoolPlane& p, bool specials) {
  constexpr int64_t kPlanes = 3;
  const std::vector<T> x = pool_input<T>(kPlanes * p.in_h * p.in_w, specials);
  const int64_t out_plane = p.out_h * p.out_w;
  std::vector<T> y(static_cast<size_t>(kPlanes * out_plane));
  std::vector<int64_t> indices(y.size());
  max_pool2d_forward(x.data(), kPlanes, p, y.data(), indices.data());
  for (int64_t plane = 0; plane < kPlanes; ++plane) {
    const T* in = x.data() + plane * p.in_h * p.in_w;
    for (int64_t o = 0; o < out_plane; ++o) {
      int64_t index = -1;
      const T expected = store<T>(max_pool_window<Acc<T>>(
          p, o / p.out_w, o % p.out_w, [in](int64_t i) { return load(in[i]); }, index));
      const size_t at = static_cast<size_t>(plane * out_plane + o);
      ASSERT_EQ(std::memcmp(&y[at], &expected, sizeof(T)), 0)
          << geometry_text(p) << ", plane " << plane << ", output " << o << ": " << static_cast<double>(load(y[at]))
          << " against " << static_cast<double>(load(expected));
      ASSERT_EQ(indices[at], index) << geometry_text(p) << ", plane " << plane << ", output " << o;
    }
  }
}

PoolPlane plane_of(int64_t in_h, int64_t in_w, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  PoolPlane p;
  p.in_h = in_h;
  p.in_w = in_w;
  p.kernel_h = p.kernel_w = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.out_h = (in_h + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  p.out_w = (in_w + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  return p;
}

TEST(MaxPoolRows, EveryOutputHasTheWindowsMaximumAndIndex) {
  std::vector<PoolPlane> planes;
  for (const int64_t stride : {1, 2, 3}) {
    for (const int64_t kernel : {1, 2, 3}) {
      for (const int64_t dilation : {1, 2}) {
        for (int64_t pad = 0; pad <= kernel / 2; ++pad) {
          for (const int64_t size : {int64_t{5}, int64_t{17}, int64_t{40}}) {
            if (size + 2 * pad >= dilation * (kernel - 1) + 1)
              planes.push_back(plane_of(size, size, kernel, stride, pad, dilation));
          }
        }
      }
    }
  }
  planes.push_back(plane_of(112, 112, 3, 2, 1, 1));  // ResNet's stem
  PoolPlane tall = plane_of(9, 4, 3, 1, 1, 1);       // no interior column is wider than the input
  tall.kernel_w = 6;
  tall.pad_w = 3;
  tall.out_w = (tall.in_w + 2 * tall.pad_w - tall.kernel_w) / tall.stride_w + 1;
  planes.push_back(tall);
  PoolPlane empty_rows = plane_of(4, 12, 2, 2, 0, 1);  // padding beyond a kernel's reach: rows with no tap inside
  empty_rows.pad_h = 3;
  empty_rows.out_h = (empty_rows.in_h + 2 * empty_rows.pad_h - empty_rows.kernel_h) / empty_rows.stride_h + 1;
  planes.push_back(empty_rows);
  for (const PoolPlane& p : planes) {
    for (const bool specials : {false, true}) {
      expect_rows_equal_windows<float>(p, specials);
      expect_rows_equal_windows<double>(p, specials);
      expect_rows_equal_windows<BFloat16>(p, specials);
    }
  }
}

}  // namespace
}  // namespace baton::kernels::cpu
