// Status check for NCCL calls (file:line and the failed call in the message).
#pragma once

#include <nccl.h>

#include "runtime/core/cuda/library_check.h"
#include "runtime/core/error.h"

namespace baton::detail {

[[noreturn]] void throw_library_error(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace baton::detail

#define BATON_NCCL_CHECK(call) BATON_LIBRARY_CHECK((call), #call, ncclResult_t, ncclSuccess)
