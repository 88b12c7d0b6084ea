// The registry of baton's built-in layers, and the registration function of each layer family.
#pragma once

#include "runtime/graph/layer_registry.h"

namespace baton::layers {

// Every built-in layer type (Conv2d, BatchNorm2d, Linear, ReLU, ...), registered once.
const LayerRegistry& builtin_layers();

void register_activation_layers(LayerRegistry& registry);
// Batch normalisation and pooling: BatchNorm2d; MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.
void register_batch_norm_layers(LayerRegistry& registry);
void register_pooling_layers(LayerRegistry& registry);

// Dropout, structural layers (Add, Concat, Flatten, Identity) and losses.
void register_dropout_layers(LayerRegistry& registry);
void register_structural_layers(LayerRegistry& registry);
void register_loss_layers(LayerRegistry& registry);
// Matrix products and convolution: Conv2d (layers/conv.h), Linear (layers/linear.h).
void register_conv_layers(LayerRegistry& registry);
void register_linear_layers(LayerRegistry& registry);
// OneHot (layers/one_hot.h): token ids to one-hot rows.
void register_one_hot_layers(LayerRegistry& registry);

}  // namespace baton::layers
