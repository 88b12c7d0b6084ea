// Helpers for the pipeline executor tests: small models (an MLP, one with a skip connection, one
// with dropout, one with a layer that throws), plans splitting their nodes, the single-device
// reference step, and the comparison of a pipeline's stage stores with the reference by name.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/graph_builder.h"
#include "parallel/pipeline/pipeline_executor.h"
#include "parallel/plan/analytic_profile.h"
#include "runtime/graph/executor.h"
#include "runtime/train/optimizer.h"
#include "tests/support/test_support.h"

namespace baton::parallel::testing {

inline constexpr int64_t kBatch = 16;
inline constexpr int64_t kFeatures = 6;
inline constexpr int64_t kClasses = 4;

// Identity that throws in forward: an injected failure.
class ThrowingLayer final : public Layer {
 public:
  std::string_view type() const override { return "Throwing"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override { return {inputs[0]}; }
  ForwardResult forward(const ForwardArgs&) const override { BATON_FAIL("injected failure in a test layer"); }
  std::vector<Tensor> backward(const BackwardArgs& args) const override { return {args.output_grads[0]}; }
};

inline const LayerRegistry& test_layers() {
  static const LayerRegistry registry = [] {
    LayerRegistry r = layers::builtin_layers();
    r.add("Throwing", [](const nlohmann::json&) { return std::make_unique<ThrowingLayer>(); });
    return r;
  }();
  return registry;
}

// x [16, 6] -> 4 x (linear 8, relu | tanh) -> linear 4 -> cross entropy: 10 nodes. `dropout` adds a
// Dropout(0.3) after the second activation; `throwing_after` (a node count) inserts a Throwing node.
inline Graph mlp(DType dtype, bool dropout = false, int throwing_after = -1) {
  layers::GraphBuilder g(test_layers());
  ValueId x = g.input("x", {kBatch, kFeatures}, dtype);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  int count = 0;
  auto maybe_throw = [&] {
    if (++count == throwing_after) x = g.layer("Throwing", nlohmann::json::object(), {x}, "boom")[0];
  };
  for (int i = 1; i <= 4; ++i) {
    const std::string n = std::to_string(i);
    x = g.linear(x, 8, "fc" + n);
    maybe_throw();
    x = i == 4 ? g.tanh(x, "act" + n) : g.relu(x, "act" + n);
    maybe_throw();
    if (dropout && i == 2) x = g.dropout(x, 0.3, "drop");
  }
  x = g.linear(x, kClasses, "head");
  g.output(g.softmax_cross_entropy(x, labels, "loss"));
  return g.build();
}

// a = fc1(x) is read by fc2 (right after it) and by the final add, so cutting the 9 nodes
// fc1 fc2 act2 fc3 act3 fc4 add head loss carries `a` across one or several stages.
inline Graph skip_model(DType dtype) {
  layers::GraphBuilder g(test_layers());
  const ValueId x = g.input("x", {kBatch, kFeatures}, dtype);
  const ValueId labels = g.input("labels", {kBatch}, DType::i64);
  const ValueId a = g.linear(x, 8, "fc1");
  ValueId y = g.relu(g.linear(a, 8, "fc2"), "act2");
  y = g.relu(g.linear(y, 8, "fc3"), "act3");
  y = g.linear(y, 8, "fc4");
  y = g.add({a, y}, "add");
  g.output(g.softmax_cross_entropy(g.linear(y, kClasses, "head"), labels, "loss"));
  return g.build();
}

// Stages from explicit node index lists (indices into graph.topological_order()).
inline Plan plan_from(const std::vector<std::vector<int>>& stages, int micro_batches, int chunks = 1) {
  Plan plan;
  plan.model = "test";
  plan.partitioner = "uniform";
  plan.batch = static_cast<int>(kBatch);
  plan.micro_batches = micro_batches;
  plan.chunks_per_device = chunks;
  const int positions = static_cast<int>(stages.size()) / chunks;
  for (size_t s = 0; s < stages.size(); ++s) {
    Stage st;
    st.nodes = stages[s];
    st.devices = {static_cast<int>(s) % positions};
    plan.stages.push_back(st);
  }
  return plan;
}

// `nodes` split into `stages` contiguous ranges as even as possible.
inline Plan even_plan(const Graph& graph, int stages, int micro_batches, int chunks = 1) {
  const int n = graph.num_nodes();
  std::vector<std::vector<int>> parts(static_cast<size_t>(stages));
  for (int i = 0; i < n; ++i) parts[static_cast<size_t>(i * stages / n)].push_back(i);
  return plan_from(parts, micro_batches, chunks);
}

inline std::vector<std::vector<int>> consumers_of(const Graph& graph, const Plan& plan) {
  return stage_consumers(plan, profile_structure(graph, "test"));
}

// Stage s runs on `kind`:N with N its pipeline position (CPU virtual devices), or all on cuda:0.
inline std::vector<Device> stage_devices(const Schedule& schedule, bool cuda) {
  std::vector<Device> devices;
  for (int s = 0; s < schedule.stages; ++s)
    devices.push_back(cuda ? Device::cuda(0) : Device::cpu(schedule.position_of(s)));
  return devices;
}

// Float64 options, with `recompute` for every stage of a `stages`-stage pipeline when set.
inline PipelineOptions f64_options(int stages = 0, bool recompute = false) {
  PipelineOptions options;
  options.dtype = DType::f64;
  if (recompute) options.recompute.assign(static_cast<size_t>(stages), true);
  return options;
}

// `plan` run under a `kind` schedule (plan.chunks_per_device stages per position) on CPU virtual
// devices (cuda: streams of cuda:0), initialised with `init_seed`.
inline std::unique_ptr<PipelineExecutor> make_pipeline(const Graph& graph, const Plan& plan, ScheduleKind kind,
                                                       const PipelineOptions& options, uint64_t init_seed,
                                                       bool cuda = false) {
  const int chunks = plan.chunks_per_device;
  const Schedule schedule =
      make_schedule(kind, plan.num_stages() / chunks, chunks, plan.micro_batches, consumers_of(graph, plan));
  auto pipe = std::make_unique<PipelineExecutor>(graph, plan, schedule, stage_devices(schedule, cuda), options);
  pipe->initialize(init_seed);
  return pipe;
}

inline std::vector<Tensor> batch(DType dtype, const Stream& stream, uint64_t seed) {
  std::vector<int64_t> labels(static_cast<size_t>(kBatch));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 7 + seed) % kClasses);
  return {baton::testing::random_tensor(Shape{kBatch, kFeatures}, dtype, stream, seed),
          Tensor::from_vector<int64_t>(labels, Shape{kBatch}, stream)};
}

