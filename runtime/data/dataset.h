// Datasets of uint8 CHW images with int64 labels, and open_dataset, which turns a spec string
// ("shapes", "synthetic:3x32x32:10", "cifar10:DIR", "cifar100:DIR") into one.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/core/shape.h"
#include "runtime/data/sample_transform.h"

namespace baton::data {

enum class Split { train, test };
const char* split_name(Split split);  // "train" / "test"

class Dataset {
 public:
  virtual ~Dataset();
  virtual int64_t size() const = 0;
  virtual Shape image_shape() const = 0;  // [C, H, W]
  virtual int64_t num_classes() const = 0;
  // Sample `index` (0 <= index < size()): C*H*W pixel bytes, channel planes in row-major order,
  // and its label in [0, num_classes()). Thread-safe: the loader's workers call it concurrently.
  virtual void read(int64_t index, uint8_t* pixels, int64_t& label) const = 0;
  // Names the dataset in messages ("cifar10:/data/cifar (train)").
  virtual std::string name() const = 0;

  // Bytes of one image (C*H*W).
  int64_t image_bytes() const { return image_shape().numel(); }

  // The per-channel statistics loaders normalise this dataset's images with: those set by
  // set_normalization (open_dataset gives both splits the training split's), else measured on this
  // dataset (measure_normalization) on first use. Thread-safe.
  const Normalization& normalization() const;
  // Fixes normalization(); only before its first use (later calls are an error).
  void set_normalization(Normalization normalization);

 protected:
  // Throws unless 0 <= index < size(), naming this dataset.
  void check_index(int64_t index) const;

 private:
  mutable std::once_flag normalization_once_;
  mutable Normalization normalization_;
};

// The accepted spec forms, for messages and --help texts.
extern const char* const kDatasetSpecForms;

// Opens the dataset a spec names; `seed` keys generated datasets (shapes, synthetic) and is
// ignored by files. Unknown specs are an error listing the accepted forms. Its normalization() is
// measured on the spec's training split (so a test split is normalised as its model was trained).
std::unique_ptr<Dataset> open_dataset(const std::string& spec, Split split, uint64_t seed);

}  // namespace baton::data
