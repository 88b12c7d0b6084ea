// Status check for cuBLAS calls (file:line and the failed call in the message).
#pragma once

#include <cublas_v2.h>

#include "runtime/core/cuda/library_check.h"
#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_library_error(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_CUBLAS_CHECK(call) BATON_LIBRARY_CHECK((call), #call, cublasStatus_t, CUBLAS_STATUS_SUCCESS)
