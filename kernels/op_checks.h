// Argument checks shared by every op: defined tensors, same device as the context, shapes, dtypes,
// overlap between outputs and inputs. Each failure is a baton::Error naming the op, the argument and what was expected.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

struct NamedTensor {
  std::string_view name;
  const Tensor& tensor;
};

// Every tensor is defined, lives on the context's device and is in row-major order: an op that has
// not been taught channels-last tensors (runtime/core/memory_format.h) refuses them by this check.
void check_on_context(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors);
// The same, for the ops that read either memory format (they check the formats themselves).
void check_on_context_any_format(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors);
// Every tensor places its elements as the first one does (same format, or an equivalent one).
void check_same_placement(std::string_view op, std::initializer_list<NamedTensor> tensors);
// Every tensor has the first one's shape.
void check_same_shape(std::string_view op, std::initializer_list<NamedTensor> tensors);
// Every tensor has the first one's dtype.
void check_same_dtype(std::string_view op, std::initializer_list<NamedTensor> tensors);
// The tensor's dtype is one of `allowed`.
void check_dtype_in(std::string_view op, const NamedTensor& t, std::initializer_list<DType> allowed);
// The tensor has exactly `rank` dimensions.
void check_rank(std::string_view op, const NamedTensor& t, int rank);
// The tensor's dtype is a floating one: f32, f64, f16 or bf16.
void check_floating(std::string_view op, const NamedTensor& t);

// "[a, b]": a stride, padding, dilation or window pair in an error message.
std::string pair_text(const std::array<int64_t, 2>& pair);

// Which overlap between an output and an input an op accepts.
enum class Overlap {
  exact_or_none,  // the output may be exactly an input (in place) or share none of its bytes
  none,           // the output shares no byte with any input
};

// `out` against each input: a failure names both arguments. Exactly an input means the same bytes
// under the same dtype.
void check_overlap(std::string_view op, const NamedTensor& out, std::initializer_list<NamedTensor> inputs,
                   Overlap allowed);

// The checks of the pointwise ops (elementwise, activation, dropout): every tensor is on the
// context's device, has the first input's shape, placement (either memory format, the same for all:
// the ops map element i to element i) and one floating dtype, and `out` is exactly an input (in
// place) or disjoint from every input.
void check_pointwise(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> inputs,
                     const NamedTensor& out);

}  // namespace baton::kernels
