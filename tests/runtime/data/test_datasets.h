// Small in-memory datasets for the loader tests: each sample's label is its index and its pixels
// are a function of the index, so a batch shows which samples it holds; variants fail or stall.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtime/core/error.h"
#include "runtime/data/dataset.h"

namespace baton::data::testing {

// Pixel k of sample `index`: never constant within an image, different between samples.
inline uint8_t index_pixel(int64_t index, int64_t k) { return static_cast<uint8_t>((index * 37 + k * 11 + 5) % 256); }

class IndexDataset : public Dataset {
 public:
  IndexDataset(int64_t size, Shape image_shape = Shape{3, 4, 5}) : size_(size), image_shape_(std::move(image_shape)) {}
  int64_t size() const override { return size_; }
  Shape image_shape() const override { return image_shape_; }
  int64_t num_classes() const override { return size_; }
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override {
    check_index(index);
    for (int64_t k = 0; k < image_bytes(); ++k) pixels[k] = index_pixel(index, k);
    label = index;
  }
  std::string name() const override { return "index dataset"; }

 private:
  int64_t size_;
  Shape image_shape_;
};

// Fails on one sample: with a baton::Error naming a file and record, or with a std::exception.
class FailingDataset : public IndexDataset {
 public:
  FailingDataset(int64_t size, int64_t bad_index, bool baton_error)
      : IndexDataset(size), bad_index_(bad_index), baton_error_(baton_error) {}
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override {
    if (index == bad_index_) {
      if (baton_error_) BATON_FAIL("'broken.bin' record ", index, ": label 200 is out of range: expected 0..9");
      throw std::runtime_error("disk on fire");
    }
    IndexDataset::read(index, pixels, label);
  }

 private:
  int64_t bad_index_;
  bool baton_error_;
};

// Takes `delay` per sample, so an epoch lasts far longer than a test should wait.
class SlowDataset : public IndexDataset {
 public:
  SlowDataset(int64_t size, std::chrono::milliseconds delay) : IndexDataset(size), delay_(delay) {}
  void read(int64_t index, uint8_t* pixels, int64_t& label) const override {
    std::this_thread::sleep_for(delay_);
    IndexDataset::read(index, pixels, label);
  }

 private:
  std::chrono::milliseconds delay_;
};

}  // namespace baton::data::testing
