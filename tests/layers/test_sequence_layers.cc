// The layers of sequence models on the CPU: OneHot's values and bad indices, Linear over the last
// dimension of [N, T, features], and SoftmaxCrossEntropy over per-position labels [N, T] — float64
// gradient checks against finite differences, and equality with the same rows as [N T, ...].
#include <gtest/gtest.h>

#include <vector>

#include "layers/linear.h"
#include "layers/loss.h"
#include "layers/one_hot.h"
#include "runtime/core/error.h"
#include "tests/layers/layer_test_util.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

Tensor labels_of(const std::vector<int64_t>& values, const Shape& shape, const Stream& s) {
  return Tensor::from_vector<int64_t>(values, shape, s);
}

TEST(OneHotLayer, EachIndexBecomesARowWithAOneAtIt) {
  Context ctx(Device::cpu());
  const OneHot layer({.classes = 4, .dtype = DType::f64});
  const Tensor ids = labels_of({3, 0, 1, 3, 2, 0}, Shape{2, 3}, ctx.stream());
  const std::vector<Tensor> inputs{ids};
  const ForwardResult r = testing::forward_once(layer, ctx, inputs);
  ASSERT_EQ(r.outputs[0].shape(), Shape({2, 3, 4}));
  const std::vector<double> y = r.outputs[0].to_vector<double>(ctx.stream());
  const std::vector<int64_t> expected_ids{3, 0, 1, 3, 2, 0};
  for (size_t row = 0; row < 6; ++row) {
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(y[row * 4 + static_cast<size_t>(c)], c == expected_ids[row] ? 1.0 : 0.0) << row << " " << c;
    }
  }
  EXPECT_EQ(layer.infer_dtypes(std::vector<DType>{DType::i64})[0], DType::f64);
  const std::vector<Tensor> bad{labels_of({1, 4}, Shape{2}, ctx.stream())};
  EXPECT_ERROR_MENTIONS("one_hot: argument 'indices' has 1 value(s) outside [0, 4), the first is 4 at position 1",
                        testing::forward_once(layer, ctx, bad));
  EXPECT_ERROR_MENTIONS("OneHot: the input has dtype f32, expected i32 or i64",
                        layer.infer_dtypes(std::vector<DType>{DType::f32}));
  EXPECT_ERROR_MENTIONS("OneHot: classes is 0, expected at least 1", OneHot({.classes = 0}));
}

TEST(SequenceLayers, LinearOverTheLastDimensionPassesTheGradientCheck) {
  Context ctx(Device::cpu());
  const Linear layer({.in_features = 4, .out_features = 3});
  EXPECT_EQ(layer.infer_shapes(std::vector<Shape>{Shape{2, 5, 4}})[0], Shape({2, 5, 3}));
  const Tensor x = testing::random_tensor(Shape{2, 5, 4}, DType::f64, ctx.stream(), 11);
  EXPECT_TRUE(testing::check_gradients(layer, {x}));
}

TEST(SequenceLayers, PerPositionCrossEntropyPassesTheGradientCheckAndEqualsTheFlatRows) {
  Context ctx(Device::cpu());
  const SoftmaxCrossEntropy layer;
  EXPECT_EQ(layer.infer_shapes(std::vector<Shape>{Shape{2, 3, 5}, Shape{2, 3}})[0], Shape{});
  const Tensor logits = testing::random_tensor(Shape{2, 3, 5}, DType::f64, ctx.stream(), 5);
  const Tensor labels = labels_of({4, 0, 2, 1, 3, 3}, Shape{2, 3}, ctx.stream());
  EXPECT_TRUE(testing::check_gradients(layer, {logits, labels}));
  // The mean over all positions: the loss of the same six rows as [6, 5] with labels [6].
  const std::vector<Tensor> per_position{logits, labels}, rows{logits.reshape(Shape{6, 5}), labels.reshape(Shape{6})};
  const ForwardResult seq = testing::forward_once(layer, ctx, per_position);
  const ForwardResult flat = testing::forward_once(layer, ctx, rows);
  EXPECT_EQ(seq.outputs[0].to_vector<double>(ctx.stream()), flat.outputs[0].to_vector<double>(ctx.stream()));
  const std::vector<Shape> wrong{Shape{2, 3, 5}, Shape{2, 4}};
  EXPECT_ERROR_MENTIONS("the labels (input 1) have shape [2, 4], expected [2, 3]", layer.infer_shapes(wrong));
}

}  // namespace
}  // namespace baton::layers
