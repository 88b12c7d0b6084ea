// Structural layers: float64 gradient checks of Add, Concat, Flatten and Identity; shape rules and
// their errors; views instead of copies; costs; JSON round trips.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/structural.h"
#include "runtime/core/error.h"
#include "tests/layers/layer_test_util.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

std::vector<Tensor> random_inputs(const std::vector<Shape>& shapes, uint64_t seed) {
  const Stream s = Stream::create(Device::cpu());
  std::vector<Tensor> inputs;
  for (const Shape& shape : shapes) inputs.push_back(testing::random_tensor(shape, DType::f64, s, seed++));
  return inputs;
}

TEST(Add, GradientCheckForTwoAndThreeInputs) {
  for (const Shape& shape : {Shape{1}, Shape{7}, Shape{2, 3, 4, 4}}) {
    EXPECT_TRUE(testing::check_gradients(Add(), random_inputs({shape, shape}, 1))) << shape.str();
    EXPECT_TRUE(testing::check_gradients(Add(), random_inputs({shape, shape, shape}, 5))) << shape.str();
  }
}

TEST(Add, SumsAndPassesTheGradientOnWithoutCopies) {
  Context ctx(Device::cpu());
  const std::vector<Tensor> x = random_inputs({Shape{2, 3}, Shape{2, 3}, Shape{2, 3}}, 9);
  const ForwardResult r = testing::forward_once(Add(), ctx, x);
  const std::vector<double> a = testing::to_doubles(x[0], ctx.stream()), b = testing::to_doubles(x[1], ctx.stream()),
                            c = testing::to_doubles(x[2], ctx.stream()),
                            y = testing::to_doubles(r.outputs[0], ctx.stream());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_DOUBLE_EQ(y[i], a[i] + b[i] + c[i]) << i;
  EXPECT_TRUE(r.saved.empty());
  const Tensor dy = testing::random_tensor(Shape{2, 3}, DType::f64, ctx.stream(), 10);
  const std::vector<Tensor> dx = testing::backward_once(Add(), ctx, {&dy, 1}, r.saved, {true, false, true});
  ASSERT_EQ(dx.size(), 3u);
  EXPECT_EQ(dx[0].data_ptr(), dy.data_ptr());
  EXPECT_FALSE(dx[1].defined());
  EXPECT_EQ(dx[2].data_ptr(), dy.data_ptr());
  EXPECT_EQ(Add().cost(std::vector<Shape>{Shape{2, 3}, Shape{2, 3}, Shape{2, 3}}, DType::f32).forward_flops, 12);
}

TEST(Add, MismatchedInputsAreErrors) {
  const Shape ok[] = {Shape{2, 3}, Shape{2, 3}, Shape{2, 4}};
  EXPECT_ERROR_MENTIONS("Add: input 2 has shape [2, 4], expected [2, 3] (the shape of input 0)",
                        Add().infer_shapes(ok));
  const Shape one[] = {Shape{2, 3}};
  EXPECT_ERROR_MENTIONS("Add: got 1 input(s), expected at least 2", Add().infer_shapes(one));
  const DType dtypes[] = {DType::f32, DType::f64};
  EXPECT_ERROR_MENTIONS("Add: input 1 has dtype f64, expected f32", Add().infer_dtypes(dtypes));
  Context ctx(Device::cpu());
  const std::vector<Tensor> x = random_inputs({Shape{2, 3}, Shape{3, 2}}, 11);
  EXPECT_ERROR_MENTIONS("Add: input 1 has shape [3, 2], expected [2, 3]", testing::forward_once(Add(), ctx, x));
}

TEST(Concat, GradientCheck) {
  EXPECT_TRUE(testing::check_gradients(Concat(), random_inputs({Shape{3, 2}, Shape{3, 5}}, 20)));
  EXPECT_TRUE(
      testing::check_gradients(Concat(), random_inputs({Shape{2, 3, 4, 4}, Shape{2, 1, 4, 4}, Shape{2, 2, 4, 4}}, 23)));
  EXPECT_TRUE(testing::check_gradients(Concat(), random_inputs({Shape{1, 1, 3}, Shape{1, 2, 3}}, 26)));
}

