// Context implementation: lazy cuBLAS/cuDNN handles, the pooled workspace and the deferred-check buffer.
#include "runtime/core/context.h"

#include <cstdlib>
#include <string_view>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "runtime/core/fill_pattern.h"
#include "runtime/core/log.h"

#if BATON_HAVE_CUDA
#include "runtime/core/cuda/cublas_check.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/cudnn_check.h"
#endif

namespace baton {
namespace {
#if BATON_HAVE_CUDA
// cuBLAS wants its own workspace on Hopper (32 MiB recommended); taken from the pool once per handle.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;
#endif

// BATON_SYNC_CHECKS: "1" reports device checks from the op itself; "0" or unset defers them.
bool sync_checks_from_environment() {
  const char* value = std::getenv("BATON_SYNC_CHECKS");
  if (value == nullptr) return false;
  const std::string_view v(value);
  BATON_CHECK(v == "0" || v == "1" || v.empty(), "environment variable BATON_SYNC_CHECKS is '", v,
              "', expected 1 (ops report failed device checks themselves) or 0 (at the next synchronisation)");
  return v == "1";
}
}  // namespace

Context::Context(Device device, StreamPriority priority)
    : stream_(Stream::create(device, priority)), sync_checks_(sync_checks_from_environment()) {}

Context::Context(Stream stream) : stream_(std::move(stream)), sync_checks_(sync_checks_from_environment()) {}

Context::~Context() {
#if BATON_HAVE_CUDA
  if (cublas_ != nullptr || cudnn_ != nullptr) {
    CudaDeviceGuard guard(device().index(), std::nothrow);  // restores the thread's device after
    if (cublas_ != nullptr && cublasDestroy(cublas_) != CUBLAS_STATUS_SUCCESS) log_error("cublasDestroy failed");
    if (cudnn_ != nullptr && cudnnDestroy(cudnn_) != CUDNN_STATUS_SUCCESS) log_error("cudnnDestroy failed");
  }
#endif
}

cublasContext* Context::cublas() {
  BATON_CHECK(device().is_cuda(), "cuBLAS handle requested on ", device().str(), ": only CUDA contexts have one");
#if BATON_HAVE_CUDA
  if (cublas_ == nullptr) {
    CudaDeviceGuard guard(device().index());
    cublasHandle_t handle = nullptr;
    BATON_CUBLAS_CHECK(cublasCreate(&handle));
    cublas_ = handle;
    BATON_CUBLAS_CHECK(cublasSetStream(handle, static_cast<cudaStream_t>(stream_.native_handle())));
    // Owned by the context, which destroys the handle before releasing this memory.
    auto scratch = Storage::allocate(kCublasWorkspaceBytes, stream_);
    BATON_CUBLAS_CHECK(cublasSetWorkspace(handle, scratch->data(), scratch->bytes()));
    cublas_workspace_ = std::move(scratch);
  }
  return cublas_;
#else
  BATON_FAIL("unreachable: CUDA device without CUDA support");
#endif
}

cudnnContext* Context::cudnn() {
  BATON_CHECK(device().is_cuda(), "cuDNN handle requested on ", device().str(), ": only CUDA contexts have one");
#if BATON_HAVE_CUDA
  if (cudnn_ == nullptr) {
    CudaDeviceGuard guard(device().index());
    cudnnHandle_t handle = nullptr;
    BATON_CUDNN_CHECK(cudnnCreate(&handle));
    cudnn_ = handle;
    BATON_CUDNN_CHECK(cudnnSetStream(handle, static_cast<cudaStream_t>(stream_.native_handle())));
  }
  return cudnn_;
#else
  BATON_FAIL("unreachable: CUDA device without CUDA support");
#endif
}

void* Context::workspace(size_t bytes) {
  if (workspace_ == nullptr || workspace_->bytes() < bytes) {
    workspace_.reset();  // stream-ordered free: earlier work on this stream still sees valid memory
    workspace_ = Storage::allocate(bytes, stream_);
  }
  return workspace_->data();
}

size_t Context::workspace_bytes() const { return workspace_ ? workspace_->bytes() : 0; }

void* Context::device_checks() {
  if (device_checks_ == nullptr) {
    auto checks = Storage::allocate(kDeviceCheckBytes, stream_);
    detail::fill_pattern(checks->data(), device(), kDeviceCheckBytes / sizeof(uint64_t), sizeof(uint64_t), 0, stream_);
    device_checks_ = std::move(checks);
  }
  return device_checks_->data();
}

}  // namespace baton
