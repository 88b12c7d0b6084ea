// LayerRegistry: adding a layer factory by type name and building a layer from its JSON config.
#include "runtime/graph/layer_registry.h"

#include "runtime/core/error.h"

namespace baton {

void LayerRegistry::add(const std::string& type, LayerFactory factory) {
  BATON_CHECK(!factories_.contains(type), "layer type '", type, "' is registered twice");
  factories_.emplace(type, std::move(factory));
}

bool LayerRegistry::contains(std::string_view type) const { return factories_.find(type) != factories_.end(); }

std::unique_ptr<Layer> LayerRegistry::create(std::string_view type, const nlohmann::json& config) const {
  const auto it = factories_.find(type);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [name, factory] : factories_) known += (known.empty() ? "" : ", ") + name;
    BATON_FAIL("unknown layer type '", type, "'; registered types: ", known.empty() ? "(none)" : known);
  }
  return it->second(config);
}

std::vector<std::string> LayerRegistry::types() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : factories_) out.push_back(name);
  return out;
}

}  // namespace baton
