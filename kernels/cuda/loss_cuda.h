// CUDA launchers of the loss ops (kernels/loss.h). Plain C++: raw device pointers, counts, dtypes,
// the Context first (work on its device and stream). Arguments are checked by kernels/loss.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// Counts the labels (i32 or i64) outside [0, classes) with one kernel on the stream; when there are
// some and `record` (a LabelCheckRecord of kernels/deferred_check_types.h in device memory) holds no
// failure yet, writes {op (a CheckedOp), count, first bad row, its value, classes, ctx.check_tag()}
// there. The host does not wait.
void check_labels(Context& ctx, const void* labels, DType label_dtype, int64_t rows, int64_t classes, int64_t op,
                  void* record);

// Device memory the forward pass needs (passed as `workspace`): one double per row.
size_t softmax_cross_entropy_forward_workspace_bytes(int64_t rows);
// logits and probs_out: [rows, classes] of `dtype`; loss_out: one f32 (f64 for f64 logits).
void softmax_cross_entropy_forward(Context& ctx, const void* logits, DType dtype, const void* labels, DType label_dtype,
                                   int64_t rows, int64_t classes, double smoothing, void* loss_out, void* probs_out,
                                   void* workspace);
void softmax_cross_entropy_backward(Context& ctx, const void* probs, DType dtype, const void* labels, DType label_dtype,
                                    int64_t rows, int64_t classes, double smoothing, double grad_scale, void* dlogits);
// count_out: one i64 in device memory.
void topk_correct(Context& ctx, const void* logits, DType dtype, const void* labels, DType label_dtype, int64_t rows,
                  int64_t classes, int k, int64_t* count_out);

}  // namespace baton::kernels::cuda
