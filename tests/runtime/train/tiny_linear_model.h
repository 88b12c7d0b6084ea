// A linear classifier of 3x4x4 inputs into 4 classes (loss first, logits second): the smallest model
// the training loop's tests run.
#pragma once

#include <cstdint>

#include "layers/graph_builder.h"

namespace baton::testing {

inline Graph tiny_linear_model(int64_t batch) {
  layers::GraphBuilder g;
  const ValueId x = g.flatten(g.input("x", Shape{batch, 3, 4, 4}), "flatten");
  const ValueId labels = g.input("labels", Shape{batch}, DType::i64);
  const ValueId logits = g.linear(x, 4, "fc");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

}  // namespace baton::testing
