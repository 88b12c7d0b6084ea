// Conv2d: float64 gradient checks for input, weight and bias over shapes and every option (stride,
// padding, dilation, groups, depthwise, non-square, no bias); parameter specs and initialisers;
// shape inference and its errors; invalid options; JSON round trip; cost.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "layers/builtin_layers.h"
#include "layers/conv.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/layer_check.h"
#include "tests/support/layer_expectations.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

struct Variant {
  std::string name;
  Conv2dOptions options;
  Shape input;
};

std::vector<Variant> variants() {
  return {
      {"3x3 pad 1", {.in_channels = 3, .out_channels = 4, .kernel_size = {3, 3}, .padding = {1, 1}}, Shape{2, 3, 5, 4}},
      {"stride 2",
       {.in_channels = 2, .out_channels = 3, .kernel_size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}},
       Shape{2, 2, 7, 6}},
      {"dilation 2",
       {.in_channels = 2, .out_channels = 2, .kernel_size = {3, 3}, .padding = {2, 2}, .dilation = {2, 2}},
       Shape{1, 2, 6, 6}},
      {"groups 2",
       {.in_channels = 4, .out_channels = 6, .kernel_size = {3, 3}, .padding = {1, 1}, .groups = 2},
       Shape{2, 4, 4, 5}},
      {"depthwise",
       {.in_channels = 3, .out_channels = 3, .kernel_size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .groups = 3},
       Shape{2, 3, 6, 6}},
      {"1x1", {.in_channels = 5, .out_channels = 3, .kernel_size = {1, 1}}, Shape{3, 5, 3, 4}},
      {"1x1 stride 2 no bias",
       {.in_channels = 4, .out_channels = 6, .kernel_size = {1, 1}, .stride = {2, 2}, .bias = false},
       Shape{2, 4, 5, 5}},
      {"non-square",
       {.in_channels = 2,
        .out_channels = 3,
        .kernel_size = {2, 3},
        .stride = {1, 2},
        .padding = {1, 0},
        .dilation = {2, 1}},
       Shape{2, 2, 5, 7}},
      {"batch 1 no bias",
       {.in_channels = 3, .out_channels = 2, .kernel_size = {3, 3}, .bias = false},
       Shape{1, 3, 4, 4}},
  };
}

TEST(Conv2dLayer, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  uint64_t seed = 1;
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name);
    const Conv2d conv(v.options);
    const Tensor x = testing::random_tensor(v.input, DType::f64, s, seed++);
    EXPECT_TRUE(testing::check_gradients(conv, {x}));
  }
}

TEST(Conv2dLayer, ShapesAndParameterSpecs) {
  const Conv2d conv(
      {.in_channels = 6, .out_channels = 8, .kernel_size = {3, 5}, .stride = {2, 1}, .padding = {1, 2}, .groups = 2});
  const Shape in[] = {Shape{4, 6, 9, 10}};
  EXPECT_EQ(conv.infer_shapes(in)[0], (Shape{4, 8, 5, 10}));
  const double bound = 1.0 / std::sqrt(3.0 * 3 * 5);  // fan_in = in_channels / groups · R · S
  testing::expect_uniform_weight_and_bias(conv.param_specs(in), Shape{8, 3, 3, 5}, Shape{8}, bound);
  EXPECT_EQ(Conv2d({.in_channels = 2, .out_channels = 2, .bias = false}).param_specs(in).size(), 1u);
}

