// Activation ops on CUDA against the CPU reference: every floating dtype, sizes 1, 7, 1023 and
// 2^20 + 3, poisoned outputs, inputs or outputs that start off 16-byte alignment (the scalar path),
// in-place use. Skipped without a GPU.
//
// relu6 forward and every backward (no transcendental; the formulas leave no multiply-add to fuse)
// and scale_by_scalar must match the CPU bit for bit; sigmoid and tanh forward go through the
// device's expf / tanhf (within 2 ulp), so they are compared with a tolerance of a few ulps of the
// dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "tests/kernels/elementwise_cuda_test.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::ElementwiseOp;
using testing::kFloatingDTypes;

// Where a check's tensors start; copy_to places the inputs of the tests that make their own.
using testing::copy_to;
using testing::kLayouts;
using testing::Layout;

constexpr int64_t kActivationSizes[] = {1, 7, 1023, (int64_t{1} << 20) + 3};

// A few ulps of the dtype (relative), for results of the device's transcendental functions.
double ulps_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return 1e-14;
    case DType::f32:
      return 1e-6;
    case DType::f16:
      return 2e-3;
    default:
      return 1.6e-2;
  }
}

struct Range {
  double low, high;
};

class ActivationCuda : public testing::ElementwiseCudaTest {
 protected:
  // For each dtype, size and layout: op on the GPU into a poisoned output against op on the CPU,
  // then on the GPU in place (out = a). exact: bit for bit.
  void check(const ElementwiseOp& op, Range a_range, Range b_range, bool exact) {
    for (DType dtype : kFloatingDTypes) {
      for (int64_t n : kActivationSizes) {
        for (Layout layout : kLayouts) {
          SCOPED_TRACE(::testing::Message()
                       << dtype_name(dtype) << ", n = " << n << ", layout " << static_cast<int>(layout));
          const Tensor a = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 51, a_range.low, a_range.high);
          const Tensor b = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 52, b_range.low, b_range.high);
          compare_with_cpu(op, a, b, layout, [&](const Tensor& actual, const Tensor& expected) {
            expect_matches(actual, expected, exact);
          });
        }
      }
    }
  }

  void expect_matches(const Tensor& actual, const Tensor& expected, bool exact) {
    if (exact) {
      expect_same_bits(actual, expected);
    } else {
      const double tol = ulps_tolerance(actual.dtype());
      EXPECT_TRUE(testing::tensors_close(actual, expected, gs(), tol, tol));
    }
  }
};

TEST_F(ActivationCuda, Relu6Forward) {
  check([](Context& c, const Tensor& x, const Tensor&, const Tensor& o) { relu6_forward(c, x, o); }, {-3, 9}, {-1, 1},
        true);
}

TEST_F(ActivationCuda, Relu6Backward) {
  check([](Context& c, const Tensor& x, const Tensor& dy, const Tensor& dx) { relu6_backward(c, x, dy, dx); }, {-3, 9},
        {-1, 1}, true);
}

TEST_F(ActivationCuda, SigmoidForward) {
  check([](Context& c, const Tensor& x, const Tensor&, const Tensor& o) { sigmoid_forward(c, x, o); }, {-12, 12},
        {-1, 1}, false);
}

TEST_F(ActivationCuda, SigmoidBackward) {
  check([](Context& c, const Tensor& y, const Tensor& dy, const Tensor& dx) { sigmoid_backward(c, y, dy, dx); }, {0, 1},
        {-2, 2}, true);
}

TEST_F(ActivationCuda, TanhForward) {
  check([](Context& c, const Tensor& x, const Tensor&, const Tensor& o) { tanh_forward(c, x, o); }, {-4, 4}, {-1, 1},
        false);
}

TEST_F(ActivationCuda, TanhBackward) {
  check([](Context& c, const Tensor& y, const Tensor& dy, const Tensor& dx) { tanh_backward(c, y, dy, dx); }, {-1, 1},
        {-2, 2}, true);
}

