// Executor: gradients through a residual DAG match finite differences, recomputation and
// micro-batch accumulation give the same gradients, grad-ready hooks, activation freeing.
#include <gtest/gtest.h>

#include <map>

#include "runtime/core/memory_stats.h"
#include "runtime/graph/executor.h"
#include "tests/runtime/graph/host_layers.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

using testing::HostAdd;
using testing::HostAffine;
using testing::HostShift;
using testing::HostSquareSum;

std::vector<NodeId> all_nodes(const Graph& g) { return g.topological_order(); }

double run_loss(Executor& ex, Context& ctx, const Tensor& x) {
  Tape tape;
  return ex.forward(ctx, {x}, tape, Mode::eval)[0].data<double>()[0];
}

TEST(Executor, GradientsThroughAResidualDagMatchFiniteDifferences) {
  Context ctx(Device::cpu());
  const Graph g = testing::residual_host_graph(4);
  ParamStore params(g, all_nodes(g), DType::f64, ctx);
  params.initialize(ctx, 7);
  Executor ex(g, all_nodes(g), params);
  const Tensor x = testing::random_tensor(Shape{4, 3}, DType::f64, ctx.stream(), 1);
  params.zero_grads(ctx);
  Tape tape;
  ex.forward(ctx, {x}, tape, Mode::train);
  ex.backward(ctx, tape, {Tensor()});
  EXPECT_TRUE(tape.empty());
  const std::vector<double> analytic = testing::to_doubles(params.grads_flat(), ctx.stream());
  double* p = params.params_flat().data<double>();
  int checked = 0;
  for (const ParamEntry& e : params.params()) {
    for (int64_t i = 0; i < e.shape.numel(); ++i) {
      const int64_t k = e.offset + i;
      const double saved = p[k];
      const double h = 1e-6;
      p[k] = saved + h;
      const double lp = run_loss(ex, ctx, x);
      p[k] = saved - h;
      const double lm = run_loss(ex, ctx, x);
      p[k] = saved;
      const double numeric = (lp - lm) / (2 * h);
      const double a = analytic[static_cast<size_t>(k)];
      EXPECT_LE(std::abs(a - numeric) / std::max({std::abs(a), std::abs(numeric), 1.0}), 1e-7)
          << e.name << "[" << i << "]: analytic " << a << " numeric " << numeric;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18);
}

std::vector<double> gradients(const Graph& g, const Tensor& x, int micro_batches, bool recompute) {
  Context ctx(Device::cpu());
  ParamStore params(g, all_nodes(g), DType::f64, ctx);
  params.initialize(ctx, 3);
  params.zero_grads(ctx);
  Executor ex(g, all_nodes(g), params, {.recompute = recompute});
  const std::vector<Tensor> parts = x.split(micro_batches);
  for (int m = 0; m < micro_batches; ++m) {
    Tape tape;
    ex.forward(ctx, {parts[static_cast<size_t>(m)]}, tape, Mode::train, static_cast<uint64_t>(m));
    ex.backward(ctx, tape, {Tensor()}, m == micro_batches - 1);
  }
  return testing::to_doubles(params.grads_flat(), ctx.stream());
}

TEST(Executor, RecomputationGivesIdenticalGradients) {
  const Graph g = testing::residual_host_graph(8);
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{8, 3}, DType::f64, ctx.stream(), 2);
  EXPECT_EQ(gradients(g, x, 1, true), gradients(g, x, 1, false));
}

TEST(Executor, FourMicroBatchesAccumulateTheFullBatchGradient) {
  const Graph g = testing::residual_host_graph(8);
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{8, 3}, DType::f64, ctx.stream(), 4);
  EXPECT_TRUE(testing::all_close(gradients(g, x, 4, false), gradients(g, x, 1, false), 1e-12, 1e-12));
}

