// ResNets: torchvision's ImageNet models (resnet18 ... resnet152) and He et al.'s CIFAR models
// (resnet20 ... resnet110), with torchvision's module names: conv1, bn1, layer<s>.<b>.conv1,
// layer<s>.<b>.downsample.0 / .1, fc. Convolutions start from kaiming_normal_(fan_out, relu), batch
// norms from weight 1 and bias 0, fc from PyTorch's default, as torchvision's ResNet.__init__ does.
#include <array>
#include <string>

#include "models/model_builders.h"
#include "models/model_parts.h"
#include "runtime/core/error.h"

namespace baton::models {
namespace {

using layers::Conv2dArgs;
using layers::GraphBuilder;

// A convolution without bias, padded to keep the size (before the stride), kaiming-initialised.
ValueId conv(GraphBuilder& g, ValueId x, int64_t out, int64_t kernel, int64_t stride, const std::string& name) {
  const Conv2dArgs args{.out_channels = out, .kernel = kernel, .stride = stride, .padding = kernel / 2, .bias = false};
  return g.conv2d(x, with_kaiming_fan_out(args), name);
}

ValueId conv_bn(GraphBuilder& g, ValueId x, int64_t out, int64_t kernel, int64_t stride, const std::string& prefix,
                const std::string& index) {
  return g.batch_norm2d(conv(g, x, out, kernel, stride, prefix + ".conv" + index), {}, prefix + ".bn" + index);
}

// x itself, or downsample.0 (1x1 conv with the block's stride) and downsample.1 (batch norm) when the
// block changes the size or the channels (torchvision's rule, and He et al.'s option B).
ValueId shortcut(GraphBuilder& g, ValueId x, int64_t out, int64_t stride, const std::string& prefix) {
  if (stride == 1 && g.shape(x)[1] == out) return x;
  return g.batch_norm2d(conv(g, x, out, 1, stride, prefix + ".downsample.0"), {}, prefix + ".downsample.1");
}

// torchvision's BasicBlock: two 3x3 convolutions, the first with the stride.
ValueId basic_block(GraphBuilder& g, ValueId x, int64_t planes, int64_t stride, const std::string& prefix) {
  ValueId y = g.relu(conv_bn(g, x, planes, 3, stride, prefix, "1"), prefix + ".relu1");
  y = conv_bn(g, y, planes, 3, 1, prefix, "2");
  return g.relu(g.add({y, shortcut(g, x, planes, stride, prefix)}, prefix + ".add"), prefix + ".relu2");
}

// torchvision's Bottleneck (ResNet v1.5): 1x1 reduce, 3x3 with the stride, 1x1 expand to 4·planes.
ValueId bottleneck(GraphBuilder& g, ValueId x, int64_t planes, int64_t stride, const std::string& prefix) {
  ValueId y = g.relu(conv_bn(g, x, planes, 1, 1, prefix, "1"), prefix + ".relu1");
  y = g.relu(conv_bn(g, y, planes, 3, stride, prefix, "2"), prefix + ".relu2");
  y = conv_bn(g, y, 4 * planes, 1, 1, prefix, "3");
  return g.relu(g.add({y, shortcut(g, x, 4 * planes, stride, prefix)}, prefix + ".add"), prefix + ".relu3");
}

struct Stage {
  int64_t planes;
  int blocks;
  int64_t stride;
};

// Stages layer1, layer2, ... of basic blocks or bottlenecks.
ValueId stages(GraphBuilder& g, ValueId x, const std::vector<Stage>& plan, bool bottlenecks) {
  for (size_t s = 0; s < plan.size(); ++s) {
    for (int b = 0; b < plan[s].blocks; ++b) {
      const std::string prefix = "layer" + std::to_string(s + 1) + "." + std::to_string(b);
      const int64_t stride = b == 0 ? plan[s].stride : 1;
      x = bottlenecks ? bottleneck(g, x, plan[s].planes, stride, prefix)
                      : basic_block(g, x, plan[s].planes, stride, prefix);
    }
  }
  return x;
}

// Global average pool, flatten, fc (PyTorch's default initialisation), then the head.
Graph classifier_head(GraphBuilder& g, ValueId x, const ModelOptions& o) {
  const ValueId pooled = g.flatten(g.adaptive_avg_pool2d(x, "avgpool"), "flatten");
  return finish_classifier(g, g.linear(pooled, o.num_classes, "fc"), o);
}

}  // namespace

Graph build_resnet(int depth, const ModelOptions& o) {
  std::array<int, 4> blocks{};
  bool bottlenecks = true;
  switch (depth) {
    case 18:
      blocks = {2, 2, 2, 2}, bottlenecks = false;
      break;
    case 34:
      blocks = {3, 4, 6, 3}, bottlenecks = false;
      break;
    case 50:
      blocks = {3, 4, 6, 3};
      break;
    case 101:
      blocks = {3, 4, 23, 3};
      break;
    case 152:
      blocks = {3, 8, 36, 3};
      break;
    default:
      BATON_FAIL("build_resnet: depth ", depth, " is not one of 18, 34, 50, 101, 152");
  }
  GraphBuilder g;
  ValueId x = declare_inputs(g, o, Task::classification);
  x = g.relu(g.batch_norm2d(conv(g, x, 64, 7, 2, "conv1"), {}, "bn1"), "relu");
  x = g.max_pool2d(x, {.kernel = 3, .stride = 2, .padding = 1}, "maxpool");
  x = stages(g, x, {{64, blocks[0], 1}, {128, blocks[1], 2}, {256, blocks[2], 2}, {512, blocks[3], 2}}, bottlenecks);
  return classifier_head(g, x, o);
}

Graph build_cifar_resnet(int depth, const ModelOptions& o) {
  BATON_CHECK(depth >= 8 && (depth - 2) % 6 == 0, "build_cifar_resnet: depth ", depth, " is not 6n + 2 with n >= 1");
  const int n = (depth - 2) / 6;
  GraphBuilder g;
  ValueId x = declare_inputs(g, o, Task::classification);
  x = g.relu(g.batch_norm2d(conv(g, x, 16, 3, 1, "conv1"), {}, "bn1"), "relu");
  x = stages(g, x, {{16, n, 1}, {32, n, 2}, {64, n, 2}}, false);
  return classifier_head(g, x, o);
}

}  // namespace baton::models
