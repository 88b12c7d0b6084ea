// Emulated GPU: the cuDNN convolution entry points (workspace sizes, Find*AlgorithmEx with measured
// host times, the three passes), over cudnn_convolution.h.
#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "baton_emu/runtime_api.h"
#include "cudnn_convolution.h"
#include "cudnn_state.h"

using baton_emu::ConvOperands;
using baton_emu::ConvPass;
using baton_emu::ConvProblem;
using baton_emu::ConvShape;
using baton_emu::cudnn_fail;

namespace {

cudnnStatus_t workspace_size(const char* api, cudnnHandle_t handle, ConvPass pass, const ConvProblem& p, int algo,
                             size_t* bytes) {
  if (const cudnnStatus_t s = baton_emu::check_cudnn_handle(handle, api); s != CUDNN_STATUS_SUCCESS) return s;
  if (bytes == nullptr) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": sizeInBytes is NULL");
  if (algo < 0 || algo >= baton_emu::conv_algorithm_count(pass)) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": invalid algorithm " + std::to_string(algo));
  }
  const baton_emu::ConvAlgorithm a = baton_emu::conv_algorithm(pass, algo, p);
  if (!a.implemented) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED,
                      std::string(api) + ": algorithm " + std::to_string(algo) + " is not supported by the emulator");
  }
  *bytes = a.workspace_bytes;
  return CUDNN_STATUS_SUCCESS;
}

