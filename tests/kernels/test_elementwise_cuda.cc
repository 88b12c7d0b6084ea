// Elementwise ops on CUDA against the CPU reference: every floating dtype, sizes 1, 7, 1023 and
// 2^20 + 3 (and one size beyond a grid's single pass), poisoned outputs, inputs or outputs that start off 16-byte
// alignment (the kernels' scalar path), in-place use, and casts bit for bit. Skipped without a GPU.
// Sizes 1, 7 and 1023 run every dtype (or cast pair) in every layout: the vector and scalar paths and their tails.
// 2^20 + 3 (many blocks) runs each dtype (or cast pair) in one layout, the next one in turn, so every dtype and every
// layout still meets the large size; the size tests the grid arithmetic, which does not depend on them.
//
// add, sub, mul, scale, the ReLUs, copy and cast do the same IEEE operations on both devices, so
// they must match the CPU exactly; axpby / axpy may differ by rounding (CUDA fuses a·x + b·y).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "runtime/core/cuda/launch.h"
#include "tests/kernels/elementwise_cuda_test.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;
using testing::ElementwiseOp;
using testing::kFloatingDTypes;
using testing::kLayouts;
using testing::Layout;

constexpr int64_t kElementwiseLargeSize = (int64_t{1} << 20) + 3;
constexpr int64_t kSizes[] = {1, 7, 1023, kElementwiseLargeSize};

// Whether size n runs the `combination`-th dtype (or cast pair) in the `layout`-th of `layouts` layouts: the small
// sizes in every layout, the large one in the layout whose turn it is.
bool elementwise_runs(int64_t n, size_t combination, size_t layout, size_t layouts) {
  return n != kElementwiseLargeSize || combination % layouts == layout;
}

const char* layout_name(Layout layout) {
  return layout == Layout::aligned ? "aligned" : (layout == Layout::inputs_offset ? "inputs offset" : "output offset");
}

std::string trace(DType dtype, int64_t n, Layout layout) {
  return std::string(dtype_name(dtype)) + ", n = " + std::to_string(n) + ", " + layout_name(layout);
}

class ElementwiseCuda : public testing::ElementwiseCudaTest {
 protected:
  // For each dtype, size and layout: op on the GPU into a poisoned output against op on the CPU,
  // then on the GPU in place (out = a). tolerance 0: bit for bit.
  void check(const ElementwiseOp& op, bool exact) {
    for (size_t d = 0; d < std::size(kFloatingDTypes); ++d) {
      for (int64_t n : kSizes) {
        for (size_t l = 0; l < std::size(kLayouts); ++l) {
          if (elementwise_runs(n, d, l, std::size(kLayouts))) check_one(op, exact, kFloatingDTypes[d], n, kLayouts[l]);
        }
      }
    }
  }

  void check_one(const ElementwiseOp& op, bool exact, DType dtype, int64_t n, Layout layout) {
    SCOPED_TRACE(trace(dtype, n, layout));
    const Tensor a = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 31);
    const Tensor b = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 32);
    compare_with_cpu(op, a, b, layout,
                     [&](const Tensor& actual, const Tensor& expected) { expect_matches(actual, expected, exact); });
  }

  void expect_matches(const Tensor& actual, const Tensor& expected, bool exact) {
    if (exact) {
      expect_same_bits(actual, expected);
    } else {
      EXPECT_TRUE(testing::tensors_close(actual, expected, gs()));
    }
  }
};

TEST_F(ElementwiseCuda, Add) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { add(c, a, b, o); }, true);
}

// More elements than one grid covers (detail::kMaxBlocks blocks of detail::kBlockSize threads, each
// on one 16-byte vector, 4 floats, or on one element when unaligned): every thread's grid-stride
// loop runs two or more times, so a wrong stride or start shows (the sizes above fit one pass).
TEST_F(ElementwiseCuda, SizesBeyondOneGridPass) {
  const int64_t one_pass = baton::detail::kMaxBlocks * baton::detail::kBlockSize * 4;
  for (Layout layout : {Layout::aligned, Layout::output_offset}) {
    check_one([](Context& c, const Tensor& a, const Tensor& b, const Tensor& out) { kernels::add(c, a, b, out); }, true,
              DType::f32, one_pass + 4003, layout);
  }
}

TEST_F(ElementwiseCuda, Sub) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { sub(c, a, b, o); }, true);
}

TEST_F(ElementwiseCuda, Mul) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { mul(c, a, b, o); }, true);
}

TEST_F(ElementwiseCuda, Scale) {
  check([](Context& c, const Tensor& a, const Tensor&, const Tensor& o) { scale(c, a, -0.3, o); }, true);
}

TEST_F(ElementwiseCuda, Axpby) {
  check([](Context& c, const Tensor& a, const Tensor& b, const Tensor& o) { axpby(c, 0.75, a, -1.5, b, o); }, false);
}

TEST_F(ElementwiseCuda, ReluForward) {
  check([](Context& c, const Tensor& a, const Tensor&, const Tensor& o) { relu_forward(c, a, o); }, true);
}

TEST_F(ElementwiseCuda, ReluBackward) {
  check([](Context& c, const Tensor& y, const Tensor& dy, const Tensor& dx) { relu_backward(c, y, dy, dx); }, true);
}

TEST_F(ElementwiseCuda, Copy) {
  check([](Context& c, const Tensor& a, const Tensor&, const Tensor& o) { copy(c, a, o); }, true);
}

