// Emulated GPU: the state behind cuDNN handles and descriptors, the handle checks, and the thread's
// last error message, shared by the emulated cuDNN entry points (cudnn_*.cc).
#pragma once

#include <cudnn.h>

#include <string>

struct cudnnContext {
  int device = 0;  // the device current at cudnnCreate: the only one the handle may be used on
  cudaStream_t stream = nullptr;
};

struct cudnnTensorStruct {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int n = 0, c = 0, h = 0, w = 0;  // packed NCHW
};

struct cudnnFilterStruct {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int k = 0, c = 0, h = 0, w = 0;  // NCHW (KCRS)
};

struct cudnnConvolutionStruct {
  bool set = false;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

namespace baton_emu {

// Records `message` as the calling thread's last cuDNN error (cudnnGetLastErrorString) and returns
// `status`.
cudnnStatus_t cudnn_fail(cudnnStatus_t status, const std::string& message);

// A null handle is CUDNN_STATUS_BAD_PARAM; a destroyed handle, or one used while a device other than
// its own is current, is a fatal error naming `api`.
cudnnStatus_t check_cudnn_handle(cudnnHandle_t handle, const char* api);

size_t cudnn_element_bytes(cudnnDataType_t type);

}  // namespace baton_emu
