// BatchNorm2d: float64 gradient checks over every option and both modes, the running statistics
// against a float64 reference (momentum, unbiased variance, batch counter), eval, frozen and
// untracked statistics, update_buffers=false, and deferred statistics (gathered over pieces,
// committed once). Specs, cost, JSON and bad configs: test_batch_norm_config.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "layers/batch_norm.h"
#include "layers/builtin_layers.h"
#include "tests/kernels/op_test_support.h"
#include "tests/layers/batch_norm_test_options.h"
#include "tests/support/layer_check.h"
#include "tests/support/layer_expectations.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

using batch_norm_test::for_each_option_and_mode;
using batch_norm_test::kEps;
using batch_norm_test::kMomentum;
using batch_norm_test::options;

TEST(BatchNorm2d, GradientCheckEveryOptionAndMode) {
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{2, 3, 3, 4}, Shape{4, 2, 1, 1}, Shape{1, 3, 2, 3}}) {
    for_each_option_and_mode(shape, [&](bool affine, bool track, bool freeze, Mode mode) {
      const BatchNorm2d layer(options(shape[1], affine, track, freeze));
      // Inputs away from zero mean, so a missing mean term shows.
      const Tensor x = testing::random_tensor(shape, DType::f64, s, 3, -1.0, 3.0);
      EXPECT_TRUE(testing::check_gradients(layer, {x}, {.mode = mode}));
    });
  }
}

// Runs forward on the CPU with given parameters and buffers.
ForwardResult bn_run(const Layer& layer, Context& ctx, Mode mode, const Tensor& x, const std::vector<Tensor>& params,
                     const std::vector<Tensor>& buffers, bool update_buffers = true) {
  const std::vector<Tensor> inputs{x};
  return layer.forward(ForwardArgs{.ctx = ctx,
                                   .mode = mode,
                                   .inputs = inputs,
                                   .params = params,
                                   .buffers = buffers,
                                   .update_buffers = update_buffers});
}

// y = (x − mean)/sqrt(var + eps)·γ + β, per channel, in float64.
std::vector<double> normalise(const Shape& s, const std::vector<double>& x, const std::vector<double>& mean,
                              const std::vector<double>& var, const std::vector<double>& w,
                              const std::vector<double>& b) {
  std::vector<double> y(x.size());
  const int64_t hw = s[2] * s[3];
  for (size_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<size_t>((static_cast<int64_t>(i) / hw) % s[1]);
    y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + kEps) * w[c] + b[c];
  }
  return y;
}

// Per-channel mean and biased variance.
void batch_stats(const Shape& s, const std::vector<double>& x, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t hw = s[2] * s[3];
  const double m = static_cast<double>(s[0] * hw);
  mean.assign(static_cast<size_t>(s[1]), 0.0);
  var.assign(static_cast<size_t>(s[1]), 0.0);
  const auto channel = [&](size_t i) { return static_cast<size_t>((static_cast<int64_t>(i) / hw) % s[1]); };
  for (size_t i = 0; i < x.size(); ++i) mean[channel(i)] += x[i] / m;
  for (size_t i = 0; i < x.size(); ++i) var[channel(i)] += (x[i] - mean[channel(i)]) * (x[i] - mean[channel(i)]) / m;
}

class BatchNorm2dForward : public ::testing::Test {
 protected:
  void SetUp() override {
    x = testing::random_tensor(shape, DType::f64, ctx.stream(), 5, -1.0, 3.0);
    params = {testing::random_tensor(c, DType::f64, ctx.stream(), 6),
              testing::random_tensor(c, DType::f64, ctx.stream(), 7)};
    buffers = {testing::random_tensor(c, DType::f64, ctx.stream(), 8),
               testing::random_tensor(c, DType::f64, ctx.stream(), 9, 0.5, 2.0),
               testing::from_doubles({2}, Shape{}, DType::i64, ctx.stream())};
  }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }
  ::testing::AssertionResult close(const Tensor& t, const std::vector<double>& expected) {
    return testing::all_close(values(t), expected, 1e-12, 1e-12);
  }
  // The buffers' values, to check that nothing changed them.
  std::vector<std::vector<double>> snapshot() { return {values(buffers[0]), values(buffers[1]), values(buffers[2])}; }

  Context ctx{Device::cpu()};
  const Shape shape{4, 3, 3, 5};
  const Shape c{3};
  Tensor x;
  std::vector<Tensor> params, buffers;
};

