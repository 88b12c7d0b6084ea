// Argument checks of the pointwise op families (activation, dropout) and of ops that copy between
// tensors (concat): same shape and floating dtype, and outputs that overlap an input only where the
// op allows it. Failures are baton::Errors naming the op and the argument.
#pragma once

#include <initializer_list>
#include <string_view>

#include "kernels/op_checks.h"

namespace baton::kernels {

// Which overlap between an output and an input an op accepts.
enum class Overlap {
  exact_or_none,  // the output may be exactly an input (in place) or share none of its bytes
  none,           // the output shares no byte with any input
};

// `out` against each input: a failure names both arguments.
void check_overlap(std::string_view op, const NamedTensor& out, std::initializer_list<NamedTensor> inputs,
                   Overlap allowed);

// Every tensor is on the context's device, has the first input's shape and one floating dtype, and
// `out` is exactly an input or disjoint from every input.
void check_pointwise(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> inputs,
                     const NamedTensor& out);

}  // namespace baton::kernels
