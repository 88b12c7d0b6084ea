// Loss ops on the CPU against plain float64 references: softmax cross-entropy forward (including
// huge logits), backward (against the reference and central differences of the forward loss),
// top-k against a sort, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/loss.h"
#include "tests/support/test_support.h"

namespace baton::kernels {
namespace {

using testing::kFloatingDTypes;

constexpr DType kLabelDTypes[] = {DType::i32, DType::i64};

DType loss_dtype(DType logits) { return logits == DType::f64 ? DType::f64 : DType::f32; }

// The forward pass into freshly poisoned outputs.
struct Forward {
  Tensor loss, probs;
};
Forward run_forward(Context& ctx, const Tensor& logits, const Tensor& labels, double eps) {
  Forward f{testing::poisoned(Shape{}, loss_dtype(logits.dtype()), ctx.stream()),
            testing::poisoned(logits.shape(), logits.dtype(), ctx.stream())};
  softmax_cross_entropy_forward(ctx, logits, labels, eps, f.loss, f.probs);
  return f;
}

// Labels in [0, classes) from a seed, as doubles.
std::vector<double> random_labels(int64_t rows, int64_t classes, uint64_t seed) {
  std::vector<double> labels = testing::random_values(rows, DType::i64, seed, 0.0, static_cast<double>(classes));
  for (double& y : labels) y = std::min(y, static_cast<double>(classes - 1));
  return labels;
}

// The definition, in double: p = exp(x) / sum exp(x) (no shift: inputs are small), loss = mean over
// rows of -sum_c q_c log p_c with q = (1 - eps) onehot + eps / C.
struct Reference {
  double loss = 0;
  std::vector<double> probs;
};
Reference naive_softmax_cross_entropy(const std::vector<double>& x, const std::vector<double>& labels, int64_t rows,
                                      int64_t classes, double eps) {
  Reference ref;
  ref.probs.resize(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double denominator = 0;
    for (int64_t c = 0; c < classes; ++c) denominator += std::exp(x[r * classes + c]);
    for (int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(x[r * classes + c]) / denominator;
      ref.probs[r * classes + c] = p;
      const double q = (c == static_cast<int64_t>(labels[r]) ? 1.0 - eps : 0.0) + eps / static_cast<double>(classes);
      ref.loss -= q * std::log(p);
    }
  }
  ref.loss /= static_cast<double>(rows);
  return ref;
}

TEST(SoftmaxCrossEntropy, ForwardMatchesTheDefinition) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t shapes[][2] = {{1, 1}, {5, 7}, {3, 1100}};
  for (DType dtype : kFloatingDTypes) {
    for (DType label_dtype : kLabelDTypes) {
      for (const auto& shape : shapes) {
        for (double eps : {0.0, 0.1}) {
          const int64_t rows = shape[0], classes = shape[1];
          SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " labels " << dtype_name(label_dtype) << " ["
                                            << rows << ", " << classes << "] eps " << eps);
          const std::vector<double> x = testing::random_values(rows * classes, dtype, 11, -3.0, 3.0);
          const std::vector<double> y = random_labels(rows, classes, 12);
          Tensor logits = testing::from_doubles(x, Shape{rows, classes}, dtype, s);
          Tensor labels = testing::from_doubles(y, Shape{rows}, label_dtype, s);
          const Forward f = run_forward(ctx, logits, labels, eps);
          const Reference ref = naive_softmax_cross_entropy(x, y, rows, classes, eps);
          const double tol = testing::default_tolerance(dtype);
          EXPECT_TRUE(testing::all_close(testing::to_doubles(f.loss, s), {ref.loss}, tol, tol));
          EXPECT_TRUE(testing::all_close(testing::to_doubles(f.probs, s), ref.probs, tol, tol));
        }
      }
    }
  }
}

