// The graph machinery with the real layers: a ResNet basic block's gradients through the executor
// match finite differences; recomputation (with BatchNorm and Dropout) gives identical gradients;
// micro-batch accumulation equals the full batch for a network without BatchNorm; JSON round trip.
#include <gtest/gtest.h>

#include "layers/graph_builder.h"
#include "runtime/graph/executor.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

constexpr int64_t kBatch = 4;

// conv-bn-relu-conv-bn + identity, relu, global pool, linear, cross-entropy (a ResNet basic block).
Graph basic_block(DType dtype, bool dropout) {
  GraphBuilder g;
  const ValueId x = g.input("x", Shape{kBatch, 4, 6, 6}, dtype);
  const ValueId labels = g.input("labels", Shape{kBatch}, DType::i64);
  ValueId y = g.conv2d(x, {.out_channels = 4, .kernel = 3, .padding = 1, .bias = false}, "layer1.0.conv1");
  y = g.relu(g.batch_norm2d(y, {}, "layer1.0.bn1"), "layer1.0.relu1");
  y = g.conv2d(y, {.out_channels = 4, .kernel = 3, .padding = 1, .bias = false}, "layer1.0.conv2");
  y = g.batch_norm2d(y, {}, "layer1.0.bn2");
  y = g.relu(g.add({y, x}, "layer1.0.add"), "layer1.0.relu2");
  y = g.flatten(g.adaptive_avg_pool2d(y, "avgpool"), "flatten");
  if (dropout) y = g.dropout(y, 0.3, "dropout");
  g.output(g.softmax_cross_entropy(g.linear(y, 3, "fc"), labels, "loss"));
  return g.build();
}

// conv (bias) - relu - conv - flatten - linear - cross-entropy: no batch statistics.
Graph no_bn_net() {
  GraphBuilder g;
  const ValueId x = g.input("x", Shape{8, 2, 5, 5}, DType::f64);
  const ValueId labels = g.input("labels", Shape{8}, DType::i64);
  ValueId y = g.relu(g.conv2d(x, {.out_channels = 3, .kernel = 3, .padding = 1}, "conv1"), "relu");
  y = g.conv2d(y, {.out_channels = 2, .kernel = 3, .stride = 2}, "conv2");
  g.output(g.softmax_cross_entropy(g.linear(g.flatten(y, "flatten"), 4, "fc"), labels, "loss"));
  return g.build();
}

Tensor labels_for(int64_t n, const Stream& s) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7 + 1) % 3;
  return Tensor::from_vector(v, Shape{n}, s);
}

std::vector<Tensor> inputs_for(const Executor& ex, const Graph& g, const Tensor& x, const Tensor& labels) {
  std::vector<Tensor> in;
  for (ValueId v : ex.input_values()) in.push_back(g.value(v).name == "x" ? x : labels);
  return in;
}

double loss_of(Executor& ex, const Graph& g, Context& ctx, const std::vector<Tensor>& in) {
  Tape tape;
  // Train mode (batch statistics) without touching running statistics: a throwaway forward.
  const std::vector<Tensor> out = ex.forward(ctx, in, tape, Mode::train, 11);
  for (size_t o = 0; o < out.size(); ++o) {
    if (g.value(ex.output_values()[o]).name == "loss") return testing::to_doubles(out[o], ctx.stream())[0];
  }
  return 0;
}

