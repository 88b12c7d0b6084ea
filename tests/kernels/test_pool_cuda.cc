// Pooling ops on CUDA against the CPU reference (max, average, global and adaptive average
// pooling): inputs of 1, 7, 1023 and 2^20 + 3 elements and batched ones, geometries with padding,
// stride, dilation and ceil_mode, every floating dtype, i32 and i64 indices, views off 16-byte alignment, poisoned
// outputs, and the same bits on every run. Maxima and argmax indices must match exactly; sums within the dtype's
// tolerance (the CPU adds in double, CUDA in float). Skipped without a GPU.
// Inputs of up to a few thousand elements run in every floating dtype and cover every geometry and the vector and
// scalar paths; the large ones (a plane of 2^20 + 3, 70000 images, typical feature maps) run in f32 only, aligned
// and not, since their size tests the grid and plane arithmetic, which does not depend on the dtype.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "kernels/pool.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;
using testing::kFloatingDTypes;

// The dtypes an input runs in: every floating one up to kPoolLargeInput elements, f32 beyond.
constexpr int64_t kPoolLargeInput = 100'000;
constexpr DType kPoolLargeInputDTypes[] = {DType::f32};
std::span<const DType> pool_dtypes(const Shape& input) {
  if (input.numel() >= kPoolLargeInput) return kPoolLargeInputDTypes;
  return kFloatingDTypes;
}

struct PoolCudaCase {
  Shape input;
  Pool2dGeometry g;
  bool dilated = false;  // max pooling only
};

const PoolCudaCase kPoolCudaCases[] = {
    {Shape{1, 1, 1, 1}, Pool2dGeometry{}},
    {Shape{1, 7, 1, 1}, Pool2dGeometry{}},
    {Shape{1, 1, 31, 33}, Pool2dGeometry{{3, 3}, {2, 2}, {1, 1}, {1, 1}, true}},
    {Shape{1, 1, 1, (int64_t{1} << 20) + 3}, Pool2dGeometry{{1, 3}, {1, 2}, {0, 1}, {1, 1}, false}},
    {Shape{8, 16, 33, 33}, Pool2dGeometry{{3, 3}, {2, 2}, {1, 1}, {1, 1}, false}},
    {Shape{2, 5, 9, 9}, Pool2dGeometry{{5, 5}, {1, 1}, {2, 2}, {1, 1}, false}},
    {Shape{3, 2, 6, 6}, Pool2dGeometry{{3, 3}, {2, 2}, {1, 1}, {1, 1}, true}},
    {Shape{2, 3, 5, 6}, Pool2dGeometry{{2, 3}, {3, 2}, {1, 1}, {1, 1}, true}},
    {Shape{4, 3, 17, 19}, Pool2dGeometry{{3, 2}, {2, 1}, {1, 1}, {2, 3}, true}, true},
};

std::string describe(const PoolCudaCase& c, DType dtype, bool offset) {
  return c.input.str() + " kernel " + std::to_string(c.g.kernel[0]) + "x" + std::to_string(c.g.kernel[1]) + " " +
         std::string(dtype_name(dtype)) + (offset ? " offset" : "");
}

class PoolCuda : public testing::CudaOpTest {
 protected:
  ::testing::AssertionResult close(const Tensor& g, const Tensor& c, DType dtype) {
    const double tol = testing::default_tolerance(dtype);
    return testing::tensors_close(g, c, gs(), tol, tol);
  }
  ::testing::AssertionResult identical(const Tensor& g, const Tensor& c) {
    return testing::identical_values(testing::to_doubles(g, gs()), testing::to_doubles(c, cpu.stream()));
  }
};

TEST_F(PoolCuda, MaxPoolMatchesCpu) {
  for (const PoolCudaCase& c : kPoolCudaCases) {
    for (DType dtype : pool_dtypes(c.input)) {
      for (DType index_dtype : {DType::i32, DType::i64}) {
        for (bool offset : {false, true}) {
          SCOPED_TRACE(describe(c, dtype, offset) + " " + std::string(dtype_name(index_dtype)));
          const Shape out = pool2d_output_shape("test", c.input, c.g);
          const Tensor x = testing::random_tensor(c.input, dtype, cpu.stream(), 1);
          const Tensor dy = testing::random_tensor(out, dtype, cpu.stream(), 2);
          const Tensor y = testing::poisoned(out, dtype, cpu.stream()),
                       idx = testing::poisoned(out, index_dtype, cpu.stream());
          const Tensor dx = testing::poisoned(c.input, dtype, cpu.stream());
          max_pool2d_forward(cpu, x, c.g, y, idx);
          max_pool2d_backward(cpu, dy, idx, c.g, dx);

          const Tensor gy = testing::poisoned(out, dtype, gs(), offset),
                       gidx = testing::poisoned(out, index_dtype, gs(), offset);
          const Tensor gdx = testing::poisoned(c.input, dtype, gs(), offset);
          max_pool2d_forward(*gpu, copy_to(x, gs(), offset), c.g, gy, gidx);
          max_pool2d_backward(*gpu, copy_to(dy, gs(), offset), gidx, c.g, gdx);
          EXPECT_TRUE(identical(gy, y)) << "y";
          EXPECT_TRUE(identical(gidx, idx)) << "indices";
          EXPECT_TRUE(close(gdx, dx, dtype)) << "dx";
        }
      }
    }
  }
}

