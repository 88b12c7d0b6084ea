// The flags of `baton train` and where they land; run_train (train_command.cc) lays those given over
// the config file and the resumed checkpoint's settings.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "parallel/parallel_config.h"
#include "runtime/train/train_config.h"

namespace baton::cli {

struct TrainFlags {
  std::string config_file;
  TrainConfig config;
  std::string resume_dir;
  std::string optimizer_type;
  double lr = 0, momentum = 0, weight_decay = 0;
  bool nesterov = false;
  std::string schedule_type;
  int64_t warmup_steps = 0;
  bool no_augment = false;
  bool tf32 = false;
  bool channels_last = true;  // --channels-last or --no-channels-last
  double block_momentum = 0;
  parallel::ParallelConfig parallel;  // the pipeline flags
};

// Registers every option of `baton train` on `cmd`, bound to `f`.
void add_train_flags(CLI::App& cmd, TrainFlags& f);

}  // namespace baton::cli
