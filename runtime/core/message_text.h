// Text for error messages: long inputs shortened where a message echoes them, and whole numbers
// read with a reason when they are not one (not a number, too large, too small).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

// Words (runs without spaces) longer than kLongestEchoedWord bytes shortened to their first
// kEchoedPrefix bytes (not cutting a UTF-8 character) and "… (N bytes)": a 100 KB value given
// as a flag stays one readable line in the message that names it.
inline constexpr size_t kLongestEchoedWord = 160;
inline constexpr size_t kEchoedPrefix = 80;
std::string shorten_long_words(std::string_view text);

// `text` as a decimal whole number in [minimum, maximum], stored in `value`; "" when it is one, else
// why not, to follow the value in a message: "is not a whole number", "is too large (max 2147483648)",
// "is too small (min 1)".
std::string whole_number_problem(std::string_view text, int64_t minimum, int64_t maximum, int64_t& value);
// Whether a whole_number_problem is "is too large (max …)" (callers keep their own words for the rest).
bool too_large(std::string_view problem);

}  // namespace baton
