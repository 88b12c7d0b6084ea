// one_hot: argument and index checks, then the CPU reference or the CUDA kernel.
#include "kernels/one_hot.h"

#include <cstdint>
#include <string_view>

#include "kernels/cpu/one_hot_cpu.h"
#include "kernels/cuda/loss_cuda.h"
#include "kernels/cuda/one_hot_cuda.h"
#include "kernels/deferred_check_types.h"
#include "kernels/deferred_checks.h"
#include "kernels/device_dispatch.h"
#include "kernels/dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// Throws unless every index lies in [0, classes), naming the first bad one.
template <typename I>
void check_indices(std::string_view op, const I* indices, int64_t count, int64_t classes) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < count; ++i) {
    if (indices[i] >= 0 && indices[i] < classes) continue;
    if (bad++ == 0) first = i;
  }
  BATON_CHECK(bad == 0, op, ": argument 'indices' has ", bad, " value(s) outside [0, ", classes, "), the first is ",
              bad > 0 ? static_cast<int64_t>(indices[first]) : 0, " at position ", first);
}

}  // namespace

void one_hot(Context& ctx, const Tensor& indices, const Tensor& out) {
  constexpr std::string_view op = "one_hot";
  check_on_context(op, ctx, {{"indices", indices}, {"out", out}});
  check_dtype_in(op, {"indices", indices}, {DType::i32, DType::i64});
  check_floating(op, {"out", out});
  std::vector<int64_t> dims = indices.shape().dims();
  BATON_CHECK(out.rank() == indices.rank() + 1, op, ": argument 'out' has shape ", out.shape().str(),
              ", expected the indices' shape ", indices.shape().str(), " and the classes");
  dims.push_back(out.size(out.rank() - 1));
  BATON_CHECK(out.shape() == Shape(dims), op, ": argument 'out' has shape ", out.shape().str(), ", expected ",
              Shape(dims).str(), " (the indices' shape and the classes)");
  const int64_t rows = indices.numel(), classes = dims.back();
  on_device(
      op, ctx,
      [&] {
        dispatch_labels(indices.dtype(), [&]<typename I>() {
          check_indices(op, indices.data<I>(), rows, classes);
          dispatch_floating(op, out.dtype(),
                            [&]<typename T>() { cpu::one_hot(indices.data<I>(), rows, classes, out.data<T>()); });
        });
      },
      [&](auto& cuda_ctx) {
        // Bad indices are recorded on the device and reported at the next synchronisation
        // (kernels/deferred_checks.h), or here when the context synchronises its checks.
        cuda::check_labels(cuda_ctx, indices.data_ptr(), indices.dtype(), rows, classes,
                           static_cast<int64_t>(CheckedOp::one_hot), cuda_ctx.device_checks());
        if (cuda_ctx.sync_checks()) raise_deferred_errors(cuda_ctx);
        cuda::one_hot(cuda_ctx, indices.data_ptr(), indices.dtype(), rows, classes, out.data_ptr(), out.dtype());
      });
}

}  // namespace baton::kernels
