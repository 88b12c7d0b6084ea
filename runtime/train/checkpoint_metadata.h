// The "__metadata__" of checkpoint files: written from a CheckpointState and an optimiser, read
// back with errors naming the file and the field.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/train/checkpoint.h"

namespace baton {

using Metadata = std::map<std::string, std::string>;

// model.safetensors: format, step, epoch, optimizer_steps, seed and the state's non-null JSON
// members (loader_position, rng, model_spec, train_config, divergence) as JSON text.
Metadata model_file_metadata(const CheckpointState& state, int64_t optimizer_steps);
// optimizer.safetensors: format, step, optimizer (the type), optimizer_config (JSON), optimizer_steps.
Metadata optimizer_file_metadata(const CheckpointState& state, const Optimizer& optimizer);

// Checks the "format" entry of a checkpoint file.
void check_checkpoint_format(const SafetensorsFile& file);
// The state stored in a model file's metadata.
CheckpointState read_checkpoint_state(const SafetensorsFile& model_file);
// An integer metadata entry ("step", "optimizer_steps").
int64_t metadata_int(const SafetensorsFile& file, const std::string& key);

}  // namespace baton