TEST_F(PoolCuda, AvgPoolMatchesCpu) {
  for (const PoolCudaCase& c : kPoolCudaCases) {
    if (c.dilated) continue;
    for (DType dtype : pool_dtypes(c.input)) {
      for (bool count_include_pad : {true, false}) {
        for (bool offset : {false, true}) {
          SCOPED_TRACE(describe(c, dtype, offset) + (count_include_pad ? " count_include_pad" : ""));
          const Shape out = pool2d_output_shape("test", c.input, c.g);
          const Tensor x = testing::random_tensor(c.input, dtype, cpu.stream(), 3);
          const Tensor dy = testing::random_tensor(out, dtype, cpu.stream(), 4);
          const Tensor y = testing::poisoned(out, dtype, cpu.stream()),
                       dx = testing::poisoned(c.input, dtype, cpu.stream());
          avg_pool2d_forward(cpu, x, c.g, count_include_pad, y);
          avg_pool2d_backward(cpu, dy, c.g, count_include_pad, dx);

          const Tensor gy = testing::poisoned(out, dtype, gs(), offset),
                       gdx = testing::poisoned(c.input, dtype, gs(), offset);
          avg_pool2d_forward(*gpu, copy_to(x, gs(), offset), c.g, count_include_pad, gy);
          avg_pool2d_backward(*gpu, copy_to(dy, gs(), offset), c.g, count_include_pad, gdx);
          EXPECT_TRUE(close(gy, y, dtype)) << "y";
          EXPECT_TRUE(close(gdx, dx, dtype)) << "dx";
        }
      }
    }
  }
}

TEST_F(PoolCuda, GlobalAvgPoolMatchesCpu) {
  // H·W of 1, 7, 49, 1023 and 2^20 + 3; many planes.
  const Shape shapes[] = {Shape{1, 1, 1, 1},
                          Shape{3, 5, 1, 7},
                          Shape{64, 33, 7, 7},
                          Shape{2, 3, 31, 33},
                          Shape{1, 1, 1, (int64_t{1} << 20) + 3},
                          Shape{70000, 3, 1, 1}};
  for (const Shape& shape : shapes) {
    for (DType dtype : pool_dtypes(shape)) {
      for (bool offset : {false, true}) {
        SCOPED_TRACE(shape.str() + " " + std::string(dtype_name(dtype)) + (offset ? " offset" : ""));
        const Shape pooled{shape[0], shape[1], 1, 1};
        const Tensor x = testing::random_tensor(shape, dtype, cpu.stream(), 5);
        const Tensor dy = testing::random_tensor(pooled, dtype, cpu.stream(), 6);
        const Tensor y = testing::poisoned(pooled, dtype, cpu.stream()),
                     dx = testing::poisoned(shape, dtype, cpu.stream());
        global_avg_pool2d_forward(cpu, x, y);
        global_avg_pool2d_backward(cpu, dy, dx);

        const Tensor gy = testing::poisoned(pooled, dtype, gs(), offset),
                     gdx = testing::poisoned(shape, dtype, gs(), offset);
        global_avg_pool2d_forward(*gpu, copy_to(x, gs(), offset), gy);
        global_avg_pool2d_backward(*gpu, copy_to(dy, gs(), offset), gdx);
        // The sum of H·W values of size about 1: float rounding grows like sqrt(H·W) / (H·W).
        EXPECT_TRUE(close(gy, y, dtype)) << "y";
        EXPECT_TRUE(identical(gdx, dx)) << "dx: the same division on both devices";
      }
    }
  }
}

