// Initialiser overrides of Conv2d and Linear ("weight_init", "bias_init"): the parameter specs carry
// them, configs round-trip through JSON and the registry, GraphBuilder passes them on, ParamStore
// draws from them, and malformed overrides are errors naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/conv.h"
#include "layers/graph_builder.h"
#include "layers/linear.h"
#include "runtime/graph/param_store.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

const Initializer kNormal = Initializer::normal(0, 0.25);
const Initializer kZero = Initializer::constant(0);

TEST(InitOverrides, ParamSpecsCarryThemAndDefaultsStayPyTorchs) {
  const Shape in[] = {Shape{2, 4, 8, 8}};
  const Conv2dOptions base{.in_channels = 4, .out_channels = 6, .kernel_size = {3, 3}};
  const std::vector<TensorSpec> plain = Conv2d(base).param_specs(in);
  const double bound = 1 / std::sqrt(4.0 * 9);
  EXPECT_EQ(plain[0].init, Initializer::uniform(-bound, bound));
  EXPECT_EQ(plain[1].init, Initializer::uniform(-bound, bound));

  Conv2dOptions custom = base;
  custom.init = {.weight = kNormal, .bias = kZero};
  const std::vector<TensorSpec> specs = Conv2d(custom).param_specs(in);
  EXPECT_EQ(specs[0].init, kNormal);
  EXPECT_EQ(specs[1].init, kZero);
  EXPECT_FALSE(specs[1].weight_decay);

  const Shape features[] = {Shape{2, 16}};
  const std::vector<TensorSpec> linear =
      Linear({.in_features = 16, .out_features = 3, .init = {.weight = kNormal}}).param_specs(features);
  EXPECT_EQ(linear[0].init, kNormal);
  EXPECT_EQ(linear[1].init, Initializer::uniform(-0.25, 0.25));  // only the weight is overridden
}

TEST(InitOverrides, ConfigsRoundTripThroughTheRegistry) {
  const LayerRegistry& r = builtin_layers();
  const nlohmann::json conv{{"in_channels", 3},
                            {"out_channels", 8},
                            {"kernel_size", {3, 3}},
                            {"stride", {1, 1}},
                            {"padding", {1, 1}},
                            {"dilation", {1, 1}},
                            {"groups", 1},
                            {"bias", true},
                            {"weight_init", {{"normal", {0.0, 0.05}}}},
                            {"bias_init", {{"constant", 0.0}}}};
  EXPECT_EQ(r.create("Conv2d", conv)->config(), conv);
  const nlohmann::json linear{
      {"in_features", 5}, {"out_features", 2}, {"bias", true}, {"weight_init", {{"uniform", {-0.5, 0.5}}}}};
  const auto layer = r.create("Linear", linear);
  EXPECT_EQ(layer->config(), linear);
  const Shape in[] = {Shape{1, 5}};
  EXPECT_EQ(layer->param_specs(in)[0].init, Initializer::uniform(-0.5, 0.5));
  // Without overrides the config has no init fields (specs written before overrides existed stay equal).
  EXPECT_FALSE(r.create("Linear", {{"in_features", 5}, {"out_features", 2}})->config().contains("weight_init"));
}

TEST(InitOverrides, MalformedOverridesNameTheField) {
  const LayerRegistry& r = builtin_layers();
  const nlohmann::json base{{"in_features", 5}, {"out_features", 2}};
  const auto with = [&](const char* field, const nlohmann::json& value) {
    nlohmann::json c = base;
    c[field] = value;
    r.create("Linear", c);
  };
  EXPECT_ERROR_MENTIONS("Linear config: field 'weight_init' is {\"normal\":[0,-1]}, expected",
                        with("weight_init", {{"normal", {0, -1}}}));
  EXPECT_ERROR_MENTIONS("field 'weight_init' is {\"uniform\":[1,0]}", with("weight_init", {{"uniform", {1, 0}}}));
  EXPECT_ERROR_MENTIONS("field 'bias_init' is {\"zeros\":0}", with("bias_init", {{"zeros", 0}}));
  EXPECT_ERROR_MENTIONS("field 'bias_init' is {\"constant\":\"0\"}", with("bias_init", {{"constant", "0"}}));
  EXPECT_ERROR_MENTIONS("field 'weight_init' is {\"normal\":[0]}", with("weight_init", {{"normal", {0}}}));
  EXPECT_ERROR_MENTIONS("field 'weight_init' is 0.01, expected {\"constant\": value}", with("weight_init", 0.01));
  EXPECT_ERROR_MENTIONS("Conv2d config: field 'weight_init'",
                        r.create("Conv2d", {{"in_channels", 1},
                                            {"out_channels", 1},
                                            {"kernel_size", 1},
                                            {"weight_init", {{"normal", {0, 1}}, {"constant", 1}}}}));
}

TEST(InitOverrides, GraphBuilderPassesThemAndParamStoreDrawsFromThem) {
  GraphBuilder g;
  const ValueId x = g.input("x", Shape{2, 3, 6, 6});
  ValueId y = g.conv2d(
      x, {.out_channels = 64, .kernel = 3, .init = {.weight = Initializer::normal(0, 0.5), .bias = kZero}}, "conv");
  y = g.flatten(g.adaptive_avg_pool2d(y, "pool", 2), "flatten");
  g.output(g.linear(y, 10, "fc", true, {.weight = Initializer::constant(0.125)}));
  const Graph graph = g.build();
  const Graph back = Graph::from_json(graph.to_json(), builtin_layers(), "overrides.json");
  EXPECT_EQ(back.to_json(), graph.to_json());
  EXPECT_EQ(back.value(back.value_id("pool")).shape, (Shape{2, 64, 2, 2}));

  Context ctx(Device::cpu());
  ParamStore params(back, back.topological_order(), DType::f64, ctx);
  params.initialize(ctx, 7);
  const std::vector<double> w = testing::to_doubles(params.param("conv.weight"), ctx.stream());
  double sum = 0, squares = 0;
  for (double v : w) {
    sum += v;
    squares += v * v;
  }
  const auto n = static_cast<double>(w.size());  // 64·3·9 = 1728 draws of N(0, 0.5)
  EXPECT_NEAR(sum / n, 0.0, 0.05);
  EXPECT_NEAR(std::sqrt(squares / n - (sum / n) * (sum / n)), 0.5, 0.03);
  EXPECT_EQ(testing::to_doubles(params.param("conv.bias"), ctx.stream()), std::vector<double>(64, 0.0));
  EXPECT_EQ(testing::to_doubles(params.param("fc.weight"), ctx.stream()), std::vector<double>(2560, 0.125));
  const double bound = 1 / std::sqrt(256.0);
  for (double v : testing::to_doubles(params.param("fc.bias"), ctx.stream())) {
    EXPECT_TRUE(v >= -bound && v <= bound && v != 0.0) << v;  // PyTorch's default, not overridden
  }
}

}  // namespace
}  // namespace baton::layers
