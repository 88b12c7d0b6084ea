// BatchNorm2d: float64 gradient checks over every option and both modes, the running statistics
// against a float64 reference (momentum, unbiased variance, batch counter), eval, frozen and
// untracked statistics, update_buffers=false, deferred statistics (gathered over pieces, committed
// once), specs, cost, JSON round trips and bad configs.
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
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

constexpr double kEps = 1e-3;
constexpr double kMomentum = 0.2;

BatchNorm2dOptions options(int64_t channels, bool affine = true, bool track = true, bool freeze = false) {
  return {.num_features = channels,
          .eps = kEps,
          .momentum = kMomentum,
          .affine = affine,
          .track_running_stats = track,
          .freeze_statistics = freeze};
}

TEST(BatchNorm2d, GradientCheckEveryOptionAndMode) {
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{2, 3, 3, 4}, Shape{4, 2, 1, 1}, Shape{1, 3, 2, 3}}) {
    for (bool affine : {true, false}) {
      for (bool track : {true, false}) {
        for (bool freeze : {false, true}) {
          if (freeze && !track) continue;
          for (Mode mode : {Mode::train, Mode::eval}) {
            SCOPED_TRACE(shape.str() + (affine ? " affine" : "") + (track ? " track" : "") + (freeze ? " freeze" : "") +
                         (mode == Mode::train ? " train" : " eval"));
            const BatchNorm2d layer(options(shape[1], affine, track, freeze));
            // Inputs away from zero mean, so a missing mean term shows.
            const Tensor x = testing::random_tensor(shape, DType::f64, s, 3, -1.0, 3.0);
            EXPECT_TRUE(testing::check_gradients(layer, {x}, {.mode = mode}));
          }
        }
      }
    }
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
    const std::vector<Tensor> dys{dy};
    const std::vector<Tensor> dx = layer.backward(BackwardArgs{.ctx = ctx,
                                                               .output_grads = dys,
                                                               .saved = r.saved,
                                                               .params = params,
                                                               .param_grads = grads,
                                                               .needs_input_grad = {false}});
    ASSERT_EQ(dx.size(), 1u);
    EXPECT_FALSE(dx[0].defined());
    // bias_grad += Σ dy per channel.
    std::vector<double> expected = db0;
    const std::vector<double> g = values(dy);
    for (size_t i = 0; i < g.size(); ++i) expected[(i / 15) % 3] += g[i];
    EXPECT_TRUE(close(grads[1], expected));
  }
}

TEST(BatchNorm2d, SpecsUseTorchvisionNames) {
  const BatchNorm2d layer(options(5));
  const Shape in[] = {Shape{2, 5, 3, 3}};
  const std::vector<TensorSpec> params = layer.param_specs(in), buffers = layer.buffer_specs(in);
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].name, "weight");
  EXPECT_EQ(params[0].init.a, 1.0);
  EXPECT_EQ(params[1].name, "bias");
  EXPECT_EQ(params[1].init.a, 0.0);
  for (const TensorSpec& p : params) {
    EXPECT_EQ(p.shape, Shape{5});
    EXPECT_FALSE(p.weight_decay);
    EXPECT_EQ(p.init.kind, Initializer::Kind::constant);
  }
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_EQ(buffers[0].name, "running_mean");
  EXPECT_EQ(buffers[0].init.a, 0.0);
  EXPECT_EQ(buffers[1].name, "running_var");
  EXPECT_EQ(buffers[1].init.a, 1.0);
  EXPECT_EQ(buffers[2].name, "num_batches_tracked");
  EXPECT_EQ(buffers[2].shape, Shape{});
  EXPECT_TRUE(buffers[2].has_dtype_override);
  EXPECT_EQ(buffers[2].dtype_override, DType::i64);
  EXPECT_EQ(layer.infer_shapes(in)[0], in[0]);
}

TEST(BatchNorm2d, CostCountsFlopsAndBytes) {
  const Shape in[] = {Shape{8, 16, 10, 10}};
  const LayerCost c = BatchNorm2d(options(16)).cost(in, DType::f32);
  EXPECT_EQ(c.output_bytes, 8 * 16 * 10 * 10 * 4);
  EXPECT_EQ(c.param_bytes, 2 * 16 * 4);
  EXPECT_EQ(c.saved_bytes, 8 * 16 * 10 * 10 * 4 + 2 * 16 * 4);
  EXPECT_EQ(c.forward_flops, 7.0 * 12800);
  EXPECT_EQ(c.backward_flops, 11.0 * 12800);
  const LayerCost frozen = BatchNorm2d(options(16, true, true, true)).cost(in, DType::f32);
  EXPECT_LT(frozen.forward_flops, c.forward_flops);
  EXPECT_EQ(frozen.saved_bytes, 8 * 16 * 10 * 10 * 4);
  EXPECT_EQ(BatchNorm2d(options(16, false)).cost(in, DType::f32).param_bytes, 0);
}

