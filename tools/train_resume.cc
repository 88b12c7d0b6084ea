// find_resume_point, stored_config and check_resume_overrides: resuming exactly the run that was
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

// A refused field as messages name it: the model (a name or a spec) as one, "optimizer type".
std::string refused_name(const std::string& field) {
  if (field == "model_spec") return "model";
  std::string name = field;
  std::replace(name.begin(), name.end(), '.', ' ');
  return name;
}

// What a refusal compares: the model as one setting, the optimiser's type (sgd when the file leaves it
// out), any other field as the config file writes it (`json`: `config` as it does).
std::string refused_text(const TrainConfig& config, const nlohmann::json& json, const std::string& field) {
  if (field == "model" || field == "model_spec")
    return config.model_spec.empty() ? config.model : "spec " + config.model_spec;
  if (field == "optimizer.type") return config.optimizer.value("type", std::string("sgd"));
  std::string pointer = "/" + field;  // "a.b": json["a"]["b"]
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  const nlohmann::json& value = json.at(nlohmann::json::json_pointer(pointer));
  return value.is_string() ? value.get<std::string>() : value.dump();
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

TrainConfig stored_config(const std::string& checkpoint) {
  const std::string file = (fs::path(checkpoint) / kModelFileName).string();
  const CheckpointState state = read_checkpoint_state(SafetensorsFile(file));
  TrainConfig config;
  if (!state.train_config.is_null()) config.update_from_json(state.train_config, "checkpoint file '" + file + "'");
  config.weights.clear();  // the saved run's start, not this one's
  config.resume = false;
  return config;
}

std::string check_resume_overrides(const TrainConfig& stored, const TrainConfig& requested,
                                   const std::string& checkpoint) {
  // The rules of the table's train rows (a checkpoint holds the train config, not the parallel one).
  const nlohmann::json was = stored.to_json(), now = requested.to_json();
  for (const TrainFlag& row : train_flags()) {
    if (row.scope != FlagScope::train || row.on_resume != OnResume::refuse) continue;
    const std::string was_text = refused_text(stored, was, row.field);
    const std::string now_text = refused_text(requested, now, row.field);
    BATON_CHECK(was_text == now_text, "--resume: the checkpoint ", checkpoint, " was trained with ",
                refused_name(row.field), " ", was_text, ", this command asks for ", now_text,
                "; a resumed run continues with the same model, data, batch, seed and optimiser (start a new run "
                "from its weights with --weights ",
                (fs::path(checkpoint) / kModelFileName).string(), " instead)");
  }
  std::string warnings;
  std::vector<std::string> warned;  // a field once, however many flags set parts of it
  for (const TrainFlag& row : train_flags()) {
    const std::string field = row.field.substr(0, row.field.find('.'));  // the whole optimiser, schedule
    if (row.scope != FlagScope::train || row.on_resume != OnResume::warn ||
        std::find(warned.begin(), warned.end(), field) != warned.end()) {
      continue;
    }
    warned.push_back(field);
    if (was.at(field) == now.at(field)) continue;
    warnings += "warning: resuming with " + field + " " + now.at(field).dump() + " instead of the checkpoint's " +
                was.at(field).dump() + "\n";
  }
  return warnings;
}

}  // namespace baton::cli
