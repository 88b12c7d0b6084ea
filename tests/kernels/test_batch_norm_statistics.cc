// Deferred batch-norm statistics ops on the CPU against float64 computed here: per-channel mean
// and biased variance, their merge over uneven splits of a batch (equal to the whole batch's), the
// running-statistics commit (momentum, unbiased variance, counter; the same bits as
// batch_norm_forward_train's update for one batch), poisoned outputs and argument errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/batch_norm_statistics.h"
#include "tests/kernels/cpu_op_test.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

const Shape kStatisticsShapes[] = {Shape{6, 3, 4, 5}, Shape{7, 2, 1, 1}, Shape{5, 4, 3, 3}};

// Direct mean and biased variance per channel of an NCHW tensor's values.
void direct_statistics(const Shape& s, const std::vector<double>& x, std::vector<double>& mean,
                       std::vector<double>& var) {
  const auto channels = static_cast<size_t>(s[1]);
  const int64_t hw = s[2] * s[3];
  const double m = static_cast<double>(s[0] * hw);
  mean.assign(channels, 0.0);
  var.assign(channels, 0.0);
  for (size_t i = 0; i < x.size(); ++i) mean[static_cast<size_t>((static_cast<int64_t>(i) / hw) % s[1])] += x[i] / m;
  for (size_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<size_t>((static_cast<int64_t>(i) / hw) % s[1]);
    var[c] += (x[i] - mean[c]) * (x[i] - mean[c]) / m;
  }
}

class BatchNormStatistics : public testing::CpuOpTest {
 protected:
  // mean and var hold x's per-channel mean and biased variance, within tol.
  void expect_statistics_of(const Tensor& x, const Tensor& mean, const Tensor& var, double tol) {
    std::vector<double> m, v;
    direct_statistics(x.shape(), values(x), m, v);
    EXPECT_TRUE(testing::all_close(values(mean), m, tol, tol));
    EXPECT_TRUE(testing::all_close(values(var), v, tol, tol));
  }
};

TEST_F(BatchNormStatistics, MeanAndBiasedVariancePerChannel) {
  for (const Shape& s : kStatisticsShapes) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)));
      const Tensor x = random(s, dtype, 3, 2.0, 5.0);  // offset values: a one-pass Σx² would cancel
      const Shape c{s[1]};
      const Tensor mean = poisoned(c, dtype), var = poisoned(c, dtype);
      batch_norm_statistics(ctx, x, mean, var);
      expect_statistics_of(x, mean, var, dtype == DType::f64 ? 1e-13 : 1e-6);
    }
  }
}

TEST_F(BatchNormStatistics, MergingUnevenPartsGivesTheWholeBatch) {
  for (const Shape& s : kStatisticsShapes) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)));
      const Tensor x = random(s, dtype, 9, -1.0, 3.0);
      const Shape c{s[1]};
      const Tensor mean = poisoned(c, dtype), var = poisoned(c, dtype);
      const Tensor part_mean = Tensor::empty(c, dtype, ctx), part_var = Tensor::empty(c, dtype, ctx);
      int64_t count = 0;
      for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 1}, {1, 4}, {4, s[0]}}) {
        const Tensor part = x.slice(begin, end);
        batch_norm_statistics(ctx, part, part_mean, part_var);
        const int64_t part_count = (end - begin) * s[2] * s[3];
        batch_norm_merge_statistics(ctx, count, mean, var, part_count, part_mean, part_var);
        count += part_count;
      }
      expect_statistics_of(x, mean, var, dtype == DType::f64 ? 1e-13 : 1e-5);
    }
  }
}