TEST(BatchNorm2d, JsonRoundTripsThroughTheRegistry) {
  const LayerRegistry& r = builtin_layers();
  const auto defaults = r.create("BatchNorm2d", {{"num_features", 8}});
  EXPECT_EQ(defaults->type(), "BatchNorm2d");
  EXPECT_EQ(defaults->config(), (nlohmann::json{{"num_features", 8},
                                                {"eps", 1e-5},
                                                {"momentum", 0.1},
                                                {"affine", true},
                                                {"track_running_stats", true},
                                                {"freeze_statistics", false}}));
  const nlohmann::json custom{
      {"num_features", 3},        {"eps", 0.001}, {"momentum", 0.5}, {"affine", false}, {"track_running_stats", true},
      {"freeze_statistics", true}};
  const auto layer = r.create("BatchNorm2d", custom);
  EXPECT_EQ(layer->config(), custom);
  EXPECT_EQ(r.create(layer->type(), layer->config())->config(), custom);
  const auto& bn = dynamic_cast<const BatchNorm2d&>(*layer);
  EXPECT_EQ(bn.options().momentum, 0.5);
  EXPECT_TRUE(bn.options().freeze_statistics);
  EXPECT_FALSE(bn.options().affine);
}

TEST(BatchNorm2d, BadConfigsNameTheProblem) {
  const LayerRegistry& r = builtin_layers();
  const auto create = [&](const nlohmann::json& config) { r.create("BatchNorm2d", config); };
  EXPECT_ERROR_MENTIONS("num_features is 0, expected at least 1", create({{"num_features", 0}}));
  EXPECT_ERROR_MENTIONS("missing required field 'num_features'", create({{"eps", 0.1}}));
  EXPECT_ERROR_MENTIONS("eps is 0, expected a value > 0", create({{"num_features", 2}, {"eps", 0}}));
  EXPECT_ERROR_MENTIONS("eps is -1", create({{"num_features", 2}, {"eps", -1.0}}));
  EXPECT_ERROR_MENTIONS("momentum is 1.5, expected a value in [0, 1]",
                        create({{"num_features", 2}, {"momentum", 1.5}}));
  EXPECT_ERROR_MENTIONS("momentum is -0.5", create({{"num_features", 2}, {"momentum", -0.5}}));
  EXPECT_ERROR_MENTIONS("freeze_statistics needs track_running_stats",
                        create({{"num_features", 2}, {"track_running_stats", false}, {"freeze_statistics", true}}));
  EXPECT_ERROR_MENTIONS("field 'affine' is 1, expected true or false", create({{"num_features", 2}, {"affine", 1}}));
  EXPECT_ERROR_MENTIONS("field 'num_features' is 2.5, expected an integer", create({{"num_features", 2.5}}));
  EXPECT_ERROR_MENTIONS("unknown field 'momentun'", create({{"num_features", 2}, {"momentun", 0.1}}));
}

TEST(BatchNorm2d, MismatchedInputsAreErrors) {
  const BatchNorm2d layer(options(3));
  const Shape wrong_channels[] = {Shape{2, 4, 5, 5}};
  EXPECT_ERROR_MENTIONS("BatchNorm2d: input has shape [2, 4, 5, 5] with 4 channels, expected 3 (num_features)",
                        layer.infer_shapes(wrong_channels));
  const Shape wrong_rank[] = {Shape{2, 3}};
  EXPECT_ERROR_MENTIONS("BatchNorm2d: input has shape [2, 3], expected 4 dimensions", layer.infer_shapes(wrong_rank));
  // Forward checks the input too, before any kernel sees it.
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{2, 4, 5, 5}, DType::f32, ctx.stream(), 13);
  const std::vector<Tensor> p{Tensor::empty(Shape{3}, DType::f32, ctx), Tensor::empty(Shape{3}, DType::f32, ctx)};
  EXPECT_ERROR_MENTIONS("with 4 channels, expected 3", bn_run(layer, ctx, Mode::train, x, p, {}));
  // A batch of one value per channel has no training statistics.
  const BatchNorm2d one(options(2, false, false));
  EXPECT_ERROR_MENTIONS(
      "expected more than 1 value per channel when training",
      bn_run(one, ctx, Mode::train, testing::random_tensor(Shape{1, 2, 1, 1}, DType::f32, ctx.stream(), 14), {}, {}));
}

}  // namespace
}  // namespace baton::layers
