// `baton train`: trains a reference model (or a graph spec) on a dataset from flags and/or a JSON
// config file (flags override the file). SIGINT finishes the current step, saves a checkpoint when
// a checkpoint directory is set, and exits cleanly.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

#include "layers/builtin_layers.h"
#include "models/model_registry.h"
#include "parallel/comm/launch_environment.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "runtime/data/dataset.h"
#include "runtime/graph/json_fields.h"
#include "runtime/train/trainer.h"
#include "tools/commands.h"
#include "tools/device_flag.h"
#include "tools/rank_output.h"
#include "tools/train_pipeline.h"
#include "tools/train_resume.h"

namespace baton::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second Ctrl-C stops at once
}

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
  double block_momentum = 0;
  parallel::ParallelConfig parallel;  // the pipeline flags
};

// A config file's checkpoint_dir when it says "resume": true (type errors are the config reader's).
std::string file_resume_dir(const nlohmann::json& file) {
  if (!file.is_object() || !file.contains("resume") || file["resume"] != true) return "";
  return file.contains("checkpoint_dir") && file["checkpoint_dir"].is_string()
             ? file["checkpoint_dir"].get<std::string>()
             : "";
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
    if (resume->checkpoint) config = *(stored = stored_config(*resume->checkpoint));
  }
  if (!file.is_null()) config.update_from_json(file, f.config_file);
  // Flags given on the command line override the file.
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
  if (given("--optimizer")) config.optimizer = {{"type", f.optimizer_type}};
  if (given("--momentum")) config.optimizer["momentum"] = f.momentum;
  if (given("--nesterov")) config.optimizer["nesterov"] = true;
  if (given("--weight-decay")) config.optimizer["weight_decay"] = f.weight_decay;
  if (given("--lr-schedule")) config.lr_schedule["type"] = f.schedule_type;
  if (given("--lr")) config.lr_schedule["base_lr"] = f.lr;
  if (given("--warmup-steps")) config.lr_schedule["warmup_steps"] = f.warmup_steps;
  config.validate(f.config_file.empty() ? "command line" : f.config_file);
  if (stored) std::fputs(check_resume_overrides(*stored, config, *resume->checkpoint).c_str(), stderr);
  for (const char* name :
       {"--stages",           "--micro-batches",  "--schedule",        "--partitioner",   "--devices",
        "--recompute",        "--deferred-bn",    "--trace",           "--data-parallel", "--unused-parameters",
        "--groups",           "--grad-sync",      "--model-averaging", "--average-every", "--block-momentum",
        "--block-lr",         "--block-nesterov", "--elastic-beta",    "--local-after",   "--averaging-exchange",
        "--averaging-cluster"}) {
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
  const auto stop = [] { return g_stop.load(); };
  const std::string model_name = config.model_spec.empty() ? config.model : config.model_spec;
  const TrainSummary s = data_parallel ? train_data_parallel(graph, config, pipeline, *train_set, test_set.get(), stop)
                         : pipelined
                             ? train_pipelined(graph, model_name, config, pipeline, *train_set, test_set.get(), stop)
                             : Trainer(graph, config, *train_set, test_set.get(), device).run(stop);
  std::signal(SIGINT, SIG_DFL);
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
  cmd->add_option("--config", f->config_file, "JSON config file (fields as in docs/training.md)");
  cmd->add_option("--model", f->config.model, "Reference model name (see `baton models`)");
  cmd->add_option("--model-spec", f->config.model_spec, "Graph spec JSON file instead of --model");
  cmd->add_option("--data", f->config.data, "shapes, synthetic, cifar10:DIR or cifar100:DIR");
  cmd->add_option("--epochs", f->config.epochs, "Epochs to train");
  cmd->add_option("--steps", f->config.steps, "Optimiser steps to train (overrides --epochs)");
  cmd->add_option("--batch-size", f->config.batch_size, "Samples per step");
  cmd->add_option("--optimizer", f->optimizer_type, "sgd or adamw")->check(CLI::IsMember({"sgd", "adamw"}));
  cmd->add_option("--lr", f->lr, "Base learning rate");
  cmd->add_option("--momentum", f->momentum, "SGD momentum");
  cmd->add_flag("--nesterov", f->nesterov, "SGD with Nesterov momentum");
  cmd->add_option("--weight-decay", f->weight_decay, "Weight decay");
  cmd->add_option("--lr-schedule", f->schedule_type, "constant, step, multistep, linear, cosine, cosine_linear");
  cmd->add_option("--warmup-steps", f->warmup_steps, "Linear warm-up steps before the schedule");
  cmd->add_option("--label-smoothing", f->config.label_smoothing, "Label smoothing of the cross-entropy");
  cmd->add_option("--device", f->config.device, "auto, cpu or cuda:N");
  cmd->add_option("--seed", f->config.seed, "Seed of initialisation, data order, augmentation and dropout");
  cmd->add_option("--workers", f->config.workers, "Data loader threads");
  cmd->add_flag("--no-augment", f->no_augment, "No random crop / flip");
  cmd->add_flag("--tf32", f->tf32, "Allow TF32 tensor-core math for float32 convolutions and matrix products");
  cmd->add_option("--checkpoint-dir", f->config.checkpoint_dir, "Directory for checkpoints");
  cmd->add_option("--checkpoint-every", f->config.checkpoint_every, "Steps between checkpoints (0: every epoch)");
  cmd->add_option("--keep-checkpoints", f->config.keep_checkpoints, "Checkpoints to keep");
  cmd->add_option("--resume", f->resume_dir, "Continue from the newest checkpoint in DIR (and keep saving there)");
  cmd->add_option(
      "--weights", f->config.weights,
      "Start from this safetensors file's weights (torchvision names; fine-tuning): step 0, fresh optimiser");
  cmd->add_option("--eval-every", f->config.eval_every, "Epochs between evaluations (0: never)");
  cmd->add_option("--log-every", f->config.log_every, "Steps between metrics lines");
  cmd->add_option("--metrics", f->config.metrics, "JSON-lines metrics file (appended)");
  cmd->add_option("--stages", f->parallel.stages, "Train as a pipeline of S stages (docs/training.md)");
  cmd->add_option("--data-parallel", f->parallel.data_parallel,
                  "Train N replicas in this process on cpu:0..N-1 (or --devices), --batch-size the global batch "
                  "(docs/data-parallel.md)");
  cmd->add_option("--model-averaging", f->parallel.model_averaging,
                  "Data parallel: none (gradients all-reduced every step), periodic (local SGD), bmuf, easgd or "
                  "post-local; the replicas meet every --average-every H steps");
  cmd->add_option("--average-every", f->parallel.average_every,
                  "Model averaging: steps H between the replicas' meetings (default 1)");
  cmd->add_option("--block-momentum", f->block_momentum, "BMUF: block momentum mu in [0, 1) (default 1 - 1/N)");
  cmd->add_option("--block-lr", f->parallel.block_lr, "BMUF: block learning rate zeta (default 1)");
  cmd->add_option("--block-nesterov", f->parallel.block_nesterov,
                  "BMUF: blocks start from w_g + mu v (true, default) or from the global model w_g (false)");
  cmd->add_option("--elastic-beta", f->parallel.elastic_beta,
                  "EASGD: moving rate beta in (0, 1], alpha = beta / N (default 0.9)");
  cmd->add_option("--local-after", f->parallel.local_after,
                  "Post-local SGD: synchronous steps K before local SGD starts (default 0)");
  cmd->add_option("--averaging-exchange", f->parallel.averaging_exchange,
                  "Model averaging exchange: ring (all-reduce around the replicas, default) or tree (by node)");
  cmd->add_option("--averaging-cluster", f->parallel.averaging_cluster,
                  "Tree exchange: cluster name or JSON file; replica r on its device r, nodes from it (default: "
                  "by host)");
  cmd->add_option("--groups", f->parallel.groups,
                  "Train G pipelines of --stages S each, data parallel across the groups (the hybrid, docs/hybrid.md)");
  cmd->add_option("--grad-sync", f->parallel.grad_sync,
                  "The hybrid's gradient all-reduce per stage: bucket (during backward) or partition (one per stage "
                  "after its last backward)");
  cmd->add_option(
      "--unused-parameters", f->parallel.unused_parameters,
      "Data parallel: a parameter that gets no gradient is an 'error' (default) or 'ready' (reduced as zeros)");
  cmd->add_option("--micro-batches", f->parallel.micro_batches,
                  "Micro-batches per step (default: the largest <= 4 x stages dividing the batch)");
  cmd->add_option("--schedule", f->parallel.schedule, "Pipeline schedule: gpipe, 1f1b or interleaved (default 1f1b)");
  cmd->add_option("--partitioner", f->parallel.partitioner, "uniform, block, antichain or hypergraph (default block)");
  cmd->add_option("--devices", f->parallel.devices,
                  "Pipeline devices, e.g. cuda:0,cuda:1 or cpu:0,cpu:1 (stage i on device i mod count); with "
                  "--data-parallel, one device per replica");
  cmd->add_flag("--recompute", f->parallel.recompute, "Recompute each stage's forward in its backward");
  cmd->add_flag("--deferred-bn", f->parallel.deferred_bn, "BatchNorm statistics once per mini-batch in pipelines");
  cmd->add_option("--trace", f->parallel.trace,
                  "Chrome trace of the first measured pipeline steps beside the simulator's prediction");
  cmd->callback([cmd, f] {
    const int code = run_train(*cmd, *f);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace baton::cli
