// shorten_long_words and whole_number_problem.
#include "runtime/core/message_text.h"

#include <algorithm>
#include <charconv>

namespace baton {
namespace {

// The first `bytes` bytes of `word` or fewer, ending on a UTF-8 character boundary.
std::string_view prefix_of(std::string_view word, size_t bytes) {
  size_t end = std::min(bytes, word.size());
  while (end > 0 && end < word.size() && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80) --end;
  return word.substr(0, end);
}

// The most closing punctuation characters kept after a shortened word.
constexpr size_t kMaxClosing = 4;

}  // namespace

std::string shorten_long_words(std::string_view text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t space = text.find(' ', at);
    const size_t end = space == std::string_view::npos ? text.size() : space;
    const std::string_view word = text.substr(at, end - at);
    if (word.size() > kLongestEchoedWord) {
      // Closing punctuation ("';") stays after the count: "'xxxx… (100003 bytes)';".
      const size_t last_other = word.find_last_not_of("'\")];,.:");
      const size_t closing = last_other == std::string_view::npos ? 0 : word.size() - 1 - last_other;
      out += prefix_of(word, kEchoedPrefix);
      out += "… (" + std::to_string(word.size()) + " bytes)";
      out += word.substr(word.size() - std::min(closing, kMaxClosing));
    } else {
      out += word;
    }
    if (end < text.size()) out += ' ';
    at = end + 1;
  }
  return out;
}

std::string whole_number_problem(std::string_view text, int64_t minimum, int64_t maximum, int64_t& value) {
  const char* end = text.data() + text.size();
  const auto [stop, status] = std::from_chars(text.data(), end, value);
  if (text.empty() || stop != end || (status != std::errc() && status != std::errc::result_out_of_range)) {
    return "is not a whole number";
  }
  const bool negative = text.front() == '-';
  if (status == std::errc::result_out_of_range ? !negative : value > maximum) {
    return "is too large (max " + std::to_string(maximum) + ")";
  }
  if (status == std::errc::result_out_of_range || value < minimum) {
    return "is too small (min " + std::to_string(minimum) + ")";
  }
  return "";
}

bool too_large(std::string_view problem) { return problem.starts_with("is too large"); }

}  // namespace baton
