// Status check for cuBLAS calls (file:line and the failed call in the message).
#pragma once

#include <cublas_v2.h>

#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_CUBLAS_CHECK(call)                                                     \
  do {                                                                               \
    const cublasStatus_t baton_status_ = (call);                                     \
    if (baton_status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]] {                       \
      ::baton::detail::throw_cublas_error(baton_status_, #call, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)
