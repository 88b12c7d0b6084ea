// What the pooling ops' files (kernels/pool.cc, kernels/pool_adaptive.cc) share: the dtypes they take,
// the planes of a tensor, and the check of their activations' device and memory format.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "kernels/op_checks.h"

namespace baton::kernels {

inline constexpr std::initializer_list<DType> kPoolDtypes = {DType::f32, DType::f64, DType::f16, DType::bf16};

// N·C planes of an [N, C, H, W] tensor.
inline int64_t planes_of(const Tensor& t) { return t.size(0) * t.size(1); }

inline bool is_channels_last(const Tensor& t) { return t.format() == MemoryFormat::channels_last; }

// The tensors are on the context's device and place their elements alike: all row-major, or all
// channels-last on the CPU (kernels/cpu/pool_channels_last_cpu.h). CUDA refuses channels-last ones.
inline void check_pool_activations(std::string_view op, const Context& ctx,
                                   std::initializer_list<NamedTensor> tensors) {
  check_on_context_any_format(op, ctx, tensors);
  if (ctx.device().is_cuda()) check_on_context(op, ctx, tensors);
  check_same_placement(op, tensors);
}

}  // namespace baton::kernels
