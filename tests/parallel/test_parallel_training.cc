// Parallel training as a library: make_parallel_training plans a 2-stage pipeline on cpu:0, cpu:1
// as `baton train --stages 2` does and its engine trains with the single-device trainer's losses.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "layers/builtin_layers.h"
#include "layers/graph_builder.h"
#include "parallel/parallel_training.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/train/trainer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

// x [8, 3, 8, 8] -> flatten -> linear 12 -> tanh -> linear 12 -> relu -> linear 4 -> cross entropy.
Graph small_mlp() {
  layers::GraphBuilder g(layers::builtin_layers());
  const ValueId x = g.flatten(g.input("x", {8, 3, 8, 8}), "flatten");
  const ValueId labels = g.input("labels", {8}, DType::i64);
  const ValueId hidden = g.relu(g.linear(g.tanh(g.linear(x, 12, "fc1"), "tanh"), 12, "fc2"), "relu");
  const ValueId logits = g.linear(hidden, 4, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

TEST(ParallelTraining, APipelineOnTwoCpuDevicesTrainsAsTheSingleDeviceTrainer) {
  baton::testing::ScratchDir scratch("parallel_training");
  TrainConfig config;
  config.data = "synthetic:3x8x8:4:64";
  config.steps = 3;
  config.batch_size = 8;
  config.workers = 1;
  config.log_every = 1;
  const auto train = data::open_dataset(config.data, data::Split::train, 0);
  const auto test = data::open_dataset(config.data, data::Split::test, 0);
  const Graph graph = small_mlp();

  TrainConfig single = config;
  single.device = "cpu";
  single.metrics = (scratch.path() / "single.jsonl").string();
  const TrainSummary reference = Trainer(graph, single, *train, test.get(), Device::cpu()).run(nullptr);

  ParallelConfig parallel;
  parallel.stages = 2;
  parallel.devices = "cpu:0,cpu:1";
  parallel.trace = "unused.json";  // the timelines are recorded; the caller writes the file
  parallel.trace_steps = 1;
  std::string heard;
  TrainConfig piped = config;
  piped.metrics = (scratch.path() / "piped.jsonl").string();
  ParallelTraining t =
      make_parallel_training(graph, "small_mlp", piped, parallel, [&](const std::string& line) { heard += line; });
  // Each of the 2 stages computes with half of this thread's CPU threads, beside the other when the
  // cores hold both, and is profiled so.
  const int share = std::max(1, cpu_threads() / 2);
  const int at_once = std::min(2, std::max(1, cpu_cores_available() / share));
  EXPECT_EQ(heard, "profiling small_mlp on cpu:0 at micro-batch 1 with " + std::to_string(share) +
                       (share == 1 ? " thread" : " threads") + " per stage, " + std::to_string(at_once) +
                       " stage(s) computing at once (1 warm-up, 3 repeats)...");

  // What `baton train --stages 2 --devices cpu:0,cpu:1` prints: 8 micro-batches (4 x stages).
  EXPECT_EQ(t.setup.micro_batch, 1);
  EXPECT_EQ(t.setup.planned.label(), "block 1x2 1f1b M=8");
  EXPECT_EQ(t.setup.cluster.name(), "cpu-2");
  EXPECT_EQ(t.setup.profile.device, "cpu:0");
  EXPECT_EQ(t.setup.stage_devices, (std::vector<Device>{Device::cpu(0), Device::cpu(1)}));
  EXPECT_FALSE(t.setup.planned.predicted.events.empty());  // the predicted timeline

  const TrainSummary summary = Trainer(graph, piped, *train, test.get(), *t.engine).run(nullptr);
  const std::vector<double> expected = baton::testing::train_losses(single.metrics);
  const std::vector<double> losses = baton::testing::train_losses(piped.metrics);
  ASSERT_EQ(expected.size(), 3u);
  ASSERT_EQ(losses.size(), expected.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(losses[i], expected[i], 1e-5 * std::abs(expected[i])) << "step " << i + 1;
  }
  EXPECT_NEAR(summary.eval.loss, reference.eval.loss, 1e-5 * std::abs(reference.eval.loss));
  EXPECT_EQ(t.engine->step_ms().size(), 3u);
  EXPECT_FALSE(t.engine->executor().take_trace().empty());  // the first measured step
}

TEST(ParallelTraining, PipelineDevicesComeFromTheDeviceSetting) {
  ParallelConfig parallel;
  parallel.stages = 3;
  TrainConfig config;
  config.device = "cpu";
  EXPECT_EQ(pipeline_devices(parallel, config), (std::vector<Device>{Device::cpu(0), Device::cpu(1), Device::cpu(2)}));
  parallel.devices = "cpu:1,cpu:0";
  EXPECT_EQ(pipeline_devices(parallel, config), (std::vector<Device>{Device::cpu(1), Device::cpu(0)}));
}

TEST(ParallelTraining, TheProcessLinkFitStaysFiniteWhenTheTimesAreNoise) {
  // 10 us + bytes at 5 GB/s (5000 bytes a microsecond): the line through both sizes.
  const auto at_5_gbs = [](int64_t bytes) { return 10.0 + static_cast<double>(bytes) / 5000.0; };
  const Link fitted = fit_process_link(at_5_gbs(kLinkProbeBytes[0]), at_5_gbs(kLinkProbeBytes[1]));
  EXPECT_NEAR(fitted.bandwidth_gbs, 5.0, 1e-9);
  EXPECT_NEAR(fitted.latency_us, 10.0, 1e-9);
  // The large message no slower than the small one (a process descheduled during the small one): the
  // large one's whole time gives the bandwidth, not a slope over nothing.
  const Link noisy = fit_process_link(300.0, 290.0);
  EXPECT_NEAR(noisy.bandwidth_gbs, static_cast<double>(kLinkProbeBytes[1]) / 290.0 / 1e3, 1e-9);
  EXPECT_GE(noisy.latency_us, 0.0);
}

TEST(ParallelTraining, TheEnginesHonourTheConfiguredCommBackend) {
  const Graph graph = small_mlp();
  TrainConfig config;
  config.batch_size = 8;
  config.device = "cpu";
  ParallelConfig p;
  p.data_parallel = 2;
  p.comm_backend = comm::CommBackend::inproc;  // the table's own choice for CPU devices in one process
  EXPECT_EQ(make_data_parallel_engine(graph, config, p)->replicas(), 2);
  p.comm_backend = comm::CommBackend::nccl;
  EXPECT_ERROR_MENTIONS("comm_backend nccl cannot serve threads of one process on CPU devices (cpu:0)",
                        make_data_parallel_engine(graph, config, p));
  p.comm_backend = comm::CommBackend::mpi;
  EXPECT_ERROR_MENTIONS("use auto or inproc", make_data_parallel_engine(graph, config, p));

  // A pipeline of one group makes no communicator: the override is checked all the same.
  ParallelConfig pipeline;
  pipeline.stages = 2;
  pipeline.comm_backend = comm::CommBackend::mpi;
  PipelineSetup setup;
  setup.stage_devices = {Device::cpu(0), Device::cpu(1)};
  EXPECT_ERROR_MENTIONS("comm_backend mpi cannot serve threads of one process on CPU devices",
                        make_pipeline_engine(graph, "mlp", config, pipeline, setup));
}

}  // namespace
}  // namespace baton::parallel
