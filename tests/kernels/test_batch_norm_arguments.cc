// Batch-norm ops on the CPU: bad arguments name the problem, and the library call is refused on the
// CPU after checking its arguments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/batch_norm.h"
#include "tests/kernels/batch_norm_reference.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::BatchNormCpu;
using testing::batch_norm_ref::kEps;
using testing::batch_norm_ref::kMomentum;

TEST_F(BatchNormCpu, BadArgumentsNameTheProblem) {
  const Shape s{2, 3, 4, 4}, c{3};
  const Tensor x = random(s, DType::f32, 28), y = Tensor::empty(s, DType::f32, ctx);
  const Tensor m = Tensor::empty(c, DType::f32, ctx), v = Tensor::empty(c, DType::f32, ctx);
  const Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
  const auto train = [&](const Tensor& xx, const Tensor& w, double eps, double momentum, const Tensor& rm,
                         const Tensor& rv, const Tensor& nbt) {
    batch_norm_forward_train(ctx, xx, w, Tensor(), eps, momentum, Tensor::empty(xx.shape(), xx.dtype(), ctx),
                             Tensor::empty(Shape{xx.size(1)}, xx.dtype(), ctx),
                             Tensor::empty(Shape{xx.size(1)}, xx.dtype(), ctx), rm, rv, nbt);
  };
  EXPECT_ERROR_MENTIONS("batch_norm_forward_train: argument 'x' has dtype f16, expected one of f32, f64",
                        train(random(s, DType::f16, 29), Tensor(), kEps, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS(
      "argument 'weight' has shape [4], expected [3] (the channels of 'x'",
      train(x, Tensor::empty(Shape{4}, DType::f32, ctx), kEps, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("argument 'weight' has dtype f64, expected f32",
                        train(x, Tensor::empty(c, DType::f64, ctx), kEps, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("eps is 0, expected a finite value > 0",
                        train(x, Tensor(), 0.0, kMomentum, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("momentum is 1.5, expected a value in [0, 1]",
                        train(x, Tensor(), kEps, 1.5, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("momentum is -0.1", train(x, Tensor(), kEps, -0.1, Tensor(), Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("arguments 'running_mean' and 'running_var' must both be defined",
                        train(x, Tensor(), kEps, kMomentum, m, Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("argument 'num_batches_tracked' is f32 of shape [3], expected an i64 scalar",
                        train(x, Tensor(), kEps, kMomentum, m, v, m));
  EXPECT_ERROR_MENTIONS(
      "expected more than 1 value per channel when training, got input of shape [1, 3, 1, 1]",
      train(random(Shape{1, 3, 1, 1}, DType::f32, 30), Tensor(), kEps, kMomentum, Tensor(), Tensor(), count));
  EXPECT_ERROR_MENTIONS("argument 'x' has shape [2, 3, 16], expected 4 dimensions",
                        batch_norm_forward_eval(ctx, x.reshape(Shape{2, 3, 16}), Tensor(), Tensor(), m, v, kEps,
                                                y.reshape(Shape{2, 3, 16})));
  EXPECT_ERROR_MENTIONS(
      "batch_norm_forward_eval: argument 'var' has shape [2]",
      batch_norm_forward_eval(ctx, x, Tensor(), Tensor(), m, Tensor::empty(Shape{2}, DType::f32, ctx), kEps, y));
  EXPECT_ERROR_MENTIONS("batch_norm_forward_eval: argument 'mean' is an undefined tensor",
                        batch_norm_forward_eval(ctx, x, Tensor(), Tensor(), Tensor(), v, kEps, y));
  EXPECT_ERROR_MENTIONS("batch_norm_backward_train: argument 'dy' has shape [2, 3, 4, 2], expected [2, 3, 4, 4]",
                        batch_norm_backward_train(ctx, x, Tensor::empty(Shape{2, 3, 4, 2}, DType::f32, ctx), Tensor(),
                                                  m, v, kEps, y, Tensor(), Tensor()));
  EXPECT_ERROR_MENTIONS("arguments 'weight_grad' and 'bias_grad' must both be defined",
                        batch_norm_backward_eval(ctx, x, y, Tensor(), m, v, kEps, y, m, Tensor()));
  EXPECT_ERROR_MENTIONS("batch_norm_backward_eval: eps is -1",
                        batch_norm_backward_eval(ctx, x, y, Tensor(), m, v, -1.0, y, Tensor(), Tensor()));
}

TEST_F(BatchNormCpu, NoLibraryCallOnTheCpuButTheArgumentsAreChecked) {
  const Shape s{2, 3, 4, 4}, c{3};
  const auto empty = [&](const Shape& shape) { return Tensor::empty(shape, DType::f32, ctx); };
  BatchNormTensors t{.x = random(s, DType::f32, 31),
                     .weight = random(c, DType::f32, 32),
                     .bias = random(c, DType::f32, 33),
                     .y = empty(s),
                     .save_mean = empty(c),
                     .save_invstd = empty(c),
                     .running_mean = empty(c),
                     .running_var = empty(c),
                     .dy = random(s, DType::f32, 34),
                     .dx = empty(s),
                     .weight_grad = empty(c),
                     .bias_grad = empty(c)};
  EXPECT_FALSE(batch_norm_library_call(ctx, BatchNormPass::forward_train, t, kEps, kMomentum));
  EXPECT_FALSE(batch_norm_library_call(ctx, BatchNormPass::backward_train, t, kEps));
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: momentum is 2, expected a value in [0, 1]",
                        batch_norm_library_call(ctx, BatchNormPass::forward_train, t, kEps, 2.0));
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: argument 'dx' has shape [2, 3, 4, 2], expected [2, 3, 4, 4]",
                        batch_norm_library_call(ctx, BatchNormPass::backward_train,
                                                {.x = t.x,
                                                 .weight = t.weight,
                                                 .save_mean = t.save_mean,
                                                 .save_invstd = t.save_invstd,
                                                 .dy = t.dy,
                                                 .dx = empty(Shape{2, 3, 4, 2}),
                                                 .weight_grad = t.weight_grad,
                                                 .bias_grad = t.bias_grad},
                                                kEps));
  t.bias = Tensor();
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: argument 'bias' is undefined; the bare cuDNN call needs it",
                        batch_norm_library_call(ctx, BatchNormPass::forward_train, t, kEps, kMomentum));
  t.dx = Tensor();
  EXPECT_ERROR_MENTIONS("batch_norm_library_call: argument 'dx' is undefined",
                        batch_norm_library_call(ctx, BatchNormPass::backward_train, t, kEps));
}

}  // namespace
}  // namespace baton::kernels
