// Batch-norm statistics ops (deferred running statistics): argument checks, then the CPU reference
// (in double, as kernels/cpu/batch_norm_cpu.h) or the CUDA launchers.
#include "kernels/batch_norm_statistics.h"

#include <initializer_list>
#include <string_view>

#include "kernels/cpu/batch_norm_cpu.h"
#include "kernels/cuda/batch_norm_cuda.h"
#include "kernels/cuda/batch_norm_statistics_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// Per-channel tensors: defined, [channels] of `dtype`, on the context's device.
void check_channels(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors,
                    int64_t channels, DType dtype) {
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.defined(), op, ": argument '", t.name, "' is undefined");
    check_on_context(op, ctx, {t});
    BATON_CHECK(t.tensor.shape() == Shape{channels}, op, ": argument '", t.name, "' has shape ", t.tensor.shape().str(),
                ", expected [", channels, "]");
    BATON_CHECK(t.tensor.dtype() == dtype, op, ": argument '", t.name, "' is ", dtype_name(t.tensor.dtype()),
                ", expected ", dtype_name(dtype));
  }
}

}  // namespace

void batch_norm_statistics(Context& ctx, const Tensor& x, const Tensor& mean, const Tensor& var) {
  constexpr std::string_view op = "batch_norm_statistics";
  check_on_context(op, ctx, {{"x", x}});
  check_rank(op, {"x", x}, 4);
  check_dtype_in(op, {"x", x}, {DType::f32, DType::f64});
  check_channels(op, ctx, {{"mean", mean}, {"var", var}}, x.size(1), x.dtype());
  const int64_t batch = x.size(0), channels = x.size(1), hw = x.size(2) * x.size(3);
  BATON_CHECK(batch * hw > 0 || channels == 0, op, ": input of shape ", x.shape().str(),
              " has no values per channel (the statistics are undefined)");
  if (channels == 0) return;
  on_device(
      op, ctx,
      [&] {
        dispatch_f32_f64(op, x.dtype(), [&]<typename T>() {
          const T* p = x.data<T>();
          // The sums of cpu::batch_norm_forward_train: one micro-batch gives its bits.
          cpu::rows_for(channels, batch * hw, [&](int64_t c) {
            const auto [mu, variance] = cpu::channel_mean_var(p, batch, channels, hw, c);
            mean.data<T>()[c] = static_cast<T>(mu);
            var.data<T>()[c] = static_cast<T>(variance);
          });
        });
      },
      [&](auto& cuda_ctx) {
        cuda::batch_norm_statistics(cuda_ctx, x.dtype(), {x.size(0), x.size(1), x.size(2), x.size(3)}, x.data_ptr(),
                                    mean.data_ptr(), var.data_ptr());
      });
}

void batch_norm_merge_statistics(Context& ctx, int64_t count, const Tensor& mean, const Tensor& var,
                                 int64_t batch_count, const Tensor& batch_mean, const Tensor& batch_var) {
  constexpr std::string_view op = "batch_norm_merge_statistics";
  BATON_CHECK(mean.defined(), op, ": argument 'mean' is undefined");
  check_dtype_in(op, {"mean", mean}, {DType::f32, DType::f64});
  check_channels(op, ctx, {{"mean", mean}, {"var", var}, {"batch_mean", batch_mean}, {"batch_var", batch_var}},
                 mean.numel(), mean.dtype());
  BATON_CHECK(count >= 0 && batch_count >= 1, op, ": counts ", count, " and ", batch_count,
              ", expected count >= 0 and batch_count >= 1");
  const int64_t channels = mean.numel();
  if (channels == 0) return;
  on_device(
      op, ctx,
      [&] {
        dispatch_f32_f64(op, mean.dtype(), [&]<typename T>() {
          T* m = mean.data<T>();
          T* v = var.data<T>();
          const T* bm = batch_mean.data<T>();
          const T* bv = batch_var.data<T>();
          const double a = static_cast<double>(count), b = static_cast<double>(batch_count), n = a + b;
          for (int64_t c = 0; c < channels; ++c) {
            if (count == 0) {
              m[c] = bm[c];
              v[c] = bv[c];
              continue;
            }
            const double delta = static_cast<double>(bm[c]) - static_cast<double>(m[c]);
            const double merged_var =
                (a * static_cast<double>(v[c]) + b * static_cast<double>(bv[c]) + delta * delta * a * b / n) / n;
            m[c] = static_cast<T>(static_cast<double>(m[c]) + delta * b / n);
            v[c] = static_cast<T>(merged_var);
          }
        });
      },
      [&](auto& cuda_ctx) {
        cuda::batch_norm_merge_statistics(cuda_ctx, mean.dtype(), channels, count, mean.data_ptr(), var.data_ptr(),
                                          batch_count, batch_mean.data_ptr(), batch_var.data_ptr());
      });
}

void batch_norm_commit_statistics(Context& ctx, int64_t count, const Tensor& mean, const Tensor& var, double momentum,
                                  const Tensor& running_mean, const Tensor& running_var,
                                  const Tensor& num_batches_tracked) {
  constexpr std::string_view op = "batch_norm_commit_statistics";
  BATON_CHECK(mean.defined(), op, ": argument 'mean' is undefined");
  check_dtype_in(op, {"mean", mean}, {DType::f32, DType::f64});
  check_channels(op, ctx, {{"mean", mean}, {"var", var}, {"running_mean", running_mean}, {"running_var", running_var}},
                 mean.numel(), mean.dtype());
  BATON_CHECK(count >= 2, op, ": count is ", count, ", expected at least 2 values per channel");
  BATON_CHECK(momentum >= 0.0 && momentum <= 1.0, op, ": momentum is ", momentum, ", expected a value in [0, 1]");
  if (num_batches_tracked.defined()) {
    check_on_context(op, ctx, {{"num_batches_tracked", num_batches_tracked}});
    BATON_CHECK(num_batches_tracked.dtype() == DType::i64 && num_batches_tracked.shape() == Shape{}, op,
                ": argument 'num_batches_tracked' is ", dtype_name(num_batches_tracked.dtype()), " of shape ",
                num_batches_tracked.shape().str(), ", expected an i64 scalar (shape [])");
  }
  const int64_t channels = mean.numel();
  on_device(
      op, ctx,
      [&] {
        dispatch_f32_f64(op, mean.dtype(), [&]<typename T>() {
          const T* m = mean.data<T>();
          const T* v = var.data<T>();
          T* rm = running_mean.data<T>();
          T* rv = running_var.data<T>();
          const double n = static_cast<double>(count);
          for (int64_t c = 0; c < channels; ++c) {
            // The expressions of cpu::batch_norm_forward_train: one micro-batch gives the same bits.
            const double var_c = static_cast<double>(v[c]);
            rm[c] =
                static_cast<T>((1.0 - momentum) * static_cast<double>(rm[c]) + momentum * static_cast<double>(m[c]));
            rv[c] = static_cast<T>((1.0 - momentum) * static_cast<double>(rv[c]) + momentum * var_c * n / (n - 1.0));
          }
        });
        if (num_batches_tracked.defined()) ++*num_batches_tracked.data<int64_t>();
      },
      [&](auto& cuda_ctx) {
        if (channels > 0) {
          cuda::batch_norm_commit_statistics(cuda_ctx, mean.dtype(), channels, count, mean.data_ptr(), var.data_ptr(),
                                             momentum, running_mean.data_ptr(), running_var.data_ptr());
        }
        if (num_batches_tracked.defined()) cuda::increment_counter(cuda_ctx, num_batches_tracked.data<int64_t>());
      });
}

}  // namespace baton::kernels
