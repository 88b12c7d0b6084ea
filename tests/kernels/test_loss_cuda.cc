// Loss ops on CUDA against the CPU reference: rows x classes of 1, 7, 1023, 3093 and 2^20 + 3
// elements (both the warp-per-row and the block-per-row kernels), every logits and label dtype, poisoned
// outputs, aligned and unaligned buffers for the vectorised backward, determinism, bad labels
// (reported at the next synchronisation, or by the op itself with synchronised checks).
// The small shapes run in every (logits, label) dtype combination and cover both row kernels ([3, 1031]
// takes the block-per-row path, the others the warp-per-row one) and the backward's vector and scalar tails;
// each 2^20 + 3 shape (many rows per warp-row grid, 149797 classes per block, rows beyond the grid) runs in one
// combination, a different one per shape: its size exercises the grid arithmetic, not the dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/deferred_checks.h"
#include "kernels/loss.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::bytes_of;
struct RowsClasses {
  int64_t rows, classes;
};
// 1, 7, 1023 = 33 * 31, 3093 = 3 * 1031 and 2^20 + 3 = 1141 * 919 = 7 * 149797 elements. Up to 1024
// classes a warp handles a row, beyond that a block.
constexpr RowsClasses kLossSmallShapes[] = {{1, 1}, {1, 7}, {7, 1}, {33, 31}, {3, 1031}};

// One shape in one logits and one label dtype.
struct LossCase {
  RowsClasses shape;
  DType dtype, label_dtype;
};
constexpr DType kLabelDTypes[] = {DType::i32, DType::i64};
constexpr LossCase kLossLargeCases[] = {{{1141, 919}, DType::f16, DType::i32},
                                        {{7, 149797}, DType::f32, DType::i64},
                                        {{149797, 7}, DType::bf16, DType::i64}};

// The small shapes in every dtype combination, then the large cases.
std::vector<LossCase> loss_cases() {
  std::vector<LossCase> cases;
  for (const RowsClasses& shape : kLossSmallShapes) {
    for (DType dtype : testing::kFloatingDTypes) {
      for (DType label_dtype : kLabelDTypes) cases.push_back({shape, dtype, label_dtype});
    }
  }
  cases.insert(cases.end(), std::begin(kLossLargeCases), std::end(kLossLargeCases));
  return cases;
}

std::string describe_loss_case(const LossCase& c) {
  return "[" + std::to_string(c.shape.rows) + ", " + std::to_string(c.shape.classes) + "] " +
         std::string(dtype_name(c.dtype)) + " labels " + std::string(dtype_name(c.label_dtype));
}

DType loss_dtype(DType logits) { return logits == DType::f64 ? DType::f64 : DType::f32; }

// The loss is computed in float (double for f64) on both devices; the CPU sums in double, CUDA in
// float within a row, so allow a few float roundings of a sum over up to 149797 terms.
double loss_tolerance(DType dtype) { return dtype == DType::f64 ? 1e-12 : 2e-5; }

// Labels in [0, classes), the same values on any stream.
Tensor labels_on(const Stream& s, RowsClasses shape, DType dtype, uint64_t seed) {
  std::vector<double> y = testing::random_values(shape.rows, DType::i64, seed, 0.0, static_cast<double>(shape.classes));
  for (double& v : y) v = std::min(v, static_cast<double>(shape.classes - 1));
  return testing::from_doubles(y, Shape{shape.rows}, dtype, s);
}

class LossCuda : public testing::CudaOpTest {};

