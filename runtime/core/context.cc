// Context implementation: lazy cuBLAS/cuDNN handles and the pooled workspace.
#include "runtime/core/context.h"

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
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
}  // namespace

Context::Context(Device device, StreamPriority priority) : stream_(Stream::create(device, priority)) {}

Context::Context(Stream stream) : stream_(std::move(stream)) {}

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

}  // namespace baton
