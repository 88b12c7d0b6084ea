// Deferred batch-norm statistics in the pipeline executor, on CPU virtual devices in float64: a
// small CNN with two BatchNorm layers pipelined with deferred BN equals the single-device step over
// the same micro-batches with one whole-batch statistics commit (loss, gradients, updated weights,
// running statistics), and its running statistics equal those computed here directly from the BN
// inputs of the whole batch; one micro-batch equals the plain step exactly; without the option the
// statistics follow each micro-batch instead.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/parallel/pipeline_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::to_doubles;

constexpr double kBatchNormTol = 1e-12;
constexpr int64_t kChannels = 3;
constexpr double kMomentum1 = 0.1, kMomentum2 = 0.3;  // bn1, bn2

// x [16, 2, 4, 4] -> conv 3 -> bn1 -> relu -> conv 3 -> bn2 -> relu -> avg pool -> flatten ->
// linear 4 -> cross entropy: 10 nodes.
Graph cnn() {
  layers::GraphBuilder g(test_layers());
  ValueId x = g.input("x", {kBatch, 2, 4, 4}, DType::f64);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  x = g.conv2d(x, {.out_channels = kChannels, .kernel = 3, .padding = 1, .bias = false}, "conv1");
  x = g.relu(g.batch_norm2d(x, {.momentum = kMomentum1}, "bn1"), "relu1");
  x = g.conv2d(x, {.out_channels = kChannels, .kernel = 3, .padding = 1}, "conv2");
  x = g.relu(g.batch_norm2d(x, {.momentum = kMomentum2}, "bn2"), "relu2");
  x = g.flatten(g.adaptive_avg_pool2d(x, "pool"), "flatten");
  g.output(g.softmax_cross_entropy(g.linear(x, kClasses, "head"), labels, "loss"));
  return g.build();
}

std::vector<Tensor> bn_images(int64_t n, const Stream& stream) {
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 5 + 1) % kClasses);
  return {baton::testing::random_tensor(Shape{n, 2, 4, 4}, DType::f64, stream, 7, -1.0, 2.0),
          Tensor::from_vector<int64_t>(labels, Shape{n}, stream)};
}

const nlohmann::json kBatchNormSgd = {{"type", "sgd"}, {"momentum", 0.9}};
constexpr uint64_t kInit = 5, kStepSeed = 42;
constexpr double kBatchNormLr = 0.1;

// The running statistics one BatchNorm forward over the whole batch gives, from the BN layers'
// inputs: those are gathered by running the nodes before each BN (initial parameters) on the same
// micro-batches, then mean and variance are taken directly over all of them.
std::map<std::string, std::vector<double>> expected_running_stats(const Graph& graph, const std::vector<Tensor>& inputs,
                                                                  int micro_batches) {
  Context host(Device::cpu());
  const std::vector<NodeId> order = graph.topological_order();
  ParamStore whole(graph, order, DType::f64, host);
  whole.initialize(host, kInit);
  std::map<std::string, std::vector<double>> expected;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& node = graph.node(order[i]);
    if (node.layer->type() != "BatchNorm2d") continue;
    const std::vector<NodeId> prefix(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(i));
    ParamStore store(graph, prefix, DType::f64, host);
    for (const ParamEntry& e : store.params()) store.param(e.name).copy_from(whole.param(e.name), host.stream());
    for (const BufferEntry& b : store.buffers()) store.buffer(b.name).copy_from(whole.buffer(b.name), host.stream());
    Executor ex(graph, prefix, store);
    const std::vector<ValueId>& outs = ex.output_values();
    const size_t at = static_cast<size_t>(std::find(outs.begin(), outs.end(), node.inputs[0]) - outs.begin());
    EXPECT_LT(at, outs.size());
    std::vector<double> sum(kChannels, 0.0), squares(kChannels, 0.0);
    std::vector<std::vector<double>> values(kChannels);
    for (const Tensor& part : inputs[0].split(micro_batches)) {
      Tape tape;
      const Tensor y = ex.forward(host, {part}, tape, Mode::train)[at];
      const std::vector<double> v = to_doubles(y, host.stream());
      const int64_t hw = y.size(2) * y.size(3);
      for (size_t k = 0; k < v.size(); ++k)
        values[static_cast<size_t>((static_cast<int64_t>(k) / hw) % kChannels)].push_back(v[k]);
    }
    const double momentum = node.layer->config().at("momentum").get<double>();
    std::vector<double> mean(kChannels), var(kChannels);
    for (size_t c = 0; c < kChannels; ++c) {
      const auto n = static_cast<double>(values[c].size());
      double s = 0;
      for (double v : values[c]) s += v;
      const double mu = s / n;
      double ss = 0;
      for (double v : values[c]) ss += (v - mu) * (v - mu);
      mean[c] = (1 - momentum) * 0.0 + momentum * mu;             // running_mean starts at 0
      var[c] = (1 - momentum) * 1.0 + momentum * ss / (n - 1.0);  // running_var at 1; unbiased
    }
    expected[node.name + ".running_mean"] = mean;
    expected[node.name + ".running_var"] = var;
  }
  return expected;
}

