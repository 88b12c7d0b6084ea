// From a runtime DType to the C++ element type of an op: each dispatch calls
// fn.template operator()<T>() with the type that stands for the dtype, for the CPU references and
// the CUDA launchers alike (float, double and the integer types are the same on both sides; the
// 16-bit floating types are Half and BFloat16 on the host, __half and __nv_bfloat16 on CUDA, see
// kernels/cuda/scalar.cuh). The ops check dtypes before they dispatch.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"

namespace baton::kernels {

// f32, f64 and, kWithHalves, f16, bf16 -> float, double, F16, BF16; for other dtypes throws, saying
// the `expected` ones.
template <bool kWithHalves, typename F16, typename BF16, typename Fn>
decltype(auto) dispatch_floating_types(std::string_view op, DType dtype, std::string_view expected, Fn&& fn) {
  if (dtype == DType::f32) return fn.template operator()<float>();
  if (dtype == DType::f64) return fn.template operator()<double>();
  if constexpr (kWithHalves) {
    if (dtype == DType::f16) return fn.template operator()<F16>();
    if (dtype == DType::bf16) return fn.template operator()<BF16>();
  }
  BATON_FAIL(op, ": dtype ", dtype_name(dtype), " is not supported (expected ", expected, ")");
}

// f32, f64, f16, bf16 -> float, double, F16, BF16; throws for other dtypes.
template <typename F16 = Half, typename BF16 = BFloat16, typename Fn>
decltype(auto) dispatch_floating(std::string_view op, DType dtype, Fn&& fn) {
  return dispatch_floating_types<true, F16, BF16>(op, dtype, "f32, f64, f16 or bf16", std::forward<Fn>(fn));
}

// f32, f64 -> float, double (the optimizer ops); throws for other dtypes.
template <typename Fn>
decltype(auto) dispatch_f32_f64(std::string_view op, DType dtype, Fn&& fn) {
  return dispatch_floating_types<false, Half, BFloat16>(op, dtype, "f32 or f64", std::forward<Fn>(fn));
}

// A label or index dtype (checked before: i32 or i64) -> int32_t, int64_t.
template <typename Fn>
decltype(auto) dispatch_labels(DType dtype, Fn&& fn) {
  if (dtype == DType::i32) return fn.template operator()<int32_t>();
  return fn.template operator()<int64_t>();
}

}  // namespace baton::kernels
