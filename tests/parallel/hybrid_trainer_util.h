// Helpers for the tests of the hybrid through the Trainer: a short run's configuration on CPU
// virtual devices and the 2-stage hybrid plan of G groups with its devices.
#pragma once

#include <string>
#include <vector>

#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "runtime/train/train_config.h"

namespace baton::parallel::testing {

// Six steps of batch `batch` over synthetic 3x8x8 images of 4 classes on the CPU, SGD with momentum,
// every loss logged, no evaluation.
inline TrainConfig short_hybrid_run(int64_t batch) {
  TrainConfig config;
  config.data = "synthetic:3x8x8:4:64";
  config.steps = 6;
  config.batch_size = batch;
  config.device = "cpu";
  config.workers = 1;
  config.eval_every = 0;
  config.log_every = 1;
  config.optimizer = {{"type", "sgd"}, {"momentum", 0.9}};
  return config;
}

// `groups` x 2 stages of `graph` ("image_mlp"'s analytic profile), `micro_batches` per group, for a
// batch of `batch` on cpu-<2 groups>; `options.group_devices` set to its devices cpu:0 ...
inline EvaluatedPlan two_stage_hybrid(const Graph& graph, int groups, int micro_batches, int64_t batch,
                                      PipelineTrainOptions& options) {
  const Profile profile = analytic_profile(graph, "image_mlp", device_spec_by_name("cpu"), {.batch_sizes = {1, 2}});
  PlanChoice choice;
  choice.groups = groups;
  choice.stages = 2;
  choice.micro_batches = micro_batches;
  PlanSettings settings;
  settings.batch = static_cast<int>(batch);
  EvaluatedPlan e = evaluate_plan(choice, profile, cluster_by_name("cpu-" + std::to_string(2 * groups)), settings);
  std::vector<Device> available;
  for (int d = 0; d < 2 * groups; ++d) available.push_back(Device::cpu(d));
  options.group_devices = hybrid_devices(e.plan, available);
  return e;
}

}  // namespace baton::parallel::testing
