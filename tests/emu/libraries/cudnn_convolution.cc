// Emulated GPU: resolving and running cuDNN convolution passes (cudnn_convolution.h).
#include "cudnn_convolution.h"

#include <string>

#include "baton_emu/runtime_api.h"
#include "cudnn_state.h"

namespace baton_emu {
namespace {

std::string dims(int a, int b, int c, int d) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c) + "x" + std::to_string(d);
}

size_t im2col_bytes(const ConvProblem& p) {
  const ConvShape& s = p.shape;
  return static_cast<size_t>(s.c / s.groups) * static_cast<size_t>(s.r * s.s) * static_cast<size_t>(s.out_h()) *
         static_cast<size_t>(s.out_w()) * p.element_bytes();
}

size_t buffer_bytes(ConvPass pass, const ConvProblem& p) {
  const ConvShape& s = p.shape;
  const int64_t elements = pass == ConvPass::forward         ? s.y_elements()
                           : pass == ConvPass::backward_data ? s.x_elements()
                                                             : s.w_elements();
  return static_cast<size_t>(elements) * p.element_bytes();
}

template <typename T>
void run_reference(ConvPass pass, const ConvProblem& p, const ConvOperands& o, double alpha, double beta) {
  const auto* in0 = static_cast<const T*>(o.in0);
  const auto* in1 = static_cast<const T*>(o.in1);
  auto* out = static_cast<T*>(o.out);
  switch (pass) {
    case ConvPass::forward:
      return conv_forward_reference(p.shape, alpha, in0, in1, beta, out, p.tf32);
    case ConvPass::backward_data:
      return conv_backward_data_reference(p.shape, alpha, in0, in1, beta, out, p.tf32);
    case ConvPass::backward_filter:
      return conv_backward_filter_reference(p.shape, alpha, in0, in1, beta, out, p.tf32);
  }
}

}  // namespace

cudnnStatus_t resolve_conv(const char* api, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                           cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, ConvProblem* problem) {
  const std::string where = std::string(api) + ": ";
  if (x == nullptr || w == nullptr || conv == nullptr || y == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "a descriptor is NULL");
  }
  if (!x->set || !w->set || !conv->set || !y->set) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "a descriptor was created but never set");
  }
  if (x->type != w->type || x->type != y->type) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "the tensor and filter descriptors have different data types");
  }
  if (x->type != conv->compute) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED,
                      where +
                          "the convolution's compute type differs from the data type (the emulator supports "
                          "float data with float compute and double data with double compute)");
  }
  if (x->c != w->c * conv->groups) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "input channels " + std::to_string(x->c) +
                                                  " != filter input channels " + std::to_string(w->c) +
                                                  " x group count " + std::to_string(conv->groups));
  }
  if (w->k % conv->groups != 0) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "filter output channels " + std::to_string(w->k) +
                                                  " are not a multiple of the group count " +
                                                  std::to_string(conv->groups));
  }
  ConvShape s{.n = x->n,
              .c = x->c,
              .h = x->h,
              .w = x->w,
              .k = w->k,
              .r = w->h,
              .s = w->w,
              .pad_h = conv->pad_h,
              .pad_w = conv->pad_w,
              .stride_h = conv->stride_h,
              .stride_w = conv->stride_w,
              .dilation_h = conv->dilation_h,
              .dilation_w = conv->dilation_w,
              .groups = conv->groups,
              .flip_filter = conv->mode == CUDNN_CONVOLUTION};
  if ((s.r - 1) * s.dilation_h + 1 > s.h + 2 * s.pad_h || (s.s - 1) * s.dilation_w + 1 > s.w + 2 * s.pad_w) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "the dilated filter is larger than the padded input");
  }
  if (y->n != x->n || y->c != w->k) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "output " + dims(y->n, y->c, y->h, y->w) +
                                                  " does not have the input's batch and the filter's " +
                                                  std::to_string(w->k) + " channels");
  }
  if (y->h != s.out_h() || y->w != s.out_w()) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, where + "output " + dims(y->n, y->c, y->h, y->w) +
                                                      " does not have the convolution's spatial size " +
                                                      std::to_string(s.out_h()) + "x" + std::to_string(s.out_w()));
  }
  const bool is_double = x->type == CUDNN_DATA_DOUBLE;
  *problem = {
      .shape = s, .is_double = is_double, .tf32 = !is_double && conv->math != CUDNN_FMA_MATH, .math = conv->math};
  return CUDNN_STATUS_SUCCESS;
}

