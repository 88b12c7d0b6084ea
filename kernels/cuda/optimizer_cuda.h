// CUDA launchers of the optimizer ops (kernels/optimizer.h). Plain C++: raw device pointers, the
// element count, the dtype (f32 or f64), the Context first (work on its device and stream).
// Arguments are checked by kernels/optimizer.cc.
#pragma once

#include <cstdint>

#include "kernels/optimizer_types.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"

namespace baton::kernels::cuda {

// momentum_buf is only used when p.momentum != 0.
void sgd_step(Context& ctx, void* params, const void* grads, void* momentum_buf, DType dtype, int64_t n,
              const SgdParams& p);
void adamw_step(Context& ctx, void* params, const void* grads, void* exp_avg, void* exp_avg_sq, DType dtype, int64_t n,
                const AdamWParams& p);

}  // namespace baton::kernels::cuda
