// Structural layers on CUDA against the CPU. Add rounds the same way on both devices and Concat,
// Flatten and Identity only move data, so the results must be the same bits (tolerance 0).
#include <gtest/gtest.h>

#include <vector>

#include "layers/structural.h"
#include "tests/support/layer_check.h"
#include "tests/support/test_support.h"

namespace baton::layers {
namespace {

constexpr testing::DeviceCheckOptions kExact{.rtol = 0, .atol = 0};

std::vector<Tensor> random_inputs(const std::vector<Shape>& shapes, DType dtype, uint64_t seed) {
  const Stream s = Stream::create(Device::cpu());
  std::vector<Tensor> inputs;
  for (const Shape& shape : shapes) inputs.push_back(testing::random_tensor(shape, dtype, s, seed++));
  return inputs;
}

TEST(AddCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  for (const Shape& shape : {Shape{1}, Shape{1023}, Shape{8, 16, 13, 13}}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      EXPECT_TRUE(testing::check_cuda_matches_cpu(Add(), random_inputs({shape, shape}, dtype, 1), kExact))
          << shape.str();
      EXPECT_TRUE(testing::check_cuda_matches_cpu(Add(), random_inputs({shape, shape, shape}, dtype, 4), kExact))
          << shape.str();
    }
  }
}

TEST(ConcatCuda, MatchesCpu) {
  BATON_REQUIRE_GPU();
  const std::vector<std::vector<Shape>> cases = {
      {Shape{3, 2}, Shape{3, 5}},
      {Shape{8, 16, 13, 13}, Shape{8, 3, 13, 13}, Shape{8, 32, 13, 13}},
      {Shape{2, 64, 8, 8}, Shape{2, 64, 8, 8}},
  };
  for (const auto& shapes : cases) {
    for (DType dtype : {DType::f32, DType::f16}) {
      EXPECT_TRUE(testing::check_cuda_matches_cpu(Concat(), random_inputs(shapes, dtype, 10), kExact))
          << shapes[0].str();
    }
  }
}

TEST(FlattenAndIdentityCuda, MatchCpu) {
  BATON_REQUIRE_GPU();
  const std::vector<Tensor> x = random_inputs({Shape{4, 3, 5, 5}}, DType::f32, 20);
  EXPECT_TRUE(testing::check_cuda_matches_cpu(Flatten(), x, kExact));
  EXPECT_TRUE(testing::check_cuda_matches_cpu(Flatten({.start_dim = 0, .end_dim = 2}), x, kExact));
  EXPECT_TRUE(testing::check_cuda_matches_cpu(Identity(), x, kExact));
}

}  // namespace
}  // namespace baton::layers
