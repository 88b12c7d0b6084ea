// Checks of numeric command-line values with one-line messages ("--batch: must be a number > 0,
// got -1"), where CLI11's own validators print their range as 309-digit numbers.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

namespace baton::cli {

// A finite number > 0.
CLI::Validator positive();
// A finite number >= 0 (also what keeps "-1" from wrapping around in an unsigned option).
CLI::Validator non_negative();
// A finite number >= `minimum`.
CLI::Validator at_least(double minimum);
// A whole number from `minimum` to `maximum` (no value past 64 bits clamped or wrapped around).
CLI::Validator whole_number(int64_t minimum, int64_t maximum = INT64_MAX);
// A file's path: not empty (an empty path would silently mean "none given").
CLI::Validator file_path();

}  // namespace baton::cli
