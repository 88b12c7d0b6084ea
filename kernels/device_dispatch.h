// The device dispatch of every op front end (kernels/<family>.cc): the CUDA launcher on a CUDA
// context, the CPU reference otherwise, and one clear error for a CUDA context in a build without CUDA.
#pragma once

#include <string_view>

#include "kernels/dispatch.h"
#include "runtime/core/build_config.h"
#include "runtime/core/context.h"
#include "runtime/core/error.h"

namespace baton::kernels {

// Whether this build has the CUDA backend (kernels/cuda/ compiled and linked).
inline constexpr bool kHaveCudaBackend = BATON_HAVE_CUDA != 0;

// The error of an op asked to run on a CUDA device by a build without the CUDA backend, worded as
// the core's check_device words it.
[[noreturn]] inline void fail_without_cuda_backend(std::string_view op, const Context& ctx) {
  BATON_FAIL(op, ": device ", ctx.device().str(), " requested but this baton was built without CUDA (BATON_CUDA=OFF)");
}

// Runs `cuda_fn(ctx)` when ctx's device is a CUDA device and `cpu_fn()` otherwise, returning what
// it returns. `cuda_fn` is a generic lambda (`[&](auto& cuda_ctx) { cuda::op(cuda_ctx, ...); }`):
// calling the launcher through its `auto` parameter makes the call depend on the template, so a
// build without CUDA never instantiates it and never references a launcher it does not compile
// (the launcher headers are plain C++ and are always included). Without the CUDA backend a CUDA
// context fails with fail_without_cuda_backend.
template <typename CpuFn, typename CudaFn>
decltype(auto) on_device(std::string_view op, Context& ctx, CpuFn&& cpu_fn, CudaFn&& cuda_fn) {
  if (ctx.device().is_cuda()) {
    if constexpr (kHaveCudaBackend) {
      return cuda_fn(ctx);
    } else {
      fail_without_cuda_backend(op, ctx);
    }
  }
  return cpu_fn();
}

// on_device with the element type of `dtype` (f32, f64, f16 or bf16): `cpu_fn.template
// operator()<T>()` with its C++ type T (dispatch_floating) on a CPU device, `cuda_fn(ctx)` on a CUDA one.
template <typename CpuFn, typename CudaFn>
void on_device_floating(std::string_view op, Context& ctx, DType dtype, CpuFn&& cpu_fn, CudaFn&& cuda_fn) {
  on_device(
      op, ctx, [&] { dispatch_floating(op, dtype, cpu_fn); }, cuda_fn);
}

// on_device_floating with a second type: on a CPU device `cpu_fn.template operator()<T, L>()` with T
// the element type of `dtype` and L the C++ type of the label or index dtype `label_dtype` (i32 or
// i64: dispatch_labels).
template <typename CpuFn, typename CudaFn>
void on_device_floating_labels(std::string_view op, Context& ctx, DType dtype, DType label_dtype, CpuFn&& cpu_fn,
                               CudaFn&& cuda_fn) {
  on_device_floating(
      op, ctx, dtype,
      [&]<typename T>() { dispatch_labels(label_dtype, [&]<typename L>() { cpu_fn.template operator()<T, L>(); }); },
      cuda_fn);
}

}  // namespace baton::kernels
