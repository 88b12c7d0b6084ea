// Status checks for cuBLAS, cuDNN and NCCL calls (file:line and the failed call in the message).
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>
#include <nccl.h>

#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_CUBLAS_CHECK(call)                                                       \
  do {                                                                                 \
    const cublasStatus_t baton_status_ = (call);                                       \
    if (baton_status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]] {                         \
      ::baton::detail::throw_cublas_error(baton_status_, #call, __FILE__, __LINE__);   \
    }                                                                                  \
  } while (0)

#define BATON_CUDNN_CHECK(call)                                                        \
  do {                                                                                 \
    const cudnnStatus_t baton_status_ = (call);                                        \
    if (baton_status_ != CUDNN_STATUS_SUCCESS) [[unlikely]] {                          \
      ::baton::detail::throw_cudnn_error(baton_status_, #call, __FILE__, __LINE__);    \
    }                                                                                  \
  } while (0)

#define BATON_NCCL_CHECK(call)                                                         \
  do {                                                                                 \
    const ncclResult_t baton_status_ = (call);                                         \
    if (baton_status_ != ncclSuccess) [[unlikely]] {                                   \
      ::baton::detail::throw_nccl_error(baton_status_, #call, __FILE__, __LINE__);     \
    }                                                                                  \
  } while (0)
