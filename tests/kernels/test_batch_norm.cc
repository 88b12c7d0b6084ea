// Batch-norm ops on the CPU against plain float64 references written here (the backward one in
// Ioffe and Szegedy's step-by-step form): f32 and f64, with and without γ/β and running statistics,
// the running-statistics update (momentum, unbiased variance, batch counter), gradient
// accumulation, skipped outputs, poisoned outputs, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/batch_norm.h"
#include "tests/kernels/cpu_op_test.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

constexpr double kEps = 1e-3;  // large enough that a wrong placement of eps shows
constexpr double kMomentum = 0.3;

const Shape kShapes[] = {Shape{2, 3, 4, 5}, Shape{5, 2, 1, 1}, Shape{1, 4, 3, 3}, Shape{3, 1, 7, 2}};

// Calls fn(channel, index) for every element of an NCHW shape.
template <typename Fn>
void for_each_element(const Shape& s, const Fn& fn) {
  const int64_t hw = s[2] * s[3];
  for (int64_t i = 0; i < s.numel(); ++i) fn(static_cast<size_t>((i / hw) % s[1]), static_cast<size_t>(i));
}

struct Stats {
  std::vector<double> mean, var;  // biased variance
};

Stats batch_stats(const Shape& s, const std::vector<double>& x) {
  const auto channels = static_cast<size_t>(s[1]);
  const double m = static_cast<double>(s[0] * s[2] * s[3]);
  Stats st{std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  for_each_element(s, [&](size_t c, size_t i) { st.mean[c] += x[i] / m; });
  for_each_element(s, [&](size_t c, size_t i) { st.var[c] += (x[i] - st.mean[c]) * (x[i] - st.mean[c]) / m; });
  return st;
}

// y = (x − mean)/sqrt(var + eps)·γ + β (γ = 1, β = 0 when empty).
std::vector<double> normalise(const Shape& s, const std::vector<double>& x, const Stats& st,
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
Grads train_backward(const Shape& s, const std::vector<double>& x, const std::vector<double>& dy,
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
Grads eval_backward(const Shape& s, const std::vector<double>& x, const std::vector<double>& dy,
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

std::vector<double> batch_norm_plus(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

class BatchNormCpu : public testing::CpuOpTest {
 protected:
  ::testing::AssertionResult close(const Tensor& actual, const std::vector<double>& expected) {
    const double tol = actual.dtype() == DType::f64 ? 1e-11 : 2e-5;
    return testing::all_close(values(actual), expected, tol, tol);
  }

  // backward(dx, weight_grad, bias_grad) against `ref`: with every output (the parameter gradients
  // accumulating onto random values), with dx alone, and with the parameter gradients alone.
  template <typename Backward>
  void expect_backward(const Shape& s, DType dtype, const Grads& ref, const Backward& backward) {
    const Shape c{s[1]};
    const Tensor dx = poisoned(s, dtype), dw = random(c, dtype, 17), db = random(c, dtype, 18);
    const std::vector<double> dw0 = values(dw), db0 = values(db);
    backward(dx, dw, db);
    EXPECT_TRUE(close(dx, ref.dx)) << "dx";
    EXPECT_TRUE(close(dw, batch_norm_plus(dw0, ref.dw))) << "weight_grad";
    EXPECT_TRUE(close(db, batch_norm_plus(db0, ref.db))) << "bias_grad";

    const Tensor dx_only = poisoned(s, dtype);
    backward(dx_only, Tensor(), Tensor());
    EXPECT_TRUE(close(dx_only, ref.dx)) << "dx alone";

    const Tensor dw_only = random(c, dtype, 19), db_only = random(c, dtype, 20);
    const std::vector<double> dw1 = values(dw_only), db1 = values(db_only);
    backward(Tensor(), dw_only, db_only);
    EXPECT_TRUE(close(dw_only, batch_norm_plus(dw1, ref.dw))) << "weight_grad alone";
    EXPECT_TRUE(close(db_only, batch_norm_plus(db1, ref.db))) << "bias_grad alone";
  }
};

TEST_F(BatchNormCpu, TrainingForwardMatchesTheReference) {
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::f64, DType::f32}) {
      for (bool affine : {true, false}) {
        for (bool running : {true, false}) {
          SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : "") +
                       (running ? " running" : ""));
          const Shape c{s[1]};
          const Tensor x = random(s, dtype, 1, -1.0, 3.0);  // a mean away from 0
          const Tensor w = affine ? random(c, dtype, 2) : Tensor(), b = affine ? random(c, dtype, 3) : Tensor();
          const Tensor rm = random(c, dtype, 4), rv = random(c, dtype, 5, 0.5, 2.0);
          const std::vector<double> rm0 = values(rm), rv0 = values(rv);
          const Tensor count = testing::from_doubles({7}, Shape{}, DType::i64, ctx.stream());
          const Tensor y = poisoned(s, dtype), mean = poisoned(c, dtype), invstd = poisoned(c, dtype);
          batch_norm_forward_train(ctx, x, w, b, kEps, kMomentum, y, mean, invstd, running ? rm : Tensor(),
                                   running ? rv : Tensor(), running ? count : Tensor());

          const Stats st = batch_stats(s, values(x));
          EXPECT_TRUE(close(y, normalise(s, values(x), st, values(w), values(b)))) << "y";
          EXPECT_TRUE(close(mean, st.mean)) << "save_mean";
          std::vector<double> expected_invstd, expected_rm, expected_rv;
          const double m = static_cast<double>(s[0] * s[2] * s[3]);
          for (size_t k = 0; k < st.var.size(); ++k) {
            expected_invstd.push_back(1.0 / std::sqrt(st.var[k] + kEps));
            expected_rm.push_back((1 - kMomentum) * rm0[k] + kMomentum * st.mean[k]);
            expected_rv.push_back((1 - kMomentum) * rv0[k] + kMomentum * st.var[k] * m / (m - 1));  // unbiased
          }
          EXPECT_TRUE(close(invstd, expected_invstd)) << "save_invstd";
          EXPECT_TRUE(close(rm, running ? expected_rm : rm0)) << "running_mean";
          EXPECT_TRUE(close(rv, running ? expected_rv : rv0)) << "running_var";
          EXPECT_EQ(values(count)[0], running ? 8.0 : 7.0);
        }
      }
    }
  }
}

