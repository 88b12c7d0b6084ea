// Activation layers: float64 gradient checks and shape inference.
#include <gtest/gtest.h>

#include "layers/activation.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(ReLU, GradientCheck) {
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{1}, Shape{7}, Shape{2, 3, 5, 5}}) {
    const Tensor x = testing::random_tensor(shape, DType::f64, s, 3);
    EXPECT_TRUE(testing::check_gradients(ReLU(), {x})) << shape.str();
  }
}

TEST(ReLU, KeepsTheShape) {
  const Shape in[] = {Shape{4, 3, 2, 2}};
  EXPECT_EQ(ReLU().infer_shapes(in)[0], in[0]);
}

}  // namespace
}  // namespace baton::layers