TEST(Executor, GradReadyHookFiresOnceWhenTheGradientIsFinal) {
  Context ctx(Device::cpu());
  const Graph g = testing::residual_host_graph(4);
  ParamStore params(g, all_nodes(g), DType::f64, ctx);
  params.initialize(ctx, 5);
  params.zero_grads(ctx);
  Executor ex(g, all_nodes(g), params);
  std::map<std::string, std::vector<double>> at_hook;
  std::vector<std::string> order;
  ex.set_grad_ready_hook([&](const ParamEntry& e, bool reached) {
    EXPECT_TRUE(reached) << e.name;
    order.push_back(e.name);
    at_hook[e.name] = testing::to_doubles(params.grad(e.name), ctx.stream());
  });
  const std::vector<Tensor> parts = testing::random_tensor(Shape{4, 3}, DType::f64, ctx.stream(), 6).split(2);
  for (int m = 0; m < 2; ++m) {
    Tape tape;
    ex.forward(ctx, {parts[static_cast<size_t>(m)]}, tape, Mode::train);
    ex.backward(ctx, tape, {Tensor()}, m == 1);
    if (m == 0) {
      EXPECT_TRUE(order.empty()) << "hook fired before the last micro-batch";
    }
  }
  // Reverse topological order: a3 first, a1 last; each parameter once, with its final value.
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(order.front(), "a3.weight");
  EXPECT_EQ(order.back(), "a1.bias");
  for (const auto& [name, values] : at_hook) EXPECT_EQ(values, testing::to_doubles(params.grad(name), ctx.stream()));
}

TEST(Executor, GradReadyHookTellsWhichParametersNoGradientReached) {
  Graph g;
  const ValueId x = g.add_input("x", Shape{2, 3}, DType::f64);
  const ValueId used = g.add_node("used", std::make_shared<HostAffine>(), {x})[0];
  g.mark_output(g.add_node("loss", std::make_shared<HostSquareSum>(), {used})[0]);
  g.mark_output(g.add_node("unused", std::make_shared<HostAffine>(), {x})[0]);  // not a scalar: no gradient seeded
  Context ctx(Device::cpu());
  ParamStore params(g, all_nodes(g), DType::f64, ctx);
  params.initialize(ctx, 5);
  params.zero_grads(ctx);
  Executor ex(g, all_nodes(g), params);
  std::map<std::string, bool> reached;
  ex.set_grad_ready_hook([&](const ParamEntry& e, bool r) { reached[e.name] = r; });
  Tape tape;
  ex.forward(ctx, {testing::random_tensor(Shape{2, 3}, DType::f64, ctx.stream(), 2)}, tape, Mode::train);
  ex.backward(ctx, tape, std::vector<Tensor>(2));
  const std::map<std::string, bool> expected{
      {"used.weight", true}, {"used.bias", true}, {"unused.weight", false}, {"unused.bias", false}};
  EXPECT_EQ(reached, expected);
}

TEST(Executor, ForwardFreesActivationsNoLaterNodeReads) {
  // A chain of 20 shifts (which save nothing): after forward only the input and output remain.
  const Device dev = Device::cpu(11);
  Context ctx(dev);
  Graph g;
  ValueId v = g.add_input("x", Shape{1024, 16}, DType::f64);
  for (int i = 0; i < 20; ++i)
    v = g.add_node(std::string("s").append(std::to_string(i)), std::make_shared<HostShift>(), {v})[0];
  const ValueId sq = g.add_node("loss", std::make_shared<HostSquareSum>(), {v})[0];
  g.mark_output(sq);
  ParamStore params(g, all_nodes(g), DType::f64, ctx);
  Executor ex(g, all_nodes(g), params);
  const Tensor x = testing::random_tensor(Shape{1024, 16}, DType::f64, ctx.stream(), 8);
  const size_t activation = 1024 * 16 * 8;
  reset_peak_memory_stats(dev);
  const size_t before = memory_stats(dev).current_bytes;
  Tape tape;
  ex.forward(ctx, {x}, tape, Mode::train);
  // Held: the loss's saved input (one activation) and the scalar loss.
  EXPECT_LE(memory_stats(dev).current_bytes - before, activation + 64);
  EXPECT_LE(memory_stats(dev).peak_bytes - before, 3 * activation);
  ex.backward(ctx, tape, {Tensor()});
  EXPECT_EQ(memory_stats(dev).current_bytes, before);
}

