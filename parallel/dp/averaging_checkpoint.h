// Model averaging's state in checkpoints (averaging.safetensors beside the agreed model): every
// replica's own parameters and optimiser state, which differ between meetings, and the state the
// replicas share (BMUF's global model and block momentum, EASGD's centre), so that a resumed run
// goes on bit for bit as the uninterrupted one would have.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "parallel/dp/model_averaging.h"
#include "runtime/train/safetensors.h"

namespace baton::parallel {

inline constexpr std::string_view kAveragingFileName = "averaging.safetensors";
inline constexpr std::string_view kAveragingFormat = "baton.averaging/1";

// Replica r's tensors in the file: "replica.<r>.parameters" (flat, padding included) and
// "replica.<r>.<optimiser state>" (flat like them).
std::string replica_tensor_name(int replica, std::string_view part);

// The file's metadata: its format, the variant and its knobs, and the number of replicas.
std::map<std::string, std::string> averaging_file_metadata(const ModelAveraging& averaging, int replicas);

// Throws, naming the file and the field, unless `file` holds the state of the same variant over the
// same number of replicas (a resumed run continues that run; its weights alone load anywhere).
void check_averaging_file(const SafetensorsFile& file, const ModelAveraging& averaging, int replicas);

}  // namespace baton::parallel
