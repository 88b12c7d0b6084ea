// Ordering one CUDA stream after the work issued so far on another (of any device) through pooled
// events: cross-stream frees and peer copies would otherwise create and destroy an event each time.
#pragma once

#include <cuda_runtime.h>

namespace baton::detail {

// Work issued on `waiting` after this call runs after the work issued so far on `recorded`
// (`recorded_device` is its device). Throws baton::Error when a CUDA call fails.
void order_after(cudaStream_t waiting, cudaStream_t recorded, int recorded_device);
// The same for destructors: a failure is logged and cleared (log_cuda_failure); returns success.
bool order_after_noexcept(cudaStream_t waiting, cudaStream_t recorded, int recorded_device) noexcept;

}  // namespace baton::detail
