// What the reference models share: their inputs, their heads (the loss and the outputs in the
// registry's order) and torchvision's initialisers.
#pragma once

#include <cstdint>

#include "layers/graph_builder.h"
#include "models/model_registry.h"

namespace baton::models {

// Declares "x" [batch, in_channels, image_size, image_size] of options.dtype and, for classification with a
// loss, "labels" [batch] i64; returns x.
ValueId declare_inputs(layers::GraphBuilder& g, const ModelOptions& options, Task task);

// Marks the outputs, {SoftmaxCrossEntropy(logits, labels) named "loss", logits} with a loss and
// {logits} without, and returns the validated graph.
Graph finish_classifier(layers::GraphBuilder& g, ValueId logits, const ModelOptions& options);
// The same with {MSELoss(reconstruction, target) named "loss", reconstruction}.
Graph finish_reconstruction(layers::GraphBuilder& g, ValueId reconstruction, ValueId target,
                            const ModelOptions& options);

// options.dropout when set, else `torchvision_p` (the model's own drop probability).
double dropout_probability(const ModelOptions& options, double torchvision_p);

// torchvision's kaiming_normal_(mode="fan_out", nonlinearity="relu") of a convolution weight
// [out, in / groups, kh, kw]: N(0, sqrt(2 / fan_out)) with fan_out = out·kh·kw (groups do not
// divide it, as in PyTorch).
Initializer kaiming_normal_fan_out(int64_t out_channels, const layers::Pair& kernel);
// `args` with its weight initialised by kaiming_normal_fan_out.
layers::Conv2dArgs with_kaiming_fan_out(layers::Conv2dArgs args);

}  // namespace baton::models
