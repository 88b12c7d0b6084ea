// Batch-norm ops on CUDA (cuDNN and baton's frozen-statistics kernels) against the CPU reference:
// f32 and f64, with and without γ/β and running statistics, per-channel counts from 3 to 2^20 + 3,
// views off 16-byte alignment, poisoned outputs, gradient accumulation, skipped outputs, and the
// same bits on every run. Skipped without a GPU.
// Shapes below 2^19 elements run every (dtype, affine, alignment) variant; the two large ones (many blocks per
// channel) run two: f32 with γ/β and aligned, f64 without and off alignment. The smaller shapes cover every
// variant on every kernel path; the large sizes test the per-channel slicing, which does not depend on the variant.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/batch_norm.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;

constexpr double kEps = 1e-3;
constexpr double kMomentum = 0.3;

const Shape kShapes[] = {Shape{2, 3, 4, 5},
                         Shape{1, 4, 1, 3},
                         Shape{64, 8, 1, 1},
                         Shape{8, 16, 7, 7},
                         Shape{4, 3, 33, 33},
                         Shape{32, 64, 16, 16},
                         Shape{130, 3, 2, 5},  // the frozen gradients' sums split into 5 slices of 26 rows
                         Shape{1, 2, 1, (int64_t{1} << 20) + 3}};

struct Variant {
  Shape shape;
  DType dtype;
  bool affine;
  bool offset;
  std::string str() const {
    return shape.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : "") + (offset ? " offset" : "");
  }
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (const Shape& s : kShapes) {
    const bool large = s.numel() >= (int64_t{1} << 19);
    for (DType dtype : {DType::f32, DType::f64}) {
      for (bool affine : {true, false}) {
        for (bool offset : {false, true}) {
          const bool f32 = dtype == DType::f32;
          if (!large || (affine == f32 && offset != f32)) out.push_back({s, dtype, affine, offset});
        }
      }
    }
  }
  return out;
}

class BatchNormCuda : public testing::CudaOpTest {
 protected:
  // Values of about 1: per element, rtol and atol of 1e-4 (f32) or 1e-10 (f64); sums over the
  // m = N·H·W elements of a channel get an atol that grows like sqrt(m).
  ::testing::AssertionResult close(const Tensor& g, const Tensor& c, const Variant& v, bool channel_sum = false) {
    const double tol = v.dtype == DType::f64 ? 1e-10 : 1e-4;
    const double m = static_cast<double>(v.shape[0] * v.shape[2] * v.shape[3]);
    return testing::tensors_close(g, c, gs(), tol, channel_sum ? tol * std::sqrt(m) : tol);
  }
  Tensor on_gpu(const Tensor& t, const Variant& v) { return t.defined() ? copy_to(t, gs(), v.offset) : Tensor(); }
  Tensor random(const Shape& shape, const Variant& v, uint64_t seed, double low = -1.0, double high = 1.0) {
    return testing::random_tensor(shape, v.dtype, cpu.stream(), seed, low, high);
  }

  // Runs backward(ctx, x, dy, w, dx, weight_grad, bias_grad) on both devices for every combination
  // of wanted outputs (an undefined tensor where not wanted), the parameter gradients accumulating
  // onto random values, and compares the results.
  template <typename Backward>
  void compare_backward(const Variant& v, const Tensor& x, const Tensor& dy, const Tensor& w,
                        const Backward& backward) {
    const Shape c{v.shape[1]};
    for (bool want_dx : {true, false}) {
      for (bool want_params : {true, false}) {
        if (!want_dx && !want_params) continue;
        SCOPED_TRACE(std::string(want_dx ? " dx" : "") + (want_params ? " param grads" : ""));
        const Tensor dx = want_dx ? testing::poisoned(v.shape, v.dtype, cpu.stream()) : Tensor();
        const Tensor dw = want_params ? random(c, v, 11) : Tensor(), db = want_params ? random(c, v, 12) : Tensor();
        const Tensor gdx = want_dx ? testing::poisoned(v.shape, v.dtype, gs(), v.offset) : Tensor();
        const Tensor gdw = on_gpu(dw, v), gdb = on_gpu(db, v);
        gpu->synchronize();  // the copies have read dw and db before the CPU updates them
        backward(cpu, x, dy, w, dx, dw, db);
        backward(*gpu, on_gpu(x, v), on_gpu(dy, v), on_gpu(w, v), gdx, gdw, gdb);
        if (want_dx) {
          EXPECT_TRUE(close(gdx, dx, v)) << "dx";
        }
        if (want_params) {
          EXPECT_TRUE(close(gdw, dw, v, true)) << "weight_grad";
          EXPECT_TRUE(close(gdb, db, v, true)) << "bias_grad";
        }
      }
    }
  }
};