TEST_F(LossCuda, ForwardMatchesCpu) {
  uint64_t seed = 1;
  for (const LossCase& c : loss_cases()) {
    const RowsClasses shape = c.shape;
    const DType dtype = c.dtype;
    const double eps = seed % 2 == 0 ? 0.1 : 0.0;
    SCOPED_TRACE(describe_loss_case(c) + " eps " + std::to_string(eps));
    ++seed;
    const Shape logits_shape{shape.rows, shape.classes};
    Tensor logits_c = testing::random_tensor(logits_shape, dtype, cpu.stream(), seed, -4.0, 4.0);
    Tensor logits_g = testing::random_tensor(logits_shape, dtype, gs(), seed, -4.0, 4.0);
    Tensor labels_c = labels_on(cpu.stream(), shape, c.label_dtype, seed + 1000);
    Tensor labels_g = labels_on(gs(), shape, c.label_dtype, seed + 1000);
    Tensor loss_c = Tensor::empty(Shape{}, loss_dtype(dtype), cpu),
           loss_g = Tensor::empty(Shape{}, loss_dtype(dtype), *gpu);
    Tensor probs_c = Tensor::empty(logits_shape, dtype, cpu), probs_g = Tensor::empty(logits_shape, dtype, *gpu);
    testing::poison(loss_c, cpu.stream());
    testing::poison(probs_c, cpu.stream());
    testing::poison(loss_g, gs());
    testing::poison(probs_g, gs());
    softmax_cross_entropy_forward(cpu, logits_c, labels_c, eps, loss_c, probs_c);
    softmax_cross_entropy_forward(*gpu, logits_g, labels_g, eps, loss_g, probs_g);
    const double tol = loss_tolerance(dtype);
    EXPECT_TRUE(testing::tensors_close(loss_g, loss_c, gs(), tol, tol));
    EXPECT_TRUE(testing::tensors_close(probs_g, probs_c, gs()));
  }
}

TEST_F(LossCuda, ForwardIsDeterministic) {
  for (const RowsClasses& shape : {RowsClasses{1141, 919}, RowsClasses{7, 149797}}) {
    const Shape logits_shape{shape.rows, shape.classes};
    Tensor logits = testing::random_tensor(logits_shape, DType::f32, gs(), 5, -4.0, 4.0);
    Tensor labels = labels_on(gs(), shape, DType::i64, 6);
    Tensor loss_a = Tensor::empty(Shape{}, DType::f32, *gpu), loss_b = Tensor::empty(Shape{}, DType::f32, *gpu);
    Tensor probs_a = Tensor::empty(logits_shape, DType::f32, *gpu),
           probs_b = Tensor::empty(logits_shape, DType::f32, *gpu);
    softmax_cross_entropy_forward(*gpu, logits, labels, 0.1, loss_a, probs_a);
    softmax_cross_entropy_forward(*gpu, logits, labels, 0.1, loss_b, probs_b);
    EXPECT_EQ(bytes_of(loss_a, gs()), bytes_of(loss_b, gs())) << shape.rows << " x " << shape.classes;
    EXPECT_EQ(bytes_of(probs_a, gs()), bytes_of(probs_b, gs())) << shape.rows << " x " << shape.classes;
  }
}

TEST_F(LossCuda, BackwardMatchesCpuAlignedAndUnaligned) {
  uint64_t seed = 100;
  for (const LossCase& c : loss_cases()) {
    const RowsClasses shape = c.shape;
    const DType dtype = c.dtype;
    for (bool unaligned : {false, true}) {
      SCOPED_TRACE(describe_loss_case(c) + (unaligned ? " unaligned" : " aligned"));
      ++seed;
      const Shape probs_shape{shape.rows, shape.classes};
      Tensor probs_c = testing::random_tensor(probs_shape, dtype, cpu.stream(), seed, 0.0, 1.0);
      Tensor probs_g = testing::random_tensor(probs_shape, dtype, gs(), seed, 0.0, 1.0);
      Tensor labels_c = labels_on(cpu.stream(), shape, c.label_dtype, seed + 1000);
      Tensor labels_g = labels_on(gs(), shape, c.label_dtype, seed + 1000);
      Tensor dlogits_c = Tensor::empty(probs_shape, dtype, cpu);
      // Unaligned: probs and dlogits start one element past a 16-byte boundary.
      const Tensor dlogits_g = testing::poisoned(probs_shape, dtype, gs(), unaligned);
      if (unaligned) probs_g = testing::copy_to(probs_g, gs(), true);
      testing::poison(dlogits_c, cpu.stream());
      // grad_scale = 3 N makes the gradients O(1), so the tolerance is relative to them at every N.
      const double grad_scale = 3.0 * static_cast<double>(shape.rows);
      softmax_cross_entropy_backward(cpu, probs_c, labels_c, 0.1, grad_scale, dlogits_c);
      softmax_cross_entropy_backward(*gpu, probs_g, labels_g, 0.1, grad_scale, dlogits_g);
      EXPECT_TRUE(testing::tensors_close(dlogits_g, dlogits_c, gs()));
    }
  }
}

