// The one status check behind BATON_CUDA_CHECK, BATON_CUBLAS_CHECK, BATON_CUDNN_CHECK and
// BATON_NCCL_CHECK: each is this check with its library's status type, success value and thrower.
#pragma once

// Evaluates `call` once; when its status is not `success`, calls
// thrower(status, call_text, __FILE__, __LINE__), which throws (`call_text`: the call as written).
#define BATON_LIBRARY_CHECK(call, call_text, status_type, success, thrower) \
  do {                                                                      \
    const status_type baton_status_ = (call);                               \
    if (baton_status_ != (success)) [[unlikely]] {                          \
      thrower(baton_status_, call_text, __FILE__, __LINE__);                \
    }                                                                       \
  } while (0)
