// Emulated GPU: the cuDNN batch-normalisation entry points (training and inference forward,
// backward), with the argument checks cuDNN documents, over batch_norm_reference.h.
#include <string>

#include "batch_norm_reference.h"
#include "baton_emu/runtime_api.h"
#include "cudnn_state.h"

using baton_emu::cudnn_fail;

namespace {

// A batch-norm call's checked arguments: the status of the checks (the rest is set on success only)
// and "<api>: " for messages.
struct BnProblem {
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  std::string where;
  baton_emu::BatchNormShape shape;
  bool is_double = false;
  size_t data_bytes() const { return static_cast<size_t>(shape.elements()) * (is_double ? 8 : 4); }
  size_t param_bytes() const { return static_cast<size_t>(shape.parameters()) * (is_double ? 8 : 4); }
  double scalar(const void* p) const {
    return is_double ? *static_cast<const double*>(p) : static_cast<double>(*static_cast<const float*>(p));
  }
};

bool same_shape(const cudnnTensorStruct* a, const cudnnTensorStruct* b) {
  return a->type == b->type && a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w;
}

// The checks common to the batch-norm calls: descriptors set, data descriptors alike, the parameter
// descriptor 1xCx1x1 (spatial) or 1xCxHxW (per activation) of the data's type, epsilon >= the minimum.
BnProblem resolve(const char* api, cudnnHandle_t handle, cudnnBatchNormMode_t mode, const cudnnTensorStruct* x,
                  const cudnnTensorStruct* y, const cudnnTensorStruct* dx, const cudnnTensorStruct* param,
                  double epsilon) {
  BnProblem problem;
  problem.where = std::string(api) + ": ";
  problem.status = baton_emu::check_cudnn_handle(handle, api);
  if (problem.status != CUDNN_STATUS_SUCCESS) return problem;
  const auto fail = [&](const std::string& why) {
    problem.status = cudnn_fail(CUDNN_STATUS_BAD_PARAM, problem.where + why);
    return problem;
  };
  if (x == nullptr || y == nullptr || dx == nullptr || param == nullptr || !x->set || !y->set || !dx->set ||
      !param->set) {
    return fail("a descriptor is NULL or was never set");
  }
  if (mode != CUDNN_BATCHNORM_PER_ACTIVATION && mode != CUDNN_BATCHNORM_SPATIAL &&
      mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) {
    return fail("invalid mode");
  }
  if (!same_shape(x, y) || !same_shape(x, dx)) {
    return fail("the data descriptors differ in dimensions or data type");
  }
  const bool spatial = mode != CUDNN_BATCHNORM_PER_ACTIVATION;
  if (param->n != 1 || param->c != x->c || param->h != (spatial ? 1 : x->h) || param->w != (spatial ? 1 : x->w) ||
      param->type != x->type) {
    return fail(std::string("the scale/bias/mean/variance descriptor is not ") + (spatial ? "1xCx1x1" : "1xCxHxW") +
                " of the data's type (use cudnnDeriveBNTensorDescriptor)");
  }
  if (!(epsilon >= CUDNN_BN_MIN_EPSILON)) {
    return fail("epsilon " + std::to_string(epsilon) + " is less than CUDNN_BN_MIN_EPSILON");
  }
  problem.shape = {.n = x->n, .c = x->c, .h = x->h, .w = x->w, .per_activation = !spatial};
  problem.is_double = x->type == CUDNN_DATA_DOUBLE;
  return problem;
}

}  // namespace

