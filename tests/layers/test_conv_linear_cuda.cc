// Conv2d and Linear on CUDA against the CPU (forward, input and parameter gradients) in exact float32
// (the check's contexts keep allow_tf32 off). TF32 is covered by the kernel tests, which set it on
// a context. Skipped without a GPU.
#include <gtest/gtest.h>

#include "layers/conv.h"
#include "layers/linear.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

// Outputs are sums of up to 2048 products of values in [-1, 1] (magnitudes up to ~30): float32
// rounding in another order stays far below 1e-4 of that.
const testing::DeviceCheckOptions kTolerance{.rtol = 1e-4, .atol = 1e-4};

TEST(Conv2dCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  struct Case {
    Conv2dOptions options;
    Shape input;
  };
  const Case cases[] = {
      {{.in_channels = 3, .out_channels = 8, .kernel_size = {7, 7}, .stride = {2, 2}, .padding = {3, 3}, .bias = false},
       Shape{2, 3, 32, 32}},
      {{.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}, .padding = {1, 1}}, Shape{4, 16, 14, 14}},
      {{.in_channels = 16, .out_channels = 32, .kernel_size = {1, 1}, .stride = {2, 2}}, Shape{4, 16, 14, 14}},
      {{.in_channels = 8, .out_channels = 8, .kernel_size = {3, 3}, .padding = {2, 2}, .dilation = {2, 2}, .groups = 8},
       Shape{2, 8, 9, 9}},
      {{.in_channels = 6, .out_channels = 4, .kernel_size = {2, 3}, .stride = {1, 2}, .padding = {1, 0}, .groups = 2},
       Shape{1, 6, 7, 8}},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(Conv2d(c.options).config().dump());
    EXPECT_TRUE(testing::check_cuda_matches_cpu(Conv2d(c.options),
                                                {testing::random_tensor(c.input, DType::f32, s, seed++)}, kTolerance));
  }
}

TEST(LinearCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  struct Case {
    LinearOptions options;
    int64_t batch;
  };
  const Case cases[] = {{{.in_features = 2048, .out_features = 1000}, 8},
                        {{.in_features = 7, .out_features = 3, .bias = false}, 5},
                        {{.in_features = 1, .out_features = 1}, 1}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(Linear(c.options).config().dump());
    EXPECT_TRUE(testing::check_cuda_matches_cpu(
        Linear(c.options), {testing::random_tensor(Shape{c.batch, c.options.in_features}, DType::f32, s, seed++)},
        kTolerance));
  }
}

}  // namespace
}  // namespace baton::layers
