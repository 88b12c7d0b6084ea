// Dropout layer: float64 gradient checks in train mode (one fixed seed, so every evaluation draws the
// same mask) and eval mode, the kept fraction and scaling, eval and p = 0 as the identity, backward
// regenerating forward's mask from the saved seed, options and JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/dropout.h"
#include "runtime/core/error.h"
#include "tests/layers/layer_test_util.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

const Shape kDropoutShapes[] = {Shape{1}, Shape{7}, Shape{2, 3, 5, 5}};

TEST(Dropout, GradientCheckInTrainAndEvalModes) {
  const Stream s = Stream::create(Device::cpu());
  for (double p : {0.0, 0.2, 0.5, 0.9}) {
    for (Mode mode : {Mode::train, Mode::eval}) {
      for (const Shape& shape : kDropoutShapes) {
        SCOPED_TRACE(::testing::Message() << "p " << p << (mode == Mode::train ? " train " : " eval ") << shape.str());
        const Tensor x = testing::random_tensor(shape, DType::f64, s, 11);
        EXPECT_TRUE(testing::check_gradients(Dropout({.p = p}), {x}, {.mode = mode, .seed = 17}));
      }
    }
  }
}

struct Outcome {
  std::vector<double> x, y, dy, dx;
  ForwardResult forward;
};

// Forward and backward of `layer` on x (uniform in [0.5, 1.5): no zeros) with a random output gradient.
Outcome dropout_run(const Dropout& layer, Context& ctx, const Shape& shape, Mode mode, uint64_t seed) {
  const Tensor x = testing::random_tensor(shape, DType::f32, ctx.stream(), 12, 0.5, 1.5);
  const Tensor dy = testing::random_tensor(shape, DType::f32, ctx.stream(), 13, 0.5, 1.5);
  Outcome r;
  r.forward = testing::forward_once(layer, ctx, {&x, 1}, mode, seed);
  const std::vector<Tensor> dx = testing::backward_once(layer, ctx, {&dy, 1}, r.forward.saved, {true});
  r.x = testing::to_doubles(x, ctx.stream());
  r.y = testing::to_doubles(r.forward.outputs[0], ctx.stream());
  r.dy = testing::to_doubles(dy, ctx.stream());
  r.dx = testing::to_doubles(dx[0], ctx.stream());
  return r;
}

TEST(Dropout, KeepsAboutOneMinusPScaledAndBackwardUsesTheSameMask) {
  Context ctx(Device::cpu());
  for (double p : {0.1, 0.5, 0.75}) {
    SCOPED_TRACE(::testing::Message() << "p " << p);
    const Outcome r = dropout_run(Dropout({.p = p}), ctx, Shape{50, 40, 50}, Mode::train, 99);
    int64_t kept = 0;
    for (size_t i = 0; i < r.x.size(); ++i) {
      const bool keep = r.y[i] != 0;
      kept += keep;
      if (keep) {
        EXPECT_NEAR(r.y[i], r.x[i] / (1 - p), 1e-5 * r.y[i]) << i;
        EXPECT_NEAR(r.dx[i], r.dy[i] / (1 - p), 1e-5 * r.dx[i]) << i;
      } else if (r.dx[i] != 0) {
        ADD_FAILURE() << "element " << i << " dropped in forward but not in backward";
        break;
      }
    }
    // 100000 elements: the binomial standard deviation of the kept fraction is below 0.0016.
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(r.x.size()), 1 - p, 0.008);
  }
}

TEST(Dropout, SavesOnlyTheSeedAsAHostRecord) {
  Context ctx(Device::cpu());
  const Outcome r = dropout_run(Dropout(), ctx, Shape{4, 8}, Mode::train, 0xfedcba9876543210ull);
  ASSERT_EQ(r.forward.saved.size(), 1u);
  const Tensor& record = r.forward.saved[0];
  EXPECT_EQ(record.dtype(), DType::i64);
  EXPECT_EQ(record.numel(), 1);
  EXPECT_TRUE(record.device().is_cpu());
  EXPECT_EQ(static_cast<uint64_t>(record.data<int64_t>()[0]), 0xfedcba9876543210ull);
}

