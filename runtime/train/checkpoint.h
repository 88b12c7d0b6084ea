// Training checkpoints: a directory <root>/step-<8 digits>/ holding model.safetensors (every
// parameter and buffer under its torchvision name, loadable by PyTorch's load_state_dict) and
// optimizer.safetensors (each optimiser state tensor per parameter, "<state>.<param name>"), with
// the step, epoch, seed, data position, RNG state, model spec and training config as metadata.
// Saves are atomic (a temporary directory renamed into place); loads validate everything first.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/graph/param_store.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/safetensors.h"

namespace baton {

// The "format" metadata value of both checkpoint files.
inline constexpr std::string_view kCheckpointFormat = "baton.checkpoint/1";
inline constexpr std::string_view kModelFileName = "model.safetensors";
inline constexpr std::string_view kOptimizerFileName = "optimizer.safetensors";

// Everything besides tensors that a resumed run needs. The JSON members are stored as JSON text
// and come back equal; null ones are not stored.
struct CheckpointState {
  int64_t step = 0;  // training steps done (names the directory)
  int64_t epoch = 0;
  uint64_t seed = 0;
  nlohmann::json loader_position;  // where the data loader resumes
  nlohmann::json rng;              // random-number state beyond the seed, if the run keeps any
  nlohmann::json model_spec;       // the graph's JSON
  nlohmann::json train_config;
  nlohmann::json divergence;  // the divergence baseline and newest healthy step (DivergenceGuard)
};

// A further file of a checkpoint beside the model and optimiser files (e.g. model averaging's
// per-replica state): written into the same atomic directory, read by whoever wrote it; a
// checkpoint without it is still complete.
struct CheckpointExtraFile {
  std::string name;  // a plain file name, neither kModelFileName nor kOptimizerFileName
  NamedTensors tensors;
  std::map<std::string, std::string> metadata;
};

// One part of a model's training state: a ParamStore and the optimiser over it — the whole model
// on one device, or one stage of a pipeline. A checkpoint of several shards is the same files as
// one of the whole model (tensors by name), so it resumes with any split, or none.
struct CheckpointShard {
  ParamStore* params = nullptr;
  Optimizer* optimizer = nullptr;  // null on load: the parameters and buffers alone
  Context* ctx = nullptr;          // the shard's stream: its tensors are ready on it
};

class CheckpointManager {
 public:
  // Checkpoints under `root` (created if missing). keep_last >= 1: how many complete checkpoints
  // save() keeps; 0 keeps them all.
  CheckpointManager(std::string root, int keep_last);

  const std::string& root() const { return root_; }

  // Writes <root>/step-<state.step, 8 digits>/ and returns its path. The files are written into a
  // hidden temporary directory that is renamed into place when complete (replacing a checkpoint of
  // the same step in one atomic exchange); only then are checkpoints beyond the newest keep_last
  // (by step; never the one just written) deleted. On failure nothing already saved is changed
  // and the temporary directory is removed. Parameters and state must be ready on ctx's stream, and
  // so must the tensors of `extras`, further files written beside the two.
  std::string save(const ParamStore& params, const Optimizer& optimizer, const CheckpointState& state, Context& ctx,
                   const std::vector<CheckpointExtraFile>& extras = {}) const;
  // The same for a model in shards (each shard's tensors ready on its ctx's stream): one model and
  // one optimizer file, tensors by name, exactly as the unsharded model would write them. The
  // shards' optimisers must agree (type, configuration, steps) and no name may be in two shards.
  // `extras` as above, ready once every shard's stream is.
  std::string save(const std::vector<CheckpointShard>& shards, const CheckpointState& state,
                   const std::vector<CheckpointExtraFile>& extras = {}) const;

