// Pooling layers on CUDA against the CPU: forward outputs and input gradients over several
// geometries, f32 and f64.
#include <gtest/gtest.h>

#include <vector>

#include "layers/pooling.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

const Shape kShapes[] = {Shape{2, 3, 9, 9}, Shape{8, 16, 32, 32}, Shape{1, 1, 7, 1023}};

// check_cuda_matches_cpu for `layer` on every shape of kShapes in f32 and f64 (random inputs of `seed`).
void expect_matches_cpu_on_every_shape(const Layer& layer, uint64_t seed) {
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : kShapes) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(layer.config().dump() + " " + shape.str());
      EXPECT_TRUE(testing::check_cuda_matches_cpu(layer, {testing::random_tensor(shape, dtype, s, seed)}));
    }
  }
}

TEST(PoolingCuda, MaxPool2dMatchesCpu) {
  BATON_REQUIRE_GPU();
  const MaxPool2dOptions variants[] = {
      {.kernel_size = {2, 2}},
      {.kernel_size = {3, 3}, .stride = {{2, 2}}, .padding = {1, 1}},
      {.kernel_size = {3, 3}, .stride = {{2, 2}}, .padding = {1, 1}, .ceil_mode = true},
      {.kernel_size = {3, 2}, .stride = {{1, 2}}, .padding = {1, 1}, .dilation = {2, 1}, .ceil_mode = true},
  };
  for (const MaxPool2dOptions& o : variants) {
    expect_matches_cpu_on_every_shape(MaxPool2d(o), 9);
  }
}

TEST(PoolingCuda, AvgPool2dMatchesCpu) {
  BATON_REQUIRE_GPU();
  for (bool count_include_pad : {true, false}) {
    const AvgPool2dOptions variants[] = {
        {.kernel_size = {2, 2}, .count_include_pad = count_include_pad},
        {.kernel_size = {3, 3}, .stride = {{2, 2}}, .padding = {1, 1}, .count_include_pad = count_include_pad},
        {.kernel_size = {3, 2},
         .stride = {{2, 1}},
         .padding = {1, 1},
         .ceil_mode = true,
         .count_include_pad = count_include_pad},
    };
    for (const AvgPool2dOptions& o : variants) {
      expect_matches_cpu_on_every_shape(AvgPool2d(o), 10);
    }
  }
}

TEST(PoolingCuda, AdaptiveAvgPool2dMatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  for (const Shape& shape : {Shape{2, 3, 9, 9}, Shape{64, 512, 7, 7}, Shape{1, 2, 224, 224}}) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(shape.str());
      EXPECT_TRUE(testing::check_cuda_matches_cpu(AdaptiveAvgPool2d(), {testing::random_tensor(shape, dtype, s, 11)}));
    }
  }
}

TEST(PoolingCuda, AdaptiveAvgPool2dToAnyOutputSizeMatchesCpu) {
  BATON_REQUIRE_GPU();
  const Stream s = Stream::create(Device::cpu());
  // VGG's 7x7 and AlexNet's 6x6 over their feature maps and over smaller and larger inputs.
  const std::array<int64_t, 2> sizes[] = {{7, 7}, {6, 6}, {3, 5}};
  for (const std::array<int64_t, 2>& size : sizes) {
    for (const Shape& shape : {Shape{2, 3, 9, 9}, Shape{4, 512, 7, 7}, Shape{2, 256, 13, 13}, Shape{3, 4, 1, 2}}) {
      for (DType dtype : {DType::f32, DType::f64}) {
        const AdaptiveAvgPool2d layer({.output_size = size});
        SCOPED_TRACE(layer.config().dump() + " " + shape.str());
        EXPECT_TRUE(testing::check_cuda_matches_cpu(layer, {testing::random_tensor(shape, dtype, s, 12)}));
      }
    }
  }
}

}  // namespace
}  // namespace baton::layers
