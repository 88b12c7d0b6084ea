// dataset_fingerprint: size, classes, layout, and the first samples read and hashed.
#include "runtime/data/dataset_fingerprint.h"

#include <algorithm>
#include <cstdio>

namespace baton::data {
namespace {

// FNV-1a, 64 bits.
class Fnv1a {
 public:
  void add(const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) hash_ = (hash_ ^ p[i]) * 0x100000001b3ULL;
  }
  std::string text() const {
    char out[32];
    std::snprintf(out, sizeof(out), "fnv1a 0x%016llx", static_cast<unsigned long long>(hash_));
    return out;
  }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

void hash_image_sample(const Dataset& dataset, int64_t index, Fnv1a& hash) {
  std::vector<uint8_t> pixels(static_cast<size_t>(dataset.image_bytes()));
  int64_t label = 0;
  dataset.read(index, pixels.data(), label);
  hash.add(pixels.data(), pixels.size());
  hash.add(&label, sizeof(label));
}

void hash_field_sample(const Dataset& dataset, const SampleLayout& layout, int64_t index, Fnv1a& hash) {
  std::vector<SampleField> fields = layout.inputs;
  fields.push_back(layout.targets);
  std::vector<std::vector<unsigned char>> rows;
  std::vector<void*> pointers;
  rows.reserve(fields.size());
  for (const SampleField& field : fields) {
    rows.emplace_back(static_cast<size_t>(field.shape.numel()) * dtype_size(field.dtype));
    pointers.push_back(rows.back().data());
  }
  dataset.read_fields(index, pointers);
  for (const std::vector<unsigned char>& row : rows) hash.add(row.data(), row.size());
}

}  // namespace

std::vector<std::string> dataset_fingerprint(const Dataset& dataset, const std::string& label) {
  const SampleLayout layout = dataset.layout();
  Fnv1a hash;
  const int64_t hashed = std::min(dataset.size(), kFingerprintSamples);
  for (int64_t i = 0; i < hashed; ++i) {
    if (dataset.has_images()) {
      hash_image_sample(dataset, i, hash);
    } else {
      hash_field_sample(dataset, layout, i, hash);
    }
  }
  return {label + ".samples = " + std::to_string(dataset.size()),
          label + ".classes = " + std::to_string(dataset.num_classes()), label + ".layout = " + layout_text(layout),
          label + ".first_samples = " + hash.text() + " (of " + std::to_string(hashed) + " samples)"};
}

}  // namespace baton::data
