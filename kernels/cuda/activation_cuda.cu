// CUDA activation kernels: the formulas of kernels/activation_math.h mapped over whole tensors by
// kernels/cuda/pointwise.cuh (16-byte vectors when aligned).
#include "kernels/activation_math.h"
#include "kernels/cuda/activation_cuda.h"
#include "kernels/cuda/pointwise.cuh"

namespace baton::kernels::cuda {
namespace {

template <typename T>
struct Relu6Op {
  __device__ T operator()(T x) const { return store<T>(relu6_value(load(x))); }
};
template <typename T>
struct SigmoidOp {
  __device__ T operator()(T x) const { return store<T>(sigmoid_value(load(x))); }
};
template <typename T>
struct TanhOp {
  __device__ T operator()(T x) const { return store<T>(tanh_of(load(x))); }
};
// dy (bit for bit) where 0 < x < 6, else +0; as the CPU reference.
template <typename T>
struct Relu6BackwardOp {
  __device__ T operator()(T x, T dy) const { return relu6_passes(load(x)) ? dy : store<T>(Acc<T>(0)); }
};
template <typename T>
struct SigmoidBackwardOp {
  __device__ T operator()(T y, T dy) const { return store<T>(sigmoid_grad(load(y), load(dy))); }
};
template <typename T>
struct TanhBackwardOp {
  __device__ T operator()(T y, T dy) const { return store<T>(tanh_grad(load(y), load(dy))); }
};

// Reads the scalar once per thread (bind) and scales by alpha · scalar rounded to Acc<T>, as the CPU.
template <typename T, typename S>
struct ScaleByScalarOp {
  const S* scalar;
  double alpha;
  __device__ ScaleOp<T> bind() const { return {static_cast<Acc<T>>(alpha * static_cast<double>(*scalar))}; }
};

template <template <typename> class Op, typename... Pointers>
void unary_or_binary(const Context& ctx, const char* kernel_name, DType dtype, void* out, int64_t n, Pointers... in) {
  dispatch_floating(kernel_name, dtype, [&]<typename T>() {
    launch_pointwise(kernel_name, ctx, n, Op<T>{}, static_cast<T*>(out), static_cast<const T*>(in)...);
  });
}

}  // namespace

void activation_forward(Context& ctx, Activation activation, DType dtype, const void* x, void* out, int64_t n) {
  switch (activation) {
    case Activation::relu6:
      return unary_or_binary<Relu6Op>(ctx, "relu6_forward_kernel", dtype, out, n, x);
    case Activation::sigmoid:
      return unary_or_binary<SigmoidOp>(ctx, "sigmoid_forward_kernel", dtype, out, n, x);
    case Activation::tanh:
      return unary_or_binary<TanhOp>(ctx, "tanh_forward_kernel", dtype, out, n, x);
  }
}

void activation_backward(Context& ctx, Activation activation, DType dtype, const void* saved, const void* dy, void* dx,
                         int64_t n) {
  switch (activation) {
    case Activation::relu6:
      return unary_or_binary<Relu6BackwardOp>(ctx, "relu6_backward_kernel", dtype, dx, n, saved, dy);
    case Activation::sigmoid:
      return unary_or_binary<SigmoidBackwardOp>(ctx, "sigmoid_backward_kernel", dtype, dx, n, saved, dy);
    case Activation::tanh:
      return unary_or_binary<TanhBackwardOp>(ctx, "tanh_backward_kernel", dtype, dx, n, saved, dy);
  }
}

void scale_by_scalar(Context& ctx, DType dtype, const void* x, DType scalar_dtype, const void* scalar, double alpha,
                     void* out, int64_t n) {
  dispatch_floating("scale_by_scalar", dtype, [&]<typename T>() {
    const auto launch = [&]<typename S>() {
      launch_pointwise("scale_by_scalar_kernel", ctx, n, ScaleByScalarOp<T, S>{static_cast<const S*>(scalar), alpha},
                       static_cast<T*>(out), static_cast<const T*>(x));
    };
    dispatch_f32_f64("scale_by_scalar", scalar_dtype, launch);  // checked: f32 or f64
  });
}

}  // namespace baton::kernels::cuda
