// What kernels/batch_norm.cc hands the cuDNN launchers of kernels/cuda/batch_norm_cuda.h: the
// launchers' arguments from the op's tensors, and γ = 1, β = 0 or scratch outputs from ctx.workspace()
// where the caller gave none. Plain C++ (compiled in every build).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/batch_norm_cuda.h"
#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels::batch_norm_cudnn {

cuda::BatchNormDims dims_of(const Tensor& x);
void* pointer_or_null(const Tensor& t);
// The bytes of one per-channel tensor of x (x.size(1) elements of x's dtype).
size_t channel_bytes(const Tensor& x);

// Pieces of one ctx.workspace() block, each 256-byte aligned: sizes are planned first, then the
// block is taken once and carved in the same order.
class Scratch {
 public:
  // Plans a piece of `bytes` when `wanted`; returns its index (or -1).
  int plan(bool wanted, size_t bytes) {
    if (!wanted) return -1;
    offsets_.push_back(total_);
    total_ += (bytes + 255) / 256 * 256;
    return static_cast<int>(offsets_.size()) - 1;
  }
  void acquire(Context& ctx) {
    if (total_ > 0) base_ = static_cast<char*>(ctx.workspace(total_));
  }
  void* get(int piece) const { return piece < 0 ? nullptr : base_ + offsets_[static_cast<size_t>(piece)]; }

 private:
  std::vector<size_t> offsets_;
  size_t total_ = 0;
  char* base_ = nullptr;
};

// `t`'s pointer, or a workspace piece of `channels` elements filled with `value`, ordered on ctx's stream.
void* channel_or_constant(Context& ctx, const Tensor& t, const Scratch& scratch, int piece, DType dtype,
                          int64_t channels, double value);

// The cuDNN calls' arguments: the tensors' pointers, with γ and β (forward) or γ and the outputs
// (backward) resolved by the caller.
cuda::BatchNormForwardTrainArgs forward_train_args(const Tensor& x, const void* scale, const void* bias, double eps,
                                                   double momentum, const Tensor& y, const Tensor& save_mean,
                                                   const Tensor& save_invstd, const Tensor& running_mean,
                                                   const Tensor& running_var);
cuda::BatchNormBackwardTrainArgs backward_train_args(const Tensor& x, const Tensor& dy, const void* scale,
                                                     const Tensor& save_mean, const Tensor& save_invstd, double eps,
                                                     void* dx, void* weight_grad, void* bias_grad,
                                                     bool accumulate_param_grads);

// γ and β for cuDNN's forward calls: the given tensors, or ones and zeros in the workspace.
struct ScaleBias {
  const void* scale;
  const void* bias;
};

ScaleBias scale_bias_or_constants(Context& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace baton::kernels::batch_norm_cudnn
