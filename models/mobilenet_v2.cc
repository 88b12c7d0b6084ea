// MobileNetV2 (Sandler et al. 2018), width 1.0, as torchvision builds it: features.0 (3x3 conv, BN,
// ReLU6), features.1 .. 17 (inverted residual blocks, each `features.<i>.conv.<k>`), features.18
// (1x1 conv to 1280, BN, ReLU6), a global average pool, and classifier.0 (Dropout 0.2),
// classifier.1 (Linear). Convolutions start from kaiming_normal_(fan_out), linear layers from
// N(0, 0.01) with bias 0, batch norms from weight 1 and bias 0 (torchvision's MobileNetV2.__init__).
#include <string>

#include "models/model_builders.h"
#include "models/model_parts.h"

namespace baton::models {
namespace {

using layers::GraphBuilder;

// torchvision's Conv2dNormActivation: <prefix>.0 conv (padding (k - 1) / 2, no bias), <prefix>.1
// batch norm, <prefix>.2 ReLU6.
ValueId conv_bn_relu6(GraphBuilder& g, ValueId x, int64_t out, int64_t kernel, int64_t stride, int64_t groups,
                      const std::string& prefix) {
  const layers::Conv2dArgs conv = with_kaiming_fan_out({.out_channels = out,
                                                        .kernel = kernel,
                                                        .stride = stride,
                                                        .padding = (kernel - 1) / 2,
                                                        .groups = groups,
                                                        .bias = false});
  return g.relu6(g.batch_norm2d(g.conv2d(x, conv, prefix + ".0"), {}, prefix + ".1"), prefix + ".2");
}

// torchvision's InvertedResidual: [1x1 expansion,] 3x3 depthwise with the stride, 1x1 linear
// projection and batch norm; x + that when the stride is 1 and the channels stay.
ValueId inverted_residual(GraphBuilder& g, ValueId x, int64_t out, int64_t stride, int64_t expand_ratio,
                          const std::string& prefix) {
  const int64_t in = g.shape(x)[1];
  const int64_t hidden = in * expand_ratio;
  int k = 0;
  const auto next = [&] { return prefix + ".conv." + std::to_string(k++); };
  ValueId y = x;
  if (expand_ratio != 1) y = conv_bn_relu6(g, y, hidden, 1, 1, 1, next());
  y = conv_bn_relu6(g, y, hidden, 3, stride, hidden, next());
  y = g.conv2d(y, with_kaiming_fan_out({.out_channels = out, .kernel = 1, .bias = false}), next());
  y = g.batch_norm2d(y, {}, next());
  return stride == 1 && in == out ? g.add({x, y}, prefix + ".add") : y;
}

struct BlockGroup {
  int64_t expand_ratio, channels;
  int repeats;
  int64_t stride;
};

// torchvision's inverted_residual_setting (t, c, n, s).
constexpr BlockGroup kSetting[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                   {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};

}  // namespace

Graph build_mobilenet_v2(const ModelOptions& o) {
  GraphBuilder g;
  ValueId x = declare_inputs(g, o, Task::classification);
  x = conv_bn_relu6(g, x, 32, 3, 2, 1, "features.0");
  int index = 1;
  for (const BlockGroup& group : kSetting) {
    for (int i = 0; i < group.repeats; ++i) {
      x = inverted_residual(g, x, group.channels, i == 0 ? group.stride : 1, group.expand_ratio,
                            "features." + std::to_string(index++));
    }
  }
  x = conv_bn_relu6(g, x, 1280, 1, 1, 1, "features." + std::to_string(index));
  x = g.dropout(g.flatten(g.adaptive_avg_pool2d(x, "avgpool"), "flatten"), dropout_probability(o, 0.2), "classifier.0");
  const layers::WeightInit linear_init{.weight = Initializer::normal(0, 0.01), .bias = Initializer::constant(0)};
  return finish_classifier(g, g.linear(x, o.num_classes, "classifier.1", true, linear_init), o);
}

}  // namespace baton::models
