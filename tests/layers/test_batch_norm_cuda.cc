// BatchNorm2d on CUDA against the CPU: every option, train and eval modes, forward outputs, input
// and parameter gradients and the updated buffers (running statistics, batch counter).
#include <gtest/gtest.h>

#include <string>

#include "layers/batch_norm.h"
#include "tests/layers/batch_norm_test_options.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

TEST(BatchNorm2dCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{8, 16, 13, 13}, Shape{64, 32, 1, 1}, Shape{4, 8, 28, 28}}) {
    batch_norm_test::for_each_option_and_mode(shape, [&](bool affine, bool track, bool freeze, Mode mode) {
      const BatchNorm2d layer({.num_features = shape[1],
                               .eps = 1e-5,
                               .momentum = 0.1,
                               .affine = affine,
                               .track_running_stats = track,
                               .freeze_statistics = freeze});
      const Tensor x = testing::random_tensor(shape, DType::f32, s, 7, -1.0, 3.0);
      // Parameter gradients are sums over N·H·W elements: an absolute tolerance of 1e-4.
      EXPECT_TRUE(testing::check_cuda_matches_cpu(layer, {x}, {.rtol = 1e-4, .atol = 1e-4, .mode = mode}));
    });
  }
}

TEST(BatchNorm2dCuda, MatchesCpuInFloat64) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  const BatchNorm2d layer({.num_features = 6});
  for (Mode mode : {Mode::train, Mode::eval}) {
    const Tensor x = testing::random_tensor(Shape{4, 6, 9, 9}, DType::f64, s, 8, -1.0, 3.0);
    EXPECT_TRUE(testing::check_cuda_matches_cpu(layer, {x}, {.rtol = 1e-10, .atol = 1e-10, .mode = mode}));
  }
}

}  // namespace
}  // namespace baton::layers