TEST_F(BatchNorm2dForward, TrainModeUpdatesTheRunningStatisticsAsPyTorch) {
  const BatchNorm2d layer(options(3));
  std::vector<double> mean, var;
  batch_stats(shape, values(x), mean, var);
  std::vector<double> rm = values(buffers[0]), rv = values(buffers[1]);
  const double m = 4.0 * 3.0 * 5.0;
  for (int step = 1; step <= 2; ++step) {
    SCOPED_TRACE(step);
    const ForwardResult r = bn_run(layer, ctx, Mode::train, x, params, buffers);
    EXPECT_TRUE(close(r.outputs[0], normalise(shape, values(x), mean, var, values(params[0]), values(params[1]))));
    for (size_t k = 0; k < 3; ++k) {
      rm[k] = (1 - kMomentum) * rm[k] + kMomentum * mean[k];
      rv[k] = (1 - kMomentum) * rv[k] + kMomentum * var[k] * m / (m - 1);  // unbiased
    }
    EXPECT_TRUE(close(buffers[0], rm)) << "running_mean";
    EXPECT_TRUE(close(buffers[1], rv)) << "running_var";
    EXPECT_EQ(values(buffers[2])[0], 2.0 + step) << "num_batches_tracked";
  }
}

TEST_F(BatchNorm2dForward, UpdateBuffersFalseLeavesTheBuffersAlone) {
  const BatchNorm2d layer(options(3));
  const auto before = snapshot();
  const ForwardResult r = bn_run(layer, ctx, Mode::train, x, params, buffers, /*update_buffers=*/false);
  std::vector<double> mean, var;
  batch_stats(shape, values(x), mean, var);
  EXPECT_TRUE(close(r.outputs[0], normalise(shape, values(x), mean, var, values(params[0]), values(params[1]))));
  EXPECT_EQ(snapshot(), before);
}

// A layer whose make_deferred_update gives nothing (to hand BatchNorm2d a foreign accumulator).
class OtherUpdate final : public DeferredUpdate {
 public:
  void commit(Context&, std::span<const Tensor>) override {}
  void discard() override {}
};

TEST_F(BatchNorm2dForward, DeferredStatisticsAreGatheredOverPiecesAndCommittedOnce) {
  const BatchNorm2d layer(options(3));
  const std::unique_ptr<DeferredUpdate> deferred = layer.make_deferred_update();
  ASSERT_NE(deferred, nullptr);
  const auto before = snapshot();
  const std::vector<double> rm0 = values(buffers[0]), rv0 = values(buffers[1]);
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 1}, {1, 4}}) {  // 1 + 3 samples
    const Tensor piece = x.slice(begin, end);
    const std::vector<Tensor> inputs{piece};
    const ForwardResult r = layer.forward(ForwardArgs{.ctx = ctx,
                                                      .mode = Mode::train,
                                                      .inputs = inputs,
                                                      .params = params,
                                                      .buffers = buffers,
                                                      .deferred = deferred.get()});
    std::vector<double> mean, var;  // each piece is normalised with its own statistics
    batch_stats(piece.shape(), values(piece), mean, var);
    EXPECT_TRUE(
        close(r.outputs[0], normalise(piece.shape(), values(piece), mean, var, values(params[0]), values(params[1]))));
  }
  EXPECT_EQ(snapshot(), before);  // nothing applied yet
  deferred->commit(ctx, buffers);
  std::vector<double> mean, var;
  batch_stats(shape, values(x), mean, var);
  const double m = 4.0 * 3.0 * 5.0;
  std::vector<double> rm(3), rv(3);
  for (size_t k = 0; k < 3; ++k) {
    rm[k] = (1 - kMomentum) * rm0[k] + kMomentum * mean[k];
    rv[k] = (1 - kMomentum) * rv0[k] + kMomentum * var[k] * m / (m - 1);
  }
  EXPECT_TRUE(close(buffers[0], rm)) << "running_mean";
  EXPECT_TRUE(close(buffers[1], rv)) << "running_var";
  EXPECT_EQ(values(buffers[2])[0], 3.0) << "num_batches_tracked";
  const auto committed = snapshot();
  deferred->commit(ctx, buffers);  // nothing gathered since: nothing changes
  EXPECT_EQ(snapshot(), committed);
  // A discarded gathering is never applied; recomputation (update_buffers false) gathers nothing.
  const std::vector<Tensor> inputs{x};
  layer.forward(ForwardArgs{.ctx = ctx,
                            .mode = Mode::train,
                            .inputs = inputs,
                            .params = params,
                            .buffers = buffers,
                            .deferred = deferred.get()});
  deferred->discard();
  layer.forward(ForwardArgs{.ctx = ctx,
                            .mode = Mode::train,
                            .inputs = inputs,
                            .params = params,
                            .buffers = buffers,
                            .update_buffers = false,
                            .deferred = deferred.get()});
  deferred->commit(ctx, buffers);
  EXPECT_EQ(snapshot(), committed);
}

