// LayerRegistry: layer factories keyed by type name ("Conv2d"), building layers from JSON config.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph/layer.h"

namespace baton {

using LayerFactory = std::function<std::unique_ptr<Layer>(const nlohmann::json& config)>;

class LayerRegistry {
 public:
  // Throws if `type` is already registered.
  void add(const std::string& type, LayerFactory factory);
  bool contains(std::string_view type) const;
  // Throws baton::Error for an unknown type, listing the registered ones; config errors from the
  // factory name the field.
  std::unique_ptr<Layer> create(std::string_view type, const nlohmann::json& config) const;
  std::vector<std::string> types() const;

 private:
  std::map<std::string, LayerFactory, std::less<>> factories_;
};

}  // namespace baton
