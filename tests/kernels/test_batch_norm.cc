// Batch-norm ops on the CPU against the float64 references of batch_norm_reference.h: f32 and f64,
// with and without γ/β and running statistics, the running-statistics update (momentum, unbiased
// variance, batch counter), gradient accumulation, skipped outputs and poisoned outputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/batch_norm.h"
#include "tests/kernels/batch_norm_reference.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::BatchNormCpu;
using testing::batch_norm_ref::batch_stats;
using testing::batch_norm_ref::eval_backward;
using testing::batch_norm_ref::kEps;
using testing::batch_norm_ref::kMomentum;
using testing::batch_norm_ref::kShapes;
using testing::batch_norm_ref::normalise;
using testing::batch_norm_ref::Stats;
using testing::batch_norm_ref::train_backward;

// Calls run(shape, channels shape, dtype, affine) under a trace for every shape of kShapes, f64 and
// f32, with and without γ/β.
template <typename Run>
void for_each_case(Run&& run) {
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::f64, DType::f32}) {
      for (bool affine : {true, false}) {
        SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : ""));
        run(s, Shape{s[1]}, dtype, affine);
      }
    }
  }
}

TEST_F(BatchNormCpu, TrainingForwardMatchesTheReference) {
  for (const Shape& s : kShapes) {
    for (DType dtype : {DType::f64, DType::f32}) {
      for (bool affine : {true, false}) {
        for (bool running : {true, false}) {
          SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)) + (affine ? " affine" : "") +
                       (running ? " running" : ""));
          const Shape c{s[1]};
          const Tensor x = random(s, dtype, 1, -1.0, 3.0);  // a mean away from 0
          const Tensor w = affine ? random(c, dtype, 2) : Tensor(), b = affine ? random(c, dtype, 3) : Tensor();
          const Tensor rm = random(c, dtype, 4), rv = random(c, dtype, 5, 0.5, 2.0);
          const std::vector<double> rm0 = values(rm), rv0 = values(rv);
          const Tensor count = testing::from_doubles({7}, Shape{}, DType::i64, ctx.stream());
          const Tensor y = poisoned(s, dtype), mean = poisoned(c, dtype), invstd = poisoned(c, dtype);
          batch_norm_forward_train(ctx, x, w, b, kEps, kMomentum, y, mean, invstd, running ? rm : Tensor(),
                                   running ? rv : Tensor(), running ? count : Tensor());

          const Stats st = batch_stats(s, values(x));
          EXPECT_TRUE(close(y, normalise(s, values(x), st, values(w), values(b)))) << "y";
          EXPECT_TRUE(close(mean, st.mean)) << "save_mean";
          std::vector<double> expected_invstd, expected_rm, expected_rv;
          const double m = static_cast<double>(s[0] * s[2] * s[3]);
          for (size_t k = 0; k < st.var.size(); ++k) {
            expected_invstd.push_back(1.0 / std::sqrt(st.var[k] + kEps));
            expected_rm.push_back((1 - kMomentum) * rm0[k] + kMomentum * st.mean[k]);
            expected_rv.push_back((1 - kMomentum) * rv0[k] + kMomentum * st.var[k] * m / (m - 1));  // unbiased
          }
          EXPECT_TRUE(close(invstd, expected_invstd)) << "save_invstd";
          EXPECT_TRUE(close(rm, running ? expected_rm : rm0)) << "running_mean";
          EXPECT_TRUE(close(rv, running ? expected_rv : rv0)) << "running_var";
          EXPECT_EQ(values(count)[0], running ? 8.0 : 7.0);
        }
      }
    }
  }
}

TEST_F(BatchNormCpu, MomentumZeroAndOneKeepOrReplaceTheRunningStatistics) {
  const Shape s{4, 2, 3, 3}, c{2};
  const Tensor x = random(s, DType::f64, 6);
  const Stats st = batch_stats(s, values(x));
  for (double momentum : {0.0, 1.0}) {
    const Tensor rm = random(c, DType::f64, 7), rv = random(c, DType::f64, 8, 0.5, 2.0);
    const std::vector<double> rm0 = values(rm), rv0 = values(rv);
    batch_norm_forward_train(ctx, x, Tensor(), Tensor(), kEps, momentum, poisoned(s, DType::f64),
                             poisoned(c, DType::f64), poisoned(c, DType::f64), rm, rv, Tensor());
    std::vector<double> unbiased = st.var;
    for (double& v : unbiased) v *= 36.0 / 35.0;
    EXPECT_TRUE(close(rm, momentum == 0.0 ? rm0 : st.mean)) << momentum;
    EXPECT_TRUE(close(rv, momentum == 0.0 ? rv0 : unbiased)) << momentum;
  }
}

TEST_F(BatchNormCpu, EvalForwardUsesTheGivenStatistics) {
  for_each_case([&](const Shape& s, const Shape& c, DType dtype, bool affine) {
    const Tensor x = random(s, dtype, 9);
    const Tensor w = affine ? random(c, dtype, 10) : Tensor(), b = affine ? random(c, dtype, 11) : Tensor();
    const Tensor mean = random(c, dtype, 12), var = random(c, dtype, 13, 0.2, 2.0);
    const Tensor y = poisoned(s, dtype);
    batch_norm_forward_eval(ctx, x, w, b, mean, var, kEps, y);
    EXPECT_TRUE(close(y, normalise(s, values(x), Stats{values(mean), values(var)}, values(w), values(b))));
  });
}

TEST_F(BatchNormCpu, TrainingBackwardMatchesTheReference) {
  for_each_case([&](const Shape& s, const Shape& c, DType dtype, bool affine) {
    const Tensor x = random(s, dtype, 14, -1.0, 3.0), dy = random(s, dtype, 15);
    const Tensor w = affine ? random(c, dtype, 16) : Tensor();
    const Tensor mean = poisoned(c, dtype), invstd = poisoned(c, dtype);
    batch_norm_forward_train(ctx, x, w, Tensor(), kEps, kMomentum, poisoned(s, dtype), mean, invstd, Tensor(), Tensor(),
                             Tensor());
    expect_backward(s, dtype, train_backward(s, values(x), values(dy), values(w)),
                    [&](const Tensor& dx, const Tensor& dw, const Tensor& db) {
                      batch_norm_backward_train(ctx, x, dy, w, mean, invstd, kEps, dx, dw, db);
                    });
  });
}

TEST_F(BatchNormCpu, EvalBackwardMatchesTheReference) {
  for_each_case([&](const Shape& s, const Shape& c, DType dtype, bool affine) {
    const Tensor x = random(s, dtype, 21), dy = random(s, dtype, 22);
    const Tensor w = affine ? random(c, dtype, 23) : Tensor();
    const Tensor mean = random(c, dtype, 24), var = random(c, dtype, 25, 0.2, 2.0);
    expect_backward(s, dtype, eval_backward(s, values(x), values(dy), values(w), Stats{values(mean), values(var)}),
                    [&](const Tensor& dx, const Tensor& dw, const Tensor& db) {
                      batch_norm_backward_eval(ctx, x, dy, w, mean, var, kEps, dx, dw, db);
                    });
  });
}

}  // namespace
}  // namespace baton::kernels
