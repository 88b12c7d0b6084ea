// token-mlp, baton's toy sequence model: token ids "tokens" [batch, T] (i64), one-hot over the
// vocabulary V (options.num_classes) in options.dtype, hidden.0 (Linear V→64), hidden.1 (ReLU),
// head (Linear 64→V) applied at every position: logits [batch, T, V]. With a loss, "labels"
// [batch, T] (i64) and the cross-entropy over V at every position, averaged over all positions.
#include "models/model_builders.h"
#include "models/model_parts.h"

namespace baton::models {

Graph build_token_mlp(const ModelOptions& o) {
  constexpr int64_t kHidden = 64;
  layers::GraphBuilder g;
  const ValueId tokens = g.input("tokens", Shape{o.batch_size, o.sequence_length}, DType::i64);
  if (o.with_loss) g.input("labels", Shape{o.batch_size, o.sequence_length}, DType::i64);
  const ValueId one_hot = g.one_hot(tokens, o.num_classes, o.dtype, "one_hot");
  const ValueId hidden = g.relu(g.linear(one_hot, kHidden, "hidden.0"), "hidden.1");
  return finish_classifier(g, g.linear(hidden, o.num_classes, "head"), o);
}

}  // namespace baton::models
