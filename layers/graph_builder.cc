// GraphBuilder implementation: each call is a registry lookup with a PyTorch-style config.
#include "layers/graph_builder.h"

#include "runtime/core/error.h"

namespace baton::layers {
namespace {

int64_t channels_of(const Shape& s, const std::string& name) {
  BATON_CHECK(s.rank() >= 2, "node '", name, "': input shape ", s.str(), " has no channel dimension");
  return s[1];
}

nlohmann::json pool_config(const PoolArgs& a) {
  return {{"kernel_size", a.kernel.json()},
          {"stride", (a.stride.h == 0 && a.stride.w == 0) ? a.kernel.json() : a.stride.json()},
          {"padding", a.padding.json()},
          {"ceil_mode", a.ceil_mode}};
}

}  // namespace

ValueId GraphBuilder::input(const std::string& name, const Shape& shape, DType dtype) {
  return graph_.add_input(name, shape, dtype);
}

std::vector<ValueId> GraphBuilder::layer(const std::string& type, const nlohmann::json& config,
                                         const std::vector<ValueId>& inputs, const std::string& name) {
  std::unique_ptr<Layer> l;
  try {
    l = registry_.create(type, config);
  } catch (Error& e) {
    e.add_context("in node '" + name + "' (" + type + ")");
    throw;
  }
  return graph_.add_node(name, std::move(l), inputs);
}

ValueId GraphBuilder::single(const std::string& type, const nlohmann::json& config, const std::vector<ValueId>& inputs,
                             const std::string& name) {
  return layer(type, config, inputs, name)[0];
}

ValueId GraphBuilder::conv2d(ValueId x, const Conv2dArgs& a, const std::string& name) {
  return single("Conv2d",
                with_init_fields({{"in_channels", channels_of(shape(x), name)},
                                  {"out_channels", a.out_channels},
                                  {"kernel_size", a.kernel.json()},
                                  {"stride", a.stride.json()},
                                  {"padding", a.padding.json()},
                                  {"dilation", a.dilation.json()},
                                  {"groups", a.groups},
                                  {"bias", a.bias}},
                                 a.init),
                {x}, name);
}

ValueId GraphBuilder::batch_norm2d(ValueId x, const BatchNormArgs& a, const std::string& name) {
  return single(
      "BatchNorm2d",
      {{"num_features", channels_of(shape(x), name)}, {"eps", a.eps}, {"momentum", a.momentum}, {"affine", a.affine}},
      {x}, name);
}

ValueId GraphBuilder::linear(ValueId x, int64_t out_features, const std::string& name, bool bias,
                             const WeightInit& init) {
  const Shape& s = shape(x);
  BATON_CHECK(s.rank() >= 2, "node '", name, "': Linear expects [N, ..., features], got ", s.str());
  return single(
      "Linear",
      with_init_fields({{"in_features", s[s.rank() - 1]}, {"out_features", out_features}, {"bias", bias}}, init), {x},
      name);
}

ValueId GraphBuilder::relu(ValueId x, const std::string& name) {
  return single("ReLU", nlohmann::json::object(), {x}, name);
}
ValueId GraphBuilder::relu6(ValueId x, const std::string& name) {
  return single("ReLU6", nlohmann::json::object(), {x}, name);
}
ValueId GraphBuilder::sigmoid(ValueId x, const std::string& name) {
  return single("Sigmoid", nlohmann::json::object(), {x}, name);
}
ValueId GraphBuilder::tanh(ValueId x, const std::string& name) {
  return single("Tanh", nlohmann::json::object(), {x}, name);
}

ValueId GraphBuilder::max_pool2d(ValueId x, const PoolArgs& a, const std::string& name) {
  return single("MaxPool2d", pool_config(a), {x}, name);
}

ValueId GraphBuilder::avg_pool2d(ValueId x, const PoolArgs& a, const std::string& name) {
  return single("AvgPool2d", pool_config(a), {x}, name);
}

ValueId GraphBuilder::adaptive_avg_pool2d(ValueId x, const std::string& name, Pair output_size) {
  return single("AdaptiveAvgPool2d", {{"output_size", output_size.json()}}, {x}, name);
}

ValueId GraphBuilder::dropout(ValueId x, double p, const std::string& name) {
  return single("Dropout", {{"p", p}}, {x}, name);
}

ValueId GraphBuilder::add(const std::vector<ValueId>& xs, const std::string& name) {
  return single("Add", nlohmann::json::object(), xs, name);
}

ValueId GraphBuilder::concat(const std::vector<ValueId>& xs, const std::string& name) {
  return single("Concat", {{"dim", 1}}, xs, name);
}

ValueId GraphBuilder::one_hot(ValueId x, int64_t classes, DType dtype, const std::string& name) {
  return single("OneHot", {{"classes", classes}, {"dtype", std::string(dtype_name(dtype))}}, {x}, name);
}

ValueId GraphBuilder::flatten(ValueId x, const std::string& name) {
  return single("Flatten", nlohmann::json::object(), {x}, name);
}

ValueId GraphBuilder::identity(ValueId x, const std::string& name) {
  return single("Identity", nlohmann::json::object(), {x}, name);
}

ValueId GraphBuilder::softmax_cross_entropy(ValueId logits, ValueId labels, const std::string& name,
                                            double label_smoothing) {
  return single("SoftmaxCrossEntropy", {{"label_smoothing", label_smoothing}}, {logits, labels}, name);
}

ValueId GraphBuilder::mse_loss(ValueId prediction, ValueId target, const std::string& name) {
  return single("MSELoss", nlohmann::json::object(), {prediction, target}, name);
}

Graph GraphBuilder::build() {
  graph_.validate();
  Graph out = std::move(graph_);
  graph_ = Graph();
  return out;
}

}  // namespace baton::layers