TEST(Conv2dLayer, NoInputGradientWhenNotNeeded) {
  Context ctx(Device::cpu());
  const Conv2d conv({.in_channels = 2, .out_channels = 3, .kernel_size = {3, 3}, .padding = {1, 1}});
  const Tensor x = testing::random_tensor(Shape{1, 2, 4, 4}, DType::f64, ctx.stream(), 1);
  const Tensor w = testing::random_tensor(Shape{3, 2, 3, 3}, DType::f64, ctx.stream(), 2);
  const Tensor b = testing::random_tensor(Shape{3}, DType::f64, ctx.stream(), 3);
  const Tensor params[] = {w, b};
  const Tensor inputs[] = {x};
  const ForwardResult r =
      conv.forward({.ctx = ctx, .mode = Mode::train, .inputs = inputs, .params = params, .buffers = {}});
  ASSERT_EQ(r.saved.size(), 1u);
  EXPECT_EQ(r.saved[0].data_ptr(), x.data_ptr()) << "the input is saved as it is, not copied";
  Tensor dw = Tensor::empty(w.shape(), DType::f64, ctx), db = Tensor::empty(b.shape(), DType::f64, ctx);
  dw.fill(0.0, ctx.stream());
  db.fill(0.0, ctx.stream());
  const Tensor grads[] = {dw, db};
  const Tensor dy = testing::random_tensor(r.outputs[0].shape(), DType::f64, ctx.stream(), 4);
  ASSERT_NO_FATAL_FAILURE(testing::backward_params_only(conv, ctx, dy, r.saved, params, grads));
  double sum = 0;
  for (double v : testing::to_doubles(dw, ctx.stream())) sum += std::abs(v);
  EXPECT_GT(sum, 0) << "the weight gradient is still computed";
}

TEST(Conv2dLayer, InferShapesRejectsMismatches) {
  const Conv2d conv({.in_channels = 3, .out_channels = 4, .kernel_size = {5, 5}});
  const Shape wrong_channels[] = {Shape{2, 4, 8, 8}};
  EXPECT_ERROR_MENTIONS("Conv2d: input has shape [2, 4, 8, 8], expected [N, 3, H, W]",
                        conv.infer_shapes(wrong_channels));
  const Shape wrong_rank[] = {Shape{3, 8, 8}};
  EXPECT_ERROR_MENTIONS("Conv2d: input has shape [3, 8, 8], expected [N, 3, H, W]", conv.infer_shapes(wrong_rank));
  const Shape too_small[] = {Shape{2, 3, 4, 8}};
  EXPECT_ERROR_MENTIONS("height of the dilated kernel (5) exceeds the padded input's (4)",
                        conv.infer_shapes(too_small));
  EXPECT_ERROR_MENTIONS("in Conv2d", conv.infer_shapes(too_small));
}

TEST(Conv2dLayer, RejectsInvalidOptions) {
  const Conv2dOptions ok{.in_channels = 4, .out_channels = 6, .kernel_size = {3, 3}};
  auto with = [&](auto change) {
    Conv2dOptions o = ok;
    change(o);
    return o;
  };
  EXPECT_ERROR_MENTIONS("Conv2d: stride must be at least 1, got [0, 1]", Conv2d(with([](Conv2dOptions& o) {
                          o.stride = {0, 1};
                        })));
  EXPECT_ERROR_MENTIONS("Conv2d: padding must not be negative, got [0, -1]", Conv2d(with([](Conv2dOptions& o) {
                          o.padding = {0, -1};
                        })));
  EXPECT_ERROR_MENTIONS("Conv2d: dilation must be at least 1, got [0, 0]", Conv2d(with([](Conv2dOptions& o) {
                          o.dilation = {0, 0};
                        })));
  EXPECT_ERROR_MENTIONS("Conv2d: kernel_size must be at least 1, got [3, 0]", Conv2d(with([](Conv2dOptions& o) {
                          o.kernel_size = {3, 0};
                        })));
  EXPECT_ERROR_MENTIONS("Conv2d: groups 3 does not divide in_channels 4",
                        Conv2d(with([](Conv2dOptions& o) { o.groups = 3; })));
  EXPECT_ERROR_MENTIONS("Conv2d: groups 4 does not divide out_channels 6",
                        Conv2d(with([](Conv2dOptions& o) { o.groups = 4; })));
  EXPECT_ERROR_MENTIONS("Conv2d: groups must be at least 1, got 0",
                        Conv2d(with([](Conv2dOptions& o) { o.groups = 0; })));
  EXPECT_ERROR_MENTIONS("Conv2d: in_channels must be at least 1, got 0",
                        Conv2d(with([](Conv2dOptions& o) { o.in_channels = 0; })));
  EXPECT_ERROR_MENTIONS("Conv2d: out_channels must be at least 1, got -2",
                        Conv2d(with([](Conv2dOptions& o) { o.out_channels = -2; })));
}

