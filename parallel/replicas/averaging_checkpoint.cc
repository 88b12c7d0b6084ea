// The names and metadata of model averaging's checkpoint file, and the check that a resumed run
// matches the run that wrote it.
#include "parallel/replicas/averaging_checkpoint.h"

#include <filesystem>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::parallel {

std::string replica_tensor_name(int replica, std::string_view part) {
  return detail::concat("replica.", replica, ".", part);
}

std::string stage_tensor_name(int stage, std::string_view name) { return detail::concat("stage.", stage, ".", name); }

NamedTensors replica_own_state(const Tensor& parameters, const Optimizer& optimizer) {
  NamedTensors parts{{"parameters", parameters}};
  for (const auto& [name, tensor] : optimizer.state()) {
    BATON_CHECK(tensor.shape() == parameters.shape() && tensor.dtype() == parameters.dtype(),
                "model averaging: ", "optimiser state '", name, "' is not laid out like the parameters");
    parts.emplace_back(name, tensor);
  }
  return parts;
}

std::map<std::string, std::string> averaging_file_metadata(const ModelAveraging& averaging, int replicas, int stages) {
  std::map<std::string, std::string> metadata = {{"format", std::string(kAveragingFormat)},
                                                 {"model_averaging", std::string(averaging_name(averaging.kind))},
                                                 {"replicas", std::to_string(replicas)},
                                                 {"average_every", std::to_string(averaging.every)},
                                                 {"local_after", std::to_string(averaging.local_after)}};
  if (stages > 0) metadata.emplace("stages", std::to_string(stages));
  return metadata;
}

void check_averaging_file(const SafetensorsFile& file, const ModelAveraging& averaging, int replicas, int stages) {
  const auto stored = file.metadata().find("stages");
  const std::string stored_stages = stored == file.metadata().end() ? "the whole model" : stored->second + " stages";
  const std::string run_stages = stages > 0 ? std::to_string(stages) + " stages" : "the whole model";
  BATON_CHECK(stored_stages == run_stages, file.path(), ": the checkpoint holds the model-averaging state of ",
              stored_stages, ", this run averages ", run_stages,
              " (resume with the same layout, or start a new run from its model.safetensors with --weights)");
  BATON_CHECK(file.metadata("format") == kAveragingFormat, file.path(), ": metadata 'format' is '",
              file.metadata("format"), "', expected '", kAveragingFormat, "'");
  const std::string& kind = file.metadata("model_averaging");
  const std::string& count = file.metadata("replicas");
  BATON_CHECK(kind == averaging_name(averaging.kind) && count == std::to_string(replicas), file.path(),
              ": the checkpoint holds the model-averaging state of ", kind, " over ", count, " replicas; this run is ",
              averaging_name(averaging.kind), " over ", replicas, " (resume with --model-averaging ", kind, " and ",
              count, " replicas, or start a new run from its model.safetensors with --weights)");
  const std::pair<const char*, int> knobs[] = {{"average_every", averaging.every},
                                               {"local_after", averaging.local_after}};
  for (const auto& [field, value] : knobs) {
    BATON_CHECK(file.metadata(field) == std::to_string(value), file.path(), ": the checkpoint's run had ", field, " ",
                file.metadata(field), ", this run has ", value,
                ": the replicas would meet at other steps than in the run being resumed (give the same value)");
  }
}

void check_averaging_tensors(const SafetensorsFile& file, const NamedTensors& expected) {
  for (const auto& [name, tensor] : expected) {
    const SafetensorsTensorInfo& info = file.info(name);
    BATON_CHECK(info.dtype == tensor.dtype() && info.shape == tensor.shape(), file.path(), ": tensor '", name, "' is ",
                dtype_name(info.dtype), " ", info.shape.str(), ", expected ", dtype_name(tensor.dtype()), " ",
                tensor.shape().str());
  }
}

std::optional<SafetensorsFile> open_averaging_file(const std::string& dir, const ModelAveraging& averaging) {
  const std::string path = (std::filesystem::path(dir) / kAveragingFileName).string();
  std::error_code ec;
  const bool stored = std::filesystem::exists(path, ec);
  if (!averaging.active()) {
    if (stored) log_warn(path, ": model averaging's per-replica state is not used by a run without model averaging");
    return std::nullopt;
  }
  if (!stored) {
    log_warn("checkpoint '", dir, "' holds no model-averaging state: every replica starts from its model");
    return std::nullopt;
  }
  return std::optional<SafetensorsFile>(std::in_place, path);
}

}  // namespace baton::parallel
