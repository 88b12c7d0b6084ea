// A small image classifier for the trainer tests: x [batch, 3, side, side] -> flatten -> `hidden` x
// (linear 16, relu; tanh for the last with `tanh_last`) -> linear 4 -> cross entropy, the logits as
// the second output (the prediction).
#pragma once

#include <string>

#include "layers/builtin_layers.h"
#include "layers/graph_builder.h"

namespace baton::parallel::testing {

inline Graph image_mlp(int64_t batch, int64_t side, int hidden, bool tanh_last) {
  layers::GraphBuilder g(layers::builtin_layers());
  ValueId x = g.flatten(g.input("x", {batch, 3, side, side}), "flatten");
  const ValueId labels = g.input("labels", {batch}, DType::i64);
  for (int i = 1; i <= hidden; ++i) {
    const std::string n = std::to_string(i);
    x = g.linear(x, 16, "fc" + n);
    x = tanh_last && i == hidden ? g.tanh(x, "act" + n) : g.relu(x, "act" + n);
  }
  const ValueId logits = g.linear(x, 4, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

}  // namespace baton::parallel::testing
