// Emulated GPU: cuDNN version, error strings, handles and the 4-d tensor, filter and 2-d convolution
// descriptors, with the argument checks the cuDNN documentation lists (CUDNN_STATUS_BAD_PARAM, ...).
#include <cstdint>
#include <cstring>

#include "baton_emu/runtime_api.h"
#include "cudnn_state.h"
#include "handle_registry.h"

namespace {

thread_local std::string last_error;

baton_emu::HandleRegistry<cudnnContext>& cudnn_handles() {
  static baton_emu::HandleRegistry<cudnnContext> registry("cuDNN", "cudnnCreate");
  return registry;
}

bool supported_type(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE; }

// cuDNN limits a tensor to 2 Giga-elements.
bool fits(int a, int b, int c, int d) { return int64_t{a} * b * c * d <= (int64_t{1} << 31) - 1; }

// cudnnCreate*Descriptor (`api`): a new descriptor in *out.
template <typename Struct>
cudnnStatus_t create_descriptor(Struct** out, const char* api) {
  if (out == nullptr) return baton_emu::cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": NULL");
  *out = new Struct;
  return CUDNN_STATUS_SUCCESS;
}

// cudnnDestroy*Descriptor.
template <typename Struct>
cudnnStatus_t destroy_descriptor(Struct* descriptor) {
  delete descriptor;
  return CUDNN_STATUS_SUCCESS;
}

// The checks of cudnnSetTensor4dDescriptor and cudnnSetFilter4dDescriptor (`api`) on a descriptor set
// (`is_null`: it is NULL) to sizes a, b, c, d: positive (`not_positive` is the message otherwise),
// NCHW, float or double, at most 2^31 - 1 elements.
cudnnStatus_t check_4d(const char* api, bool is_null, cudnnTensorFormat_t format, cudnnDataType_t type, int a, int b,
                       int c, int d, const std::string& not_positive) {
  using baton_emu::cudnn_fail;
  const std::string name(api);
  if (is_null) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, name + ": descriptor is NULL");
  if (a <= 0 || b <= 0 || c <= 0 || d <= 0) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, name + ": " + not_positive);
  if (format != CUDNN_TENSOR_NCHW) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, name + ": the emulator implements NCHW only");
  }
  if (!supported_type(type)) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, name + ": the emulator implements float and double data only");
  }
  if (!fits(a, b, c, d)) return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, name + ": more than 2^31 - 1 elements");
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

namespace baton_emu {

cudnnStatus_t cudnn_fail(cudnnStatus_t status, const std::string& message) {
  last_error = message;
  return status;
}

cudnnStatus_t check_cudnn_handle(cudnnHandle_t handle, const char* api) {
  if (handle == nullptr) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": handle is NULL");
  cudnn_handles().check_live_on_current_device(handle, api);
  return CUDNN_STATUS_SUCCESS;
}

size_t cudnn_element_bytes(cudnnDataType_t type) { return type == CUDNN_DATA_DOUBLE ? 8 : 4; }

}  // namespace baton_emu

using baton_emu::cudnn_fail;

extern "C" {

// The cuDNN API version these entry points follow (cudnn.h: CUDNN_VERSION).
size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS:
      return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED:
      return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM:
      return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER:
      return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT:
      return "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT";
    case CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH:
      return "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH";
    case CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH:
      return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
    case CUDNN_STATUS_NOT_SUPPORTED:
      return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_NOT_SUPPORTED_SHAPE:
      return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE:
      return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case CUDNN_STATUS_NOT_SUPPORTED_LAYOUT:
      return "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT";
    case CUDNN_STATUS_INTERNAL_ERROR:
      return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED:
      return "CUDNN_STATUS_EXECUTION_FAILED";
  }
  return "CUDNN_STATUS_UNKNOWN";
}

