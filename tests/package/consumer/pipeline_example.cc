// Embedding baton: trains ResNet-20 as a 2-stage pipeline on the virtual CPU devices cpu:0 and
// cpu:1 through parallel/parallel_training.h and prints its loss. Exits non-zero on any error.
#include <cmath>
#include <cstdio>

#include "models/model_registry.h"
#include "parallel/parallel_training.h"
#include "runtime/core/error.h"
#include "runtime/data/dataset.h"
#include "runtime/train/trainer.h"

int main() {
  try {
    baton::TrainConfig config;
    config.data = "synthetic:3x32x32:10:64";  // 64 generated 32x32 images of 10 classes
    config.batch_size = 16;
    config.steps = 4;
    config.workers = 1;
    config.eval_every = 0;
    const auto train_set = baton::data::open_dataset(config.data, baton::data::Split::train, config.seed);
    const baton::Graph graph = baton::models::build_model(
        "resnet20", {.batch_size = config.batch_size, .num_classes = 10, .in_channels = 3, .image_size = 32});

    baton::parallel::ParallelConfig parallel;
    parallel.stages = 2;
    parallel.devices = "cpu:0,cpu:1";
    const baton::parallel::ParallelTraining training =
        baton::parallel::make_parallel_training(graph, "resnet20", config, parallel);
    std::printf("pipeline-example: %s on %s and %s, cluster %s, predicted step %.1f ms\n",
                training.setup.planned.label().c_str(), training.setup.stage_devices[0].str().c_str(),
                training.setup.stage_devices[1].str().c_str(), training.setup.cluster.name().c_str(),
                training.setup.planned.predicted.step_ms);

    baton::Trainer trainer(graph, config, *train_set, nullptr, *training.engine);
    const baton::TrainSummary summary = trainer.run(nullptr);
    std::printf("pipeline-example: %lld steps, loss %.4f\n", static_cast<long long>(summary.steps), summary.last_loss);
    if (summary.steps != config.steps || !std::isfinite(summary.last_loss)) {
      std::fprintf(stderr, "pipeline-example: FAILED: expected %lld steps and a finite loss\n",
                   static_cast<long long>(config.steps));
      return 1;
    }
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "pipeline-example: FAILED: baton::Error: %s\n", e.what());
    return 1;
  }
  std::printf("pipeline-example: ok\n");
  return 0;
}
