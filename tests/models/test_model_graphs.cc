// The reference models as graphs: every model's JSON spec rebuilds an identical graph through the
// built-in layer registry, and ResNet-20 trains a step on the CPU (finite loss and gradients,
// initialisers drawn as torchvision's).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "layers/builtin_layers.h"
#include "models/model_registry.h"
#include "models/model_summary.h"
#include "runtime/graph/executor.h"
#include "tests/models/two_image_batch.h"
#include "tests/support/test_support.h"

namespace baton::models {
namespace {

// The executor's output named `name` (its outputs come in its own order, not the graph's).
Tensor output_named(const Executor& ex, const Graph& g, const std::vector<Tensor>& out, const std::string& name) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (g.value(ex.output_values()[i]).name == name) return out[i];
  }
  ADD_FAILURE() << "no output named " << name;
  return Tensor();
}

TEST(ModelGraphs, EverySpecRebuildsAnIdenticalGraph) {
  for (const ModelInfo& info : list_models()) {
    for (bool with_loss : {true, false}) {
      SCOPED_TRACE(info.name + (with_loss ? " with loss" : " without loss"));
      ModelOptions o = default_options(info.name);
      o.batch_size = 2;
      o.with_loss = with_loss;
      const Graph g = build_model(info.name, o);
      const nlohmann::json spec = g.to_json();
      // Through text, as a spec file is read back.
      const Graph back =
          Graph::from_json(nlohmann::json::parse(spec.dump()), layers::builtin_layers(), info.name + ".json");
      EXPECT_EQ(back.to_json(), spec);
      ASSERT_EQ(back.num_nodes(), g.num_nodes());
      for (ValueId v = 0; v < g.num_values(); ++v) {
        EXPECT_EQ(back.value(back.value_id(g.value(v).name)).shape, g.value(v).shape) << g.value(v).name;
      }
      const std::vector<NamedShape> params = parameter_shapes(g), params_back = parameter_shapes(back);
      ASSERT_EQ(params.size(), params_back.size());
      for (size_t i = 0; i < params.size(); ++i) {
        EXPECT_EQ(params_back[i].name, params[i].name);
        EXPECT_EQ(params_back[i].shape, params[i].shape) << params[i].name;
      }
      EXPECT_EQ(summarize(back).params, summarize(g).params);
      EXPECT_EQ(summarize(back).macs, summarize(g).macs);
    }
  }
}

TEST(ModelGraphs, SpecsCarryTheInitialiserOverrides) {
  const nlohmann::json spec = build_model("vgg11", default_options("vgg11")).to_json();
  bool found = false;
  for (const nlohmann::json& layer : spec["layers"]) {
    if (layer["name"] != "classifier.6") continue;
    found = true;
    EXPECT_EQ(layer["params"]["weight_init"], (nlohmann::json{{"normal", {0.0, 0.01}}}));
    EXPECT_EQ(layer["params"]["bias_init"], (nlohmann::json{{"constant", 0.0}}));
  }
  EXPECT_TRUE(found);
}

TEST(ModelGraphs, ResNet20TrainsAStepOnTheCpu) {
  Context ctx(Device::cpu());
  ModelOptions o = default_options("resnet20");
  o.batch_size = 2;
  const Graph g = build_model("resnet20", o);
  ParamStore params(g, g.topological_order(), DType::f32, ctx);
  params.initialize(ctx, 17);
  params.zero_grads(ctx);
  EXPECT_EQ(params.num_parameters(), 272'474);

  // A conv weight of 64·64·9 draws of kaiming_normal_(fan_out): standard deviation sqrt(2 / 576).
  const std::vector<double> w = testing::to_doubles(params.param("layer3.1.conv1.weight"), ctx.stream());
  double squares = 0;
  for (double v : w) squares += v * v;
  const double expected_std = std::sqrt(2.0 / 576);
  EXPECT_NEAR(std::sqrt(squares / static_cast<double>(w.size())), expected_std, 0.03 * expected_std);

  Executor ex(g, g.topological_order(), params);
  const std::vector<Tensor> inputs = two_image_batch(ex, g, DType::f32, ctx.stream());
  Tape tape;
  const std::vector<Tensor> out = ex.forward(ctx, inputs, tape, Mode::train, 1);
  ASSERT_EQ(out.size(), 2u);
  const double loss = testing::to_doubles(output_named(ex, g, out, "loss"), ctx.stream())[0];
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_GT(loss, 0.5);  // about ln 10 for random logits
  EXPECT_EQ(output_named(ex, g, out, "fc").shape(), (Shape{2, 10}));
  ex.backward(ctx, tape, std::vector<Tensor>(ex.output_values().size()));

  for (const ParamEntry& e : params.params()) {
    double norm = 0;
    bool finite = true;
    for (double v : testing::to_doubles(params.grad(e.name), ctx.stream())) {
      finite = finite && std::isfinite(v);
      norm += v * v;
    }
    EXPECT_TRUE(finite) << e.name;
    EXPECT_GT(norm, 0) << e.name << " got no gradient";
  }
  // BatchNorm counted one batch.
  EXPECT_EQ(testing::to_doubles(params.buffer("layer1.0.bn1.num_batches_tracked"), ctx.stream())[0], 1);
}

TEST(ModelGraphs, AutoencoderReconstructsTheFlattenedInput) {
  Context ctx(Device::cpu());
  ModelOptions o = default_options("mlp_autoencoder");
  o.batch_size = 2;
  o.image_size = 8;
  o.in_channels = 1;
  const Graph g = build_model("mlp_autoencoder", o);
  ParamStore params(g, g.topological_order(), DType::f64, ctx);
  params.initialize(ctx, 3);
  params.zero_grads(ctx);
  Executor ex(g, g.topological_order(), params);
  const Tensor x = testing::random_tensor(Shape{2, 1, 8, 8}, DType::f64, ctx.stream(), 6, 0.0, 1.0);
  Tape tape;
  const std::vector<Tensor> out = ex.forward(ctx, {x}, tape, Mode::train);
  ASSERT_EQ(out.size(), 2u);
  const Tensor reconstruction = output_named(ex, g, out, "decoder.5");
  EXPECT_EQ(reconstruction.shape(), (Shape{2, 64}));
  // The loss is the mean squared difference between the sigmoid outputs and the flattened input.
  const std::vector<double> y = testing::to_doubles(reconstruction, ctx.stream());
  const std::vector<double> xs = testing::to_doubles(x, ctx.stream());
  double mse = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_TRUE(y[i] > 0 && y[i] < 1);
    mse += (y[i] - xs[i]) * (y[i] - xs[i]) / static_cast<double>(y.size());
  }
  EXPECT_NEAR(testing::to_doubles(output_named(ex, g, out, "loss"), ctx.stream())[0], mse, 1e-12);
  ex.backward(ctx, tape, std::vector<Tensor>(ex.output_values().size()));
  double norm = 0;
  for (double v : testing::to_doubles(params.grad("encoder.0.weight"), ctx.stream())) norm += v * v;
  EXPECT_GT(norm, 0);
}

}  // namespace
}  // namespace baton::models
