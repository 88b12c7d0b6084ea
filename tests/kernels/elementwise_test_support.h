// Shared by the CPU elementwise and activation tests: the sizes they run, special values, an op under
// test with its float64 reference, and the elementwise tests' fixture.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton::kernels::elementwise_test {

inline constexpr int64_t kSizes[] = {1, 7, 1023, 4099};
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An op under test on (a, b, out); unary ops ignore b.
using Op = std::function<void(Context&, const Tensor& a, const Tensor& b, const Tensor& out)>;
// Its float64 reference, element by element.
using Ref = std::function<double(double a, double b)>;

class ElementwiseCpu : public ::testing::Test {
 protected:
  Tensor tensor(const std::vector<double>& values, DType dtype) {
    return testing::from_doubles(values, Shape{static_cast<int64_t>(values.size())}, dtype, ctx.stream());
  }
  Tensor poisoned(const Shape& shape, DType dtype) { return testing::poisoned(shape, dtype, ctx.stream()); }
  std::vector<double> values(const Tensor& t) { return testing::to_doubles(t, ctx.stream()); }

  // For each dtype and size: op(a, b) into a poisoned out, then in place into a and into b; each
  // against ref(a[i], b[i]). A negative tolerance means testing::default_tolerance of the dtype.
  void check(const Op& op, const Ref& ref, double tolerance = -1.0) {
    for (DType dtype : testing::kFloatingDTypes) {
      for (int64_t n : kSizes) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
        const std::vector<double> av = testing::random_values(n, dtype, 1), bv = testing::random_values(n, dtype, 2);
        std::vector<double> expected(av.size());
        for (size_t i = 0; i < av.size(); ++i) expected[i] = ref(av[i], bv[i]);
        const double tol = tolerance < 0 ? testing::default_tolerance(dtype) : tolerance;

        const Tensor a = tensor(av, dtype), b = tensor(bv, dtype), out = poisoned(Shape{n}, dtype);
        op(ctx, a, b, out);
        EXPECT_TRUE(testing::all_close(values(out), expected, tol, tol));
        EXPECT_EQ(values(a), av) << "an input changed";
        EXPECT_EQ(values(b), bv) << "an input changed";

        op(ctx, a, b, a);
        EXPECT_TRUE(testing::all_close(values(a), expected, tol, tol)) << "in place, out = a";
        const Tensor a2 = tensor(av, dtype);
        op(ctx, a2, b, b);
        EXPECT_TRUE(testing::all_close(values(b), expected, tol, tol)) << "in place, out = b";
      }
    }
  }

  Context ctx{Device::cpu()};
};

}  // namespace baton::kernels::elementwise_test
