// positive, non_negative, at_least: parse the value as a double and compare.
#include "tools/flag_checks.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "runtime/core/message_text.h"

namespace baton::cli {
namespace {

std::string number_text(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

CLI::Validator bounded_below(double minimum, bool strict, const std::string& name) {
  const std::string wanted = std::string("a number ") + (strict ? "> " : ">= ") + number_text(minimum);
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        char* end = nullptr;
        const double number = std::strtod(value.c_str(), &end);
        const bool parsed = !value.empty() && end == value.c_str() + value.size() && std::isfinite(number);
        if (parsed && (strict ? number > minimum : number >= minimum)) return "";
        return "must be " + wanted + ", got " + value;
      },
      wanted, name);
}

}  // namespace

CLI::Validator whole_number(int64_t minimum, int64_t maximum) {
  const std::string wanted = "a whole number from " + std::to_string(minimum) +
                             (maximum == INT64_MAX ? std::string(" up") : " to " + std::to_string(maximum));
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        int64_t number = 0;
        const std::string problem = whole_number_problem(value, minimum, maximum, number);
        if (problem.empty()) return "";
        return "must be " + wanted + ", got " + value + (too_large(problem) ? ", which " + problem : "");
      },
      wanted, "WHOLE_NUMBER");
}

CLI::Validator positive() { return bounded_below(0, true, "POSITIVE"); }

CLI::Validator non_negative() { return bounded_below(0, false, "NON_NEGATIVE"); }

CLI::Validator at_least(double minimum) { return bounded_below(minimum, false, "AT_LEAST"); }

CLI::Validator file_path() {
  return CLI::Validator(
      [](std::string& value) -> std::string { return value.empty() ? "must name a file, got an empty path" : ""; },
      "PATH", "file path");
}

}  // namespace baton::cli
