// Batch norm over channels-last activations on the CPU, where kernels/batch_norm.cc's ops send them
// (after their checks): float32 training passes with affine parameters run oneDNN's NHWC primitives;
// every other case goes through row-major copies and the reference. num_batches_tracked is the
// caller's to increment.
#pragma once

#include "kernels/batch_norm.h"
#include "runtime/core/context.h"

namespace baton::kernels::channels_last {

// The op of kernels/batch_norm.h to run.
enum class BatchNormOp { forward_train, forward_eval, backward_train, backward_eval };

// Runs `op` with its tensors named as in BatchNormTensors (the eval ops' given statistics are
// `mean` and `var`); momentum is used by forward_train only.
void batch_norm(Context& ctx, BatchNormOp op, const BatchNormTensors& t, double eps, double momentum = 0.0);

}  // namespace baton::kernels::channels_last
