// Convergence (label slow): ResNet-20 trained on the CPU for 300 steps of batch 64 on generated
// shapes data reaches a test accuracy far above chance (10 classes: 10%). Measured when written:
// 35.6% top-1 on 2,000 test images. The bound below leaves room for nothing but real learning.
#include <gtest/gtest.h>

#include <iostream>

#include "models/model_registry.h"
#include "runtime/data/shapes.h"
#include "runtime/train/trainer.h"

namespace baton {
namespace {

TEST(Convergence, ResNet20LearnsShapesOnTheCpu) {
  const data::ShapesDataset train(data::Split::train, 0, 20000);
  const data::ShapesDataset test(data::Split::test, 0, 2000);
  const Graph graph = models::build_model("resnet20", {.batch_size = 64, .num_classes = 10, .image_size = 32});
  TrainConfig config;
  config.steps = 300;
  config.batch_size = 64;
  config.lr_schedule = {{"type", "cosine"}, {"base_lr", 0.1}};
  config.log_every = 50;
  config.eval_every = 1;
  const TrainSummary s = Trainer(graph, config, train, &test, Device::cpu()).run(nullptr);
  std::cout << "ResNet-20, 300 steps: test top-1 " << 100 * s.eval.top1 << "%, top-5 " << 100 * s.eval.top5
            << "%, " << s.samples_per_second << " samples/s\n";
  ASSERT_EQ(s.eval.samples, 2000);
  EXPECT_GT(s.eval.top1, 0.25);
  EXPECT_LT(s.eval.loss, 2.1);
}

}  // namespace
}  // namespace baton
