// The shapes generator. Geometry is in integer eighths of a pixel: a pixel's centre is at
// (8x + 4, 8y + 4), and each class is an integer inside-test on the offset (u, v) from the shape's
// centre and its half-extent h, so no floating-point rounding can differ between machines.
#include "runtime/data/shapes.h"

#include <cstdlib>

#include "runtime/core/error.h"
#include "runtime/data/random_streams.h"

namespace baton::data {
namespace {

constexpr int64_t kSubpixel = 8;
constexpr int64_t kPlaneExtent = ShapesDataset::kSide * kSubpixel;  // 256
constexpr uint32_t kMinHalfExtent = 5 * kSubpixel;                  // 5 px
constexpr uint32_t kMaxHalfExtent = 13 * kSubpixel;                 // 13 px
constexpr int kMinContrast = 150;                                   // summed |foreground - background| over R, G, B
constexpr uint32_t kMinNoise = 4, kMaxNoise = 32;

// Whether the offset (u, v) from the centre lies inside the shape of class `label` with
// half-extent h (all in eighths of a pixel).
bool inside(int64_t label, int64_t u, int64_t v, int64_t h) {
  const int64_t au = std::llabs(u), av = std::llabs(v);
  switch (label) {
    case 0:  // disk
      return u * u + v * v <= h * h;
    case 1: {  // ring: radii 0.6h .. h
      const int64_t r2 = 100 * (u * u + v * v);
      return r2 <= 100 * h * h && r2 >= 36 * h * h;
    }
    case 2:  // filled square, half side 0.8h
      return 10 * au <= 8 * h && 10 * av <= 8 * h;
    case 3:  // frame: the square's outline, inner half side 0.45h
      return 10 * au <= 8 * h && 10 * av <= 8 * h && (20 * au > 9 * h || 20 * av > 9 * h);
    case 4:  // triangle pointing up: apex (0, -h), base from (-h, h) to (h, h)
      return v <= h && 2 * au <= v + h;
    case 5:  // diamond
      return au + av <= h;
    case 6:  // plus: two bars of half width h/4
      return (4 * au <= h && av <= h) || (4 * av <= h && au <= h);
    case 7:  // cross (X): the two diagonals, half width ~h/4, within 0.75h on each axis
      return 4 * au <= 3 * h && 4 * av <= 3 * h && (3 * std::llabs(u - v) <= h || 3 * std::llabs(u + v) <= h);
    case 8:  // horizontal bar
      return au <= h && 4 * av <= h;
    case 9:  // vertical bar
      return av <= h && 4 * au <= h;
    default:
      BATON_FAIL("shapes: no shape for label ", label);
  }
}

struct Colour {
  int channel[3];
};

Colour draw_colour(RandomDraws& draws) {
  return Colour{
      {static_cast<int>(draws.below(256)), static_cast<int>(draws.below(256)), static_cast<int>(draws.below(256))}};
}

int contrast(const Colour& a, const Colour& b) {
  int sum = 0;
  for (int c = 0; c < 3; ++c) sum += std::abs(a.channel[c] - b.channel[c]);
  return sum;
}

}  // namespace

ShapesDataset::ShapesDataset(Split split, uint64_t seed, int64_t size)
    : split_(split),
      seed_(seed),
      purpose_(split == Split::train ? RandomPurpose::shapes_train : RandomPurpose::shapes_test),
      size_(size >= 0 ? size : (split == Split::train ? kDefaultTrainSize : kDefaultTestSize)) {
  BATON_CHECK(size_ > 0, "shapes dataset: size must be positive, not ", size);
}

const std::vector<std::string>& ShapesDataset::class_names() {
  static const std::vector<std::string> names = {"disk",    "ring", "square", "frame",          "triangle",
                                                 "diamond", "plus", "cross",  "horizontal_bar", "vertical_bar"};
  return names;
}

void ShapesDataset::read(int64_t index, uint8_t* pixels, int64_t& label) const {
  check_index(index);
  label = index % kClasses;
  RandomDraws draws(derive_seed(seed_, purpose_, static_cast<uint64_t>(index)));
  const int64_t half = kMinHalfExtent + draws.below(kMaxHalfExtent - kMinHalfExtent + 1);
  // The centre keeps the whole shape inside the image.
  const uint32_t centre_range = static_cast<uint32_t>(kPlaneExtent - 2 * half + 1);
  const int64_t centre_x = half + draws.below(centre_range);
  const int64_t centre_y = half + draws.below(centre_range);
  const Colour foreground = draw_colour(draws);
  Colour background = draw_colour(draws);
  for (int attempt = 0; attempt < 16 && contrast(foreground, background) < kMinContrast; ++attempt) {
    background = draw_colour(draws);
  }
  if (contrast(foreground, background) < kMinContrast) {
    for (int c = 0; c < 3; ++c) background.channel[c] = 255 - foreground.channel[c];
  }
  const int noise = static_cast<int>(kMinNoise + draws.below(kMaxNoise - kMinNoise + 1));
  const uint32_t noise_values = static_cast<uint32_t>(2 * noise + 1);
  constexpr int64_t kPlane = kSide * kSide;
  for (int64_t y = 0; y < kSide; ++y) {
    const int64_t v = kSubpixel * y + kSubpixel / 2 - centre_y;
    for (int64_t x = 0; x < kSide; ++x) {
      const int64_t u = kSubpixel * x + kSubpixel / 2 - centre_x;
      const Colour& colour = inside(label, u, v, half) ? foreground : background;
      for (int c = 0; c < 3; ++c) {
        const int value = colour.channel[c] + static_cast<int>(draws.below(noise_values)) - noise;
        pixels[c * kPlane + y * kSide + x] = static_cast<uint8_t>(value < 0 ? 0 : (value > 255 ? 255 : value));
      }
    }
  }
}

std::string ShapesDataset::name() const {
  return std::string("shapes (") + split_name(split_) + ", seed " + std::to_string(seed_) + ")";
}

}  // namespace baton::data