TEST_F(BatchNormCpu, MomentumZeroAndOneKeepOrReplaceTheRunningStatistics) {
  const Shape s{4, 2, 3, 3}, c{2};
  const Tensor x = random(s, DType::f64, 6);
  const Stats st = batch_stats(s, values(x));
  for (double momentum : {0.0, 1.0}) {
    const Tensor rm = random(c, DType::f64, 7), rv = random(c, DType::f64, 8, 0.5, 2.0);
    const std::vector<double> rm0 = values(rm), rv0 = values(rv);
    batch_norm_forward_train(ctx, x, Tensor(), Tensor(), kEps, momentum, poisoned(s, DType::f64),
                             poisoned(c, DType::f64), poisoned(c, DType::f64), rm, rv, Tensor());
    std::vector<double> unbiased = st.var;
    for (double& v : unbiased) v *= 36.0 / 35.0;
    EXPECT_TRUE(close(rm, momentum == 0.0 ? rm0 : st.mean)) << momentum;
    EXPECT_TRUE(close(rv, momentum == 0.0 ? rv0 : unbiased)) << momentum;
  }
}

TEST_F(BatchNormCpu, EvalForwardUsesTheGivenStatistics) {
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::f64, DType::f32}) {
      for (bool affine : {true, false}) {
        SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : ""));
        const Shape c{s[1]};
        const Tensor x = random(s, dtype, 9);
        const Tensor w = affine ? random(c, dtype, 10) : Tensor(), b = affine ? random(c, dtype, 11) : Tensor();
        const Tensor mean = random(c, dtype, 12), var = random(c, dtype, 13, 0.2, 2.0);
        const Tensor y = poisoned(s, dtype);
        batch_norm_forward_eval(ctx, x, w, b, mean, var, kEps, y);
        EXPECT_TRUE(close(y, normalise(s, values(x), Stats{values(mean), values(var)}, values(w), values(b))));
      }
    }
  }
}

