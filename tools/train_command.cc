// `baton train`: trains a reference model (or a graph spec) on a dataset from flags and/or a JSON
// config file (flags override the file). SIGINT and SIGTERM finish the current step, save a
// checkpoint when a checkpoint directory is set, and exit cleanly.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

#include "layers/builtin_layers.h"
#include "models/model_registry.h"
#include "parallel/comm/launch_environment.h"
#include "parallel/plan_file_run.h"
#include "runtime/core/atomic_file.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "runtime/data/dataset.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/lr_schedule.h"
#include "runtime/train/optimizer.h"
#include "runtime/train/safetensors.h"
#include "runtime/train/trainer.h"
#include "tools/commands.h"
#include "tools/device_flag.h"
#include "tools/rank_output.h"
#include "tools/train_flags.h"
#include "tools/train_pipeline.h"
#include "tools/train_resume.h"

namespace baton::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second Ctrl-C stops at once
}

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

int run_train(CLI::App& cmd, TrainFlags& f) {
  TrainConfig config;
  parallel::ParallelConfig pipeline;
  bool pipelined = false;  // a "parallel" object in the file or a pipeline flag
  nlohmann::json file;
  if (!f.config_file.empty()) {
    file = read_json_file(f.config_file, "config file");
    pipelined = file.is_object() && file.contains("parallel");
    pipeline = parallel::take_parallel_config(file, f.config_file);
  }
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  // Resuming: the run's settings come from its checkpoint, the file and the flags over them.
  BATON_CHECK(!given("--resume") || !given("--checkpoint-dir") || f.resume_dir == f.config.checkpoint_dir, "--resume ",
              f.resume_dir, " with --checkpoint-dir ", f.config.checkpoint_dir,
              ": give one (a resumed run keeps saving where it resumes from)");
  const std::string resume_dir = given("--resume") ? f.resume_dir : file_resume_dir(file);
  std::optional<ResumePoint> resume;
  std::optional<TrainConfig> stored;
  if (!resume_dir.empty()) {
    resume = find_resume_point(resume_dir);
    std::fputs(resume->warning.c_str(), stderr);
    if (resume->checkpoint) config = *(stored = stored_config(*resume->checkpoint));
  }
  if (!file.is_null()) config.update_from_json(file, f.config_file);
  // Flags given on the command line override the file.
  BATON_CHECK(!given("--model") || !given("--model-spec"), "--model ", f.config.model, " and --model-spec ",
              f.config.model_spec, " name two models: give one");
  if (given("--model")) {
    config.model = f.config.model;
    config.model_spec.clear();
  }
  if (given("--model-spec")) config.model_spec = f.config.model_spec;
  if (given("--data")) config.data = f.config.data;
  if (given("--epochs")) config.epochs = f.config.epochs;
  if (given("--steps")) config.steps = f.config.steps;
  if (given("--batch-size")) config.batch_size = f.config.batch_size;
  if (given("--label-smoothing")) config.label_smoothing = f.config.label_smoothing;
  if (given("--device")) config.device = f.config.device;
  if (given("--seed")) config.seed = f.config.seed;
  if (given("--workers")) config.workers = f.config.workers;
  if (given("--no-augment")) config.augment = false;
  if (given("--tf32")) config.tf32 = true;
  if (given("--channels-last")) config.channels_last = f.channels_last;  // or --no-channels-last
  if (given("--checkpoint-dir")) config.checkpoint_dir = f.config.checkpoint_dir;
  if (given("--checkpoint-every")) config.checkpoint_every = f.config.checkpoint_every;
  if (given("--keep-checkpoints")) config.keep_checkpoints = f.config.keep_checkpoints;
  if (resume) {
    config.checkpoint_dir = resume->root;
    config.resume = true;
  }
  if (given("--weights")) config.weights = f.config.weights;
  if (given("--eval-every")) config.eval_every = f.config.eval_every;
  if (given("--log-every")) config.log_every = f.config.log_every;
  if (given("--metrics")) config.metrics = f.config.metrics;
  // The same type keeps its settings (SGD's default Nesterov momentum and weight decay); another
  // type starts from its own defaults.
  if (given("--optimizer") && config.optimizer.value("type", std::string()) != f.optimizer_type)
    config.optimizer = {{"type", f.optimizer_type}};
  if (given("--momentum")) config.optimizer["momentum"] = f.momentum;
  if (given("--nesterov")) config.optimizer["nesterov"] = true;
  if (given("--weight-decay")) config.optimizer["weight_decay"] = f.weight_decay;
  if (given("--lr-schedule")) config.lr_schedule["type"] = f.schedule_type;
  if (given("--lr")) config.lr_schedule["base_lr"] = f.lr;
  if (given("--warmup-steps")) config.lr_schedule["warmup_steps"] = f.warmup_steps;
  config.validate(f.config_file.empty() ? "command line" : f.config_file);
  if (stored) std::fputs(check_resume_overrides(*stored, config, *resume->checkpoint).c_str(), stderr);
  for (const char* name : {"--stages",
                           "--micro-batches",
                           "--schedule",
                           "--partitioner",
                           "--devices",
                           "--recompute",
                           "--deferred-bn",
                           "--trace",
                           "--data-parallel",
                           "--unused-parameters",
                           "--groups",
                           "--grad-sync",
                           "--model-averaging",
                           "--average-every",
                           "--block-momentum",
                           "--block-lr",
                           "--block-nesterov",
                           "--elastic-beta",
                           "--local-after",
                           "--averaging-exchange",
                           "--averaging-cluster",
                           "--replication",
                           "--plan"}) {
    pipelined = pipelined || given(name);
  }
  if (given("--stages")) pipeline.stages = f.parallel.stages;
  if (given("--data-parallel")) pipeline.data_parallel = f.parallel.data_parallel;
  if (given("--unused-parameters")) pipeline.unused_parameters = f.parallel.unused_parameters;
  if (given("--groups")) pipeline.groups = f.parallel.groups;
  if (given("--grad-sync")) pipeline.grad_sync = f.parallel.grad_sync;
  if (given("--model-averaging")) pipeline.model_averaging = f.parallel.model_averaging;
  if (given("--average-every")) pipeline.average_every = f.parallel.average_every;
  if (given("--block-momentum")) pipeline.block_momentum = f.block_momentum;
  if (given("--block-lr")) pipeline.block_lr = f.parallel.block_lr;
  if (given("--block-nesterov")) pipeline.block_nesterov = f.parallel.block_nesterov;
  if (given("--elastic-beta")) pipeline.elastic_beta = f.parallel.elastic_beta;
  if (given("--local-after")) pipeline.local_after = f.parallel.local_after;
  if (given("--averaging-exchange")) pipeline.averaging_exchange = f.parallel.averaging_exchange;
  if (given("--averaging-cluster")) pipeline.averaging_cluster = f.parallel.averaging_cluster;
  if (given("--plan")) pipeline.plan_file = f.parallel.plan_file;
  pipeline = parallel::with_plan_file(pipeline);  // a plan file's layout; flags against it are errors
  bool averaging_flag = false;
  for (const char* name : {"--model-averaging", "--average-every", "--block-momentum", "--block-lr", "--block-nesterov",
                           "--elastic-beta", "--local-after", "--averaging-exchange", "--averaging-cluster"}) {
    averaging_flag = averaging_flag || given(name);
  }
  const bool data_parallel = pipeline.data_parallel > 0 || given("--data-parallel");
  BATON_CHECK(data_parallel || pipeline.groups > 1 || !given("--unused-parameters"),
              "--unused-parameters needs --data-parallel N or --groups G");
  BATON_CHECK(data_parallel || !averaging_flag,
              "--model-averaging, --average-every and the averaging knobs need --data-parallel N");
  BATON_CHECK(pipeline.groups > 1 || !given("--grad-sync"), "--grad-sync needs --groups G (G > 1) with --stages S");
  BATON_CHECK(pipeline.groups == 1 || pipeline.stages >= 1 || data_parallel,
              "--groups G runs G pipelines: give their stages with --stages S");
  const comm::LaunchEnvironment launch = comm::launch_environment();
  if (launch.size > 1) {
    if (!data_parallel && pipeline.stages >= 1) {
      // The hybrid (or a plain pipeline) across processes: one process per group and stage.
      BATON_CHECK(pipeline.groups * pipeline.stages == launch.size, launch.launcher, " started ", launch.size,
                  " processes for --groups ", pipeline.groups, " --stages ", pipeline.stages,
                  ": the hybrid across processes runs one process per group and stage (", pipeline.groups, " x ",
                  pipeline.stages, " = ", pipeline.groups * pipeline.stages, ")");
      BATON_CHECK(!given("--devices"),
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
  if (given("--micro-batches")) pipeline.micro_batches = f.parallel.micro_batches;
  if (given("--schedule")) pipeline.schedule = f.parallel.schedule;
  if (given("--partitioner")) pipeline.partitioner = f.parallel.partitioner;
  if (given("--replication")) pipeline.replication = f.parallel.replication;
  if (given("--devices")) pipeline.devices = f.parallel.devices;
  if (given("--device") && !given("--devices")) pipeline.devices.clear();  // --device overrides the file's devices
  if (given("--recompute")) pipeline.recompute = true;
  if (given("--deferred-bn")) pipeline.deferred_bn = true;
  if (given("--trace")) pipeline.trace = f.parallel.trace;
  if (data_parallel) {
    parallel::check_data_parallel_config(pipeline, config);
    BATON_CHECK(!given("--devices") || !given("--device"), "give --devices LIST or --device, not both");
  } else if (pipelined) {
    parallel::check_parallel_config(pipeline, config);
    BATON_CHECK(!given("--devices") || !given("--device"), "give --devices LIST or --device, not both");
  }
  check_before_training(config, pipeline);

  const Device device = pipelined ? Device::cpu() : pick_device(config.device);
  const std::unique_ptr<data::Dataset> train_set = data::open_dataset(config.data, data::Split::train, config.seed);
  const std::unique_ptr<data::Dataset> test_set = data::open_dataset(config.data, data::Split::test, config.seed);
  const Shape image = train_set->image_shape();
  Graph graph;
  if (!config.model_spec.empty()) {
    graph =
        Graph::from_json(read_json_file(config.model_spec, "model spec"), layers::builtin_layers(), config.model_spec);
  } else {
    BATON_CHECK(image[1] == image[2], "data '", config.data, "' has ", image[1], "x", image[2],
                " images; the reference models take square images");
    graph = models::build_model(config.model, {.batch_size = config.batch_size,
                                               .num_classes = train_set->num_classes(),
                                               .in_channels = image[0],
                                               .image_size = image[1],
                                               .with_loss = true,
                                               .label_smoothing = config.label_smoothing});
  }
  std::printf("training %s on %s: %lld train / %lld test samples, batch %lld\n",
              config.model_spec.empty() ? config.model.c_str() : config.model_spec.c_str(), train_set->name().c_str(),
              static_cast<long long>(train_set->size()), static_cast<long long>(test_set->size()),
              static_cast<long long>(config.batch_size));
  g_stop = false;
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);  // what schedulers send before they kill
  const auto stop = [] { return g_stop.load(); };
  const std::string model_name = config.model_spec.empty() ? config.model : config.model_spec;
  const TrainSummary s = data_parallel ? train_data_parallel(graph, config, pipeline, *train_set, test_set.get(), stop)
                         : pipelined
                             ? train_pipelined(graph, model_name, config, pipeline, *train_set, test_set.get(), stop)
                             : Trainer(graph, config, *train_set, test_set.get(), device).run(stop);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::printf("%s after %lld steps: train loss %.4f, %.1f samples/s", s.interrupted ? "stopped" : "done",
              static_cast<long long>(s.steps), s.last_loss, s.samples_per_second);
  if (s.eval.samples > 0) {
    std::printf("; test loss %.4f", s.eval.loss);
    if (s.eval.top1 >= 0) std::printf(", top-1 %.2f%%, top-5 %.2f%%", 100 * s.eval.top1, 100 * s.eval.top5);
  }
  std::printf("\n");
  if (!s.checkpoint.empty()) std::printf("checkpoint: %s\n", s.checkpoint.c_str());
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model; flags override --config FILE");
  add_train_flags(*cmd, *f);
  cmd->callback([cmd, f] {
    const int code = run_train(*cmd, *f);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace baton::cli
