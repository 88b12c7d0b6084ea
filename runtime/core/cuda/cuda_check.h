// Status checks for CUDA runtime calls and kernel launches, and an RAII current-device guard.
#pragma once

#include <cuda_runtime.h>

#include <new>

#include "runtime/core/cuda/library_check.h"
#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_library_error(cudaError_t status, const char* call, const char* file, int line);
// BATON_SYNC_DEBUG=1: synchronise after every kernel launch so an error points at its kernel.
bool sync_debug_enabled();
void check_kernel_launch(cudaStream_t stream, const char* kernel, const char* file, int line);
// For destructors and other code that must not throw: when `status` is a failure, logs `call` (and
// the device, when >= 0) and clears the thread's last error, so that a later launch check does not
// report it as its own failure. Returns whether the call succeeded.
bool log_cuda_failure(cudaError_t status, const char* call, int device = -1) noexcept;
// Whether `device`'s primary context exists (cuDevicePrimaryCtxGetState through the runtime's
// driver entry points, as c10's hasPrimaryContext). True when the driver cannot tell.
bool primary_context_exists(int device) noexcept;

}  // namespace baton::detail

#define BATON_CUDA_CHECK(call) BATON_LIBRARY_CHECK((call), #call, cudaError_t, cudaSuccess)

// After every kernel launch: BATON_KERNEL_CHECK(stream, "add_kernel").
#define BATON_KERNEL_CHECK(stream, kernel_name) \
  ::baton::detail::check_kernel_launch((stream), (kernel_name), __FILE__, __LINE__)

namespace baton {

// Makes `device_index` current for the guard's lifetime and restores the previous device after,
// but only when that device was really in use: a thread that never set a device reports device 0,
// and switching back to it would create a primary context (memory, a process on the GPU) on GPU 0
// for a run on other GPUs. Then the thread stays on `device_index`, as with c10's MaybeSetDevice.
// Non-copyable and non-movable, like c10's CUDAGuard.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device_index);  // throws baton::Error when the device cannot be set
  // For destructors: failures are logged and cleared (see detail::log_cuda_failure), never thrown.
  CudaDeviceGuard(int device_index, std::nothrow_t) noexcept;
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int current_ = -1;
};

}  // namespace baton
