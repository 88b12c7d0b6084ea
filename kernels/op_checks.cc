// Argument checks shared by the ops (kernels/op_checks.h).
#include "kernels/op_checks.h"

#include <string>

namespace baton::kernels {

std::string pair_text(const std::array<int64_t, 2>& pair) { return detail::concat("[", pair[0], ", ", pair[1], "]"); }

void check_on_context_any_format(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors) {
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.defined(), op, ": argument '", t.name, "' is an undefined tensor");
    BATON_CHECK(t.tensor.device() == ctx.device(), op, ": argument '", t.name, "' is on ", t.tensor.device().str(),
                " but the op runs on ", ctx.device().str());
  }
}

void check_on_context(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors) {
  check_on_context_any_format(op, ctx, tensors);
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(same_placement(t.tensor.shape(), t.tensor.format(), MemoryFormat::contiguous), op, ": argument '",
                t.name, "' is a ", memory_format_name(t.tensor.format()), " tensor of shape ", t.tensor.shape().str(),
                ", which this op does not read (convert it with kernels::to_memory_format)");
  }
}

void check_same_placement(std::string_view op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor& first = *tensors.begin();
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(same_placement(t.tensor.shape(), t.tensor.format(), first.tensor.format()), op, ": argument '", t.name,
                "' is ", memory_format_name(t.tensor.format()), ", '", first.name, "' ",
                memory_format_name(first.tensor.format()), " (the same format is needed)");
  }
}

void check_same_shape(std::string_view op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor& first = *tensors.begin();
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.shape() == first.tensor.shape(), op, ": argument '", t.name, "' has shape ",
                t.tensor.shape().str(), ", expected ", first.tensor.shape().str(), " (the shape of '", first.name,
                "')");
  }
}

void check_same_dtype(std::string_view op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor& first = *tensors.begin();
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.dtype() == first.tensor.dtype(), op, ": argument '", t.name, "' has dtype ",
                dtype_name(t.tensor.dtype()), ", expected ", dtype_name(first.tensor.dtype()), " (the dtype of '",
                first.name, "')");
  }
}

void check_dtype_in(std::string_view op, const NamedTensor& t, std::initializer_list<DType> allowed) {
  std::string names;
  for (DType d : allowed) {
    if (d == t.tensor.dtype()) return;
    names += names.empty() ? "" : ", ";
    names += dtype_name(d);
  }
  BATON_FAIL(op, ": argument '", t.name, "' has dtype ", dtype_name(t.tensor.dtype()), ", expected one of ", names);
}

void check_rank(std::string_view op, const NamedTensor& t, int rank) {
  BATON_CHECK(t.tensor.rank() == rank, op, ": argument '", t.name, "' has shape ", t.tensor.shape().str(),
              ", expected ", rank, " dimensions");
}

void check_floating(std::string_view op, const NamedTensor& t) {
  check_dtype_in(op, t, {DType::f32, DType::f64, DType::f16, DType::bf16});
}

void check_overlap(std::string_view op, const NamedTensor& out, std::initializer_list<NamedTensor> inputs,
                   Overlap allowed) {
  const Tensor& o = out.tensor;
  for (const NamedTensor& in : inputs) {
    const Tensor& t = in.tensor;
    if (t.storage() != o.storage() || t.nbytes() == 0 || o.nbytes() == 0) continue;
    const bool disjoint =
        t.offset_bytes() + t.nbytes() <= o.offset_bytes() || o.offset_bytes() + o.nbytes() <= t.offset_bytes();
    if (disjoint) continue;
    const bool exact = t.offset_bytes() == o.offset_bytes() && t.nbytes() == o.nbytes() && t.dtype() == o.dtype();
    BATON_CHECK(allowed == Overlap::exact_or_none && exact, op, ": argument '", out.name, "' overlaps argument '",
                in.name, "'",
                allowed == Overlap::none ? " (the output must not share memory with an input)"
                                         : " in part (an output may only be exactly an input, for in-place use)");
  }
}

void check_pointwise(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> inputs,
                     const NamedTensor& out) {
  const NamedTensor& first = *inputs.begin();
  check_on_context_any_format(op, ctx, inputs);
  check_on_context_any_format(op, ctx, {out});
  for (const NamedTensor& t : inputs) check_same_shape(op, {first, t});
  check_same_shape(op, {first, out});
  for (const NamedTensor& t : inputs) check_same_placement(op, {first, t});
  check_same_placement(op, {first, out});
  check_floating(op, first);
  for (const NamedTensor& t : inputs) check_same_dtype(op, {first, t});
  check_same_dtype(op, {first, out});
  check_overlap(op, out, inputs, Overlap::exact_or_none);
}

}  // namespace baton::kernels
