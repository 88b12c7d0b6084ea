// Forward-only evaluation through the pipeline (PipelineExecutor::evaluate), on CPU virtual devices
// in float64: the loss and logits of every micro-batch equal the whole model's eval-mode forward
// over the whole batch (running statistics, no dropout) for every schedule, stage count, micro-batch
// count and batch size (smaller than M included), with and without recomputation; gradients,
// running statistics and optimiser state are left alone; skip tensors arrive; a failing layer
// surfaces naming its stage and micro-batch.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/parallel/pipeline_test_util.h"

namespace baton::parallel {
namespace {

using namespace baton::parallel::testing;  // NOLINT
using baton::testing::error_message;
using baton::testing::to_doubles;

constexpr double kEvaluateTol = 1e-12;
const nlohmann::json kEvaluateSgd = {{"type", "sgd"}, {"momentum", 0.9}};

// x [16, 2, 4, 4] -> conv 3 -> bn -> relu -> conv 3 -> bn -> relu -> avg pool -> flatten -> linear 4
// -> cross entropy; outputs: the loss, then the logits.
Graph evaluate_bn_cnn() {
  layers::GraphBuilder g(test_layers());
  ValueId x = g.input("x", {kBatch, 2, 4, 4}, DType::f64);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  for (int i = 1; i <= 2; ++i) {
    const std::string n = std::to_string(i);
    x = g.conv2d(x, {.out_channels = 3, .kernel = 3, .padding = 1, .bias = i == 2}, "conv" + n);
    x = g.relu(g.batch_norm2d(x, {}, "bn" + n), "relu" + n);
  }
  const ValueId logits = g.linear(g.flatten(g.adaptive_avg_pool2d(x, "pool"), "flatten"), kClasses, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

std::vector<Tensor> evaluate_images(int64_t n, const Stream& stream, uint64_t seed) {
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 5 + seed) % kClasses);
  return {baton::testing::random_tensor(Shape{n, 2, 4, 4}, DType::f64, stream, seed, -1.0, 2.0),
          Tensor::from_vector<int64_t>(labels, Shape{n}, stream)};
}

std::unique_ptr<PipelineExecutor> trained_pipeline(const Graph& graph, int stages, int micro_batches, ScheduleKind kind,
                                                   bool recompute, const std::vector<Tensor>& train_batch) {
  PipelineOptions options = f64_options(stages, recompute);
  options.deferred_batch_norm = true;
  options.optimizer = kEvaluateSgd;
  const int chunks = kind == ScheduleKind::interleaved ? 2 : 1;
  auto pipe = make_pipeline(graph, even_plan(graph, stages, micro_batches, chunks), kind, options, 3);
  pipe->step(train_batch, {.seed = 7, .lr = 0.1});  // running statistics and weights moved
  return pipe;
}

// Every gradient, buffer and optimiser state value of every stage, by name.
std::map<std::string, std::vector<double>> training_state(PipelineExecutor& pipe) {
  std::map<std::string, std::vector<double>> out;
  for (int s = 0; s < pipe.num_stages(); ++s) {
    ParamStore& store = pipe.stage_params(s);
    const Stream& stream = pipe.stage(s).context().stream();
    for (const ParamEntry& e : store.params()) out["grad " + e.name] = to_doubles(store.grad(e.name), stream);
    for (const BufferEntry& b : store.buffers()) out["buffer " + b.name] = to_doubles(store.buffer(b.name), stream);
    for (const auto& [name, t] : pipe.stage_optimizer(s)->state()) {
      out["stage " + std::to_string(s) + " " + name] = to_doubles(t, stream);
    }
  }
  return out;
}

::testing::AssertionResult all_outputs_close(const std::vector<std::vector<double>>& a,
                                             const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " outputs vs " << b.size();
  for (size_t o = 0; o < a.size(); ++o) {
    const auto close = baton::testing::all_close(a[o], b[o], kEvaluateTol, kEvaluateTol);
    if (!close) return ::testing::AssertionFailure() << "output " << o << ": " << close.message();
  }
  return ::testing::AssertionSuccess();
}

TEST(PipelineEvaluate, EqualsTheWholeModelInEvalModeForEveryScheduleAndSplit) {
  const Graph graph = evaluate_bn_cnn();
  Context host(Device::cpu());
  const std::vector<Tensor> train_batch = evaluate_images(kBatch, host.stream(), 1);
  int runs = 0;
  for (int stages : {2, 3, 4}) {
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
      if (kind == ScheduleKind::interleaved && stages % 2 != 0) continue;
      for (int micro_batches : {1, 4}) {
        for (bool recompute : {false, true}) {
          for (int64_t n : {kBatch, int64_t{3}}) {
            SCOPED_TRACE(std::string(schedule_kind_name(kind)) + " S=" + std::to_string(stages) + " M=" +
                         std::to_string(micro_batches) + (recompute ? " recompute" : "") + " n=" + std::to_string(n));
            const auto pipe = trained_pipeline(graph, stages, micro_batches, kind, recompute, train_batch);
            const auto before = training_state(*pipe);
            const std::vector<Tensor> test_batch = evaluate_images(n, host.stream(), 2);
            const PipelineOutputs r = pipe->evaluate(test_batch);
            ASSERT_EQ(r.micro_batch_sizes.size(), static_cast<size_t>(std::min<int64_t>(micro_batches, n)));
            EXPECT_TRUE(
                all_outputs_close(gathered(r), whole_model_eval(graph, *pipe, test_batch, Device::cpu(), DType::f64)));
            EXPECT_EQ(training_state(*pipe), before);  // bitwise
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 64);
}

TEST(PipelineEvaluate, SkipTensorsArriveAndDropoutIsOff) {
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 5);
  // The skip value `a` crosses one boundary, then a whole stage; dropout (p = 0.3) must be identity.
  const std::vector<std::pair<Graph, Plan>> cases = {
      {skip_model(DType::f64), plan_from({{0, 1}, {2, 3, 4, 5}, {6, 7, 8}}, 4)},
      {skip_model(DType::f64), plan_from({{0}, {1, 2}, {3, 4}, {5, 6, 7, 8}}, 4)},
      {mlp(DType::f64, /*dropout=*/true), even_plan(mlp(DType::f64, true), 3, 4)},
  };
  for (const auto& [graph, plan] : cases) {
    SCOPED_TRACE(std::to_string(plan.num_stages()) + " stages, " + std::to_string(graph.num_nodes()) + " nodes");
    const auto pipe = make_pipeline(graph, plan, ScheduleKind::one_f_one_b, f64_options(), 11);
    const PipelineOutputs r = pipe->evaluate(inputs);
    EXPECT_EQ(r.output_stage, std::vector<int>{plan.num_stages() - 1});
    EXPECT_TRUE(all_outputs_close(gathered(r), whole_model_eval(graph, *pipe, inputs, Device::cpu(), DType::f64)));
  }
}

TEST(PipelineEvaluate, AFailingLayerSurfacesNamingStageAndMicroBatch) {
  const Graph graph = mlp(DType::f64, false, 6);  // the throwing node opens stage 2 of 4
  const auto pipe = make_pipeline(graph, even_plan(graph, 4, 4), ScheduleKind::gpipe, f64_options(), 1);
  Context host(Device::cpu());
  const std::vector<Tensor> inputs = batch(DType::f64, host.stream(), 2);
  for (int attempt = 0; attempt < 2; ++attempt) {  // usable again after a failure
    const auto start = std::chrono::steady_clock::now();
    const std::string message = error_message([&] { pipe->evaluate(inputs); });
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
    EXPECT_NE(message.find("injected failure"), std::string::npos) << message;
    EXPECT_NE(message.find("pipeline stage 2, micro-batch 0"), std::string::npos) << message;
  }
  EXPECT_ERROR_MENTIONS("cannot be split", pipe->evaluate({Tensor::empty_host(Shape{0, kFeatures}, DType::f64),
                                                           Tensor::empty_host(Shape{0}, DType::i64)}));
}

}  // namespace
}  // namespace baton::parallel
