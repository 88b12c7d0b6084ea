// Dropout on CUDA against the CPU: with one seed both devices draw the same mask, so outputs and
// input gradients must be the same bits (tolerance 0), in train and eval mode.
#include <gtest/gtest.h>

#include "layers/dropout.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(DropoutCuda, SameMaskAndBitsAsTheCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (double p : {0.0, 0.1, 0.5, 0.9}) {
    for (Mode mode : {Mode::train, Mode::eval}) {
      for (const Shape& shape : {Shape{1}, Shape{1023}, Shape{8, 16, 13, 13}}) {
        for (uint64_t seed : {uint64_t{1}, uint64_t{0xabcdef0123456789ull}}) {
          SCOPED_TRACE(::testing::Message()
                       << "p " << p << (mode == Mode::train ? " train " : " eval ") << shape.str() << " seed " << seed);
          const Tensor x = testing::random_tensor(shape, DType::f32, s, 80);
          EXPECT_TRUE(testing::check_cuda_matches_cpu(Dropout({.p = p}), {x},
                                                      {.rtol = 0, .atol = 0, .mode = mode, .seed = seed}));
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::layers
