// Float32 convolution on oneDNN (kernels/cpu/conv_dnnl.cc; builds with BATON_HAVE_DNNL only), same
// contract as the reference in conv_cpu.h, with the activations in either memory format. Each
// returns false, doing nothing, when oneDNN has no implementation for the geometry; the caller then
// runs the reference.
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/cpu/conv_cpu.h"
#include "kernels/cpu/dnnl_call.h"  // Workspace

namespace baton::kernels::cpu {

// Which activations are channels-last (NHWC): x is the input side (x, dx), y the output side (y,
// dy). Filters are always [K, C / groups, R, S] row-major. When either side is channels-last the
// primitive computes in NHWC (the CPU engine's activations), else in the layout it prefers.
struct ConvFormats {
  bool x_channels_last = false;
  bool y_channels_last = false;
};

bool dnnl_conv2d_forward(const ConvGeometry& g, ConvFormats f, const float* x, const float* w, float* y,
                         const Workspace& workspace);
bool dnnl_conv2d_backward_data(const ConvGeometry& g, ConvFormats f, const float* dy, const float* w, float* dx,
                               const Workspace& workspace);
// dw += the filter gradient.
bool dnnl_conv2d_backward_filter(const ConvGeometry& g, ConvFormats f, const float* x, const float* dy, float* dw,
                                 const Workspace& workspace);

}  // namespace baton::kernels::cpu