TEST_F(BatchNormStatistics, CommitUpdatesTheRunningStatisticsOnce) {
  const Shape c{3};
  for (DType dtype : {DType::f32, DType::f64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor mean = testing::from_doubles({0.5, -1.0, 2.0}, c, dtype, ctx.stream());
    const Tensor var = testing::from_doubles({1.5, 0.25, 3.0}, c, dtype, ctx.stream());
    const Tensor rm = testing::from_doubles({0.1, 0.2, 0.3}, c, dtype, ctx.stream());
    const Tensor rv = testing::from_doubles({1.0, 2.0, 0.5}, c, dtype, ctx.stream());
    const Tensor tracked = Tensor::from_vector<int64_t>({4}, Shape{}, ctx.stream());
    batch_norm_commit_statistics(ctx, 10, mean, var, 0.3, rm, rv, tracked);
    const double tol = dtype == DType::f64 ? 1e-15 : 1e-6;
    EXPECT_TRUE(
        testing::all_close(values(rm), {0.7 * 0.1 + 0.3 * 0.5, 0.7 * 0.2 - 0.3, 0.7 * 0.3 + 0.3 * 2.0}, tol, tol));
    EXPECT_TRUE(testing::all_close(
        values(rv), {0.7 + 0.3 * 1.5 * 10 / 9, 1.4 + 0.3 * 0.25 * 10 / 9, 0.35 + 0.9 * 10 / 9}, tol, tol));
    EXPECT_EQ(tracked.to_vector<int64_t>(ctx.stream())[0], 5);
    batch_norm_commit_statistics(ctx, 10, mean, var, 0.3, rm, rv, Tensor());  // no counter
    EXPECT_EQ(tracked.to_vector<int64_t>(ctx.stream())[0], 5);
  }
}

TEST_F(BatchNormStatistics, OneBatchCommitsTheBitsOfTheTrainingForward) {
  const Shape s{4, 3, 2, 3};
  const Shape c{3};
  const Tensor x = random(s, DType::f64, 21, -2.0, 2.0);
  const Tensor y = Tensor::empty(s, DType::f64, ctx), save_mean = Tensor::empty(c, DType::f64, ctx),
               save_invstd = Tensor::empty(c, DType::f64, ctx);
  const Tensor rm = random(c, DType::f64, 1), rv = random(c, DType::f64, 2, 0.5, 2.0);
  const Tensor rm2 = testing::copy_to(rm, ctx.stream()), rv2 = testing::copy_to(rv, ctx.stream());
  batch_norm_forward_train(ctx, x, Tensor(), Tensor(), 1e-5, 0.1, y, save_mean, save_invstd, rm, rv, Tensor());
  const Tensor mean = Tensor::empty(c, DType::f64, ctx), var = Tensor::empty(c, DType::f64, ctx);
  const Tensor batch_mean = Tensor::empty(c, DType::f64, ctx), batch_var = Tensor::empty(c, DType::f64, ctx);
  batch_norm_statistics(ctx, x, batch_mean, batch_var);
  batch_norm_merge_statistics(ctx, 0, mean, var, 24, batch_mean, batch_var);
  batch_norm_commit_statistics(ctx, 24, mean, var, 0.1, rm2, rv2, Tensor());
  EXPECT_EQ(values(rm2), values(rm));
  EXPECT_EQ(values(rv2), values(rv));
}

TEST_F(BatchNormStatistics, ArgumentErrors) {
  const Tensor x = random(Shape{2, 3, 2, 2}, DType::f64, 1);
  const Tensor c3 = Tensor::empty(Shape{3}, DType::f64, ctx), c4 = Tensor::empty(Shape{4}, DType::f64, ctx);
  const Tensor f32 = Tensor::empty(Shape{3}, DType::f32, ctx);
  EXPECT_ERROR_MENTIONS("'var' has shape [4]", batch_norm_statistics(ctx, x, c3, c4));
  EXPECT_ERROR_MENTIONS("'mean' is f32", batch_norm_statistics(ctx, x, f32, c3));
  EXPECT_ERROR_MENTIONS("no values per channel", batch_norm_statistics(ctx, x.slice(0, 0), c3, c3));
  EXPECT_ERROR_MENTIONS("batch_count >= 1", batch_norm_merge_statistics(ctx, 4, c3, c3, 0, c3, c3));
  EXPECT_ERROR_MENTIONS("'batch_var' has shape [4]", batch_norm_merge_statistics(ctx, 4, c3, c3, 2, c3, c4));
  EXPECT_ERROR_MENTIONS("at least 2 values", batch_norm_commit_statistics(ctx, 1, c3, c3, 0.1, c3, c3, Tensor()));
  EXPECT_ERROR_MENTIONS("momentum is 1.5", batch_norm_commit_statistics(ctx, 8, c3, c3, 1.5, c3, c3, Tensor()));
  EXPECT_ERROR_MENTIONS(
      "'num_batches_tracked' is f64",
      batch_norm_commit_statistics(ctx, 8, c3, c3, 0.1, c3, c3, Tensor::empty(Shape{}, DType::f64, ctx)));
}

}  // namespace
}  // namespace baton::kernels
