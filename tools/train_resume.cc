// find_resume_point, stored_settings and check_resume_overrides: resuming exactly the run that was
// saved, or saying why not.
#include "tools/train_resume.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_metadata.h"
#include "runtime/train/safetensors.h"
#include "tools/train_flags.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

// The JSON pointer of a config file's field: "a.b" is json["a"]["b"].
nlohmann::json::json_pointer pointer_of(std::string field) {
  std::replace(field.begin(), field.end(), '.', '/');
  return nlohmann::json::json_pointer("/" + field);
}

// The root's step-… directories that are not complete checkpoints, and whether it holds anything
// else (hidden entries, such as saves in progress, aside).
void survey(const fs::path& root, std::vector<std::string>& incomplete, bool& other_files) {
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".")) continue;
    if (!CheckpointManager::is_step_directory_name(name)) {
      other_files = true;
      continue;
    }
    const std::string missing = CheckpointManager::missing_file(it->path().string());
    if (!missing.empty()) incomplete.push_back(name + " (no " + missing + ")");
  }
  BATON_CHECK(!ec, "--resume ", root.string(), ": cannot list it: ", ec.message());
  std::sort(incomplete.begin(), incomplete.end());  // by step: the names have the same width
}

// A refused field as messages name it: the model (a name or a spec) as one, "optimizer type", a
// parallel field with its flag ("parallel.data_parallel (--data-parallel)").
std::string refused_name(const TrainFlag& row) {
  if (row.scope != FlagScope::train) return row.field + " (" + row.flag() + ")";
  if (row.field == "model_spec") return "model";
  std::string name = row.field;
  std::replace(name.begin(), name.end(), '.', ' ');
  return name;
}

// What a refusal compares: the model as one setting, the optimiser's type (sgd when the file leaves it
// out), any other field as the config file writes it (`json`: `config` as it does).
std::string refused_text(const TrainConfig& config, const nlohmann::json& json, const std::string& field) {
  if (field == "model" || field == "model_spec")
    return config.model_spec.empty() ? config.model : "spec " + config.model_spec;
  if (field == "optimizer.type") return config.optimizer.value("type", std::string("sgd"));
  const nlohmann::json& value = json.at(pointer_of(field));
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// The settings as a config file writes them, the parallel object with them when known.
nlohmann::json settings_json(const TrainConfig& train, const parallel::ParallelConfig* parallel) {
  nlohmann::json json = train.to_json();
  json.erase("parallel");
  if (parallel) json["parallel"] = parallel->to_json();
  return json;
}

// The row's rule between these two runs (refuse_if_averaging resolved).
OnResume rule_of(const TrainFlag& row, const StoredSettings& stored, const TrainSettings& requested) {
  if (row.on_resume != OnResume::refuse_if_averaging) return row.on_resume;
  const bool both_average = stored.parallel->model_averaging != parallel::Averaging::none &&
                            requested.parallel.model_averaging != parallel::Averaging::none;
  return both_average ? OnResume::refuse : OnResume::warn;
}

// What a resumed run must keep, and how to start afresh instead, after a refusal of `row`.
std::string refusal_reason(const TrainFlag& row, const std::string& checkpoint) {
  const std::string weights = (fs::path(checkpoint) / kModelFileName).string();
  if (row.scope != FlagScope::train) {
    return "model averaging's per-replica state is tied to its variant, replicas, --average-every and "
           "--local-after: resume with the checkpoint's (or start a new run from its weights with --weights " +
           weights + ")";
  }
  return "a resumed run continues with the same model, data, batch, seed and optimiser (start a new run from its "
         "weights with --weights " +
         weights + " instead)";
}

}  // namespace