TEST(Conv2dLayer, JsonRoundTrip) {
  const LayerRegistry& r = builtin_layers();
  const Conv2d conv({.in_channels = 6,
                     .out_channels = 4,
                     .kernel_size = {3, 1},
                     .stride = {2, 1},
                     .padding = {1, 0},
                     .dilation = {1, 2},
                     .groups = 2,
                     .bias = false});
  const std::unique_ptr<Layer> again = r.create(conv.type(), conv.config());
  EXPECT_EQ(again->type(), "Conv2d");
  EXPECT_EQ(again->config(), conv.config());
  ASSERT_NE(dynamic_cast<const Conv2d*>(again.get()), nullptr);
  EXPECT_EQ(dynamic_cast<const Conv2d&>(*again).options(), conv.options());
  // Defaults and single integers for pairs, as PyTorch accepts them.
  const auto short_form = r.create("Conv2d", {{"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 3}});
  EXPECT_EQ(dynamic_cast<const Conv2d&>(*short_form).options(),
            (Conv2dOptions{.in_channels = 3, .out_channels = 8, .kernel_size = {3, 3}}));
}

TEST(Conv2dLayer, JsonErrorsNameTheField) {
  const LayerRegistry& r = builtin_layers();
  const nlohmann::json base = {{"in_channels", 4}, {"out_channels", 4}, {"kernel_size", 3}};
  auto with = [&](const char* field, nlohmann::json value) {
    nlohmann::json c = base;
    c[field] = std::move(value);
    return c;
  };
  EXPECT_ERROR_MENTIONS("stride must be at least 1, got [0, 0]", r.create("Conv2d", with("stride", 0)));
  EXPECT_ERROR_MENTIONS("padding must not be negative", r.create("Conv2d", with("padding", {-1, 0})));
  EXPECT_ERROR_MENTIONS("groups 3 does not divide in_channels 4", r.create("Conv2d", with("groups", 3)));
  EXPECT_ERROR_MENTIONS("field 'padding' is \"same\", expected an integer or a list of two integers",
                        r.create("Conv2d", with("padding", "same")));
  EXPECT_ERROR_MENTIONS("field 'bias' is 1, expected true or false", r.create("Conv2d", with("bias", 1)));
  EXPECT_ERROR_MENTIONS("unknown field 'kernal_size'", r.create("Conv2d", with("kernal_size", 3)));
  EXPECT_ERROR_MENTIONS("missing required field 'out_channels'",
                        r.create("Conv2d", {{"in_channels", 4}, {"kernel_size", 3}}));
}

TEST(Conv2dLayer, CostCountsMacsAndBytes) {
  // ResNet-50's stem at batch 2: 64·112·112 outputs per sample, 3·7·7 taps each.
  const Conv2d conv({.in_channels = 3,
                     .out_channels = 64,
                     .kernel_size = {7, 7},
                     .stride = {2, 2},
                     .padding = {3, 3},
                     .bias = false});
  const Shape in[] = {Shape{2, 3, 224, 224}};
  const LayerCost c = conv.cost(in, DType::f32);
  const double macs = 2.0 * 64 * 112 * 112 * 3 * 7 * 7;
  EXPECT_DOUBLE_EQ(c.forward_macs, macs);
  EXPECT_DOUBLE_EQ(c.forward_flops, 2 * macs);
  EXPECT_DOUBLE_EQ(c.backward_flops, 4 * macs);
  EXPECT_EQ(c.output_bytes, 2 * 64 * 112 * 112 * 4);
  EXPECT_EQ(c.saved_bytes, 2 * 3 * 224 * 224 * 4);
  EXPECT_EQ(c.param_bytes, 64 * 3 * 7 * 7 * 4);
  EXPECT_EQ(c.workspace_bytes, 3 * 7 * 7 * 112 * 112 * 4);
  const Conv2d pointwise({.in_channels = 8, .out_channels = 4, .kernel_size = {1, 1}});
  const Shape small[] = {Shape{1, 8, 5, 5}};
  const LayerCost p = pointwise.cost(small, DType::f64);
  EXPECT_EQ(p.workspace_bytes, 0);
  EXPECT_EQ(p.param_bytes, (4 * 8 + 4) * 8);
  EXPECT_DOUBLE_EQ(p.forward_flops, 2.0 * 4 * 25 * 8 + 4 * 25);
}

}  // namespace
}  // namespace baton::layers
