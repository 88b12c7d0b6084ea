// The float64 references of the CPU batch-norm tests (the backward one in Ioffe and Szegedy's
// step-by-step form) and their fixture, BatchNormCpu.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/core/shape.h"
#include "tests/kernels/cpu_op_test.h"
#include "tests/support/test_support.h"

namespace baton::testing {
namespace batch_norm_ref {

inline constexpr double kEps = 1e-3;  // large enough that a wrong placement of eps shows
inline constexpr double kMomentum = 0.3;

inline const Shape kShapes[] = {Shape{2, 3, 4, 5}, Shape{5, 2, 1, 1}, Shape{1, 4, 3, 3}, Shape{3, 1, 7, 2}};

// Calls fn(channel, index) for every element of an NCHW shape.
template <typename Fn>
void for_each_element(const Shape& s, const Fn& fn) {
  const int64_t hw = s[2] * s[3];
  for (int64_t i = 0; i < s.numel(); ++i) fn(static_cast<size_t>((i / hw) % s[1]), static_cast<size_t>(i));
}

struct Stats {
  std::vector<double> mean, var;  // biased variance
};

inline Stats batch_stats(const Shape& s, const std::vector<double>& x) {
  const auto channels = static_cast<size_t>(s[1]);
  const double m = static_cast<double>(s[0] * s[2] * s[3]);
  Stats st{std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  for_each_element(s, [&](size_t c, size_t i) { st.mean[c] += x[i] / m; });
  for_each_element(s, [&](size_t c, size_t i) { st.var[c] += (x[i] - st.mean[c]) * (x[i] - st.mean[c]) / m; });
  return st;
}

// y = (x − mean)/sqrt(var + eps)·γ + β (γ = 1, β = 0 when empty).
inline std::vector<double> normalise(const Shape& s, const std::vector<double>& x, const Stats& st,
                                     const std::vector<double>& w, const std::vector<double>& b) {
  std::vector<double> y(x.size());
  for_each_element(s, [&](size_t c, size_t i) {
    y[i] = (x[i] - st.mean[c]) / std::sqrt(st.var[c] + kEps) * (w.empty() ? 1.0 : w[c]) + (b.empty() ? 0.0 : b[c]);
  });
  return y;
}

struct Grads {
  std::vector<double> dx, dw, db;
};

// Backward through batch statistics, step by step: dx̂ = dy·γ, dvar, dmean, then dx.
inline Grads train_backward(const Shape& s, const std::vector<double>& x, const std::vector<double>& dy,
                            const std::vector<double>& w) {
  const Stats st = batch_stats(s, x);
  const auto channels = static_cast<size_t>(s[1]);
  const double m = static_cast<double>(s[0] * s[2] * s[3]);
  std::vector<double> dvar(channels, 0.0), dmean(channels, 0.0), sum_xc(channels, 0.0);
  Grads g{std::vector<double>(x.size()), std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  const auto gamma = [&](size_t c) { return w.empty() ? 1.0 : w[c]; };
  for_each_element(s, [&](size_t c, size_t i) {
    const double xc = x[i] - st.mean[c], dxhat = dy[i] * gamma(c);
    dvar[c] += dxhat * xc * -0.5 * std::pow(st.var[c] + kEps, -1.5);
    dmean[c] += -dxhat / std::sqrt(st.var[c] + kEps);
    sum_xc[c] += -2.0 * xc;
    g.dw[c] += dy[i] * xc / std::sqrt(st.var[c] + kEps);
    g.db[c] += dy[i];
  });
  for (size_t c = 0; c < channels; ++c) dmean[c] += dvar[c] * sum_xc[c] / m;
  for_each_element(s, [&](size_t c, size_t i) {
    g.dx[i] = dy[i] * gamma(c) / std::sqrt(st.var[c] + kEps) + dvar[c] * 2.0 * (x[i] - st.mean[c]) / m + dmean[c] / m;
  });
  return g;
}

// Backward with constant statistics.
inline Grads eval_backward(const Shape& s, const std::vector<double>& x, const std::vector<double>& dy,
                           const std::vector<double>& w, const Stats& st) {
  const auto channels = static_cast<size_t>(s[1]);
  Grads g{std::vector<double>(x.size()), std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  for_each_element(s, [&](size_t c, size_t i) {
    const double invstd = 1.0 / std::sqrt(st.var[c] + kEps);
    g.dx[i] = dy[i] * (w.empty() ? 1.0 : w[c]) * invstd;
    g.dw[c] += dy[i] * (x[i] - st.mean[c]) * invstd;
    g.db[c] += dy[i];
  });
  return g;
}

inline std::vector<double> batch_norm_plus(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

}  // namespace batch_norm_ref

class BatchNormCpu : public CpuOpTest {
 protected:
  ::testing::AssertionResult close(const Tensor& actual, const std::vector<double>& expected) {
    const double tol = actual.dtype() == DType::f64 ? 1e-11 : 2e-5;
    return all_close(values(actual), expected, tol, tol);
  }

  // backward(dx, weight_grad, bias_grad) against `ref`: with every output (the parameter gradients
  // accumulating onto random values), with dx alone, and with the parameter gradients alone.
  template <typename Backward>
  void expect_backward(const Shape& s, DType dtype, const batch_norm_ref::Grads& ref, const Backward& backward) {
    const Shape c{s[1]};
    const Tensor dx = poisoned(s, dtype), dw = random(c, dtype, 17), db = random(c, dtype, 18);
    const std::vector<double> dw0 = values(dw), db0 = values(db);
    backward(dx, dw, db);
    EXPECT_TRUE(close(dx, ref.dx)) << "dx";
    EXPECT_TRUE(close(dw, batch_norm_ref::batch_norm_plus(dw0, ref.dw))) << "weight_grad";
    EXPECT_TRUE(close(db, batch_norm_ref::batch_norm_plus(db0, ref.db))) << "bias_grad";

    const Tensor dx_only = poisoned(s, dtype);
    backward(dx_only, Tensor(), Tensor());
    EXPECT_TRUE(close(dx_only, ref.dx)) << "dx alone";

    const Tensor dw_only = random(c, dtype, 19), db_only = random(c, dtype, 20);
    const std::vector<double> dw1 = values(dw_only), db1 = values(db_only);
    backward(Tensor(), dw_only, db_only);
    EXPECT_TRUE(close(dw_only, batch_norm_ref::batch_norm_plus(dw1, ref.dw))) << "weight_grad alone";
    EXPECT_TRUE(close(db_only, batch_norm_ref::batch_norm_plus(db1, ref.db))) << "bias_grad alone";
  }
};

}  // namespace baton::testing