TEST_F(BatchNormCpu, TrainingBackwardMatchesTheReference) {
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::f64, DType::f32}) {
      for (bool affine : {true, false}) {
        SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : ""));
        const Shape c{s[1]};
        const Tensor x = random(s, dtype, 14, -1.0, 3.0), dy = random(s, dtype, 15);
        const Tensor w = affine ? random(c, dtype, 16) : Tensor();
        const Tensor mean = poisoned(c, dtype), invstd = poisoned(c, dtype);
        batch_norm_forward_train(ctx, x, w, Tensor(), kEps, kMomentum, poisoned(s, dtype), mean, invstd, Tensor(),
                                 Tensor(), Tensor());
        expect_backward(s, dtype, train_backward(s, values(x), values(dy), values(w)),
                        [&](const Tensor& dx, const Tensor& dw, const Tensor& db) {
                          batch_norm_backward_train(ctx, x, dy, w, mean, invstd, kEps, dx, dw, db);
                        });
      }
    }
  }
}

TEST_F(BatchNormCpu, EvalBackwardMatchesTheReference) {
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::f64, DType::f32}) {
      for (bool affine : {true, false}) {
        SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : ""));
        const Shape c{s[1]};
        const Tensor x = random(s, dtype, 21), dy = random(s, dtype, 22);
        const Tensor w = affine ? random(c, dtype, 23) : Tensor();
        const Tensor mean = random(c, dtype, 24), var = random(c, dtype, 25, 0.2, 2.0);
        expect_backward(s, dtype, eval_backward(s, values(x), values(dy), values(w), Stats{values(mean), values(var)}),
                        [&](const Tensor& dx, const Tensor& dw, const Tensor& db) {
                          batch_norm_backward_eval(ctx, x, dy, w, mean, var, kEps, dx, dw, db);
                        });
      }
    }
  }
}

