// CUDA launchers of the deferred checks (kernels/deferred_checks.h): reading a context's device-check
// record back to the host. Plain C++; the Context first (work on its device and stream).
#pragma once

#include <cstddef>

#include "runtime/core/context.h"

namespace baton::kernels::cuda {

// Copies `bytes` of `record` (device memory) into `host` on ctx's stream, then zeroes the record
// there. The host does not wait: `host` holds the copy once the stream has passed this point.
void copy_and_reset_record(Context& ctx, void* record, void* host, size_t bytes);

}  // namespace baton::kernels::cuda