TEST_F(BatchNormCuda, TrainingForwardMatchesCpu) {
  for (const Variant& v : variants()) {
    for (bool running : {true, false}) {
      SCOPED_TRACE(v.str() + (running ? " running" : ""));
      const Shape c{v.shape[1]};
      const Tensor x = random(v.shape, v, 1, -1.0, 3.0);
      const Tensor w = v.affine ? random(c, v, 2) : Tensor(), b = v.affine ? random(c, v, 3) : Tensor();
      const Tensor rm = random(c, v, 4), rv = random(c, v, 5, 0.5, 2.0);
      const Tensor count = testing::from_doubles({7}, Shape{}, DType::i64, cpu.stream());
      const Tensor grm = on_gpu(rm, v), grv = on_gpu(rv, v), gcount = copy_to(count, gs());
      gpu->synchronize();  // the copies have read rm, rv and count before the CPU updates them

      const Tensor y = testing::poisoned(v.shape, v.dtype, cpu.stream()),
                   mean = testing::poisoned(c, v.dtype, cpu.stream());
      const Tensor invstd = testing::poisoned(c, v.dtype, cpu.stream());
      batch_norm_forward_train(cpu, x, w, b, kEps, kMomentum, y, mean, invstd, running ? rm : Tensor(),
                               running ? rv : Tensor(), running ? count : Tensor());
      const Tensor gy = testing::poisoned(v.shape, v.dtype, gs(), v.offset),
                   gmean = testing::poisoned(c, v.dtype, gs(), v.offset);
      const Tensor ginvstd = testing::poisoned(c, v.dtype, gs(), v.offset);
      batch_norm_forward_train(*gpu, on_gpu(x, v), on_gpu(w, v), on_gpu(b, v), kEps, kMomentum, gy, gmean, ginvstd,
                               running ? grm : Tensor(), running ? grv : Tensor(), running ? gcount : Tensor());
      EXPECT_TRUE(close(gy, y, v)) << "y";
      EXPECT_TRUE(close(gmean, mean, v)) << "save_mean";
      EXPECT_TRUE(close(ginvstd, invstd, v)) << "save_invstd";
      EXPECT_TRUE(close(grm, rm, v)) << "running_mean";
      EXPECT_TRUE(close(grv, rv, v)) << "running_var (unbiased)";
      EXPECT_EQ(testing::to_doubles(gcount, gs())[0], running ? 8.0 : 7.0);
    }
  }
}

TEST_F(BatchNormCuda, EvalForwardMatchesCpu) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.str());
    const Shape c{v.shape[1]};
    const Tensor x = random(v.shape, v, 6);
    const Tensor w = v.affine ? random(c, v, 7) : Tensor(), b = v.affine ? random(c, v, 8) : Tensor();
    const Tensor mean = random(c, v, 9), var = random(c, v, 10, 0.2, 2.0);
    const Tensor y = testing::poisoned(v.shape, v.dtype, cpu.stream()),
                 gy = testing::poisoned(v.shape, v.dtype, gs(), v.offset);
    batch_norm_forward_eval(cpu, x, w, b, mean, var, kEps, y);
    batch_norm_forward_eval(*gpu, on_gpu(x, v), on_gpu(w, v), on_gpu(b, v), on_gpu(mean, v), on_gpu(var, v), kEps, gy);
    EXPECT_TRUE(close(gy, y, v));
  }
}

