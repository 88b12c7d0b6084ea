// Batches of any kind: the tokens dataset (its spec, its determinism, targets that are the next
// tokens), the loader's batches of it (named i64 inputs and per-position targets, resumed by seek),
// and Batch's split, map and input look-up.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/core/error.h"
#include "runtime/data/batch.h"
#include "runtime/data/dataset.h"
#include "runtime/data/loader.h"
#include "runtime/data/tokens.h"
#include "tests/support/test_support.h"

namespace baton::data {
namespace {

std::vector<int64_t> read_tokens(const Dataset& d, int64_t index, std::vector<int64_t>& targets) {
  const int64_t length = d.layout().targets.shape[0];
  std::vector<int64_t> tokens(static_cast<size_t>(length));
  targets.assign(static_cast<size_t>(length), -1);
  d.read_fields(index, {tokens.data(), targets.data()});
  return tokens;
}

TEST(TokenDataset, SamplesAreSeededSequencesWhoseTargetsAreTheNextTokens) {
  const auto train = open_dataset("tokens:16:6:40", Split::train, 9);
  const auto again = open_dataset("tokens:16:6:40", Split::train, 9);
  const auto test = open_dataset("tokens:16:6:40", Split::test, 9);
  EXPECT_FALSE(train->has_images());
  EXPECT_EQ(train->size(), 40);
  EXPECT_EQ(train->num_classes(), 16);
  EXPECT_EQ(layout_text(train->layout()), "tokens [6] i64, targets [6] i64");
  const auto& tokens_set = dynamic_cast<const TokenDataset&>(*train);
  bool differs = false;
  for (int64_t i = 0; i < 40; ++i) {
    std::vector<int64_t> targets, same_targets, test_targets;
    const std::vector<int64_t> tokens = read_tokens(*train, i, targets);
    EXPECT_EQ(read_tokens(*again, i, same_targets), tokens);
    EXPECT_EQ(same_targets, targets);
    differs = differs || read_tokens(*test, i, test_targets) != tokens;
    for (size_t t = 0; t < tokens.size(); ++t) {
      EXPECT_GE(tokens[t], 0);
      EXPECT_LT(tokens[t], 16);
      EXPECT_EQ(targets[t], tokens_set.next_token(tokens[t]));
      if (t + 1 < tokens.size()) {
        EXPECT_EQ(tokens[t + 1], targets[t]);
      }
    }
  }
  EXPECT_TRUE(differs) << "the test split draws its own starts";
  EXPECT_ERROR_MENTIONS("holds no images", train->image_shape());
  EXPECT_ERROR_MENTIONS("dataset spec 'tokens:16:x': LENGTH 'x' is not a positive integer",
                        open_dataset("tokens:16:x", Split::train, 0));
  EXPECT_ERROR_MENTIONS("token dataset: the vocabulary must be in 2 ..", open_dataset("tokens:1", Split::train, 0));
}

TEST(TokenDataset, TheLoaderYieldsNamedTokensAndPerPositionTargetsAndResumes) {
  const auto d = open_dataset("tokens:8:5:24", Split::train, 1);
  LoaderOptions options;
  options.batch_size = 6;
  options.seed = 4;
  options.workers = 2;
  const Stream stream = Stream::create(Device::cpu());
  DataLoader loader(*d, options, Device::cpu());
  std::vector<std::vector<int64_t>> seen;
  while (auto batch = loader.next(stream)) {
    ASSERT_EQ(batch->inputs.size(), 1u);
    EXPECT_EQ(batch->inputs[0].name, "tokens");
    EXPECT_EQ(batch->input("tokens").shape(), Shape({6, 5}));
    EXPECT_EQ(batch->input("tokens").dtype(), DType::i64);
    EXPECT_EQ(batch->targets.shape(), Shape({6, 5}));
    EXPECT_EQ(batch->rows(), 6);
    const std::vector<int64_t> tokens = batch->input("tokens").to_vector<int64_t>(stream);
    const std::vector<int64_t> targets = batch->targets.to_vector<int64_t>(stream);
    for (size_t k = 0; k + 1 < tokens.size(); ++k) {
      if ((k + 1) % 5 != 0) {
        EXPECT_EQ(tokens[k + 1], targets[k]);
      }
    }
    seen.push_back(tokens);
  }
  ASSERT_EQ(seen.size(), 4u);
  loader.seek({.epoch = 0, .next_batch = 2});
  EXPECT_EQ(loader.next(stream)->input("tokens").to_vector<int64_t>(stream), seen[2]);
}

TEST(Batch, SplitCutsEveryTensorAlongRowsAndMissingInputsAreNamed) {
  const Stream s = Stream::create(Device::cpu());
  Batch b{.inputs = {{"tokens", Tensor::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{5, 2}, s)}},
          .targets = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5}, Shape{5}, s),
          .epoch = 3,
          .index = 7};
  const std::vector<Batch> parts = b.split(2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].input("tokens").to_vector<int64_t>(s), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(parts[1].input("tokens").to_vector<int64_t>(s), (std::vector<int64_t>{6, 7, 8, 9}));
  EXPECT_EQ(parts[0].targets.to_vector<int64_t>(s), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(parts[1].targets.to_vector<int64_t>(s), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(parts[1].epoch, 3);
  EXPECT_EQ(parts[1].index, 7);
  int mapped = 0;
  const Batch same = b.map([&](const Tensor& t) {
    ++mapped;
    return t;
  });
  EXPECT_EQ(mapped, 2);
  EXPECT_EQ(same.input("tokens").shape(), Shape({5, 2}));
  EXPECT_ERROR_MENTIONS("the batch has no input \"images\"; its inputs: \"tokens\"", b.input("images"));
  EXPECT_ERROR_MENTIONS("batch split: a batch of 5 rows cannot be split into 6 parts", b.split(6));
  b.targets = Tensor::from_vector<int64_t>({1, 2}, Shape{2}, s);
  EXPECT_ERROR_MENTIONS("batch split: tensor 1 ([2] i64) must have the batch's 5 rows", b.split(2));
}

}  // namespace
}  // namespace baton::data
