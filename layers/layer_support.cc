// Helpers shared by the layers: input-count checks, shape and dtype lists, host-side records.
#include "layers/layer_support.h"

#include <algorithm>

#include "runtime/core/error.h"

namespace baton::layers {

void check_input_count(std::string_view layer, std::span<const Shape> inputs, size_t expected) {
  BATON_CHECK(inputs.size() == expected, layer, ": got ", inputs.size(), " input(s), expected ", expected);
}

void check_min_input_count(std::string_view layer, std::span<const Shape> inputs, size_t minimum) {
  BATON_CHECK(inputs.size() >= minimum, layer, ": got ", inputs.size(), " input(s), expected at least ", minimum);
}

std::vector<Shape> shapes_of(std::span<const Tensor> tensors) {
  std::vector<Shape> shapes;
  for (const Tensor& t : tensors) shapes.push_back(t.shape());
  return shapes;
}

std::vector<DType> dtypes_of(std::span<const Tensor> tensors) {
  std::vector<DType> dtypes;
  for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
  return dtypes;
}

Tensor as_rows(const Tensor& t) {
  BATON_CHECK(t.rank() >= 2, "as_rows: a tensor of shape ", t.shape().str(), " has no rows of features");
  if (t.rank() == 2) return t;
  return t.reshape(Shape{t.numel() / t.size(t.rank() - 1), t.size(t.rank() - 1)});
}

Tensor as_flat(const Tensor& t) { return t.rank() == 1 ? t : t.reshape(Shape{t.numel()}); }

Tensor host_record(std::span<const int64_t> values) {
  Tensor t = Tensor::empty_host(Shape{static_cast<int64_t>(values.size())}, DType::i64);
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

std::vector<int64_t> read_host_record(const Tensor& record) {
  BATON_CHECK(
      record.defined() && record.device().is_cpu() && record.dtype() == DType::i64 && record.rank() == 1,
      "a layer's saved record must be a cpu:0 i64 vector (was forward's 'saved' passed to backward unchanged?)");
  const int64_t* data = record.data<int64_t>();
  return {data, data + record.numel()};
}

}  // namespace baton::layers
