// CUDA, cuBLAS, cuDNN and NCCL error reporting, the launch check and the device guard.
#include "runtime/core/cuda/cuda_check.h"

#include <cstdlib>
#include <string>

#include "runtime/core/cuda/cublas_check.h"
#include "runtime/core/cuda/cudnn_check.h"
#include "runtime/core/cuda/nccl_check.h"
#include "runtime/core/log.h"

namespace baton::detail {

void throw_library_error(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls do not report it again
  throw Error(concat("CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ") in ", call), file,
              line);
}

void throw_library_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw Error(concat("cuBLAS error ", cublasGetStatusName(status), " (", cublasGetStatusString(status), ") in ", call),
              file, line);
}

void throw_library_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw Error(concat("cuDNN error ", cudnnGetErrorString(status), " in ", call, detail[0] ? ": " : "", detail), file,
              line);
}

void throw_library_error(ncclResult_t status, const char* call, const char* file, int line) {
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
  if (launch != cudaSuccess) throw_library_error(launch, concat("launch of ", kernel).c_str(), file, line);
  if (sync_debug_enabled()) {
    const cudaError_t run = cudaStreamSynchronize(stream);
    if (run != cudaSuccess) throw_library_error(run, concat(kernel, " (BATON_SYNC_DEBUG)").c_str(), file, line);
  }
}

bool log_cuda_failure(cudaError_t status, const char* call, int device) noexcept {
  if (status == cudaSuccess) return true;
  cudaGetLastError();  // the failure is reported here; it must not surface at an unrelated launch
  try {
    log_error(call, device >= 0 ? concat(" on cuda:", device) : std::string(), " failed: ", cudaGetErrorName(status),
              " (", cudaGetErrorString(status), ")");
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging itself failed (out of memory); nothing left to do
  }
  return false;
}

namespace {

// CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) (cuda.h); CUresult
// and CUdevice are ints, CUdevice the runtime's device ordinal; 0 is CUDA_SUCCESS.
using PrimaryContextGetState = int (*)(int device, unsigned int* flags, int* active);

PrimaryContextGetState primary_context_get_state() {
  static const PrimaryContextGetState function = []() -> PrimaryContextGetState {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult result = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t status =
        cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &found, 12000, cudaEnableDefault, &result);
#else
    const cudaError_t status =
        cudaGetDriverEntryPoint("cuDevicePrimaryCtxGetState", &found, cudaEnableDefault, &result);
#endif
    if (!log_cuda_failure(status, "cudaGetDriverEntryPoint(cuDevicePrimaryCtxGetState)") ||
        result != cudaDriverEntryPointSuccess) {
      return nullptr;
    }
    return reinterpret_cast<PrimaryContextGetState>(found);
  }();
  return function;
}

}  // namespace

bool primary_context_exists(int device) noexcept {
  const PrimaryContextGetState get_state = primary_context_get_state();
  unsigned int flags = 0;
  int active = 0;
  if (get_state == nullptr || get_state(device, &flags, &active) != 0) return true;
  return active != 0;
}

}  // namespace baton::detail

namespace baton {

CudaDeviceGuard::CudaDeviceGuard(int device_index) : current_(device_index) {
  BATON_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_index) BATON_CUDA_CHECK(cudaSetDevice(device_index));
}

CudaDeviceGuard::CudaDeviceGuard(int device_index, std::nothrow_t) noexcept : current_(device_index) {
  if (!detail::log_cuda_failure(cudaGetDevice(&previous_), "cudaGetDevice")) previous_ = -1;
  if (previous_ != device_index) detail::log_cuda_failure(cudaSetDevice(device_index), "cudaSetDevice", device_index);
}

CudaDeviceGuard::~CudaDeviceGuard() {
  if (previous_ < 0 || previous_ == current_ || !detail::primary_context_exists(previous_)) return;
  detail::log_cuda_failure(cudaSetDevice(previous_), "cudaSetDevice (restoring the device)", previous_);
}

}  // namespace baton
