// The builder of each model family, called by the registry (models/model_registry.h) with options
// it has already checked.
#pragma once

#include "models/model_registry.h"

namespace baton::models {

// torchvision's ResNet-18/34 (basic blocks) and ResNet-50/101/152 (bottlenecks, stride on the 3x3).
Graph build_resnet(int depth, const ModelOptions& options);
// He et al.'s CIFAR ResNets: depth 6n + 2 (20, 32, 44, 56, 110), 1x1-conv + BN shortcuts.
Graph build_cifar_resnet(int depth, const ModelOptions& options);
// torchvision's VGG-11/13/16/19 (configurations A, B, D, E), with or without batch norm.
Graph build_vgg(int depth, bool batch_norm, const ModelOptions& options);
Graph build_alexnet(const ModelOptions& options);
Graph build_mobilenet_v2(const ModelOptions& options);
Graph build_mlp_autoencoder(const ModelOptions& options);
// token-mlp: one-hot ids, Linear, ReLU, Linear to per-position logits, per-position cross-entropy.
Graph build_token_mlp(const ModelOptions& options);

}  // namespace baton::models