// The single-device step: the whole graph in one Executor, the batch in `micro_batches` pieces
// with micro_batch_seed seeds and loss gradients n_m / N (1 piece: the plain whole-batch step);
// `defer_buffer_updates`: BatchNorm statistics gathered over the pieces and committed once.
struct Reference {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<ParamStore> params;
  double loss = 0;
};

inline Reference reference_step(const Graph& graph, Device device, DType dtype, const std::vector<Tensor>& inputs,
                                uint64_t init_seed, uint64_t step_seed, int micro_batches = 1,
                                const nlohmann::json& optimizer = nullptr, double lr = 0,
                                bool defer_buffer_updates = false) {
  Reference r;
  r.ctx = std::make_unique<Context>(device);
  Context& ctx = *r.ctx;
  const std::vector<NodeId> nodes = graph.topological_order();
  r.params = std::make_unique<ParamStore>(graph, nodes, dtype, ctx);
  {
    Context host(Device::cpu());
    ParamStore init(graph, nodes, dtype, host);
    init.initialize(host, init_seed);
    for (const ParamEntry& e : init.params()) r.params->param(e.name).copy_from(init.param(e.name), ctx.stream());
    for (const BufferEntry& b : init.buffers()) r.params->buffer(b.name).copy_from(init.buffer(b.name), ctx.stream());
    ctx.synchronize();
  }
  r.params->zero_grads(ctx);
  Executor ex(graph, nodes, *r.params, {.defer_buffer_updates = defer_buffer_updates});
  std::vector<std::vector<Tensor>> parts;
  for (const Tensor& t : inputs) parts.push_back(t.split(micro_batches));
  for (int m = 0; m < micro_batches; ++m) {
    std::vector<Tensor> in;
    for (ValueId v : ex.input_values()) {
      const auto& gi = graph.inputs();
      in.push_back(parts[static_cast<size_t>(std::find(gi.begin(), gi.end(), v) - gi.begin())][static_cast<size_t>(m)]);
    }
    Tape tape;
    std::vector<Tensor> out = ex.forward(ctx, in, tape, Mode::train, micro_batch_seed(step_seed, m));
    const double scale = static_cast<double>(in[0].size(0)) / static_cast<double>(inputs[0].size(0));
    std::vector<Tensor> grads(out.size());
    grads[0] = Tensor::empty(out[0].shape(), out[0].dtype(), ctx);
    grads[0].fill(scale, ctx.stream());
    r.loss += scale * baton::testing::to_doubles(out[0], ctx.stream())[0];
    ex.backward(ctx, tape, grads, m == micro_batches - 1);
  }
  ex.commit_deferred_updates(ctx);  // defer_buffer_updates: the whole batch's BatchNorm statistics
  if (!optimizer.is_null()) make_optimizer(optimizer, *r.params, ctx, "reference")->step(ctx, lr);
  ctx.synchronize();
  return r;
}

