// The layers of sequence models on CUDA against the CPU (forward and backward, float32): OneHot of
// [N, T] token ids, Linear over the last dimension of [N, T, features], and SoftmaxCrossEntropy over
// per-position logits [N, T, V] with labels [N, T].
#include <gtest/gtest.h>

#include "layers/linear.h"
#include "layers/loss.h"
#include "layers/one_hot.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

// Ids in [0, classes) (random_tensor draws in [low, high) and truncates to integers).
Tensor ids(const Shape& shape, int64_t classes, DType dtype, const Stream& s, uint64_t seed) {
  return testing::random_tensor(shape, dtype, s, seed, 0.0, static_cast<double>(classes));
}

TEST(SequenceLayersCuda, OneHotMatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (DType index_dtype : {DType::i32, DType::i64}) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(index_dtype) << " to " << dtype_name(dtype));
      EXPECT_TRUE(testing::check_cuda_matches_cpu(OneHot({.classes = 16, .dtype = dtype}),
                                                  {ids(Shape{4, 8}, 16, index_dtype, s, 30)}));
    }
  }
}

TEST(SequenceLayersCuda, LinearOverTheLastDimensionMatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (bool bias : {true, false}) {
    EXPECT_TRUE(testing::check_cuda_matches_cpu(Linear({.in_features = 16, .out_features = 24, .bias = bias}),
                                                {testing::random_tensor(Shape{4, 8, 16}, DType::f32, s, 31)}))
        << "bias " << bias;
  }
}

TEST(SequenceLayersCuda, PerPositionCrossEntropyMatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (double eps : {0.0, 0.1}) {
    const Tensor logits = testing::random_tensor(Shape{4, 8, 16}, DType::f32, s, 32, -4.0, 4.0);
    EXPECT_TRUE(testing::check_cuda_matches_cpu(SoftmaxCrossEntropy({.label_smoothing = eps}),
                                                {logits, ids(Shape{4, 8}, 16, DType::i64, s, 33)}))
        << "eps " << eps;
  }
}

}  // namespace
}  // namespace baton::layers
