// Status check for cuDNN calls (file:line, the failed call and cuDNN's last error in the message).
#pragma once

#include <cudnn.h>

#include "runtime/core/cuda/library_check.h"
#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_library_error(cudnnStatus_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_CUDNN_CHECK(call) BATON_LIBRARY_CHECK((call), #call, cudnnStatus_t, CUDNN_STATUS_SUCCESS)
