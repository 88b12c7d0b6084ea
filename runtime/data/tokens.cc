// The token-sequence dataset and its spec grammar.
#include "runtime/data/tokens.h"

#include "runtime/core/error.h"
#include "runtime/core/philox.h"
#include "runtime/data/spec_parts.h"

namespace baton::data {
namespace {

constexpr const char* kTokenGrammar = "tokens[:VOCAB[:LENGTH[:SAMPLES]]] (e.g. tokens:16:8:4096)";

}  // namespace

TokenOptions parse_token_spec(const std::string& spec) {
  const std::vector<std::string> parts = spec_parts(spec, "tokens", 4, kTokenGrammar);
  TokenOptions options;
  if (parts.size() > 1) options.vocabulary = positive_integer(parts[1], spec, "VOCAB", kTokenGrammar);
  if (parts.size() > 2) options.length = positive_integer(parts[2], spec, "LENGTH", kTokenGrammar);
  if (parts.size() > 3) options.samples = positive_integer(parts[3], spec, "SAMPLES", kTokenGrammar);
  return options;
}

TokenDataset::TokenDataset(TokenOptions options, Split split, uint64_t seed)
    : GeneratedDataset(std::move(options),
                       SampleStreams(split, seed, RandomPurpose::tokens_train, RandomPurpose::tokens_test)) {
  BATON_CHECK(options_.vocabulary >= 2 && options_.vocabulary <= int64_t{UINT32_MAX},
              "token dataset: the vocabulary must be in 2 .. ", UINT32_MAX, ", not ", options_.vocabulary);
  BATON_CHECK(options_.length > 0, "token dataset: the length must be positive, not ", options_.length);
  BATON_CHECK(options_.samples > 0, "token dataset: samples must be positive, not ", options_.samples);
}

SampleLayout TokenDataset::layout() const {
  return {.inputs = {{kTokensInput, DType::i64, Shape{options_.length}}},
          .targets = {"targets", DType::i64, Shape{options_.length}}};
}

void TokenDataset::read_fields(int64_t index, const std::vector<void*>& fields) const {
  check_index(index);
  BATON_CHECK(fields.size() == 2, name(), ": read_fields takes 2 fields (tokens, targets), got ", fields.size());
  auto* tokens = static_cast<int64_t*>(fields[0]);
  auto* targets = static_cast<int64_t*>(fields[1]);
  const uint64_t stream = streams_.of(index);
  int64_t token = scale_below(philox::block_at(stream, 0).v[0], static_cast<uint32_t>(options_.vocabulary));
  for (int64_t t = 0; t < options_.length; ++t) {
    tokens[t] = token;
    token = next_token(token);
    targets[t] = token;
  }
}

std::string TokenDataset::name() const {
  return "tokens:" + std::to_string(options_.vocabulary) + ":" + std::to_string(options_.length) + ":" +
         std::to_string(options_.samples) + streams_.name_suffix();
}

}  // namespace baton::data
