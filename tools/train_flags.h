// The flags of `baton train` as one table: each row names a flag, the config file's field it sets,
// its help, how its value is read into the settings, and what resuming a checkpoint does when the
// field differs from the checkpoint's. run_train (train_command.cc) lays the flags given over the
// config file and the resumed checkpoint's settings. A new setting is one row (train_flag_table.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parallel/parallel_config.h"
#include "runtime/train/train_config.h"

namespace baton::cli {

// Everything a training run is told: the config file's fields and its "parallel" object.
struct TrainSettings {
  TrainConfig train;
  parallel::ParallelConfig parallel;
};

// What a flag is about, for the rules between flags.
enum class FlagScope {
  train,      // a TrainConfig field
  parallel,   // a ParallelConfig field: the run is parallel (a pipeline, data parallel or the hybrid)
  averaging,  // a model-averaging field of ParallelConfig: parallel, and needs --data-parallel N or --groups G
};

// A resumed run asked (by the config file or a flag) for another value of the field than its
// checkpoint's: the value is taken, taken with a warning, or refused. refuse_if_averaging: refused
// when the checkpoint's run and this one both average models (the per-replica state of
// averaging.safetensors is tied to the variant, the replica count and when the replicas meet),
// taken with a warning otherwise.
enum class OnResume { take, warn, refuse, refuse_if_averaging };

// How a flag is given and what its value does to the settings.
struct FlagValue {
  bool is_switch = false;  // given alone ("--tf32"); otherwise with a value ("--steps 3")
  std::string type_name;   // of the value, for --help: "INT", "FLOAT", "TEXT"
  std::function<void(TrainSettings&, const CLI::Option&)> apply;
};

struct TrainFlag {
  TrainFlag(std::string flag_names, std::string config_field, std::string help_text, FlagScope flag_scope,
            FlagValue flag_value, std::optional<CLI::Validator> value_check = std::nullopt,
            OnResume resume_rule = OnResume::take)
      : names(std::move(flag_names)),
        field(std::move(config_field)),
        help(std::move(help_text)),
        scope(flag_scope),
        value(std::move(flag_value)),
        check(std::move(value_check)),
        on_resume(resume_rule) {}

  std::string names;  // as CLI11 takes them: "--batch-size"; "--channels-last,!--no-channels-last"
  std::string field;  // the config file's field: "batch_size", "lr_schedule.base_lr", "parallel.stages"
  std::string help;
  FlagScope scope;
  FlagValue value;
  std::optional<CLI::Validator> check;  // of the value as typed, before it is read
  OnResume on_resume;

  std::string flag() const { return names.substr(0, names.find(',')); }  // "--channels-last"
};

// The table, in the order flags are applied (a flag that resets others comes before them).
const std::vector<TrainFlag>& train_flags();

// Registers every row's flag on `cmd`; apply_given_flags reads their values from it.
void add_train_flags(CLI::App& cmd);
// The rows whose flag `cmd` was given, applied in table order over `settings`.
void apply_given_flags(const CLI::App& cmd, TrainSettings& settings);
// Whether `cmd` was given `flag` ("--steps"; any flag of the table or of the command).
bool given(const CLI::App& cmd, const std::string& flag);
// Whether `cmd` was given a flag of `scope` (FlagScope::parallel: of the parallel or averaging scope).
bool given_flag_of(const CLI::App& cmd, FlagScope scope);
// Whether `cmd` names the run's layout: --stages, --groups, --data-parallel, --plan or --device (one
// device). A resumed run that names none keeps its checkpoint's parallel settings.
bool given_layout_flag(const CLI::App& cmd);

}  // namespace baton::cli
