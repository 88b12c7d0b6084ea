// add_train_flags: the options of `baton train`, their help and their checks.
#include "tools/train_flags.h"

#include "tools/flag_checks.h"

namespace baton::cli {

void add_train_flags(CLI::App& cmd, TrainFlags& f) {
  cmd.add_option("--config", f.config_file, "JSON config file (fields as in docs/training.md)");
  cmd.add_option("--model", f.config.model, "Reference model name (see `baton models`)");
  cmd.add_option("--model-spec", f.config.model_spec, "Graph spec JSON file instead of --model");
  cmd.add_option("--data", f.config.data, "shapes, synthetic, cifar10:DIR or cifar100:DIR");
  cmd.add_option("--epochs", f.config.epochs, "Epochs to train")->check(whole_number(0));
  cmd.add_option("--steps", f.config.steps, "Optimiser steps to train (overrides --epochs)")->check(whole_number(0));
  cmd.add_option("--batch-size", f.config.batch_size, "Samples per step")->check(whole_number(1));
  cmd.add_option("--optimizer", f.optimizer_type, "sgd or adamw")->check(CLI::IsMember({"sgd", "adamw"}));
  cmd.add_option("--lr", f.lr, "Base learning rate")->check(non_negative());
  cmd.add_option("--momentum", f.momentum, "SGD momentum")->check(non_negative());
  cmd.add_flag("--nesterov", f.nesterov, "SGD with Nesterov momentum");
  cmd.add_option("--weight-decay", f.weight_decay, "Weight decay")->check(non_negative());
  cmd.add_option("--lr-schedule", f.schedule_type, "constant, step, multistep, linear, cosine, cosine_linear");
  cmd.add_option("--warmup-steps", f.warmup_steps, "Linear warm-up steps before the schedule")->check(whole_number(0));
  cmd.add_option("--label-smoothing", f.config.label_smoothing, "Label smoothing of the cross-entropy");
  cmd.add_option("--device", f.config.device, "auto, cpu or cuda:N");
  cmd.add_option("--seed", f.config.seed, "Seed of initialisation, data order, augmentation and dropout")
      ->check(whole_number(0));
  cmd.add_option("--workers", f.config.workers, "Data loader threads (1..256)")->check(whole_number(1, 256));
  cmd.add_flag("--no-augment", f.no_augment, "No random crop / flip");
  cmd.add_flag("--tf32", f.tf32, "Allow TF32 tensor-core math for float32 convolutions and matrix products");
  cmd.add_flag("--channels-last,!--no-channels-last", f.channels_last,
               "CPU float32: keep activations channels-last (NHWC) from convolution through batch norm, activations "
               "and residual adds (the default; docs/cpu.md)");
  cmd.add_option("--checkpoint-dir", f.config.checkpoint_dir, "Directory for checkpoints");
  cmd.add_option("--checkpoint-every", f.config.checkpoint_every, "Steps between checkpoints (0: every epoch)")
      ->check(whole_number(0));
  cmd.add_option("--keep-checkpoints", f.config.keep_checkpoints, "Checkpoints to keep")
      ->check(whole_number(1, INT32_MAX));
  cmd.add_option("--resume", f.resume_dir, "Continue from the newest checkpoint in DIR (and keep saving there)");
  cmd.add_option(
      "--weights", f.config.weights,
      "Start from this safetensors file's weights (torchvision names; fine-tuning): step 0, fresh optimiser");
  cmd.add_option("--eval-every", f.config.eval_every, "Epochs between evaluations (0: never)");
  cmd.add_option("--log-every", f.config.log_every, "Steps between metrics lines");
  cmd.add_option("--metrics", f.config.metrics, "JSON-lines metrics file (appended)");
  cmd.add_option("--stages", f.parallel.stages, "Train as a pipeline of S stages (docs/training.md)")
      ->check(whole_number(1, INT32_MAX));
  cmd.add_option("--data-parallel", f.parallel.data_parallel,
                 "Train N replicas in this process on cpu:0..N-1 (or --devices), --batch-size the global batch "
                 "(docs/data-parallel.md)");
  cmd.add_option("--model-averaging", f.parallel.model_averaging,
                 "Data parallel: none (gradients all-reduced every step), periodic (local SGD), bmuf, easgd or "
                 "post-local; the replicas meet every --average-every H steps");
  cmd.add_option("--average-every", f.parallel.average_every,
                 "Model averaging: steps H between the replicas' meetings (default 1)");
  cmd.add_option("--block-momentum", f.block_momentum, "BMUF: block momentum mu in [0, 1) (default 1 - 1/N)");
  cmd.add_option("--block-lr", f.parallel.block_lr, "BMUF: block learning rate zeta (default 1)");
  cmd.add_option("--block-nesterov", f.parallel.block_nesterov,
                 "BMUF: blocks start from w_g + mu v (true, default) or from the global model w_g (false)");
  cmd.add_option("--elastic-beta", f.parallel.elastic_beta,
                 "EASGD: moving rate beta in (0, 1], alpha = beta / N (default 0.9)");
  cmd.add_option("--local-after", f.parallel.local_after,
                 "Post-local SGD: synchronous steps K before local SGD starts (default 0)");
  cmd.add_option("--averaging-exchange", f.parallel.averaging_exchange,
                 "Model averaging exchange: ring (all-reduce around the replicas, default) or tree (by node)");
  cmd.add_option("--averaging-cluster", f.parallel.averaging_cluster,
                 "Tree exchange: cluster name or JSON file; replica r on its device r, nodes from it (default: "
                 "by host)");
  cmd.add_option("--groups", f.parallel.groups,
                 "Train G pipelines of --stages S each, data parallel across the groups (the hybrid, docs/hybrid.md)");
  cmd.add_option("--grad-sync", f.parallel.grad_sync,
                 "The hybrid's gradient all-reduce per stage: bucket (during backward) or partition (one per stage "
                 "after its last backward)");
  cmd.add_option(
      "--unused-parameters", f.parallel.unused_parameters,
      "Data parallel: a parameter that gets no gradient is an 'error' (default) or 'ready' (reduced as zeros)");
  cmd.add_option("--micro-batches", f.parallel.micro_batches,
                 "Micro-batches per group per step; the step has groups x as many (default: the largest <= 4 x "
                 "stages dividing a group's share of the batch)")
      ->check(whole_number(1, INT32_MAX));
  cmd.add_option("--schedule", f.parallel.schedule, "Pipeline schedule: gpipe, 1f1b or interleaved (default 1f1b)");
  cmd.add_option("--partitioner", f.parallel.partitioner, "uniform, block, antichain or hypergraph (default block)");
  cmd.add_option("--replication", f.parallel.replication,
                 "equal (every stage on --groups devices, default) or free (with --partitioner antichain: each "
                 "stage's replicas chosen within groups x stages devices, PipeDream's plans)");
  cmd.add_option("--devices", f.parallel.devices,
                 "Pipeline devices, e.g. cuda:0,cuda:1 or cpu:0,cpu:1 (stage i on device i mod count); with "
                 "--data-parallel, one device per replica");
  cmd.add_flag("--recompute", f.parallel.recompute, "Recompute each stage's forward in its backward");
  cmd.add_flag("--deferred-bn", f.parallel.deferred_bn, "BatchNorm statistics once per mini-batch in pipelines");
  cmd.add_option("--plan", f.parallel.plan_file, "Train a plan file (baton plan --json FILE) as written");
  cmd.add_option("--trace", f.parallel.trace,
                 "Chrome trace of the first measured pipeline steps beside the simulator's prediction");
}

}  // namespace baton::cli
