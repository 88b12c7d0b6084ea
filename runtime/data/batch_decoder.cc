// BatchDecoder: batches per epoch, a shard's rows of a batch, and the samples decoded into host memory.
#include "runtime/data/batch_decoder.h"

#include <algorithm>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/data/batch_memory.h"

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

std::optional<SampleTransform> image_transform(const Dataset& dataset, const LoaderOptions& options) {
  if (!dataset.has_images()) return std::nullopt;
  return SampleTransform(dataset.image_shape(), options.augmentation, options.normalization);
}

}  // namespace

BatchDecoder::BatchDecoder(const Dataset& dataset, const LoaderOptions& options)
    : dataset_(dataset),
      batch_size_(options.batch_size),
      shard_(options.shard),
      shards_(options.shards),
      seed_(options.seed),
      layout_(dataset.layout()),
      transform_(image_transform(dataset, options)),
      batches_per_epoch_(checked_batches_per_epoch(dataset, options)) {
  check_batch_fits_memory(dataset, options.batch_size);
  BATON_CHECK(!layout_.inputs.empty(), dataset.name(), ": a sample needs at least one input");
  if (transform_) {
    BATON_CHECK(layout_.inputs.size() == 1 && layout_.inputs[0].dtype == DType::f32 &&
                    layout_.targets.dtype == DType::i64 && layout_.targets.shape.rank() == 0,
                dataset.name(), ": an image dataset's samples are f32 images and i64 labels, not ",
                layout_text(layout_));
  }
}

std::vector<Tensor> BatchDecoder::make_fields(int64_t n, const std::function<Tensor(const Shape&, DType)>& make) const {
  auto rows_of = [n](const SampleField& field) {
    std::vector<int64_t> dims{n};
    dims.insert(dims.end(), field.shape.dims().begin(), field.shape.dims().end());
    return Shape(std::move(dims));
  };
  std::vector<Tensor> fields;
  for (const SampleField& field : layout_.inputs) fields.push_back(make(rows_of(field), field.dtype));
  fields.push_back(make(rows_of(layout_.targets), layout_.targets.dtype));
  return fields;
}

Batch BatchDecoder::to_batch(const std::vector<Tensor>& fields) const {
  Batch batch;
  for (size_t k = 0; k < layout_.inputs.size(); ++k) batch.inputs.push_back({layout_.inputs[k].name, fields[k]});
  batch.targets = fields.back();
  return batch;
}

ShardRows BatchDecoder::rows(int64_t batch) const {
  const int64_t start = batch * batch_size_;
  const int64_t rows = std::min(batch_size_, dataset_.size() - start);
  const int64_t base = rows / shards_, extra = rows % shards_, k = shard_;
  return {.first = start + k * base + std::min(k, extra), .count = base + (k < extra ? 1 : 0)};
}

void BatchDecoder::decode(int64_t epoch, ShardRows rows, const std::vector<int64_t>* order,
                          const std::vector<Tensor>& fields, const std::atomic<bool>& stop) const {
  if (transform_) return decode_images(epoch, rows, order, fields, stop);
  if (rows.count == 0) return;
  std::vector<size_t> row_bytes;
  for (const Tensor& field : fields) row_bytes.push_back(field.nbytes() / static_cast<size_t>(rows.count));
  std::vector<void*> row(fields.size());
  for (int64_t i = 0; i < rows.count && !stop.load(std::memory_order_relaxed); ++i) {
    const int64_t sample = order != nullptr ? (*order)[static_cast<size_t>(rows.first + i)] : rows.first + i;
    for (size_t k = 0; k < fields.size(); ++k) {
      row[k] = static_cast<char*>(fields[k].data_ptr()) + static_cast<size_t>(i) * row_bytes[k];
    }
    dataset_.read_fields(sample, row);
  }
}

void BatchDecoder::decode_images(int64_t epoch, ShardRows rows, const std::vector<int64_t>* order,
                                 const std::vector<Tensor>& fields, const std::atomic<bool>& stop) const {
  float* images = fields[0].data<float>();
  int64_t* labels = fields[1].data<int64_t>();
  const int64_t image_elements = layout_.inputs[0].shape.numel();
  std::vector<uint8_t> pixels(static_cast<size_t>(image_elements));
  for (int64_t i = 0; i < rows.count && !stop.load(std::memory_order_relaxed); ++i) {
    const int64_t sample = order != nullptr ? (*order)[static_cast<size_t>(rows.first + i)] : rows.first + i;
    int64_t label = -1;
    dataset_.read(sample, pixels.data(), label);
    BATON_CHECK(label >= 0 && label < dataset_.num_classes(), dataset_.name(), ": sample ", sample, " has label ",
                label, ", expected 0 .. ", dataset_.num_classes() - 1);
    transform_->apply(pixels.data(), transform_->draw(seed_, epoch, sample), images + i * image_elements);
    labels[i] = label;
  }
}

}  // namespace baton::data
