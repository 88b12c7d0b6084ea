// Deferred batch-norm statistics ops on CUDA against the CPU reference: statistics (per-channel
// counts from 4 to 2^20 + 3, many channels), merge and commit, f32 and f64, poisoned outputs, and
// the same bits on every run. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/batch_norm_statistics.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::copy_to;

// Shape{130, 3, 2, 5}: a batch cut into 5 slices of 26 rows (the split of kernels/cuda/channel_split.cuh).
const Shape kStatisticsCudaShapes[] = {Shape{2, 3, 1, 2}, Shape{8, 16, 7, 7}, Shape{4, 300, 3, 3}, Shape{130, 3, 2, 5},
                                       Shape{1, 2, 1, (int64_t{1} << 20) + 3}};

class BatchNormStatisticsCuda : public testing::CudaOpTest {};

TEST_F(BatchNormStatisticsCuda, StatisticsMergeAndCommitMatchTheCpu) {
  for (const Shape& s : kStatisticsCudaShapes) {
    for (DType dtype : {DType::f32, DType::f64}) {
      SCOPED_TRACE(s.str() + " " + std::string(dtype_name(dtype)));
      const double m = static_cast<double>(s[0] * s[2] * s[3]);
      const double tol = (dtype == DType::f64 ? 1e-12 : 1e-5) * std::sqrt(m);
      const Shape c{s[1]};
      const Tensor x = testing::random_tensor(s, dtype, cpu.stream(), 5, 1.0, 3.0);
      const Tensor gx = copy_to(x, gs());
      // Two "micro-batches" with the statistics of x each, merged.
      const Tensor mean = Tensor::empty(c, dtype, cpu), var = Tensor::empty(c, dtype, cpu);
      const Tensor acc_mean = Tensor::empty(c, dtype, cpu), acc_var = Tensor::empty(c, dtype, cpu);
      batch_norm_statistics(cpu, x, mean, var);
      const auto count = static_cast<int64_t>(m);
      batch_norm_merge_statistics(cpu, 0, acc_mean, acc_var, count, mean, var);
      batch_norm_merge_statistics(cpu, count, acc_mean, acc_var, count, mean, var);
      const Tensor rm = testing::random_tensor(c, dtype, cpu.stream(), 1),
                   rv = testing::random_tensor(c, dtype, cpu.stream(), 2, 0.5, 2.0);
      const Tensor grm = copy_to(rm, gs()), grv = copy_to(rv, gs());
      const Tensor gtracked = copy_to(Tensor::from_vector<int64_t>({7}, Shape{}, cpu.stream()), gs());
      gpu->synchronize();  // the copies have read rm and rv before the CPU updates them
      batch_norm_commit_statistics(cpu, 2 * count, acc_mean, acc_var, 0.2, rm, rv, Tensor());

      const Tensor gmean = testing::poisoned(c, dtype, gs()), gvar = testing::poisoned(c, dtype, gs());
      const Tensor gacc_mean = testing::poisoned(c, dtype, gs()), gacc_var = testing::poisoned(c, dtype, gs());
      batch_norm_statistics(*gpu, gx, gmean, gvar);
      EXPECT_TRUE(testing::tensors_close(gmean, mean, gs(), tol, tol));
      EXPECT_TRUE(testing::tensors_close(gvar, var, gs(), tol, tol));
      batch_norm_merge_statistics(*gpu, 0, gacc_mean, gacc_var, count, gmean, gvar);
      batch_norm_merge_statistics(*gpu, count, gacc_mean, gacc_var, count, gmean, gvar);
      EXPECT_TRUE(testing::tensors_close(gacc_mean, acc_mean, gs(), tol, tol));
      EXPECT_TRUE(testing::tensors_close(gacc_var, acc_var, gs(), tol, tol));
      batch_norm_commit_statistics(*gpu, 2 * count, gacc_mean, gacc_var, 0.2, grm, grv, gtracked);
      EXPECT_TRUE(testing::tensors_close(grm, rm, gs(), tol, tol));
      EXPECT_TRUE(testing::tensors_close(grv, rv, gs(), tol, tol));
      EXPECT_EQ(testing::to_doubles(gtracked, gs())[0], 8.0);

      // The same bits on every run.
      const Tensor again_mean = testing::poisoned(c, dtype, gs()), again_var = testing::poisoned(c, dtype, gs());
      batch_norm_statistics(*gpu, gx, again_mean, again_var);
      EXPECT_EQ(testing::bytes_of(again_mean, gs()), testing::bytes_of(gmean, gs()));
      EXPECT_EQ(testing::bytes_of(again_var, gs()), testing::bytes_of(gvar, gs()));
    }
  }
}

}  // namespace
}  // namespace baton::kernels