// Every stage buffer equals `expected` by name (floating buffers within rtol; num_batches_tracked
// equal to `batches`); every expected buffer is found.
::testing::AssertionResult buffers_match(PipelineExecutor& pipe,
                                         const std::map<std::string, std::vector<double>>& expected, int64_t batches,
                                         double rtol) {
  size_t seen = 0;
  for (int s = 0; s < pipe.num_stages(); ++s) {
    const Stream& stream = pipe.stage(s).context().stream();
    for (const BufferEntry& b : pipe.stage_params(s).buffers()) {
      const Tensor& t = pipe.stage_params(s).buffer(b.name);
      if (t.dtype() == DType::i64) {
        const int64_t count = t.to_vector<int64_t>(stream)[0];
        if (count != batches)
          return ::testing::AssertionFailure() << b.name << " is " << count << ", expected " << batches;
        continue;
      }
      const auto it = expected.find(b.name);
      if (it == expected.end()) return ::testing::AssertionFailure() << "unexpected buffer " << b.name;
      ++seen;
      const auto close = baton::testing::all_close(to_doubles(t, stream), it->second, rtol, rtol);
      if (!close) return ::testing::AssertionFailure() << b.name << " (stage " << s << "): " << close.message();
    }
  }
  if (seen != expected.size())
    return ::testing::AssertionFailure() << seen << " of " << expected.size() << " buffers found";
  return ::testing::AssertionSuccess();
}

// A reference store's floating buffers by name.
std::map<std::string, std::vector<double>> reference_buffers(const Reference& ref) {
  std::map<std::string, std::vector<double>> out;
  for (const BufferEntry& b : ref.params->buffers()) {
    const Tensor& t = ref.params->buffer(b.name);
    if (t.dtype() != DType::i64) out[b.name] = to_doubles(t, ref.ctx->stream());
  }
  return out;
}

struct PipelineRun {
  double loss = 0;
  std::unique_ptr<PipelineExecutor> pipe;
};

PipelineRun run_pipeline(const Graph& graph, int stages, int micro_batches, ScheduleKind kind, bool recompute,
                         bool deferred, const std::vector<Tensor>& inputs, int steps = 1) {
  const int chunks = kind == ScheduleKind::interleaved ? 2 : 1;  // two stages per device
  PipelineOptions options = f64_options(stages, recompute);
  options.deferred_batch_norm = deferred;
  options.optimizer = kBatchNormSgd;
  PipelineRun run;
  run.pipe = make_pipeline(graph, even_plan(graph, stages, micro_batches, chunks), kind, options, kInit);
  for (int i = 0; i < steps; ++i) run.loss = run.pipe->step(inputs, {.seed = kStepSeed, .lr = kBatchNormLr});
  return run;
}

