// The hybrid's traced step on CPU virtual devices (2 groups x 3 stages, 1F1B): the partition
// strategy issues exactly one all-reduce per stage and step, and the later stages' start while
// stage 0 still runs its last backward; the bucket strategy issues one per bucket.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "tests/parallel/hybrid_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT

// Identity whose backward sleeps 30 ms: makes stage 0's last backward outlast the other stages'
// all-reduces on any machine, so that their overlap shows in the trace.
class SlowBackwardLayer final : public Layer {
 public:
  std::string_view type() const override { return "SlowBackward"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override { return {inputs[0]}; }
  ForwardResult forward(const ForwardArgs& args) const override { return {{args.inputs[0]}, {}}; }
  std::vector<Tensor> backward(const BackwardArgs& args) const override {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return {args.output_grads[0]};
  }
};

// mlp() with a SlowBackward node after fc1 (in stage 0 of any even split into at most 3 stages).
Graph slow_first_stage_mlp() {
  static const LayerRegistry registry = [] {
    LayerRegistry r = layers::builtin_layers();
    r.add("SlowBackward", [](const nlohmann::json&) { return std::make_unique<SlowBackwardLayer>(); });
    return r;
  }();
  layers::GraphBuilder g(registry);
  ValueId x = g.input("x", {kBatch, kFeatures}, DType::f64);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  x = g.layer("SlowBackward", nlohmann::json::object(), {g.linear(x, 8, "fc1")}, "slow")[0];
  for (int i = 2; i <= 4; ++i) x = g.relu(g.linear(x, 8, "fc" + std::to_string(i)), "act" + std::to_string(i));
  g.output(g.softmax_cross_entropy(g.linear(x, kClasses, "head"), labels, "loss"));
  return g.build();
}

// The all-reduce events of one traced step of group 0, by stage; and the end of stage 0's last backward.
struct TracedStep {
  std::map<int, std::vector<TraceEvent>> all_reduces;
  double last_backward_end_us = 0;
};

TracedStep traced_step(GradSyncStrategy strategy, BucketOptions buckets) {
  const Graph graph = slow_first_stage_mlp();
  const Plan plan = hybrid_plan(graph, {2, 3}, 2, 1);
  HybridOptions options = f64_hybrid_options(strategy);
  options.buckets = buckets;
  const std::unique_ptr<HybridExecutor> owned = one_f_one_b_hybrid(graph, plan, options, 3);
  HybridExecutor& hybrid = *owned;
  Context host(Device::cpu());
  hybrid.step(batch(DType::f64, host.stream(), 1), {.seed = 1, .lr = kLr, .record_trace = true});
  TracedStep out;
  for (const TraceEvent& e : hybrid.group(0).take_trace()) {
    if (e.category == "allreduce") out.all_reduces[e.args.at("stage").get<int>()].push_back(e);
    if (e.category == "backward" && e.args.at("stage") == 0) {
      out.last_backward_end_us = std::max(out.last_backward_end_us, e.start_us + e.duration_us);
    }
  }
  return out;
}

TEST(HybridExecutor, PartitionIssuesOneAllReducePerStageOverlappingTheEarlierStagesBackward) {
  const TracedStep step = traced_step(GradSyncStrategy::partition, {});
  ASSERT_EQ(step.all_reduces.size(), 3u);
  for (const auto& [stage, events] : step.all_reduces) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].args.at("strategy"), "partition");
    // Stages 1 and 2 finish their backward while stage 0 still runs its last one (30 ms).
    if (stage > 0) {
      EXPECT_LT(events[0].start_us, step.last_backward_end_us);
    }
  }
}

TEST(HybridExecutor, BucketIssuesOneAllReducePerBucket) {
  const TracedStep step = traced_step(GradSyncStrategy::bucket, {.first_bucket_bytes = 64, .bucket_bytes = 64});
  ASSERT_EQ(step.all_reduces.size(), 3u);
  // Stage 0 holds fc1 (weight and bias, each over 64 bytes padded): two buckets at least.
  EXPECT_GE(step.all_reduces.at(0).size(), 2u);
  for (const auto& [stage, events] : step.all_reduces) {
    for (const TraceEvent& e : events) EXPECT_EQ(e.args.at("strategy"), "bucket");
  }
}

}  // namespace
}  // namespace baton::parallel
