// A contiguous shard of a dataset (see dataset_shard.h).
#include "runtime/data/dataset_shard.h"

#include "runtime/core/error.h"

namespace baton::data {

DatasetShard::DatasetShard(const Dataset& whole, int shard, int shards)
    : whole_(whole),
      shard_(shard),
      shards_(shards),
      begin_(shards > 0 ? whole.size() * shard / shards : 0),
      end_(shards > 0 ? whole.size() * (shard + 1) / shards : 0) {
  BATON_CHECK(shards >= 1 && shard >= 0 && shard < shards, "dataset shard ", shard, " of ", shards,
              " (expected 0 <= shard < shards)");
  if (whole.has_images()) set_normalization(whole.normalization());  // every shard normalised as the whole
}

void DatasetShard::read(int64_t index, uint8_t* pixels, int64_t& label) const {
  check_index(index);
  whole_.read(begin_ + index, pixels, label);
}

void DatasetShard::read_fields(int64_t index, const std::vector<void*>& fields) const {
  check_index(index);
  whole_.read_fields(begin_ + index, fields);
}

std::string DatasetShard::name() const {
  return whole_.name() + " shard " + std::to_string(shard_) + " of " + std::to_string(shards_);
}

}  // namespace baton::data
