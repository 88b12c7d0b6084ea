// Copies of tensors between devices, ordered on the receiving context's stream.
#pragma once

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::parallel {

// Copies `src` into `dst` (any devices) ordered on `dst_ctx`'s stream or, when only the source is a
// CUDA device, on a temporary stream of the source device; returns after the copy when that is so.
void copy_tensor(Tensor dst, const Tensor& src, Context& dst_ctx);

// `t` itself when it is on ctx's device, else a copy there (copy_tensor, ordered on ctx's stream).
Tensor on_device_of(const Tensor& t, Context& ctx);

}  // namespace baton::parallel