ResumePoint find_resume_point(const std::string& dir) {
  const fs::path path(dir);
  std::error_code ec;
  if (CheckpointManager::is_step_directory_name(path.filename().string()) && fs::is_directory(path, ec)) {
    const std::string missing = CheckpointManager::missing_file(path.string());
    BATON_CHECK(missing.empty(), "--resume ", dir, ": this checkpoint is incomplete (it has no ", missing,
                "); resume from its directory, ", path.parent_path().string(), ", to continue the newest complete one");
    const CheckpointManager manager(path.parent_path().string(), 0);
    const std::string newest = *manager.latest();
    BATON_CHECK(fs::equivalent(newest, path, ec), "--resume ", dir, ": a newer checkpoint, ", newest,
                ", follows it; --resume ", path.parent_path().string(),
                " continues the newest (to go back to this one, move the newer ones out of the directory first)");
    return {path.parent_path().string(), newest, ""};
  }
  if (!fs::exists(path, ec)) return {dir, std::nullopt, ""};
  BATON_CHECK(fs::is_directory(path, ec), "--resume ", dir, ": not a directory (expected a checkpoint directory)");
  const CheckpointManager manager(dir, 0);
  std::vector<std::string> incomplete;
  bool other_files = false;
  survey(path, incomplete, other_files);
  if (const std::optional<std::string> newest = manager.latest()) {
    ResumePoint point{dir, newest, ""};
    const std::string newest_name = fs::path(*newest).filename().string();
    for (const std::string& name : incomplete) {
      if (name > newest_name) point.warning += "warning: passing over the incomplete " + name + "\n";
    }
    if (!point.warning.empty()) point.warning += "warning: resuming from " + *newest + ", the newest complete one\n";
    return point;
  }
  if (!incomplete.empty()) {
    std::string list;
    for (const std::string& name : incomplete) list += (list.empty() ? "" : ", ") + name;
    BATON_FAIL("--resume ", dir, ": no complete checkpoint, only incomplete ones: ", list,
               "; not starting a new run over them (move them away to start afresh)");
  }
  BATON_CHECK(!other_files, "--resume ", dir,
              ": holds files but no checkpoint (no step-… directory): is it the checkpoint directory? (a new run "
              "resumes from an empty or missing directory)");
  return {dir, std::nullopt, ""};
}

StoredSettings stored_settings(const std::string& checkpoint) {
  const std::string file = (fs::path(checkpoint) / kModelFileName).string();
  const std::string where = "checkpoint file '" + file + "' (metadata 'train_config')";
  nlohmann::json json = read_checkpoint_state(SafetensorsFile(file)).train_config;
  BATON_CHECK(!json.is_null(), "--resume: checkpoint file '", file,
              "' has no metadata 'train_config' (it was not saved by baton train), so the model and settings it "
              "continues are unknown; start a new run from its weights with --weights ",
              file, " instead");
  StoredSettings stored;
  if (json.is_object() && json.contains("parallel")) stored.parallel = parallel::take_parallel_config(json, where);
  if (!json.is_null()) stored.train.update_from_json(json, where);
  stored.train.weights.clear();  // the saved run's start, not this one's
  stored.train.resume = false;
  stored.train.overwrite = false;  // how that run claimed its directory
  return stored;
}

nlohmann::json parallel_to_store(const parallel::ParallelConfig& parallel) {
  nlohmann::json json = parallel.to_json();
  json.erase("trace");
  return json;
}

std::string check_resume_overrides(const StoredSettings& stored, const TrainSettings& requested,
                                   const std::string& checkpoint) {
  const parallel::ParallelConfig* stored_parallel = stored.parallel ? &*stored.parallel : nullptr;
  const nlohmann::json was = settings_json(stored.train, stored_parallel);
  const nlohmann::json now = settings_json(requested.train, stored_parallel ? &requested.parallel : nullptr);
  // The rows the checkpoint can answer: the parallel ones only when it stores its parallel settings.
  std::vector<const TrainFlag*> rows;
  for (const TrainFlag& row : train_flags()) {
    if (row.scope == FlagScope::train || stored_parallel) rows.push_back(&row);
  }
  for (const TrainFlag* row : rows) {
    if (rule_of(*row, stored, requested) != OnResume::refuse) continue;
    const std::string was_text = refused_text(stored.train, was, row->field);
    const std::string now_text = refused_text(requested.train, now, row->field);
    BATON_CHECK(was_text == now_text, "--resume: the checkpoint ", checkpoint, " was trained with ", refused_name(*row),
                " ", was_text, ", this command asks for ", now_text, "; ", refusal_reason(*row, checkpoint));
  }
  std::string warnings;
  std::vector<std::string> warned;  // a field once, however many flags set parts of it
  for (const TrainFlag* row : rows) {
    // The unit warned about: the whole optimiser or schedule; each parallel field on its own.
    const std::string field = row->scope == FlagScope::train ? row->field.substr(0, row->field.find('.')) : row->field;
    if (rule_of(*row, stored, requested) != OnResume::warn ||
        std::find(warned.begin(), warned.end(), field) != warned.end()) {
      continue;
    }
    warned.push_back(field);
    const nlohmann::json& was_value = was.at(pointer_of(field));
    const nlohmann::json& now_value = now.at(pointer_of(field));
    if (was_value == now_value) continue;
    warnings += "warning: resuming with " + field + " " + now_value.dump() + " instead of the checkpoint's " +
                was_value.dump() + "\n";
  }
  return warnings;
}

}  // namespace baton::cli
