// "tokens": a generated dataset of token sequences for sequence models. Sample i is the sequence
// x_0 .. x_T of a fixed rule, x_{t+1} = (5 x_t + 3) mod VOCAB, from a start x_0 drawn with Philox
// from (seed, split, i); its input "tokens" is x_0 .. x_{T-1} and its per-position targets are the
// next tokens x_1 .. x_T (both i64 [T]), so a model that sees a token can learn its target.
// Spec: tokens[:VOCAB[:LENGTH[:SAMPLES]]], default tokens:16:8:4096.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/data/generated_dataset.h"

namespace baton::data {

// The name of a token dataset's input tensor.
inline constexpr const char* kTokensInput = "tokens";

struct TokenOptions {
  int64_t vocabulary = 16;  // token ids in [0, vocabulary)
  int64_t length = 8;       // T: tokens per sample
  int64_t samples = 4096;   // in each split
};

// Parses "tokens", "tokens:16", "tokens:16:8", "tokens:16:8:4096". Errors name the spec, the part
// and what was expected.
TokenOptions parse_token_spec(const std::string& spec);

class TokenDataset : public GeneratedDataset<TokenOptions> {
 public:
  TokenDataset(TokenOptions options, Split split, uint64_t seed);

  int64_t num_classes() const override { return options_.vocabulary; }
  std::string name() const override;
  bool has_images() const override { return false; }
  // {"tokens" i64 [T]}, targets i64 [T].
  SampleLayout layout() const override;
  void read_fields(int64_t index, const std::vector<void*>& fields) const override;

  // The token that follows `token` under the dataset's rule.
  int64_t next_token(int64_t token) const { return (5 * token + 3) % options_.vocabulary; }
};

}  // namespace baton::data
