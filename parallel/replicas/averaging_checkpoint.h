// Model averaging's state in checkpoints (averaging.safetensors beside the agreed model): every
// replica's own parameters and optimiser state, which differ between meetings, and the state the
// replicas share (BMUF's global model and block momentum, EASGD's centre), so that a resumed run
// goes on bit for bit as the uninterrupted one would have.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "parallel/replicas/model_averaging.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/safetensors.h"

namespace baton::parallel {

inline constexpr std::string_view kAveragingFileName = "averaging.safetensors";
inline constexpr std::string_view kAveragingFormat = "baton.averaging/1";

// Replica r's tensors in the file: "replica.<r>.parameters" (flat, padding included) and
// "replica.<r>.<optimiser state>" (flat like them).
std::string replica_tensor_name(int replica, std::string_view part);
// In the file of a model in stages (the hybrid): stage s's tensor "stage.<s>.<name>" (its replicas'
// own state, replica_tensor_name, and the state they share).
std::string stage_tensor_name(int stage, std::string_view name);

// A replica's own state, by part: its parameters, then each optimiser state tensor (flat alike).
NamedTensors replica_own_state(const Tensor& parameters, const Optimizer& optimizer);

// The file's metadata: its format, the variant and its knobs, and the number of replicas (of each
// stage); `stages` > 0: a model in that many stages (the hybrid), 0: the whole model.
std::map<std::string, std::string> averaging_file_metadata(const ModelAveraging& averaging, int replicas,
                                                           int stages = 0);

// Throws, naming the file and the field, unless `file` holds the state of the same variant over the
// same number of replicas and stages (a resumed run continues that run; its weights alone load
// anywhere).
void check_averaging_file(const SafetensorsFile& file, const ModelAveraging& averaging, int replicas, int stages = 0);

// Throws, naming the file and the tensor, unless `file` holds every tensor of `expected` by name
// with its dtype and shape.
void check_averaging_tensors(const SafetensorsFile& file, const NamedTensors& expected);

// The averaging file of checkpoint `dir`, for a run averaging as `averaging` says: none (with a
// warning) when the run does not average but the file is there, or it averages and the file is not
// (every replica then starts from the checkpoint's model).
std::optional<SafetensorsFile> open_averaging_file(const std::string& dir, const ModelAveraging& averaging);

}  // namespace baton::parallel
