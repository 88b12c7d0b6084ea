// shorten_long_words and whole_number_problem.
#include <gtest/gtest.h>

#include "runtime/core/message_text.h"

namespace baton {
namespace {

TEST(MessageText, LongWordsAreShortenedShortOnesKept) {
  EXPECT_EQ(shorten_long_words("unknown model 'resnet20x'"), "unknown model 'resnet20x'");
  const std::string long_word = "'" + std::string(999, 'x') + "'";
  EXPECT_EQ(shorten_long_words("model " + long_word + " is unknown"),
            "model '" + std::string(79, 'x') + "… (1001 bytes)' is unknown");
  EXPECT_EQ(shorten_long_words("unknown model " + long_word + "; the models are"),
            "unknown model '" + std::string(79, 'x') + "… (1002 bytes)'; the models are");
  EXPECT_EQ(shorten_long_words(std::string(kLongestEchoedWord, 'y')), std::string(kLongestEchoedWord, 'y'));
  // A cut never splits a UTF-8 character ("é" is two bytes).
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "é";
  EXPECT_EQ(shorten_long_words(accents), accents.substr(0, kEchoedPrefix) + "… (200 bytes)");
  EXPECT_EQ(shorten_long_words("a" + accents), "a" + accents.substr(0, kEchoedPrefix - 2) + "… (201 bytes)");
}

TEST(MessageText, WholeNumbersWithTheReasonWhenNot) {
  int64_t value = 0;
  EXPECT_EQ(whole_number_problem("42", 1, 100, value), "");
  EXPECT_EQ(value, 42);
  EXPECT_EQ(whole_number_problem("101", 1, 100, value), "is too large (max 100)");
  EXPECT_EQ(whole_number_problem("99999999999999999999", 1, INT64_MAX, value),
            "is too large (max 9223372036854775807)");
  EXPECT_EQ(whole_number_problem("0", 1, 100, value), "is too small (min 1)");
  EXPECT_EQ(whole_number_problem("-99999999999999999999", 1, 100, value), "is too small (min 1)");
  EXPECT_EQ(whole_number_problem("2.5", 1, 100, value), "is not a whole number");
  EXPECT_EQ(whole_number_problem("", 1, 100, value), "is not a whole number");
  EXPECT_EQ(whole_number_problem("12abc", 1, 100, value), "is not a whole number");
  EXPECT_TRUE(too_large(whole_number_problem("101", 1, 100, value)));
  EXPECT_FALSE(too_large(whole_number_problem("0", 1, 100, value)));
}

}  // namespace
}  // namespace baton
