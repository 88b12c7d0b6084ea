// CPU reference of the 2-D convolution (kernels/cpu/conv_cpu.cc; instantiated for float and double):
// im2col + GEMM per sample and group, col2im for the data gradient.
#pragma once

#include <cstdint>

namespace baton::kernels::cpu {

// Sizes of one convolution: x [n, c, h, w], filter [k, c / groups, r, s], y [n, k, p, q].
struct ConvGeometry {
  int64_t n, c, h, w, k, r, s, p, q;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;

  int64_t group_channels() const { return c / groups; }
  int64_t group_filters() const { return k / groups; }
  // A 1×1 convolution with stride 1 and no padding: the input is its own column matrix.
  bool direct() const { return r == 1 && s == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 && pad_w == 0; }
  // Elements of the column buffer the functions below need (0 when direct()).
  int64_t column_elements() const { return direct() ? 0 : group_channels() * r * s * p * q; }
};

// y = conv(x, w), written in full.
template <typename T>
void conv2d_forward(const ConvGeometry& g, const T* x, const T* w, T* y, T* columns);
// dx = the input gradient, written in full.
template <typename T>
void conv2d_backward_data(const ConvGeometry& g, const T* dy, const T* w, T* dx, T* columns);
// dw += the filter gradient.
template <typename T>
void conv2d_backward_filter(const ConvGeometry& g, const T* x, const T* dy, T* dw, T* columns);

#define BATON_CONV_CPU_DECLARE(T)                                                                \
  extern template void conv2d_forward<T>(const ConvGeometry&, const T*, const T*, T*, T*);       \
  extern template void conv2d_backward_data<T>(const ConvGeometry&, const T*, const T*, T*, T*); \
  extern template void conv2d_backward_filter<T>(const ConvGeometry&, const T*, const T*, T*, T*);
BATON_CONV_CPU_DECLARE(float)
BATON_CONV_CPU_DECLARE(double)
#undef BATON_CONV_CPU_DECLARE

}  // namespace baton::kernels::cpu
