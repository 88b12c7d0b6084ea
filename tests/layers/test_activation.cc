// Activation layers: float64 gradient checks, shape inference, what each saves, costs and JSON round trips.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "layers/activation.h"
#include "layers/builtin_layers.h"
#include "runtime/core/error.h"
#include "tests/layers/layer_test_util.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

const Shape kShapes[] = {Shape{1}, Shape{7}, Shape{2, 3, 5, 5}};

std::vector<std::shared_ptr<const Layer>> all_activations() {
  return {std::make_shared<ReLU>(), std::make_shared<ReLU6>(), std::make_shared<Sigmoid>(), std::make_shared<Tanh>()};
}

TEST(Activations, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  // Input ranges that reach both sides of ReLU's kink at 0, of ReLU6's at 0 and 6, and the
  // saturating tails of Sigmoid and Tanh.
  const struct {
    std::shared_ptr<const Layer> layer;
    double low, high;
  } cases[] = {{std::make_shared<ReLU>(), -1, 1},
               {std::make_shared<ReLU6>(), -2, 8},
               {std::make_shared<Sigmoid>(), -6, 6},
               {std::make_shared<Tanh>(), -3, 3}};
  for (const auto& c : cases) {
    for (const Shape& shape : kShapes) {
      const Tensor x = testing::random_tensor(shape, DType::f64, s, 3, c.low, c.high);
      EXPECT_TRUE(testing::check_gradients(*c.layer, {x})) << c.layer->type() << " " << shape.str();
    }
  }
}

TEST(Activations, KeepTheShapeAndRejectOtherInputCounts) {
  const Shape one[] = {Shape{4, 3, 2, 2}};
  const Shape two[] = {Shape{4}, Shape{4}};
  for (const auto& layer : all_activations()) {
    SCOPED_TRACE(std::string(layer->type()));
    EXPECT_EQ(layer->infer_shapes(one)[0], one[0]);
    EXPECT_ERROR_MENTIONS("got 2 input(s), expected 1", layer->infer_shapes(two));
  }
}

TEST(Activations, SaveTheTensorTheirBackwardReads) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{3, 4}, DType::f64, ctx.stream(), 7);
  for (const auto& layer : all_activations()) {
    SCOPED_TRACE(std::string(layer->type()));
    const ForwardResult r = testing::forward_once(*layer, ctx, {&x, 1});
    ASSERT_EQ(r.saved.size(), 1u);
    const Tensor& expected = layer->type() == "ReLU6" ? x : r.outputs[0];
    EXPECT_EQ(r.saved[0].data_ptr(), expected.data_ptr()) << "a view of the input or output, not a copy";
    const LayerCost c = layer->cost(std::vector<Shape>{x.shape()}, DType::f32);
    EXPECT_EQ(c.output_bytes, 48);
    EXPECT_EQ(c.saved_bytes, 48);
    EXPECT_GE(c.forward_flops, 12);
    EXPECT_GE(c.backward_flops, 12);
  }
}

TEST(Activations, BackwardSkipsAnInputThatNeedsNoGradient) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{5}, DType::f64, ctx.stream(), 8);
  for (const auto& layer : all_activations()) {
    const ForwardResult r = testing::forward_once(*layer, ctx, {&x, 1});
    const std::vector<Tensor> grads = testing::backward_once(*layer, ctx, r.outputs, r.saved, {false});
    ASSERT_EQ(grads.size(), 1u);
    EXPECT_FALSE(grads[0].defined()) << layer->type();
  }
}

TEST(Activations, RoundTripThroughTheRegistry) {
  for (const auto& layer : all_activations()) {
    SCOPED_TRACE(std::string(layer->type()));
    const auto rebuilt = builtin_layers().create(layer->type(), layer->config());
    EXPECT_EQ(rebuilt->type(), layer->type());
    EXPECT_EQ(rebuilt->config(), layer->config());
    EXPECT_THROW(builtin_layers().create(layer->type(), nlohmann::json{{"inplace", true}}), Error);
  }
}

}  // namespace
}  // namespace baton::layers
