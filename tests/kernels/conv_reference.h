// Shared by the convolution tests: the problems every test runs (stride 2, padding, dilation 2,
// groups 2, depthwise, 1×1, batch 1, non-square kernels, asymmetric parameters) and a naive
// seven-loop float64 reference of the three passes.
#pragma once

#include <string>
#include <vector>

#include "kernels/conv.h"
#include "runtime/core/shape.h"

namespace baton::testing {

struct ConvCase {
  std::string name;
  Shape x, w;
  kernels::Conv2dParams params;
};

inline std::vector<ConvCase> conv_cases() {
  using P = kernels::Conv2dParams;
  return {
      {"3x3 pad 1", Shape{2, 3, 7, 6}, Shape{4, 3, 3, 3}, P{.padding = {1, 1}}},
      {"3x3 stride 2", Shape{2, 4, 9, 8}, Shape{5, 4, 3, 3}, P{.stride = {2, 2}, .padding = {1, 1}}},
      {"3x3 dilation 2", Shape{1, 3, 10, 9}, Shape{2, 3, 3, 3}, P{.padding = {2, 2}, .dilation = {2, 2}}},
      {"groups 2", Shape{2, 4, 6, 7}, Shape{6, 2, 3, 3}, P{.padding = {1, 1}, .groups = 2}},
      {"depthwise stride 2", Shape{2, 5, 8, 8}, Shape{5, 1, 3, 3}, P{.stride = {2, 2}, .padding = {1, 1}, .groups = 5}},
      {"depthwise multiplier 2", Shape{1, 3, 5, 5}, Shape{6, 1, 3, 3}, P{.groups = 3}},
      {"1x1", Shape{3, 8, 5, 4}, Shape{6, 8, 1, 1}, P{}},
      {"1x1 stride 2", Shape{2, 8, 7, 7}, Shape{4, 8, 1, 1}, P{.stride = {2, 2}}},
      {"1x1 groups 2", Shape{2, 6, 4, 4}, Shape{4, 3, 1, 1}, P{.groups = 2}},
      {"1x1 padded", Shape{1, 2, 3, 3}, Shape{3, 2, 1, 1}, P{.padding = {1, 0}}},
      {"non-square 2x5", Shape{2, 3, 9, 11}, Shape{4, 3, 2, 5},
       P{.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}}},
      {"kernel covers input", Shape{1, 2, 5, 5}, Shape{3, 2, 5, 5}, P{}},
      {"7x7 stride 2 stem", Shape{1, 3, 16, 16}, Shape{4, 3, 7, 7}, P{.stride = {2, 2}, .padding = {3, 3}}},
      {"stride 3 over 2x2", Shape{1, 2, 9, 10}, Shape{2, 2, 2, 2}, P{.stride = {3, 3}}},
      {"1xN row", Shape{2, 2, 1, 9}, Shape{3, 2, 1, 3}, P{.padding = {0, 1}}},
  };
}

// The three passes in float64 by the definition: for every output element y[n, k, p, q] and every
// tap (c, r, s) of its group that lands inside the input, y += x · w, dx += dy · w, dw += x · dy.
struct ConvReference {
  std::vector<double> y, dx, dw;
};

inline ConvReference conv_reference(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                                    const std::vector<double>& dy) {
  const int64_t n_ = c.x[0], ch = c.x[1], h = c.x[2], wd = c.x[3];
  const int64_t k_ = c.w[0], cg = c.w[1], r_ = c.w[2], s_ = c.w[3];
  const Shape ys = kernels::conv2d_output_shape(c.x, c.w, c.params);
  const int64_t p_ = ys[2], q_ = ys[3], kg = k_ / c.params.groups;
  ConvReference ref{std::vector<double>(static_cast<size_t>(ys.numel()), 0.0), std::vector<double>(x.size(), 0.0),
                    std::vector<double>(w.size(), 0.0)};
  for (int64_t n = 0; n < n_; ++n) {
    for (int64_t k = 0; k < k_; ++k) {
      const int64_t group = k / kg;
      for (int64_t p = 0; p < p_; ++p) {
        for (int64_t q = 0; q < q_; ++q) {
          const auto yi = static_cast<size_t>(((n * k_ + k) * p_ + p) * q_ + q);
          for (int64_t cc = 0; cc < cg; ++cc) {
            for (int64_t r = 0; r < r_; ++r) {
              for (int64_t s = 0; s < s_; ++s) {
                const int64_t ih = p * c.params.stride[0] - c.params.padding[0] + r * c.params.dilation[0];
                const int64_t iw = q * c.params.stride[1] - c.params.padding[1] + s * c.params.dilation[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                const auto xi = static_cast<size_t>(((n * ch + group * cg + cc) * h + ih) * wd + iw);
                const auto wi = static_cast<size_t>(((k * cg + cc) * r_ + r) * s_ + s);
                ref.y[yi] += x[xi] * w[wi];
                ref.dx[xi] += dy[yi] * w[wi];
                ref.dw[wi] += x[xi] * dy[yi];
              }
            }
          }
        }
      }
    }
  }
  return ref;
}

// y + bias[k] at every output element of channel k ([N, K, P, Q] row-major values).
inline std::vector<double> plus_bias(std::vector<double> y, const std::vector<double>& bias, const Shape& ys) {
  const int64_t spatial = ys[2] * ys[3];
  for (size_t i = 0; i < y.size(); ++i) y[i] += bias[static_cast<size_t>(static_cast<int64_t>(i) / spatial % ys[1])];
  return y;
}

// db + the sum of dy over each channel's elements (the accumulated bias gradient).
inline std::vector<double> plus_bias_grad(std::vector<double> db, const std::vector<double>& dy, const Shape& ys) {
  const int64_t spatial = ys[2] * ys[3];
  for (size_t i = 0; i < dy.size(); ++i) db[static_cast<size_t>(static_cast<int64_t>(i) / spatial % ys[1])] += dy[i];
  return db;
}

}  // namespace baton::testing
