// Matrix products on the CPU against naive float64 loops: every transpose combination, several
// sizes (including 1 and K = 0), alpha, beta = 0 into a poisoned output and beta != 0 accumulating,
// f32 and f64; argument errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "tests/kernels/gemm_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

class GemmCpu : public ::testing::Test {
 protected:
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }
  Context ctx{Device::cpu()};
};

TEST_F(GemmCpu, MatchesNaiveLoopsForEveryTransposeAndBeta) {
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const testing::GemmCase& g : testing::gemm_cases()) {
      SCOPED_TRACE(testing::gemm_case_name(g, dtype));
      const testing::GemmOperands in = testing::gemm_operands(g, dtype, ctx.stream());
      const Tensor out = in.out_initial.to(Device::cpu(), ctx.stream());
      if (g.beta == 0) testing::poison(out, ctx.stream());
      matmul(ctx, in.a, in.b, out, g.transpose_a, g.transpose_b, g.alpha, g.beta);
      const double tol = dtype == DType::f64 ? 1e-12 : 1e-6 * static_cast<double>(g.k + 1);
      EXPECT_TRUE(testing::all_close(values(out), testing::gemm_reference(g, in, ctx.stream()), tol, tol));
    }
  }
}

TEST_F(GemmCpu, EmptyInnerDimensionScalesTheOutput) {
  const Tensor a = Tensor::empty(Shape{3, 0}, DType::f64, ctx), b = Tensor::empty(Shape{0, 2}, DType::f64, ctx);
  const Tensor out = testing::random_tensor(Shape{3, 2}, DType::f64, ctx.stream(), 1);
  std::vector<double> expected = values(out);
  for (double& v : expected) v *= 2;
  matmul(ctx, a, b, out, false, false, 1.0, 2.0);
  EXPECT_TRUE(testing::identical_values(values(out), expected));
  testing::poison(out, ctx.stream());
  matmul(ctx, a, b, out, false, false);
  EXPECT_TRUE(testing::identical_values(values(out), std::vector<double>(6, 0.0)));
}

TEST_F(GemmCpu, RejectsBadArguments) {
  const Tensor a = testing::random_tensor(Shape{3, 4}, DType::f32, ctx.stream(), 2);
  const Tensor b = testing::random_tensor(Shape{5, 2}, DType::f32, ctx.stream(), 3);
  const Tensor out = Tensor::empty(Shape{3, 2}, DType::f32, ctx);
  EXPECT_ERROR_MENTIONS(
      "matmul: inner dimensions differ: 'a' has shape [3, 4] giving K = 4, 'b' has shape [5, 2] giving K = 5",
      matmul(ctx, a, b, out, false, false));
  EXPECT_ERROR_MENTIONS(
      "matmul: argument 'out' has shape [3, 2], expected [4, 2] (M from 'a', N from 'b')",
      matmul(ctx, a, testing::random_tensor(Shape{2, 3}, DType::f32, ctx.stream(), 7), out, true, true));
  EXPECT_ERROR_MENTIONS("argument 'b' has shape [5, 2, 1], expected 2 dimensions",
                        matmul(ctx, a, b.reshape(Shape{5, 2, 1}), out, false, false));
  EXPECT_ERROR_MENTIONS("argument 'out' has dtype f64, expected f32",
                        matmul(ctx, a, testing::random_tensor(Shape{4, 2}, DType::f32, ctx.stream(), 4),
                               Tensor::empty(Shape{3, 2}, DType::f64, ctx), false, false));
  EXPECT_ERROR_MENTIONS("argument 'a' has dtype bf16, expected one of f32, f64",
                        matmul(ctx, Tensor::empty(Shape{3, 4}, DType::bf16, ctx), b, out, false, false));
  const Tensor square = testing::random_tensor(Shape{3, 3}, DType::f32, ctx.stream(), 5);
  EXPECT_ERROR_MENTIONS("argument 'out' overlaps argument 'a'", matmul(ctx, square, square, square, false, false));
}

TEST_F(GemmCpu, NoLibraryCallOnTheCpu) {
  const Tensor a = testing::random_tensor(Shape{3, 3}, DType::f32, ctx.stream(), 6);
  EXPECT_FALSE(matmul_library_call(ctx, a, a, Tensor::empty(Shape{3, 3}, DType::f32, ctx), false, false));
}

}  // namespace
}  // namespace baton::kernels
