// Pooling layers: float64 gradient checks over several geometries, output shapes, what forward
// saves, skipped input gradients, cost, JSON round trips and bad configs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/pooling.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/layer_check.h"
#include "tests/support/layer_expectations.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

MaxPool2dOptions max_options(std::array<int64_t, 2> k, std::optional<std::array<int64_t, 2>> s,
                             std::array<int64_t, 2> p, std::array<int64_t, 2> d, bool ceil_mode) {
  return {.kernel_size = k, .stride = s, .padding = p, .dilation = d, .ceil_mode = ceil_mode};
}

AvgPool2dOptions avg_options(std::array<int64_t, 2> k, std::optional<std::array<int64_t, 2>> s,
                             std::array<int64_t, 2> p, bool ceil_mode, bool count_include_pad) {
  return {.kernel_size = k, .stride = s, .padding = p, .ceil_mode = ceil_mode, .count_include_pad = count_include_pad};
}

// Runs forward on the CPU.
ForwardResult run(const Layer& layer, Context& ctx, const Tensor& x, Mode mode = Mode::train) {
  const std::vector<Tensor> inputs{x};
  return layer.forward(ForwardArgs{.ctx = ctx, .mode = mode, .inputs = inputs, .params = {}, .buffers = {}});
}

TEST(MaxPool2d, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  const MaxPool2dOptions variants[] = {
      max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, false), max_options({3, 3}, {{2, 2}}, {1, 1}, {1, 1}, false),
      max_options({3, 3}, {{2, 2}}, {1, 1}, {1, 1}, true),      max_options({3, 2}, {{1, 2}}, {1, 1}, {2, 1}, true),
      max_options({2, 3}, {{2, 1}}, {0, 1}, {1, 2}, false),
  };
  for (const MaxPool2dOptions& o : variants) {
    const MaxPool2d layer(o);
    for (const Shape& shape : {Shape{2, 3, 6, 7}, Shape{1, 2, 5, 5}}) {
      for (Mode mode : {Mode::train, Mode::eval}) {
        SCOPED_TRACE(layer.config().dump() + " " + shape.str());
        // Random values: ties (kinks of max) have probability zero; the checker skips near-ties.
        const Tensor x = testing::random_tensor(shape, DType::f64, s, 21);
        EXPECT_TRUE(testing::check_gradients(layer, {x}, {.mode = mode}));
      }
    }
  }
}

TEST(AvgPool2d, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  for (bool count_include_pad : {true, false}) {
    const AvgPool2dOptions variants[] = {
        avg_options({2, 2}, std::nullopt, {0, 0}, false, count_include_pad),
        avg_options({3, 3}, {{2, 2}}, {1, 1}, false, count_include_pad),
        avg_options({3, 3}, {{2, 2}}, {1, 1}, true, count_include_pad),
        avg_options({3, 2}, {{1, 2}}, {1, 1}, true, count_include_pad),
    };
    for (const AvgPool2dOptions& o : variants) {
      const AvgPool2d layer(o);
      for (const Shape& shape : {Shape{2, 3, 6, 7}, Shape{1, 2, 5, 5}}) {
        SCOPED_TRACE(layer.config().dump() + " " + shape.str());
        EXPECT_TRUE(testing::check_gradients(layer, {testing::random_tensor(shape, DType::f64, s, 22)}));
      }
    }
  }
}

TEST(AdaptiveAvgPool2d, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{1, 1, 1, 1}, Shape{3, 2, 7, 7}}) {
    for (Mode mode : {Mode::train, Mode::eval}) {
      SCOPED_TRACE(shape.str());
      EXPECT_TRUE(testing::check_gradients(AdaptiveAvgPool2d(), {testing::random_tensor(shape, DType::f64, s, 23)},
                                           {.mode = mode}));
    }
  }
}

