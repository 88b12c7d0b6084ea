// The one status check behind BATON_CUDA_CHECK, BATON_CUBLAS_CHECK, BATON_CUDNN_CHECK and
// BATON_NCCL_CHECK: each is this check with its library's status type and success value.
#pragma once

// Evaluates `call` once; when its status is not `success`, calls the overload of
// baton::detail::throw_library_error(status, call_text, __FILE__, __LINE__) for the library's status
// type, which throws baton::Error (`call_text`: the call as written). Each library's header declares
// its overload; runtime/core/cuda/cuda_check.cc defines them.
#define BATON_LIBRARY_CHECK(call, call_text, status_type, success)                        \
  do {                                                                                    \
    const status_type baton_status_ = (call);                                             \
    if (baton_status_ != (success)) [[unlikely]] {                                        \
      ::baton::detail::throw_library_error(baton_status_, call_text, __FILE__, __LINE__); \
    }                                                                                     \
  } while (0)
