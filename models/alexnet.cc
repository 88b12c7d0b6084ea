// AlexNet as torchvision builds it (the one-GPU variant of Krizhevsky's "One weird trick" paper:
// 64-192-384-256-256 channels): `features.0 .. 12`, a 6x6 adaptive average pool and
// `classifier.0 .. 6` (Dropout, Linear, ReLU, Dropout, Linear, ReLU, Linear). torchvision keeps
// PyTorch's default initialisation here, and so does baton.
#include "models/model_builders.h"
#include "models/model_parts.h"

namespace baton::models {

Graph build_alexnet(const ModelOptions& o) {
  layers::GraphBuilder g;
  ValueId x = declare_inputs(g, o, Task::classification);
  x = g.relu(g.conv2d(x, {.out_channels = 64, .kernel = 11, .stride = 4, .padding = 2}, "features.0"), "features.1");
  x = g.max_pool2d(x, {.kernel = 3, .stride = 2}, "features.2");
  x = g.relu(g.conv2d(x, {.out_channels = 192, .kernel = 5, .padding = 2}, "features.3"), "features.4");
  x = g.max_pool2d(x, {.kernel = 3, .stride = 2}, "features.5");
  x = g.relu(g.conv2d(x, {.out_channels = 384, .kernel = 3, .padding = 1}, "features.6"), "features.7");
  x = g.relu(g.conv2d(x, {.out_channels = 256, .kernel = 3, .padding = 1}, "features.8"), "features.9");
  x = g.relu(g.conv2d(x, {.out_channels = 256, .kernel = 3, .padding = 1}, "features.10"), "features.11");
  x = g.max_pool2d(x, {.kernel = 3, .stride = 2}, "features.12");
  x = g.flatten(g.adaptive_avg_pool2d(x, "avgpool", 6), "flatten");
  x = g.relu(g.linear(g.dropout(x, dropout_probability(o, 0.5), "classifier.0"), 4096, "classifier.1"), "classifier.2");
  x = g.relu(g.linear(g.dropout(x, dropout_probability(o, 0.5), "classifier.3"), 4096, "classifier.4"), "classifier.5");
  return finish_classifier(g, g.linear(x, o.num_classes, "classifier.6"), o);
}

}  // namespace baton::models
