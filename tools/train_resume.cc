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
  const auto refuse_change = [&](const char* field, const std::string& was, const std::string& now) {
    BATON_CHECK(was == now, "--resume: the checkpoint ", checkpoint, " was trained with ", field, " ", was,
                ", this command asks for ", now,
                "; a resumed run continues with the same model, data, batch, seed and optimiser (start a new run "
                "from its weights with --weights ",
                (fs::path(checkpoint) / kModelFileName).string(), " instead)");
  };
  refuse_change("model", stored.model_spec.empty() ? stored.model : "spec " + stored.model_spec,
                requested.model_spec.empty() ? requested.model : "spec " + requested.model_spec);
  refuse_change("data", stored.data, requested.data);
  refuse_change("batch_size", std::to_string(stored.batch_size), std::to_string(requested.batch_size));
  refuse_change("seed", std::to_string(stored.seed), std::to_string(requested.seed));
  refuse_change("optimizer type", stored.optimizer.value("type", std::string("sgd")),
                requested.optimizer.value("type", std::string("sgd")));
  std::string warnings;
  const auto warn_change = [&](const char* field, const nlohmann::json& was, const nlohmann::json& now) {
    if (was == now) return;
    warnings += "warning: resuming with " + std::string(field) + " " + now.dump() + " instead of the checkpoint's " +
                was.dump() + "\n";
  };
  warn_change("optimizer", stored.optimizer, requested.optimizer);
  warn_change("lr_schedule", stored.lr_schedule, requested.lr_schedule);
  warn_change("label_smoothing", stored.label_smoothing, requested.label_smoothing);
  warn_change("augment", stored.augment, requested.augment);
  warn_change("tf32", stored.tf32, requested.tf32);
  warn_change("channels_last", stored.channels_last, requested.channels_last);
  return warnings;
}

}  // namespace baton::cli
