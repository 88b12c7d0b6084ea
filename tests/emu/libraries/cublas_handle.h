// Emulated GPU: the state behind a cuBLAS handle and the checks every call taking one makes, shared
// by the emulated cuBLAS entry points (cublas.cc, cublas_gemm.cc).
#pragma once

#include <cublas_v2.h>

struct cublasContext {
  int device = 0;  // the device current at cublasCreate: the only one the handle may be used on
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

namespace baton_emu {

// Null is CUBLAS_STATUS_NOT_INITIALIZED (as cuBLAS documents); a destroyed handle, or one used
// while a device other than its own is current, is a fatal error naming `api`.
cublasStatus_t check_cublas_handle(cublasHandle_t handle, const char* api);

}  // namespace baton_emu
