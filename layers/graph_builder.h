// GraphBuilder: the C++ way to write a network, node by node, with shapes inferred as you go:
//
//   GraphBuilder g;
//   auto x = g.input("x", {32, 3, 224, 224});
//   auto y = g.conv2d(x, {.out_channels = 64, .kernel = 7, .stride = 2, .padding = 3, .bias = false}, "conv1");
//   y = g.relu(g.batch_norm2d(y, {}, "bn1"), "relu");
//
// Each call creates the registered layer from its PyTorch-style config (input sizes such as
// in_channels are taken from the input's shape), so a built graph serialises to JSON and back.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/fan_in_init.h"
#include "runtime/graph/graph.h"

namespace baton::layers {

// One number for both spatial dimensions, or {h, w}.
struct Pair {
  Pair(int64_t both) : h(both), w(both) {}  // NOLINT: implicit by design (.kernel = 3)
  Pair(int64_t height, int64_t width) : h(height), w(width) {}
  int64_t h, w;
  nlohmann::json json() const { return h == w ? nlohmann::json(h) : nlohmann::json::array({h, w}); }
};

struct Conv2dArgs {
  int64_t out_channels = 0;
  Pair kernel = 3;
  Pair stride = 1;
  Pair padding = 0;
  Pair dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  WeightInit init{};  // initialiser overrides (default: PyTorch's)
};

struct BatchNormArgs {
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = true;
};

struct PoolArgs {
  Pair kernel = 2;
  Pair stride = 0;  // 0: the kernel size (PyTorch's default)
  Pair padding = 0;
  bool ceil_mode = false;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const LayerRegistry& registry = builtin_layers()) : registry_(registry) {}

  ValueId input(const std::string& name, const Shape& shape, DType dtype = kDefaultDType);
  // Any registered layer type with its JSON config.
  std::vector<ValueId> layer(const std::string& type, const nlohmann::json& config, const std::vector<ValueId>& inputs,
                             const std::string& name);

  ValueId conv2d(ValueId x, const Conv2dArgs& args, const std::string& name);
  ValueId batch_norm2d(ValueId x, const BatchNormArgs& args, const std::string& name);
  ValueId linear(ValueId x, int64_t out_features, const std::string& name, bool bias = true,
                 const WeightInit& init = {});
  ValueId relu(ValueId x, const std::string& name);
  ValueId relu6(ValueId x, const std::string& name);
  ValueId sigmoid(ValueId x, const std::string& name);
  ValueId tanh(ValueId x, const std::string& name);
  ValueId max_pool2d(ValueId x, const PoolArgs& args, const std::string& name);
  ValueId avg_pool2d(ValueId x, const PoolArgs& args, const std::string& name);
  ValueId adaptive_avg_pool2d(ValueId x, const std::string& name, Pair output_size = 1);
  ValueId dropout(ValueId x, double p, const std::string& name);
  ValueId add(const std::vector<ValueId>& xs, const std::string& name);
  ValueId concat(const std::vector<ValueId>& xs, const std::string& name);  // along channels
  ValueId flatten(ValueId x, const std::string& name);
  // Class indices (i32 / i64) to one-hot rows of `classes` values of `dtype` (layers/one_hot.h).
  ValueId one_hot(ValueId x, int64_t classes, DType dtype, const std::string& name);
  ValueId identity(ValueId x, const std::string& name);
  ValueId softmax_cross_entropy(ValueId logits, ValueId labels, const std::string& name, double label_smoothing = 0);
  ValueId mse_loss(ValueId prediction, ValueId target, const std::string& name);

  // Marks a graph output (the loss, the logits).
  void output(ValueId v) { graph_.mark_output(v); }
  const Shape& shape(ValueId v) const { return graph_.value(v).shape; }
  const Graph& graph() const { return graph_; }
  // Validates and returns the graph (the builder is left empty).
  Graph build();

 private:
  ValueId single(const std::string& type, const nlohmann::json& config, const std::vector<ValueId>& inputs,
                 const std::string& name);

  const LayerRegistry& registry_;
  Graph graph_;
};

}  // namespace baton::layers
