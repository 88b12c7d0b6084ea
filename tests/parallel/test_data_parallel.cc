// DataParallelEngine in one process: N replicas on virtual CPU devices equal the single-device run
// over the same global batches split into N micro-batches (float64 to rounding, float32 within
// 1e-5), keep bitwise-identical parameters, overlap the all-reduce with backward in bucket order, and
// refuse unused parameters and uneven batches.
#include <gtest/gtest.h>

#include <algorithm>

#include "parallel/comm/inproc_communicator.h"
#include "parallel/dp/data_parallel_engine.h"
#include "tests/parallel/data_parallel_test_util.h"
#include "tests/parallel/overlap_probe.h"
#include "tests/support/scratch_dir.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::to_doubles;
using testing::dp_batch;
using testing::dp_conv_bn;
using testing::dp_mlp;
using testing::dp_optimizer;
using testing::dp_reference;

constexpr double kDataParallelLr = 0.05;
constexpr int kSteps = 3;

TrainConfig dp_config() {
  TrainConfig config;
  config.optimizer = dp_optimizer();
  return config;
}

DataParallelOptions on_cpus(int n, BucketOptions buckets = {}) {
  DataParallelOptions options;
  for (int r = 0; r < n; ++r) options.devices.push_back(Device::cpu(r));
  options.buckets = buckets;
  return options;
}

// Trains `steps` steps of dp_batch(seed = step) and returns the losses.
std::vector<double> train(DataParallelEngine& engine, const Graph& graph, int steps) {
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    const data::Batch batch = dp_batch(graph, engine.input_context().stream(), static_cast<uint64_t>(step));
    losses.push_back(engine.step(batch, static_cast<uint64_t>(step), kDataParallelLr).value());
  }
  return losses;
}

void expect_dp_equivalent(const Graph& graph, int replicas, double rtol, double atol) {
  const testing::DpReference ref = dp_reference(graph, replicas, kSteps, 11, kDataParallelLr);
  // Small buckets: several all-reduces per step.
  DataParallelEngine engine(graph, dp_config(), on_cpus(replicas, {256, 512}));
  engine.initialize(11);
  const std::vector<double> losses = train(engine, graph, kSteps);
  EXPECT_TRUE(all_close(losses, ref.losses, rtol, atol)) << replicas << " replicas, losses";
  for (int r = 0; r < replicas; ++r) {
    const ParamStore& store = engine.params(r);
    const Stream stream = Stream::create(store.device());
    for (const ParamEntry& e : store.params()) {
      EXPECT_TRUE(
          all_close(to_doubles(store.param(e.name), stream), to_doubles(ref.params->param(e.name), stream), rtol, atol))
          << "replica " << r << ", " << e.name;
      EXPECT_TRUE(
          all_close(to_doubles(store.grad(e.name), stream), to_doubles(ref.params->grad(e.name), stream), rtol, atol))
          << "replica " << r << ", gradient of " << e.name;
    }
    // Every replica holds bitwise what replica 0 holds.
    EXPECT_EQ(to_doubles(store.params_flat(), stream), to_doubles(engine.params(0).params_flat(), stream));
  }
}

TEST(DataParallel, Float64EqualsTheSingleDeviceRunOverMicroBatches) {
  for (int replicas : {1, 2, 4}) expect_dp_equivalent(dp_mlp(DType::f64, 8), replicas, 1e-12, 1e-13);
}

TEST(DataParallel, Float64WithBatchNormEqualsPerMicroBatchStatistics) {
  for (int replicas : {2, 4}) expect_dp_equivalent(dp_conv_bn(DType::f64, 8), replicas, 1e-11, 1e-12);
}

TEST(DataParallel, Float32WithinTolerance) { expect_dp_equivalent(dp_conv_bn(DType::f32, 8), 2, 1e-5, 1e-6); }

