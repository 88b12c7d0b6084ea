// DatasetShard: shard k of n of a dataset — its samples [k size / n, (k + 1) size / n) — so that
// ranks evaluating their shards together see every sample exactly once. Its normalisation is the
// whole dataset's.
#pragma once

#include "runtime/data/dataset.h"

namespace baton::data {

class DatasetShard final : public Dataset {
 public:
  // `whole` must outlive the shard; 0 <= shard < shards.
  DatasetShard(const Dataset& whole, int shard, int shards);

  int64_t size() const override { return end_ - begin_; }
  Shape image_shape() const override { return whole_.image_shape(); }
  int64_t num_classes() const override { return whole_.num_classes(); }
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override;
  bool has_images() const override { return whole_.has_images(); }
  SampleLayout layout() const override { return whole_.layout(); }
  void read_fields(int64_t index, const std::vector<void*>& fields) const override;
  std::string name() const override;

 private:
  const Dataset& whole_;
  int shard_, shards_;
  int64_t begin_, end_;
};

}  // namespace baton::data
