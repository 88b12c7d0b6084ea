// cuDNN descriptor wrappers (kernels/cuda/cudnn_descriptors.h).
#include "kernels/cuda/cudnn_descriptors.h"

#include <atomic>

#include "kernels/cuda/cudnn_descriptor_count.h"
#include "runtime/core/cuda/cudnn_check.h"
#include "runtime/core/log.h"

namespace baton::kernels::cuda {
namespace {

std::atomic<int64_t>& created_count() {
  static std::atomic<int64_t> count{0};
  return count;
}

}  // namespace

int64_t cudnn_descriptors_created() { return created_count().load(); }

template <typename Handle, cudnnStatus_t (*kCreate)(Handle*), cudnnStatus_t (*kDestroy)(Handle)>
CudnnDescriptor<Handle, kCreate, kDestroy>::CudnnDescriptor() {
  BATON_CUDNN_CHECK(kCreate(&handle_));
  created_count().fetch_add(1);
}

template <typename Handle, cudnnStatus_t (*kCreate)(Handle*), cudnnStatus_t (*kDestroy)(Handle)>
CudnnDescriptor<Handle, kCreate, kDestroy>::~CudnnDescriptor() {
  if (kDestroy(handle_) != CUDNN_STATUS_SUCCESS) log_error("cudnnDestroy*Descriptor failed");
}

template class CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
template class CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
template class CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                               cudnnDestroyConvolutionDescriptor>;

cudnnDataType_t cudnn_data_type(DType dtype) { return dtype == DType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

void set_nchw(const TensorDescriptor& desc, DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
  BATON_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc.get(), CUDNN_TENSOR_NCHW, cudnn_data_type(dtype),
                                               static_cast<int>(n), static_cast<int>(c), static_cast<int>(h),
                                               static_cast<int>(w)));
}

}  // namespace baton::kernels::cuda
