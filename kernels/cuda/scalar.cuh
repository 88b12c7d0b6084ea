// CUDA element helpers: the device element type of each floating DType (the dispatch), and
// arithmetic in Acc<T>: float for f32, f16 and bf16, double for f64 (as kernels/cpu/scalar.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string_view>
#include <utility>

#include "kernels/acc_type.h"
#include "kernels/dispatch.h"

namespace baton::kernels::cuda {

template <typename T>
using Acc = AccType<T, __half, __nv_bfloat16>;

__device__ __forceinline__ float load(__half v) { return __half2float(v); }
__device__ __forceinline__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float load(float v) { return v; }
__device__ __forceinline__ double load(double v) { return v; }

template <typename T>
__device__ __forceinline__ T store(Acc<T> v);
template <>
__device__ __forceinline__ float store<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ double store<double>(double v) {
  return v;
}
template <>
__device__ __forceinline__ __half store<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 store<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// kernels::dispatch_floating with the device types of f16 and bf16.
template <typename Fn>
decltype(auto) dispatch_floating(std::string_view op, DType dtype, Fn&& fn) {
  return kernels::dispatch_floating<__half, __nv_bfloat16>(op, dtype, std::forward<Fn>(fn));
}

}  // namespace baton::kernels::cuda