extern "C" {

cudnnStatus_t cudnnBatchNormalizationForwardTraining(cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha,
                                                     const void* beta, const cudnnTensorDescriptor_t xDesc,
                                                     const void* x, const cudnnTensorDescriptor_t yDesc, void* y,
                                                     const cudnnTensorDescriptor_t bnDesc, const void* bnScale,
                                                     const void* bnBias, double exponentialAverageFactor,
                                                     void* resultRunningMean, void* resultRunningVariance,
                                                     double epsilon, void* resultSaveMean,
                                                     void* resultSaveInvVariance) {
  constexpr const char* kApi = "cudnnBatchNormalizationForwardTraining";
  const BnProblem p = resolve(kApi, handle, mode, xDesc, yDesc, yDesc, bnDesc, epsilon);
  if (p.status != CUDNN_STATUS_SUCCESS) return p.status;
  if (alpha == nullptr || beta == nullptr || x == nullptr || y == nullptr || bnScale == nullptr || bnBias == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, p.where + "alpha, beta, x, y, bnScale or bnBias is NULL");
  }
  if ((resultRunningMean == nullptr) != (resultRunningVariance == nullptr)) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, p.where + "exactly one of the running mean and variance is NULL");
  }
  if ((resultSaveMean == nullptr) != (resultSaveInvVariance == nullptr)) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, p.where + "exactly one of the saved mean and inverse variance is NULL");
  }
  const double a = p.scalar(alpha), b = p.scalar(beta);
  const size_t running = resultRunningMean ? p.param_bytes() : 0, saved = resultSaveMean ? p.param_bytes() : 0;
  baton_emu::run_on_stream(
      handle->stream, kApi,
      {{x, p.data_bytes(), "x", false},
       {y, p.data_bytes(), "y", true},
       {bnScale, p.param_bytes(), "bnScale", false},
       {bnBias, p.param_bytes(), "bnBias", false},
       {resultRunningMean, running, "resultRunningMean", true},
       {resultRunningVariance, running, "resultRunningVariance", true},
       {resultSaveMean, saved, "resultSaveMean", true},
       {resultSaveInvVariance, saved, "resultSaveInvVariance", true}},
      [&] {
        if (p.is_double) {
          baton_emu::batch_norm_forward_training_reference<double>(
              p.shape, a, b, static_cast<const double*>(x), static_cast<double*>(y),
              static_cast<const double*>(bnScale), static_cast<const double*>(bnBias), exponentialAverageFactor,
              static_cast<double*>(resultRunningMean), static_cast<double*>(resultRunningVariance), epsilon,
              static_cast<double*>(resultSaveMean), static_cast<double*>(resultSaveInvVariance));
        } else {
          baton_emu::batch_norm_forward_training_reference<float>(
              p.shape, a, b, static_cast<const float*>(x), static_cast<float*>(y), static_cast<const float*>(bnScale),
              static_cast<const float*>(bnBias), exponentialAverageFactor, static_cast<float*>(resultRunningMean),
              static_cast<float*>(resultRunningVariance), epsilon, static_cast<float*>(resultSaveMean),
              static_cast<float*>(resultSaveInvVariance));
        }
      });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                                                      const void* alpha, const void* beta,
                                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                                      const cudnnTensorDescriptor_t yDesc, void* y,
                                                      const cudnnTensorDescriptor_t bnDesc, const void* bnScale,
                                                      const void* bnBias, const void* estimatedMean,
                                                      const void* estimatedVariance, double epsilon) {
  constexpr const char* kApi = "cudnnBatchNormalizationForwardInference";
  const BnProblem p = resolve(kApi, handle, mode, xDesc, yDesc, yDesc, bnDesc, epsilon);
  if (p.status != CUDNN_STATUS_SUCCESS) return p.status;
  if (alpha == nullptr || beta == nullptr || x == nullptr || y == nullptr || bnScale == nullptr || bnBias == nullptr ||
      estimatedMean == nullptr || estimatedVariance == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, p.where + "a pointer argument is NULL");
  }
  const double a = p.scalar(alpha), b = p.scalar(beta);
  baton_emu::run_on_stream(
      handle->stream, kApi,
      {{x, p.data_bytes(), "x", false},
       {y, p.data_bytes(), "y", true},
       {bnScale, p.param_bytes(), "bnScale", false},
       {bnBias, p.param_bytes(), "bnBias", false},
       {estimatedMean, p.param_bytes(), "estimatedMean", false},
       {estimatedVariance, p.param_bytes(), "estimatedVariance", false}},
      [&] {
        if (p.is_double) {
          baton_emu::batch_norm_forward_inference_reference<double>(
              p.shape, a, b, static_cast<const double*>(x), static_cast<double*>(y),
              static_cast<const double*>(bnScale), static_cast<const double*>(bnBias),
              static_cast<const double*>(estimatedMean), static_cast<const double*>(estimatedVariance), epsilon);
        } else {
          baton_emu::batch_norm_forward_inference_reference<float>(
              p.shape, a, b, static_cast<const float*>(x), static_cast<float*>(y), static_cast<const float*>(bnScale),
              static_cast<const float*>(bnBias), static_cast<const float*>(estimatedMean),
              static_cast<const float*>(estimatedVariance), epsilon);
        }
      });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alphaDataDiff, const void* betaDataDiff,
    const void* alphaParamDiff, const void* betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* dy, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScale, void* dBnScaleResult, void* dBnBiasResult,
    double epsilon, const void* savedMean, const void* savedInvVariance) {
  constexpr const char* kApi = "cudnnBatchNormalizationBackward";
  const BnProblem p = resolve(kApi, handle, mode, xDesc, dyDesc, dxDesc, dBnScaleBiasDesc, epsilon);
  if (p.status != CUDNN_STATUS_SUCCESS) return p.status;
  if (alphaDataDiff == nullptr || betaDataDiff == nullptr || alphaParamDiff == nullptr || betaParamDiff == nullptr ||
      x == nullptr || dy == nullptr || dx == nullptr || bnScale == nullptr || dBnScaleResult == nullptr ||
      dBnBiasResult == nullptr) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, p.where + "a scaling factor, x, dy, dx, bnScale or a result is NULL");
  }
  if ((savedMean == nullptr) != (savedInvVariance == nullptr)) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, p.where + "exactly one of savedMean and savedInvVariance is NULL");
  }
  const double ad = p.scalar(alphaDataDiff), bd = p.scalar(betaDataDiff);
  const double ap = p.scalar(alphaParamDiff), bp = p.scalar(betaParamDiff);
  const size_t saved = savedMean ? p.param_bytes() : 0;
  baton_emu::run_on_stream(handle->stream, kApi,
                           {{x, p.data_bytes(), "x", false},
                            {dy, p.data_bytes(), "dy", false},
                            {dx, p.data_bytes(), "dx", true},
                            {bnScale, p.param_bytes(), "bnScale", false},
                            {dBnScaleResult, p.param_bytes(), "dBnScaleResult", true},
                            {dBnBiasResult, p.param_bytes(), "dBnBiasResult", true},
                            {savedMean, saved, "savedMean", false},
                            {savedInvVariance, saved, "savedInvVariance", false}},
                           [&] {
                             if (p.is_double) {
                               baton_emu::batch_norm_backward_reference<double>(
                                   p.shape, ad, bd, ap, bp, static_cast<const double*>(x),
                                   static_cast<const double*>(dy), static_cast<double*>(dx),
                                   static_cast<const double*>(bnScale), static_cast<double*>(dBnScaleResult),
                                   static_cast<double*>(dBnBiasResult), epsilon, static_cast<const double*>(savedMean),
                                   static_cast<const double*>(savedInvVariance));
                             } else {
                               baton_emu::batch_norm_backward_reference<float>(
                                   p.shape, ad, bd, ap, bp, static_cast<const float*>(x), static_cast<const float*>(dy),
                                   static_cast<float*>(dx), static_cast<const float*>(bnScale),
                                   static_cast<float*>(dBnScaleResult), static_cast<float*>(dBnBiasResult), epsilon,
                                   static_cast<const float*>(savedMean), static_cast<const float*>(savedInvVariance));
                             }
                           });
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
