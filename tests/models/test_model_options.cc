// ModelOptions::dtype and ModelOptions::dropout: an f64 ResNet-20 has f64 inputs, outputs and
// parameters and trains a step; dropout set to 0 makes AlexNet's train-mode forward deterministic and
// equal to its eval-mode forward; the Dropout layers of every model with dropout take the option.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "models/model_registry.h"
#include "runtime/graph/executor.h"
#include "runtime/train/graph_contract.h"
#include "tests/models/two_image_batch.h"
#include "tests/support/test_support.h"

namespace baton::models {
namespace {

// The drop probability of every Dropout layer of the model's spec, in order.
std::vector<double> dropout_probabilities(const std::string& model, std::optional<double> dropout) {
  ModelOptions o = default_options(model);
  o.dropout = dropout;
  const nlohmann::json spec = build_model(model, o).to_json();
  std::vector<double> out;
  for (const nlohmann::json& layer : spec["layers"]) {
    if (layer["type"] == "Dropout") out.push_back(layer["params"]["p"].get<double>());
  }
  return out;
}

TEST(ModelOptions, DropoutReplacesEveryDropLayersProbability) {
  EXPECT_EQ(dropout_probabilities("vgg11", std::nullopt), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(dropout_probabilities("vgg16_bn", 0.0), (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(dropout_probabilities("alexnet", std::nullopt), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(dropout_probabilities("alexnet", 0.25), (std::vector<double>{0.25, 0.25}));
  EXPECT_EQ(dropout_probabilities("mobilenet_v2", std::nullopt), (std::vector<double>{0.2}));
  EXPECT_EQ(dropout_probabilities("mobilenet_v2", 0.0), (std::vector<double>{0.0}));
  EXPECT_TRUE(dropout_probabilities("resnet18", 0.0).empty());  // no dropout to switch off
}

TEST(ModelOptions, BadDTypeOrDropoutIsAClearError) {
  ModelOptions o = default_options("resnet20");
  o.dtype = DType::f16;
  EXPECT_ERROR_MENTIONS("build_model(\"resnet20\"): option dtype is f16, expected f32 or f64",
                        build_model("resnet20", o));
  o.dtype = DType::i64;
  EXPECT_ERROR_MENTIONS("option dtype is i64", build_model("resnet20", o));
  o = default_options("vgg11");
  o.dropout = 1.0;
  EXPECT_ERROR_MENTIONS("build_model(\"vgg11\"): option dropout is 1, expected a drop probability in [0, 1)",
                        build_model("vgg11", o));
  o.dropout = -0.1;
  EXPECT_ERROR_MENTIONS("option dropout is -0.1", build_model("vgg11", o));
}

TEST(ModelOptions, Float64ResNet20HasFloat64ValuesAndParametersAndTrainsAStep) {
  Context ctx(Device::cpu());
  ModelOptions o = default_options("resnet20");
  o.batch_size = 2;
  o.dtype = DType::f64;
  const Graph g = build_model("resnet20", o);
  EXPECT_EQ(g.value(g.value_id("x")).dtype, DType::f64);
  EXPECT_EQ(g.value(g.value_id("labels")).dtype, DType::i64);
  for (ValueId v : g.outputs()) EXPECT_EQ(g.value(v).dtype, DType::f64) << g.value(v).name;
  ASSERT_EQ(parameter_dtype(g), DType::f64);
  // The spec keeps the dtype.
  const Graph back = Graph::from_json(g.to_json(), layers::builtin_layers(), "resnet20.json");
  EXPECT_EQ(parameter_dtype(back), DType::f64);

  ParamStore params(g, g.topological_order(), parameter_dtype(g), ctx);
  params.initialize(ctx, 17);
  params.zero_grads(ctx);
  EXPECT_EQ(params.params_flat().dtype(), DType::f64);
  EXPECT_EQ(params.param("layer3.2.conv2.weight").dtype(), DType::f64);
  EXPECT_EQ(params.buffer("bn1.running_var").dtype(), DType::f64);

  Executor ex(g, g.topological_order(), params);
  const std::vector<Tensor> inputs = two_image_batch(ex, g, DType::f64, ctx.stream());
  Tape tape;
  const std::vector<Tensor> out = ex.forward(ctx, inputs, tape, Mode::train, 1);
  for (const Tensor& t : out) EXPECT_EQ(t.dtype(), DType::f64);
  const double loss = testing::to_doubles(out[executor_output_index(ex, loss_output(g))], ctx.stream())[0];
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_GT(loss, 0.5);  // about ln 10 for random logits
  ex.backward(ctx, tape, std::vector<Tensor>(out.size()));
  for (const ParamEntry& e : params.params()) {
    double norm = 0;
    for (double v : testing::to_doubles(params.grad(e.name), ctx.stream())) norm += v * v;
    EXPECT_TRUE(std::isfinite(norm) && norm > 0) << e.name << " has gradient norm " << norm;
  }
}

// AlexNet on 64x64 images (no batch norm: train and eval mode differ only by dropout): the logits
// of forward in `mode` with random-layer key `seed`.
class AlexNetLogits {
 public:
  explicit AlexNetLogits(std::optional<double> dropout)
      : graph_(build(dropout)), params_(graph_, order(), DType::f32, ctx_) {
    params_.initialize(ctx_, 3);
  }

  std::vector<double> operator()(Mode mode, uint64_t seed) {
    Executor ex(graph_, order(), params_);
    const Tensor x = testing::random_tensor(Shape{2, 3, 64, 64}, DType::f32, ctx_.stream(), 9);
    Tape tape;
    const std::vector<Tensor> out = ex.forward(ctx_, {x}, tape, mode, seed);
    return testing::to_doubles(out.at(0), ctx_.stream());
  }

 private:
  static Graph build(std::optional<double> dropout) {
    ModelOptions o = default_options("alexnet");
    o.batch_size = 2;
    o.image_size = 64;
    o.num_classes = 10;
    o.with_loss = false;
    o.dropout = dropout;
    return build_model("alexnet", o);
  }
  std::vector<NodeId> order() const { return graph_.topological_order(); }

  Context ctx_{Device::cpu()};
  Graph graph_;
  ParamStore params_;
};

TEST(ModelOptions, DropoutOffMakesTrainModeForwardEqualEvalModeForward) {
  AlexNetLogits off(0.0);
  const std::vector<double> eval = off(Mode::eval, 1);
  EXPECT_EQ(off(Mode::train, 1), eval);
  EXPECT_EQ(off(Mode::train, 2), eval);

  // The control: torchvision's dropout changes train-mode logits, differently for each key.
  AlexNetLogits on(std::nullopt);
  const std::vector<double> dropped = on(Mode::train, 1);
  EXPECT_NE(dropped, on(Mode::eval, 1));
  EXPECT_NE(dropped, on(Mode::train, 2));
}

}  // namespace
}  // namespace baton::models