TEST(GraphWithLayers, BasicBlockGradientsMatchFiniteDifferences) {
  Context ctx(Device::cpu());
  const Graph g = basic_block(DType::f64, false);
  ParamStore params(g, g.topological_order(), DType::f64, ctx);
  params.initialize(ctx, 3);
  Executor ex(g, g.topological_order(), params);
  const std::vector<Tensor> in =
      inputs_for(ex, g, testing::random_tensor(Shape{kBatch, 4, 6, 6}, DType::f64, ctx.stream(), 1),
                 labels_for(kBatch, ctx.stream()));
  params.zero_grads(ctx);
  Tape tape;
  ex.forward(ctx, in, tape, Mode::train, 11);
  ex.backward(ctx, tape, std::vector<Tensor>(ex.output_values().size()));
  const std::vector<double> analytic = testing::to_doubles(params.grads_flat(), ctx.stream());
  // Running statistics change with every forward; they do not affect train-mode outputs.
  double* p = params.params_flat().data<double>();
  double worst = 0;
  int checked = 0;
  for (const ParamEntry& e : params.params()) {
    const int64_t stride = std::max<int64_t>(1, e.shape.numel() / 12);
    for (int64_t i = 0; i < e.shape.numel(); i += stride) {
      const int64_t k = e.offset + i;
      const double saved = p[k], h = 1e-5;
      p[k] = saved + h;
      const double lp = loss_of(ex, g, ctx, in);
      p[k] = saved - h;
      const double lm = loss_of(ex, g, ctx, in);
      p[k] = saved;
      const double numeric = (lp - lm) / (2 * h), a = analytic[static_cast<size_t>(k)];
      const double err = std::abs(a - numeric) / std::max({std::abs(a), std::abs(numeric), 1.0});
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-6) << e.name << "[" << i << "] analytic " << a << " numeric " << numeric;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
  std::cout << checked << " parameter elements checked, worst relative error " << worst << "\n";
}

std::vector<double> block_gradients(bool recompute) {
  Context ctx(Device::cpu());
  const Graph g = basic_block(DType::f64, true);
  ParamStore params(g, g.topological_order(), DType::f64, ctx);
  params.initialize(ctx, 5);
  params.zero_grads(ctx);
  Executor ex(g, g.topological_order(), params, {.recompute = recompute});
  const std::vector<Tensor> in =
      inputs_for(ex, g, testing::random_tensor(Shape{kBatch, 4, 6, 6}, DType::f64, ctx.stream(), 2),
                 labels_for(kBatch, ctx.stream()));
  Tape tape;
  ex.forward(ctx, in, tape, Mode::train, 21);
  ex.backward(ctx, tape, std::vector<Tensor>(ex.output_values().size()));
  std::vector<double> out = testing::to_doubles(params.grads_flat(), ctx.stream());
  // Running statistics were updated exactly once (the recomputed forward leaves them alone).
  for (const BufferEntry& b : params.buffers()) {
    for (double v : testing::to_doubles(params.buffer(b.name), ctx.stream())) out.push_back(v);
  }
  return out;
}

TEST(GraphWithLayers, RecomputationGivesIdenticalGradientsAndStatistics) {
  EXPECT_EQ(block_gradients(true), block_gradients(false));
}

TEST(GraphWithLayers, MicroBatchAccumulationEqualsTheFullBatchWithoutBatchNorm) {
  Context ctx(Device::cpu());
  const Graph g = no_bn_net();
  const Tensor x = testing::random_tensor(Shape{8, 2, 5, 5}, DType::f64, ctx.stream(), 4);
  const Tensor labels = labels_for(8, ctx.stream());
  auto grads = [&](int64_t micro_batches) {
    ParamStore params(g, g.topological_order(), DType::f64, ctx);
    params.initialize(ctx, 8);
    params.zero_grads(ctx);
    Executor ex(g, g.topological_order(), params);
    const std::vector<Tensor> xs = x.split(micro_batches), ls = labels.split(micro_batches);
    for (int64_t m = 0; m < micro_batches; ++m) {
      Tape tape;
      ex.forward(ctx, inputs_for(ex, g, xs[static_cast<size_t>(m)], ls[static_cast<size_t>(m)]), tape, Mode::train);
      // Each micro-batch's mean loss weighs 1/M of the batch's mean loss.
      std::vector<Tensor> out_grads(ex.output_values().size());
      for (size_t o = 0; o < out_grads.size(); ++o) {
        if (g.value(ex.output_values()[o]).name != "loss") continue;
        out_grads[o] = Tensor::empty(Shape{}, DType::f64, ctx);
        out_grads[o].fill(1.0 / static_cast<double>(micro_batches), ctx.stream());
      }
      ex.backward(ctx, tape, out_grads, m == micro_batches - 1);
    }
    return testing::to_doubles(params.grads_flat(), ctx.stream());
  };
  EXPECT_TRUE(testing::all_close(grads(4), grads(1), 1e-12, 1e-14));
}

TEST(GraphWithLayers, JsonRoundTripRebuildsAnIdenticalGraph) {
  const Graph g = basic_block(DType::f32, true);
  const nlohmann::json j = g.to_json();
  const Graph back = Graph::from_json(j, builtin_layers(), "block.json");
  EXPECT_EQ(back.to_json(), j);
  for (ValueId v = 0; v < g.num_values(); ++v) {
    EXPECT_EQ(back.value(back.value_id(g.value(v).name)).shape, g.value(v).shape) << g.value(v).name;
  }
  Context ctx(Device::cpu());
  ParamStore a(g, g.topological_order(), DType::f32, ctx), b(back, back.topological_order(), DType::f32, ctx);
  ASSERT_EQ(a.params().size(), b.params().size());
  for (size_t i = 0; i < a.params().size(); ++i) {
    EXPECT_EQ(a.params()[i].name, b.params()[i].name);
    EXPECT_EQ(a.params()[i].shape, b.params()[i].shape);
  }
  EXPECT_EQ(a.params()[0].name, "layer1.0.conv1.weight");
  EXPECT_NO_THROW(b.buffer("layer1.0.bn1.running_mean"));
  EXPECT_NO_THROW(b.buffer("layer1.0.bn2.num_batches_tracked"));
}

TEST(GraphWithLayers, ShapeMistakesNameTheNode) {
  GraphBuilder g;
  const ValueId x = g.input("x", Shape{2, 3, 8, 8});
  const ValueId y = g.conv2d(x, {.out_channels = 5, .kernel = 3}, "conv1");
  try {
    g.add({x, y}, "bad_add");
    FAIL() << "adding [2,3,8,8] and [2,5,6,6] was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_add"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::layers
