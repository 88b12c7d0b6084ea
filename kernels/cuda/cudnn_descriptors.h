// cuDNN descriptors owned by RAII objects, shared by the cuDNN launchers (conv_cuda.cc,
// batch_norm_cuda.cu). Plain C++ (no device code), usable from .cc and .cu files. Creation and every
// set-up call are checked (BATON_CUDNN_CHECK); a failed destruction is logged, never thrown.
#pragma once

#include <cudnn.h>

#include <cstdint>

#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// A cuDNN descriptor of type Handle, created with the object and destroyed with it.
template <typename Handle, cudnnStatus_t (*kCreate)(Handle*), cudnnStatus_t (*kDestroy)(Handle)>
class CudnnDescriptor {
 public:
  CudnnDescriptor();
  ~CudnnDescriptor();
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;

  Handle get() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using TensorDescriptor =
    CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;

extern template class CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                      cudnnDestroyTensorDescriptor>;
extern template class CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                      cudnnDestroyFilterDescriptor>;
extern template class CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                      cudnnDestroyConvolutionDescriptor>;

// cuDNN's data type of f32 (CUDNN_DATA_FLOAT) and f64 (CUDNN_DATA_DOUBLE) tensors.
cudnnDataType_t cudnn_data_type(DType dtype);

// Sets `desc` to a packed NCHW tensor of `dtype`. The sizes must fit cuDNN's int (the callers check).
void set_nchw(const TensorDescriptor& desc, DType dtype, int64_t n, int64_t c, int64_t h, int64_t w);

// A cuDNN scaling factor (alpha, beta): in host memory, double for f64 data and float otherwise,
// as cuDNN requires. Copyable: get() points into the object it is called on.
class ScalingFactor {
 public:
  ScalingFactor(DType dtype, double value)
      : is_double_(dtype == DType::f64), f_(static_cast<float>(value)), d_(value) {}
  const void* get() const { return is_double_ ? static_cast<const void*>(&d_) : static_cast<const void*>(&f_); }

 private:
  bool is_double_;
  float f_;
  double d_;
};

}  // namespace baton::kernels::cuda
