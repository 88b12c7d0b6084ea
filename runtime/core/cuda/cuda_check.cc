// CUDA, cuBLAS, cuDNN and NCCL error reporting, the launch check and the device guard.
#include "runtime/core/cuda/cuda_check.h"

#include <cstdlib>
#include <string>

#include "runtime/core/cuda/cublas_check.h"
#include "runtime/core/cuda/cudnn_check.h"
#include "runtime/core/cuda/nccl_check.h"

namespace baton::detail {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls do not report it again
  throw Error(concat("CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ") in ", call), file,
              line);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw Error(concat("cuBLAS error ", cublasGetStatusName(status), " (", cublasGetStatusString(status), ") in ", call),
              file, line);
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw Error(concat("cuDNN error ", cudnnGetErrorString(status), " in ", call, detail[0] ? ": " : "", detail), file,
              line);
}

void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line) {
  throw Error(concat("NCCL error ", ncclGetErrorString(status), " in ", call), file, line);
}

bool sync_debug_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("BATON_SYNC_DEBUG");
    return v != nullptr && std::string(v) != "0" && std::string(v) != "";
  }();
  return enabled;
}

void check_kernel_launch(cudaStream_t stream, const char* kernel, const char* file, int line) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) throw_cuda_error(launch, concat("launch of ", kernel).c_str(), file, line);
  if (sync_debug_enabled()) {
    const cudaError_t run = cudaStreamSynchronize(stream);
    if (run != cudaSuccess) throw_cuda_error(run, concat(kernel, " (BATON_SYNC_DEBUG)").c_str(), file, line);
  }
}

}  // namespace baton::detail

namespace baton {

CudaDeviceGuard::CudaDeviceGuard(int device_index) : current_(device_index) {
  BATON_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_index) BATON_CUDA_CHECK(cudaSetDevice(device_index));
}

CudaDeviceGuard::~CudaDeviceGuard() {
  if (previous_ >= 0 && previous_ != current_) cudaSetDevice(previous_);
}

}  // namespace baton
