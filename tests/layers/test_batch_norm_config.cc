// BatchNorm2d as a description: specs with torchvision names, cost, JSON round trips through the
// registry, bad configs and mismatched inputs.
#include <gtest/gtest.h>

#include <vector>

#include "layers/batch_norm.h"
#include "layers/builtin_layers.h"
#include "tests/kernels/op_test_support.h"
#include "tests/layers/batch_norm_test_options.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

using batch_norm_test::options;

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