TEST(PipelineBatchNorm, DeferredStatisticsEqualTheWholeBatchForEveryScheduleStageAndMicroBatchCount) {
  const Graph graph = cnn();
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = bn_images(kBatch, host.stream());
  int runs = 0;
  for (int micro_batches : {1, 2, 4, 8}) {
    const Reference ref = reference_step(graph, Device::cpu(), DType::f64, inputs, kInit, kStepSeed, micro_batches,
                                         kBatchNormSgd, kBatchNormLr, /*defer_buffer_updates=*/true);
    const auto whole_batch = expected_running_stats(graph, inputs, micro_batches);
    for (int stages : {2, 3, 4}) {
      for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
        if (kind == ScheduleKind::interleaved && stages % 2 != 0) continue;
        for (bool recompute : {false, true}) {
          SCOPED_TRACE(std::string(schedule_kind_name(kind)) + " S=" + std::to_string(stages) +
                       " M=" + std::to_string(micro_batches) + (recompute ? " recompute" : ""));
          const PipelineRun run = run_pipeline(graph, stages, micro_batches, kind, recompute, true, inputs);
          EXPECT_NEAR(run.loss, ref.loss, kBatchNormTol * std::max(1.0, std::abs(ref.loss)));
          EXPECT_TRUE(matches_reference(*run.pipe, ref, kBatchNormTol, kBatchNormTol));
          EXPECT_TRUE(buffers_match(*run.pipe, reference_buffers(ref), 1, kBatchNormTol));
          // Recomputation replays forwards without gathering: still one update of the whole batch.
          EXPECT_TRUE(buffers_match(*run.pipe, whole_batch, 1, kBatchNormTol));
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 64);
}

TEST(PipelineBatchNorm, UnevenMicroBatchesAreWeightedByTheirSize) {
  const Graph graph = cnn();
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = bn_images(14, host.stream());  // micro-batches of 4, 4, 3, 3
  const PipelineRun run = run_pipeline(graph, 3, 4, ScheduleKind::one_f_one_b, false, true, inputs);
  EXPECT_TRUE(buffers_match(*run.pipe, expected_running_stats(graph, inputs, 4), 1, kBatchNormTol));
}

TEST(PipelineBatchNorm, OneMicroBatchEqualsThePlainSingleDeviceStepExactly) {
  const Graph graph = cnn();
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = bn_images(kBatch, host.stream());
  const Reference plain =
      reference_step(graph, Device::cpu(), DType::f64, inputs, kInit, kStepSeed, 1, kBatchNormSgd, kBatchNormLr);
  for (int stages : {2, 4}) {
    for (bool recompute : {false, true}) {
      SCOPED_TRACE("S=" + std::to_string(stages) + (recompute ? " recompute" : ""));
      const PipelineRun run = run_pipeline(graph, stages, 1, ScheduleKind::gpipe, recompute, true, inputs);
      EXPECT_EQ(run.loss, plain.loss);
      EXPECT_TRUE(matches_reference(*run.pipe, plain, 0, 0));
      EXPECT_TRUE(buffers_match(*run.pipe, reference_buffers(plain), 1, 0));
    }
  }
}

TEST(PipelineBatchNorm, WithoutDeferringTheStatisticsFollowEachMicroBatch) {
  const Graph graph = cnn();
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = bn_images(kBatch, host.stream());
  const int m = 4;
  for (bool recompute : {false, true}) {
    SCOPED_TRACE(recompute ? "recompute" : "no recompute");
    const PipelineRun run = run_pipeline(graph, 3, m, ScheduleKind::one_f_one_b, recompute, false, inputs);
    // As the single-device run over the same micro-batches: one update per micro-batch.
    const Reference per_micro_batch =
        reference_step(graph, Device::cpu(), DType::f64, inputs, kInit, kStepSeed, m, kBatchNormSgd, kBatchNormLr);
    EXPECT_TRUE(matches_reference(*run.pipe, per_micro_batch, kBatchNormTol, kBatchNormTol));
    EXPECT_TRUE(buffers_match(*run.pipe, reference_buffers(per_micro_batch), m, kBatchNormTol));
    // ... which is not the whole batch's statistics: the option matters.
    EXPECT_FALSE(buffers_match(*run.pipe, expected_running_stats(graph, inputs, m), m, 1e-6));
  }
}

TEST(PipelineBatchNorm, EachStepCommitsOnce) {
  const Graph graph = cnn();
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = bn_images(kBatch, host.stream());
  const PipelineRun run = run_pipeline(graph, 2, 4, ScheduleKind::gpipe, true, true, inputs, /*steps=*/3);
  int64_t tracked = 0;
  for (int s = 0; s < run.pipe->num_stages(); ++s) {
    for (const BufferEntry& b : run.pipe->stage_params(s).buffers()) {
      const Tensor& t = run.pipe->stage_params(s).buffer(b.name);
      if (t.dtype() != DType::i64) continue;
      EXPECT_EQ(t.to_vector<int64_t>(run.pipe->stage(s).context().stream())[0], 3) << b.name;
      ++tracked;
    }
  }
  EXPECT_EQ(tracked, 2);
}

}  // namespace
}  // namespace baton::parallel
