// PyTorch's default initialisation of weight layers (Conv2d, Linear): kaiming_uniform_(a = sqrt(5))
// for the weight and the matching bias rule, both U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "runtime/graph/layer.h"

namespace baton::layers {

inline Initializer fan_in_uniform(int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return Initializer::uniform(-bound, bound);
}

// `weight` with weight decay and, when `bias`, `bias` [channels] without.
inline std::vector<TensorSpec> weight_and_bias_specs(Shape weight_shape, int64_t fan_in, bool bias) {
  std::vector<TensorSpec> specs;
  const int64_t channels = weight_shape[0];
  specs.push_back({.name = "weight", .shape = std::move(weight_shape), .init = fan_in_uniform(fan_in)});
  if (bias) {
    specs.push_back({.name = "bias", .shape = Shape{channels}, .init = fan_in_uniform(fan_in), .weight_decay = false});
  }
  return specs;
}

}  // namespace baton::layers