TEST_F(BatchNorm2dForward, DeferredUpdatesOnlyWithRunningStatisticsAndTheirOwnAccumulator) {
  EXPECT_EQ(BatchNorm2d(options(3, true, false)).make_deferred_update(), nullptr);
  EXPECT_EQ(BatchNorm2d(options(3, true, true, true)).make_deferred_update(), nullptr);
  OtherUpdate other;
  const std::vector<Tensor> inputs{x};
  EXPECT_ERROR_MENTIONS("not one make_deferred_update made", BatchNorm2d(options(3))
                                                                 .forward(ForwardArgs{.ctx = ctx,
                                                                                      .mode = Mode::train,
                                                                                      .inputs = inputs,
                                                                                      .params = params,
                                                                                      .buffers = buffers,
                                                                                      .deferred = &other}));
}

TEST_F(BatchNorm2dForward, EvalModeAndFrozenStatisticsUseAndKeepTheRunningStatistics) {
  for (bool freeze : {false, true}) {
    SCOPED_TRACE(freeze ? "frozen, train mode" : "eval mode");
    const BatchNorm2d layer(options(3, true, true, freeze));
    const auto before = snapshot();
    const ForwardResult r = bn_run(layer, ctx, freeze ? Mode::train : Mode::eval, x, params, buffers);
    EXPECT_TRUE(
        close(r.outputs[0], normalise(shape, values(x), before[0], before[1], values(params[0]), values(params[1]))));
    EXPECT_EQ(snapshot(), before);
  }
}

TEST_F(BatchNorm2dForward, WithoutTrackingEvalModeUsesBatchStatistics) {
  const BatchNorm2d layer(options(3, /*affine=*/false, /*track=*/false));
  EXPECT_TRUE(layer.buffer_specs({}).empty());
  EXPECT_TRUE(layer.param_specs({}).empty());
  const ForwardResult r = bn_run(layer, ctx, Mode::eval, x, {}, {});
  std::vector<double> mean, var;
  batch_stats(shape, values(x), mean, var);
  EXPECT_TRUE(close(r.outputs[0], normalise(shape, values(x), mean, var, {1, 1, 1}, {0, 0, 0})));
}

TEST_F(BatchNorm2dForward, BackwardSkipsTheInputGradientWhenNotNeeded) {
  const BatchNorm2d layer(options(3));
  for (Mode mode : {Mode::train, Mode::eval}) {
    const ForwardResult r = bn_run(layer, ctx, mode, x, params, buffers, false);
    const Tensor dy = testing::random_tensor(shape, DType::f64, ctx.stream(), 10);
    std::vector<Tensor> grads = {testing::random_tensor(c, DType::f64, ctx.stream(), 11),
                                 testing::random_tensor(c, DType::f64, ctx.stream(), 12)};
    const std::vector<double> db0 = values(grads[1]);
    ASSERT_NO_FATAL_FAILURE(testing::backward_params_only(layer, ctx, dy, r.saved, params, grads));
    // bias_grad += Σ dy per channel.
    std::vector<double> expected = db0;
    const std::vector<double> g = values(dy);
    for (size_t i = 0; i < g.size(); ++i) expected[(i / 15) % 3] += g[i];
    EXPECT_TRUE(close(grads[1], expected));
  }
}

}  // namespace
}  // namespace baton::layers