TEST_F(BatchNormCpu, BadArgumentsNameTheProblem) {
  const Shape s{2, 3, 4, 4}, c{3};
  const Tensor x = random(s, DType::f32, 28), y = Tensor::empty(s, DType::f32, ctx);
  const Tensor m = Tensor::empty(c, DType::f32, ctx), v = Tensor::empty(c, DType::f32, ctx);
  const Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
  const auto train = [&](const Tensor& xx, const Tensor& w, double eps, double momentum, const Tensor& rm,
                         const Tensor& rv, const Tensor& nbt) {
    batch_norm_forward_train(ctx, xx, w, Tensor(), eps, momentum, Tensor::empty(xx.shape(), xx.dtype(), ctx),
                             Tensor::empty(Shape{xx.size(1)}, xx.dtype(), ctx),
                             Tensor::empty(Shape{xx.size(1)}, xx.dtype(), ctx), rm, rv, nbt);
  };
  EXPECT_ERROR_MENTIONS("batch_norm_forward_train: argument 'x' has dtype f16, expected one of f32, f64",
                        train(random(s, DType::f16, 29), Tensor(), kEps, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS(
      "argument 'weight' has shape [4], expected [3] (the channels of 'x'",
      train(x, Tensor::empty(Shape{4}, DType::f32, ctx), kEps, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("argument 'weight' has dtype f64, expected f32",
                        train(x, Tensor::empty(c, DType::f64, ctx), kEps, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("eps is 0, expected a finite value > 0",
                        train(x, Tensor(), 0.0, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("momentum is 1.5, expected a value in [0, 1]",
                        train(x, Tensor(), kEps, 1.5, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("momentum is -0.1", train(x, Tensor(), kEps, -0.1, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("arguments 'running_mean' and 'running_var' must both be defined",
                        train(x, Tensor(), kEps, kMomentum, m, Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("argument 'num_batches_tracked' is f32 of shape [3], expected an i64 scalar",
                        train(x, Tensor(), kEps, kMomentum, m, v, m));
  EXPECT_ERROR_MENTIONS(
      "expected more than 1 value per channel when training, got input of shape [1, 3, 1, 1]",
      train(random(Shape{1, 3, 1, 1}, DType::f32, 30), Tensor(), kEps, kMomentum, Tensor(), Tensor(), count));
  EXPECT_ERROR_MENTIONS("argument 'x' has shape [2, 3, 16], expected 4 dimensions",
                        batch_norm_forward_eval(ctx, x.reshape(Shape{2, 3, 16}), Tensor(), Tensor(), m, v, kEps,
                                                y.reshape(Shape{2, 3, 16})));
  EXPECT_ERROR_MENTIONS(
      "batch_norm_forward_eval: argument 'var' has shape [2]",
      batch_norm_forward_eval(ctx, x, Tensor(), Tensor(), m, Tensor::empty(Shape{2}, DType::f32, ctx), kEps, y));
  EXPECT_ERROR_MENTIONS("batch_norm_forward_eval: argument 'mean' is an undefined tensor",
                        batch_norm_forward_eval(ctx, x, Tensor(), Tensor(), Tensor(), v, kEps, y));
  EXPECT_ERROR_MENTIONS("batch_norm_backward_train: argument 'dy' has shape [2, 3, 4, 2], expected [2, 3, 4, 4]",
                        batch_norm_backward_train(ctx, x, Tensor::empty(Shape{2, 3, 4, 2}, DType::f32, ctx), Tensor(),
                                                  m, v, kEps, y, Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("arguments 'weight_grad' and 'bias_grad' must both be defined",
                        batch_norm_backward_eval(ctx, x, y, Tensor(), m, v, kEps, y, m, Tensor()));
  EXPECT_ERROR_MENTIONS("batch_norm_backward_eval: eps is -1",
                        batch_norm_backward_eval(ctx, x, y, Tensor(), m, v, -1.0, y, Tensor(), Tensor()));
}

TEST_F(BatchNormCpu, NoLibraryCallOnTheCpuButTheArgumentsAreChecked) {
  const Shape s{2, 3, 4, 4}, c{3};
  const auto empty = [&](const Shape& shape) { return Tensor::empty(shape, DType::f32, ctx); };
  BatchNormTensors t{.x = random(s, DType::f32, 31),
                     .weight = random(c, DType::f32, 32),
                     .bias = random(c, DType::f32, 33),
                     .y = empty(s),
                     .save_mean = empty(c),
                     .save_invstd = empty(c),
                     .running_mean = empty(c),
                     .running_var = empty(c),
                     .dy = random(s, DType::f32, 34),
                     .dx = empty(s),
                     .weight_grad = empty(c),
                     .bias_grad = empty(c)};
  EXPECT_FALSE(batch_norm_library_call(ctx, BatchNormPass::forward_train, t, kEps, kMomentum));
  EXPECT_FALSE(batch_norm_library_call(ctx, BatchNormPass::backward_train, t, kEps));
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: momentum is 2, expected a value in [0, 1]",
                        batch_norm_library_call(ctx, BatchNormPass::forward_train, t, kEps, 2.0));
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: argument 'dx' has shape [2, 3, 4, 2], expected [2, 3, 4, 4]",
                        batch_norm_library_call(ctx, BatchNormPass::backward_train,
                                                {.x = t.x,
                                                 .weight = t.weight,
                                                 .save_mean = t.save_mean,
                                                 .save_invstd = t.save_invstd,
                                                 .dy = t.dy,
                                                 .dx = empty(Shape{2, 3, 4, 2}),
                                                 .weight_grad = t.weight_grad,
                                                 .bias_grad = t.bias_grad},
                                                kEps));
  t.bias = Tensor();
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: argument 'bias' is undefined; the bare cuDNN call needs it",
                        batch_norm_library_call(ctx, BatchNormPass::forward_train, t, kEps, kMomentum));
  t.dx = Tensor();
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: argument 'dx' is undefined",
                        batch_norm_library_call(ctx, BatchNormPass::backward_train, t, kEps));
}

}  // namespace
}  // namespace baton::kernels