TEST(SoftmaxCrossEntropy, HugeLogitsAreStable) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  // Rows 0 and 1: two logits 2 apart near 1e4 dominate; row 2: all equal at -1e4.
  const std::vector<double> x = {1e4, 1e4 - 2, -1e4, 0, 1e4, 1e4 - 2, -1e4, 0, -1e4, -1e4, -1e4, -1e4};
  const std::vector<double> y = {0, 1, 2};
  const double e2 = std::exp(-2.0);
  const double expected_loss = (std::log1p(e2) + (2.0 + std::log1p(e2)) + std::log(4.0)) / 3.0;
  const std::vector<double> dominant = {1.0 / (1.0 + e2), e2 / (1.0 + e2), 0.0, 0.0};
  std::vector<double> expected_probs = dominant;
  expected_probs.insert(expected_probs.end(), dominant.begin(), dominant.end());
  expected_probs.insert(expected_probs.end(), 4, 0.25);
  for (DType dtype : {DType::f32, DType::f64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor logits = testing::from_doubles(x, Shape{3, 4}, dtype, s);
    Tensor labels = testing::from_doubles(y, Shape{3}, DType::i64, s);
    const Forward f = run_forward(ctx, logits, labels, 0.0);
    const double tol = testing::default_tolerance(dtype);
    EXPECT_TRUE(testing::all_close(testing::to_doubles(f.loss, s), {expected_loss}, tol, tol));
    EXPECT_TRUE(testing::all_close(testing::to_doubles(f.probs, s), expected_probs, tol, tol));
  }
}

TEST(SoftmaxCrossEntropy, MaskedClassesKeepTheLossFiniteWithoutSmoothing) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const double e = std::exp(1.0);
  for (DType dtype : {DType::f32, DType::f64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor logits = testing::from_doubles({0.0, -INFINITY, 1.0}, Shape{1, 3}, dtype, s);
    Tensor labels = testing::from_doubles({2}, Shape{1}, DType::i32, s);
    const Forward f = run_forward(ctx, logits, labels, 0.0);
    const double tol = testing::default_tolerance(dtype);
    EXPECT_TRUE(testing::all_close(testing::to_doubles(f.loss, s), {std::log1p(e) - 1.0}, tol, tol));
    EXPECT_TRUE(testing::all_close(testing::to_doubles(f.probs, s), {1.0 / (1.0 + e), 0.0, e / (1.0 + e)}, tol, tol));
    // Smoothing puts target mass on the masked class: its log-probability is -inf.
    EXPECT_EQ(testing::to_doubles(run_forward(ctx, logits, labels, 0.1).loss, s)[0], INFINITY);
  }
}

TEST(SoftmaxCrossEntropy, BackwardMatchesTheDefinition) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t rows = 6, classes = 9;
  const double eps = 0.2, grad_scale = 2.5;
  for (DType dtype : kFloatingDTypes) {
    for (DType label_dtype : kLabelDTypes) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " labels " << dtype_name(label_dtype));
      // Any probabilities will do for the formula; they need not sum to one.
      const std::vector<double> p = testing::random_values(rows * classes, dtype, 21, 0.0, 1.0);
      const std::vector<double> y = random_labels(rows, classes, 22);
      Tensor probs = testing::from_doubles(p, Shape{rows, classes}, dtype, s);
      Tensor labels = testing::from_doubles(y, Shape{rows}, label_dtype, s);
      Tensor dlogits = Tensor::empty(Shape{rows, classes}, dtype, ctx);
      testing::poison(dlogits, s);
      softmax_cross_entropy_backward(ctx, probs, labels, eps, grad_scale, dlogits);
      std::vector<double> expected(p.size());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < classes; ++c) {
          const double q = (c == static_cast<int64_t>(y[r]) ? 1.0 - eps : 0.0) + eps / classes;
          expected[r * classes + c] = grad_scale * (p[r * classes + c] - q) / rows;
        }
      }
      const double tol = testing::default_tolerance(dtype);
      EXPECT_TRUE(testing::all_close(testing::to_doubles(dlogits, s), expected, tol, tol));
    }
  }
}

