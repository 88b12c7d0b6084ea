// Emulated GPU: the plain reference loops behind the emulated cuDNN convolution passes (NCHW, packed),
// with padding, stride, dilation, groups and both modes; accumulate in double, round once.
#pragma once

#include <cstdint>

namespace baton_emu {

// Input x: n x c x h x w. Filter: k x (c / groups) x r x s. Output y: n x k x out_h() x out_w().
// Output channel ko of group g = ko / (k / groups) reads input channels g * (c / groups) + [0, c / groups).
// Cross-correlation: y[n,ko,p,q] = sum w[ko,cc,i,j] * x[n,ci,p*stride_h - pad_h + i*dilation_h, ...];
// convolution (CUDNN_CONVOLUTION) uses the filter flipped: w[ko,cc,r-1-i,s-1-j]. Outside x reads 0.
struct ConvShape {
  int n = 1, c = 1, h = 1, w = 1;
  int k = 1, r = 1, s = 1;
  int pad_h = 0, pad_w = 0;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;
  bool flip_filter = false;  // true for CUDNN_CONVOLUTION, false for CUDNN_CROSS_CORRELATION

  // cuDNN's output size: 1 + (in + 2 * pad - ((filter - 1) * dilation + 1)) / stride.
  int out_h() const { return 1 + (h + 2 * pad_h - ((r - 1) * dilation_h + 1)) / stride_h; }
  int out_w() const { return 1 + (w + 2 * pad_w - ((s - 1) * dilation_w + 1)) / stride_w; }
  int64_t x_elements() const { return int64_t{n} * c * h * w; }
  int64_t w_elements() const { return int64_t{k} * (c / groups) * r * s; }
  int64_t y_elements() const { return int64_t{n} * k * out_h() * out_w(); }
};

// Each pass writes out = alpha * result + beta * out; when beta == 0 the prior `out` is not read (it
// may hold NaN), as cuDNN documents for its scaling parameters. With `tf32_inputs` (float data under a
// tensor-op math type) both operands are first rounded to TF32 (round_to_tf32 in gemm_reference.h).

// y = conv(x, w).
template <typename T>
void conv_forward_reference(const ConvShape& shape, double alpha, const T* x, const T* w, double beta, T* y,
                            bool tf32_inputs);

// dx = the gradient of conv(x, w) with respect to x, given dy.
template <typename T>
void conv_backward_data_reference(const ConvShape& shape, double alpha, const T* w, const T* dy, double beta, T* dx,
                                  bool tf32_inputs);

// dw = the gradient of conv(x, w) with respect to w, given x and dy.
template <typename T>
void conv_backward_filter_reference(const ConvShape& shape, double alpha, const T* x, const T* dy, double beta, T* dw,
                                    bool tf32_inputs);

}  // namespace baton_emu