TEST(AdaptiveAvgPool2d, GradientCheckToAnyOutputSize) {
  const Stream s = Stream::create(Device::cpu());
  // Overlapping windows (7 -> 5, 5 -> 3), exact divisions (6 -> 3), an output larger than the input
  // (2 -> 3: rows repeat), identity (4 -> 4) and non-square sizes.
  const std::array<int64_t, 2> sizes[] = {{3, 3}, {5, 3}, {3, 4}, {4, 4}, {1, 2}};
  for (const std::array<int64_t, 2>& size : sizes) {
    for (const Shape& shape : {Shape{2, 3, 7, 5}, Shape{1, 2, 6, 4}, Shape{2, 1, 2, 3}}) {
      const AdaptiveAvgPool2d layer({.output_size = size});
      SCOPED_TRACE(layer.config().dump() + " " + shape.str());
      EXPECT_TRUE(testing::check_gradients(layer, {testing::random_tensor(shape, DType::f64, s, 27)}));
    }
  }
}

TEST(AdaptiveAvgPool2d, WindowsFollowPyTorch) {
  Context ctx(Device::cpu());
  // One 5x5 plane 0 .. 24 pooled to 3x3: PyTorch's windows along each axis are [0, 2), [1, 4), [3, 5).
  std::vector<double> v(25);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  const Tensor x = testing::from_doubles(v, Shape{1, 1, 5, 5}, DType::f64, ctx.stream());
  const AdaptiveAvgPool2d layer({.output_size = {3, 3}});
  // Window (r, c) averages rows R and columns C: the mean of 5·h + w is 5·mean(R) + mean(C).
  const double mean[] = {0.5, 2.0, 3.5};
  std::vector<double> expected;
  for (double r : mean) {
    for (double c : mean) expected.push_back(5 * r + c);
  }
  EXPECT_TRUE(testing::all_close(testing::to_doubles(run(layer, ctx, x).outputs[0], ctx.stream()), expected, 1e-14, 0));
  // torch.nn.functional.adaptive_avg_pool2d(torch.arange(6.).reshape(1, 1, 2, 3), (3, 2)): rows [0, 1),
  // [0, 2), [1, 2); columns [0, 2), [1, 3).
  const Tensor small = testing::from_doubles({0, 1, 2, 3, 4, 5}, Shape{1, 1, 2, 3}, DType::f64, ctx.stream());
  EXPECT_TRUE(testing::all_close(
      testing::to_doubles(run(AdaptiveAvgPool2d({.output_size = {3, 2}}), ctx, small).outputs[0], ctx.stream()),
      {0.5, 1.5, 2.0, 3.0, 3.5, 4.5}, 1e-14, 0));
}

TEST(Pooling, ShapesFollowPyTorch) {
  const Shape in[] = {Shape{8, 64, 112, 112}};
  EXPECT_EQ(MaxPool2d(max_options({3, 3}, {{2, 2}}, {1, 1}, {1, 1}, false)).infer_shapes(in)[0],
            (Shape{8, 64, 56, 56}));
  EXPECT_EQ(MaxPool2d(max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, false)).infer_shapes(in)[0],
            (Shape{8, 64, 56, 56}));
  const Shape odd[] = {Shape{1, 2, 5, 5}};
  EXPECT_EQ(MaxPool2d(max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, true)).infer_shapes(odd)[0],
            (Shape{1, 2, 3, 3}));
  EXPECT_EQ(AvgPool2d(avg_options({2, 2}, std::nullopt, {0, 0}, false, true)).infer_shapes(odd)[0],
            (Shape{1, 2, 2, 2}));
  EXPECT_EQ(AdaptiveAvgPool2d().infer_shapes(in)[0], (Shape{8, 64, 1, 1}));
  EXPECT_EQ(AdaptiveAvgPool2d({.output_size = {7, 7}}).infer_shapes(in)[0], (Shape{8, 64, 7, 7}));
  EXPECT_EQ(AdaptiveAvgPool2d({.output_size = {6, 3}}).infer_shapes(odd)[0], (Shape{1, 2, 6, 3}));
}