TEST(DataParallel, BucketsAreReducedInOrderWhileBackwardRuns) {
  // The model's first layer (whose backward runs last) waits for the first bucket's all-reduce:
  // the step completes only if that all-reduce ran while backward was still running.
  auto issued = std::make_shared<testing::IssuedAllReduces>();
  LayerRegistry registry = layers::builtin_layers();
  registry.add("AwaitFirstAllReduce",
               [issued](const nlohmann::json&) { return std::make_unique<testing::AwaitFirstAllReduce>(issued); });
  layers::GraphBuilder g(registry);
  const ValueId x = g.input("x", {8, 2, 5, 5}, DType::f64);
  const ValueId labels = g.input("labels", {8}, DType::i64);
  ValueId y = g.layer("AwaitFirstAllReduce", nlohmann::json::object(), {x}, "await")[0];
  y = g.relu(g.batch_norm2d(g.conv2d(y, {.out_channels = 4, .padding = 1}, "conv1"), {}, "bn1"), "relu1");
  y = g.flatten(g.adaptive_avg_pool2d(y, "pool"), "flat");
  const ValueId logits = g.linear(g.relu(g.linear(y, 8, "fc"), "relu2"), testing::kDpClasses, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  const Graph graph = g.build();

  DataParallelOptions options = on_cpus(2, {64, 64});  // one node per bucket
  for (auto& c : comm::make_inproc_communicators(2)) {
    options.communicators.push_back(std::make_unique<testing::RecordingCommunicator>(std::move(c), issued));
  }
  DataParallelEngine engine(graph, dp_config(), std::move(options));
  ASSERT_GE(engine.bucket_plan().buckets.size(), 4u);
  engine.initialize(3);
  train(engine, graph, 1);
  for (int r = 0; r < 2; ++r) {
    const ReplicaStepRecord& step = engine.last_step(r);
    // Gradients became final in the planned order, bucket by bucket.
    std::vector<std::string> planned;
    for (const auto& bucket : engine.bucket_plan().buckets) planned.insert(planned.end(), bucket.begin(), bucket.end());
    EXPECT_EQ(step.ready_order, planned) << "replica " << r;
    const std::vector<BucketTiming>& t = step.buckets;
    ASSERT_EQ(t.size(), engine.bucket_plan().buckets.size());
    for (size_t b = 0; b < t.size(); ++b) {
      ASSERT_TRUE(t[b].ran.started && t[b].ran.finished) << "bucket " << b;
      if (b > 0) {
        EXPECT_LE(t[b - 1].issued, t[b].issued) << "bucket " << b;
        EXPECT_LE(*t[b - 1].ran.started, *t[b].ran.started) << "bucket " << b;
      }
    }
    // The first bucket was issued during backward and completed before backward ended.
    EXPECT_GT(t.front().issued, step.backward);
    EXPECT_LT(*t.front().ran.finished, step.backward_end) << "replica " << r;
    const double hidden = hidden_communication_fraction(step);
    EXPECT_GT(hidden, 0.0);
    EXPECT_LE(hidden, 1.0);
  }
}

TEST(DataParallel, TraceHasAComputeAndACommunicationLanePerReplica) {
  const Graph graph = dp_conv_bn(DType::f64, 8);
  DataParallelEngine engine(graph, dp_config(), on_cpus(2, {64, 64}));
  engine.initialize(3);
  engine.set_trace_steps(1);
  train(engine, graph, 2);  // only the first is recorded
  const std::vector<TraceEvent> events = engine.take_trace();
  const size_t buckets = engine.bucket_plan().buckets.size();
  ASSERT_EQ(events.size(), 2 * (3 + buckets));
  for (const TraceEvent& e : events) {
    EXPECT_EQ(e.thread % 2 == 1, e.category == "allreduce") << e.name;
    if (e.category == "allreduce") {
      EXPECT_GT(e.args.value("bytes", 0), 0) << e.name;
    }
  }
  EXPECT_EQ(engine.trace_lanes().size(), 4u);
  EXPECT_TRUE(engine.take_trace().empty());
}

TEST(DataParallel, UnusedParameterIsAnErrorNamingItUnlessAllowed) {
  const Graph graph = dp_mlp(DType::f64, 8, /*unused=*/true);
  DataParallelEngine strict(graph, dp_config(), on_cpus(2));
  strict.initialize(1);
  try {
    train(strict, graph, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'side."), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("received no gradient"), std::string::npos) << e.what();
  }
  DataParallelOptions lenient = on_cpus(2);
  lenient.sync.unused_parameters_ready = true;
  DataParallelEngine engine(graph, dp_config(), std::move(lenient));
  engine.initialize(1);
  EXPECT_NO_THROW(train(engine, graph, 2));
}

TEST(DataParallel, UnevenGlobalBatchIsRefused) {
  const Graph graph = dp_mlp(DType::f64, 6);
  DataParallelEngine engine(graph, dp_config(), on_cpus(4));
  engine.initialize(1);
  try {
    train(engine, graph, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not split evenly over 4 replicas"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::parallel
