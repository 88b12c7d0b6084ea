// first_graph_difference: a walk over both JSON documents in step, stopping at the first value that
// differs, then the JSON path put in words (which layer, which field).
#include "runtime/train/graph_difference.h"

#include <optional>
#include <set>
#include <vector>

#include "runtime/core/error.h"

namespace baton {
namespace {

using Json = nlohmann::json;

// Layer parameters that a resumed run may set anew (OnResume::warn in the flag table).
const std::set<std::string> kResumableParams = {"label_smoothing"};

struct Difference {
  std::vector<std::string> path;  // keys and array indices from the root
  std::string stored, now;        // the values as JSON text ("absent" when one side lacks it)
};

std::string text_of(const Json* value) { return value == nullptr ? "absent" : value->dump(); }

std::optional<Difference> first_difference(const Json* stored, const Json* now, std::vector<std::string>& path) {
  if (stored != nullptr && now != nullptr && *stored == *now) return std::nullopt;
  const bool both_objects = stored != nullptr && now != nullptr && stored->is_object() && now->is_object();
  const bool both_arrays = stored != nullptr && now != nullptr && stored->is_array() && now->is_array();
  if (!both_objects && !both_arrays) return Difference{path, text_of(stored), text_of(now)};
  std::vector<std::string> keys;
  if (both_objects) {
    std::set<std::string> all;
    for (const auto& [key, value] : stored->items()) all.insert(key);
    for (const auto& [key, value] : now->items()) all.insert(key);
    const bool layer_params = path.size() == 3 && path[0] == "layers" && path[2] == "params";
    for (const std::string& key : all) {
      if (!(layer_params && kResumableParams.contains(key))) keys.push_back(key);
    }
  } else {
    for (size_t i = 0; i < std::max(stored->size(), now->size()); ++i) keys.push_back(std::to_string(i));
  }
  for (const std::string& key : keys) {
    const auto child = [&](const Json* parent) -> const Json* {
      if (both_objects) return parent->contains(key) ? &(*parent)[key] : nullptr;
      const size_t index = std::stoul(key);
      return index < parent->size() ? &(*parent)[index] : nullptr;
    };
    path.push_back(key);
    std::optional<Difference> found = first_difference(child(stored), child(now), path);
    path.pop_back();
    if (found) return found;
  }
  return std::nullopt;
}

std::string joined(const std::vector<std::string>& path, size_t from) {
  std::string out;
  for (size_t i = from; i < path.size(); ++i) out += (out.empty() ? "" : ".") + path[i];
  return out;
}

// "layer 'act1' (number 3), field 'type'" or "field 'outputs.1'".
std::string place_of(const Difference& d, const Json& stored, const Json& now) {
  if (d.path.size() < 2 || d.path[0] != "layers") return "field '" + joined(d.path, 0) + "'";
  const size_t index = std::stoul(d.path[1]);
  const Json& layers = index < stored["layers"].size() ? stored["layers"] : now["layers"];
  const std::string name = layers[index].value("name", std::string("?"));
  const std::string field = d.path.size() > 2 ? ", field '" + joined(d.path, 2) + "'" : "";
  return "layer '" + name + "' (number " + std::to_string(index + 1) + ")" + field;
}

}  // namespace

std::string first_graph_difference(const Json& stored, const Json& now) {
  std::vector<std::string> path;
  const std::optional<Difference> d = first_difference(&stored, &now, path);
  if (!d) return "";
  return place_of(*d, stored, now) + ": " + d->stored + " in the checkpoint, " + d->now + " now";
}

void check_same_graph(const Json& stored, const Json& now, const std::string& checkpoint) {
  if (stored.is_null()) return;
  const std::string difference = first_graph_difference(stored, now);
  BATON_CHECK(difference.empty(), "cannot resume from checkpoint '", checkpoint,
              "': its model differs from this run's at ", difference,
              " (was the model spec edited? a resumed run continues the same model; start a new run from its weights "
              "with --weights instead)");
}

}  // namespace baton
