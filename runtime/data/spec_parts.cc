// Splitting dataset specs and reading their integers.
#include "runtime/data/spec_parts.h"

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/message_text.h"

namespace baton::data {

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::vector<std::string> spec_parts(const std::string& spec, const char* kind, size_t max_parts, const char* grammar) {
  std::vector<std::string> parts = split_on(spec, ':');
  BATON_CHECK(parts[0] == kind && parts.size() <= max_parts, "dataset spec '", spec, "': expected ", grammar);
  return parts;
}

int64_t positive_integer(const std::string& text, const std::string& spec, const char* what, const char* grammar) {
  int64_t value = 0;
  const std::string problem = whole_number_problem(text, 1, INT64_MAX, value);
  BATON_CHECK(problem.empty(), "dataset spec '", spec, "': ", what, " '", text, "' ",
              too_large(problem) ? problem : "is not a positive integer", "; expected ", grammar);
  return value;
}

}  // namespace baton::data
