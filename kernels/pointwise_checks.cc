// Argument checks of the pointwise and copying op families.
#include "kernels/pointwise_checks.h"

namespace baton::kernels {

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
  check_on_context(op, ctx, inputs);
  check_on_context(op, ctx, {out});
  for (const NamedTensor& t : inputs) check_same_shape(op, {first, t});
  check_same_shape(op, {first, out});
  check_dtype_in(op, first, {DType::f32, DType::f64, DType::f16, DType::bf16});
  for (const NamedTensor& t : inputs) check_same_dtype(op, {first, t});
  check_same_dtype(op, {first, out});
  check_overlap(op, out, inputs, Overlap::exact_or_none);
}

}  // namespace baton::kernels
