// CheckpointManager: atomic checkpoint directories (temporary directory renamed into place),
// listing of complete checkpoints, and retention of the newest ones.
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_lock.h"
#include "runtime/train/checkpoint_metadata.h"

namespace baton {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kStepPrefix = "step-";

// "step-00000042".
std::string step_directory_name(int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%08lld", static_cast<long long>(step));
  return std::string(kStepPrefix) + digits;
}

// The step of a directory named "step-<at least 8 digits>", or -1 for any other name.
int64_t step_of(const std::string& name) {
  if (!name.starts_with(kStepPrefix)) return -1;
  const std::string digits = name.substr(kStepPrefix.size());
  if (digits.size() < 8 || digits.size() > 18) return -1;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return std::stoll(digits);
}

// A hidden directory "<root>/.<name>.tmp-XXXXXX", removed with its contents when destroyed.
class TemporaryDirectory {
 public:
  TemporaryDirectory(const fs::path& root, const std::string& name) {
    std::string pattern = (root / detail::concat(".", name, ".tmp-XXXXXX")).string();
    BATON_CHECK(::mkdtemp(pattern.data()) != nullptr, "cannot save checkpoint '", (root / name).string(),
                "': creating a temporary directory in '", root.string(), "' failed: ", std::strerror(errno));
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (ec) log_warn("could not remove the temporary directory '", path_.string(), "': ", ec.message());
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Moves `from` to `to`. When `to` exists (a checkpoint of the same step), the two are exchanged in
// one atomic step, so `from` then holds the old one.
void move_into_place(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::exists(to, ec)) {
    BATON_CHECK(std::rename(from.c_str(), to.c_str()) == 0, "cannot save checkpoint '", to.string(),
                "': renaming the temporary directory into place failed: ", std::strerror(errno));
    return;
  }
  BATON_CHECK(::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) == 0,
              "cannot save checkpoint '", to.string(),
              "': a checkpoint of this step exists and replacing it "
              "atomically failed (",
              std::strerror(errno), "); the existing one is unchanged");
}

// Deletes a checkpoint: renamed to a hidden name first, so a crash midway leaves nothing that
// looks like a checkpoint.
void delete_checkpoint(const fs::path& dir) {
  const fs::path doomed = dir.parent_path() / detail::concat(".", dir.filename().string(), ".deleting");
  std::error_code ec;
  fs::rename(dir, doomed, ec);
  if (!ec) fs::remove_all(doomed, ec);
  if (ec) log_warn("could not delete the old checkpoint '", dir.string(), "': ", ec.message());
}

}  // namespace

CheckpointManager::CheckpointManager(std::string root, int keep_last) : root_(std::move(root)), keep_last_(keep_last) {
  BATON_CHECK(keep_last >= 0, "checkpoints in '", root_, "': keep_last must be >= 0 (0 keeps all), got ", keep_last);
  create_checkpoint_directory(root_);
}

std::string CheckpointManager::save(const ParamStore& params, const Optimizer& optimizer, const CheckpointState& state,
                                    Context& ctx, const std::vector<CheckpointExtraFile>& extras) const {
  return write(state, model_tensors(params), optimizer_tensors(params, optimizer), optimizer, ctx.stream(), extras);
}

std::string CheckpointManager::save(const std::vector<CheckpointShard>& shards, const CheckpointState& state,
                                    const std::vector<CheckpointExtraFile>& extras) const {
  const Optimizer* optimizer = common_optimizer(shards);
  BATON_CHECK(optimizer != nullptr, "a checkpoint needs the optimiser state: the shards have no optimiser");
  const NamedTensors model = model_tensors(shards);
  const NamedTensors optimizer_state = optimizer_tensors(shards);
  // Shards on several devices and streams: once each is finished, any stream reads them all.
  for (const CheckpointShard& shard : shards) shard.ctx->synchronize();
  return write(state, model, optimizer_state, *optimizer, shards[0].ctx->stream(), extras);
}

