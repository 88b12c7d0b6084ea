// Float32 batch norm on oneDNN over channels-last (NHWC) activations, the CPU engine's format
// (kernels/cpu/batch_norm_dnnl.cc; builds with BATON_HAVE_DNNL only). Training passes with affine
// parameters; each returns false, doing nothing, when oneDNN has no implementation (the caller then
// goes through the row-major reference).
#pragma once

#include <cstdint>

#include "kernels/cpu/dnnl_call.h"  // Workspace

namespace baton::kernels::cpu {

struct BatchNormNhwc {
  int64_t n, c, h, w;
};

// y = (x − mean)/sqrt(var + eps)·weight + bias with the batch's mean and biased variance, which it
// writes to mean and var ([C] each).
bool dnnl_batch_norm_forward_train_nhwc(const BatchNormNhwc& d, float eps, const float* x, const float* weight,
                                        const float* bias, float* y, float* mean, float* var,
                                        const Workspace& workspace);
// dx (written) and the parameter gradients (accumulated) for the statistics mean and var.
bool dnnl_batch_norm_backward_train_nhwc(const BatchNormNhwc& d, float eps, const float* x, const float* dy,
                                         const float* weight, const float* mean, const float* var, float* dx,
                                         float* weight_grad, float* bias_grad, const Workspace& workspace);

}  // namespace baton::kernels::cpu
