// Shape: dimension access with negative axes, element counts, contiguous strides and the "[2, 3]" form.
#include "runtime/core/shape.h"

#include <utility>

#include "runtime/core/error.h"

namespace baton {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {
  for (size_t i = 0; i < dims_.size(); ++i) {
    BATON_CHECK(dims_[i] >= 0, "shape ", str(), ": dimension ", i, " is ", dims_[i], ", expected >= 0");
  }
}

int Shape::normalise_axis(int axis) const {
  const int r = rank();
  const int a = axis < 0 ? axis + r : axis;
  BATON_CHECK(a >= 0 && a < r, "axis ", axis, " is out of range for shape ", str(), " of rank ", r);
  return a;
}

int64_t Shape::operator[](int axis) const { return dims_[static_cast<size_t>(normalise_axis(axis))]; }

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    BATON_CHECK(!__builtin_mul_overflow(n, d, &n), "shape ", str(), " has more than 2^63 elements");
  }
  return n;
}

int64_t Shape::bytes(int64_t element_bytes) const {
  int64_t n = 0;
  BATON_CHECK(!__builtin_mul_overflow(numel(), element_bytes, &n), "shape ", str(), " takes more than 2^63 bytes");
  return n;
}

int64_t Shape::stride(int axis) const {
  int64_t s = 1;
  for (int i = rank() - 1; i > normalise_axis(axis); --i) s *= dims_[static_cast<size_t>(i)];
  return s;
}

Shape Shape::with_dim0(int64_t size) const {
  BATON_CHECK(rank() >= 1, "a scalar shape has no dimension 0");
  std::vector<int64_t> dims = dims_;
  dims[0] = size;
  return Shape(std::move(dims));
}

std::string Shape::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

}  // namespace baton