  // Complete checkpoints (both files present), oldest first by step; hidden temporary directories
  // of saves in progress or interrupted are ignored. A step directory that is a symbolic link is
  // an error naming it (never followed).
  std::vector<std::string> list() const;
  // The complete checkpoint with the highest step.
  std::optional<std::string> latest() const;
  // The complete checkpoint of `step`, if there is one.
  std::optional<std::string> at_step(int64_t step) const;
  // Retention after each save also keeps the checkpoint of this step (the newest healthy one).
  void keep_also(std::optional<int64_t> step) { kept_step_ = step; }
  // Renames every complete checkpoint after `step` to step-<digits>.diverged (ignored by list(),
  // latest() and retention, kept for inspection); returns their new paths.
  std::vector<std::string> set_aside_after(int64_t step) const;
  // Deletes every checkpoint, complete or set aside (a fresh run with --overwrite); returns how many.
  int remove_all() const;
  // Whether `name` names a checkpoint directory: "step-" and 8 to 18 digits.
  static bool is_step_directory_name(const std::string& name);
  // The step a checkpoint directory's name gives ("step-00000042": 42), or -1 for any other name.
  static int64_t step_of_directory_name(const std::string& name);
  // The largest step a directory name can hold (18 digits): saving a later one is refused.
  static constexpr int64_t kMaxStep = 999'999'999'999'999'999;
  // The checkpoint file that directory `dir` lacks (kModelFileName first), or "" when complete.
  static std::string missing_file(const std::string& dir);

  // Loads checkpoint directory `dir` into `params` and, when given, `optimizer` (state tensors and
  // steps). Everything the headers say is checked first — format, metadata, and every missing,
  // unexpected, mistyped or misshaped tensor of both files, all reported in one error naming the
  // files — and only then is anything copied, so a checkpoint that does not match changes nothing.
  static CheckpointState load(const std::string& dir, ParamStore& params, Optimizer* optimizer, Context& ctx);
  // The same into a model in shards: every shard's tensors are looked up by name in the files
  // (whatever split, if any, wrote them); validated in full before anything is copied. The shards
  // hold optimisers all or none.
  static CheckpointState load(const std::string& dir, const std::vector<CheckpointShard>& shards);

 private:
  // Writes the two files of checkpoint state.step (see save), the optimiser's type, configuration
  // and steps going into the metadata, and the extra files; tensors ready on `stream`.
  std::string write(const CheckpointState& state, const NamedTensors& model, const NamedTensors& optimizer_state,
                    const Optimizer& optimizer, const Stream& stream,
                    const std::vector<CheckpointExtraFile>& extras = {}) const;
  // Retention after a save: deletes all complete checkpoints but `just_saved` and the newest
  // keep_last - 1 others (warning, not failing, when that goes wrong).
  void delete_all_but_newest(const std::string& just_saved) const;

  std::string root_;
  int keep_last_;
  std::optional<int64_t> kept_step_;
};

// Every parameter and buffer of `params` under its name (views, no copy): a model file's contents.
NamedTensors model_tensors(const ParamStore& params);
// Each optimiser state tensor cut per parameter, named "<state>.<param name>" and shaped like the
// parameter (views of the flat state, padding excluded).
NamedTensors optimizer_tensors(const ParamStore& params, const Optimizer& optimizer);

// The same over the shards of a model, in shard order; a name found in two shards is an error.
NamedTensors model_tensors(const std::vector<CheckpointShard>& shards);
NamedTensors optimizer_tensors(const std::vector<CheckpointShard>& shards);
// The shards' common optimiser: every shard has one, all of one type, configuration and step count
// (else an error saying which shard differs). Null when no shard has one (loading weights alone).
const Optimizer* common_optimizer(const std::vector<CheckpointShard>& shards);

// Writes the parameters and buffers alone (a PyTorch state_dict file), with optional metadata.
void save_weights(const std::string& path, const ParamStore& params, Context& ctx,
                  const std::map<std::string, std::string>& metadata = {});
// Loads weights alone (a model.safetensors, or a torchvision state_dict converted to safetensors)
// into `params`, validated as in CheckpointManager::load. With `allow_missing_buffers`, buffers
// absent from the file (num_batches_tracked, say) keep their current values.
void load_weights(const std::string& safetensors_path, ParamStore& params, Context& ctx,
                  bool allow_missing_buffers = false);

}  // namespace baton
