// BatchDecoder: the geometry and the decoding of a DataLoader's batches: how many an epoch has,
// which rows of a batch this shard yields, and reading, augmenting and normalising those samples
// into host memory. The loader's workers run it; it knows nothing of threads, slots or devices.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime/core/shape.h"
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
  // The shape of `n` images: [n, C, H, W].
  Shape images_shape(int64_t n) const;
  // This shard's rows of batch `batch`: the global batch [start, start + rows), cut as Tensor::split cuts.
  ShardRows rows(int64_t batch) const;
  // Decodes `rows` of `epoch` (`order`: the epoch's sample order, nullptr for dataset order) into
  // `images` (rows.count images of C*H*W floats) and `labels`, stopping early once `stop` is set.
  // A sample with a label outside the dataset's classes is an error.
  void decode(int64_t epoch, ShardRows rows, const std::vector<int64_t>* order, float* images, int64_t* labels,
              const std::atomic<bool>& stop) const;

 private:
  const Dataset& dataset_;
  const int64_t batch_size_;
  const int shard_, shards_;
  const uint64_t seed_;
  const Shape image_shape_;
  const SampleTransform transform_;
  const int64_t batches_per_epoch_;
};

}  // namespace baton::data
