// The type that arithmetic on each element type happens in, shared by the CPU helpers
// (kernels/cpu/scalar.h) and the CUDA ones (kernels/cuda/scalar.cuh): float for f32, f16 and bf16;
// double for f64.
#pragma once

#include <type_traits>

namespace baton::kernels {

// F16 and BF16 are the asking side's 16-bit float types: baton's Half and BFloat16 on the CPU,
// __half and __nv_bfloat16 on CUDA.
template <typename T, typename F16, typename BF16>
using AccType = std::conditional_t<std::is_same_v<T, F16> || std::is_same_v<T, BF16>, float, T>;

}  // namespace baton::kernels
