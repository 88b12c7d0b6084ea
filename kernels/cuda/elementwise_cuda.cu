// CUDA elementwise kernels: per-element functors over the grid-stride map of
// kernels/cuda/pointwise.cuh (out[i] = op(in[i]...), 16-byte packs when aligned; in a cast the
// input and output element types differ).
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/cuda/pointwise.cuh"
#include "kernels/cuda/scalar.cuh"

namespace baton::kernels::cuda {
namespace {

template <typename T>
struct AddOp {
  __device__ T operator()(T a, T b) const { return store<T>(load(a) + load(b)); }
};
template <typename T>
struct SubOp {
  __device__ T operator()(T a, T b) const { return store<T>(load(a) - load(b)); }
};
template <typename T>
struct MulOp {
  __device__ T operator()(T a, T b) const { return store<T>(load(a) * load(b)); }
};
template <typename T>
struct AxpbyOp {
  Acc<T> alpha, beta;
  __device__ T operator()(T x, T y) const { return store<T>(alpha * load(x) + beta * load(y)); }
};
// x where x > 0 or x is NaN (bit for bit), else +0; as the CPU reference.
template <typename T>
struct ReluForwardOp {
  __device__ T operator()(T x) const {
    const Acc<T> v = load(x);
    return v > Acc<T>(0) || isnan(v) ? x : store<T>(Acc<T>(0));
  }
};
// dy (bit for bit) where y > 0, else +0.
template <typename T>
struct ReluBackwardOp {
  __device__ T operator()(T y, T dy) const { return load(y) > Acc<T>(0) ? dy : store<T>(Acc<T>(0)); }
};

// f64 -> f32 rounding to odd, the same float as the CPU's double_to_float_round_odd: truncate,
// then set the last mantissa bit when the truncation was inexact. Rounding it once more to f16 or
// bf16 gives the correctly rounded result (no double rounding).
__device__ __forceinline__ float double_to_float_round_odd(double v) {
  const float truncated = __double2float_rz(v);
  if (isnan(v) || static_cast<double>(truncated) == v) return truncated;
  return __int_as_float(__float_as_int(truncated) | 1);
}

template <typename D, typename S>
struct CastOp {
  __device__ D operator()(S v) const {
    if constexpr (std::is_same_v<D, double>) {
      return static_cast<double>(load(v));  // exact
    } else if constexpr (std::is_same_v<S, double>) {
      if constexpr (std::is_same_v<D, float>)
        return __double2float_rn(v);
      else
        return store<D>(double_to_float_round_odd(v));
    } else {
      return store<D>(load(v));  // f16/bf16 -> float is exact; one rounding to D
    }
  }
};

template <template <typename> class Op>
void binary(const Context& ctx, const char* op, const char* kernel_name, DType dtype, const void* a, const void* b,
            void* out, int64_t n) {
  dispatch_floating(op, dtype, [&]<typename T>() {
    launch_pointwise(kernel_name, ctx, n, Op<T>{}, static_cast<T*>(out), static_cast<const T*>(a),
                     static_cast<const T*>(b));
  });
}

}  // namespace

void add(Context& ctx, DType dtype, const void* a, const void* b, void* out, int64_t n) {
  binary<AddOp>(ctx, "add", "add_kernel", dtype, a, b, out, n);
}

void sub(Context& ctx, DType dtype, const void* a, const void* b, void* out, int64_t n) {
  binary<SubOp>(ctx, "sub", "sub_kernel", dtype, a, b, out, n);
}

void mul(Context& ctx, DType dtype, const void* a, const void* b, void* out, int64_t n) {
  binary<MulOp>(ctx, "mul", "mul_kernel", dtype, a, b, out, n);
}

void relu_backward(Context& ctx, DType dtype, const void* y, const void* dy, void* dx, int64_t n) {
  binary<ReluBackwardOp>(ctx, "relu_backward", "relu_backward_kernel", dtype, y, dy, dx, n);
}

void scale(Context& ctx, DType dtype, const void* x, double alpha, void* out, int64_t n) {
  dispatch_floating("scale", dtype, [&]<typename T>() {
    launch_pointwise("scale_kernel", ctx, n, ScaleOp<T>{static_cast<Acc<T>>(alpha)}, static_cast<T*>(out),
                     static_cast<const T*>(x));
  });
}

void axpby(Context& ctx, DType dtype, double alpha, const void* x, double beta, const void* y, void* out, int64_t n) {
  dispatch_floating("axpby", dtype, [&]<typename T>() {
    const AxpbyOp<T> op{static_cast<Acc<T>>(alpha), static_cast<Acc<T>>(beta)};
    launch_pointwise("axpby_kernel", ctx, n, op, static_cast<T*>(out), static_cast<const T*>(x),
                     static_cast<const T*>(y));
  });
}

void relu_forward(Context& ctx, DType dtype, const void* x, void* out, int64_t n) {
  dispatch_floating("relu_forward", dtype, [&]<typename T>() {
    launch_pointwise("relu_forward_kernel", ctx, n, ReluForwardOp<T>{}, static_cast<T*>(out), static_cast<const T*>(x));
  });
}

void cast(Context& ctx, DType src_dtype, const void* src, DType out_dtype, void* out, int64_t n) {
  dispatch_floating("cast", src_dtype, [&]<typename S>() {
    dispatch_floating("cast", out_dtype, [&]<typename D>() {
      launch_pointwise("cast_kernel", ctx, n, CastOp<D, S>{}, static_cast<D*>(out), static_cast<const S*>(src));
    });
  });
}

}  // namespace baton::kernels::cuda