TEST_F(BatchNormCuda, TrainingBackwardMatchesCpu) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.str());
    const Shape c{v.shape[1]};
    const Tensor x = random(v.shape, v, 13, -1.0, 3.0), dy = random(v.shape, v, 14);
    const Tensor w = v.affine ? random(c, v, 15) : Tensor();
    // The saved statistics of the CPU forward, given to both devices.
    const Tensor mean = testing::poisoned(c, v.dtype, cpu.stream()),
                 invstd = testing::poisoned(c, v.dtype, cpu.stream());
    batch_norm_forward_train(cpu, x, w, Tensor(), kEps, kMomentum, testing::poisoned(v.shape, v.dtype, cpu.stream()),
                             mean, invstd, Tensor(), Tensor(), Tensor());
    const Tensor gmean = copy_to(mean, gs()), ginvstd = copy_to(invstd, gs());
    compare_backward(v, x, dy, w,
                     [&](Context& ctx, const Tensor& xx, const Tensor& g, const Tensor& ww, const Tensor& dx,
                         const Tensor& dw, const Tensor& db) {
                       const bool cuda = ctx.device().is_cuda();
                       batch_norm_backward_train(ctx, xx, g, ww, cuda ? gmean : mean, cuda ? ginvstd : invstd, kEps, dx,
                                                 dw, db);
                     });
  }
}

TEST_F(BatchNormCuda, FrozenStatisticsBackwardMatchesCpu) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.str());
    const Shape c{v.shape[1]};
    const Tensor x = random(v.shape, v, 16, -1.0, 3.0), dy = random(v.shape, v, 17);
    const Tensor w = v.affine ? random(c, v, 18) : Tensor();
    const Tensor mean = random(c, v, 19, 0.0, 2.0), var = random(c, v, 20, 0.2, 2.0);
    const Tensor gmean = copy_to(mean, gs()), gvar = copy_to(var, gs());
    compare_backward(v, x, dy, w,
                     [&](Context& ctx, const Tensor& xx, const Tensor& g, const Tensor& ww, const Tensor& dx,
                         const Tensor& dw, const Tensor& db) {
                       const bool cuda = ctx.device().is_cuda();
                       batch_norm_backward_eval(ctx, xx, g, ww, cuda ? gmean : mean, cuda ? gvar : var, kEps, dx, dw,
                                                db);
                     });
  }
}

TEST_F(BatchNormCuda, SameBitsOnEveryRun) {
  const Variant v{Shape{32, 64, 16, 16}, DType::f32, true, false};
  const Shape c{64};
  const Tensor x = copy_to(random(v.shape, v, 21), gs()), dy = copy_to(random(v.shape, v, 22), gs());
  const Tensor w = copy_to(random(c, v, 23), gs()), b = copy_to(random(c, v, 24), gs());
  const Tensor rv = copy_to(random(c, v, 25, 0.5, 2.0), gs());
  const auto run = [&]() {
    const Tensor y = testing::poisoned(v.shape, v.dtype, gs()), mean = testing::poisoned(c, v.dtype, gs());
    const Tensor invstd = testing::poisoned(c, v.dtype, gs()), dx = testing::poisoned(v.shape, v.dtype, gs());
    const Tensor frozen_dx = testing::poisoned(v.shape, v.dtype, gs());
    Tensor grads = Tensor::empty(Shape{4, 64}, v.dtype, gs());
    grads.fill(0.0, gs());
    batch_norm_forward_train(*gpu, x, w, b, kEps, kMomentum, y, mean, invstd, Tensor(), Tensor(), Tensor());
    batch_norm_backward_train(*gpu, x, dy, w, mean, invstd, kEps, dx, grads.slice(0, 1).reshape(c),
                              grads.slice(1, 2).reshape(c));
    batch_norm_backward_eval(*gpu, x, dy, w, mean, rv, kEps, frozen_dx, grads.slice(2, 3).reshape(c),
                             grads.slice(3, 4).reshape(c));
    return std::vector<std::vector<unsigned char>>{testing::bytes_of(y, gs()), testing::bytes_of(dx, gs()),
                                                   testing::bytes_of(frozen_dx, gs()), testing::bytes_of(grads, gs())};
  };
  EXPECT_EQ(run(), run());
}

