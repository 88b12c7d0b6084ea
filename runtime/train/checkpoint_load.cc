// Loading checkpoints and weights: validate every tensor and the metadata of both files, report
// all problems at once, and copy only when everything matches.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "runtime/core/error.h"
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

void add_mismatches(Problems& problems, const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected) {
  for (std::string& line : tensor_mismatches(file, expected)) problems.emplace_back(file.path(), std::move(line));
}

// The optimizer file against the optimiser and the model file: same type, same step.
void add_optimizer_problems(Problems& problems, const SafetensorsFile& file, const Optimizer& optimizer,
                            const CheckpointState& state) {
  check_checkpoint_format(file);
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
}

}  // namespace

CheckpointState CheckpointManager::load(const std::string& dir, ParamStore& params, Optimizer* optimizer,
                                        Context& ctx) {
  return load(dir, {CheckpointShard{&params, optimizer, &ctx}});
}

CheckpointState CheckpointManager::load(const std::string& dir, const std::vector<CheckpointShard>& shards) {
  const Optimizer* const first_optimizer = common_optimizer(shards);
  const std::filesystem::path base(dir);
  const SafetensorsFile model_file((base / kModelFileName).string());
  const CheckpointState state = read_checkpoint_state(model_file);
  const std::vector<ExpectedTensor> model = expected(model_tensors(shards));
  Problems problems;
  add_mismatches(problems, model_file, model);

  std::optional<SafetensorsFile> optimizer_file;
  std::vector<ExpectedTensor> optimizer_state;
  if (first_optimizer != nullptr) {
    optimizer_file.emplace((base / kOptimizerFileName).string());
    add_optimizer_problems(problems, *optimizer_file, *first_optimizer, state);
    optimizer_state = expected(optimizer_tensors(shards));
    add_mismatches(problems, *optimizer_file, optimizer_state);
  }
  check_no_mismatches("checkpoint '" + dir + "'", problems);

  // Nothing may still be reading the destinations; the copies finish before read_expected returns.
  if (shards.size() > 1) {
    for (const CheckpointShard& shard : shards) shard.ctx->synchronize();
  }
  const Stream& stream = shards[0].ctx->stream();
  // One set of pinned staging buffers for both files.
  HostStaging staging(std::max(largest_destination_bytes(model), largest_destination_bytes(optimizer_state)));
  read_expected(model_file, model, stream, staging);
  if (first_optimizer != nullptr) {
    read_expected(*optimizer_file, optimizer_state, stream, staging);
    const int64_t steps = metadata_int(*optimizer_file, "optimizer_steps");
    for (const CheckpointShard& shard : shards) shard.optimizer->set_steps(steps);
  }
  return state;
}

void load_weights(const std::string& safetensors_path, ParamStore& params, Context& ctx, bool allow_missing_buffers) {
  const SafetensorsFile file(safetensors_path);
  const std::vector<ExpectedTensor> model =
      expected(model_tensors(params), allow_missing_buffers ? params.params().size() : SIZE_MAX);
  Problems problems;
  add_mismatches(problems, file, model);
  check_no_mismatches("weights '" + safetensors_path + "'", problems);
  HostStaging staging(largest_destination_bytes(model));
  read_expected(file, model, ctx.stream(), staging);
}

}  // namespace baton
