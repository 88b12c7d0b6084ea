// BatchDecoder: the geometry and the decoding of a DataLoader's batches: how many an epoch has,
// which rows of a batch this shard yields, the tensors a batch is made of, and reading those
// samples into host memory (images augmented and normalised; other fields as the dataset writes
// them). The loader's workers run it; it knows nothing of threads, slots or devices.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/tensor.h"
#include "runtime/data/batch.h"
#include "runtime/data/dataset.h"
#include "runtime/data/loader.h"
#include "runtime/data/sample_transform.h"

namespace baton::data {

// The rows of one batch this loader yields: positions [first, first + count) of the epoch's order.
struct ShardRows {
  int64_t first = 0;
  int64_t count = 0;
};

class BatchDecoder {
 public:
  // Checks batch_size, the shard and shuffling against the dataset, and the transform's options
  // against its images (one error each). `dataset` must outlive the decoder.
  BatchDecoder(const Dataset& dataset, const LoaderOptions& options);

  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  // The host tensors of `n` samples, one per layout input and then the targets ([n, ...shape] of
  // the field's dtype), each made by `make(shape, dtype)`.
  std::vector<Tensor> make_fields(int64_t n, const std::function<Tensor(const Shape&, DType)>& make) const;
  // This shard's rows of batch `batch`: the global batch [start, start + rows), cut as Tensor::split cuts.
  ShardRows rows(int64_t batch) const;
  // Decodes `rows` of `epoch` (`order`: the epoch's sample order, nullptr for dataset order) into
  // `fields` (make_fields(rows.count)), stopping early once `stop` is set. A sample with a label
  // outside the dataset's classes is an error.
  void decode(int64_t epoch, ShardRows rows, const std::vector<int64_t>* order, const std::vector<Tensor>& fields,
              const std::atomic<bool>& stop) const;
  // The batch of decoded `fields`: the inputs named as the dataset's layout names them, then the targets.
  Batch to_batch(const std::vector<Tensor>& fields) const;

 private:
  void decode_images(int64_t epoch, ShardRows rows, const std::vector<int64_t>* order,
                     const std::vector<Tensor>& fields, const std::atomic<bool>& stop) const;

  const Dataset& dataset_;
  const int64_t batch_size_;
  const int shard_, shards_;
  const uint64_t seed_;
  const SampleLayout layout_;
  const std::optional<SampleTransform> transform_;  // image datasets
  const int64_t batches_per_epoch_;
};

}  // namespace baton::data