TEST(SoftmaxCrossEntropy, BackwardIsTheGradientOfTheForwardLoss) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t rows = 4, classes = 6;
  std::vector<double> x = testing::random_values(rows * classes, DType::f64, 31, -2.0, 2.0);
  const std::vector<double> y = random_labels(rows, classes, 32);
  Tensor labels = testing::from_doubles(y, Shape{rows}, DType::i32, s);
  for (double eps : {0.0, 0.1}) {
    SCOPED_TRACE(::testing::Message() << "eps " << eps);
    auto forward_at = [&](const std::vector<double>& values) {
      return run_forward(ctx, testing::from_doubles(values, Shape{rows, classes}, DType::f64, s), labels, eps);
    };
    auto loss_at = [&](const std::vector<double>& values) {
      return testing::to_doubles(forward_at(values).loss, s)[0];
    };
    const Tensor probs = forward_at(x).probs;
    Tensor dlogits = Tensor::empty(Shape{rows, classes}, DType::f64, ctx);
    testing::poison(dlogits, s);
    softmax_cross_entropy_backward(ctx, probs, labels, eps, 1.0, dlogits);
    const std::vector<double> analytic = testing::to_doubles(dlogits, s);
    const double h = 1e-5;
    for (size_t i = 0; i < x.size(); ++i) {
      const double saved = x[i];
      x[i] = saved + h;
      const double plus = loss_at(x);
      x[i] = saved - h;
      const double minus = loss_at(x);
      x[i] = saved;
      const double numeric = (plus - minus) / (2 * h);
      const double scale = std::max({std::abs(analytic[i]), std::abs(numeric), 1.0});
      EXPECT_LT(std::abs(analytic[i] - numeric) / scale, 1e-8)
          << "element " << i << ": analytic " << analytic[i] << ", numeric " << numeric;
    }
  }
}

TEST(TopkCorrect, MatchesASort) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const int64_t rows = 200, classes = 10;
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    // Few distinct values, so ties with the label's logit are common.
    std::vector<double> x = testing::random_values(rows * classes, DType::i64, 41, -4.0, 4.0);
    const std::vector<double> y = random_labels(rows, classes, 42);
    Tensor logits = testing::from_doubles(x, Shape{rows, classes}, dtype, s);
    Tensor labels = testing::from_doubles(y, Shape{rows}, DType::i64, s);
    for (int k : {1, 3, 10}) {
      int64_t expected = 0;
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> row(x.begin() + r * classes, x.begin() + (r + 1) * classes);
        std::sort(row.begin(), row.end(), std::greater<>());
        expected += x[r * classes + static_cast<int64_t>(y[r])] >= row[k - 1] ? 1 : 0;  // ties count as correct
      }
      Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
      testing::poison(count, s);
      topk_correct(ctx, logits, labels, k, count);
      EXPECT_EQ(count.to_vector<int64_t>(s)[0], expected) << "k " << k;
      if (k < classes) {
        EXPECT_LT(expected, rows) << "the test should have incorrect rows for k " << k;
      }
    }
  }
}

TEST(TopkCorrect, TiesFavourTheLabelAndNanIsNeverCorrect) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  // Row 0: the label ties the maximum (correct for k = 1). Row 1: one logit is greater (wrong for
  // k = 1). Row 2: the label's logit is NaN (never correct). Row 3: a NaN elsewhere is ignored.
  const std::vector<double> x = {1, 3, 3, 0, 5, 4, 1, NAN, 2, 0, 2, NAN};
  Tensor logits = testing::from_doubles(x, Shape{4, 3}, DType::f32, s);
  Tensor labels = testing::from_doubles({1, 1, 1, 0}, Shape{4}, DType::i32, s);
  Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);
  topk_correct(ctx, logits, labels, 1, count);
  EXPECT_EQ(count.to_vector<int64_t>(s)[0], 2);
  topk_correct(ctx, logits, labels, 2, count);
  EXPECT_EQ(count.to_vector<int64_t>(s)[0], 3);
}