TEST_F(ElementwiseCuda, Axpy) {
  for (size_t d = 0; d < std::size(kFloatingDTypes); ++d) {
    const DType dtype = kFloatingDTypes[d];
    for (int64_t n : kSizes) {
      for (size_t l = 0; l < std::size(kLayouts); ++l) {
        if (!elementwise_runs(n, d, l, std::size(kLayouts))) continue;
        const Layout layout = kLayouts[l];  // inputs_offset: x off alignment; output_offset: y (the output)
        SCOPED_TRACE(trace(dtype, n, layout));
        const Tensor x = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 33);
        const Tensor y = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 34);
        const Tensor gx = copy_to(x, gs(), layout == Layout::inputs_offset);
        const Tensor gy = copy_to(y, gs(), layout == Layout::output_offset);
        axpy(cpu, -2.5, x, y);
        axpy(*gpu, -2.5, gx, gy);
        EXPECT_TRUE(testing::tensors_close(gy, y, gs()));
      }
    }
  }
}

TEST_F(ElementwiseCuda, ReluSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x =
        testing::from_doubles({-0.0, nan, inf, -inf, 2.0, -2.0, 0.0, 1.0, -1.0}, Shape{9}, dtype, cpu.stream());
    const Tensor expected = Tensor::empty(Shape{9}, dtype, cpu);
    relu_forward(cpu, x, expected);
    const Tensor out = testing::poisoned(Shape{9}, dtype, gs());
    relu_forward(*gpu, copy_to(x, gs()), out);
    EXPECT_EQ(testing::bytes_of(out, gs()), testing::bytes_of(expected, cpu.stream()));  // +0 for -0, NaN kept
  }
}

TEST_F(ElementwiseCuda, FillEveryDtypeAlignedOrNot) {
  for (size_t d = 0; d < std::size(kAllDTypes); ++d) {
    const DType dtype = kAllDTypes[d];
    for (int64_t n : kSizes) {
      for (bool offset : {false, true}) {
        if (!elementwise_runs(n, d, offset ? 1 : 0, 2)) continue;
        SCOPED_TRACE(trace(dtype, n, offset ? Layout::output_offset : Layout::aligned));
        const Tensor t = testing::poisoned(Shape{n}, dtype, gs(), offset);
        fill(*gpu, t, 3.0);
        EXPECT_EQ(testing::to_doubles(t, gs()), std::vector<double>(static_cast<size_t>(n), 3.0));
      }
    }
  }
}

TEST_F(ElementwiseCuda, CastMatchesTheCpuBitForBit) {
  size_t pair = 0;
  for (DType from : kFloatingDTypes) {
    for (DType to : kFloatingDTypes) {
      ++pair;
      for (int64_t n : kSizes) {
        for (size_t l = 0; l < std::size(kLayouts); ++l) {
          if (!elementwise_runs(n, pair, l, std::size(kLayouts))) continue;
          const Layout layout = kLayouts[l];
          SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + trace(to, n, layout));
          // Magnitudes from 2^-30 to 2^20: f16 subnormals, underflow and overflow are all reached.
          std::vector<double> raw = testing::random_values(n, DType::f64, 35);
          for (size_t i = 0; i < raw.size(); ++i) raw[i] = std::ldexp(raw[i], static_cast<int>(i % 51) - 30);
          const Tensor src = testing::from_doubles(raw, Shape{n}, from, cpu.stream());
          const Tensor expected = Tensor::empty(Shape{n}, to, cpu);
          cast(cpu, src, expected);
          const Tensor out = testing::poisoned(Shape{n}, to, gs(), layout == Layout::output_offset);
          cast(*gpu, copy_to(src, gs(), layout == Layout::inputs_offset), out);
          expect_matches(out, expected, true);
        }
      }
    }
  }
}

TEST_F(ElementwiseCuda, CastFromF64RoundsOnceLikeTheCpu) {
  // Values where f64 -> f32 -> f16/bf16 (double rounding) differs from one rounding, and edge cases.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {1 + 0x1p-11 + 0x1p-40,
                                      -(1 + 0x1p-11 + 0x1p-40),
                                      1 + 0x1p-8 + 0x1p-40,
                                      1 + 0x1p-11,
                                      1 + 3 * 0x1p-11,
                                      0x1p-25 + 0x1p-54,
                                      0x1p-14 - 0x1p-25 - 0x1p-60,
                                      65519.0,
                                      65520.0,
                                      -70000.0,
                                      1e300,
                                      -1e-300,
                                      inf,
                                      -0.0,
                                      0x1p-149 * 0.75};
  const auto n = static_cast<int64_t>(values.size());
  const Tensor src = testing::from_doubles(values, Shape{n}, DType::f64, cpu.stream());
  for (DType to : {DType::f32, DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(to));
    const Tensor expected = Tensor::empty(Shape{n}, to, cpu);
    cast(cpu, src, expected);
    const Tensor out = testing::poisoned(Shape{n}, to, gs());
    cast(*gpu, copy_to(src, gs()), out);
    expect_matches(out, expected, true);
    // One rounding: 1 + 2^-11 + 2^-40 is nearer 1 + 2^-10 than 1 in f16.
    if (to == DType::f16) {
      EXPECT_EQ(testing::to_doubles(out, gs()).at(0), 1 + 0x1p-10);
    }
  }
}

TEST_F(ElementwiseCuda, ArgumentsOnAnotherDeviceAreErrors) {
  const Tensor host = testing::random_tensor(Shape{4}, DType::f32, cpu.stream(), 36);
  const Tensor device = copy_to(host, gs());
  EXPECT_ERROR_MENTIONS("add: argument 'b' is on cpu:0 but the op runs on cuda:0", add(*gpu, device, host, device));
  EXPECT_ERROR_MENTIONS("cast: argument 'out' is on cuda:0", cast(cpu, host, device));
}

}  // namespace
}  // namespace baton::kernels