TEST(Concat, JoinsChannelsAndSkipsGradientsNotNeeded) {
  Context ctx(Device::cpu());
  const std::vector<Tensor> x = random_inputs({Shape{2, 1, 2}, Shape{2, 2, 2}}, 30);
  const Concat layer;
  const ForwardResult r = testing::forward_once(layer, ctx, x);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 3, 2}));
  const std::vector<double> a = testing::to_doubles(x[0], ctx.stream()), b = testing::to_doubles(x[1], ctx.stream());
  const std::vector<double> expected = {a[0], a[1], b[0], b[1], b[2], b[3], a[2], a[3], b[4], b[5], b[6], b[7]};
  EXPECT_EQ(testing::to_doubles(r.outputs[0], ctx.stream()), expected);
  const Tensor& dy = r.outputs[0];  // any gradient of the output's shape
  const std::vector<Tensor> dx = testing::backward_once(layer, ctx, {&dy, 1}, r.saved, {false, true});
  ASSERT_EQ(dx.size(), 2u);
  EXPECT_FALSE(dx[0].defined());
  EXPECT_EQ(testing::to_doubles(dx[1], ctx.stream()), b);
}

TEST(Concat, InputsDifferingOutsideDimensionOneAndOtherDimsAreErrors) {
  const Shape batch[] = {Shape{2, 3, 4}, Shape{3, 1, 4}};
  EXPECT_ERROR_MENTIONS("Concat: input 1 has shape [3, 1, 4], expected [2, *, 4]", Concat().infer_shapes(batch));
  const Shape spatial[] = {Shape{2, 3, 4, 4}, Shape{2, 1, 4, 5}};
  EXPECT_ERROR_MENTIONS("inputs may differ only in dimension 1", Concat().infer_shapes(spatial));
  const Shape rank[] = {Shape{2, 3}, Shape{2, 3, 1}};
  EXPECT_ERROR_MENTIONS("Concat: input 1 has shape [2, 3, 1], expected [2, *]", Concat().infer_shapes(rank));
  const Shape vectors[] = {Shape{2}, Shape{3}};
  EXPECT_ERROR_MENTIONS("expected at least 2 dimensions", Concat().infer_shapes(vectors));
  const Shape one[] = {Shape{2, 3}};
  EXPECT_ERROR_MENTIONS("Concat: got 1 input(s), expected at least 2", Concat().infer_shapes(one));
  const DType dtypes[] = {DType::f16, DType::f32};
  EXPECT_ERROR_MENTIONS("Concat: input 1 has dtype f32, expected f16", Concat().infer_dtypes(dtypes));
  for (int64_t dim : {0, 2, -1, 3}) {
    EXPECT_ERROR_MENTIONS("only dim = 1", Concat({.dim = dim}));
  }
  EXPECT_ERROR_MENTIONS("Concat: dim is 2", builtin_layers().create("Concat", {{"dim", 2}}));
  EXPECT_ERROR_MENTIONS("field 'dim'", builtin_layers().create("Concat", {{"dim", 1.5}}));
}