TEST(Pooling, ForwardComputesTheOp) {
  Context ctx(Device::cpu());
  // One 4x4 plane 0 .. 15: 2x2 windows.
  std::vector<double> v(16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  const Tensor x = testing::from_doubles(v, Shape{1, 1, 4, 4}, DType::f32, ctx.stream());
  const auto out = [&](const Layer& layer) { return testing::to_doubles(run(layer, ctx, x).outputs[0], ctx.stream()); };
  EXPECT_EQ(out(MaxPool2d(max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, false))),
            (std::vector<double>{5, 7, 13, 15}));
  EXPECT_EQ(out(AvgPool2d(avg_options({2, 2}, std::nullopt, {0, 0}, false, true))),
            (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  EXPECT_EQ(out(AdaptiveAvgPool2d()), (std::vector<double>{7.5}));
}

TEST(Pooling, ForwardSavesNoCopyOfTheInput) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{2, 3, 6, 6}, DType::f32, ctx.stream(), 24);
  const ForwardResult max = run(MaxPool2d(max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, false)), ctx, x);
  ASSERT_EQ(max.saved.size(), 2u);
  EXPECT_EQ(max.saved[0].dtype(), DType::i32);  // argmax indices
  EXPECT_EQ(max.saved[0].shape(), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(max.saved[1].numel(), 0);  // the input's shape, without its data
  for (const ForwardResult& r : {run(AvgPool2d(avg_options({2, 2}, std::nullopt, {0, 0}, false, true)), ctx, x),
                                 run(AdaptiveAvgPool2d(), ctx, x)}) {
    ASSERT_EQ(r.saved.size(), 1u);
    EXPECT_EQ(r.saved[0].numel(), 0);
    EXPECT_NE(r.saved[0].storage(), x.storage());
  }
}

TEST(Pooling, BackwardSkipsTheInputGradientWhenNotNeeded) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{1, 2, 4, 4}, DType::f32, ctx.stream(), 25);
  const MaxPool2d max(max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, false));
  const AvgPool2d avg(avg_options({2, 2}, std::nullopt, {0, 0}, false, true));
  const AdaptiveAvgPool2d global;
  for (const Layer* layer : std::initializer_list<const Layer*>{&max, &avg, &global}) {
    SCOPED_TRACE(layer->type());
    const ForwardResult r = run(*layer, ctx, x);
    const Tensor dy = testing::random_tensor(r.outputs[0].shape(), DType::f32, ctx.stream(), 26);
    ASSERT_NO_FATAL_FAILURE(testing::backward_params_only(*layer, ctx, dy, r.saved, {}, {}));
  }
}

TEST(Pooling, CostCountsFlopsAndBytes) {
  const Shape in[] = {Shape{2, 4, 8, 8}};
  const LayerCost max = MaxPool2d(max_options({2, 2}, std::nullopt, {0, 0}, {1, 1}, false)).cost(in, DType::f32);
  EXPECT_EQ(max.output_bytes, 2 * 4 * 4 * 4 * 4);
  EXPECT_EQ(max.saved_bytes, 2 * 4 * 4 * 4 * 4);  // i32 indices
  EXPECT_EQ(max.forward_flops, 2.0 * 4 * 4 * 4 * 4);
  EXPECT_EQ(max.param_bytes, 0);
  const LayerCost avg = AvgPool2d(avg_options({2, 2}, std::nullopt, {0, 0}, false, true)).cost(in, DType::f32);
  EXPECT_EQ(avg.saved_bytes, 0);
  EXPECT_EQ(avg.forward_flops, 2.0 * 4 * 4 * 4 * 5);
  const LayerCost global = AdaptiveAvgPool2d().cost(in, DType::f64);
  EXPECT_EQ(global.output_bytes, 2 * 4 * 8);
  EXPECT_EQ(global.forward_flops, 2.0 * 4 * 8 * 8 + 2 * 4);
  EXPECT_EQ(global.backward_flops, 2.0 * 4 * 8 * 8);
  // 8 -> 3 along both axes: windows [0, 3), [2, 6), [5, 8), so 3 + 4 + 3 = 10 taps per axis.
  const LayerCost adaptive = AdaptiveAvgPool2d({.output_size = {3, 3}}).cost(in, DType::f32);
  EXPECT_EQ(adaptive.output_bytes, 2 * 4 * 9 * 4);
  EXPECT_EQ(adaptive.forward_flops, 2.0 * 4 * (10 * 10 + 9));
  EXPECT_EQ(adaptive.backward_flops, 2.0 * 4 * 10 * 10);
}