int conv_algorithm_count(ConvPass pass) {
  switch (pass) {
    case ConvPass::forward:
      return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    case ConvPass::backward_data:
      return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    case ConvPass::backward_filter:
      return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  }
  return 0;
}

// The emulator offers: forward IMPLICIT_GEMM (no workspace), IMPLICIT_PRECOMP_GEMM (an index table)
// and GEMM (an im2col buffer); backward data ALGO_0 (none, non-deterministic as cuDNN documents) and
// ALGO_1 (im2col); backward filter ALGO_0 (none, non-deterministic), ALGO_1 (im2col) and ALGO_3 (a
// partial-sum buffer, non-deterministic). All run the same reference loop.
ConvAlgorithm conv_algorithm(ConvPass pass, int algo, const ConvProblem& p) {
  const ConvShape& s = p.shape;
  switch (pass) {
    case ConvPass::forward:
      if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) return {true, true, 0};
      if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
        return {true, true, static_cast<size_t>(s.c / s.groups) * static_cast<size_t>(s.r * s.s) * sizeof(int)};
      }
      if (algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM) return {true, true, im2col_bytes(p)};
      return {};
    case ConvPass::backward_data:
      if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) return {true, false, 0};
      if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1) return {true, true, im2col_bytes(p)};
      return {};
    case ConvPass::backward_filter:
      if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0) return {true, false, 0};
      if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1) return {true, true, im2col_bytes(p)};
      if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3) return {true, false, buffer_bytes(pass, p)};
      return {};
  }
  return {};
}

cudnnStatus_t run_conv(const char* api, cudnnHandle_t handle, ConvPass pass, const ConvProblem& p, int algo,
                       const ConvOperands& o, void* workspace, size_t workspace_bytes, const void* alpha,
                       const void* beta) {
  if (const cudnnStatus_t status = check_cudnn_handle(handle, api); status != CUDNN_STATUS_SUCCESS) return status;
  const std::string where = std::string(api) + ": ";
  if (o.in0 == nullptr || o.in1 == nullptr || o.out == nullptr || alpha == nullptr || beta == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "a data pointer, alpha or beta is NULL");
  }
  if (algo < 0 || algo >= conv_algorithm_count(pass)) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "invalid algorithm " + std::to_string(algo));
  }
  const ConvAlgorithm a = conv_algorithm(pass, algo, p);
  if (!a.implemented) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, where + "algorithm " + std::to_string(algo) +
                                                      " is not supported for this problem by the emulator");
  }
  if (workspace_bytes < a.workspace_bytes) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "algorithm " + std::to_string(algo) + " needs " +
                                                  std::to_string(a.workspace_bytes) + " bytes of workspace, got " +
                                                  std::to_string(workspace_bytes));
  }
  if (workspace == nullptr && workspace_bytes > 0) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, where + "workspace is NULL but its size is not 0");
  }
  // Scaling factors are host memory: double for double data, float otherwise.
  const double a_scale = p.is_double ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double b_scale = p.is_double ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  const ConvShape& s = p.shape;
  const size_t e = p.element_bytes();
  const size_t x_bytes = static_cast<size_t>(s.x_elements()) * e, w_bytes = static_cast<size_t>(s.w_elements()) * e;
  const size_t y_bytes = static_cast<size_t>(s.y_elements()) * e;
  const size_t in0_bytes = pass == ConvPass::backward_data ? w_bytes : x_bytes;
  const size_t in1_bytes = pass == ConvPass::forward ? w_bytes : y_bytes;
  run_on_stream(handle->stream, api,
                {{o.in0, in0_bytes, pass == ConvPass::backward_data ? "w" : "x", false},
                 {o.in1, in1_bytes, pass == ConvPass::forward ? "w" : "dy", false},
                 {o.out, buffer_bytes(pass, p),
                  pass == ConvPass::forward         ? "y"
                  : pass == ConvPass::backward_data ? "dx"
                                                    : "dw",
                  true},
                 {workspace, workspace_bytes, "workspace", true}},
                [&] {
                  if (p.is_double) {
                    run_reference<double>(pass, p, o, a_scale, b_scale);
                  } else {
                    run_reference<float>(pass, p, o, a_scale, b_scale);
                  }
                });
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace baton_emu
