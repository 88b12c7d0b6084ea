// The Dataset base (its normalisation) and open_dataset's spec dispatch.
#include "runtime/data/dataset.h"

#include <utility>

#include "runtime/core/error.h"
#include "runtime/data/batch.h"
#include "runtime/data/cifar.h"
#include "runtime/data/normalization.h"
#include "runtime/data/shapes.h"
#include "runtime/data/synthetic.h"
#include "runtime/data/tokens.h"

namespace baton::data {

const char* const kDatasetSpecForms =
    "shapes, synthetic[:CxHxW[:CLASSES[:SAMPLES]]] (e.g. synthetic:3x32x32:10), tokens[:VOCAB[:LENGTH[:SAMPLES]]] "
    "(e.g. tokens:16:8:512), cifar10:DIR, cifar100:DIR";

const char* split_name(Split split) { return split == Split::train ? "train" : "test"; }

Dataset::~Dataset() = default;

Shape Dataset::image_shape() const {
  BATON_FAIL(name(), " holds no images (its samples: ", layout_text(layout()), ")");
}

void Dataset::read(int64_t /*index*/, uint8_t* /*pixels*/, int64_t& /*label*/) const {
  BATON_FAIL(name(), " holds no images (its samples: ", layout_text(layout()), ")");
}

SampleLayout Dataset::layout() const {
  return {.inputs = {{std::string(kImagesInput), DType::f32, image_shape()}},
          .targets = {"labels", DType::i64, Shape{}}};
}

void Dataset::read_fields(int64_t /*index*/, const std::vector<void*>& /*fields*/) const {
  BATON_FAIL(name(), " holds images: its samples are read with read()");
}

std::string layout_text(const SampleLayout& layout) {
  std::string text;
  for (const SampleField& f : layout.inputs)
    text += f.name + " " + f.shape.str() + " " + std::string(dtype_name(f.dtype)) + ", ";
  return text + "targets " + layout.targets.shape.str() + " " + std::string(dtype_name(layout.targets.dtype));
}

void Dataset::check_index(int64_t index) const {
  BATON_CHECK(index >= 0 && index < size(), name(), ": sample index ", index, " is out of range: expected 0 .. ",
              size() - 1);
}

const Normalization& Dataset::normalization() const {
  std::call_once(normalization_once_, [this] { normalization_ = measure_normalization(*this); });
  return normalization_;
}

void Dataset::set_normalization(Normalization normalization) {
  bool set = false;
  std::call_once(normalization_once_, [&] {
    normalization_ = std::move(normalization);
    set = true;
  });
  BATON_CHECK(set, name(), ": the normalisation is already fixed (set_normalization after its first use)");
}

namespace {

std::unique_ptr<Dataset> open_split(const std::string& spec, Split split, uint64_t seed) {
  const std::string kind = spec.substr(0, spec.find(':'));
  const std::string argument = spec.find(':') == std::string::npos ? std::string() : spec.substr(spec.find(':') + 1);
  if (spec == "shapes") return std::make_unique<ShapesDataset>(split, seed);
  if (kind == "synthetic") return std::make_unique<SyntheticDataset>(parse_synthetic_spec(spec), split, seed);
  if (kind == "tokens") return std::make_unique<TokenDataset>(parse_token_spec(spec), split, seed);
  if ((kind == "cifar10" || kind == "cifar100") && spec.find(':') != std::string::npos) {
    BATON_CHECK(!argument.empty(), "dataset spec '", spec, "': the directory after '", kind, ":' is missing");
    return std::make_unique<CifarDataset>(kind == "cifar10" ? CifarVariant::cifar10 : CifarVariant::cifar100, argument,
                                          split);
  }
  BATON_FAIL("unknown dataset '", spec, "': expected one of ", kDatasetSpecForms);
}

}  // namespace

std::unique_ptr<Dataset> open_dataset(const std::string& spec, Split split, uint64_t seed) {
  std::unique_ptr<Dataset> dataset = open_split(spec, split, seed);
  if (split != Split::train && dataset->has_images()) {
    dataset->set_normalization(open_split(spec, Split::train, seed)->normalization());
  }
  return dataset;
}

}  // namespace baton::data