TEST(Pooling, JsonRoundTripsThroughTheRegistry) {
  const LayerRegistry& r = builtin_layers();
  const auto max = r.create("MaxPool2d", {{"kernel_size", 3}});
  EXPECT_EQ(max->type(), "MaxPool2d");
  EXPECT_EQ(max->config(), (nlohmann::json{{"kernel_size", {3, 3}},
                                           {"stride", {3, 3}},  // defaults to kernel_size
                                           {"padding", {0, 0}},
                                           {"dilation", {1, 1}},
                                           {"ceil_mode", false}}));
  const nlohmann::json custom_max{
      {"kernel_size", {3, 2}}, {"stride", {2, 1}}, {"padding", {1, 1}}, {"dilation", {2, 1}}, {"ceil_mode", true}};
  EXPECT_EQ(r.create("MaxPool2d", custom_max)->config(), custom_max);
  EXPECT_EQ(r.create("MaxPool2d", {{"kernel_size", 2}, {"stride", nullptr}})->config()["stride"],
            (nlohmann::json{2, 2}));

  const auto avg = r.create("AvgPool2d", {{"kernel_size", {2, 3}}, {"stride", 1}});
  EXPECT_EQ(avg->type(), "AvgPool2d");
  EXPECT_EQ(avg->config(), (nlohmann::json{{"kernel_size", {2, 3}},
                                           {"stride", {1, 1}},
                                           {"padding", {0, 0}},
                                           {"ceil_mode", false},
                                           {"count_include_pad", true}}));
  const nlohmann::json custom_avg{{"kernel_size", {3, 3}},
                                  {"stride", {2, 2}},
                                  {"padding", {1, 0}},
                                  {"ceil_mode", true},
                                  {"count_include_pad", false}};
  EXPECT_EQ(r.create("AvgPool2d", custom_avg)->config(), custom_avg);

  const auto global = r.create("AdaptiveAvgPool2d", {{"output_size", 1}});
  EXPECT_EQ(global->type(), "AdaptiveAvgPool2d");
  EXPECT_EQ(global->config(), (nlohmann::json{{"output_size", {1, 1}}}));

  const auto adaptive = r.create("AdaptiveAvgPool2d", {{"output_size", {7, 6}}});
  EXPECT_EQ(adaptive->config(), (nlohmann::json{{"output_size", {7, 6}}}));
  EXPECT_EQ(r.create("AdaptiveAvgPool2d", {{"output_size", 7}})->config(), (nlohmann::json{{"output_size", {7, 7}}}));

  for (const auto* layer : {max.get(), avg.get(), global.get(), adaptive.get()}) {
    EXPECT_EQ(r.create(layer->type(), layer->config())->config(), layer->config()) << layer->type();
  }
}