TEST_F(LossCuda, TopkCorrectMatchesCpu) {
  uint64_t seed = 200;
  for (const LossCase& c : loss_cases()) {
    const RowsClasses shape = c.shape;
    const DType dtype = c.dtype;
    ++seed;
    const Shape logits_shape{shape.rows, shape.classes};
    // Integer logits in [-4, 4): many ties with the label's logit.
    const std::vector<double> x = testing::random_values(logits_shape.numel(), DType::i64, seed, -4.0, 4.0);
    Tensor logits_c = testing::from_doubles(x, logits_shape, dtype, cpu.stream());
    Tensor logits_g = testing::from_doubles(x, logits_shape, dtype, gs());
    Tensor labels_c = labels_on(cpu.stream(), shape, c.label_dtype, seed + 1000);
    Tensor labels_g = labels_on(gs(), shape, c.label_dtype, seed + 1000);
    for (int64_t k : {int64_t{1}, std::min<int64_t>(5, shape.classes), shape.classes}) {
      SCOPED_TRACE(describe_loss_case(c) + " k " + std::to_string(k));
      Tensor count_c = Tensor::empty(Shape{}, DType::i64, cpu), count_g = Tensor::empty(Shape{}, DType::i64, *gpu);
      testing::poison(count_c, cpu.stream());
      testing::poison(count_g, gs());
      topk_correct(cpu, logits_c, labels_c, static_cast<int>(k), count_c);
      topk_correct(*gpu, logits_g, labels_g, static_cast<int>(k), count_g);
      const int64_t expected = count_c.to_vector<int64_t>(cpu.stream())[0];
      EXPECT_EQ(count_g.to_vector<int64_t>(gs())[0], expected);
      if (k == shape.classes) {
        EXPECT_EQ(expected, shape.rows);  // every label is within the top C
      }
    }
  }
}

// 1000 rows of 10 classes whose labels are all 3 but row 617's (10, the first bad one) and row 900's (-1).
std::vector<double> labels_with_two_bad() {
  std::vector<double> y(1000, 3.0);
  y[617] = 10;
  y[900] = -1;
  return y;
}

TEST_F(LossCuda, BadLabelsAreReportedAtTheNextSynchronisationOnceEach) {
  const int64_t rows = 1000, classes = 10;
  Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f32, gs(), 7);
  std::vector<double> y = labels_with_two_bad();
  Tensor labels = testing::from_doubles(y, Shape{rows}, DType::i64, gs());
  Tensor loss = Tensor::empty(Shape{}, DType::f32, *gpu);
  Tensor probs = Tensor::empty(Shape{rows, classes}, DType::f32, *gpu);
  Tensor count = Tensor::empty(Shape{}, DType::i64, *gpu);
  gpu->set_sync_checks(false);                                            // whatever BATON_SYNC_CHECKS says
  softmax_cross_entropy_forward(*gpu, logits, labels, 0.0, loss, probs);  // recorded, not thrown
  softmax_cross_entropy_backward(*gpu, probs, labels, 0.0, 1.0, probs);
  topk_correct(*gpu, logits, labels, 1, count);
  // The bad rows never index memory: a NaN loss, and they never count as correct.
  EXPECT_TRUE(std::isnan(testing::to_doubles(loss, gs())[0]));
  EXPECT_LE(count.to_vector<int64_t>(gs())[0], rows - 2);
  // The first failure (the forward's) is reported once, with the message the op would have thrown.
  EXPECT_ERROR_MENTIONS(
      "softmax_cross_entropy_forward: argument 'labels' has 2 value(s) outside [0, 10), the first is 10 at row 617",
      raise_deferred_errors(*gpu));
  EXPECT_NO_THROW(raise_deferred_errors(*gpu));
  topk_correct(*gpu, logits, labels, 1, count);
  EXPECT_ERROR_MENTIONS("topk_correct: argument 'labels' has 2 value(s) outside [0, 10), the first is 10 at row 617",
                        raise_deferred_errors(*gpu));

  // The context still works; i32 labels are checked alike.
  y[617] = 0;
  y[900] = 9;
  softmax_cross_entropy_forward(*gpu, logits, testing::from_doubles(y, Shape{rows}, DType::i32, gs()), 0.0, loss,
                                probs);
  EXPECT_NO_THROW(raise_deferred_errors(*gpu));
  EXPECT_TRUE(std::isfinite(testing::to_doubles(loss, gs())[0]));
  y[5] = -7;
  softmax_cross_entropy_backward(*gpu, probs, testing::from_doubles(y, Shape{rows}, DType::i32, gs()), 0.0, 1.0, probs);
  EXPECT_ERROR_MENTIONS(
      "softmax_cross_entropy_backward: argument 'labels' has 1 value(s) outside [0, 10), the first is -7 at row 5",
      raise_deferred_errors(*gpu));
}

