// Non-finite floating values (NaN, +inf, -inf) in raw tensor bytes: baton never writes them into a
// checkpoint or weights file, and refuses a file that holds them (a run that diverged).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/dtype.h"

namespace baton {

// The first element of `count` elements of `dtype` at `bytes` that is NaN or infinite, or -1
// (always -1 for integer dtypes).
int64_t first_non_finite(const void* bytes, int64_t count, DType dtype);
// "NaN", "inf" or "-inf": element `index` of `dtype` at `bytes`, which is not finite.
std::string non_finite_name(const void* bytes, int64_t index, DType dtype);

// The first element of `count` elements of `dtype` at `bytes` that is below zero (its sign bit
// set; -0.0 is not below zero), or -1.
int64_t first_negative(const void* bytes, int64_t count, DType dtype);

}  // namespace baton
