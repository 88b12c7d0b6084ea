// Datasets — of uint8 CHW images with int64 labels, or of samples of named typed fields (token
// sequences) — and open_dataset, which turns a spec string ("shapes", "synthetic:3x32x32:10",
// "tokens:16:8:512", "cifar10:DIR", "cifar100:DIR") into one.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/data/sample_transform.h"

namespace baton::data {

enum class Split { train, test };
const char* split_name(Split split);  // "train" / "test"

// One tensor of a sample: its name in the batch, its element type and its shape (without the batch).
struct SampleField {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
};

// What a dataset's samples hold: the batch's inputs, in order, and its targets.
struct SampleLayout {
  std::vector<SampleField> inputs;
  SampleField targets;
};

class Dataset {
 public:
  virtual ~Dataset();
  virtual int64_t size() const = 0;
  // The classes of the targets: labels, or every per-position target, lie in [0, num_classes()).
  virtual int64_t num_classes() const = 0;
  // Names the dataset in messages ("cifar10:/data/cifar (train)").
  virtual std::string name() const = 0;

  // Image datasets (the default): samples are an image, decoded, augmented and normalised into the
  // f32 input "images" [C, H, W], and an i64 class label.
  virtual bool has_images() const { return true; }
  // [C, H, W]; a dataset without images says so (an error naming it).
  virtual Shape image_shape() const;
  // Sample `index` (0 <= index < size()): C*H*W pixel bytes, channel planes in row-major order,
  // and its label in [0, num_classes()). Thread-safe: the loader's workers call it concurrently.
  // A dataset without images says so (an error naming it).
  virtual void read(int64_t index, uint8_t* pixels, int64_t& label) const;

  // The sample's tensors: for image datasets "images" f32 [C, H, W] and i64 labels [].
  virtual SampleLayout layout() const;
  // Datasets without images: sample `index` written as one row of each field of layout(), `fields`
  // holding a pointer per input and then the targets' (each to shape.numel() elements of its
  // dtype). Thread-safe. An image dataset says that it is read with read() (an error).
  virtual void read_fields(int64_t index, const std::vector<void*>& fields) const;

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

// "images [3, 32, 32] f32, targets [] i64": a layout in messages.
std::string layout_text(const SampleLayout& layout);

// The accepted spec forms, for messages and --help texts.
extern const char* const kDatasetSpecForms;

// Opens the dataset a spec names; `seed` keys generated datasets (shapes, synthetic, tokens) and is
// ignored by files. Unknown specs are an error listing the accepted forms. Its normalization() is
// measured on the spec's training split (so a test split is normalised as its model was trained).
std::unique_ptr<Dataset> open_dataset(const std::string& spec, Split split, uint64_t seed);

}  // namespace baton::data
