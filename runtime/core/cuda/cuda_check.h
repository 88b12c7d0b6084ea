// Status checks for CUDA runtime calls and kernel launches, and an RAII current-device guard.
#pragma once

#include <cuda_runtime.h>

#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
// BATON_SYNC_DEBUG=1: synchronise after every kernel launch so an error points at its kernel.
bool sync_debug_enabled();
void check_kernel_launch(cudaStream_t stream, const char* kernel, const char* file, int line);

}  // namespace baton::detail

#define BATON_CUDA_CHECK(call)                                                     \
  do {                                                                             \
    const cudaError_t baton_status_ = (call);                                      \
    if (baton_status_ != cudaSuccess) [[unlikely]] {                               \
      ::baton::detail::throw_cuda_error(baton_status_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)

// After every kernel launch: BATON_KERNEL_CHECK(stream, "add_kernel").
#define BATON_KERNEL_CHECK(stream, kernel_name) \
  ::baton::detail::check_kernel_launch((stream), (kernel_name), __FILE__, __LINE__)

namespace baton {

// Makes `device_index` current for the guard's lifetime and restores the previous device after.
// Non-copyable and non-movable, like c10's CUDAGuard.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device_index);
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int current_ = -1;
};

}  // namespace baton
