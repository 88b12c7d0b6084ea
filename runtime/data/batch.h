// Batch: what a data loader yields and an engine trains on — named input tensors of any dtype
// (image datasets: "images" [n, C, H, W] f32) and one target tensor of any dtype (classes [n] or
// per-position targets [n, T], i64), all with the batch's rows in dimension 0 — and split_rows,
// the one place that cuts tensors into row ranges (micro-batches, replicas, pipeline groups).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"

namespace baton::data {

// The name of an image dataset's input tensor.
inline constexpr std::string_view kImagesInput = "images";

struct BatchInput {
  std::string name;
  Tensor tensor;
};

struct Batch {
  std::vector<BatchInput> inputs;  // in the dataset's order; names unique
  Tensor targets;                  // [n, ...]: what the loss compares the prediction with (or undefined)
  int64_t epoch = 0;
  int64_t index = 0;  // batch index within the epoch

  // Whether an input is named `name`.
  bool has_input(std::string_view name) const;
  // The input named `name`; a missing one is an error naming it and the batch's inputs.
  const Tensor& input(std::string_view name) const;
  // The batch's rows (samples): dimension 0 of its first input.
  int64_t rows() const;
  // `parts` batches of consecutive rows, views of every tensor cut as split_rows cuts them.
  std::vector<Batch> split(int64_t parts) const;
  // The same batch with every defined tensor replaced by `f(tensor)` (e.g. copied to another device).
  Batch map(const std::function<Tensor(const Tensor&)>& f) const;
  // "images [8, 3, 32, 32] f32, targets [8] i64", for messages.
  std::string describe() const;
};

// An image dataset's batch: the input "images" [n, C, H, W] and the labels [n] as the targets.
Batch image_batch(Tensor images, Tensor labels);

// Cuts every tensor of `tensors` along dimension 0 into `parts` views as Tensor::split does (sizes
// differ by at most one, the first ones larger): result[part][tensor]. Every tensor must be defined
// with the same rows in dimension 0, and 1 <= parts <= rows; errors begin with `what` and name the
// tensor by its position.
std::vector<std::vector<Tensor>> split_rows(const std::vector<Tensor>& tensors, int64_t parts, std::string_view what);

}  // namespace baton::data
