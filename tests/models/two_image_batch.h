// The executor inputs of a batch of two CIFAR-shaped images, for the tests that train a model a step.
#pragma once

#include <vector>

#include "runtime/graph/executor.h"
#include "tests/support/test_support.h"

namespace baton {

// Random 2x3x32x32 images in `dtype` (seed 5) as input "x" and the labels {3, 8} as every other
// input, in the order of ex.input_values().
inline std::vector<Tensor> two_image_batch(const Executor& ex, const Graph& g, DType dtype, const Stream& stream) {
  const Tensor x = testing::random_tensor(Shape{2, 3, 32, 32}, dtype, stream, 5);
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{3, 8}, Shape{2}, stream);
  std::vector<Tensor> inputs;
  for (ValueId v : ex.input_values()) inputs.push_back(g.value(v).name == "x" ? x : labels);
  return inputs;
}

}  // namespace baton
