// Inputs, heads and initialisers shared by the reference models.
#include "models/model_parts.h"

#include <cmath>

namespace baton::models {

ValueId declare_inputs(layers::GraphBuilder& g, const ModelOptions& o, Task task) {
  const ValueId x = g.input("x", Shape{o.batch_size, o.in_channels, o.image_size, o.image_size}, o.dtype);
  if (task == Task::classification && o.with_loss) g.input("labels", Shape{o.batch_size}, DType::i64);
  return x;
}

Graph finish_classifier(layers::GraphBuilder& g, ValueId logits, const ModelOptions& o) {
  if (o.with_loss) {
    g.output(g.softmax_cross_entropy(logits, g.graph().value_id("labels"), "loss", o.label_smoothing));
  }
  g.output(logits);
  return g.build();
}

Graph finish_reconstruction(layers::GraphBuilder& g, ValueId reconstruction, ValueId target, const ModelOptions& o) {
  if (o.with_loss) g.output(g.mse_loss(reconstruction, target, "loss"));
  g.output(reconstruction);
  return g.build();
}

double dropout_probability(const ModelOptions& o, double torchvision_p) { return o.dropout.value_or(torchvision_p); }

Initializer kaiming_normal_fan_out(int64_t out_channels, const layers::Pair& kernel) {
  const auto fan_out = static_cast<double>(out_channels * kernel.h * kernel.w);
  return Initializer::normal(0, std::sqrt(2.0 / fan_out));
}

layers::Conv2dArgs with_kaiming_fan_out(layers::Conv2dArgs args) {
  args.init.weight = kaiming_normal_fan_out(args.out_channels, args.kernel);
  return args;
}

}  // namespace baton::models
