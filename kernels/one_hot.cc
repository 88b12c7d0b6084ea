// one_hot: argument and index checks, then the CPU reference.
#include "kernels/one_hot.h"

#include <cstdint>
#include <string_view>

#include "kernels/cpu/one_hot_cpu.h"
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
  BATON_CHECK(!ctx.device().is_cuda(), op, ": runs on the CPU only; device ", ctx.device().str(),
              " has no one_hot kernel yet");
  check_dtype_in(op, {"indices", indices}, {DType::i32, DType::i64});
  check_floating(op, {"out", out});
  std::vector<int64_t> dims = indices.shape().dims();
  BATON_CHECK(out.rank() == indices.rank() + 1, op, ": argument 'out' has shape ", out.shape().str(),
              ", expected the indices' shape ", indices.shape().str(), " and the classes");
  dims.push_back(out.size(out.rank() - 1));
  BATON_CHECK(out.shape() == Shape(dims), op, ": argument 'out' has shape ", out.shape().str(), ", expected ",
              Shape(dims).str(), " (the indices' shape and the classes)");
  const int64_t rows = indices.numel(), classes = dims.back();
  auto run = [&]<typename I>() {
    check_indices(op, indices.data<I>(), rows, classes);
    dispatch_floating(op, out.dtype(),
                      [&]<typename T>() { cpu::one_hot(indices.data<I>(), rows, classes, out.data<T>()); });
  };
  if (indices.dtype() == DType::i32) {
    run.template operator()<int32_t>();
  } else {
    run.template operator()<int64_t>();
  }
}

}  // namespace baton::kernels
