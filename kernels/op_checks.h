// Argument checks shared by every op: defined tensors, same device as the context, shapes, dtypes.
// Each failure is a baton::Error naming the op, the argument and what was expected.
#pragma once

#include <initializer_list>
#include <string_view>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton::kernels {

struct NamedTensor {
  std::string_view name;
  const Tensor& tensor;
};

// Every tensor is defined and lives on the context's device.
void check_on_context(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors);
// Every tensor has the first one's shape.
void check_same_shape(std::string_view op, std::initializer_list<NamedTensor> tensors);
// Every tensor has the first one's dtype.
void check_same_dtype(std::string_view op, std::initializer_list<NamedTensor> tensors);
// The tensor's dtype is one of `allowed`.
void check_dtype_in(std::string_view op, const NamedTensor& t, std::initializer_list<DType> allowed);
// The tensor has exactly `rank` dimensions.
void check_rank(std::string_view op, const NamedTensor& t, int rank);

}  // namespace baton::kernels