TEST_F(LossCuda, BadLabelsAreCopiedWithTheRecordAndResetThere) {
  const int64_t rows = 1000, classes = 10;
  Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f32, gs(), 7);
  Tensor labels = testing::from_doubles(labels_with_two_bad(), Shape{rows}, DType::i64, gs());
  Tensor count = Tensor::empty(Shape{}, DType::i64, *gpu);
  gpu->set_sync_checks(false);
  topk_correct(*gpu, logits, labels, 1, count);
  Tensor host = Tensor::empty_host(Shape{static_cast<int64_t>(kDeferredCheckBytes)}, DType::u8, HostMemory::pinned);
  copy_deferred_errors_async(*gpu, host.data_ptr());
  gpu->synchronize();
  EXPECT_ERROR_MENTIONS("topk_correct: argument 'labels' has 2 value(s) outside [0, 10), the first is 10 at row 617",
                        raise_deferred_errors(host.data_ptr()));
  EXPECT_NO_THROW(raise_deferred_errors(*gpu)) << "the copy did not reset the record";
}

TEST_F(LossCuda, SyncChecksReportBadLabelsFromTheOpBeforeAnyOutputIsWritten) {
  const int64_t rows = 1000, classes = 10;
  gpu->set_sync_checks(true);
  Tensor logits = testing::random_tensor(Shape{rows, classes}, DType::f32, gs(), 7);
  std::vector<double> y = labels_with_two_bad();
  Tensor labels = testing::from_doubles(y, Shape{rows}, DType::i64, gs());
  Tensor loss = Tensor::empty(Shape{}, DType::f32, *gpu);
  Tensor probs = Tensor::empty(Shape{rows, classes}, DType::f32, *gpu);
  testing::poison(loss, gs());
  testing::poison(probs, gs());
  EXPECT_ERROR_MENTIONS(
      "softmax_cross_entropy_forward: argument 'labels' has 2 value(s) outside [0, 10), the first is 10 at row 617",
      softmax_cross_entropy_forward(*gpu, logits, labels, 0.0, loss, probs));
  for (double v : testing::to_doubles(probs, gs())) ASSERT_TRUE(std::isnan(v)) << "an output was written";
  EXPECT_ERROR_MENTIONS("softmax_cross_entropy_backward: argument 'labels'",
                        softmax_cross_entropy_backward(*gpu, probs, labels, 0.0, 1.0, probs));
  Tensor count = Tensor::empty(Shape{}, DType::i64, *gpu);
  EXPECT_ERROR_MENTIONS("topk_correct: argument 'labels'", topk_correct(*gpu, logits, labels, 1, count));
  EXPECT_NO_THROW(raise_deferred_errors(*gpu)) << "a failure reported by its op is reported again";

  // The context still works.
  y[617] = 0;
  y[900] = 9;
  softmax_cross_entropy_forward(*gpu, logits, testing::from_doubles(y, Shape{rows}, DType::i32, gs()), 0.0, loss,
                                probs);
  EXPECT_TRUE(std::isfinite(testing::to_doubles(loss, gs())[0]));
}

}  // namespace
}  // namespace baton::kernels
