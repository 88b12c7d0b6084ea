// Reductions on CUDA against the CPU reference: every floating dtype, sizes 1, 7, 1023 and 2^20 + 3,
// aligned and misaligned inputs (the scalar path), NCHW shapes with H·W from 1 to large, empty
// tensors, NaN, and determinism (the same bits on every run). Skipped without a GPU.
// The aligned / misaligned crossing runs in full on the inputs below 2^20 elements (vector and scalar paths,
// their tails, every dtype); inputs of 2^20 elements or more (many blocks) run each dtype in one alignment,
// aligned and misaligned in turn.
//
// Integer-valued inputs in [-4, 4) make every partial sum an integer below 2^24, exact in float
// whatever the order of additions, so sum, sum of squares, max and the channel sums must equal the
// CPU's exactly; real-valued inputs are compared with a tolerance that grows like sqrt(n).
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;
using testing::kFloatingDTypes;

constexpr int64_t kReduceCudaSizes[] = {1, 7, 1023, (int64_t{1} << 20) + 3};
constexpr Reduction kReductions[] = {Reduction::sum, Reduction::mean, Reduction::max, Reduction::sum_squares,
                                     Reduction::l2_norm};

// NCHW shapes: H·W of 1 (after global pooling), small and large; a batch of 1 and a large one;
// channel counts whose columns are not a multiple of a 16-byte pack; empty batch and empty H·W.
const Shape kChannelShapes[] = {Shape{2, 3, 4, 5},     Shape{1, 1, 1, 1},    Shape{64, 16, 1, 1}, Shape{256, 8, 1, 1},
                                Shape{300, 5, 3, 1},   Shape{8, 32, 33, 33}, Shape{33, 7, 5, 5},  Shape{1, 3, 224, 224},
                                Shape{64, 64, 32, 32}, Shape{0, 3, 2, 2},    Shape{4, 3, 0, 5}};

// Whether an input of `numel` elements runs the `d`-th dtype with `offset`: both alignments below 2^20
// elements, aligned for even d and misaligned for odd d from there.
bool reduce_runs(int64_t numel, size_t d, bool offset) { return numel < (int64_t{1} << 20) || offset == (d % 2 == 1); }

// Integers in [-4, 4), exact in every floating dtype.
std::vector<double> integer_values(int64_t n, uint64_t seed) {
  std::vector<double> v = testing::random_values(n, DType::f64, seed, -4.0, 4.0);
  for (double& x : v) x = std::floor(x);
  return v;
}

class ReduceCuda : public testing::CudaOpTest {
 protected:
  // reduction(x) on x's device into a poisoned [] tensor.
  Tensor run(Context& ctx, Reduction reduction, const Tensor& x) {
    const Tensor out = testing::poisoned(Shape{}, reduction_dtype(x.dtype()), ctx.stream());
    reduce(ctx, x, reduction, out);
    return out;
  }
  // channel_sum (y undefined) or channel_dot on x's device into a poisoned [C] tensor.
  Tensor run_channel(Context& ctx, const Tensor& x, const Tensor& y) {
    const Tensor out = testing::poisoned(Shape{x.size(1)}, reduction_dtype(x.dtype()), ctx.stream());
    if (y.defined()) {
      channel_dot(ctx, x, y, out);
    } else {
      channel_sum(ctx, x, out);
    }
    return out;
  }
  double value(const Tensor& t) { return testing::to_doubles(t, gs()).at(0); }
};

TEST_F(ReduceCuda, ExactOnIntegerValues) {
  for (size_t d = 0; d < std::size(kFloatingDTypes); ++d) {
    const DType dtype = kFloatingDTypes[d];
    for (int64_t n : kReduceCudaSizes) {
      for (bool offset : {false, true}) {
        if (!reduce_runs(n, d, offset)) continue;
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n) + (offset ? ", offset" : ""));
        const Tensor x = testing::from_doubles(integer_values(n, 41), Shape{n}, dtype, cpu.stream());
        const Tensor gx = copy_to(x, gs(), offset);
        for (Reduction r : {Reduction::sum, Reduction::max, Reduction::sum_squares}) {
          EXPECT_EQ(value(run(*gpu, r, gx)), value(run(cpu, r, x))) << "reduction " << static_cast<int>(r);
        }
        // mean and l2_norm: the CPU rounds the double result to float once; CUDA divides / takes the
        // root in float, also correctly rounded, so at most one float ulp apart (equal for f64).
        const double rtol = dtype == DType::f64 ? 0.0 : 0x1p-22;
        for (Reduction r : {Reduction::mean, Reduction::l2_norm}) {
          EXPECT_TRUE(testing::all_close({value(run(*gpu, r, gx))}, {value(run(cpu, r, x))}, rtol, 0.0))
              << "reduction " << static_cast<int>(r);
        }
      }
    }
  }
}