TEST_F(PoolCuda, AdaptiveAvgPoolMatchesCpu) {
  // VGG's 7x7 and AlexNet's 6x6 over typical feature maps, outputs larger than the input, a plane of
  // 2^20 + 3 elements, many planes.
  struct AdaptiveCase {
    Shape input;
    int64_t out_h, out_w;
  };
  const AdaptiveCase cases[] = {{Shape{1, 1, 1, 1}, 7, 7},
                                {Shape{8, 512, 7, 7}, 7, 7},
                                {Shape{4, 256, 13, 13}, 6, 6},
                                {Shape{2, 3, 31, 33}, 7, 5},
                                {Shape{1, 1, 1, (int64_t{1} << 20) + 3}, 1, 7},
                                {Shape{70000, 3, 2, 2}, 3, 3}};
  for (const AdaptiveCase& c : cases) {
    for (DType dtype : pool_dtypes(c.input)) {
      for (bool offset : {false, true}) {
        SCOPED_TRACE(c.input.str() + " -> " + std::to_string(c.out_h) + "x" + std::to_string(c.out_w) + " " +
                     std::string(dtype_name(dtype)) + (offset ? " offset" : ""));
        const Shape out{c.input[0], c.input[1], c.out_h, c.out_w};
        const Tensor x = testing::random_tensor(c.input, dtype, cpu.stream(), 11);
        const Tensor dy = testing::random_tensor(out, dtype, cpu.stream(), 12);
        const Tensor y = testing::poisoned(out, dtype, cpu.stream()),
                     dx = testing::poisoned(c.input, dtype, cpu.stream());
        adaptive_avg_pool2d_forward(cpu, x, y);
        adaptive_avg_pool2d_backward(cpu, dy, dx);

        const Tensor gy = testing::poisoned(out, dtype, gs(), offset),
                     gdx = testing::poisoned(c.input, dtype, gs(), offset);
        adaptive_avg_pool2d_forward(*gpu, copy_to(x, gs(), offset), gy);
        adaptive_avg_pool2d_backward(*gpu, copy_to(dy, gs(), offset), gdx);
        EXPECT_TRUE(close(gy, y, dtype)) << "y";
        EXPECT_TRUE(close(gdx, dx, dtype)) << "dx";
      }
    }
  }
}

TEST_F(PoolCuda, SameBitsOnEveryRun) {
  const PoolCudaCase& c = kPoolCudaCases[4];
  const Shape out = pool2d_output_shape("test", c.input, c.g);
  const Tensor x = copy_to(testing::random_tensor(c.input, DType::f32, cpu.stream(), 7), gs());
  const Tensor dy = copy_to(testing::random_tensor(out, DType::f32, cpu.stream(), 8), gs());
  const auto run = [&]() {
    const Tensor y = testing::poisoned(out, DType::f32, gs()), idx = testing::poisoned(out, DType::i32, gs());
    const Tensor dx_max = testing::poisoned(c.input, DType::f32, gs()),
                 dx_avg = testing::poisoned(c.input, DType::f32, gs());
    const Tensor pooled = testing::poisoned(Shape{c.input[0], c.input[1], 1, 1}, DType::f32, gs());
    max_pool2d_forward(*gpu, x, c.g, y, idx);
    max_pool2d_backward(*gpu, dy, idx, c.g, dx_max);
    avg_pool2d_backward(*gpu, dy, c.g, true, dx_avg);
    global_avg_pool2d_forward(*gpu, x, pooled);
    const Tensor adaptive = testing::poisoned(Shape{c.input[0], c.input[1], 7, 7}, DType::f32, gs());
    const Tensor dx_adaptive = testing::poisoned(c.input, DType::f32, gs());
    adaptive_avg_pool2d_forward(*gpu, x, adaptive);
    adaptive_avg_pool2d_backward(*gpu, adaptive, dx_adaptive);
    return std::vector<std::vector<unsigned char>>{testing::bytes_of(dx_max, gs()), testing::bytes_of(dx_avg, gs()),
                                                   testing::bytes_of(pooled, gs()), testing::bytes_of(adaptive, gs()),
                                                   testing::bytes_of(dx_adaptive, gs())};
  };
  EXPECT_EQ(run(), run());
}

TEST_F(PoolCuda, ArgumentsOnAnotherDeviceAreErrors) {
  const Pool2dGeometry g{{2, 2}, {2, 2}, {0, 0}, {1, 1}, false};
  const Tensor host = testing::random_tensor(Shape{1, 1, 4, 4}, DType::f32, cpu.stream(), 9);
  EXPECT_ERROR_MENTIONS("max_pool2d_forward: argument 'x' is on cpu:0 but the op runs on cuda:0",
                        max_pool2d_forward(*gpu, host, g, testing::poisoned(Shape{1, 1, 2, 2}, DType::f32, gs()),
                                           testing::poisoned(Shape{1, 1, 2, 2}, DType::i32, gs())));
}

}  // namespace
}  // namespace baton::kernels
