// BatchDecoder: batches per epoch, a shard's rows of a batch, and the samples decoded into host memory.
#include "runtime/data/batch_decoder.h"

#include <algorithm>
#include <utility>

#include "runtime/core/error.h"

namespace baton::data {
namespace {

int64_t checked_batches_per_epoch(const Dataset& dataset, const LoaderOptions& options) {
  BATON_CHECK(options.batch_size > 0, "data loader: batch_size must be positive, not ", options.batch_size);
  BATON_CHECK(options.shards >= 1 && options.shard >= 0 && options.shard < options.shards, "data loader: shard ",
              options.shard, " of ", options.shards, " (expected 0 <= shard < shards)");
  const int64_t samples = dataset.size();
  BATON_CHECK(!options.shuffle || samples <= int64_t{UINT32_MAX}, "data loader: ", dataset.name(), " has ", samples,
              " samples; shuffling supports at most ", UINT32_MAX);
  const int64_t batches =
      options.drop_last ? samples / options.batch_size : (samples + options.batch_size - 1) / options.batch_size;
  BATON_CHECK(batches > 0, "data loader: ", dataset.name(), " has ", samples, " samples, no full batch of ",
              options.batch_size, options.drop_last ? " (drop_last is set)" : "");
  return batches;
}

}  // namespace

BatchDecoder::BatchDecoder(const Dataset& dataset, const LoaderOptions& options)
    : dataset_(dataset),
      batch_size_(options.batch_size),
      shard_(options.shard),
      shards_(options.shards),
      seed_(options.seed),
      image_shape_(dataset.image_shape()),
      transform_(image_shape_, options.augmentation, options.normalization),
      batches_per_epoch_(checked_batches_per_epoch(dataset, options)) {}

Shape BatchDecoder::images_shape(int64_t n) const {
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), image_shape_.dims().begin(), image_shape_.dims().end());
  return Shape(std::move(dims));
}

ShardRows BatchDecoder::rows(int64_t batch) const {
  const int64_t start = batch * batch_size_;
  const int64_t rows = std::min(batch_size_, dataset_.size() - start);
  const int64_t base = rows / shards_, extra = rows % shards_, k = shard_;
  return {.first = start + k * base + std::min(k, extra), .count = base + (k < extra ? 1 : 0)};
}

void BatchDecoder::decode(int64_t epoch, ShardRows rows, const std::vector<int64_t>* order, float* images,
                          int64_t* labels, const std::atomic<bool>& stop) const {
  const int64_t image_elements = image_shape_.numel();
  std::vector<uint8_t> pixels(static_cast<size_t>(image_elements));
  for (int64_t i = 0; i < rows.count && !stop.load(std::memory_order_relaxed); ++i) {
    const int64_t sample = order != nullptr ? (*order)[static_cast<size_t>(rows.first + i)] : rows.first + i;
    int64_t label = -1;
    dataset_.read(sample, pixels.data(), label);
    BATON_CHECK(label >= 0 && label < dataset_.num_classes(), dataset_.name(), ": sample ", sample, " has label ",
                label, ", expected 0 .. ", dataset_.num_classes() - 1);
    transform_.apply(pixels.data(), transform_.draw(seed_, epoch, sample), images + i * image_elements);
    labels[i] = label;
  }
}

}  // namespace baton::data