TEST_F(ActivationCuda, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  using Forward = void (*)(Context&, const Tensor&, const Tensor&);
  // ReLU6 at its boundaries, and inputs where sigmoid and tanh saturate to exact values (0, 1/2, 1,
  // ±1, ±0) or give NaN: the same bits on both devices.
  const std::vector<double> relu6_x = {-1.0, -0.0, 0.0, 3.0, 6.0, 7.0, nan, inf, -inf};
  const std::vector<double> saturating_x = {-1e4, 1e4, inf, -inf, 0.0, -0.0, nan};
  const struct {
    Forward f;
    const std::vector<double>& x;
  } cases[] = {{relu6_forward, relu6_x}, {sigmoid_forward, saturating_x}, {tanh_forward, saturating_x}};
  for (DType dtype : kFloatingDTypes) {
    for (const auto& c : cases) {
      SCOPED_TRACE(dtype_name(dtype));
      const auto n = static_cast<int64_t>(c.x.size());
      const Tensor cx = testing::from_doubles(c.x, Shape{n}, dtype, cpu.stream());
      const Tensor expected = Tensor::empty(Shape{n}, dtype, cpu), out = testing::poisoned(Shape{n}, dtype, gs());
      c.f(cpu, cx, expected);
      c.f(*gpu, copy_to(cx, gs()), out);
      EXPECT_TRUE(
          testing::identical_values(testing::to_doubles(out, gs()), testing::to_doubles(expected, cpu.stream())));
    }
    const auto n = static_cast<int64_t>(relu6_x.size());
    const Tensor cx = testing::from_doubles(relu6_x, Shape{n}, dtype, cpu.stream());
    const Tensor dy = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 53);
    const Tensor expected = Tensor::empty(Shape{n}, dtype, cpu), out = testing::poisoned(Shape{n}, dtype, gs());
    relu6_backward(cpu, cx, dy, expected);
    relu6_backward(*gpu, copy_to(cx, gs()), copy_to(dy, gs()), out);
    EXPECT_EQ(testing::bytes_of(out, gs()), testing::bytes_of(expected, cpu.stream()));
  }
}

TEST_F(ActivationCuda, ScaleByScalarReadsTheScalarOnTheDevice) {
  for (DType dtype : kFloatingDTypes) {
    for (DType scalar_dtype : {DType::f32, DType::f64}) {
      for (int64_t n : kActivationSizes) {
        for (Layout layout : kLayouts) {
          SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " by " << dtype_name(scalar_dtype) << ", n = " << n
                                            << ", layout " << static_cast<int>(layout));
          const Tensor x = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 54);
          const Tensor s = testing::from_doubles({-0.37}, Shape{}, scalar_dtype, cpu.stream());
          const Tensor expected = Tensor::empty(Shape{n}, dtype, cpu);
          scale_by_scalar(cpu, x, s, 1.7, expected);
          const Tensor gx = copy_to(x, gs(), layout == Layout::inputs_offset);
          const Tensor out = testing::poisoned(Shape{n}, dtype, gs(), layout == Layout::output_offset);
          scale_by_scalar(*gpu, gx, copy_to(s, gs()), 1.7, out);
          expect_matches(out, expected, true);
        }
      }
    }
  }
}

TEST_F(ActivationCuda, ArgumentsOnAnotherDeviceAreErrors) {
  const Tensor x = testing::poisoned(Shape{3}, DType::f32, gs()), out = testing::poisoned(Shape{3}, DType::f32, gs());
  const Tensor host_scalar = testing::from_doubles({2.0}, Shape{}, DType::f32, cpu.stream());
  EXPECT_ERROR_MENTIONS("argument 'scalar' is on cpu", scale_by_scalar(*gpu, x, host_scalar, out));
  EXPECT_ERROR_MENTIONS("argument 'x' is on cuda", sigmoid_forward(cpu, x, Tensor::empty(Shape{3}, DType::f32, cpu)));
}

}  // namespace
}  // namespace baton::kernels
