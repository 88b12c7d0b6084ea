// Status check for cuDNN calls (file:line, the failed call and cuDNN's last error in the message).
#pragma once

#include <cudnn.h>

#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_CUDNN_CHECK(call)                                                     \
  do {                                                                              \
    const cudnnStatus_t baton_status_ = (call);                                     \
    if (baton_status_ != CUDNN_STATUS_SUCCESS) [[unlikely]] {                       \
      ::baton::detail::throw_cudnn_error(baton_status_, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)
