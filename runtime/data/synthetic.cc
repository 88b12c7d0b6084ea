// The synthetic dataset and its spec grammar.
#include "runtime/data/synthetic.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/philox.h"
#include "runtime/data/spec_parts.h"

namespace baton::data {
namespace {

constexpr const char* kGrammar = "synthetic[:CxHxW[:CLASSES[:SAMPLES]]] (e.g. synthetic:3x32x32:10:50000)";

}  // namespace

SyntheticOptions parse_synthetic_spec(const std::string& spec) {
  const std::vector<std::string> parts = spec_parts(spec, "synthetic", 4, kGrammar);
  SyntheticOptions options;
  if (parts.size() > 1) {
    const std::vector<std::string> dims = split_on(parts[1], 'x');
    BATON_CHECK(dims.size() == 3, "dataset spec '", spec, "': image shape '", parts[1],
                "' must be CxHxW, three positive integers; expected ", kGrammar);
    options.image_shape =
        Shape{positive_integer(dims[0], spec, "channels", kGrammar),
              positive_integer(dims[1], spec, "height", kGrammar), positive_integer(dims[2], spec, "width", kGrammar)};
  }
  if (parts.size() > 2) options.classes = positive_integer(parts[2], spec, "CLASSES", kGrammar);
  if (parts.size() > 3) options.samples = options.test_samples = positive_integer(parts[3], spec, "SAMPLES", kGrammar);
  return options;
}

namespace {

SyntheticOptions for_split(SyntheticOptions options, Split split) {
  if (split == Split::test) options.samples = options.test_samples;
  return options;
}

}  // namespace

SyntheticDataset::SyntheticDataset(SyntheticOptions options, Split split, uint64_t seed)
    : GeneratedDataset(for_split(std::move(options), split),
                       SampleStreams(split, seed, RandomPurpose::synthetic_train, RandomPurpose::synthetic_test)) {
  BATON_CHECK(options_.image_shape.rank() == 3 && options_.image_shape.numel() > 0,
              "synthetic dataset: the image shape must be [C, H, W] with positive sizes, not ",
              options_.image_shape.str());
  BATON_CHECK(options_.classes > 0 && options_.classes <= int64_t{UINT32_MAX},
              "synthetic dataset: classes must be in 1 .. ", UINT32_MAX, ", not ", options_.classes);
  BATON_CHECK(options_.samples > 0, "synthetic dataset: samples must be positive, not ", options_.samples);
}

void SyntheticDataset::read(int64_t index, uint8_t* pixels, int64_t& label) const {
  check_index(index);
  const uint64_t stream = streams_.of(index);
  // Block 0 gives the label; blocks 1.. give 16 pixel bytes each (lanes little-endian).
  label = scale_below(philox::block_at(stream, 0).v[0], static_cast<uint32_t>(options_.classes));
  const int64_t bytes = image_bytes();
  for (int64_t offset = 0, block = 1; offset < bytes; offset += 16, ++block) {
    const philox::Block b = philox::block_at(stream, static_cast<uint64_t>(block));
    uint8_t chunk[16];
    for (int lane = 0; lane < 4; ++lane) {
      for (int k = 0; k < 4; ++k) chunk[lane * 4 + k] = static_cast<uint8_t>(b.v[lane] >> (8 * k));
    }
    std::memcpy(pixels + offset, chunk, static_cast<size_t>(std::min<int64_t>(16, bytes - offset)));
  }
}

std::string SyntheticDataset::name() const {
  const std::vector<int64_t>& d = options_.image_shape.dims();
  return "synthetic:" + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]) + ":" +
         std::to_string(options_.classes) + ":" + std::to_string(options_.samples) + streams_.name_suffix();
}

}  // namespace baton::data