TEST_F(ReduceCuda, CloseOnRealValues) {
  for (DType dtype : kFloatingDTypes) {
    for (int64_t n : kReduceCudaSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const Tensor x = testing::random_tensor(Shape{n}, dtype, cpu.stream(), 42);
      const Tensor gx = copy_to(x, gs());
      const double tol = testing::default_tolerance(reduction_dtype(dtype));
      const double root_n = std::sqrt(static_cast<double>(n));
      // Rounding errors of n additions grow like sqrt(n) (relative to the values' size, about 1).
      EXPECT_TRUE(
          testing::tensors_close(run(*gpu, Reduction::sum, gx), run(cpu, Reduction::sum, x), gs(), tol, tol * root_n));
      EXPECT_TRUE(testing::tensors_close(run(*gpu, Reduction::mean, gx), run(cpu, Reduction::mean, x), gs(), tol,
                                         tol / root_n));
      EXPECT_TRUE(testing::tensors_close(run(*gpu, Reduction::max, gx), run(cpu, Reduction::max, x), gs(), 0.0, 0.0));
      EXPECT_TRUE(testing::tensors_close(run(*gpu, Reduction::sum_squares, gx), run(cpu, Reduction::sum_squares, x),
                                         gs(), tol, tol));
      EXPECT_TRUE(
          testing::tensors_close(run(*gpu, Reduction::l2_norm, gx), run(cpu, Reduction::l2_norm, x), gs(), tol, tol));
    }
  }
}

TEST_F(ReduceCuda, SameBitsOnEveryRun) {
  for (DType dtype : kFloatingDTypes) {
    for (int64_t n : {int64_t{4099}, (int64_t{1} << 20) + 3}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const Tensor gx = copy_to(testing::random_tensor(Shape{n}, dtype, cpu.stream(), 43), gs());
      for (Reduction r : kReductions) {
        const Tensor first = run(*gpu, r, gx), second = run(*gpu, r, gx);
        EXPECT_EQ(testing::bytes_of(first, gs()), testing::bytes_of(second, gs()))
            << "reduction " << static_cast<int>(r);
      }
    }
    const Shape shape{64, 32, 17, 17};
    const Tensor gx = copy_to(testing::random_tensor(shape, dtype, cpu.stream(), 44), gs());
    const Tensor gy = copy_to(testing::random_tensor(shape, dtype, cpu.stream(), 45), gs());
    EXPECT_EQ(testing::bytes_of(run_channel(*gpu, gx, Tensor()), gs()),
              testing::bytes_of(run_channel(*gpu, gx, Tensor()), gs()));
    EXPECT_EQ(testing::bytes_of(run_channel(*gpu, gx, gy), gs()), testing::bytes_of(run_channel(*gpu, gx, gy), gs()));
  }
}

