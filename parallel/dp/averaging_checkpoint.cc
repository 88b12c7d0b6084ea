// The names and metadata of model averaging's checkpoint file, and the check that a resumed run
// matches the run that wrote it.
#include "parallel/dp/averaging_checkpoint.h"

#include <utility>

#include "runtime/core/error.h"

namespace baton::parallel {

std::string replica_tensor_name(int replica, std::string_view part) {
  return detail::concat("replica.", replica, ".", part);
}

std::map<std::string, std::string> averaging_file_metadata(const ModelAveraging& averaging, int replicas) {
  return {{"format", std::string(kAveragingFormat)},
          {"model_averaging", std::string(averaging_name(averaging.kind))},
          {"replicas", std::to_string(replicas)},
          {"average_every", std::to_string(averaging.every)},
          {"local_after", std::to_string(averaging.local_after)}};
}

void check_averaging_file(const SafetensorsFile& file, const ModelAveraging& averaging, int replicas) {
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

}  // namespace baton::parallel