TEST(Flatten, ShapesFollowPyTorch) {
  struct Case {
    FlattenOptions options;
    Shape in, out;
  };
  const Case cases[] = {
      {{}, Shape{2, 3, 4, 5}, Shape{2, 60}},
      {{.start_dim = 0}, Shape{2, 3, 4}, Shape{24}},
      {{.start_dim = 1, .end_dim = 2}, Shape{2, 3, 4, 5}, Shape{2, 12, 5}},
      {{.start_dim = -3, .end_dim = -2}, Shape{2, 3, 4, 5}, Shape{2, 12, 5}},
      {{.start_dim = 2, .end_dim = 2}, Shape{2, 3, 4}, Shape{2, 3, 4}},
      {{}, Shape{6, 1}, Shape{6, 1}},
      {{.start_dim = 0}, Shape{}, Shape{1}},
      {{}, Shape{2, 0, 3}, Shape{2, 0}},
  };
  for (const Case& c : cases) {
    const Shape in[] = {c.in};
    EXPECT_EQ(Flatten(c.options).infer_shapes(in)[0], c.out) << c.in.str();
  }
  const Shape vec[] = {Shape{4}};
  EXPECT_ERROR_MENTIONS("Flatten: start_dim is 1, out of range for an input of shape [4]", Flatten().infer_shapes(vec));
  const Shape three[] = {Shape{2, 3, 4}};
  EXPECT_ERROR_MENTIONS("Flatten: end_dim is 3", Flatten({.end_dim = 3}).infer_shapes(three));
  EXPECT_ERROR_MENTIONS("Flatten: start_dim (2) comes after end_dim (1)",
                        Flatten({.start_dim = 2, .end_dim = 1}).infer_shapes(three));
}

TEST(Flatten, IsAViewBothWaysAndPassesTheGradientCheck) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{2, 3, 4}, DType::f64, ctx.stream(), 40);
  const Flatten layer;
  const ForwardResult r = testing::forward_once(layer, ctx, {&x, 1});
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(r.outputs[0].data_ptr(), x.data_ptr());
  const Tensor dy = testing::random_tensor(Shape{2, 12}, DType::f64, ctx.stream(), 41);
  const std::vector<Tensor> dx = testing::backward_once(layer, ctx, {&dy, 1}, r.saved, {true});
  EXPECT_EQ(dx[0].shape(), x.shape());
  EXPECT_EQ(dx[0].data_ptr(), dy.data_ptr());
  for (const FlattenOptions& o : {FlattenOptions{}, FlattenOptions{.start_dim = 0, .end_dim = 1}}) {
    EXPECT_TRUE(testing::check_gradients(Flatten(o), {x}));
  }
}

TEST(Identity, IsTheInputAndPassesTheGradientCheck) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{3, 4}, DType::f64, ctx.stream(), 50);
  const ForwardResult r = testing::forward_once(Identity(), ctx, {&x, 1});
  EXPECT_EQ(r.outputs[0].data_ptr(), x.data_ptr());
  EXPECT_TRUE(testing::check_gradients(Identity(), {x}));
  const Shape two[] = {Shape{3}, Shape{3}};
  EXPECT_ERROR_MENTIONS("Identity: got 2 input(s), expected 1", Identity().infer_shapes(two));
}

TEST(StructuralLayers, RoundTripThroughTheRegistry) {
  const std::vector<std::shared_ptr<const Layer>> layers = {
      std::make_shared<Add>(), std::make_shared<Concat>(), std::make_shared<Identity>(), std::make_shared<Flatten>(),
      std::make_shared<Flatten>(FlattenOptions{.start_dim = 0, .end_dim = -2})};
  for (const auto& layer : layers) {
    SCOPED_TRACE(layer->config().dump());
    const auto rebuilt = builtin_layers().create(layer->type(), layer->config());
    EXPECT_EQ(rebuilt->type(), layer->type());
    EXPECT_EQ(rebuilt->config(), layer->config());
  }
  EXPECT_EQ(builtin_layers().create("Flatten", nlohmann::json::object())->config(),
            (nlohmann::json{{"start_dim", 1}, {"end_dim", -1}}));
  EXPECT_ERROR_MENTIONS("unknown field 'dims'", builtin_layers().create("Flatten", {{"dims", 1}}));
  EXPECT_ERROR_MENTIONS("unknown field 'x'", builtin_layers().create("Add", {{"x", 1}}));
}

}  // namespace
}  // namespace baton::layers
