// Loss ops: argument checks and device dispatch.
#include "kernels/loss.h"

#include <cmath>
#include <cstdint>
#include <string_view>

#include "kernels/cpu/loss_cpu.h"
#include "kernels/cuda/loss_cuda.h"
#include "kernels/deferred_checks.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

struct RowsClasses {
  int64_t rows;
  int64_t classes;
};

// Everything about the scores ([N, C], floating, N and C >= 1) and labels ([N], i32 or i64) that can be
// checked without reading the labels.
RowsClasses check_scores_and_labels(std::string_view op, const NamedTensor& scores, const Tensor& labels) {
  check_rank(op, scores, 2);
  check_floating(op, scores);
  const int64_t rows = scores.tensor.size(0), classes = scores.tensor.size(1);
  BATON_CHECK(rows >= 1 && classes >= 1, op, ": argument '", scores.name, "' has shape ", scores.tensor.shape().str(),
              ", expected at least one row and one class");
  check_rank(op, {"labels", labels}, 1);
  BATON_CHECK(labels.size(0) == rows, op, ": argument 'labels' has shape ", labels.shape().str(), ", expected [", rows,
              "] (one label per row of '", scores.name, "')");
  check_dtype_in(op, {"labels", labels}, {DType::i32, DType::i64});
  return {rows, classes};
}

void check_smoothing(std::string_view op, double label_smoothing) {
  BATON_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, op, ": argument 'label_smoothing' is ", label_smoothing,
              ", expected a value in [0, 1]");
}

// Every label in [0, classes): on the host for CPU tensors (an error at once); on CUDA a kernel records
// the first failure in the context's device-check buffer, reported at the next synchronisation
// (kernels/deferred_checks.h), or at once when the context synchronises its checks.
void check_label_values(std::string_view op, CheckedOp checked, Context& ctx, const Tensor& labels, RowsClasses rc) {
  on_device(
      op, ctx,
      [&] {
        LabelCheckRecord r{.op = static_cast<int64_t>(checked),
                           .count = 0,
                           .first_row = 0,
                           .first_value = 0,
                           .classes = rc.classes,
                           .tag = ctx.check_tag()};
        r.count = dispatch_labels(labels.dtype(), [&]<typename L>() {
          return cpu::count_bad_labels(labels.data<L>(), rc.rows, rc.classes, r.first_row, r.first_value);
        });
        if (r.count != 0) raise_label_check(r);
      },
      [&](auto& cuda_ctx) {
        cuda::check_labels(cuda_ctx, labels.data_ptr(), labels.dtype(), rc.rows, rc.classes,
                           static_cast<int64_t>(checked), cuda_ctx.device_checks());
        if (cuda_ctx.sync_checks()) raise_deferred_errors(cuda_ctx);
      });
}

}  // namespace

void softmax_cross_entropy_forward(Context& ctx, const Tensor& logits, const Tensor& labels, double label_smoothing,
                                   const Tensor& loss_out, const Tensor& probs_out) {
  constexpr std::string_view op = "softmax_cross_entropy_forward";
  check_on_context(op, ctx, {{"logits", logits}, {"labels", labels}, {"loss_out", loss_out}, {"probs_out", probs_out}});
  const RowsClasses rc = check_scores_and_labels(op, {"logits", logits}, labels);
  check_smoothing(op, label_smoothing);
  check_same_shape(op, {{"logits", logits}, {"probs_out", probs_out}});
  check_same_dtype(op, {{"logits", logits}, {"probs_out", probs_out}});
  check_rank(op, {"loss_out", loss_out}, 0);
  check_dtype_in(op, {"loss_out", loss_out}, {logits.dtype() == DType::f64 ? DType::f64 : DType::f32});
  check_label_values(op, CheckedOp::softmax_cross_entropy_forward, ctx, labels, rc);

  on_device_floating_labels(
      op, ctx, logits.dtype(), labels.dtype(),
      [&]<typename T, typename L>() {
        const double loss = cpu::softmax_cross_entropy_forward(logits.data<T>(), labels.data<L>(), rc.rows, rc.classes,
                                                               label_smoothing, probs_out.data<T>());
        loss_out.data<cpu::Acc<T>>()[0] = static_cast<cpu::Acc<T>>(loss);
      },
      [&](auto& cuda_ctx) {
        cuda::softmax_cross_entropy_forward(
            cuda_ctx, logits.data_ptr(), logits.dtype(), labels.data_ptr(), labels.dtype(), rc.rows, rc.classes,
            label_smoothing, loss_out.data_ptr(), probs_out.data_ptr(),
            cuda_ctx.workspace(cuda::softmax_cross_entropy_forward_workspace_bytes(rc.rows)));
      });
}

void softmax_cross_entropy_backward(Context& ctx, const Tensor& probs, const Tensor& labels, double label_smoothing,
                                    double grad_scale, const Tensor& dlogits) {
  constexpr std::string_view op = "softmax_cross_entropy_backward";
  check_on_context(op, ctx, {{"probs", probs}, {"labels", labels}, {"dlogits", dlogits}});
  const RowsClasses rc = check_scores_and_labels(op, {"probs", probs}, labels);
  check_smoothing(op, label_smoothing);
  BATON_CHECK(std::isfinite(grad_scale), op, ": argument 'grad_scale' is ", grad_scale, ", expected a finite value");
  check_same_shape(op, {{"probs", probs}, {"dlogits", dlogits}});
  check_same_dtype(op, {{"probs", probs}, {"dlogits", dlogits}});
  check_label_values(op, CheckedOp::softmax_cross_entropy_backward, ctx, labels, rc);

  on_device_floating_labels(
      op, ctx, probs.dtype(), labels.dtype(),
      [&]<typename T, typename L>() {
        cpu::softmax_cross_entropy_backward(probs.data<T>(), labels.data<L>(), rc.rows, rc.classes, label_smoothing,
                                            grad_scale, dlogits.data<T>());
      },
      [&](auto& cuda_ctx) {
        cuda::softmax_cross_entropy_backward(cuda_ctx, probs.data_ptr(), probs.dtype(), labels.data_ptr(),
                                             labels.dtype(), rc.rows, rc.classes, label_smoothing, grad_scale,
                                             dlogits.data_ptr());
      });
}

void topk_correct(Context& ctx, const Tensor& logits, const Tensor& labels, int k, const Tensor& count_out) {
  constexpr std::string_view op = "topk_correct";
  check_on_context(op, ctx, {{"logits", logits}, {"labels", labels}, {"count_out", count_out}});
  const RowsClasses rc = check_scores_and_labels(op, {"logits", logits}, labels);
  BATON_CHECK(k >= 1 && k <= rc.classes, op, ": argument 'k' is ", k, ", expected 1 <= k <= ", rc.classes,
              " (the number of classes)");
  check_rank(op, {"count_out", count_out}, 0);
  check_dtype_in(op, {"count_out", count_out}, {DType::i64});
  check_label_values(op, CheckedOp::topk_correct, ctx, labels, rc);

  on_device_floating_labels(
      op, ctx, logits.dtype(), labels.dtype(),
      [&]<typename T, typename L>() {
        count_out.data<int64_t>()[0] = cpu::topk_correct(logits.data<T>(), labels.data<L>(), rc.rows, rc.classes, k);
      },
      [&](auto& cuda_ctx) {
        cuda::topk_correct(cuda_ctx, logits.data_ptr(), logits.dtype(), labels.data_ptr(), labels.dtype(), rc.rows,
                           rc.classes, k, static_cast<int64_t*>(count_out.data_ptr()));
      });
}

}  // namespace baton::kernels
