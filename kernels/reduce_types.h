// The kinds of whole-tensor reduction (kernels/reduce.h), shared by the front end and the CUDA launchers.
#pragma once

#include <cstdint>

namespace baton::kernels {

// What a whole-tensor reduction computes.
enum class Reduction : uint8_t {
  sum,          // Σ x (0 for an empty tensor)
  mean,         // Σ x / numel (an empty tensor is an error)
  max,          // the largest element; NaN if any element is NaN (an empty tensor is an error)
  sum_squares,  // Σ x² (0 for an empty tensor)
  l2_norm,      // sqrt(Σ x²)
};

}  // namespace baton::kernels