TEST(Executor, StageSplitPassesBoundaryGradients) {
  // Two executors over the two halves of the graph give the same gradients as one over the whole.
  Context ctx(Device::cpu());
  const Graph g = testing::residual_host_graph(4);
  const std::vector<NodeId> order = all_nodes(g);
  const std::vector<NodeId> first(order.begin(), order.begin() + 3), second(order.begin() + 3, order.end());
  ParamStore p1(g, first, DType::f64, ctx), p2(g, second, DType::f64, ctx), whole(g, order, DType::f64, ctx);
  whole.initialize(ctx, 9);
  for (ParamStore* p : {&p1, &p2}) {
    for (const ParamEntry& e : p->params()) p->param(e.name).copy_from(whole.param(e.name), ctx.stream());
    p->zero_grads(ctx);
  }
  whole.zero_grads(ctx);
  Executor e1(g, first, p1), e2(g, second, p2), ew(g, order, whole);
  // The cut carries two tensors: a1 (the residual branch) and a2.
  ASSERT_EQ(e1.output_values().size(), 2u);
  ASSERT_EQ(e2.input_values().size(), 2u);
  const Tensor x = testing::random_tensor(Shape{4, 3}, DType::f64, ctx.stream(), 10);
  Tape t1, t2, tw;
  const std::vector<Tensor> boundary = e1.forward(ctx, {x}, t1, Mode::train);
  std::vector<Tensor> stage2_inputs;
  for (ValueId v : e2.input_values()) {
    const auto it = std::find(e1.output_values().begin(), e1.output_values().end(), v);
    stage2_inputs.push_back(boundary[static_cast<size_t>(it - e1.output_values().begin())]);
  }
  e2.forward(ctx, stage2_inputs, t2, Mode::train);
  const std::vector<Tensor> boundary_grads = e2.backward(ctx, t2, {Tensor()});
  std::vector<Tensor> stage1_grads;
  for (ValueId v : e1.output_values()) {
    const auto it = std::find(e2.input_values().begin(), e2.input_values().end(), v);
    stage1_grads.push_back(boundary_grads[static_cast<size_t>(it - e2.input_values().begin())]);
  }
  const std::vector<Tensor> input_grads = e1.backward(ctx, t1, stage1_grads);
  EXPECT_FALSE(input_grads[0].defined());  // the graph input needs no gradient
  ew.forward(ctx, {x}, tw, Mode::train);
  ew.backward(ctx, tw, {Tensor()});
  for (ParamStore* p : {&p1, &p2}) {
    for (const ParamEntry& e : p->params()) {
      EXPECT_TRUE(testing::tensors_close(p->grad(e.name), whole.grad(e.name), ctx.stream(), 1e-12, 1e-12)) << e.name;
    }
  }
}

TEST(Executor, BackwardWithoutForwardIsAnError) {
  Context ctx(Device::cpu());
  const Graph g = testing::residual_host_graph(2);
  ParamStore params(g, all_nodes(g), DType::f64, ctx);
  Executor ex(g, all_nodes(g), params);
  Tape tape;
  EXPECT_THROW(ex.backward(ctx, tape, {Tensor()}), Error);
  ex.forward(ctx, {testing::random_tensor(Shape{2, 3}, DType::f64, ctx.stream(), 1)}, tape, Mode::eval);
  EXPECT_TRUE(tape.empty());  // eval mode records nothing
  EXPECT_THROW(ex.backward(ctx, tape, {Tensor()}), Error);
}

}  // namespace
}  // namespace baton
