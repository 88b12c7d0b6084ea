// A hybrid group that fails mid-step (a layer throwing on one device only: group 1's stage 0) stops
// the other group at once — the stages' in-process communicators are aborted instead of the other
// group waiting out its all-reduce timeout — and the step's error is the failing group's.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/parallel/hybrid_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;

// Identity that throws in forward on one device ({"device": "cpu:2"}).
class ThrowsOnDeviceLayer final : public Layer {
 public:
  explicit ThrowsOnDeviceLayer(std::string device) : device_(std::move(device)) {}
  std::string_view type() const override { return "ThrowsOnDevice"; }
  nlohmann::json config() const override { return {{"device", device_}}; }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override { return {inputs[0]}; }
  ForwardResult forward(const ForwardArgs& args) const override {
    BATON_CHECK(args.ctx.device().str() != device_, "injected failure on ", device_);
    return {{args.inputs[0]}, {}};
  }
  std::vector<Tensor> backward(const BackwardArgs& args) const override { return {args.output_grads[0]}; }

 private:
  std::string device_;
};

// mlp() with a ThrowsOnDevice node after fc1 (stage 0 of an even 2-stage split).
Graph throws_on_device_mlp(const std::string& device) {
  static const LayerRegistry registry = [] {
    LayerRegistry r = layers::builtin_layers();
    r.add("ThrowsOnDevice", [](const nlohmann::json& j) {
      return std::make_unique<ThrowsOnDeviceLayer>(j.at("device").get<std::string>());
    });
    return r;
  }();
  layers::GraphBuilder g(registry);
  ValueId x = g.input("x", {kBatch, kFeatures}, DType::f64);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  x = g.layer("ThrowsOnDevice", {{"device", device}}, {g.linear(x, 8, "fc1")}, "throws")[0];
  for (int i = 2; i <= 4; ++i) x = g.relu(g.linear(x, 8, "fc" + std::to_string(i)), "act" + std::to_string(i));
  g.output(g.softmax_cross_entropy(g.linear(x, kClasses, "head"), labels, "loss"));
  return g.build();
}

TEST(HybridFaults, AFailingGroupStopsTheOtherAtOnceAndItsErrorIsReported) {
  const Graph graph = throws_on_device_mlp("cpu:2");
  const Plan plan = hybrid_plan(graph, {2, 2}, 2, 1);  // group 1's stage 0 runs on cpu:2
  ASSERT_EQ(plan.stages[0].devices, (std::vector<int>{0, 2}));
  for (GradSyncStrategy strategy : {GradSyncStrategy::bucket, GradSyncStrategy::partition}) {
    SCOPED_TRACE(grad_sync_name(strategy));
    HybridOptions options = f64_hybrid_options(strategy);
    const std::unique_ptr<HybridExecutor> owned = one_f_one_b_hybrid(graph, plan, options, 1);
    HybridExecutor& hybrid = *owned;
    Context host(Device::cpu());
    const auto start = std::chrono::steady_clock::now();
    const std::string message = error_message([&] { hybrid.step(batch(DType::f64, host.stream(), 1)); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(message.find("injected failure on cpu:2"), std::string::npos) << message;
    EXPECT_NE(message.find("in hybrid group 1"), std::string::npos) << message;
    // Group 0 reached its all-reduces; without the abort it would wait for the timeout (60 s).
    EXPECT_LT(seconds, 30) << "group 0 waited for its communicator's timeout";
  }
}

}  // namespace
}  // namespace baton::parallel