TEST(LossOps, BadInputNamesTheArgument) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  Tensor logits = testing::random_tensor(Shape{3, 4}, DType::f32, s, 51);
  Tensor labels = testing::from_doubles({0, 3, 1}, Shape{3}, DType::i64, s);
  Tensor loss = Tensor::empty(Shape{}, DType::f32, ctx);
  Tensor probs = Tensor::empty(Shape{3, 4}, DType::f32, ctx);
  Tensor count = Tensor::empty(Shape{}, DType::i64, ctx);

  for (double bad : {-1.0, 4.0}) {
    Tensor bad_labels = testing::from_doubles({0, bad, 1}, Shape{3}, DType::i32, s);
    testing::poison(probs, s);
    EXPECT_ERROR_MENTIONS(
        "'labels' has 1 value(s) outside [0, 4), the first is " + std::to_string(int(bad)) + " at row 1",
        softmax_cross_entropy_forward(ctx, logits, bad_labels, 0.0, loss, probs));
    for (double v : testing::to_doubles(probs, s)) EXPECT_TRUE(std::isnan(v)) << "an output was written";
    EXPECT_ERROR_MENTIONS("'labels'", softmax_cross_entropy_backward(ctx, probs, bad_labels, 0.0, 1.0, probs));
    EXPECT_ERROR_MENTIONS("'labels'", topk_correct(ctx, logits, bad_labels, 1, count));
  }
  EXPECT_ERROR_MENTIONS(
      "'labels'", softmax_cross_entropy_forward(ctx, logits, testing::from_doubles({0, 1}, Shape{2}, DType::i64, s),
                                                0.0, loss, probs));
  EXPECT_ERROR_MENTIONS(
      "'labels'", softmax_cross_entropy_forward(ctx, logits, testing::from_doubles({0, 1, 2}, Shape{3}, DType::f32, s),
                                                0.0, loss, probs));
  EXPECT_ERROR_MENTIONS("'logits'",
                        softmax_cross_entropy_forward(ctx, logits.reshape(Shape{12}), labels, 0.0, loss, probs));
  EXPECT_ERROR_MENTIONS(
      "'logits'", softmax_cross_entropy_forward(ctx, testing::random_tensor(Shape{3, 4}, DType::i32, s, 1), labels, 0.0,
                                                loss, probs));
  EXPECT_ERROR_MENTIONS("'probs_out'", softmax_cross_entropy_forward(ctx, logits, labels, 0.0, loss,
                                                                     Tensor::empty(Shape{3, 5}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("'probs_out'", softmax_cross_entropy_forward(ctx, logits, labels, 0.0, loss,
                                                                     Tensor::empty(Shape{3, 4}, DType::f64, ctx)));
  EXPECT_ERROR_MENTIONS("'loss_out'", softmax_cross_entropy_forward(ctx, logits, labels, 0.0,
                                                                    Tensor::empty(Shape{}, DType::f64, ctx), probs));
  EXPECT_ERROR_MENTIONS("'loss_out'", softmax_cross_entropy_forward(ctx, logits, labels, 0.0,
                                                                    Tensor::empty(Shape{1}, DType::f32, ctx), probs));
  EXPECT_ERROR_MENTIONS("'label_smoothing'", softmax_cross_entropy_forward(ctx, logits, labels, 1.5, loss, probs));
  EXPECT_ERROR_MENTIONS("'label_smoothing'", softmax_cross_entropy_forward(ctx, logits, labels, NAN, loss, probs));
  EXPECT_ERROR_MENTIONS("'labels'", softmax_cross_entropy_forward(ctx, logits, Tensor(), 0.0, loss, probs));
  EXPECT_ERROR_MENTIONS("'logits'",
                        softmax_cross_entropy_forward(
                            ctx, testing::random_tensor(Shape{3, 4}, DType::f32, ctx.stream(), 1).to(Device::cpu(1), s),
                            labels, 0.0, loss, probs));
  EXPECT_ERROR_MENTIONS("'grad_scale'", softmax_cross_entropy_backward(ctx, probs, labels, 0.0, INFINITY, probs));
  EXPECT_ERROR_MENTIONS("'label_smoothing'", softmax_cross_entropy_backward(ctx, probs, labels, -0.1, 1.0, probs));
  EXPECT_ERROR_MENTIONS("'dlogits'", softmax_cross_entropy_backward(ctx, probs, labels, 0.0, 1.0,
                                                                    Tensor::empty(Shape{4, 3}, DType::f32, ctx)));
  EXPECT_ERROR_MENTIONS("'k'", topk_correct(ctx, logits, labels, 0, count));
  EXPECT_ERROR_MENTIONS("'k'", topk_correct(ctx, logits, labels, 5, count));
  EXPECT_ERROR_MENTIONS("'count_out'", topk_correct(ctx, logits, labels, 1, Tensor::empty(Shape{}, DType::i32, ctx)));
  EXPECT_ERROR_MENTIONS("'logits'", softmax_cross_entropy_forward(ctx, Tensor::empty(Shape{0, 4}, DType::f32, ctx),
                                                                  Tensor::empty(Shape{0}, DType::i64, ctx), 0.0, loss,
                                                                  Tensor::empty(Shape{0, 4}, DType::f32, ctx)));
}

}  // namespace
}  // namespace baton::kernels
