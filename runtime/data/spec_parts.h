// The pieces of dataset spec strings ("synthetic:3x32x32:10", "tokens:16:8:512"): splitting on a
// separator and reading a positive integer with an error naming the spec, the part and the grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace baton::data {

// "a:b::c" split on ':' is {"a", "b", "", "c"}.
std::vector<std::string> split_on(const std::string& text, char separator);

// The ':'-separated parts of `spec`, checked to start with `kind` and to have at most `max_parts`;
// otherwise an error naming `spec` and the expected `grammar`.
std::vector<std::string> spec_parts(const std::string& spec, const char* kind, size_t max_parts, const char* grammar);

// `text` as a positive integer; otherwise an error naming `spec`, `what` and the expected `grammar`.
int64_t positive_integer(const std::string& text, const std::string& spec, const char* what, const char* grammar);

}  // namespace baton::data