TEST(Pooling, BadConfigsNameTheProblem) {
  const LayerRegistry& r = builtin_layers();
  const auto create = [&](const char* type, const nlohmann::json& config) { r.create(type, config); };
  EXPECT_ERROR_MENTIONS("MaxPool2d: kernel_size [0, 0] must be at least 1", create("MaxPool2d", {{"kernel_size", 0}}));
  EXPECT_ERROR_MENTIONS("MaxPool2d: stride [0, 1] must be at least 1",
                        create("MaxPool2d", {{"kernel_size", 2}, {"stride", {0, 1}}}));
  EXPECT_ERROR_MENTIONS("MaxPool2d: padding [2, 2] must be at most half the kernel_size [3, 3]",
                        create("MaxPool2d", {{"kernel_size", 3}, {"padding", 2}}));
  EXPECT_ERROR_MENTIONS("MaxPool2d: dilation [1, 0] must be at least 1",
                        create("MaxPool2d", {{"kernel_size", 3}, {"dilation", {1, 0}}}));
  EXPECT_ERROR_MENTIONS("missing required field 'kernel_size'", create("MaxPool2d", {{"stride", 2}}));
  EXPECT_ERROR_MENTIONS("unknown field 'return_indices'",
                        create("MaxPool2d", {{"kernel_size", 2}, {"return_indices", true}}));
  EXPECT_ERROR_MENTIONS("field 'padding' is [1,2,3], expected an integer or a list of two integers",
                        create("MaxPool2d", {{"kernel_size", 3}, {"padding", {1, 2, 3}}}));
  EXPECT_ERROR_MENTIONS("AvgPool2d: kernel_size [2, 0] must be at least 1",
                        create("AvgPool2d", {{"kernel_size", {2, 0}}}));
  EXPECT_ERROR_MENTIONS("AvgPool2d: stride [0, 0] must be at least 1",
                        create("AvgPool2d", {{"kernel_size", 2}, {"stride", 0}}));
  EXPECT_ERROR_MENTIONS("AvgPool2d: padding [0, 2] must be at most half the kernel_size [2, 2]",
                        create("AvgPool2d", {{"kernel_size", 2}, {"padding", {0, 2}}}));
  EXPECT_ERROR_MENTIONS("unknown field 'dilation'", create("AvgPool2d", {{"kernel_size", 2}, {"dilation", 1}}));
  EXPECT_ERROR_MENTIONS("unknown field 'divisor_override'",
                        create("AvgPool2d", {{"kernel_size", 2}, {"divisor_override", 3}}));
  EXPECT_ERROR_MENTIONS("field 'count_include_pad' is \"yes\", expected true or false",
                        create("AvgPool2d", {{"kernel_size", 2}, {"count_include_pad", "yes"}}));
  EXPECT_ERROR_MENTIONS("AdaptiveAvgPool2d: output_size [0, 0] must be at least 1 in each dimension",
                        create("AdaptiveAvgPool2d", {{"output_size", 0}}));
  EXPECT_ERROR_MENTIONS("AdaptiveAvgPool2d: output_size [7, -1] must be at least 1",
                        create("AdaptiveAvgPool2d", {{"output_size", {7, -1}}}));
  EXPECT_ERROR_MENTIONS("field 'output_size' is [7,7,7], expected an integer or a list of two integers",
                        create("AdaptiveAvgPool2d", {{"output_size", {7, 7, 7}}}));
  EXPECT_ERROR_MENTIONS("missing required field 'output_size'", create("AdaptiveAvgPool2d", nlohmann::json::object()));
}

TEST(Pooling, MismatchedInputsAreErrors) {
  const MaxPool2d max(max_options({3, 3}, std::nullopt, {0, 0}, {1, 1}, false));
  const Shape small[] = {Shape{1, 1, 2, 5}};
  EXPECT_ERROR_MENTIONS("MaxPool2d: input of shape [1, 1, 2, 5] is too small", max.infer_shapes(small));
  const Shape rank3[] = {Shape{1, 5, 5}};
  EXPECT_ERROR_MENTIONS("MaxPool2d: input has shape [1, 5, 5], expected 4 dimensions", max.infer_shapes(rank3));
  EXPECT_ERROR_MENTIONS("AvgPool2d: input has shape [1, 5, 5], expected 4 dimensions",
                        AvgPool2d(avg_options({2, 2}, std::nullopt, {0, 0}, false, true)).infer_shapes(rank3));
  EXPECT_ERROR_MENTIONS("AdaptiveAvgPool2d: input has shape [1, 5, 5], expected 4 dimensions",
                        AdaptiveAvgPool2d().infer_shapes(rank3));
  const Shape empty_plane[] = {Shape{1, 2, 0, 3}};
  EXPECT_ERROR_MENTIONS("expected at least one element per plane", AdaptiveAvgPool2d().infer_shapes(empty_plane));
}

}  // namespace
}  // namespace baton::layers