TEST_F(ReduceCuda, EmptyTensorsAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor empty = testing::empty_view(Shape{0}, dtype, gs());
    for (Reduction r : {Reduction::sum, Reduction::sum_squares, Reduction::l2_norm}) {
      EXPECT_EQ(value(run(*gpu, r, empty)), 0.0) << "reduction " << static_cast<int>(r);
    }
    // A NaN anywhere (in the vectorised body or the tail) makes max and sum NaN: fmax would drop it.
    const int64_t n = 1027;
    for (int64_t at : {int64_t{0}, int64_t{500}, n - 1}) {
      std::vector<double> v = testing::random_values(n, dtype, 46);
      v[static_cast<size_t>(at)] = nan;
      const Tensor gx = copy_to(testing::from_doubles(v, Shape{n}, dtype, cpu.stream()), gs());
      EXPECT_TRUE(std::isnan(value(run(*gpu, Reduction::max, gx)))) << "NaN at " << at;
      EXPECT_TRUE(std::isnan(value(run(*gpu, Reduction::sum, gx)))) << "NaN at " << at;
    }
    // Negative values (the identity of max is -inf, not 0) with the largest one anywhere.
    for (int64_t at : {int64_t{0}, int64_t{500}, n - 1}) {
      std::vector<double> v = testing::random_values(n, dtype, 47, -3.0, -1.0);
      v[static_cast<size_t>(at)] = -0.5;
      const Tensor gx = copy_to(testing::from_doubles(v, Shape{n}, dtype, cpu.stream()), gs());
      EXPECT_EQ(value(run(*gpu, Reduction::max, gx)), -0.5) << "largest at " << at;
    }
  }
}

TEST_F(ReduceCuda, ChannelSumsExactOnIntegerValues) {
  for (size_t d = 0; d < std::size(kFloatingDTypes); ++d) {
    const DType dtype = kFloatingDTypes[d];
    for (const Shape& shape : kChannelShapes) {
      for (bool offset : {false, true}) {
        if (!reduce_runs(shape.numel(), d, offset)) continue;
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", shape " + shape.str() + (offset ? ", x offset" : ""));
        const Tensor x = testing::from_doubles(integer_values(shape.numel(), 48), shape, dtype, cpu.stream());
        const Tensor y = testing::from_doubles(integer_values(shape.numel(), 49), shape, dtype, cpu.stream());
        const Tensor gx = copy_to(x, gs(), offset);
        const Tensor gy = copy_to(y, gs());
        EXPECT_TRUE(
            testing::tensors_close(run_channel(*gpu, gx, Tensor()), run_channel(cpu, x, Tensor()), gs(), 0.0, 0.0))
            << "channel_sum";
        EXPECT_TRUE(testing::tensors_close(run_channel(*gpu, gx, gy), run_channel(cpu, x, y), gs(), 0.0, 0.0))
            << "channel_dot";
        // y alone off alignment.
        EXPECT_TRUE(testing::tensors_close(run_channel(*gpu, copy_to(x, gs()), copy_to(y, gs(), true)),
                                           run_channel(cpu, x, y), gs(), 0.0, 0.0))
            << "channel_dot, y offset";
      }
    }
  }
}

TEST_F(ReduceCuda, ChannelSumsCloseOnRealValues) {
  for (DType dtype : kFloatingDTypes) {
    for (const Shape& shape : kChannelShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", shape " + shape.str());
      const Tensor x = testing::random_tensor(shape, dtype, cpu.stream(), 50);
      const Tensor y = testing::random_tensor(shape, dtype, cpu.stream(), 51);
      const double tol = testing::default_tolerance(reduction_dtype(dtype));
      const double atol = tol * std::sqrt(static_cast<double>(shape[0] * shape[2] * shape[3]) + 1.0);
      EXPECT_TRUE(testing::tensors_close(run_channel(*gpu, copy_to(x, gs()), Tensor()), run_channel(cpu, x, Tensor()),
                                         gs(), tol, atol));
      EXPECT_TRUE(testing::tensors_close(run_channel(*gpu, copy_to(x, gs()), copy_to(y, gs())), run_channel(cpu, x, y),
                                         gs(), tol, atol));
    }
  }
}

TEST_F(ReduceCuda, ArgumentsOnAnotherDeviceAreErrors) {
  const Tensor host = testing::random_tensor(Shape{2, 3, 2, 2}, DType::f32, cpu.stream(), 52);
  const Tensor device = copy_to(host, gs());
  const Tensor out = testing::poisoned(Shape{}, DType::f32, gs());
  EXPECT_ERROR_MENTIONS("sum: argument 'x' is on cpu:0 but the op runs on cuda:0", sum(*gpu, host, out));
  EXPECT_ERROR_MENTIONS("channel_dot: argument 'y' is on cpu:0",
                        channel_dot(*gpu, device, host, testing::poisoned(Shape{3}, DType::f32, gs())));
}

}  // namespace
}  // namespace baton::kernels