std::string CheckpointManager::write(const CheckpointState& state, const NamedTensors& model,
                                     const NamedTensors& optimizer_state, const Optimizer& optimizer,
                                     const Stream& stream, const std::vector<CheckpointExtraFile>& extras) const {
  BATON_CHECK(state.step >= 0 && state.step <= kMaxStep, "cannot save a checkpoint of step ", state.step,
              " (steps are 0 to ", kMaxStep, ", the 18 digits of a directory name)");
  for (const CheckpointExtraFile& extra : extras) {
    BATON_CHECK(!extra.name.empty() && extra.name.find('/') == std::string::npos && extra.name[0] != '.' &&
                    extra.name != kModelFileName && extra.name != kOptimizerFileName,
                "a checkpoint's extra file needs a plain file name other than the model's and the optimiser's, not '",
                extra.name, "'");
  }
  const std::string name = step_directory_name(state.step);
  const fs::path target = fs::path(root_) / name;
  try {
    TemporaryDirectory temp(root_, name);
    // One set of pinned staging buffers for both files.
    HostStaging staging(std::max(largest_tensor_bytes(model), largest_tensor_bytes(optimizer_state)));
    save_safetensors((temp.path() / kModelFileName).string(), model, model_file_metadata(state, optimizer.steps()),
                     stream, staging);
    save_safetensors((temp.path() / kOptimizerFileName).string(), optimizer_state,
                     optimizer_file_metadata(state, optimizer), stream, staging);
    for (const CheckpointExtraFile& extra : extras) {
      save_safetensors((temp.path() / extra.name).string(), extra.tensors, extra.metadata, stream);
    }
    sync_directory(temp.path().string());
    move_into_place(temp.path(), target);
  } catch (Error& e) {
    e.add_context("saving checkpoint '" + target.string() + "' (nothing saved before was changed)");
    throw;
  }
  sync_directory(root_);
  if (keep_last_ > 0) delete_all_but_newest(name);
  return target.string();
}

void CheckpointManager::delete_all_but_newest(const std::string& just_saved) const {
  // The new checkpoint is complete: a failure here is worth a warning, not a failed save.
  try {
    std::vector<std::string> others = list();
    std::erase_if(others, [&](const std::string& dir) { return fs::path(dir).filename() == just_saved; });
    const std::string kept = kept_step_ ? step_directory_name(*kept_step_) : "";
    const size_t keep_others = static_cast<size_t>(keep_last_ - 1);
    for (size_t i = 0; i + keep_others < others.size(); ++i) {
      if (fs::path(others[i]).filename() != kept) delete_checkpoint(others[i]);
    }
  } catch (const Error& e) {
    log_warn("old checkpoints were not deleted: ", e.what());
  }
}

std::vector<std::string> CheckpointManager::list() const {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = step_of(it->path().filename().string());
    std::error_code type_ec;
    BATON_CHECK(step < 0 || !it->is_symlink(type_ec), "checkpoint directory '", it->path().string(),
                "' is a symbolic link: baton never follows one (replace it with the directory it points to)");
    if (step >= 0 && it->is_directory(type_ec) && CheckpointManager::missing_file(it->path().string()).empty())
      found.emplace_back(step, it->path().string());
  }
  BATON_CHECK(!ec, "cannot list the checkpoint directory '", root_, "': ", ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

bool CheckpointManager::is_step_directory_name(const std::string& name) { return step_of(name) >= 0; }

int64_t CheckpointManager::step_of_directory_name(const std::string& name) { return step_of(name); }

std::string CheckpointManager::missing_file(const std::string& dir) {
  std::error_code ec;
  for (std::string_view file : {kModelFileName, kOptimizerFileName}) {
    if (!fs::is_regular_file(fs::path(dir) / file, ec)) return std::string(file);
  }
  return "";
}

std::optional<std::string> CheckpointManager::at_step(int64_t step) const {
  for (const std::string& dir : list()) {
    if (fs::path(dir).filename() == step_directory_name(step)) return dir;
  }
  return std::nullopt;
}

std::vector<std::string> CheckpointManager::set_aside_after(int64_t step) const {
  std::vector<std::string> moved;
  for (const std::string& dir : list()) {
    if (step_of(fs::path(dir).filename().string()) <= step) continue;
    std::string aside = dir + ".diverged";
    std::error_code ec;
    for (int n = 2; fs::exists(fs::symlink_status(aside, ec)); ++n) aside = dir + ".diverged-" + std::to_string(n);
    fs::rename(dir, aside, ec);
    if (ec) {
      log_warn("could not set the diverged checkpoint '", dir, "' aside: ", ec.message());
    } else {
      moved.push_back(aside);
    }
  }
  return moved;
}

int CheckpointManager::remove_all() const {
  std::vector<fs::path> doomed;
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (step_of(name.substr(0, name.find(".diverged"))) >= 0 && it->is_directory(type_ec)) doomed.push_back(it->path());
  }
  BATON_CHECK(!ec, "cannot list the checkpoint directory '", root_, "': ", ec.message());
  for (const fs::path& dir : doomed) delete_checkpoint(dir);
  const std::optional<std::string> left = latest();
  BATON_CHECK(!left, "--overwrite: cannot delete the old checkpoint '", *left, "' (see the warning above)");
  return static_cast<int>(doomed.size());
}

std::optional<std::string> CheckpointManager::latest() const {
  std::vector<std::string> all = list();
  if (all.empty()) return std::nullopt;
  return all.back();
}

}  // namespace baton