void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (message == nullptr || max_size == 0) return;
  const size_t n = last_error.size() < max_size - 1 ? last_error.size() : max_size - 1;
  std::memcpy(message, last_error.data(), n);
  message[n] = '\0';
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (handle == nullptr) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, "cudnnCreate: handle is NULL");
  *handle = cudnn_handles().create();
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  if (const cudnnStatus_t s = baton_emu::check_cudnn_handle(handle, "cudnnDestroy"); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  cudnn_handles().destroy(handle);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
  if (const cudnnStatus_t s = baton_emu::check_cudnn_handle(handle, "cudnnSetStream"); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  const int device = baton_emu::stream_device(streamId, "cudnnSetStream");
  if (device != handle->device) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH,
                      "cudnnSetStream: the stream belongs to device " + std::to_string(device) +
                          " but the handle to device " + std::to_string(handle->device));
  }
  handle->stream = streamId;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* streamId) {
  if (const cudnnStatus_t s = baton_emu::check_cudnn_handle(handle, "cudnnGetStream"); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  if (streamId == nullptr) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, "cudnnGetStream: streamId is NULL");
  *streamId = handle->stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc) {
  return create_descriptor(tensorDesc, "cudnnCreateTensorDescriptor");
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                         cudnnDataType_t dataType, int n, int c, int h, int w) {
  const cudnnStatus_t status =
      check_4d("cudnnSetTensor4dDescriptor", d == nullptr, format, dataType, n, c, h, w,
               "n, c, h, w must be positive (got " + std::to_string(n) + ", " + std::to_string(c) + ", " +
                   std::to_string(h) + ", " + std::to_string(w) + ")");
  if (status != CUDNN_STATUS_SUCCESS) return status;
  *d = {.set = true, .type = dataType, .n = n, .c = c, .h = h, .w = w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
  return destroy_descriptor(tensorDesc);
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* filterDesc) {
  return create_descriptor(filterDesc, "cudnnCreateFilterDescriptor");
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dataType,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w) {
  const cudnnStatus_t status =
      check_4d("cudnnSetFilter4dDescriptor", d == nullptr, format, dataType, k, c, h, w, "k, c, h, w must be positive");
  if (status != CUDNN_STATUS_SUCCESS) return status;
  *d = {.set = true, .type = dataType, .k = k, .c = c, .h = h, .w = w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
  return destroy_descriptor(filterDesc);
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc) {
  return create_descriptor(convDesc, "cudnnCreateConvolutionDescriptor");
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u, int v,
                                              int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType) {
  constexpr const char* kApi = "cudnnSetConvolution2dDescriptor: ";
  if (d == nullptr) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "descriptor is NULL");
  if (pad_h < 0 || pad_w < 0) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "negative padding");
  if (u <= 0 || v <= 0) return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "stride must be positive");
  if (dilation_h <= 0 || dilation_w <= 0) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "dilation must be positive");
  }
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "invalid mode");
  }
  if (!supported_type(computeType)) {
    return cudnn_fail(CUDNN_STATUS_NOT_SUPPORTED, std::string(kApi) + "the emulator computes in float or double");
  }
  d->set = true;
  d->pad_h = pad_h, d->pad_w = pad_w, d->stride_h = u, d->stride_w = v;
  d->dilation_h = dilation_h, d->dilation_w = dilation_w, d->mode = mode, d->compute = computeType;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount) {
  if (convDesc == nullptr || groupCount < 1) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionGroupCount: NULL descriptor or count < 1");
  }
  convDesc->groups = groupCount;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType) {
  if (convDesc == nullptr || mathType < CUDNN_DEFAULT_MATH || mathType > CUDNN_FMA_MATH) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionMathType: NULL descriptor or invalid math type");
  }
  convDesc->math = mathType;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
  return destroy_descriptor(convDesc);
}

cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc, const cudnnTensorDescriptor_t xDesc,
                                            cudnnBatchNormMode_t mode) {
  constexpr const char* kApi = "cudnnDeriveBNTensorDescriptor: ";
  if (derivedBnDesc == nullptr || xDesc == nullptr || !xDesc->set) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "NULL or unset descriptor");
  }
  if (mode != CUDNN_BATCHNORM_PER_ACTIVATION && mode != CUDNN_BATCHNORM_SPATIAL &&
      mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) {
    return cudnn_fail(CUDNN_STATUS_BAD_PARAM, std::string(kApi) + "invalid mode");
  }
  const bool spatial = mode != CUDNN_BATCHNORM_PER_ACTIVATION;
  *derivedBnDesc = {.set = true,
                    .type = xDesc->type,  // float for float data, double for double data
                    .n = 1,
                    .c = xDesc->c,
                    .h = spatial ? 1 : xDesc->h,
                    .w = spatial ? 1 : xDesc->w};
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
