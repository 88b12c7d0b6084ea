// Helpers shared by the layers of this folder: input-count checks and shape / dtype lists for shape
// inference, and small host-side records a layer saves for backward (a dropout seed, concat channel
// counts, the shape before a flatten).
//
// Records are i64 tensors on cpu:0 whatever the layer's device: written by forward on the host and
// read by backward on the host, with no device transfer and no stream synchronisation. They cost a
// few bytes of host memory per call and are not counted in LayerCost::saved_bytes (device memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/tensor.h"

namespace baton::layers {

// Throws a baton::Error naming the layer unless there are exactly `expected` input shapes.
void check_input_count(std::string_view layer, std::span<const Shape> inputs, size_t expected);
// The same for layers that take `minimum` or more inputs (Add, Concat).
void check_min_input_count(std::string_view layer, std::span<const Shape> inputs, size_t minimum);

// The shapes and dtypes of tensors (to run shape and dtype inference on a forward pass's inputs).
std::vector<Shape> shapes_of(std::span<const Tensor> tensors);
std::vector<DType> dtypes_of(std::span<const Tensor> tensors);

// [..., K] (rank >= 2) as [rows, K], rows the product of the leading dimensions: a rank-2 tensor
// itself, a higher one a reshape view.
Tensor as_rows(const Tensor& t);
// Every element in one dimension: a rank-1 tensor itself, any other a reshape view.
Tensor as_flat(const Tensor& t);

// A cpu:0 i64 tensor [values.size()] holding `values`.
Tensor host_record(std::span<const int64_t> values);
// The values of a record made by host_record.
std::vector<int64_t> read_host_record(const Tensor& record);

}  // namespace baton::layers
