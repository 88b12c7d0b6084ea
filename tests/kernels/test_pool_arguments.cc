// Pooling ops on the CPU: empty batches are no work, and bad geometries and arguments name the
// field or argument.
#include <gtest/gtest.h>

#include "kernels/pool.h"
#include "tests/kernels/cpu_op_test.h"
#include "tests/kernels/pool_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using pool_test::geometry;

using PoolCpu = testing::CpuOpTest;

TEST_F(PoolCpu, EmptyBatchesAreNoWork) {
  const Pool2dGeometry g = geometry({2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  const Tensor x = Tensor::empty(Shape{0, 3, 4, 4}, DType::f32, ctx);
  const Tensor y = Tensor::empty(Shape{0, 3, 2, 2}, DType::f32, ctx);
  EXPECT_NO_THROW(max_pool2d_forward(ctx, x, g, y, Tensor::empty(Shape{0, 3, 2, 2}, DType::i32, ctx)));
  EXPECT_NO_THROW(avg_pool2d_forward(ctx, x, g, true, y));
  EXPECT_NO_THROW(global_avg_pool2d_forward(ctx, x, Tensor::empty(Shape{0, 3, 1, 1}, DType::f32, ctx)));
  EXPECT_NO_THROW(adaptive_avg_pool2d_forward(ctx, x, Tensor::empty(Shape{0, 3, 3, 3}, DType::f32, ctx)));
}

TEST_F(PoolCpu, BadGeometryNamesTheField) {
  const Shape in{1, 1, 8, 8};
  EXPECT_ERROR_MENTIONS("kernel_size [0, 2] must be at least 1",
                        pool2d_output_shape("op", in, geometry({0, 2}, {1, 1}, {0, 0}, {1, 1}, false)));
  EXPECT_ERROR_MENTIONS("stride [1, 0] must be at least 1",
                        pool2d_output_shape("op", in, geometry({2, 2}, {1, 0}, {0, 0}, {1, 1}, false)));
  EXPECT_ERROR_MENTIONS("dilation [0, 1] must be at least 1",
                        pool2d_output_shape("op", in, geometry({2, 2}, {1, 1}, {0, 0}, {0, 1}, false)));
  EXPECT_ERROR_MENTIONS("padding [2, 1] must be at most half the kernel_size [3, 3]",
                        pool2d_output_shape("op", in, geometry({3, 3}, {1, 1}, {2, 1}, {1, 1}, false)));
  EXPECT_ERROR_MENTIONS("padding [0, -1] must not be negative",
                        pool2d_output_shape("op", in, geometry({3, 3}, {1, 1}, {0, -1}, {1, 1}, false)));
  EXPECT_ERROR_MENTIONS("is too small",
                        pool2d_output_shape("op", Shape{1, 1, 2, 8}, geometry({3, 3}, {1, 1}, {0, 0}, {1, 1}, false)));
  EXPECT_ERROR_MENTIONS("expected 4 dimensions",
                        pool2d_output_shape("op", Shape{8, 8}, geometry({2, 2}, {2, 2}, {0, 0}, {1, 1}, false)));
}

TEST_F(PoolCpu, BadArgumentsNameTheArgument) {
  const Pool2dGeometry g = geometry({2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  const Tensor x = testing::random_tensor(Shape{2, 3, 4, 4}, DType::f32, ctx.stream(), 19);
  const Tensor y = Tensor::empty(Shape{2, 3, 2, 2}, DType::f32, ctx);
  const Tensor indices = Tensor::empty(Shape{2, 3, 2, 2}, DType::i32, ctx);
  EXPECT_ERROR_MENTIONS("max_pool2d_forward: argument 'y' has shape [2, 3, 3, 3], expected [2, 3, 2, 2]",
                        max_pool2d_forward(ctx, x, g, Tensor::empty(Shape{2, 3, 3, 3}, DType::f32, ctx), indices));
  EXPECT_ERROR_MENTIONS("argument 'indices' has dtype f32",
                        max_pool2d_forward(ctx, x, g, y, Tensor::empty(Shape{2, 3, 2, 2}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("argument 'y' has dtype f64",
                        max_pool2d_forward(ctx, x, g, Tensor::empty(Shape{2, 3, 2, 2}, DType::f64, ctx), indices));
  EXPECT_ERROR_MENTIONS("argument 'x' has dtype i32", max_pool2d_forward(ctx, indices, g, y, indices));
  EXPECT_ERROR_MENTIONS("argument 'x' has shape [3, 4, 4], expected 4 dimensions",
                        avg_pool2d_forward(ctx, x.reshape(Shape{6, 4, 4}).slice(0, 3), g, true, y));
  EXPECT_ERROR_MENTIONS("max_pool2d_backward: argument 'dy' has shape [2, 3, 2, 2], expected [2, 3, 1, 1]",
                        max_pool2d_backward(ctx, y, indices, g, Tensor::empty(Shape{2, 3, 3, 3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("argument 'indices' has shape [2, 3, 2, 2], expected [2, 3, 1, 1]",
                        max_pool2d_backward(ctx, Tensor::empty(Shape{2, 3, 1, 1}, DType::f32, ctx), indices, g,
                                            Tensor::empty(Shape{2, 3, 3, 3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("avg_pool2d_forward: dilation [2, 2] is not supported",
                        avg_pool2d_forward(ctx, x, geometry({2, 2}, {2, 2}, {0, 0}, {2, 2}, false), true, y));
  EXPECT_ERROR_MENTIONS("global_avg_pool2d_forward: argument 'y' has shape [2, 3, 2, 2], expected [2, 3, 1, 1]",
                        global_avg_pool2d_forward(ctx, x, y));
  EXPECT_ERROR_MENTIONS("global_avg_pool2d_backward: argument 'dy' has shape [2, 3, 2, 2], expected [2, 3, 1, 1]",
                        global_avg_pool2d_backward(ctx, y, Tensor::empty(Shape{2, 3, 4, 4}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("expected planes of at least one element",
                        global_avg_pool2d_forward(ctx, Tensor::empty(Shape{2, 3, 0, 4}, DType::f32, ctx),
                                                  Tensor::empty(Shape{2, 3, 1, 1}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("argument 'x' is an undefined tensor", max_pool2d_forward(ctx, Tensor(), g, y, indices));
  EXPECT_ERROR_MENTIONS("adaptive_avg_pool2d_forward: argument 'y' has shape [2, 4, 3, 3], expected [2, 3, OH, OW]",
                        adaptive_avg_pool2d_forward(ctx, x, Tensor::empty(Shape{2, 4, 3, 3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS(
      "adaptive_avg_pool2d_forward: argument 'y' has shape [2, 3, 0, 3], expected [2, 3, OH, OW] "
      "with OH, OW >= 1",
      adaptive_avg_pool2d_forward(ctx, x, Tensor::empty(Shape{2, 3, 0, 3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("adaptive_avg_pool2d_forward: argument 'y' has dtype f64",
                        adaptive_avg_pool2d_forward(ctx, x, Tensor::empty(Shape{2, 3, 3, 3}, DType::f64, ctx)));
  EXPECT_ERROR_MENTIONS(
      "adaptive_avg_pool2d_backward: argument 'dx' has shape [2, 3, 0, 4], expected planes of at "
      "least one element",
      adaptive_avg_pool2d_backward(ctx, Tensor::empty(Shape{2, 3, 2, 2}, DType::f32, ctx),
                                   Tensor::empty(Shape{2, 3, 0, 4}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("adaptive_avg_pool2d_backward: argument 'dy' has shape [2, 3, 2], expected 4 dimensions",
                        adaptive_avg_pool2d_backward(ctx, Tensor::empty(Shape{2, 3, 2}, DType::f32, ctx),
                                                     Tensor::empty(Shape{2, 3, 4, 4}, DType::f32, ctx)));
}

}  // namespace
}  // namespace baton::kernels
