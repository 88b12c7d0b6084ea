// Checkpoint metadata: numbers as decimal strings, JSON members as JSON text.
#include "runtime/train/checkpoint_metadata.h"

#include <charconv>

#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton {
namespace {

void put_json(Metadata& m, const char* key, const nlohmann::json& value) {
  if (!value.is_null()) m[key] = value.dump();
}

template <typename Int>
Int parse_integer(const SafetensorsFile& file, const std::string& key) {
  const std::string& text = file.metadata(key);
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  BATON_CHECK(error == std::errc() && end == text.data() + text.size() && !text.empty(), "checkpoint file '",
              file.path(), "': metadata '", key, "' is \"", text, "\", expected an integer");
  return value;
}

nlohmann::json optional_json(const SafetensorsFile& file, const char* key) {
  const auto it = file.metadata().find(key);
  if (it == file.metadata().end()) return nullptr;
  return parse_json_text(it->second, "checkpoint file '" + file.path() + "': metadata '" + key + "'");
}

}  // namespace

Metadata model_file_metadata(const CheckpointState& state, int64_t optimizer_steps) {
  Metadata m{{"format", std::string(kCheckpointFormat)},
             {"step", std::to_string(state.step)},
             {"epoch", std::to_string(state.epoch)},
             {"optimizer_steps", std::to_string(optimizer_steps)},
             {"seed", std::to_string(state.seed)}};
  put_json(m, "loader_position", state.loader_position);
  put_json(m, "rng", state.rng);
  put_json(m, "model_spec", state.model_spec);
  put_json(m, "train_config", state.train_config);
  put_json(m, "divergence", state.divergence);
  return m;
}

Metadata optimizer_file_metadata(const CheckpointState& state, const Optimizer& optimizer) {
  return {{"format", std::string(kCheckpointFormat)},
          {"step", std::to_string(state.step)},
          {"optimizer", std::string(optimizer.type())},
          {"optimizer_config", optimizer.config().dump()},
          {"optimizer_steps", std::to_string(optimizer.steps())}};
}

void check_checkpoint_format(const SafetensorsFile& file) {
  const auto it = file.metadata().find("format");
  BATON_CHECK(it != file.metadata().end() && it->second == kCheckpointFormat, "checkpoint file '", file.path(),
              "': metadata 'format' is ",
              it == file.metadata().end() ? std::string("missing") : "\"" + it->second + "\"", ", expected \"",
              kCheckpointFormat, "\"");
}

int64_t metadata_int(const SafetensorsFile& file, const std::string& key) { return parse_integer<int64_t>(file, key); }

CheckpointState read_checkpoint_state(const SafetensorsFile& model_file) {
  check_checkpoint_format(model_file);
  CheckpointState state;
  state.step = metadata_int(model_file, "step");
  state.epoch = metadata_int(model_file, "epoch");
  BATON_CHECK(state.step >= 0 && state.epoch >= 0, "checkpoint file '", model_file.path(), "': metadata 'step' (",
              state.step, ") and 'epoch' (", state.epoch, ") must not be negative");
  state.seed = parse_integer<uint64_t>(model_file, "seed");
  state.loader_position = optional_json(model_file, "loader_position");
  state.rng = optional_json(model_file, "rng");
  state.model_spec = optional_json(model_file, "model_spec");
  state.train_config = optional_json(model_file, "train_config");
  state.divergence = optional_json(model_file, "divergence");
  return state;
}

}  // namespace baton
