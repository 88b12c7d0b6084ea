// Status check for NCCL calls (file:line and the failed call in the message).
#pragma once

#include <nccl.h>

#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_NCCL_CHECK(call)                                                     \
  do {                                                                             \
    const ncclResult_t baton_status_ = (call);                                     \
    if (baton_status_ != ncclSuccess) [[unlikely]] {                               \
      ::baton::detail::throw_nccl_error(baton_status_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)
