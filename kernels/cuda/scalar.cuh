// CUDA helpers: device element types for each DType, accumulation in float (double for f64),
// 16-byte vector packs and the dispatch from a DType to a device element type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"

namespace baton::kernels::cuda {

template <typename T>
struct AccOf {
  using type = T;
};
template <>
struct AccOf<__half> {
  using type = float;
};
template <>
struct AccOf<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using Acc = typename AccOf<T>::type;

__device__ __forceinline__ float load(__half v) { return __half2float(v); }
__device__ __forceinline__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float load(float v) { return v; }
__device__ __forceinline__ double load(double v) { return v; }

template <typename T>
__device__ __forceinline__ T store(Acc<T> v);
template <>
__device__ __forceinline__ float store<float>(float v) { return v; }
template <>
__device__ __forceinline__ double store<double>(double v) { return v; }
template <>
__device__ __forceinline__ __half store<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 store<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// 16 bytes of T, loaded and stored with one vector instruction.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls fn.template operator()<T>() with T the device type of a floating dtype.
template <typename Fn>
decltype(auto) dispatch_floating(const char* op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn.template operator()<float>();
    case DType::f64: return fn.template operator()<double>();
    case DType::f16: return fn.template operator()<__half>();
    case DType::bf16: return fn.template operator()<__nv_bfloat16>();
    default: BATON_FAIL(op, ": dtype ", dtype_name(dtype), " is not supported on CUDA");
  }
}

}  // namespace baton::kernels::cuda
