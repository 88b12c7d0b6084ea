// Bias ops on the CPU against float64 references: [N, C], [N, C, L] and [N, C, H, W] tensors, every
// floating dtype, the gradient accumulating onto random values; argument errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/bias.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::kFloatingDTypes;

const Shape kShapes[] = {Shape{4, 3}, Shape{1, 1}, Shape{2, 5, 7}, Shape{3, 4, 5, 6}, Shape{2, 3, 1, 1}};

int64_t channel_of(const Shape& s, size_t i) {
  const int64_t inner = s.numel() / (s[0] * s[1]);
  return static_cast<int64_t>(i) / inner % s[1];
}

class BiasCpu : public ::testing::Test {
 protected:
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }
  Context ctx{Device::cpu()};
};

TEST_F(BiasCpu, AddMatchesTheReference) {
  for (DType dtype : kFloatingDTypes) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.str());
      const Tensor out = testing::random_tensor(shape, dtype, ctx.stream(), 1);
      const Tensor bias = testing::random_tensor(Shape{shape[1]}, dtype, ctx.stream(), 2);
      std::vector<double> expected = values(out);
      const std::vector<double> b = values(bias);
      for (size_t i = 0; i < expected.size(); ++i) expected[i] += b[static_cast<size_t>(channel_of(shape, i))];
      bias_add(ctx, bias, out);
      const double tol = testing::default_tolerance(dtype);
      EXPECT_TRUE(testing::all_close(values(out), expected, tol, tol));
    }
  }
}

TEST_F(BiasCpu, GradientAccumulatesChannelSums) {
  for (DType dtype : kFloatingDTypes) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.str());
      const Tensor dy = testing::random_tensor(shape, dtype, ctx.stream(), 3);
      const Tensor db = testing::random_tensor(Shape{shape[1]}, dtype, ctx.stream(), 4);
      std::vector<double> expected = values(db);
      const std::vector<double> g = values(dy);
      for (size_t i = 0; i < g.size(); ++i) expected[static_cast<size_t>(channel_of(shape, i))] += g[i];
      bias_grad(ctx, dy, db);
      // The sum is rounded to db's dtype, then added in float: two roundings for f16 / bf16.
      const double tol = 2 * testing::default_tolerance(dtype) * 4;
      EXPECT_TRUE(testing::all_close(values(db), expected, tol, tol));
    }
  }
}

TEST_F(BiasCpu, RejectsBadArguments) {
  const Tensor out = Tensor::empty(Shape{2, 3, 4}, DType::f32, ctx);
  EXPECT_ERROR_MENTIONS("bias_add: argument 'bias' has shape [4], expected [3] (dimension 1 of 'out', shape [2, 3, 4])",
                        bias_add(ctx, Tensor::empty(Shape{4}, DType::f32, ctx), out));
  EXPECT_ERROR_MENTIONS(
      "bias_add: argument 'out' has shape [3], expected at least 2 dimensions",
      bias_add(ctx, Tensor::empty(Shape{3}, DType::f32, ctx), Tensor::empty(Shape{3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("bias_grad: argument 'db' has dtype f64, expected f32",
                        bias_grad(ctx, out, Tensor::empty(Shape{3}, DType::f64, ctx)));
  EXPECT_ERROR_MENTIONS(
      "bias_grad: argument 'dy' has dtype i32",
      bias_grad(ctx, Tensor::empty(Shape{2, 3}, DType::i32, ctx), Tensor::empty(Shape{3}, DType::i32, ctx)));
}

}  // namespace
}  // namespace baton::kernels
