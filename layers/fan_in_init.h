// PyTorch's default initialisation of weight layers (Conv2d, Linear): kaiming_uniform_(a = sqrt(5))
// for the weight and the matching bias rule, both U(-1/sqrt(fan_in), 1/sqrt(fan_in)), unless the
// layer's config overrides them ("weight_init", "bias_init": model builders follow torchvision).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "runtime/graph/json_config.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

inline Initializer fan_in_uniform(int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return Initializer::uniform(-bound, bound);
}

// Initialiser overrides of a weight layer; nullopt keeps PyTorch's default.
struct WeightInit {
  std::optional<Initializer> weight{};
  std::optional<Initializer> bias{};

  bool operator==(const WeightInit&) const = default;
};

// `weight` with weight decay and, when `bias`, `bias` [channels] without.
inline std::vector<TensorSpec> weight_and_bias_specs(Shape weight_shape, int64_t fan_in, bool bias,
                                                     const WeightInit& init) {
  std::vector<TensorSpec> specs;
  const int64_t channels = weight_shape[0];
  specs.push_back(
      {.name = "weight", .shape = std::move(weight_shape), .init = init.weight.value_or(fan_in_uniform(fan_in))});
  if (bias) {
    specs.push_back({.name = "bias",
                     .shape = Shape{channels},
                     .init = init.bias.value_or(fan_in_uniform(fan_in)),
                     .weight_decay = false});
  }
  return specs;
}

// The overrides as config fields ("weight_init", "bias_init"; only those set) added to `config`.
inline nlohmann::json with_init_fields(nlohmann::json config, const WeightInit& init) {
  if (init.weight) config["weight_init"] = initializer_json(*init.weight);
  if (init.bias) config["bias_init"] = initializer_json(*init.bias);
  return config;
}

// The overrides read from a layer's config.
inline WeightInit read_init_fields(const JsonConfig& c) {
  return {.weight = c.get_initializer("weight_init"), .bias = c.get_initializer("bias_init")};
}

}  // namespace baton::layers
