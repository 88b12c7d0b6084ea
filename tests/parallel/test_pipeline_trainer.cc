// The pipelined trainer (PipelineTrainEngine through Trainer) on CPU virtual devices: its losses
// over three steps equal the single-device trainer's for a model without BatchNorm, evaluation
// runs through the stages, steps are timed and traced, checkpoints (in the single-device
// format) resume bit for bit and move between splits, and weights files load into the stages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "parallel/pipeline/pipeline_trainer.h"
#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/planner.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/trainer.h"
#include "tests/parallel/image_mlp.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"
#include "tests/support/train_metrics.h"

namespace baton::parallel {
namespace {

using baton::parallel::testing::image_mlp;

namespace fs = std::filesystem;

constexpr int64_t kBatch = 8;

// x [8, 3, 8, 8] -> 2 x (conv 4, batch norm, relu) -> flatten -> linear 4 -> cross entropy.
Graph pipeline_bn_cnn() {
  layers::GraphBuilder g(layers::builtin_layers());
  ValueId x = g.input("x", {kBatch, 3, 8, 8});
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  for (int i = 1; i <= 2; ++i) {
    const std::string n = std::to_string(i);
    x = g.conv2d(x, {.out_channels = 4, .kernel = 3, .padding = 1, .bias = false}, "conv" + n);
    x = g.relu(g.batch_norm2d(x, {}, "bn" + n), "relu" + n);
  }
  const ValueId logits = g.linear(g.flatten(x, "flatten"), 4, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

// The names and shapes of a safetensors file's tensors.
std::map<std::string, std::string> tensor_layout(const fs::path& file) {
  const SafetensorsFile f(file.string());
  std::map<std::string, std::string> out;
  for (const std::string& name : f.names()) out[name] = f.info(name).shape.str();
  return out;
}

using baton::testing::train_losses;

class PipelineTrainer : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.data = "synthetic:3x8x8:4:64";
    config_.steps = 3;
    config_.batch_size = kBatch;
    config_.device = "cpu";
    config_.workers = 1;
    config_.eval_every = 1;  // the final evaluation
    config_.log_every = 1;
    train_ = data::open_dataset(config_.data, data::Split::train, 0);
    test_ = data::open_dataset(config_.data, data::Split::test, 0);
  }

  // A run of `graph` through a fresh pipeline of `stages` CPU virtual devices (0: on one device)
  // with config `c`, stopped after `stop_after` steps when > 0.
  TrainSummary train(const Graph& graph, const TrainConfig& c, int stages, int stop_after = 0,
                     ScheduleKind kind = ScheduleKind::one_f_one_b, bool deferred_bn = false) {
    int calls = 0;
    const auto stop = [&] { return stop_after > 0 && ++calls == stop_after; };
    if (stages == 0) return Trainer(graph, c, *train_, test_.get(), Device::cpu()).run(stop);
    const EvaluatedPlan e = plan(graph, kind, stages, 4);
    std::vector<Device> devices;
    for (int s = 0; s < stages; ++s) devices.push_back(Device::cpu(s));
    PipelineTrainEngine engine(graph, c, e.plan, e.schedule, {.devices = devices, .deferred_batch_norm = deferred_bn});
    return Trainer(graph, c, *train_, test_.get(), engine).run(stop);
  }

  EvaluatedPlan plan(const Graph& graph, ScheduleKind kind, int stages, int micro_batches) {
    profile_ = analytic_profile(graph, "image_mlp", device_spec_by_name("cpu"), {.batch_sizes = {1, 2, 4, 8}});
    PlanChoice c;
    c.stages = stages;
    c.micro_batches = micro_batches;
    c.schedule = kind;
    PlanSettings s;
    s.batch = static_cast<int>(kBatch);
    return evaluate_plan(c, profile_, cluster_by_name("cpu-" + std::to_string(stages)), s);
  }

  baton::testing::ScratchDir scratch_{"pipeline_trainer"};
  const fs::path dir_ = scratch_.path();
  TrainConfig config_;
  std::unique_ptr<data::Dataset> train_, test_;
  Profile profile_;
};

TEST_F(PipelineTrainer, LossesEqualTheSingleDeviceTrainers) {
  const Graph graph = image_mlp(kBatch, 8, 3, true);
  TrainConfig single = config_;
  single.metrics = (dir_ / "single.jsonl").string();
  const TrainSummary reference = Trainer(graph, single, *train_, test_.get(), Device::cpu()).run(nullptr);
  const std::vector<double> expected = train_losses(single.metrics);
  ASSERT_EQ(expected.size(), 3u);

  for (const ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b}) {
    SCOPED_TRACE(schedule_kind_name(kind));
    TrainConfig piped = config_;
    piped.metrics = (dir_ / ("pipe-" + std::string(schedule_kind_name(kind)) + ".jsonl")).string();
    const EvaluatedPlan e = plan(graph, kind, 2, 4);
    PipelineTrainEngine engine(graph, piped, e.plan, e.schedule,
                               {.devices = {Device::cpu(0), Device::cpu(1)}, .trace_steps = 1});
    const TrainSummary summary = Trainer(graph, piped, *train_, test_.get(), engine).run(nullptr);
    const std::vector<double> losses = train_losses(piped.metrics);
    ASSERT_EQ(losses.size(), expected.size());
    for (size_t i = 0; i < losses.size(); ++i) {
      EXPECT_NEAR(losses[i], expected[i], 1e-5 * std::abs(expected[i])) << "step " << i + 1;
    }
    // The final evaluation runs through the pipeline too (forward only).
    ASSERT_EQ(summary.eval.samples, reference.eval.samples);
    EXPECT_NEAR(summary.eval.loss, reference.eval.loss, 1e-5 * std::abs(reference.eval.loss));
    EXPECT_DOUBLE_EQ(summary.eval.top1, reference.eval.top1);

    ASSERT_EQ(engine.step_ms().size(), 3u);
    EXPECT_GT(engine.measured_step_ms(), 0.0);
    // Only the first step was traced: 4 forwards and 4 backwards per stage, transfers both ways.
    const std::vector<TraceEvent> events = engine.executor().take_trace();
    int forwards = 0, backwards = 0, transfers = 0, optimizers = 0;
    for (const TraceEvent& ev : events) {
      EXPECT_EQ(ev.process, kMeasuredProcess);
      EXPECT_GE(ev.duration_us, 0.0);
      forwards += ev.category == "forward";
      backwards += ev.category == "backward";
      transfers += ev.category == "transfer";
      optimizers += ev.category == "optimizer";
    }
    EXPECT_EQ(forwards, 8);
    EXPECT_EQ(backwards, 8);
    EXPECT_EQ(transfers, 8);
    EXPECT_EQ(optimizers, 2);
    EXPECT_EQ(engine.executor().trace_lanes().size(), 4u);  // 2 compute lanes, 2 links
    EXPECT_TRUE(engine.executor().take_trace().empty());    // taken
  }
}

TEST_F(PipelineTrainer, ResumedRunEqualsTheUninterruptedOneBitForBit) {
  // BatchNorm with deferred statistics (buffers and their pending updates) and SGD momentum
  // (optimiser state in every stage): a run stopped after 3 of 6 steps and resumed from its
  // checkpoint logs the very same losses as the run never stopped, and evaluates (with the running
  // statistics) to the very same test loss.
  const Graph graph = pipeline_bn_cnn();
  config_.steps = 6;
  TrainConfig whole = config_;
  whole.metrics = (dir_ / "whole.jsonl").string();
  const TrainSummary uninterrupted = train(graph, whole, 2, 0, ScheduleKind::one_f_one_b, /*deferred_bn=*/true);

  TrainConfig first = config_;
  first.metrics = (dir_ / "resumed.jsonl").string();
  first.checkpoint_dir = (dir_ / "ckpt").string();
  const TrainSummary stopped = train(graph, first, 2, 3, ScheduleKind::one_f_one_b, true);
  EXPECT_TRUE(stopped.interrupted);
  ASSERT_EQ(stopped.steps, 3);
  ASSERT_FALSE(stopped.checkpoint.empty());
  TrainConfig second = first;
  second.resume = true;
  const TrainSummary resumed_run = train(graph, second, 2, 0, ScheduleKind::one_f_one_b, true);
  EXPECT_EQ(resumed_run.steps, 6);
  ASSERT_GT(uninterrupted.eval.samples, 0);
  EXPECT_EQ(resumed_run.eval.loss, uninterrupted.eval.loss);

  const std::vector<double> expected = train_losses(whole.metrics), resumed = train_losses(first.metrics);
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(resumed, expected);  // bitwise
}

TEST_F(PipelineTrainer, CheckpointsAreTheSingleDeviceFormatAndMoveBetweenSplits) {
  const Graph graph = image_mlp(kBatch, 8, 3, true);
  config_.steps = 6;
  config_.eval_every = 0;
  TrainConfig reference = config_;
  reference.metrics = (dir_ / "reference.jsonl").string();
  train(graph, reference, 0);
  const std::vector<double> expected = train_losses(reference.metrics);
  ASSERT_EQ(expected.size(), 6u);

  // Stopped after 3 steps on one device and as a 2-stage pipeline: the same files, tensor for tensor.
  TrainConfig single = config_, piped = config_;
  single.checkpoint_dir = (dir_ / "single").string();
  piped.checkpoint_dir = (dir_ / "piped").string();
  const fs::path single_dir = train(graph, single, 0, 3).checkpoint, piped_dir = train(graph, piped, 2, 3).checkpoint;
  ASSERT_FALSE(single_dir.empty());
  ASSERT_FALSE(piped_dir.empty());
  for (const char* file : {"model.safetensors", "optimizer.safetensors"}) {
    const auto a = tensor_layout(single_dir / file), b = tensor_layout(piped_dir / file);
    EXPECT_EQ(a, b) << file;
    EXPECT_FALSE(a.empty()) << file;
  }

  // The pipelined checkpoint resumes on one device, the single-device one as a 3-stage GPipe
  // pipeline: both continue as the uninterrupted single-device run (float32, 1e-5).
  const auto check_continuation = [&](TrainConfig c, int stages, ScheduleKind kind, const std::string& name) {
    SCOPED_TRACE(name);
    c.resume = true;
    c.metrics = (dir_ / (name + ".jsonl")).string();
    EXPECT_EQ(train(graph, c, stages, 0, kind).steps, 6);
    const std::vector<double> losses = train_losses(c.metrics);
    ASSERT_EQ(losses.size(), 3u);
    for (size_t i = 0; i < losses.size(); ++i) {
      EXPECT_NEAR(losses[i], expected[3 + i], 1e-5 * std::abs(expected[3 + i])) << "step " << 4 + i;
    }
  };
  check_continuation(piped, 0, ScheduleKind::one_f_one_b, "pipeline-to-single");
  check_continuation(single, 3, ScheduleKind::gpipe, "single-to-pipeline");
}

TEST_F(PipelineTrainer, ACheckpointOfAnotherModelIsRefusedNamingTheTensors) {
  TrainConfig c = config_;
  c.steps = 1;
  c.eval_every = 0;
  c.checkpoint_dir = (dir_ / "ckpt").string();
  train(image_mlp(kBatch, 8, 3, true), c, 0);
  c.resume = true;
  const std::string message = baton::testing::error_message([&] { train(pipeline_bn_cnn(), c, 2); });
  EXPECT_NE(message.find("model.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("conv1.weight"), std::string::npos) << message;
}

TEST_F(PipelineTrainer, WeightsLoadIntoEveryStage) {
  const Graph graph = image_mlp(kBatch, 8, 3, true);
  Context ctx(Device::cpu());
  ParamStore source(graph, graph.topological_order(), DType::f32, ctx);
  source.initialize(ctx, 11);  // the run's own initialisation uses seed 0
  const std::string weights = (dir_ / "weights.safetensors").string();
  save_weights(weights, source, ctx);
  TrainConfig c = config_;
  c.steps = 1;
  c.eval_every = 0;
  c.lr_schedule = {{"type", "constant"}, {"base_lr", 0.0}};  // the step leaves the parameters as they start
  c.weights = weights;
  c.checkpoint_dir = (dir_ / "ckpt").string();
  const TrainSummary s = train(graph, c, 2);
  ASSERT_EQ(s.steps, 1);
  ParamStore after(graph, graph.topological_order(), DType::f32, ctx);
  load_weights(s.checkpoint + "/model.safetensors", after, ctx);
  EXPECT_EQ(baton::testing::bytes_of(after.params_flat(), ctx.stream()),
            baton::testing::bytes_of(source.params_flat(), ctx.stream()));

  c.weights = (dir_ / "other.safetensors").string();  // a file of another model: nothing is loaded
  c.checkpoint_dir = (dir_ / "ckpt-other").string();  // a fresh run: a directory of its own
  const Graph other = pipeline_bn_cnn();
  ParamStore other_params(other, other.topological_order(), DType::f32, ctx);
  other_params.initialize(ctx, 1);
  save_weights(c.weights, other_params, ctx);
  const std::string message = baton::testing::error_message([&] { train(graph, c, 2); });
  EXPECT_NE(message.find(c.weights), std::string::npos) << message;
  EXPECT_NE(message.find("fc1.weight"), std::string::npos) << message;
}

TEST(StageDevices, StageIGoesToDeviceIModuloTheDevices) {
  Schedule s;
  s.devices = 2;
  const std::vector<Device> one = stage_devices(s, 4, {Device::cuda(0)});
  for (const Device& d : one) EXPECT_EQ(d, Device::cuda(0));
  const std::vector<Device> two = stage_devices(s, 4, {Device::cpu(0), Device::cpu(1), Device::cpu(2)});
  EXPECT_EQ(two, (std::vector<Device>{Device::cpu(0), Device::cpu(1), Device::cpu(0), Device::cpu(1)}));
}

}  // namespace
}  // namespace baton::parallel
