// Emulated GPU: a cuDNN convolution problem resolved from its descriptors (checked against each other
// as cuDNN documents), the algorithms the emulator offers per pass, and running one pass.
#pragma once

#include <cudnn.h>

#include <cstddef>

#include "conv_reference.h"

namespace baton_emu {

enum class ConvPass { forward, backward_data, backward_filter };

struct ConvProblem {
  ConvShape shape;
  bool is_double = false;
  bool tf32 = false;  // float data and a math type that allows tensor cores (not CUDNN_FMA_MATH)
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t element_bytes() const { return is_double ? sizeof(double) : sizeof(float); }
};

// Checks the descriptors (set, matching types and shapes, output size) and fills `problem`; a
// mismatch returns CUDNN_STATUS_BAD_PARAM or NOT_SUPPORTED with the last error string set.
cudnnStatus_t resolve_conv(const char* api, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                           cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, ConvProblem* problem);

struct ConvAlgorithm {
  bool implemented = false;
  bool deterministic = true;
  size_t workspace_bytes = 0;
};
// What algorithm `algo` of `pass` needs for `problem` (not implemented: CUDNN_STATUS_NOT_SUPPORTED).
ConvAlgorithm conv_algorithm(ConvPass pass, int algo, const ConvProblem& problem);
int conv_algorithm_count(ConvPass pass);

// The operands of one pass: forward (in0 = x, in1 = w, out = y), backward data (w, dy, dx),
// backward filter (x, dy, dw).
struct ConvOperands {
  const void* in0 = nullptr;
  const void* in1 = nullptr;
  void* out = nullptr;
};

// Checks the handle, pointers, algorithm and workspace size, then runs the pass in stream order.
cudnnStatus_t run_conv(const char* api, cudnnHandle_t handle, ConvPass pass, const ConvProblem& problem, int algo,
                       const ConvOperands& operands, void* workspace, size_t workspace_bytes, const void* alpha,
                       const void* beta);

}  // namespace baton_emu
