// cuDNN launchers of the convolution (kernels/conv.h), in kernels/cuda/conv_cuda.cc. Plain C++: shapes,
// raw device pointers and the Context, which supplies the cuDNN handle (bound to its stream), the
// workspace and the policy (allow_tf32, deterministic, workspace_limit). Arguments are checked by
// kernels/conv.cc: f32 or f64, consistent shapes, every dimension but N at least 1, N >= 1 and every
// dimension below 2^31.
#pragma once

#include <functional>

#include "kernels/conv_types.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"

namespace baton::kernels::cuda {

// One pass over x [N, C, H, W], w [K, C / groups, R, S], y [N, K, P, Q]. The pass's output is x
// (backward_data: written), w (backward_filter: accumulated) or y (forward: written).
struct ConvArgs {
  Conv2dPass pass = Conv2dPass::forward;
  DType dtype = DType::f32;
  Shape x, w, y;
  Conv2dParams params;
  void* x_data = nullptr;
  void* w_data = nullptr;
  void* y_data = nullptr;
};

// Runs the pass with the cached algorithm for ctx's settings, measuring the algorithms first when
// the problem is new (see kernels/conv.h).
void conv2d(Context& ctx, const ConvArgs& args);

// The same cuDNN call, bare: descriptors and a workspace of the cached algorithm's size made now;
// each call of the result issues only the convolution. Throws when no algorithm is cached.
std::function<void()> conv2d_library_call(Context& ctx, const ConvArgs& args);

}  // namespace baton::kernels::cuda
