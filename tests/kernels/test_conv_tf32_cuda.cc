// TF32 in cuDNN's convolutions: off by default, and what allowing it changes. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::ConvCase;
using testing::copy_to;

class ConvTf32Cuda : public testing::CudaOpTest {};

// TF32 is off by default for convolutions (docs/kernels.md, "TF32"): a context as made searches and
// runs exact float32 algorithms (cuDNN's FMA math), and its error to the float64 CPU reference stays
// at float32's. Allowed, TF32 may be chosen: when the measured search picks a tensor-core algorithm,
// the 10-bit input rounding is visible (far above exact float32's over C·R·S = 1152 products). cuDNN
// may also measure an FMA algorithm fastest (an H200 did for 64 channels at 14x14); then the result
// must still be float32's.
TEST_F(ConvTf32Cuda, IsOffByDefaultAndVisibleWhenChosen) {
  const ConvCase big{"128 channels 3x3", Shape{2, 128, 14, 14}, Shape{128, 128, 3, 3}, {.padding = {1, 1}}};
  const Shape ys = conv2d_output_shape(big.x, big.w, big.params);
  const Tensor x = testing::random_tensor(big.x, DType::f32, cpu.stream(), 50);
  const Tensor w = testing::random_tensor(big.w, DType::f32, cpu.stream(), 51);
  const Tensor x64 = Tensor::empty(big.x, DType::f64, cpu), w64 = Tensor::empty(big.w, DType::f64, cpu);
  cast(cpu, x, x64);
  cast(cpu, w, w64);
  const Tensor y64 = Tensor::empty(ys, DType::f64, cpu);
  conv2d_forward(cpu, x64, w64, Tensor(), big.params, y64);
  const std::vector<double> want = testing::to_doubles(y64, cpu.stream());
  const auto forward_error = [&](Context& ctx) {
    const Tensor y = testing::poisoned(ys, DType::f32, ctx.stream());
    conv2d_forward(ctx, copy_to(x, ctx.stream()), copy_to(w, ctx.stream()), Tensor(), big.params, y);
    const std::vector<double> got = testing::to_doubles(y, ctx.stream());
    double err = 0, scale = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      err = std::max(err, std::abs(got[i] - want[i]));
      scale = std::max(scale, std::abs(want[i]));
    }
    return err / scale;
  };
  const auto chosen_math = [&](const Context& ctx) {
    const auto algorithm = cached_conv2d_algorithm(ctx, Conv2dPass::forward, big.x, big.w, big.params, DType::f32);
    EXPECT_TRUE(algorithm.has_value());
    return algorithm ? algorithm->math_type : -1;
  };
  constexpr int kTensorOpMath = 1, kTensorOpMathAllowConversion = 2, kFmaMath = 3;  // cudnnMathType_t
  clear_conv2d_algorithm_cache();
  Context fresh(Device::cuda());
  ASSERT_FALSE(fresh.allow_tf32()) << "TF32 must be off by default";
  const double exact = forward_error(fresh);
  EXPECT_EQ(chosen_math(fresh), kFmaMath) << "without TF32 the algorithm must run cuDNN's FMA math";
  EXPECT_LT(exact, 1e-5) << "float32 without TF32";
  fresh.set_allow_tf32(true);
  const double tf32 = forward_error(fresh);
  const int math = chosen_math(fresh);
  if (math == kTensorOpMath || math == kTensorOpMathAllowConversion) {
    EXPECT_LT(tf32, 1e-2) << "TF32";
    EXPECT_GT(tf32, 10 * exact) << "a tensor-core algorithm with no visible rounding (exact " << exact << ", tf32 "
                                << tf32 << ")";
  } else {
    EXPECT_LT(tf32, 1e-5) << "TF32 allowed, but cuDNN measured an FMA algorithm fastest (math type " << math << ")";
  }
}

}  // namespace
}  // namespace baton::kernels
