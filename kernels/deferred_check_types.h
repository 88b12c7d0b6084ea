// The layout of a deferred label check's record in a Context's device-check buffer
// (Context::device_checks()), shared by the op front ends and the CUDA check kernel.
#pragma once

#include <cstdint>

namespace baton::kernels {

// The op whose label check failed first (0: no failure recorded).
enum class CheckedOp : int64_t {
  none = 0,
  softmax_cross_entropy_forward = 1,
  softmax_cross_entropy_backward = 2,
  topk_correct = 3,
  one_hot = 4,  // its labels are the argument 'indices', and a row is a position
};

// The first failed label check since the record was last read: written once by the check that
// found bad labels while `op` was still none, then left alone until the host reads and resets it.
struct LabelCheckRecord {
  int64_t op;           // a CheckedOp
  int64_t count;        // labels outside [0, classes) in that call
  int64_t first_row;    // the first of them
  int64_t first_value;  // its value
  int64_t classes;
  int64_t tag;  // the context's check_tag() when the failing op was issued
};

}  // namespace baton::kernels