// Every stage parameter's gradient (and value) equals the reference's of the same name; every
// reference parameter appears in exactly one stage.
inline ::testing::AssertionResult matches_reference(PipelineExecutor& pipe, const Reference& ref, double rtol,
                                                    double atol) {
  size_t seen = 0;
  for (int s = 0; s < pipe.num_stages(); ++s) {
    ParamStore& store = pipe.stage_params(s);
    const Stream& stream = pipe.stage(s).context().stream();
    for (const ParamEntry& e : store.params()) {
      ++seen;
      const auto grad = baton::testing::all_close(
          baton::testing::to_doubles(store.grad(e.name), stream),
          baton::testing::to_doubles(ref.params->grad(e.name), ref.ctx->stream()), rtol, atol);
      if (!grad)
        return ::testing::AssertionFailure() << "gradient of " << e.name << " (stage " << s << "): " << grad.message();
      const auto value = baton::testing::all_close(
          baton::testing::to_doubles(store.param(e.name), stream),
          baton::testing::to_doubles(ref.params->param(e.name), ref.ctx->stream()), rtol, atol);
      if (!value)
        return ::testing::AssertionFailure() << "value of " << e.name << " (stage " << s << "): " << value.message();
    }
  }
  if (seen != ref.params->params().size()) {
    return ::testing::AssertionFailure() << seen << " parameters in the stages, " << ref.params->params().size()
                                         << " in the reference";
  }
  return ::testing::AssertionSuccess();
}

// Each graph output of the whole model's eval-mode forward over the whole batch, as doubles, with
// the pipeline's trained parameters and buffers, on `device` in `dtype`.
inline std::vector<std::vector<double>> whole_model_eval(const Graph& graph, PipelineExecutor& pipe,
                                                         const std::vector<Tensor>& inputs, Device device,
                                                         DType dtype) {
  Context host(device);
  const std::vector<NodeId> order = graph.topological_order();
  ParamStore whole(graph, order, dtype, host);
  pipe.store_parameters(whole, host);
  Executor ex(graph, order, whole);
  std::vector<Tensor> in;
  for (ValueId v : ex.input_values()) {
    const auto& gi = graph.inputs();
    in.push_back(
        inputs[static_cast<size_t>(std::find(gi.begin(), gi.end(), v) - gi.begin())].to(device, host.stream()));
  }
  Tape tape;
  const std::vector<Tensor> out = ex.forward(host, in, tape, Mode::eval);
  std::vector<std::vector<double>> result;
  for (ValueId v : graph.outputs()) {
    const auto at = std::find(ex.output_values().begin(), ex.output_values().end(), v) - ex.output_values().begin();
    result.push_back(baton::testing::to_doubles(out[static_cast<size_t>(at)], host.stream()));
  }
  return result;
}

// The pipeline's outputs brought to the whole batch: the loss as the size-weighted mean of the
// micro-batch losses, every other output's micro-batches one after the other.
inline std::vector<std::vector<double>> gathered(const PipelineOutputs& r) {
  // evaluate() returns with every stage finished: a fresh stream of the tensor's device reads it.
  const auto doubles = [](const Tensor& t) { return baton::testing::to_doubles(t, Stream::create(t.device())); };
  int64_t n = 0;
  for (int64_t size : r.micro_batch_sizes) n += size;
  std::vector<std::vector<double>> out(r.outputs.size());
  out[0] = {0.0};
  for (size_t m = 0; m < r.micro_batch_sizes.size(); ++m) {
    out[0][0] += doubles(r.outputs[0][m])[0] * static_cast<double>(r.micro_batch_sizes[m]) / static_cast<double>(n);
    for (size_t o = 1; o < r.outputs.size(); ++o) {
      const std::vector<double> part = doubles(r.outputs[o][m]);
      out[o].insert(out[o].end(), part.begin(), part.end());
    }
  }
  return out;
}

}  // namespace baton::parallel::testing
