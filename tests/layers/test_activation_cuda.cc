// Activation layers on CUDA against the CPU.
#include <gtest/gtest.h>

#include "layers/activation.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(ReLUCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{1}, Shape{1023}, Shape{8, 16, 13, 13}}) {
    EXPECT_TRUE(testing::check_cuda_matches_cpu(ReLU(), {testing::random_tensor(shape, DType::f32, s, 5)}))
        << shape.str();
  }
}

}  // namespace
}  // namespace baton::layers
