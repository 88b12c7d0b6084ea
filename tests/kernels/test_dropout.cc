// Dropout ops on the CPU against a float64 reference written here (the mask taken straight from the
// definition: keep element i iff philox::to_uniform_float(philox::uint32_at(seed, i)) >= p): every
// floating dtype, several sizes and drop probabilities, the kept fraction, p = 0, backward's mask,
// in-place use, prefixes, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dropout.h"
#include "runtime/core/philox.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::kFloatingDTypes;

constexpr int64_t kDropoutSizes[] = {1, 7, 1023, 4099};
constexpr uint64_t kSeed = 0x5eed'0000'1234'abcdull;

bool naive_keeps(uint64_t seed, int64_t i, double p) {
  return static_cast<double>(philox::to_uniform_float(philox::uint32_at(seed, static_cast<uint64_t>(i)))) >= p;
}

std::vector<double> naive_dropout(const std::vector<double>& x, double p, uint64_t seed) {
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = naive_keeps(seed, static_cast<int64_t>(i), p) ? x[i] / (1 - p) : 0.0;
  return out;
}

class DropoutCpu : public ::testing::Test {
 protected:
  Tensor poisoned(int64_t n, DType dtype) {
    Tensor t = Tensor::empty(Shape{n}, dtype, ctx);
    testing::poison(t, ctx.stream());
    return t;
  }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }

  Context ctx{Device::cpu()};
};

TEST_F(DropoutCpu, ForwardAndBackwardMatchTheDefinition) {
  // 0.25 and 0.5 are exact multiples of 2^-24, where u == p must keep; 2^-24 drops only u = 0.
  for (double p : {0x1p-24, 0.1, 0.25, 0.5, 0.9}) {
    for (DType dtype : kFloatingDTypes) {
      for (int64_t n : kDropoutSizes) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << ", n = " << n << ", p = " << p);
        const std::vector<double> xv = testing::random_values(n, dtype, 21);
        const std::vector<double> expected = naive_dropout(xv, p, kSeed);
        const double tol = testing::default_tolerance(dtype);
        const Tensor x = testing::from_doubles(xv, Shape{n}, dtype, ctx.stream());
        const Tensor out = poisoned(n, dtype), dx = poisoned(n, dtype);
        dropout_forward(ctx, x, p, kSeed, out);
        EXPECT_TRUE(testing::all_close(values(out), expected, tol, tol));
        dropout_backward(ctx, x, p, kSeed, dx);  // the same map applied to dy = x
        EXPECT_TRUE(testing::identical_values(values(dx), values(out)));
        dropout_forward(ctx, x, p, kSeed, x);  // in place
        EXPECT_TRUE(testing::identical_values(values(x), values(out))) << "in place";
      }
    }
  }
}

TEST_F(DropoutCpu, KeptFractionIsOneMinusP) {
  const int64_t n = 200'000;
  const Tensor x = testing::random_tensor(Shape{n}, DType::f32, ctx.stream(), 22, 0.5, 1.5);  // no zeros
  for (double p : {0.1, 0.5, 0.8}) {
    const Tensor out = poisoned(n, DType::f32);
    dropout_forward(ctx, x, p, kSeed + 1, out);
    int64_t kept = 0;
    for (double v : values(out)) kept += v != 0.0;
    // Binomial standard deviation sqrt(p(1 - p) / n) < 0.0012: 0.006 is five of them.
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(n), 1 - p, 0.006) << "p = " << p;
  }
}

TEST_F(DropoutCpu, ZeroProbabilityIsTheIdentity) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = testing::random_tensor(Shape{4099}, dtype, ctx.stream(), 23);
    const Tensor out = poisoned(4099, dtype), dx = poisoned(4099, dtype);
    dropout_forward(ctx, x, 0.0, kSeed, out);
    dropout_backward(ctx, x, 0.0, kSeed, dx);
    EXPECT_TRUE(testing::identical_values(values(out), values(x)));
    EXPECT_TRUE(testing::identical_values(values(dx), values(x)));
  }
}

TEST_F(DropoutCpu, MaskDependsOnTheSeedAndTheIndexOnly) {
  const int64_t n = 1000;
  const Tensor x = testing::random_tensor(Shape{n}, DType::f32, ctx.stream(), 24, 0.5, 1.5);
  const Tensor a = poisoned(n, DType::f32), b = poisoned(n, DType::f32), prefix = poisoned(300, DType::f32);
  dropout_forward(ctx, x, 0.5, kSeed, a);
  dropout_forward(ctx, x, 0.5, kSeed + 1, b);
  dropout_forward(ctx, x.slice(0, 300), 0.5, kSeed, prefix);
  const std::vector<double> av = values(a), bv = values(b);
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i) differ += (av[static_cast<size_t>(i)] == 0) != (bv[static_cast<size_t>(i)] == 0);
  EXPECT_GT(differ, n / 4) << "another seed should give another mask";
  EXPECT_TRUE(testing::identical_values(values(prefix), std::vector<double>(av.begin(), av.begin() + 300)))
      << "a prefix of the tensor draws the prefix of the mask";
  const Tensor shaped = x.reshape(Shape{10, 4, 25}), out3 = Tensor::empty(Shape{10, 4, 25}, DType::f32, ctx);
  dropout_forward(ctx, shaped, 0.5, kSeed, out3);
  EXPECT_TRUE(testing::identical_values(values(out3), av)) << "the shape does not matter, only the index";
}

TEST_F(DropoutCpu, ArgumentErrorsNameTheProblem) {
  const Tensor x = testing::random_tensor(Shape{5}, DType::f32, ctx.stream(), 25), out = poisoned(5, DType::f32);
  for (double p : {1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_ERROR_MENTIONS("argument 'p' is", dropout_forward(ctx, x, p, 1, out));
    EXPECT_ERROR_MENTIONS("expected a drop probability in [0, 1)", dropout_backward(ctx, x, p, 1, out));
  }
  EXPECT_ERROR_MENTIONS("argument 'out' has shape [4], expected [5]",
                        dropout_forward(ctx, x, 0.5, 1, poisoned(4, DType::f32)));
  EXPECT_ERROR_MENTIONS("argument 'dx' has dtype f64", dropout_backward(ctx, x, 0.5, 1, poisoned(5, DType::f64)));
  EXPECT_ERROR_MENTIONS(
      "argument 'x' has dtype i64",
      dropout_forward(ctx, Tensor::empty(Shape{5}, DType::i64, ctx), 0.5, 1, Tensor::empty(Shape{5}, DType::i64, ctx)));
}

}  // namespace
}  // namespace baton::kernels
