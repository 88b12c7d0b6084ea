// Loading checkpoints and weights: validate every tensor and the metadata of both files, report
// all problems at once, and copy only when everything matches.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_metadata.h"
#include "runtime/train/tensor_matching.h"

namespace baton {
namespace {

// The tensors of `named` as expected ones; with `optional_from`, those from that index on (the
// buffers of a single store) may be missing.
std::vector<ExpectedTensor> expected(NamedTensors named, size_t optional_from = SIZE_MAX) {
  std::vector<ExpectedTensor> out;
  for (auto& [name, tensor] : named) {
    const bool optional = out.size() >= optional_from;
    out.push_back({std::move(name), std::move(tensor), optional});
  }
  return out;
}

using Problems = std::vector<std::pair<std::string, std::string>>;

// Problems of one load: the lines of the listing, and the floating tensors whose dtype alone differs.
struct LoadProblems {
  Problems listed;
  Problems dtype_lines;  // one line per group of dtype differences, for the listing
  std::vector<DTypeDifference> dtypes;
};

void add_mismatches(LoadProblems& problems, const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected,
                    DTypeRule rule) {
  TensorMismatches found = tensor_mismatches(file, expected, rule);
  for (std::string& line : found.lines) problems.listed.emplace_back(file.path(), std::move(line));
  for (DTypeDifference& d : found.dtypes) {
    problems.dtype_lines.emplace_back(file.path(), describe(d));
    problems.dtypes.push_back(std::move(d));
  }
}

// "62 tensors as f32 where the model has f64" (several groups joined with "and").
std::string dtype_summary(const std::vector<DTypeDifference>& dtypes) {
  std::vector<DTypeDifference> merged;  // the model and optimizer files' groups together
  for (const DTypeDifference& d : dtypes) merge_dtype_difference(merged, d);
  std::string out;
  for (const DTypeDifference& d : merged) {
    out += (out.empty() ? "" : " and ") + std::to_string(d.count) + (d.count == 1 ? " tensor as " : " tensors as ") +
           std::string(dtype_name(d.file)) + " where the model has " + std::string(dtype_name(d.model));
  }
  return out;
}

// A checkpoint that differs from the model in floating dtypes alone is refused in one sentence;
// with other differences, every difference is listed.
void check_checkpoint_matches(const std::string& dir, const LoadProblems& problems) {
  if (problems.listed.empty() && !problems.dtypes.empty()) {
    BATON_FAIL("cannot resume from checkpoint '", dir, "': it holds ", dtype_summary(problems.dtypes),
               " (resuming restores the exact state, so it needs the model's dtype; start from the converted weights "
               "of its model.safetensors with --weights / load_weights instead)");
  }
  Problems all = problems.listed;
  all.insert(all.end(), problems.dtype_lines.begin(), problems.dtype_lines.end());
  check_no_mismatches("checkpoint '" + dir + "'", all);
}

// The optimizer file against the optimiser and the model file: same type, same step.
void add_optimizer_problems(LoadProblems& load_problems, const SafetensorsFile& file, const Optimizer& optimizer,
                            const CheckpointState& state) {
  check_checkpoint_format(file);
  Problems& problems = load_problems.listed;
  const std::string& type = file.metadata("optimizer");
  if (type != optimizer.type()) {
    problems.emplace_back(
        file.path(), "the state is of optimiser '" + type + "', this run uses '" + std::string(optimizer.type()) + "'");
  }
  const int64_t step = metadata_int(file, "step");
  if (step != state.step) {
    problems.emplace_back(file.path(), "metadata 'step' is " + std::to_string(step) + ", the model file's is " +
                                           std::to_string(state.step));
  }
  BATON_CHECK(metadata_int(file, "optimizer_steps") >= 0, "checkpoint file '", file.path(),
              "': metadata 'optimizer_steps' is negative");
  const nlohmann::json stored_config = parse_json_text(
      file.metadata("optimizer_config"), "checkpoint file '" + file.path() + "': metadata 'optimizer_config'");
  if (type == optimizer.type() && stored_config != optimizer.config()) {
    log_warn("checkpoint file '", file.path(), "': the optimiser was configured as ", stored_config.dump(),
             ", this run's is ", optimizer.config().dump(), "; the state is loaded into this run's");
  }
}

// A checkpoint directory is itself, never a link, and its name (when a step directory's) gives
// the step its metadata holds; files without checksums (written by an earlier baton) load with a warning.
void check_directory(const std::filesystem::path& dir, const SafetensorsFile& model_file,
                     const CheckpointState& state) {
  std::error_code ec;
  BATON_CHECK(!std::filesystem::is_symlink(dir, ec), "cannot load checkpoint '", dir.string(),
              "': it is a symbolic link, which baton never follows (load the directory it points to)");
  const int64_t named = CheckpointManager::step_of_directory_name(dir.filename().string());
  BATON_CHECK(named < 0 || named == state.step, "cannot load checkpoint '", dir.string(), "': its name says step ",
              named, ", its metadata ('", model_file.path(), "') step ", state.step,
              " (a renamed directory? the step comes from the metadata)");
  if (!model_file.has_checksums()) {
    log_warn("checkpoint '", dir.string(), "' has no checksums (written by a baton before they were added): its ",
             "data and metadata are loaded without verification");
  }
}

}  // namespace

CheckpointState CheckpointManager::load(const std::string& dir, ParamStore& params, Optimizer* optimizer,
                                        Context& ctx) {
  return load(dir, {CheckpointShard{&params, optimizer, &ctx}});
}

CheckpointState CheckpointManager::load(const std::string& dir, const std::vector<CheckpointShard>& shards) {
  const Optimizer* const first_optimizer = common_optimizer(shards);
  std::filesystem::path base(dir);
  if (!base.has_filename()) base = base.parent_path();  // "runs/a/step-00000004/" names the directory too
  const SafetensorsFile model_file((base / kModelFileName).string());
  const CheckpointState state = read_checkpoint_state(model_file);
  const std::vector<ExpectedTensor> model = expected(model_tensors(shards));
  LoadProblems problems;
  add_mismatches(problems, model_file, model, DTypeRule::exact);

  std::optional<SafetensorsFile> optimizer_file;
  std::vector<ExpectedTensor> optimizer_state;
  if (first_optimizer != nullptr) {
    optimizer_file.emplace((base / kOptimizerFileName).string());
    add_optimizer_problems(problems, *optimizer_file, *first_optimizer, state);
    optimizer_state = expected(optimizer_tensors(shards));
    add_mismatches(problems, *optimizer_file, optimizer_state, DTypeRule::exact);
  }
  check_checkpoint_matches(dir, problems);
  check_directory(base, model_file, state);
  check_tensor_data(model_file, model);
  if (optimizer_file) check_tensor_data(*optimizer_file, optimizer_state);

  // Nothing may still be reading the destinations; the copies finish before read_expected returns.
  if (shards.size() > 1) {
    for (const CheckpointShard& shard : shards) shard.ctx->synchronize();
  }
  Context& ctx = *shards[0].ctx;
  // One set of pinned staging buffers for both files.
  HostStaging staging(std::max(largest_destination_bytes(model), largest_destination_bytes(optimizer_state)));
  read_expected(model_file, model, ctx, staging);
  if (first_optimizer != nullptr) {
    read_expected(*optimizer_file, optimizer_state, ctx, staging);
    const int64_t steps = metadata_int(*optimizer_file, "optimizer_steps");
    for (const CheckpointShard& shard : shards) shard.optimizer->set_steps(steps);
  }
  return state;
}

void load_weights(const std::string& safetensors_path, ParamStore& params, Context& ctx, bool allow_missing_buffers) {
  const SafetensorsFile file(safetensors_path);
  const std::vector<ExpectedTensor> model =
      expected(model_tensors(params), allow_missing_buffers ? params.params().size() : SIZE_MAX);
  LoadProblems problems;
  add_mismatches(problems, file, model, DTypeRule::convert);
  check_no_mismatches("weights '" + safetensors_path + "'", problems.listed);
  check_tensor_data(file, model);
  HostStaging staging(largest_destination_bytes(model));
  read_expected(file, model, ctx, staging);
}

}  // namespace baton
