// Emulated GPU: the cuBLAS entry points baton calls (handles, stream, workspace, modes, cublasGemmEx),
// written from the cuBLAS documentation. Documented misuse returns cuBLAS's status; undefined
// behaviour (a destroyed handle, a handle used on another device) is a fatal error naming the call.
#include <cublas_v2.h>

#include <cstdint>
#include <string>

#include "baton_emu/runtime_api.h"
#include "cublas_handle.h"
#include "handle_registry.h"

namespace {

baton_emu::HandleRegistry<cublasContext>& cublas_handles() {
  static baton_emu::HandleRegistry<cublasContext> registry("cuBLAS", "cublasCreate");
  return registry;
}

}  // namespace

cublasStatus_t baton_emu::check_cublas_handle(cublasHandle_t handle, const char* api) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  cublas_handles().check_live_on_current_device(handle, api);
  return CUBLAS_STATUS_SUCCESS;
}

using baton_emu::check_cublas_handle;

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = cublas_handles().create();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasDestroy"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  baton_emu::set_library_owned(handle->workspace, handle->workspace_bytes, false);
  cublas_handles().destroy(handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t streamId) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasSetStream"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  const int stream_device = baton_emu::stream_device(streamId, "cublasSetStream");
  if (stream_device != handle->device) {
    baton_emu::fatal("cublasSetStream: the stream belongs to device " + std::to_string(stream_device) +
                     " but the cuBLAS handle to device " + std::to_string(handle->device));
  }
  handle->stream = streamId;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* streamId) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasGetStream"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (streamId == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t workspaceSizeInBytes) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasSetWorkspace");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  // Documented: the workspace must be aligned to at least 256 bytes.
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (workspace == nullptr && workspaceSizeInBytes > 0) return CUBLAS_STATUS_INVALID_VALUE;
  // The workspace is cuBLAS's alone while it is set (the emulated cuBLAS needs none): kept closed to
  // kernels, copies and host code, which also spares opening it for every launch.
  baton_emu::set_library_owned(handle->workspace, handle->workspace_bytes, false);
  handle->workspace = workspace;
  handle->workspace_bytes = workspaceSizeInBytes;
  baton_emu::set_library_owned(workspace, workspaceSizeInBytes, true);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasSetMathMode"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  const int base = static_cast<int>(mode) & ~static_cast<int>(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_PEDANTIC_MATH && base != CUBLAS_TF32_TENSOR_OP_MATH) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasGetMathMode"); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasSetPointerMode");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) {
  if (const cublasStatus_t status = check_cublas_handle(handle, "cublasGetPointerMode");
      status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

// The cuBLAS API version these entry points follow (the CUDA 13 toolkit's cuBLAS 13.1.0).
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION:
      *value = 13;
      return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = 1;
      return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = 0;
      return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

}  // extern "C"