TEST(Dropout, SeedsChooseTheMask) {
  Context ctx(Device::cpu());
  const Outcome a = dropout_run(Dropout(), ctx, Shape{1000}, Mode::train, 1),
                same = dropout_run(Dropout(), ctx, Shape{1000}, Mode::train, 1);
  const Outcome other = dropout_run(Dropout(), ctx, Shape{1000}, Mode::train, 2);
  EXPECT_EQ(a.y, same.y);
  int differ = 0;
  for (size_t i = 0; i < a.y.size(); ++i) differ += (a.y[i] == 0) != (other.y[i] == 0);
  EXPECT_GT(differ, 250);
}

TEST(Dropout, EvalModeAndZeroProbabilityAreTheIdentityWithoutCopies) {
  Context ctx(Device::cpu());
  const Tensor x = testing::random_tensor(Shape{3, 5}, DType::f32, ctx.stream(), 14);
  const Tensor dy = testing::random_tensor(Shape{3, 5}, DType::f32, ctx.stream(), 15);
  for (auto [p, mode] : {std::pair{0.5, Mode::eval}, std::pair{0.0, Mode::train}, std::pair{0.0, Mode::eval}}) {
    SCOPED_TRACE(::testing::Message() << "p " << p << (mode == Mode::train ? " train" : " eval"));
    const Dropout layer({.p = p});
    const ForwardResult r = testing::forward_once(layer, ctx, {&x, 1}, mode, 3);
    EXPECT_EQ(r.outputs[0].data_ptr(), x.data_ptr());
    EXPECT_TRUE(r.saved.empty());
    const std::vector<Tensor> dx = testing::backward_once(layer, ctx, {&dy, 1}, r.saved, {true});
    EXPECT_EQ(dx[0].data_ptr(), dy.data_ptr());
    EXPECT_FALSE(testing::backward_once(layer, ctx, {&dy, 1}, r.saved, {false})[0].defined());
  }
}

TEST(Dropout, OptionsConfigAndCost) {
  EXPECT_EQ(Dropout().options().p, 0.5);
  const auto made = builtin_layers().create("Dropout", nlohmann::json::object());
  EXPECT_EQ(made->config(), (nlohmann::json{{"p", 0.5}}));
  const Dropout layer({.p = 0.3});
  EXPECT_EQ(layer.config(), (nlohmann::json{{"p", 0.3}}));
  const auto rebuilt = builtin_layers().create(layer.type(), layer.config());
  EXPECT_EQ(rebuilt->type(), "Dropout");
  EXPECT_EQ(rebuilt->config(), layer.config());
  const LayerCost c = layer.cost(std::vector<Shape>{Shape{2, 10}}, DType::f32);
  EXPECT_EQ(c.output_bytes, 80);
  EXPECT_EQ(c.forward_flops, 20);
  EXPECT_EQ(c.saved_bytes, 0) << "the mask is regenerated, not saved";
}

TEST(Dropout, BadOptionsNameTheField) {
  for (double p : {1.0, -0.1, 2.0, std::nan("")}) {
    EXPECT_ERROR_MENTIONS("Dropout: p is", Dropout({.p = p}));
  }
  EXPECT_ERROR_MENTIONS("expected a drop probability in [0, 1)", builtin_layers().create("Dropout", {{"p", 1.0}}));
  EXPECT_ERROR_MENTIONS("field 'p'", builtin_layers().create("Dropout", {{"p", "0.5"}}));
  EXPECT_ERROR_MENTIONS("unknown field 'inplace'", builtin_layers().create("Dropout", {{"inplace", true}}));
  const Shape two[] = {Shape{3}, Shape{3}};
  EXPECT_ERROR_MENTIONS("Dropout: got 2 input(s), expected 1", Dropout().infer_shapes(two));
}

}  // namespace
}  // namespace baton::layers
