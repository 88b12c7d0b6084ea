// The table of `baton train`'s flags (see train_flags.h): one row per setting, in the order they
// are applied. A flag's field is the config file's (a "parallel" object holds the parallel ones).
#include "tools/flag_checks.h"
#include "tools/train_flag_values.h"

namespace baton::cli {
namespace {

using parallel::ParallelConfig;
using FS = FlagScope;

// --comm-backend: the communicators' backend, checked against the run's devices and launcher later.
comm::CommBackend comm_backend_flag(std::string_view name) { return comm::parse_comm_backend(name, "--comm-backend"); }

// --model names a registered model: it replaces a model spec of the file or checkpoint.
FlagValue read_model() {
  return {false, "TEXT", [](TrainSettings& s, const CLI::Option& o) {
            s.train.model = o.as<std::string>();
            s.train.model_spec.clear();
          }};
}

// --optimizer: the same type keeps its settings (SGD's default Nesterov momentum and weight decay);
// another type starts from its own defaults.
FlagValue read_optimizer_type() {
  return {false, "TEXT", [](TrainSettings& s, const CLI::Option& o) {
            const std::string type = o.as<std::string>();
            if (s.train.optimizer.value("type", std::string()) != type) s.train.optimizer = {{"type", type}};
          }};
}

// --device also drops the file's pipeline devices (--devices, a later row, gives them again).
FlagValue read_device() {
  return {false, "TEXT", [](TrainSettings& s, const CLI::Option& o) {
            s.train.device = o.as<std::string>();
            s.parallel.devices.clear();
          }};
}

FlagValue read_block_momentum() {
  return {false, "FLOAT", [](TrainSettings& s, const CLI::Option& o) { s.parallel.block_momentum = o.as<double>(); }};
}

}  // namespace

const std::vector<TrainFlag>& train_flags() {
  // Flag, config file field, help, scope, how the value is read (train_flag_values.h), then, when
  // needed, a check of the value as typed (flag_checks.h) and what --resume does when it differs
  // (docs/training.md, "Resuming", has the table's rules and why).
  static const std::vector<TrainFlag> table = {
      {"--model", "model", "Reference model name (see `baton models`)", FS::train, read_model(), std::nullopt,
       OnResume::refuse},
      {"--model-spec", "model_spec", "Graph spec JSON file instead of --model", FS::train,
       read_into(&TrainConfig::model_spec), file_path(), OnResume::refuse},
      {"--data", "data", "shapes, synthetic, cifar10:DIR or cifar100:DIR", FS::train, read_into(&TrainConfig::data),
       std::nullopt, OnResume::refuse},
      {"--epochs", "epochs", "Epochs to train", FS::train, read_into(&TrainConfig::epochs), whole_number(0)},
      {"--steps", "steps", "Optimiser steps to train (overrides --epochs)", FS::train, read_into(&TrainConfig::steps),
       whole_number(0)},
      {"--batch-size", "batch_size", "Samples per step", FS::train, read_into(&TrainConfig::batch_size),
       whole_number(1), OnResume::refuse},
      {"--optimizer", "optimizer.type", "sgd or adamw", FS::train, read_optimizer_type(),
       CLI::IsMember({"sgd", "adamw"}), OnResume::refuse},
      {"--lr", "lr_schedule.base_lr", "Base learning rate", FS::train,
       read_into_key<double>(&TrainConfig::lr_schedule, "base_lr"), non_negative(), OnResume::warn},
      {"--momentum", "optimizer.momentum", "SGD momentum", FS::train,
       read_into_key<double>(&TrainConfig::optimizer, "momentum"), non_negative(), OnResume::warn},
      {"--nesterov,!--no-nesterov", "optimizer.nesterov",
       "SGD with Nesterov momentum (the default), or plain momentum; --momentum 0 --no-nesterov is plain SGD",
       FS::train, switch_key(&TrainConfig::optimizer, "nesterov"), std::nullopt, OnResume::warn},
      {"--weight-decay", "optimizer.weight_decay", "Weight decay", FS::train,
       read_into_key<double>(&TrainConfig::optimizer, "weight_decay"), non_negative(), OnResume::warn},
      {"--lr-schedule", "lr_schedule.type", "constant, step, multistep, linear, cosine, cosine_linear", FS::train,
       read_into_key<std::string>(&TrainConfig::lr_schedule, "type"), std::nullopt, OnResume::warn},
      {"--warmup-steps", "lr_schedule.warmup_steps", "Linear warm-up steps before the schedule", FS::train,
       read_into_key<int64_t>(&TrainConfig::lr_schedule, "warmup_steps"), whole_number(0), OnResume::warn},
      {"--label-smoothing", "label_smoothing", "Label smoothing of the cross-entropy", FS::train,
       read_into(&TrainConfig::label_smoothing), std::nullopt, OnResume::warn},
      {"--device", "device", "auto, cpu or cuda:N", FS::train, read_device()},
      {"--seed", "seed", "Seed of initialisation, data order, augmentation and dropout", FS::train,
       read_into(&TrainConfig::seed), whole_number(0), OnResume::refuse},
      {"--workers", "workers", "Data loader threads (1..256)", FS::train, read_into(&TrainConfig::workers),
       whole_number(1, 256)},
      {"--no-augment", "augment", "No random crop / flip", FS::train, switch_to(&TrainConfig::augment, false),
       std::nullopt, OnResume::warn},
      {"--tf32", "tf32", "Allow TF32 tensor-core math for float32 convolutions and matrix products", FS::train,
       switch_to(&TrainConfig::tf32, true), std::nullopt, OnResume::warn},
      {"--channels-last,!--no-channels-last", "channels_last",
       "CPU float32: keep activations channels-last (NHWC) from convolution through batch norm, activations and "
       "residual adds (the default; docs/cpu.md)",
       FS::train, switch_into(&TrainConfig::channels_last), std::nullopt, OnResume::warn},
      {"--checkpoint-dir", "checkpoint_dir", "Directory for checkpoints", FS::train,
       read_into(&TrainConfig::checkpoint_dir)},
      {"--checkpoint-every", "checkpoint_every", "Steps between checkpoints (0: every epoch)", FS::train,
       read_into(&TrainConfig::checkpoint_every), whole_number(0)},
      {"--overwrite", "overwrite",
       "A fresh run into a --checkpoint-dir holding another run's checkpoints deletes them (else it is refused)",
       FS::train, switch_to(&TrainConfig::overwrite, true)},
      {"--keep-checkpoints", "keep_checkpoints", "Checkpoints to keep", FS::train,
       read_into(&TrainConfig::keep_checkpoints), whole_number(1, INT32_MAX)},
      {"--weights", "weights",
       "Start from this safetensors file's weights (torchvision names; fine-tuning): step 0, fresh optimiser",
       FS::train, read_into(&TrainConfig::weights), file_path()},
      {"--eval-every", "eval_every", "Epochs between evaluations (0: never)", FS::train,
       read_into(&TrainConfig::eval_every)},
      {"--log-every", "log_every", "Steps between metrics lines", FS::train, read_into(&TrainConfig::log_every)},
      {"--metrics", "metrics", "JSON-lines metrics file (appended)", FS::train, read_into(&TrainConfig::metrics)},
      {"--stages", "parallel.stages", "Train as a pipeline of S stages (docs/training.md)", FS::parallel,
       read_into(&ParallelConfig::stages), whole_number(1, INT32_MAX), OnResume::warn},
      {"--data-parallel", "parallel.data_parallel",
       "Train N replicas in this process on cpu:0..N-1 (or --devices), --batch-size the global batch "
       "(docs/data-parallel.md)",
       FS::parallel, read_into(&ParallelConfig::data_parallel), std::nullopt, OnResume::refuse_if_averaging},
      {"--model-averaging", "parallel.model_averaging",
       "Data parallel: none (gradients all-reduced every step), periodic (local SGD), bmuf, easgd or post-local; the "
       "replicas meet every --average-every H steps",
       FS::averaging, choice_into(&ParallelConfig::model_averaging, parallel::parse_averaging), std::nullopt,
       OnResume::refuse_if_averaging},
      {"--average-every", "parallel.average_every",
       "Model averaging: steps H between the replicas' meetings (default 1)", FS::averaging,
       read_into(&ParallelConfig::average_every), std::nullopt, OnResume::refuse_if_averaging},
      {"--block-momentum", "parallel.block_momentum", "BMUF: block momentum mu in [0, 1) (default 1 - 1/N)",
       FS::averaging, read_block_momentum(), std::nullopt, OnResume::warn},
      {"--block-lr", "parallel.block_lr", "BMUF: block learning rate zeta (default 1)", FS::averaging,
       read_into(&ParallelConfig::block_lr), std::nullopt, OnResume::warn},
      {"--block-nesterov", "parallel.block_nesterov",
       "BMUF: blocks start from w_g + mu v (true, default) or from the global model w_g (false)", FS::averaging,
       read_into(&ParallelConfig::block_nesterov), std::nullopt, OnResume::warn},
      {"--elastic-beta", "parallel.elastic_beta", "EASGD: moving rate beta in (0, 1], alpha = beta / N (default 0.9)",
       FS::averaging, read_into(&ParallelConfig::elastic_beta), std::nullopt, OnResume::warn},
      {"--local-after", "parallel.local_after",
       "Post-local SGD: synchronous steps K before local SGD starts (default 0)", FS::averaging,
       read_into(&ParallelConfig::local_after), std::nullopt, OnResume::refuse_if_averaging},
      {"--averaging-exchange", "parallel.averaging_exchange",
       "Model averaging exchange: ring (all-reduce around the replicas, default) or tree (by node)", FS::averaging,
       choice_into(&ParallelConfig::averaging_exchange, parallel::parse_exchange)},
      {"--averaging-cluster", "parallel.averaging_cluster",
       "Tree exchange: cluster name or JSON file; replica r on its device r, nodes from it (default: by host)",
       FS::averaging, read_into(&ParallelConfig::averaging_cluster)},
      {"--groups", "parallel.groups",
       "Train G pipelines of --stages S each, data parallel across the groups (the hybrid, docs/hybrid.md)",
       FS::parallel, read_into(&ParallelConfig::groups), std::nullopt, OnResume::warn},
      {"--grad-sync", "parallel.grad_sync",
       "The hybrid's gradient all-reduce per stage: bucket (during backward) or partition (one per stage after its "
       "last backward)",
       FS::parallel, choice_into(&ParallelConfig::grad_sync, parallel::parse_grad_sync)},
      {"--comm-backend", "parallel.comm_backend",
       "Communicators: auto (by devices and launcher), inproc, mpi, nccl or nccl-mpi (docs/data-parallel.md)",
       FS::parallel, choice_into(&ParallelConfig::comm_backend, comm_backend_flag)},
      {"--unused-parameters", "parallel.unused_parameters",
       "Data parallel: a parameter that gets no gradient is an 'error' (default) or 'ready' (reduced as zeros)",
       FS::parallel, choice_into(&ParallelConfig::unused_parameters, parallel::parse_unused_parameters)},
      {"--micro-batches", "parallel.micro_batches",
       "Micro-batches per group per step; the step has groups x as many (default: the largest <= 4 x stages dividing "
       "a group's share of the batch)",
       FS::parallel, read_into(&ParallelConfig::micro_batches), whole_number(1, INT32_MAX), OnResume::warn},
      {"--schedule", "parallel.schedule", "Pipeline schedule: gpipe, 1f1b or interleaved (default 1f1b)", FS::parallel,
       choice_into(&ParallelConfig::schedule, parallel::parse_schedule_kind)},
      {"--partitioner", "parallel.partitioner", "uniform, block, antichain or hypergraph (default block)", FS::parallel,
       choice_into(&ParallelConfig::partitioner, parallel::parse_partitioner)},
      {"--replication", "parallel.replication",
       "equal (every stage on --groups devices, default) or free (with --partitioner antichain: each stage's "
       "replicas chosen within groups x stages devices, PipeDream's plans)",
       FS::parallel, choice_into(&ParallelConfig::replication, parallel::parse_replication)},
      {"--devices", "parallel.devices",
       "Pipeline devices, e.g. cuda:0,cuda:1 or cpu:0,cpu:1 (stage i on device i mod count); with --data-parallel, "
       "one device per replica",
       FS::parallel, read_into(&ParallelConfig::devices)},
      {"--recompute", "parallel.recompute", "Recompute each stage's forward in its backward", FS::parallel,
       switch_to(&ParallelConfig::recompute, true)},
      {"--deferred-bn", "parallel.deferred_bn", "BatchNorm statistics once per mini-batch in pipelines", FS::parallel,
       switch_to(&ParallelConfig::deferred_bn, true), std::nullopt, OnResume::warn},
      {"--plan", "parallel.plan_file", "Train a plan file (baton plan --json FILE) as written", FS::parallel,
       read_into(&ParallelConfig::plan_file), file_path(), OnResume::warn},
      {"--trace", "parallel.trace",
       "Chrome trace of the first measured pipeline steps beside the simulator's prediction", FS::parallel,
       read_into(&ParallelConfig::trace)},
  };
  return table;
}

}  // namespace baton::cli
