// Batch norm with channels-last activations on the CPU against the same ops on row-major ones (which
// test_batch_norm.cc checks against the reference): float32 training on oneDNN's NHWC primitives
// within float32 rounding, float64, eval and the other cases through row-major copies bit for bit;
// mixed formats; CUDA refuses the format.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/cpu_engine.h"
#include "kernels/layout.h"
#include "tests/kernels/channels_last_test_support.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

constexpr double kChannelsLastEps = 1e-5, kChannelsLastMomentum = 0.1;
const Shape kChannelsLastShapes[] = {Shape{4, 16, 5, 7}, Shape{2, 3, 4, 4}, Shape{8, 64, 3, 3}};

class BatchNormChannelsLast : public testing::ChannelsLastTest {
 protected:
  Tensor random(const Shape& shape, DType dtype, uint64_t seed) {
    return testing::random_tensor(shape, dtype, ctx.stream(), seed);
  }
  Tensor like(const Tensor& t, MemoryFormat format) { return poisoned(t.shape(), t.dtype(), format); }
  Tensor copy(const Tensor& t) {
    Tensor c = Tensor::empty(t.shape(), t.dtype(), ctx);
    c.copy_from(t, ctx.stream());
    return c;
  }
  // float32 through oneDNN: within float32 rounding of values of magnitude up to ~10; float64 and
  // the copies through the reference: the same bits.
  void expect_close(const Tensor& got, const Tensor& want, DType dtype, const char* what) {
    const double tol = dtype == DType::f32 ? 2e-5 : 0.0;
    EXPECT_TRUE(testing::all_close(values(got), values(want), tol, tol)) << what;
  }

  Context ctx{Device::cpu()};
};

TEST_F(BatchNormChannelsLast, TrainingPassesMatchTheRowMajorOnes) {
  for (const Shape& shape : kChannelsLastShapes) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(::testing::Message() << shape.str() << " " << dtype_name(dtype));
      const Shape c{shape[1]};
      const Tensor x = random(shape, dtype, 1), dy = random(shape, dtype, 2);
      const Tensor w = random(c, dtype, 3), b = random(c, dtype, 4);
      const Tensor rm = random(c, dtype, 5), rv = random(c, dtype, 6);
      const Tensor rm_last = copy(rm), rv_last = copy(rv);
      const Tensor y = like(x, MemoryFormat::contiguous), y_last = like(x, MemoryFormat::channels_last);
      const Tensor mean = like(rm, MemoryFormat::contiguous), invstd = like(rm, MemoryFormat::contiguous);
      const Tensor mean_last = like(rm, MemoryFormat::contiguous), invstd_last = like(rm, MemoryFormat::contiguous);
      batch_norm_forward_train(ctx, x, w, b, kChannelsLastEps, kChannelsLastMomentum, y, mean, invstd, rm, rv,
                               Tensor());
      batch_norm_forward_train(ctx, channels_last(x), w, b, kChannelsLastEps, kChannelsLastMomentum, y_last, mean_last,
                               invstd_last, rm_last, rv_last, Tensor());
      expect_close(y_last, y, dtype, "y");
      expect_close(mean_last, mean, dtype, "save_mean");
      expect_close(invstd_last, invstd, dtype, "save_invstd");
      expect_close(rm_last, rm, dtype, "running_mean");
      expect_close(rv_last, rv, dtype, "running_var");

      const Tensor dw = random(c, dtype, 7), db = random(c, dtype, 8);
      const Tensor dw_last = copy(dw), db_last = copy(db);
      const Tensor dx = like(x, MemoryFormat::contiguous), dx_last = like(x, MemoryFormat::channels_last);
      batch_norm_backward_train(ctx, x, dy, w, mean, invstd, kChannelsLastEps, dx, dw, db);
      batch_norm_backward_train(ctx, channels_last(x), channels_last(dy), w, mean, invstd, kChannelsLastEps, dx_last,
                                dw_last, db_last);
      expect_close(dx_last, dx, dtype, "dx");
      expect_close(dw_last, dw, dtype, "weight_grad (accumulated)");
      expect_close(db_last, db, dtype, "bias_grad (accumulated)");
    }
  }
}

