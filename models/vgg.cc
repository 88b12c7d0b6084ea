// VGG (Simonyan and Zisserman 2014) as torchvision builds it: `features.<i>` numbered as
// torchvision's nn.Sequential (conv, [batch norm,] ReLU per layer, max pools between blocks), a 7x7
// adaptive average pool, and `classifier.0 .. 6` (Linear, ReLU, Dropout, Linear, ReLU, Dropout,
// Linear). Convolutions start from kaiming_normal_(fan_out, relu) with bias 0, linear layers from
// N(0, 0.01) with bias 0, batch norms from weight 1 and bias 0 (torchvision's VGG.__init__).
#include <string>
#include <vector>

#include "models/model_builders.h"
#include "models/model_parts.h"
#include "runtime/core/error.h"

namespace baton::models {
namespace {

constexpr int kPool = 0;  // a max pool in a configuration; any other entry is a conv's channels

// torchvision's cfgs "A", "B", "D", "E".
std::vector<int> configuration(int depth) {
  switch (depth) {
    case 11:
      return {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};
    case 13:
      return {64, 64, kPool, 128, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};
    case 16:
      return {64, 64, kPool, 128, 128, kPool, 256, 256, 256, kPool, 512, 512, 512, kPool, 512, 512, 512, kPool};
    case 19:
      return {64,  64,  kPool, 128, 128,   kPool, 256, 256, 256, 256,  kPool,
              512, 512, 512,   512, kPool, 512,   512, 512, 512, kPool};
    default:
      BATON_FAIL("build_vgg: depth ", depth, " is not one of 11, 13, 16, 19");
  }
}

}  // namespace

Graph build_vgg(int depth, bool batch_norm, const ModelOptions& o) {
  layers::GraphBuilder g;
  ValueId x = declare_inputs(g, o, Task::classification);
  int index = 0;
  const auto next = [&] { return "features." + std::to_string(index++); };
  for (int channels : configuration(depth)) {
    if (channels == kPool) {
      x = g.max_pool2d(x, {.kernel = 2, .stride = 2}, next());
      continue;
    }
    layers::Conv2dArgs conv = with_kaiming_fan_out({.out_channels = channels, .kernel = 3, .padding = 1});
    conv.init.bias = Initializer::constant(0);
    x = g.conv2d(x, conv, next());
    if (batch_norm) x = g.batch_norm2d(x, {}, next());
    x = g.relu(x, next());
  }
  x = g.flatten(g.adaptive_avg_pool2d(x, "avgpool", 7), "flatten");
  const layers::WeightInit linear_init{.weight = Initializer::normal(0, 0.01), .bias = Initializer::constant(0)};
  x = g.dropout(g.relu(g.linear(x, 4096, "classifier.0", true, linear_init), "classifier.1"),
                dropout_probability(o, 0.5), "classifier.2");
  x = g.dropout(g.relu(g.linear(x, 4096, "classifier.3", true, linear_init), "classifier.4"),
                dropout_probability(o, 0.5), "classifier.5");
  return finish_classifier(g, g.linear(x, o.num_classes, "classifier.6", true, linear_init), o);
}

}  // namespace baton::models
