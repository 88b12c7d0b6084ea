// TrainConfig: everything a training run needs to know, from a JSON file and/or command-line
// flags (flags override the file). Validated with errors naming the source and the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace baton {

struct TrainConfig {
  std::string model = "resnet20";  // a registered model name
  std::string model_spec;          // or a graph spec file (takes precedence over `model` when set)
  std::string data = "shapes";     // shapes, synthetic, cifar10:DIR, cifar100:DIR
  int64_t epochs = 1;
  int64_t steps = 0;  // > 0: stop after this many optimiser steps (overrides epochs)
  int64_t batch_size = 128;
  nlohmann::json optimizer = {{"type", "sgd"}, {"momentum", 0.9}, {"nesterov", true}, {"weight_decay", 5e-4}};
  // Without total_steps, decaying schedules get the run's length.
  nlohmann::json lr_schedule = {{"type", "cosine"}, {"base_lr", 0.1}};
  double label_smoothing = 0.0;
  std::string device = "auto";  // auto: cuda:0 when a GPU is present, else cpu
  uint64_t seed = 0;
  int workers = 2;
  bool augment = true;  // random crop (padding 4) and horizontal flip for 32x32 data
  bool tf32 = false;
  bool channels_last = true;     // CPU float32 activations channels-last (Context::set_channels_last)
  std::string checkpoint_dir;    // empty: no checkpoints
  int64_t checkpoint_every = 0;  // steps between checkpoints (0: at the end of each epoch)
  int keep_checkpoints = 3;
  bool resume = false;     // continue from the newest checkpoint in checkpoint_dir
  bool overwrite = false;  // a fresh run deletes the checkpoints already in checkpoint_dir (else refused)
  std::string weights;     // start from this safetensors file's weights (torchvision names)
  int64_t eval_every = 1;  // epochs between evaluations (0: never)
  int64_t log_every = 10;  // steps between metrics lines
  std::string metrics;     // JSON-lines metrics file (empty: none)
  // The run's parallel settings as a config file's "parallel" object (written by the caller that
  // knows them, parallel/parallel_config.h; not read here): to_json writes them beside the rest, so a
  // checkpoint's train_config restores the layout on resume. Null: not written.
  nlohmann::json parallel;

  // Reads the fields present in `j` over the current values; unknown fields are errors ("parallel"
  // too: its reader takes it out first).
  void update_from_json(const nlohmann::json& j, std::string_view where);
  nlohmann::json to_json() const;
  void validate(std::string_view where) const;
  // The run's optimiser steps: `steps`, else `epochs` times `per_epoch`; an error naming --epochs when
  // that product is past the largest step count (2^63 - 1) rather than a count wrapped negative.
  int64_t total_steps(int64_t per_epoch) const;
};

}  // namespace baton