// Runs every implemented algorithm that fits the workspace once, timing it on the host; the others
// are reported with a failure status. Results: usable ones fastest first, then the rest. The output
// is left poisoned with NaN (cuDNN documents its content as arbitrary after the search).
template <typename Perf>
cudnnStatus_t find(const char* api, cudnnHandle_t handle, ConvPass pass, const ConvProblem& p, const ConvOperands& o,
                   int requested, int* returned, Perf* results, void* workspace, size_t workspace_bytes) {
  if (const cudnnStatus_t s = baton_emu::check_cudnn_handle(handle, api); s != CUDNN_STATUS_SUCCESS) return s;
  if (requested < 1 || returned == nullptr || results == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": requestedAlgoCount < 1 or a NULL result pointer");
  }
  const double one = 1, zero = 0;
  const float one_f = 1, zero_f = 0;
  const void* alpha = p.is_double ? static_cast<const void*>(&one) : &one_f;
  const void* beta = p.is_double ? static_cast<const void*>(&zero) : &zero_f;
  std::vector<Perf> all;
  for (int algo = 0; algo < baton_emu::conv_algorithm_count(pass); ++algo) {
    const baton_emu::ConvAlgorithm a = baton_emu::conv_algorithm(pass, algo, p);
    Perf perf{};
    perf.algo = static_cast<decltype(perf.algo)>(algo);
    perf.determinism = a.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    perf.mathType = p.math;
    perf.memory = a.workspace_bytes;
    perf.time = -1;
    if (!a.implemented) {
      perf.status = CUDNN_STATUS_NOT_SUPPORTED;
    } else if (a.workspace_bytes > workspace_bytes) {
      perf.status = CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT;
    } else {
      const auto start = std::chrono::steady_clock::now();
      perf.status = baton_emu::run_conv(api, handle, pass, p, algo, o, workspace, workspace_bytes, alpha, beta);
      perf.time = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    all.push_back(perf);
  }
  std::stable_sort(all.begin(), all.end(), [](const Perf& a, const Perf& b) {
    if ((a.status == CUDNN_STATUS_SUCCESS) != (b.status == CUDNN_STATUS_SUCCESS)) {
      return a.status == CUDNN_STATUS_SUCCESS;
    }
    return a.status == CUDNN_STATUS_SUCCESS && a.time < b.time;
  });
  const int count = std::min(requested, static_cast<int>(all.size()));
  std::copy(all.begin(), all.begin() + count, results);
  *returned = count;
  const ConvShape& s = p.shape;
  const int64_t out_elements = pass == ConvPass::forward         ? s.y_elements()
                               : pass == ConvPass::backward_data ? s.x_elements()
                                                                 : s.w_elements();
  baton_emu::run_on_stream(handle->stream, api,
                           {{o.out, static_cast<size_t>(out_elements) * p.element_bytes(), "output", true}}, [&] {
                             for (int64_t i = 0; i < out_elements; ++i) {
                               if (p.is_double) {
                                 static_cast<double*>(o.out)[i] = std::numeric_limits<double>::quiet_NaN();
                               } else {
                                 static_cast<float*>(o.out)[i] = std::numeric_limits<float>::quiet_NaN();
                               }
                             }
                           });
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

#define BATON_EMU_RESOLVE(api, x, w, conv, y)                                                                     \
  ConvProblem problem;                                                                                            \
  if (const cudnnStatus_t s = baton_emu::resolve_conv(api, x, w, conv, y, &problem); s != CUDNN_STATUS_SUCCESS) { \
    return s;                                                                                                     \
  }

extern "C" {

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                    const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                                                    int* n, int* c, int* h, int* wo) {
  if (convDesc == nullptr || x == nullptr || w == nullptr || !convDesc->set || !x->set || !w->set || n == nullptr ||
      c == nullptr || h == nullptr || wo == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, "cudnnGetConvolution2dForwardOutputDim: NULL or unset argument");
  }
  const ConvShape s{.h = x->h,
                    .w = x->w,
                    .r = w->h,
                    .s = w->w,
                    .pad_h = convDesc->pad_h,
                    .pad_w = convDesc->pad_w,
                    .stride_h = convDesc->stride_h,
                    .stride_w = convDesc->stride_w,
                    .dilation_h = convDesc->dilation_h,
                    .dilation_w = convDesc->dilation_w};
  *n = x->n, *c = w->k, *h = s.out_h(), *wo = s.out_w();
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                      const cudnnFilterDescriptor_t wDesc,
                                                      const cudnnConvolutionDescriptor_t convDesc,
                                                      const cudnnTensorDescriptor_t yDesc,
                                                      cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
  constexpr const char* kApi = "cudnnGetConvolutionForwardWorkspaceSize";
  BATON_EMU_RESOLVE(kApi, xDesc, wDesc, convDesc, yDesc)
  return workspace_size(kApi, handle, ConvPass::forward, problem, algo, sizeInBytes);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                           const cudnnTensorDescriptor_t dyDesc,
                                                           const cudnnConvolutionDescriptor_t convDesc,
                                                           const cudnnTensorDescriptor_t dxDesc,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t* sizeInBytes) {
  constexpr const char* kApi = "cudnnGetConvolutionBackwardDataWorkspaceSize";
  BATON_EMU_RESOLVE(kApi, dxDesc, wDesc, convDesc, dyDesc)
  return workspace_size(kApi, handle, ConvPass::backward_data, problem, algo, sizeInBytes);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                             const cudnnTensorDescriptor_t dyDesc,
                                                             const cudnnConvolutionDescriptor_t convDesc,
                                                             const cudnnFilterDescriptor_t gradDesc,
                                                             cudnnConvolutionBwdFilterAlgo_t algo,
                                                             size_t* sizeInBytes) {
  constexpr const char* kApi = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
  BATON_EMU_RESOLVE(kApi, xDesc, gradDesc, convDesc, dyDesc)
  return workspace_size(kApi, handle, ConvPass::backward_filter, problem, algo, sizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                     const void* x, const cudnnFilterDescriptor_t wDesc, const void* w,
                                                     const cudnnConvolutionDescriptor_t convDesc,
                                                     const cudnnTensorDescriptor_t yDesc, void* y,
                                                     const int requestedAlgoCount, int* returnedAlgoCount,
                                                     cudnnConvolutionFwdAlgoPerf_t* perfResults, void* workSpace,
                                                     size_t workSpaceSizeInBytes) {
  constexpr const char* kApi = "cudnnFindConvolutionForwardAlgorithmEx";
  BATON_EMU_RESOLVE(kApi, xDesc, wDesc, convDesc, yDesc)
  return find(kApi, handle, ConvPass::forward, problem, {x, w, y}, requestedAlgoCount, returnedAlgoCount, perfResults,
              workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                          const void* w, const cudnnTensorDescriptor_t dyDesc,
                                                          const void* dy, const cudnnConvolutionDescriptor_t convDesc,
                                                          const cudnnTensorDescriptor_t dxDesc, void* dx,
                                                          const int requestedAlgoCount, int* returnedAlgoCount,
                                                          cudnnConvolutionBwdDataAlgoPerf_t* perfResults,
                                                          void* workSpace, size_t workSpaceSizeInBytes) {
  constexpr const char* kApi = "cudnnFindConvolutionBackwardDataAlgorithmEx";
  BATON_EMU_RESOLVE(kApi, dxDesc, wDesc, convDesc, dyDesc)
  return find(kApi, handle, ConvPass::backward_data, problem, {w, dy, dx}, requestedAlgoCount, returnedAlgoCount,
              perfResults, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                            const void* x, const cudnnTensorDescriptor_t dyDesc,
                                                            const void* y, const cudnnConvolutionDescriptor_t convDesc,
                                                            const cudnnFilterDescriptor_t dwDesc, void* dw,
                                                            const int requestedAlgoCount, int* returnedAlgoCount,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t* perfResults,
                                                            void* workSpace, size_t workSpaceSizeInBytes) {
  constexpr const char* kApi = "cudnnFindConvolutionBackwardFilterAlgorithmEx";
  BATON_EMU_RESOLVE(kApi, xDesc, dwDesc, convDesc, dyDesc)
  return find(kApi, handle, ConvPass::backward_filter, problem, {x, y, dw}, requestedAlgoCount, returnedAlgoCount,
              perfResults, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t xDesc,
                                      const void* x, const cudnnFilterDescriptor_t wDesc, const void* w,
                                      const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                      void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
                                      const cudnnTensorDescriptor_t yDesc, void* y) {
  constexpr const char* kApi = "cudnnConvolutionForward";
  BATON_EMU_RESOLVE(kApi, xDesc, wDesc, convDesc, yDesc)
  return baton_emu::run_conv(kApi, handle, ConvPass::forward, problem, algo, {x, w, y}, workSpace, workSpaceSizeInBytes,
                             alpha, beta);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha, const cudnnFilterDescriptor_t wDesc,
                                           const void* w, const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                                           size_t workSpaceSizeInBytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxDesc, void* dx) {
  constexpr const char* kApi = "cudnnConvolutionBackwardData";
  BATON_EMU_RESOLVE(kApi, dxDesc, wDesc, convDesc, dyDesc)
  return baton_emu::run_conv(kApi, handle, ConvPass::backward_data, problem, algo, {w, dy, dx}, workSpace,
                             workSpaceSizeInBytes, alpha, beta);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void* x,
                                             const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
                                             size_t workSpaceSizeInBytes, const void* beta,
                                             const cudnnFilterDescriptor_t dwDesc, void* dw) {
  constexpr const char* kApi = "cudnnConvolutionBackwardFilter";
  BATON_EMU_RESOLVE(kApi, xDesc, dwDesc, convDesc, dyDesc)
  return baton_emu::run_conv(kApi, handle, ConvPass::backward_filter, problem, algo, {x, dy, dw}, workSpace,
                             workSpaceSizeInBytes, alpha, beta);
}

}  // extern "C"
