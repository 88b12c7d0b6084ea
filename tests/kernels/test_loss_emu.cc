// The loss ops on the emulated GPU (BATON_CUDA=EMU builds only): a softmax cross-entropy forward,
// backward and top-k make the host wait for the GPU not once, good labels or bad; the bad ones are
// reported by raise_deferred_errors, which waits once, or by the op itself with synchronised checks.
#include <gtest/gtest.h>

#include <vector>

#include "baton_emu/introspection.h"
#include "kernels/deferred_checks.h"
#include "kernels/loss.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

size_t host_syncs() { return baton_emu::host_sync_counts().total(); }

class LossEmu : public testing::CudaOpTest {
 protected:
  void SetUp() override {
    CudaOpTest::SetUp();
    if (gpu) gpu->set_sync_checks(false);  // whatever BATON_SYNC_CHECKS says
  }

  // Forward, backward and top-1 over 300 rows of 12 classes with `labels` (i64); returns the host
  // synchronisations they made.
  size_t run_ops(const std::vector<double>& labels) {
    const int64_t rows = 300, classes = 12;
    const Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f32, gs(), 3);
    const Tensor y = testing::from_doubles(labels, Shape{rows}, DType::i64, gs());
    Tensor loss = Tensor::empty(Shape{}, DType::f32, *gpu);
    Tensor probs = Tensor::empty(Shape{rows, classes}, DType::f32, *gpu);
    Tensor dlogits = Tensor::empty(Shape{rows, classes}, DType::f32, *gpu);
    Tensor count = Tensor::empty(Shape{}, DType::i64, *gpu);
    gpu->synchronize();
    const size_t before = host_syncs();
    softmax_cross_entropy_forward(*gpu, logits, y, 0.1, loss, probs);
    softmax_cross_entropy_backward(*gpu, probs, y, 0.1, 1.0, dlogits);
    topk_correct(*gpu, logits, y, 1, count);
    return host_syncs() - before;
  }
};

std::vector<double> good_labels() {
  std::vector<double> y(300);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>((i * 7) % 12);
  return y;
}

TEST_F(LossEmu, ForwardBackwardAndTopkNeverWaitForTheGpu) {
  EXPECT_EQ(run_ops(good_labels()), 0u) << "the label checks synchronise the stream";
  EXPECT_EQ(run_ops(good_labels()), 0u);
  const size_t before = host_syncs();
  EXPECT_NO_THROW(raise_deferred_errors(*gpu));
  EXPECT_EQ(host_syncs() - before, 1u) << "raise_deferred_errors waits once for the record";
}

TEST_F(LossEmu, BadLabelsAreRecordedWithoutWaitingAndReportedOnce) {
  std::vector<double> y = good_labels();
  y[41] = 12;
  y[250] = -3;
  EXPECT_EQ(run_ops(y), 0u);
  EXPECT_ERROR_MENTIONS(
      "softmax_cross_entropy_forward: argument 'labels' has 2 value(s) outside [0, 12), the first is 12 at row 41",
      raise_deferred_errors(*gpu));
  EXPECT_NO_THROW(raise_deferred_errors(*gpu));
}

TEST_F(LossEmu, SyncChecksWaitInTheOpAndThrowThere) {
  gpu->set_sync_checks(true);
  EXPECT_EQ(run_ops(good_labels()), 3u) << "one synchronisation per checked op";
  std::vector<double> y = good_labels();
  y[41] = 12;
  EXPECT_ERROR_MENTIONS(
      "softmax_cross_entropy_forward: argument 'labels' has 1 value(s) outside [0, 12), the first is 12 at row 41",
      run_ops(y));
}

TEST_F(LossEmu, ACheckFreeContextHasNothingToWaitFor) {
  const size_t before = host_syncs();
  EXPECT_NO_THROW(raise_deferred_errors(*gpu));
  EXPECT_FALSE(gpu->has_device_checks());
  EXPECT_EQ(host_syncs() - before, 0u);
}

}  // namespace
}  // namespace baton::kernels
