// Shape: the dimensions of a contiguous row-major tensor.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace baton {

class Shape {
 public:
  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::vector<int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  // Dimension `axis`; negative counts from the end. Throws on an out-of-range axis.
  int64_t operator[](int axis) const;
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const;
  // numel() elements of `element_bytes` each; throws beyond 2^63 bytes.
  int64_t bytes(int64_t element_bytes) const;
  // Elements in one index step of `axis` (the product of the dimensions after it).
  int64_t stride(int axis) const;

  // The same shape with dimension 0 replaced (for views along dimension 0).
  Shape with_dim0(int64_t size) const;

  std::string str() const;  // "[2, 3, 4]"
  bool operator==(const Shape& other) const = default;

 private:
  int normalise_axis(int axis) const;

  std::vector<int64_t> dims_;
};

}  // namespace baton