TEST_F(BatchNormChannelsLast, Float32TrainingRunsOnOneDnn) {
  if (!cpu_engine_info().dnnl) GTEST_SKIP() << "built without oneDNN (BATON_DNNL): the reference serves float32";
  const Shape shape{3, 48, 2, 5}, c{48};  // a shape no other test uses: its primitives are made here
  const int64_t before = cpu_engine_info().dnnl_calls;
  const Tensor x = channels_last(random(shape, DType::f32, 1)), w = random(c, DType::f32, 3);
  const Tensor mean = like(w, MemoryFormat::contiguous), invstd = like(w, MemoryFormat::contiguous);
  batch_norm_forward_train(ctx, x, w, random(c, DType::f32, 4), kChannelsLastEps, kChannelsLastMomentum,
                           like(x, MemoryFormat::channels_last), mean, invstd, Tensor(), Tensor(), Tensor());
  batch_norm_backward_train(ctx, x, channels_last(random(shape, DType::f32, 2)), w, mean, invstd, kChannelsLastEps,
                            like(x, MemoryFormat::channels_last), random(c, DType::f32, 5), random(c, DType::f32, 6));
  EXPECT_EQ(cpu_engine_info().dnnl_calls, before + 2) << "the forward and backward primitives";
}

TEST_F(BatchNormChannelsLast, EvalPassesAndMixedFormatsMatchTheRowMajorOnes) {
  const Shape shape{4, 16, 5, 7}, c{16};
  const DType dtype = DType::f32;
  const Tensor x = random(shape, dtype, 1), dy = random(shape, dtype, 2);
  const Tensor w = random(c, dtype, 3), b = random(c, dtype, 4), mean = random(c, dtype, 5);
  const Tensor var = to_memory_format(ctx, random(c, dtype, 6), MemoryFormat::contiguous);
  std::vector<double> v = values(var);
  for (double& e : v) e = e * e + 0.5;  // positive variances
  const Tensor positive_var = testing::from_doubles(v, c, dtype, ctx.stream());

  const Tensor y = like(x, MemoryFormat::contiguous), y_last = like(x, MemoryFormat::channels_last);
  batch_norm_forward_eval(ctx, x, w, b, mean, positive_var, kChannelsLastEps, y);
  batch_norm_forward_eval(ctx, channels_last(x), w, b, mean, positive_var, kChannelsLastEps, y_last);
  EXPECT_EQ(values(y_last), values(y)) << "eval forward";

  const Tensor dx = like(x, MemoryFormat::contiguous), dx_last = like(x, MemoryFormat::channels_last);
  const Tensor dw = random(c, dtype, 7), db = random(c, dtype, 8), dw_last = copy(dw), db_last = copy(db);
  batch_norm_backward_eval(ctx, x, dy, w, mean, positive_var, kChannelsLastEps, dx, dw, db);
  batch_norm_backward_eval(ctx, channels_last(x), dy, w, mean, positive_var, kChannelsLastEps, dx_last, dw_last,
                           db_last);
  EXPECT_EQ(values(dx_last), values(dx)) << "eval backward, dy row-major";
  EXPECT_EQ(values(dw_last), values(dw));
  EXPECT_EQ(values(db_last), values(db));

  // Row-major input, channels-last output: the reference through a copy.
  const Tensor mean_out = like(mean, MemoryFormat::contiguous), invstd_out = like(mean, MemoryFormat::contiguous);
  const Tensor mixed = like(x, MemoryFormat::channels_last);
  batch_norm_forward_train(ctx, x, w, b, kChannelsLastEps, kChannelsLastMomentum, mixed, mean_out, invstd_out, Tensor(),
                           Tensor(), Tensor());
  const Tensor plain = like(x, MemoryFormat::contiguous);
  batch_norm_forward_train(ctx, x, w, b, kChannelsLastEps, kChannelsLastMomentum, plain, mean_out, invstd_out, Tensor(),
                           Tensor(), Tensor());
  EXPECT_EQ(values(mixed), values(plain)) << "mixed formats";
}

}  // namespace
}  // namespace baton::kernels