TEST_F(BatchNormCuda, LibraryCallsGiveTheSameBits) {
  const Variant v{Shape{8, 16, 7, 7}, DType::f32, true, false};
  const Shape c{16};
  const Tensor x = copy_to(random(v.shape, v, 27), gs()), dy = copy_to(random(v.shape, v, 28), gs());
  const Tensor w = copy_to(random(c, v, 29), gs()), b = copy_to(random(c, v, 30), gs());
  const Tensor rm0 = random(c, v, 31), rv0 = random(c, v, 32, 0.5, 2.0), grad0 = random(c, v, 33);
  // Both runs from the same running statistics and prior parameter gradients.
  const auto tensors = [&]() {
    return BatchNormTensors{.x = x,
                            .weight = w,
                            .bias = b,
                            .y = testing::poisoned(v.shape, v.dtype, gs()),
                            .save_mean = testing::poisoned(c, v.dtype, gs()),
                            .save_invstd = testing::poisoned(c, v.dtype, gs()),
                            .running_mean = copy_to(rm0, gs()),
                            .running_var = copy_to(rv0, gs()),
                            .dy = dy,
                            .dx = testing::poisoned(v.shape, v.dtype, gs()),
                            .weight_grad = copy_to(grad0, gs()),
                            .bias_grad = copy_to(grad0, gs())};
  };
  const BatchNormTensors op = tensors(), bare = tensors();
  batch_norm_forward_train(*gpu, op.x, op.weight, op.bias, kEps, kMomentum, op.y, op.save_mean, op.save_invstd,
                           op.running_mean, op.running_var, Tensor());
  batch_norm_backward_train(*gpu, op.x, op.dy, op.weight, op.save_mean, op.save_invstd, kEps, op.dx, op.weight_grad,
                            op.bias_grad);
  const auto forward = batch_norm_library_call(*gpu, BatchNormPass::forward_train, bare, kEps, kMomentum);
  const auto backward = batch_norm_library_call(*gpu, BatchNormPass::backward_train, bare, kEps);
  ASSERT_TRUE(forward);
  ASSERT_TRUE(backward);
  forward();
  backward();
  for (const auto& [name, a, e] :
       {std::tuple{"y", bare.y, op.y}, std::tuple{"save_mean", bare.save_mean, op.save_mean},
        std::tuple{"save_invstd", bare.save_invstd, op.save_invstd},
        std::tuple{"running_mean", bare.running_mean, op.running_mean},
        std::tuple{"running_var", bare.running_var, op.running_var}, std::tuple{"dx", bare.dx, op.dx},
        std::tuple{"weight_grad", bare.weight_grad, op.weight_grad},
        std::tuple{"bias_grad", bare.bias_grad, op.bias_grad}}) {
    EXPECT_EQ(testing::bytes_of(a, gs()), testing::bytes_of(e, gs())) << name;
  }
}

TEST_F(BatchNormCuda, HalfPrecisionIsAnErrorNamingTheDtype) {
  const Shape s{2, 3, 2, 2}, c{3};
  const Tensor x = copy_to(testing::random_tensor(s, DType::f16, cpu.stream(), 26), gs());
  EXPECT_ERROR_MENTIONS(
      "batch_norm_forward_eval: argument 'x' has dtype f16, expected one of f32, f64",
      batch_norm_forward_eval(*gpu, x, Tensor(), Tensor(), testing::poisoned(c, DType::f16, gs()),
                              testing::poisoned(c, DType::f16, gs()), kEps, testing::poisoned(s, DType::f16, gs())));
}

}  // namespace
}  // namespace baton::kernels
