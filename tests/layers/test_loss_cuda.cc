// Loss layers on CUDA against the CPU (f32; i32 and i64 labels; with and without label smoothing).
// The incoming gradient is a random device scalar, applied on the device.
#include <gtest/gtest.h>

#include "layers/loss.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(SoftmaxCrossEntropyLayerCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  const int64_t shapes[][2] = {{1, 1}, {32, 10}, {7, 1100}, {256, 1000}};
  for (double eps : {0.0, 0.1}) {
    for (DType label_dtype : {DType::i32, DType::i64}) {
      for (const auto& [rows, classes] : shapes) {
        SCOPED_TRACE(::testing::Message() << "eps " << eps << " labels " << dtype_name(label_dtype) << " [" << rows
                                          << ", " << classes << "]");
        const Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f32, s, 90, -4.0, 4.0);
        Tensor labels = testing::random_tensor(Shape{rows}, label_dtype, s, 91, 0.0, static_cast<double>(classes));
        // One class has one valid label, 0 (random_tensor never returns all zeros).
        if (classes == 1) labels.fill(0.0, s);
        EXPECT_TRUE(testing::check_cuda_matches_cpu(SoftmaxCrossEntropy({.label_smoothing = eps}), {logits, labels}));
      }
    }
  }
}

TEST(MSELossCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{1}, Shape{1023}, Shape{64, 3, 32, 32}}) {
    const Tensor prediction = testing::random_tensor(shape, DType::f32, s, 92);
    const Tensor target = testing::random_tensor(shape, DType::f32, s, 93);
    EXPECT_TRUE(testing::check_cuda_matches_cpu(MSELoss(), {prediction, target})) << shape.str();
  }
}

}  // namespace
}  // namespace baton::layers
