// Deferred checks: the host side of the records CUDA ops write on the device (kernels/deferred_checks.h).
#include "kernels/deferred_checks.h"

#include <cstring>
#include <string_view>

#include "kernels/cuda/deferred_checks_cuda.h"
#include "kernels/device_dispatch.h"
#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton::kernels {
namespace {

static_assert(sizeof(LabelCheckRecord) <= kDeferredCheckBytes, "the label check record must fit the context's buffer");

std::string_view op_name(int64_t op) {
  // kNames[0] stands for CheckedOp::none.
  constexpr std::string_view kNames[] = {"an unknown op", "softmax_cross_entropy_forward",
                                         "softmax_cross_entropy_backward", "topk_correct", "one_hot"};
  return enum_lookup<CheckedOp::one_hot>(static_cast<CheckedOp>(op), kNames, "an unknown op");
}

}  // namespace

void copy_deferred_errors_async(Context& ctx, void* host) {
  if (!ctx.has_device_checks()) {
    std::memset(host, 0, kDeferredCheckBytes);
    return;
  }
  on_device(
      "copy_deferred_errors_async", ctx, [&] { std::memset(host, 0, kDeferredCheckBytes); },
      [&](auto& cuda_ctx) {
        cuda::copy_and_reset_record(cuda_ctx, cuda_ctx.device_checks(), host, kDeferredCheckBytes);
      });
}

void raise_label_check(const LabelCheckRecord& r) {
  if (r.op == static_cast<int64_t>(CheckedOp::none)) return;
  const bool indices = r.op == static_cast<int64_t>(CheckedOp::one_hot);
  BATON_FAIL(op_name(r.op), ": argument '", indices ? "indices" : "labels", "' has ", r.count, " value(s) outside [0, ",
             r.classes, "), the first is ", r.first_value, indices ? " at position " : " at row ", r.first_row);
}

void raise_deferred_errors(const void* host) {
  LabelCheckRecord r;
  std::memcpy(&r, host, sizeof(r));
  raise_label_check(r);
}

int64_t deferred_error_tag(const void* host) {
  LabelCheckRecord r;
  std::memcpy(&r, host, sizeof(r));
  return r.op == static_cast<int64_t>(CheckedOp::none) ? -1 : r.tag;
}

void raise_deferred_errors(Context& ctx) {
  if (!ctx.has_device_checks()) return;
  alignas(8) unsigned char record[kDeferredCheckBytes];
  copy_deferred_errors_async(ctx, record);
  ctx.synchronize();
  raise_deferred_errors(record);
}

}  // namespace baton::kernels
