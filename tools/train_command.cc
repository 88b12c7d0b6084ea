// `baton train`: trains a reference model (or a graph spec) on a dataset from flags and/or a JSON
// config file (flags override the file). SIGINT and SIGTERM finish the current step (or cut an
// evaluation short), save a checkpoint when a checkpoint directory is set, and exit cleanly; during
// profiling or planning they stop the command at once (runtime/core/stop_request.h).
#include <time.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "parallel/comm/launch_environment.h"
#include "parallel/parallel_training_run.h"
#include "parallel/plan_file_run.h"
#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"
#include "runtime/core/stop_request.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/lr_schedule.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/safetensors.h"
#include "tools/commands.h"
#include "tools/rank_output.h"
#include "tools/train_flags.h"
#include "tools/train_report.h"
#include "tools/train_resume.h"

namespace baton::cli {
namespace {

// When the first stop signal came (CLOCK_MONOTONIC, nanoseconds).
std::atomic<int64_t> first_stop_ns{0};

int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// A second signal stops at once, unless it comes within a second of the first: then it is the same
// request delivered twice (timeout(1) and some schedulers signal both the process and its group).
extern "C" void on_stop_signal(int signal) {
  const int64_t now = monotonic_ns();
  if (stop_requested()) {
    if (now - first_stop_ns.load() >= 1'000'000'000) std::_Exit(128 + signal);
    return;
  }
  first_stop_ns.store(now);
  request_stop(signal);
}

// While it lives, SIGINT and SIGTERM ask the run to stop (request_stop); the defaults come back after.
struct StopOnSignals {
  StopOnSignals() {
    clear_stop_request();
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
  }
  ~StopOnSignals() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

// A config file's checkpoint_dir when it says "resume": true (type errors are the config reader's).
std::string file_resume_dir(const nlohmann::json& file) {
  if (!file.is_object() || !file.contains("resume") || file["resume"] != true) return "";
  return file.contains("checkpoint_dir") && file["checkpoint_dir"].is_string()
             ? file["checkpoint_dir"].get<std::string>()
             : "";
}

// Every output path and setting that would otherwise fail after profiling, or after the whole run.
void check_before_training(const TrainConfig& config, const parallel::ParallelConfig& pipeline) {
  if (!config.metrics.empty()) check_file_writable(config.metrics, "metrics file");
  if (!pipeline.trace.empty()) check_file_writable(pipeline.trace, "trace");
  if (!config.checkpoint_dir.empty()) check_directory_writable(config.checkpoint_dir, "checkpoint directory");
  check_optimizer_config(config.optimizer, "optimizer");
  if (!config.weights.empty()) (void)SafetensorsFile(config.weights);  // its header, checked in full
  nlohmann::json schedule = config.lr_schedule;  // the run's length is known later; any will do here
  if (!schedule.contains("total_steps")) schedule["total_steps"] = config.steps > 0 ? config.steps : int64_t{1} << 40;
  (void)LrSchedule::from_json(schedule, "lr_schedule");
}

// Where the run's settings come from besides the flags of the table.
struct SettingsSources {
  std::string config_file;  // --config
  std::string resume_dir;   // --resume
};

// The run's settings: the resumed checkpoint's, the config file's over them, the flags given over
// those. `parallel_file`: the file has a "parallel" object. `restored_layout`: the parallel settings
// are the resumed checkpoint's (the command named no layout of its own).
struct RunSettings {
  TrainSettings settings;
  bool parallel_file = false;
  bool restored_layout = false;
};

// A resumed run keeps its checkpoint's parallel settings unless the command names a layout (a flag
// of train_flags.h's given_layout_flag, or the config file's "parallel" object); a plan file among
// them is read again, so it must still be there.
void restore_layout(const CLI::App& cmd, const StoredSettings& stored, const std::string& checkpoint,
                    RunSettings& run) {
  if (!stored.parallel || run.parallel_file || given_layout_flag(cmd)) return;
  run.settings.parallel = *stored.parallel;
  run.restored_layout = true;
  const std::string& plan = stored.parallel->plan_file;
  std::error_code ec;
  BATON_CHECK(plan.empty() || std::filesystem::exists(plan, ec), "--resume: the checkpoint ", checkpoint,
              " was trained with the plan file ", plan,
              ", which is missing: put it back, give another with --plan FILE, or give the layout (--stages, "
              "--groups, --data-parallel, --device)");
}

RunSettings read_settings(const CLI::App& cmd, const SettingsSources& sources) {
  RunSettings run;
  TrainConfig& config = run.settings.train;
  nlohmann::json file;
  if (!sources.config_file.empty()) {
    file = read_json_file(sources.config_file, "config file");
    run.parallel_file = file.is_object() && file.contains("parallel");
    run.settings.parallel = parallel::take_parallel_config(file, sources.config_file);
  }
  // Resuming: the run's settings come from its checkpoint, the file and the flags over them.
  const std::string checkpoint_dir =
      given(cmd, "--checkpoint-dir") ? cmd.get_option("--checkpoint-dir")->as<std::string>() : "";
  BATON_CHECK(!given(cmd, "--resume") || !given(cmd, "--checkpoint-dir") || sources.resume_dir == checkpoint_dir,
              "--resume ", sources.resume_dir, " with --checkpoint-dir ", checkpoint_dir,
              ": give one (a resumed run keeps saving where it resumes from)");
  const std::string resume_dir = given(cmd, "--resume") ? sources.resume_dir : file_resume_dir(file);
  std::optional<ResumePoint> resume;
  std::optional<StoredSettings> stored;
  if (!resume_dir.empty()) {
    resume = find_resume_point(resume_dir);
    std::fputs(resume->warning.c_str(), stderr);
    if (resume->checkpoint) {
      stored = stored_settings(*resume->checkpoint);
      config = stored->train;
      restore_layout(cmd, *stored, *resume->checkpoint, run);
    }
  }
  if (!file.is_null()) config.update_from_json(file, sources.config_file);
  BATON_CHECK(!given(cmd, "--model") || !given(cmd, "--model-spec"), "--model ",
              cmd.get_option("--model")->as<std::string>(), " and --model-spec ",
              cmd.get_option("--model-spec")->as<std::string>(), " name two models: give one");
  apply_given_flags(cmd, run.settings);  // flags given on the command line override the file
  if (resume) {
    config.checkpoint_dir = resume->root;
    config.resume = true;
  }
  config.validate(sources.config_file.empty() ? "command line" : sources.config_file);
  if (stored) std::fputs(check_resume_overrides(*stored, run.settings, *resume->checkpoint).c_str(), stderr);
  // Checkpoints store the parallel settings as given (a plan file by its path, read again on resume).
  config.parallel = parallel_to_store(run.settings.parallel);
  // A plan file's layout (stages, groups, devices, schedule, ...); flags that contradict it are errors.
  run.settings.parallel = parallel::with_plan_file(run.settings.parallel);
  return run;
}

using parallel::RunKind;

// The run's kind, with the rules between its flags and the processes it was started as checked. (The
// parallel settings themselves are checked where they are used: plan_pipeline,
// make_data_parallel_engine.)
RunKind run_kind(const CLI::App& cmd, const RunSettings& run) {
  const parallel::ParallelConfig& pipeline = run.settings.parallel;
  const bool pipelined =
      run.parallel_file || given_flag_of(cmd, FlagScope::parallel) || (run.restored_layout && pipeline.stages >= 1);
  const bool data_parallel = pipeline.data_parallel > 0 || given(cmd, "--data-parallel");
  BATON_CHECK(data_parallel || pipeline.groups > 1 || !given(cmd, "--unused-parameters"),
              "--unused-parameters needs --data-parallel N or --groups G");
  BATON_CHECK(data_parallel || pipeline.groups > 1 || !given_flag_of(cmd, FlagScope::averaging),
              "--model-averaging, --average-every and the averaging knobs need --data-parallel N or --groups G "
              "(G >= 2) with --stages S");
  BATON_CHECK(pipeline.groups > 1 || !given(cmd, "--grad-sync"),
              "--grad-sync needs --groups G (G > 1) with --stages S");
  BATON_CHECK(pipeline.groups == 1 || pipeline.stages >= 1 || data_parallel,
              "--groups G runs G pipelines: give their stages with --stages S");
  BATON_CHECK(!pipelined || !given(cmd, "--devices") || !given(cmd, "--device"),
              "give --devices LIST or --device, not both");
  const comm::LaunchEnvironment launch = comm::launch_environment();
  if (launch.size > 1) {
    if (!data_parallel && pipeline.stages >= 1) {
      // The hybrid (or a plain pipeline) across processes: one process per group and stage.
      BATON_CHECK(pipeline.groups * pipeline.stages == launch.size, launch.launcher, " started ", launch.size,
                  " processes for --groups ", pipeline.groups, " --stages ", pipeline.stages,
                  ": the hybrid across processes runs one process per group and stage (", pipeline.groups, " x ",
                  pipeline.stages, " = ", pipeline.groups * pipeline.stages, ")");
      BATON_CHECK(!given(cmd, "--devices"),
                  "--devices with the hybrid across processes: each process runs its stage on "
                  "cpu:0");
    } else {
      BATON_CHECK(data_parallel && pipeline.data_parallel == launch.size, launch.launcher, " started ", launch.size,
                  " processes: train them as one data-parallel run with --data-parallel ", launch.size,
                  " (one replica per process)", data_parallel ? " instead of --data-parallel " : "",
                  data_parallel ? std::to_string(pipeline.data_parallel) : "",
                  ", or as G pipelines of S stages with --groups G --stages S (G x S = ", launch.size, ")");
    }
    if (launch.rank != 0) quiet_stdout();  // rank 0 prints; the others speak only of errors
  }
  return data_parallel ? RunKind::data_parallel : pipelined ? RunKind::pipelined : RunKind::single_device;
}

void print_summary(const TrainSummary& s) {
  std::printf("%s after %lld steps: train loss %.4f, %.1f samples/s", s.interrupted ? "stopped" : "done",
              static_cast<long long>(s.steps), s.last_loss, s.samples_per_second);
  if (s.eval.samples > 0) {
    std::printf("; test loss %.4f", s.eval.loss);
    if (s.eval.top1 >= 0) std::printf(", top-1 %.2f%%, top-5 %.2f%%", 100 * s.eval.top1, 100 * s.eval.top5);
  }
  std::printf("\n");
  if (!s.checkpoint.empty()) std::printf("checkpoint: %s\n", s.checkpoint.c_str());
}

// Reads the settings, checks what can be checked before anything runs, then trains as one library
// call (parallel/parallel_training_run.h: the data, the model, the engine of the run's kind).
int run_train(const CLI::App& cmd, const SettingsSources& sources) {
  const RunSettings run = read_settings(cmd, sources);
  const TrainConfig& config = run.settings.train;
  const parallel::ParallelConfig& parallel_config = run.settings.parallel;
  const RunKind kind = run_kind(cmd, run);
  check_before_training(config, parallel_config);
  if (run.restored_layout && kind != RunKind::single_device) {
    std::printf("resuming as %s, the checkpoint's parallel settings\n",
                parallel::layout_description(parallel_config).c_str());
  }

  // SIGINT and SIGTERM (what schedulers send before they kill) end the run after its current step.
  const StopOnSignals signals;
  PrintedReport report;
  const TrainSummary s = parallel::train({config, parallel_config, kind}, report, [] { return stop_requested(); });
  print_summary(s);
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto sources = std::make_shared<SettingsSources>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model; flags override --config FILE");
  cmd->add_option("--config", sources->config_file, "JSON config file (fields as in docs/training.md)");
  cmd->add_option("--resume", sources->resume_dir,
                  "Continue from the newest checkpoint in DIR (and keep saving there)");
  add_train_flags(*cmd);
  cmd->callback([cmd, sources] {
    const int code = run_train(*cmd, *sources);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace baton::cli
